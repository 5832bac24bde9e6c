#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per packet of the decode lcore, counted (not timed) under
# valgrind's callgrind: repeatable on a shared, noisy machine, and available
# where the CPU counters are not. Counts th_decode_frame() and what it calls,
# once without and once with formatting op lines, over one pass of each mix.
#   tests/bench/instructions.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$b/app/tracehound" gen --seed 7 --mix meta --ops 20000 --clients 64 --servers 4 \
	-o "$out/meta.pcap" 2>/dev/null
"$b/app/tracehound" gen --seed 7 --mix data --ops 200 --clients 16 --servers 2 \
	-o "$out/data.pcap" 2>/dev/null
count() { # MIX FLAG
	local pkts ir
	valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
		"$b/tests/bench/bench_decode" -r 1 $2 "$out/$1.pcap" > "$out/log" 2>/dev/null
	pkts=$(sed -n 's/.*: \([0-9]*\) packets,.*/\1/p' "$out/log" | head -1)
	ir=$(callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null |
		awk '/decode.c:th_decode_frame/ && !n++ { gsub(",", "", $1); print $1 }')
	# Each run decodes the first 1000 frames once more to warm the tables.
	echo "$1 mix, $3: $((ir / (pkts + 1000))) instructions/packet ($pkts packets)"
}
count meta -n "decode only"
count meta "" "decode + op lines"
count data -n "decode only"
count data "" "decode + op lines"
