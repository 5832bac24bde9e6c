#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The accuracy workload end to end: generate the users workload (pcap and
# the ground truth of opens), decode it with `tracehound capture -r`, and
# score the open records against the truth.
#   run.sh TRACEHOUND WORKDIR [score.py bars...] [-- gen options...]
set -euo pipefail
th=$1
work=$2
shift 2
bars=()
while [[ $# -gt 0 && $1 != -- ]]; do
	bars+=("$1")
	shift
done
[[ ${1:-} == -- ]] && shift
mkdir -p "$work"
"$th" gen --workload users --seed 1 "$@" -o "$work/users.pcap" --opens "$work/users.opens" \
	2> "$work/gen.log"
cat "$work/gen.log" >&2
printf '[capture]\nmbufs = 16383\n[session]\ndetail = dirs\n' > "$work/capture.ini"
"$th" capture -c "$work/capture.ini" -o none -r "$work/users.records" -- -l 0-1 --no-huge \
	-m 1024 --no-pci --no-shconf --file-prefix th-acc-$$ --log-level=error \
	--vdev=net_pcap0,rx_pcap="$work/users.pcap" 2> "$work/capture.log"
sed -n '/^open\/close inference/,/^output/p' "$work/capture.log" >&2
# Every RPC decoded reaches inference or a row that says why it did not.
awk '/RPCs matched \(call and reply\)$|unmatched calls \(no reply\)$|unmatched replies \(no call\)$/ {
		rpcs += $1 }
	/operations in$|ops inference does not use|ops lost to inference/ { ops += $1 }
	END { if (rpcs != ops || rpcs == 0) {
		printf "inference: %d RPCs decoded, %d accounted for\n", rpcs, ops > "/dev/stderr"
		exit 1 } }' "$work/capture.log"
exec python3 "$(dirname "$0")/score.py" "$work/users.records" "$work/users.opens" "${bars[@]}"
