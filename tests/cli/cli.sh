#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What a user sees when they get the command line or the config wrong:
# exit status 2 and a message that says where (file:line) and what.
#   cli.sh TRACEHOUND [--no-capture]   (the second: a build without DPDK)
set -u
th=$1
has_capture=1
[[ ${2:-} == --no-capture ]] && has_capture=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
passed=0

. "$(dirname "$0")/expect.sh"

eal=(--no-huge -m 128 --no-pci --no-shconf --file-prefix th-cli-$$ --log-level=error)

expect 0 '^usage: tracehound' -- "$th" --help
expect 2 "'frobnicate' is not a command" -- "$th" frobnicate
expect 0 'usage|--seed' -- "$th" gen --help
expect 2 'mtu' -- "$th" gen --mtu 10 -o "$work/x.pcap"
# Numbers are decimal: 010 is ten (it was octal eight).
expect 0 ' 10 RPCs' -- "$th" gen -n 010 -o "$work/x.pcap"
expect 2 'need a file each' -- "$th" gen -n 10 -o "$work/x.pcap" -t "$work/x.pcap"
# Numbers on the command line read as in config files: digits, no sign or space before
# them, no hex where a decimal is asked for.
expect 2 "--ops: '\+10' is not a number" -- "$th" gen -n +10 -o "$work/x.pcap"
expect 2 "--ops: ' 10' is not a number" -- "$th" gen -n ' 10' -o "$work/x.pcap"
expect 2 "--seeds wants an integer in .*, not '\+3'" -- "$th" search --eval --seeds +3
expect 2 "--hours wants a number in .*, not '0x1p-2'" -- "$th" search --hours 0x1p-2
expect 2 "--window '\+60': expected seconds" -- "$th" export --window +60 "$work"
expect 2 "--uid ' 7': expected a number" -- "$th" export --uid ' 7' "$work"
# One file not made yet, spelt two ways.
expect 2 'need a file each' -- "$th" gen -n 10 -o "$work/new.pcap" -t "$work/./new.pcap"
[[ ! -e $work/new.pcap ]] || { echo "FAIL: gen wrote new.pcap"; fails=$((fails + 1)); }
# A link to a file not made yet is that file.
ln -s target.pcap "$work/link.pcap"
expect 2 'need a file each' -- "$th" gen -n 10 -o "$work/link.pcap" -t "$work/target.pcap"
expect 2 'at most 200000' -- "$th" gen -w users --hours 0.001 -c 65535 --users-per-client 1000 \
	-o "$work/x.pcap"
# actimeo=0: one GETATTR per path component and walk, not a walk that never ends.
expect 0 'generated in' -- timeout 60 "$th" gen -w users --hours 0.001 --acdirmin 0 \
	--acdirmax 0 --acregmin 0 --acregmax 0 -o "$work/x.pcap"
# An option of the other workload is refused, not dropped; ranges read as checked.
expect 2 '--hours needs --workload users' -- "$th" gen --hours 1 -o "$work/x.pcap"
expect 2 '--ops does not apply to --workload users' -- "$th" gen -w users -n 5 \
	-o "$work/x.pcap"
expect 2 "'65536' is not a number from 1 to 65535" -- "$th" gen -c 65536 -o "$work/x.pcap"
expect 2 'tap dup must be between 0 and 0.5' -- "$th" gen --tap-dup 0.6 -o "$work/x.pcap"
expect 0 'frames the mirror wrote twice [1-9]' -- "$th" gen -w users --hours 0.001 \
	--tap-dup 0.5 -o "$work/x.pcap"
# A pcap's seconds past 2^31 (2038) read as before 1970 in libpcap, so in capture: a --start
# there is refused, and so is traffic that runs past it, or a users run that would.
expect 2 'start must be at most 2147483647 \(2038-01-19 03:14:07 UTC\)' -- "$th" gen -n 5 \
	--start 4000000000 -o "$work/x.pcap"
expect 0 ' 5 RPCs' -- "$th" gen -n 5 --start 2147483000 -o "$work/x.pcap"
expect 1 'the traffic runs past 2038-01-19 03:14:07 UTC' -- "$th" gen -c 1 -n 200 \
	--think-us 60000000 --start 2147480000 -o "$work/x.pcap"
expect 2 'start plus hours .* passes 2038-01-19' -- "$th" gen -w users --hours 1 \
	--start 2147480000 -o "$work/x.pcap"
# -o - writes the pcap to standard output.
# And it is standard output for the clash check too: the truth written into the pcap's stream
# made both unreadable (a pipe, a file, or a terminal alike).
expect 2 'need a file each' -- "$th" gen -n 5 -o - -t /dev/stdout
expect 2 'need a file each' -- bash -c 'set -o pipefail; "$0" gen -n 5 -o - -t /dev/stdout | cat' \
	"$th"
expect 2 'need a file each' -- "$th" gen -w users --hours 0.001 -o - --opens /proc/self/fd/1
"$th" gen -n 50 -o - 2> /dev/null > "$work/piped.pcap"
"$th" gen -n 50 -o "$work/file.pcap" 2> /dev/null
if cmp -s "$work/piped.pcap" "$work/file.pcap" && [[ ! -e ./- ]]; then
	passed=$((passed + 1))
else
	echo "FAIL: gen -o - wrote something else than gen -o FILE"
	fails=$((fails + 1))
fi
expect 2 'cannot read: Is a directory' -- "$th" search -p "$work" --hours 0.1
if [[ -w /dev/full ]]; then
	expect 1 'standard output: No space left' -- sh -c '"$0" search -p "$1" --hours 0.05 > /dev/full' \
		"$th" "$(dirname "$0")/../../config/rdma/H.ini"
fi
# export --names lists the name map: a filter a binding cannot have, or a second listing, is
# refused before any segment is read (none is given here).
expect 0 '^ +--names +the name map instead of opens' -- "$th" export --help
expect 2 '^tracehound export: --client does not go with --names: a name binding has no client' \
	-- "$th" export --names --client 10.0.0.1 "$work/no-segments"
expect 2 '^tracehound export: --uid does not go with --names' -- "$th" export --names --uid 0 \
	"$work/no-segments"
expect 2 '^tracehound export: --direction does not go with --names' -- "$th" export --names \
	--direction read "$work/no-segments"
expect 2 '^tracehound export: --names and --rpcs are different listings: give one$' -- \
	"$th" export --rpcs --names "$work/no-segments"
expect 2 '^tracehound export: --names and --srt are different listings: give one$' -- \
	"$th" export --names --srt -f csv "$work/no-segments"
# --names holds every record before writing, and --srt's table does not care for order: a
# reorder window would do nothing.
expect 2 '^tracehound export: --window orders records as they are written; --names holds' -- \
	"$th" export --names --window 120 "$work/no-segments"
expect 2 '^tracehound export: --window-mb orders records .*; --srt holds none back: order does not matter to a table$' -- \
	"$th" export --srt --window-mb 64 "$work/no-segments"
if ((!has_capture)); then
	# Without DPDK the command is named, and says why it cannot run.
	expect 0 'capture +\(not in this build' -- "$th" --help
	expect 2 'capture is not in this build: it was built without DPDK' -- "$th" capture --help
else
	expect 0 'tracehound capture \[options\]' -- "$th" capture --help

	printf '[capture]\nstats_interval = 1\nflows = 10\n' > "$work/typo.ini"
	expect 2 "typo.ini:3: unknown key 'capture.flows'" -- "$th" capture -c "$work/typo.ini" -- "${eal[@]}"

	# A UTF-8 byte-order mark (Windows editors) does not hide the first header.
	printf '\xef\xbb\xbf[capture]\nflows = 10\n' > "$work/bom.ini"
	expect 2 "bom.ini:2: unknown key 'capture.flows'" -- "$th" capture -c "$work/bom.ini" -- "${eal[@]}"
	# A key above every header is misplaced, not unknown.
	printf 'mbufs = 5\n[eal]\nargs = -l 0-1\n' > "$work/top.ini"
	expect 2 "top.ini:1: 'mbufs' is before any \\[section\\]" -- \
		"$th" capture -c "$work/top.ini" -- "${eal[@]}"

	printf '[decode]\ncalls = lots\n' > "$work/bad.ini"
	expect 2 "bad.ini:2: decode.calls = 'lots': expected a whole number" -- \
		"$th" capture -c "$work/bad.ini" -- "${eal[@]}"

	printf '[capture\n' > "$work/header.ini"
	expect 2 "header.ini:1: section header needs a closing" -- "$th" capture -c "$work/header.ini"

	printf '[decode]\ncalls = 64\n[capture]\nburst = 32\n[decode]\nflows = 64\n' > "$work/twice.ini"
	expect 2 "twice.ini:5: \\[decode\\] already begun on line 1" -- \
		"$th" capture -c "$work/twice.ini" -- "${eal[@]}"
	printf '[capture]\nburst = 32\n\n[sesion]\n' > "$work/empty.ini"
	expect 2 "empty.ini:4: unknown section \\[sesion\\] \\(see README, Configuration\\)" -- \
		"$th" capture -c "$work/empty.ini" -- "${eal[@]}"
	printf '[capture]\nburst = +32\n' > "$work/plus.ini"
	expect 2 "plus.ini:2: capture.burst = '\\+32': expected a whole number" -- \
		"$th" capture -c "$work/plus.ini" -- "${eal[@]}"

	expect 2 'cannot open: No such file' -- "$th" capture -c "$work/absent.ini"
	# Config files do not merge: the first file's keys would be dropped unsaid.
	expect 2 "-c given twice \\(.*bad.ini, then .*plus.ini\\): one config file is read" -- \
		"$th" capture -c "$work/bad.ini" -c "$work/plus.ini" -- "${eal[@]}"
	expect 2 'wants 1 to' -- "$th" capture --decode-lcores 0 -- "${eal[@]}"
	expect 2 'wants 1 to' -- "$th" capture --decode-lcores +2 -- "${eal[@]}"
	expect 2 'stats-interval wants seconds' -- "$th" capture -s 0x10 -- "${eal[@]}"
	expect 2 'stats-interval wants seconds' -- "$th" capture -s inf -- "${eal[@]}"
	expect 2 'stats-interval wants seconds' -- "$th" capture -s '' -- "${eal[@]}"
	expect 2 'no DPDK port' -- "$th" capture -o "$work/o" -- "${eal[@]}" -l 0-1
	"$th" gen --ops 10 -o "$work/small.pcap" 2>/dev/null
	expect 2 'at least two lcores' -- "$th" capture -o "$work/o" -- "${eal[@]}" -l 0 \
		--vdev=net_pcap0,rx_pcap="$work/small.pcap"
	expect 1 'cannot write' -- "$th" capture -o /nonexistent/dir/out -- "${eal[@]}"

	printf '[probe]\nevery = 60\n' > "$work/probe.ini"
	expect 2 'probe.ini:2: probe.every does nothing without probe.target' -- "$th" capture \
		-c "$work/probe.ini" -- "${eal[@]}"

	# Scheduled disk probes run beside the capture and are reported in the final block.
	printf '[capture]\nmbufs = 16383\n[probe]\ntarget = %s\nevery = 0.5\nseconds = 0.1\nrate = 500\nsize_mb = 4\nalarm = 3600\n' \
		"$work" > "$work/probe-ok.ini"
	expect 0 '^  [1-9][0-9]* +runs$' -- timeout --preserve-status -s INT 3 "$th" capture -c "$work/probe-ok.ini" -o /dev/null \
		-- "${eal[@]}" -m 512 -l 0-1 --vdev=net_pcap0,rx_pcap="$work/small.pcap",infinite_rx=1

	# A probe target the probe thread cannot use is refused at the start, file:line.
	printf '[probe]\ntarget = %s/absent\n' "$work" > "$work/ptarget.ini"
	expect 2 'ptarget.ini:2: probe.target: .*/absent: no such file' -- "$th" capture \
		-c "$work/ptarget.ini" -o /dev/null -- "${eal[@]}" -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/small.pcap"
	printf '[probe]\ntarget = /dev/null\n' > "$work/pchar.ini"
	expect 2 'pchar.ini:2: probe.target: /dev/null is not a block device' -- "$th" capture \
		-c "$work/pchar.ini" -- "${eal[@]}"
	# probe.size_mb sizes a directory's temporary file: for a file it would do nothing.
	printf '[probe]\ntarget = %s/small.pcap\nsize_mb = 4\n' "$work" > "$work/psize.ini"
	expect 2 'psize.ini:3: probe.size_mb is the size of the temporary file.*is a file' -- \
		"$th" capture -c "$work/psize.ini" -- "${eal[@]}"
	# A probe that fails while running (a 100-byte file, 4 KiB reads) shows in the summary.
	head -c 100 /dev/urandom > "$work/tiny"
	printf '[capture]\nmbufs = 16383\n[probe]\ntarget = %s/tiny\nevery = 0.5\nseconds = 0.1\n' \
		"$work" > "$work/pfail.ini"
	expect 0 '^summary:.* [1-9][0-9]* disk probes? failed' -- timeout --preserve-status -s INT 3 \
		"$th" capture -c "$work/pfail.ini" -o /dev/null -- "${eal[@]}" -m 512 -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/small.pcap",infinite_rx=1

	# A pcap that is not a pcap: the PMD refuses it; capture says so and exits 1, no crash.
	head -c 100 /dev/urandom > "$work/junk.pcap"
	expect 1 'did not come up' -- "$th" capture -o "$work/o" -- "${eal[@]}" -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/junk.pcap"
	# A run that stops before its ports are up leaves the last run's outputs as they were
	# (they used to be emptied first: a mistyped --vdev or -l lost yesterday's log).
	echo 'the last run' > "$work/kept.log"
	echo 'its records' > "$work/kept.rec"
	expect 1 'did not come up' -- "$th" capture -o "$work/kept.log" -r "$work/kept.rec" -- \
		"${eal[@]}" -l 0-1 --vdev=net_pcap0,rx_pcap="$work/absent.pcap"
	expect 2 'EAL initialisation failed' -- "$th" capture -o "$work/kept.log" -- "${eal[@]}" \
		-l 0-1 --bogus-eal-option --vdev=net_pcap0,rx_pcap="$work/small.pcap"
	if [[ $(cat "$work/kept.log" "$work/kept.rec") == $'the last run\nits records' ]]; then
		passed=$((passed + 1))
	else
		echo "FAIL: a capture that never started emptied its outputs"
		fails=$((fails + 1))
	fi
	# A run that starts writes them from the start: nothing of the longer old file is left.
	seq 1 100000 > "$work/kept.log"
	"$th" capture -o "$work/kept.log" -- "${eal[@]}" -m 512 -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/small.pcap" 2> /dev/null
	if [[ $(wc -l < "$work/kept.log") -eq 10 ]]; then
		passed=$((passed + 1))
	else
		echo "FAIL: capture left $(wc -l < "$work/kept.log") lines in its log, not 10"
		fails=$((fails + 1))
	fi

	# A pipe: net_pcap reads its header; reading it again would block or steal records. It
	# is refused before EAL opens it (which waits for a writer), as are a device and a
	# directory (which net_pcap refused, exit 1).
	mkfifo "$work/pipe.pcap"
	expect 2 'rx_pcap=.*/pipe.pcap: not a regular file \(a pipe\)' -- timeout -s KILL 30 \
		"$th" capture -o "$work/o" -- "${eal[@]}" -l 0-1 --vdev=net_pcap0,rx_pcap="$work/pipe.pcap"
	rm -f "$work/pipe.pcap"
	expect 2 'rx_pcap=/dev/null: not a regular file \(a character device\)' -- "$th" capture \
		-o "$work/o" -- "${eal[@]}" -l 0-1 --vdev=net_pcap0,rx_pcap=/dev/null
	expect 2 'not a regular file \(a directory\)' -- "$th" capture -o "$work/o" -- "${eal[@]}" \
		-l 0-1 --vdev=net_pcap0,rx_pcap="$work/small.pcap" --vdev=net_pcap1,rx_pcap="$work"
	# A header whose snap length is below its records' lengths: libpcap cuts them there,
	# and capture says so before it starts.
	cp "$work/small.pcap" "$work/snap40.pcap"
	printf '\x28\x00\x00\x00' | dd of="$work/snap40.pcap" bs=1 seek=16 conv=notrunc 2> /dev/null
	expect 0 'warning: rx_pcap=.*snap40.pcap: record 1 holds [0-9]+ bytes, more than the 40 of' \
		-- "$th" capture -o /dev/null -- "${eal[@]}" -m 512 -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/snap40.pcap"
	expect 0 '^summary: nothing lost' -- "$th" capture -o /dev/null -- "${eal[@]}" -m 512 -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/small.pcap"
	if grep -q 'warning' "$work/out"; then
		echo "FAIL: a pcap whose records fit its snap length was warned about"
		fails=$((fails + 1))
	fi
	# Seconds past 2^31 - 1: libpcap reads them as before 1970, and capture says so first.
	cp "$work/small.pcap" "$work/y2038.pcap"
	printf '\x00\x00\x00\x80' | dd of="$work/y2038.pcap" bs=1 seek=24 conv=notrunc 2> /dev/null
	expect 0 'warning: rx_pcap=.*y2038.pcap: record 1 is stamped 2147483648 s, after 2038-01-19' \
		-- "$th" capture -o /dev/null -- "${eal[@]}" -m 512 -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/y2038.pcap"
	# One file on two ports (under two spellings) would show every frame twice.
	expect 2 'rx_pcap=.*/\./small.pcap is read twice: every frame would be seen twice' -- \
		"$th" capture -o "$work/o" -- "${eal[@]}" -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/small.pcap" --vdev=net_pcap1,rx_pcap="$work/./small.pcap"
	# An output pipe whose reader stopped reading: SIGINT still ends the run, within the
	# 2 s it waits for the reader, the lines not written counted (it used to hang).
	"$th" gen -n 60000 -o "$work/big.pcap" 2> /dev/null
	mkfifo "$work/out.fifo"
	(exec 3< "$work/out.fifo"; sleep 60) &
	reader=$!
	"$th" capture -o "$work/out.fifo" -- "${eal[@]}" -m 256 -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/big.pcap" 2> "$work/stuck.err" &
	pid=$!
	sleep 2
	kill -INT "$pid"
	for _ in $(seq 1 40); do kill -0 "$pid" 2> /dev/null || break; sleep 0.2; done
	if kill -0 "$pid" 2> /dev/null; then
		kill -KILL "$pid"
		echo "FAIL: capture writing to a stuck pipe ignored SIGINT for 8 s"
		fails=$((fails + 1))
	elif ! grep -q "the output's reader took nothing for 2000 ms" "$work/stuck.err"; then
		echo "FAIL: a stuck output pipe not said: $(tail -1 "$work/stuck.err")"
		fails=$((fails + 1))
	else
		passed=$((passed + 1))
	fi
	wait "$pid" 2> /dev/null
	# SIGINT sent to the id of DPDK's telemetry thread (htop's k on its row does that):
	# only the control thread takes it, every other thread blocks SIGINT and SIGTERM.
	# Taken there, it ended telemetry's accept() loop ("telemetry thread quitting").
	"$th" capture -o "$work/out.fifo" -- "${eal[@]}" -m 256 -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/big.pcap" 2> "$work/tel.err" &
	pid=$!
	sleep 2
	unblocked= tel=
	for task in /proc/"$pid"/task/*; do
		[[ $(cat "$task/comm" 2> /dev/null) == telemetry-v2 ]] && tel=${task##*/}
		mask=$(awk '/^SigBlk:/ { print $2 }' "$task/status" 2> /dev/null)
		# SIGINT is bit 1, SIGTERM bit 14.
		[[ ${task##*/} != "$pid" && -n $mask ]] && ((!((0x$mask >> 1) & (0x$mask >> 14) & 1))) &&
			unblocked+=" $(cat "$task/comm")"
	done
	[[ -n $tel ]] && kill -INT "$tel"
	for _ in $(seq 1 40); do kill -0 "$pid" 2> /dev/null || break; sleep 0.2; done
	if kill -0 "$pid" 2> /dev/null; then
		kill -KILL "$pid"
		echo "FAIL: SIGINT to the telemetry thread did not stop the run in 8 s"
		fails=$((fails + 1))
	elif [[ -z $tel || -n $unblocked ]] || grep -q 'telemetry thread quitting' "$work/tel.err" ||
		! grep -q "the output's reader took nothing" "$work/tel.err"; then
		echo "FAIL: SIGINT to the telemetry thread (${tel:-not found}); threads not" \
			"blocking it:${unblocked:- none}; $(grep -m1 TELEMETRY "$work/tel.err")"
		fails=$((fails + 1))
	else
		passed=$((passed + 1))
	fi
	wait "$pid" 2> /dev/null
	kill "$reader" 2> /dev/null
	wait "$reader" 2> /dev/null
	rm -f "$work/out.fifo" "$work/big.pcap"
	# No EAL arguments at all: no port named, said before EAL looks for hugepages.
	expect 2 'no EAL arguments, so no port: give them after --' -- "$th" capture -o /dev/null
	expect 2 'no EAL arguments, so no port' -- "$th" capture -o /dev/null --
	# A live port's frames are stamped with the TSC read as wall-clock time: steered each
	# second, it stays on the clock (EAL's rate was 1.5 ms a second off on one host).
	timeout -s INT 3 "$th" capture -o none -- -l 0-1 "${eal[@]}" -m 256 --vdev=net_null0 \
		> /dev/null 2> "$work/clock.err"
	off=$(sed -nE 's/^ +(-?[0-9]+) +us the host-stamped frame times were off.*/\1/p' \
		"$work/clock.err")
	if [[ -z $off ]] || ((off > 1000 || off < -1000)); then
		echo "FAIL: live frame times ${off:-(not said)} us off the wall clock"
		fails=$((fails + 1))
	else
		passed=$((passed + 1))
	fi
	# Arguments EAL refuses are a usage error too, and leave no runtime directory behind.
	expect 2 'EAL initialisation failed: Invalid argument' -- "$th" capture -o /dev/null -- \
		-l 0-300 "${eal[@]}" --vdev=net_null0
	if [[ -e /run/dpdk/th-cli-$$ ]]; then
		echo "FAIL: a failed EAL start left /run/dpdk/th-cli-$$"
		fails=$((fails + 1))
	fi

	# Values that parse but cannot work: file:line and exit 2, not "out of memory" later.
	printf '[session]\nrecords = /dev/null\nidle = 0\n' > "$work/idle.ini"
	expect 2 'idle.ini:3: session.idle = 0' -- "$th" capture -c "$work/idle.ini" -- "${eal[@]}"
	# A call or a connection forgotten at once: every call a CALL line, no RPC matched.
	printf '[decode]\ncalls = 64\ncall_timeout = 0\n' > "$work/ctime.ini"
	expect 2 'ctime.ini:3: decode.call_timeout = 0: every call would be given up' -- \
		"$th" capture -c "$work/ctime.ini" -- "${eal[@]}"
	printf '[decode]\nflow_idle = 0\n' > "$work/fidle.ini"
	expect 2 'fidle.ini:2: decode.flow_idle = 0: every connection' -- \
		"$th" capture -c "$work/fidle.ini" -- "${eal[@]}"
	# A table of listing buffers past the slots a flow half can name.
	printf '[decode]\nlistings = 256\n' > "$work/lists.ini"
	expect 2 "lists.ini:2: decode.listings = '256': expected a whole number from 0 to 255" \
		-- "$th" capture -c "$work/lists.ini" -- "${eal[@]}"
	# gap_call_timeout = 0 is documented: the shortcut is off.
	printf '[decode]\ngap_call_timeout = 0\n' > "$work/gtime.ini"
	expect 0 'nothing lost' -- "$th" capture -c "$work/gtime.ini" -o /dev/null -- \
		"${eal[@]}" -m 512 -l 0-1 --vdev=net_pcap0,rx_pcap="$work/small.pcap"
	printf '[trace]\ndir = %s/absent\n' "$work" > "$work/tdir.ini"
	expect 2 "tdir.ini:2: trace.dir = .*No such file" -- "$th" capture -c "$work/tdir.ini" \
		-- "${eal[@]}"
	expect 2 'cannot read: Is a directory' -- "$th" capture -c "$work" -- "${eal[@]}"
	printf '[probe]\ntarget = %s\nevery = 0\n' "$work" > "$work/every.ini"
	expect 2 'every.ini:3: probe.every = 0' -- "$th" capture -c "$work/every.ini" -- "${eal[@]}"
	# access() passes any directory for root: a file must be made there (/proc: none can).
	printf '[trace]\ndir = /proc\n' > "$work/proc.ini"
	expect 2 "proc.ini:2: trace.dir = '/proc': .*expected a writable directory" -- \
		"$th" capture -c "$work/proc.ini" -- "${eal[@]}" -l 0-1 --vdev=net_null0
	printf '[trace]\ndir = %s\nrotate = 0\n' "$work" > "$work/rotate.ini"
	expect 2 'rotate.ini:3: trace.rotate = 0' -- "$th" capture -c "$work/rotate.ini" \
		-- "${eal[@]}"
	# A key whose feature is off is said, not ignored (-r turns inference on).
	printf '[session]\nnames = %s/names.txt\n' "$work" > "$work/alone.ini"
	expect 2 'alone.ini:2: session.names does nothing without session.records' -- \
		"$th" capture -c "$work/alone.ini" -- "${eal[@]}"
	[[ ! -e $work/names.txt ]] || { echo "FAIL: names.txt made"; fails=$((fails + 1)); }
	printf '[capture]\nstats_interval = 1\n[trace]\nrpcs = 1\n' > "$work/rpcs.ini"
	expect 2 'rpcs.ini:4: trace.rpcs does nothing without trace.dir' -- \
		"$th" capture -c "$work/rpcs.ini" -- "${eal[@]}"
	expect 2 'probe.seconds does nothing without probe.target' -- "$th" capture \
		-c <(printf '[probe]\nseconds = 5\n') -- "${eal[@]}"
	expect 2 "-o '': an empty file name" -- "$th" capture -o '' -- "${eal[@]}"
	expect 2 "-r '': an empty file name" -- "$th" capture -r '' -o /dev/null -- "${eal[@]}"
	expect 2 '^capture: --stats-interval 1e-09: expected 0 \(off\) or at least 0.1 s' -- \
		"$th" capture -s 1e-9 -o /dev/null -- "${eal[@]}"
	# The same values from the file: its file:line.
	printf '[capture]\nstats_interval = 0.05\n' > "$work/often.ini"
	expect 2 'often.ini:2: capture.stats_interval = 0.05: expected 0 \(off\) or at least 0.1 s' \
		-- "$th" capture -c "$work/often.ini" -o /dev/null -- "${eal[@]}"
	# ... unless the command line overrides them.
	expect 2 '^capture: --stats-interval 0.01' -- "$th" capture -c "$work/often.ini" -s 0.01 \
		-o /dev/null -- "${eal[@]}"
	printf '[session]\nrecords =\n' > "$work/norec.ini"
	expect 2 'norec.ini:2: session.records is empty' -- "$th" capture -c "$work/norec.ini" \
		-o /dev/null -- "${eal[@]}"
	printf '[session]\nrecords = /dev/null\n# the map\nnames =\n' > "$work/nonames.ini"
	expect 2 'nonames.ini:4: session.names is empty' -- "$th" capture -c "$work/nonames.ini" \
		-o /dev/null -- "${eal[@]}"
	printf '[capture]\noutput =\n' > "$work/noout.ini"
	expect 2 'noout.ini:2: capture.output is empty' -- "$th" capture -c "$work/noout.ini" \
		-- "${eal[@]}"
	# The RPC log may not be the pcap it reads.
	cp "$work/small.pcap" "$work/same.pcap"
	expect 2 'is the pcap a port reads' -- "$th" capture -o "$work/same.pcap" -- "${eal[@]}" \
		-l 0-1 --vdev=net_pcap0,rx_pcap="$work/same.pcap"
	cmp -s "$work/small.pcap" "$work/same.pcap" || { echo "FAIL: capture emptied its input"; fails=$((fails + 1)); }
	expect 2 'tx_pcap=.* is the pcap rx_pcap= reads' -- "$th" capture -o /dev/null -- "${eal[@]}" \
		-l 0-1 --vdev=net_pcap0,rx_pcap="$work/same.pcap",tx_pcap="$work/same.pcap"
	cmp -s "$work/small.pcap" "$work/same.pcap" || { echo "FAIL: tx_pcap emptied the input"; fails=$((fails + 1)); }
	expect 2 '-o and -r both write' -- "$th" capture -o "$work/twice" -r "$work/twice" -- \
		"${eal[@]}" -l 0-1 --vdev=net_pcap0,rx_pcap="$work/small.pcap"
	printf '[session]\nnames = %s/sub/../n.txt\n' "$work" > "$work/names.ini"
	mkdir -p "$work/sub"
	expect 2 '-o and session.names both write' -- "$th" capture -c "$work/names.ini" \
		-o "$work/n.txt" -r "$work/r.txt" -- "${eal[@]}" -l 0-1 \
		--vdev=net_pcap0,rx_pcap="$work/small.pcap"
	expect 2 '-o and -r both write standard output' -- "$th" capture -o - -r - -- "${eal[@]}" \
		-l 0-1 --vdev=net_pcap0,rx_pcap="$work/small.pcap"
	expect 2 '-o and -r both write standard output' -- sh -c 'w=$1; shift; \
		"$0" capture -o - -r /dev/stdout -- "$@" > "$w/stdout.txt"' "$th" "$work" \
		"${eal[@]}" -l 0-1 --vdev=net_pcap0,rx_pcap="$work/small.pcap"
	# On a terminal too, under another of its names: two kinds of lines interleaved on it.
	if command -v script > /dev/null; then
		expect 2 '-o and -r both write standard output' -- script -qec "$th capture -o - \
			-r /proc/self/fd/1 -- ${eal[*]} -l 0-1 --vdev=net_pcap0,rx_pcap=$work/small.pcap" \
			/dev/null
		expect 2 '-o and -r both write standard output' -- script -qec "$th capture -o \
			/dev/fd/1 -r \$(tty) -- ${eal[*]} -l 0-1 --vdev=net_pcap0,rx_pcap=$work/small.pcap" \
			/dev/null
	else
		echo "note: no script(1); two names of a terminal on standard output not tested"
	fi
	printf '[capture]\nstats_interval = 0\n' > "$work/keep.ini"
	expect 2 'is the config file' -- "$th" capture -c "$work/keep.ini" -o "$work/keep.ini" -- \
		"${eal[@]}"
	expect 2 'give each pcap a --vdev of its own' -- "$th" capture -o /dev/null -- "${eal[@]}" \
		-l 0-1 --vdev=net_pcap0,rx_pcap="$work/small.pcap",rx_pcap="$work/same.pcap"

	rm -rf /var/run/dpdk/th-cli-$$ 2>/dev/null
fi
echo "$passed passed, $fails failed"
[[ $fails -eq 0 ]]
