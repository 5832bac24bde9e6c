#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The quick start: install dependencies, build, generate the demo capture
# (NFSv3 over TCP and UDP, with VLANs and IPv6), decode it with
# `tracehound capture` through DPDK's net_pcap port, and show the result.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh build
build/app/tracehound gen --seed 1 --ops 2000 --clients 8 --servers 2 --udp-share 0.25 \
	--ipv6-share 0.25 --vlan 1 -o build/demo.pcap --truth build/demo.truth
build/app/tracehound capture -c config/demo.ini -o build/demo-rpcs.txt
echo
echo "== first RPC lines of build/demo-rpcs.txt (format: README, 'Output: RPC log') =="
head -n 15 build/demo-rpcs.txt
echo "== $(wc -l < build/demo-rpcs.txt) RPC lines; the generator put in $(wc -l < build/demo.truth) =="
