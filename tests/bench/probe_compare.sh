#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Side by side on one file: tracehound probe, fio (psync, iodepth 1, O_DIRECT),
# ioping -D, and a dd-per-sample loop like seeker.sh. Runs are interleaved
# (A B C D A B C D ...) so drift of the shared disk hits every tool alike.
# Prints each tool's median latency (median over rounds of each run's median),
# the ratio tracehound/fio, and the per-sample overhead over fio of dd and of
# tracehound. Reports numbers; it passes or fails on nothing but errors.
#
#   probe_compare.sh TRACEHOUND [DIR] [ROUNDS]
#   env: SIZE (1g), SAMPLES (2000 per tracehound/ioping run), SECONDS_FIO (2),
#        DD_SAMPLES (200)
set -eu
th=$(realpath "$1")
dir=${2:-/var/tmp}
rounds=${3:-5}
size=${SIZE:-1g}
n=${SAMPLES:-2000}
fio_s=${SECONDS_FIO:-2}
dd_n=${DD_SAMPLES:-200}
for tool in fio ioping dd python3; do
	command -v $tool > /dev/null || { echo "probe_compare.sh: $tool not installed"; exit 77; }
done
f=$(mktemp "$dir/th-probe-compare.XXXXXX")
work=$(mktemp -d)
trap 'rm -f "$f"; rm -rf "$work"' EXIT

echo "# writing a $size file of random data: $f" >&2
bytes=$(numfmt --from=iec "${size^^}")
head -c "$bytes" /dev/urandom > "$f"
sync
blocks=$((bytes / 4096))

run_th() {
	"$th" probe -n "$n" -w 20 --hist-rows 0 -j "$work/th.json" "$f" > "$work/th.samples" 2>/dev/null
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["service"]["p50_us"])' \
		"$work/th.json"
}

run_fio() {
	fio --name=p --filename="$f" --rw=randread --bs=4k --iodepth=1 --ioengine=psync \
		--direct=1 --runtime="$fio_s" --time_based --size="$bytes" \
		--output-format=json > "$work/fio.json" 2>/dev/null
	python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))["jobs"][0]["read"]["clat_ns"]["percentile"]
print(j["50.000000"] / 1000)' "$work/fio.json"
}

run_ioping() {
	ioping -D -c $((n + 1)) -i 0 -S "$bytes" "$f" > "$work/ioping.txt" 2>/dev/null
	python3 -c 'import re,sys,statistics
u = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
t = [float(m.group(1)) * u[m.group(2)] for l in open(sys.argv[1]) if "warmup" not in l
     for m in [re.search(r"time=([0-9.]+) (ns|us|ms|s)\b", l)] if m]
print(statistics.median(t))' "$work/ioping.txt"
}

# seeker.sh: one dd process per sample, timed from outside with date +%s%N.
run_dd() {
	local i skip a b
	: > "$work/dd.txt"
	for ((i = 0; i < dd_n; i++)); do
		skip=$(( ((RANDOM << 15) | RANDOM) % blocks ))
		a=$(date +%s%N)
		dd if="$f" of=/dev/null bs=4k skip=$skip count=1 iflag=direct status=none
		b=$(date +%s%N)
		echo $(( (b - a) / 1000 )) >> "$work/dd.txt"
	done
	python3 -c 'import sys,statistics; print(statistics.median(float(l) for l in open(sys.argv[1])))' \
		"$work/dd.txt"
}

declare -A all
printf '%-6s %12s %12s %12s %12s\n' round tracehound fio ioping dd-loop
for ((r = 1; r <= rounds; r++)); do
	a=$(run_th); b=$(run_fio); c=$(run_ioping); d=$(run_dd)
	all[th]+="$a "; all[fio]+="$b "; all[ioping]+="$c "; all[dd]+="$d "
	printf '%-6s %12.1f %12.1f %12.1f %12.1f\n' $r "$a" "$b" "$c" "$d"
done
python3 - "${all[th]}" "${all[fio]}" "${all[ioping]}" "${all[dd]}" <<'PY'
import statistics as st, sys
th, fio, io, dd = ([float(x) for x in a.split()] for a in sys.argv[1:5])
m = {k: st.median(v) for k, v in (("tracehound", th), ("fio", fio), ("ioping", io), ("dd-loop", dd))}
print("median of run medians, us (4 KiB random reads, O_DIRECT, queue depth 1):")
for k, v in m.items():
    print(f"  {k:11s} {v:10.1f}")
pair = [a / b for a, b in zip(th, fio)]
print(f"tracehound / fio: {m['tracehound'] / m['fio']:.3f} "
      f"(per round: {' '.join(f'{x:.3f}' for x in pair)}; target within 3%)")
dd_o, th_o = m["dd-loop"] - m["fio"], m["tracehound"] - m["fio"]
print(f"overhead per sample over fio: dd loop {dd_o:.1f} us, tracehound {th_o:+.1f} us", end="")
if abs(th_o) > 0.05:
    print(f" ({dd_o / abs(th_o):.0f}x lower; target 100x)")
else:
    print(" (below the 0.1 us resolution of the medians)")
PY
