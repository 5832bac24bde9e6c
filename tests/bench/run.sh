#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Decode-lcore benchmark on the two mixes of the capture issue.
#   tests/bench/run.sh [BUILD_DIR]        (default: build)
# Prints packets/s per lcore, ns/packet and (where the CPU counters are
# readable) cycles and instructions per packet, median of 5 runs each.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$b/app/tracehound" gen --seed 7 --mix meta --ops 400000 --clients 64 --servers 4 \
	-o "$out/meta.pcap" 2>/dev/null
"$b/app/tracehound" gen --seed 7 --mix meta --ops 400000 --clients 4000 --servers 4 \
	-o "$out/meta-4000.pcap" 2>/dev/null
"$b/app/tracehound" gen --seed 7 --mix data --ops 600 --clients 16 --servers 2 \
	-o "$out/data.pcap" 2>/dev/null
echo "== metadata mix (GETATTR/LOOKUP/ACCESS, small frames) =="
"$b/tests/bench/bench_decode" -r 5 -w "$out/meta.pcap"
echo "== metadata mix, every RPC kept as a trace record (trace.rpcs = 1) =="
"$b/tests/bench/bench_decode" -r 5 -n -R "$out/meta.pcap"
echo "== metadata mix from 4000 clients (the tables outgrow the caches) =="
"$b/tests/bench/bench_decode" -r 5 -w "$out/meta-4000.pcap"
echo "== data mix (READ/WRITE 32 KiB-1 MiB, MTU 1500) =="
"$b/tests/bench/bench_decode" -r 5 -w "$out/data.pcap"
echo "(instructions/packet where perf counters are not readable:"
echo " valgrind --tool=callgrind $b/tests/bench/bench_decode -r 1 FILE; Ir / packets)"
