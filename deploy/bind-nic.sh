#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Hand a NIC (the SPAN port) to DPDK through vfio-pci.
#   deploy/bind-nic.sh PCI_ADDRESS        e.g. 0000:3b:00.0
# The port stops being a kernel interface until it is bound back
# (dpdk-devbind.py --bind=<kernel driver> PCI_ADDRESS).
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: deploy/bind-nic.sh PCI_ADDRESS" >&2; exit 2; }
modprobe vfio-pci
dpdk-devbind.py --bind=vfio-pci "$1"
dpdk-devbind.py --status-dev net | grep -F "$1"
