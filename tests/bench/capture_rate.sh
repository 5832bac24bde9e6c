#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The whole DPDK path: `tracehound capture` on a net_pcap port with
# infinite_rx=1 (the PMD preloads the file into mbufs and replays it from
# memory), one decode lcore, op lines written to /dev/null. Prints the
# frames/s of each 2-second progress interval after the first, and their
# median. Replay is copy-bound in the PMD, so this is a floor, not the
# decoder's own rate (run.sh measures that).
#   tests/bench/capture_rate.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
secs=${2:-12}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for mix in meta data; do
	ops=20000
	[[ $mix == data ]] && ops=200
	"$b/app/tracehound" gen --seed 7 --mix $mix --ops $ops --clients 64 --servers 4 \
		-o "$out/$mix.pcap" 2>/dev/null
	# infinite_rx needs an mbuf for every packet of the file, and then some.
	printf '[capture]\nmbufs = 262143\n' > "$out/rate.ini"
	timeout -s INT "$secs" "$b/app/tracehound" capture -c "$out/rate.ini" -o /dev/null -s 2 -- -l 0-1 \
		--no-huge -m 1536 --no-pci --no-shconf --file-prefix th-rate-$$ --log-level=error \
		--vdev=net_pcap0,rx_pcap="$out/$mix.pcap",infinite_rx=1 2> "$out/log" || true
	python3 - "$mix" "$out/log" <<'PY'
import re, statistics, sys
mix, log = sys.argv[1], sys.argv[2]
pts = [(float(m.group(1)), int(m.group(2))) for m in
       (re.match(r'capture: ([0-9.]+)s frames ([0-9]+)', l) for l in open(log)) if m]
rates = [(f1 - f0) / (t1 - t0) / 1e6 for (t0, f0), (t1, f1) in zip(pts[1:], pts[2:])]
for r in rates:
    print('%s: %.2f Mframes/s' % (mix, r))
if rates:
    print('%s mix: median %.2f Mframes/s over %d intervals' % (mix, statistics.median(rates), len(rates)))
PY
done
