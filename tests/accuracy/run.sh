#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The accuracy workload end to end: generate the users workload (pcap and
# the ground truth of opens), decode it with `tracehound capture -r`, and
# score the open records against the truth.
# Then the same capture on two decode lcores behind the dispatcher, whose
# session lcore takes their ops in frame order: the same records as one, but
# for at most --max-diff-decode records (default 0). Then on
# two session lcores, whose files are split between them: the same bars, but
# for --max-over-two in place of --max-over.
#   run.sh TRACEHOUND WORKDIR [score.py bars...] [--max-over-two PCT]
#          [--max-diff-decode N] [-- gen options...]
set -euo pipefail
th=$1
work=$2
shift 2
bars=()
over_two=
diff_decode=0
while [[ $# -gt 0 && $1 != -- ]]; do
	if [[ $1 == --max-over-two ]]; then
		over_two=$2
		shift 2
		continue
	fi
	if [[ $1 == --max-diff-decode ]]; then
		diff_decode=$2
		shift 2
		continue
	fi
	bars+=("$1")
	shift
done
bars_two=("${bars[@]}")
for i in "${!bars_two[@]}"; do
	if [[ ${bars_two[$i]} == --max-over && -n $over_two ]]; then
		bars_two[i + 1]=$over_two
	fi
done
[[ ${1:-} == -- ]] && shift
mkdir -p "$work"
"$th" gen --workload users --seed 1 "$@" -o "$work/users.pcap" --opens "$work/users.opens" \
	2> "$work/gen.log"
cat "$work/gen.log" >&2
# Every RPC decoded reaches inference or a row that says why it did not; with
# several session lcores the copies of directory ops are in those rows too.
check_sum() {
	awk '/RPCs matched \(call and reply\)$|unmatched calls \(no reply\)$|unmatched replies \(no call\)$/ {
			rpcs += $1 }
		/operations in$|ops inference does not use|ops lost to inference/ { ops += $1 }
		/copies of directory ops for the other session lcores/ { ops -= $1 }
		END { if (rpcs != ops || rpcs == 0) {
			printf "inference: %d RPCs decoded, %d accounted for\n", rpcs, ops > "/dev/stderr"
			exit 1 } }' "$1"
}
printf '[capture]\nmbufs = 16383\n[session]\ndetail = dirs\n' > "$work/capture.ini"
"$th" capture -c "$work/capture.ini" -o none -r "$work/users.records" -- -l 0-1 --no-huge \
	-m 1024 --no-pci --no-shconf --file-prefix th-acc-$$ --log-level=error \
	--vdev=net_pcap0,rx_pcap="$work/users.pcap" 2> "$work/capture.log"
sed -n '/^open\/close inference/,/^output/p' "$work/capture.log" >&2
check_sum "$work/capture.log"
# A replay ages its tables by its own clock: the same file, the same records,
# whatever malloc leaves in memory (meson sets MALLOC_PERTURB_; here the other).
MALLOC_PERTURB_=$((${MALLOC_PERTURB_:-0} == 0 ? 165 : 0)) "$th" capture -c "$work/capture.ini" -o none -r "$work/users.again" -- -l 0-1 --no-huge \
	-m 1024 --no-pci --no-shconf --file-prefix th-acc-$$ --log-level=error \
	--vdev=net_pcap0,rx_pcap="$work/users.pcap" 2> /dev/null
cmp "$work/users.records" "$work/users.again" >&2 ||
	{ echo "inference: a second run gave other records" >&2; exit 1; }
python3 "$(dirname "$0")/score.py" "$work/users.records" "$work/users.opens" "${bars[@]}"
"$th" capture -c "$work/capture.ini" -o none -r "$work/users-n2.records" -- \
	--lcores=0@0,1@1,2@1,3@0,4@1 -n 2 --no-huge -m 1024 --no-pci --no-shconf \
	--file-prefix th-acc-$$ --log-level=error \
	--vdev=net_pcap0,rx_pcap="$work/users.pcap" 2> "$work/capture-n2.log"
grep -q '^capture: 1 port, 2 decode lcores (software dispatch)' "$work/capture-n2.log" ||
	{ echo "two decode lcores: not run" >&2; exit 1; }
check_sum "$work/capture-n2.log"
differ=$(sort "$work/users.records" | comm -3 - <(sort "$work/users-n2.records") | wc -l)
echo "two decode lcores: $differ records differ from one decode lcore (at most $diff_decode)" >&2
if ((differ > diff_decode)); then
	sort "$work/users.records" | comm -3 - <(sort "$work/users-n2.records") | head >&2
	exit 1
fi
# Two session lcores own the files between them; ls -l bursts and access
# answers span files, so each sees part of them.
printf 'lcores = 2\n' | cat "$work/capture.ini" - > "$work/capture2.ini"
"$th" capture -c "$work/capture2.ini" -o none -r "$work/users2.records" -- \
	--lcores=0@0,1@1,2@1,3@0 -n 1 --no-huge -m 1024 --no-pci --no-shconf \
	--file-prefix th-acc-$$ --log-level=error \
	--vdev=net_pcap0,rx_pcap="$work/users.pcap" 2> "$work/capture2.log"
grep -q '^open/close inference (2 session lcores)' "$work/capture2.log" ||
	{ echo "two session lcores: not run" >&2; exit 1; }
check_sum "$work/capture2.log"
echo "two session lcores:" >&2
exec python3 "$(dirname "$0")/score.py" "$work/users2.records" "$work/users.opens" \
	"${bars_two[@]}"
