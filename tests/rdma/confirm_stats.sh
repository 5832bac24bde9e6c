#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# How firmly the triggers a search records hold: searches on PROFILE with
# seeds 1..SEEDS, with and without --confirm, and every trigger replayed
# REPEAT times (new noise each run, --replay's default noise seed). Prints,
# per setting, the triggers, how many showed their symptom in fewer than
# REPEAT runs, and in at most 2.
#   [CONFIRMS="0 1"] confirm_stats.sh TRACEHOUND PROFILE [SEEDS [REPEAT]]
set -eu
th=$1
prof=$2
seeds=${3:-10}
repeat=${4:-8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for confirm in ${CONFIRMS:-0 1}; do
	total=0 under=0 weak=0
	for seed in $(seq 1 "$seeds"); do
		out=$work/c$confirm-s$seed
		"$th" search --profile "$prof" --seed "$seed" --confirm "$confirm" --out "$out" \
			-q > /dev/null
		for f in "$out"/anomaly-*.ini; do
			[[ -e $f ]] || continue
			n=$("$th" search --profile "$prof" --replay "$f" --repeat "$repeat" |
				sed -nE 's/^shown in ([0-9]+) of .*/\1/p')
			total=$((total + 1))
			((n < repeat)) && under=$((under + 1))
			((n <= 2)) && weak=$((weak + 1))
		done
	done
	echo "--confirm $confirm: $total triggers over seeds 1-$seeds;" \
		"$under shown in fewer than $repeat of $repeat replays, $weak in at most 2"
done
