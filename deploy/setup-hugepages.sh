#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Reserve 2 MiB hugepages on every NUMA node and mount hugetlbfs, for a
# capture box with a real NIC. Idempotent.
#   deploy/setup-hugepages.sh [PAGES_PER_NODE]     default 1024 (2 GiB per node)
set -euo pipefail
pages=${1:-1024}
for node in /sys/devices/system/node/node*; do
	f=$node/hugepages/hugepages-2048kB/nr_hugepages
	[[ -w $f ]] || { echo "setup-hugepages: cannot write $f (root? hugepage support?)" >&2; exit 1; }
	echo "$pages" > "$f"
	echo "setup-hugepages: $(basename "$node"): $(cat "$f") x 2 MiB"
done
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
