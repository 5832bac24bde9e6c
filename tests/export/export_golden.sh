#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tracehound export on segments written by the real writer (mkseg): two boxes, three lcores
# (one stream rotated into two segments), a name map, records written out of open-time order.
# Every output is diffed with the file kept next to this script; UPDATE=1 rewrites them.
#   export_golden.sh TRACEHOUND MKSEG GOLDEN_DIR CLOSE_EIO_SO
set -u
th=$1
mkseg=$2
golden=$3
close_eio=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
passed=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# judge STATUS WHAT ERR: a pass when STATUS is 0, else a failure said with ERR's lines.
judge() {
	if [[ $1 -eq 0 ]]; then
		passed=$((passed + 1))
	else
		fail "$2"
		sed 's/^/    /' "$3"
	fi
}

# Input: box 1 (lcores 0 and 1, and its name map) and box 2 (lcore 0) in two directories,
# and a crashed stream (box 3) on its own.
mkdir -p "$work/raw" "$work/box1" "$work/box2/deeper" "$work/crash"
"$mkseg" "$work/raw" || { echo "mkseg failed"; exit 1; }
"$mkseg" "$work/crash" crash || { echo "mkseg crash failed"; exit 1; }
mv "$work"/raw/*-2-*.lz4 "$work/box2/deeper/"
mv "$work"/raw/*.lz4 "$work/box1/"
in=("$work/box1" "$work/box2")

# golden NAME ARGS...: export with ARGS, stdout must equal GOLDEN_DIR/NAME, exit status 0.
golden() {
	local name=$1 rc
	shift
	"$th" export -q "$@" "${in[@]}" > "$work/$name" 2> "$work/$name.err"
	rc=$?
	if [[ $rc -ne 0 ]]; then
		fail "$name: exit $rc: $(head -3 "$work/$name.err")"
		return
	fi
	if [[ ${UPDATE:-0} == 1 ]]; then
		cp "$work/$name" "$golden/$name"
	fi
	if ! diff -u "$golden/$name" "$work/$name" > "$work/$name.diff"; then
		fail "$name differs from $golden/$name:"
		head -20 "$work/$name.diff"
	else
		passed=$((passed + 1))
	fi
}

golden text.golden
golden text-window0.golden --window 0 --format text
# The least memory (1024 records a stream held back) still sorts these few opens in full.
golden text.golden --window-mb 1
golden csv.golden --format csv
golden csv.golden --format csv --names-mb 1
golden json.golden -f json
golden filter-time.golden --from 1700000009 --to 2023-11-14T22:13:40Z -f csv
golden filter-server.golden --server fd00:1234::/32
golden filter-client-write.golden --client 192.168.77.11 --client 2001:db8:77::/48 \
	--direction write
golden filter-uid.golden --uid 40002 -f json
golden filter-file.golden --file alice-thesis --file D1D4D7DADDE0E3E6 -f csv
printf '# lab hosts\n10.20.30.40 filer1 filer1.lab\nfd00:1234::5\tfiler6\n192.168.77.11 ws11\n' \
	> "$work/hosts"
golden hosts.golden --hosts "$work/hosts"
golden hosts-csv.golden --hosts "$work/hosts" -f csv
# RPC records (two decode lcores' streams): the RPC log's text, CSV and JSON with paths, filters.
golden rpcs-text.golden --rpcs
golden rpcs-csv.golden --rpcs -f csv
golden rpcs-json.golden --rpcs -f json
golden rpcs-filter.golden --rpcs --server 10.20.30.40 --uid 40001 --from 1700000001 -f csv
golden rpcs-hosts.golden --rpcs --hosts "$work/hosts"
golden rpcs-file.golden --rpcs --file alice-thesis --file B1B4B7BABDC0C3C6
golden rpcs-srt.golden --srt
golden rpcs-srt-filter.golden --srt --client 192.168.77.11 --file alice-thesis
golden rpcs-srt-csv.golden --srt -f csv
golden rpcs-srt-json.golden --srt -f json
# Pseudonyms for RPC records: a record without a handle (MOUNT MNT, an unknown program, a
# reply alone) has none to replace, and one without its call has no uid or gid.
printf 'this key is 32 bytes long, okay.' > "$work/key1"
printf 'this key is 32 bytes long, okay!' > "$work/key2"
golden rpcs-anon-text.golden --rpcs --anonymise "$work/key1"
golden rpcs-anon-csv.golden --rpcs -f csv --anonymise "$work/key1"
golden rpcs-anon-json.golden --rpcs -f json --anonymise "$work/key1"
# The name map itself: one row per binding of box 1's names stream, by its start (final.tex, the
# fourth written, comes last); the names file's line and the path, CSV, JSON; filters, host
# names, pseudonyms.
golden names.golden --names
golden names-csv.golden --names -f csv
golden names-json.golden --names -f json
golden names-filter.golden --names -f csv --server 10.20.30.40 --from 1700000000 \
	--to 2023-11-14T22:13:25Z --file alice
golden names-hosts.golden --names --hosts "$work/hosts"
golden names-anon-json.golden --names -f json --anonymise "$work/key1"

# --file fh=CRC takes the handle's CRC-32 as --rpcs text shows it (upper case too), with
# pseudonyms the pseudonym's: each value picks the lines that show it, and opens of that handle.
for anon in "" "--anonymise $work/key1"; do
	# shellcheck disable=SC2086
	"$th" export -q --rpcs $anon "${in[@]}" > "$work/fh.all"
	for v in $(grep -o 'fh=[0-9a-f]*' "$work/fh.all" | sort -u); do
		# shellcheck disable=SC2086
		"$th" export -q --rpcs $anon --file "${v^^}" "${in[@]}" > "$work/fh.out" 2>&1
		grep -wF "$v" "$work/fh.all" | cmp -s - "$work/fh.out"
		judge $? "export --rpcs $anon --file ${v^^}: not the lines with $v" "$work/fh.out"
	done
done
"$th" export -q --rpcs -f csv --file fh=883f1ff8 "${in[@]}" | tail -n +2 | cut -d, -f16 |
	sort -u > "$work/fh.handle"
[[ $(wc -l < "$work/fh.handle") -eq 1 ]] &&
	"$th" export -q --file fh=883F1FF8 "${in[@]}" > "$work/fh.opens" &&
	"$th" export -q --file "$(cat "$work/fh.handle")" "${in[@]}" | cmp -s - "$work/fh.opens" &&
	[[ -s $work/fh.opens ]]
judge $? "export --file fh=883F1FF8: not the opens of its handle $(cat "$work/fh.handle")" /dev/null
"$th" export --file fh=883f1 "${in[@]}" > /dev/null 2> "$work/fh.err"
rc=$?
[[ $rc -eq 2 ]] && grep -q "^tracehound export: --file 'fh=883f1': fh= takes the 8 hex digits of a handle's CRC-32" "$work/fh.err"
judge $? "export --file fh=883f1: exit $rc (want 2), not said" "$work/fh.err"

# Values a record does not have are absent in every format, with pseudonyms or without: the
# handle of the four RPCs without one, the uid and gid of the reply without its call.
# absent OUT FMT: those fields of those records in OUT are absent (empty in CSV, null in JSON).
absent() {
	local out=$1 fmt=$2 xid line bad=0
	for xid in 0x00001003 0x00001005 0x00001006 0x00001007; do
		line=$(grep -F "$xid" "$out")
		case $fmt in
		text) [[ $line != *" fh="* ]] || bad=1 ;;
		csv) [[ $(echo "$line" | cut -d, -f16) == "" ]] || bad=1 ;;
		json) [[ $line == *'"handle":null'* ]] || bad=1 ;;
		esac
	done
	line=$(grep -F 0x00001003 "$out")
	case $fmt in
	text) [[ $line != *" uid="* && $line != *" gid="* ]] || bad=1 ;;
	csv) [[ $(echo "$line" | cut -d, -f14,15) == "," ]] || bad=1 ;;
	json) [[ $line == *'"uid":null,"gid":null'* ]] || bad=1 ;;
	esac
	return $bad
}
for fmt in text csv json; do
	for anon in "" "--anonymise $work/key1"; do
		# shellcheck disable=SC2086
		"$th" export -q --rpcs -f $fmt $anon "${in[@]}" > "$work/absent.$fmt" 2>&1
		if absent "$work/absent.$fmt" $fmt; then
			passed=$((passed + 1))
		else
			fail "export --rpcs -f $fmt $anon: a value the record lacks is written:"
			grep -E '0x0000100[3567]' "$work/absent.$fmt" | sed 's/^/    /'
		fi
	done
done
# The handles there are: 8 of the 12 RPCs carry one, and every one is still written.
[[ $(grep -c ' fh=' "$work/absent.text") -eq 8 ]] ||
	fail "export --rpcs --anonymise text: $(grep -c ' fh=' "$work/absent.text") handles, not 8"
# --uid 0 is root's RPCs: the reply without a call (no credential) is not among them, the
# MOUNT call (uid 0) is.
"$th" export -q --rpcs --uid 0 "${in[@]}" > "$work/uid0" 2>&1
if [[ $(wc -l < "$work/uid0") -eq 1 ]] && grep -q 'MOUNT3 MNT' "$work/uid0"; then
	passed=$((passed + 1))
else
	fail "export --rpcs --uid 0: $(cat "$work/uid0")"
fi

# Every CSV row has the header's columns.
for f in csv.golden rpcs-csv.golden rpcs-filter.golden hosts-csv.golden names-csv.golden; do
	if ! python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
sys.exit(len({len(r) for r in rows}) != 1 or len(rows) < 2)' "$work/$f"; then
		fail "$f: rows without the header's columns"
	else
		passed=$((passed + 1))
	fi
done

# The names are in order of their start, each there once; the text has the names file's seven
# fields and the path.
if sort -s -t'|' -k5,5n "$work/names.golden" | cmp -s - "$work/names.golden" &&
	[[ $(wc -l < "$work/names.golden") -eq 6 ]] &&
	awk -F' [|] ' 'NF != 8 { exit 1 }' "$work/names.golden"; then
	passed=$((passed + 1))
else
	fail "export --names: not 6 names of 8 fields in order of their start"
fi

# The merged stream is sorted by open time, and every record of every stream is there.
if ! sort -s -t'|' -k1,1n "$work/text.golden" | cmp -s - "$work/text.golden"; then
	fail "text output is not in time order"
fi
if [[ $(wc -l < "$work/text.golden") -ne 24 ]]; then
	fail "text output has $(wc -l < "$work/text.golden") records, not 24"
fi
if [[ $(cut -d'|' -f1 "$work/text-window0.golden" | sort -n | uniq | wc -l) -ne 24 ]] ||
	[[ $(sort "$work/text-window0.golden" | cmp - <(sort "$work/text.golden") ; echo $?) -ne 0 ]]
then
	fail "--window 0 lost or changed records"
fi

# A crashed segment: named on stderr with the records recovered, the rest exported, exit 3.
"$th" export -q "${in[@]}" "$work/crash" > "$work/crash.out" 2> "$work/crash.err"
rc=$?
if [[ $rc -ne 3 ]] ||
	! grep -q 'opens-3-.*\.lz4\.tmp: truncated .*after 4 records: .*; continuing with the rest$' \
	"$work/crash.err" || [[ $(wc -l < "$work/crash.err") -ne 1 ]] ||
	[[ $(wc -l < "$work/crash.out") -ne 28 ]]; then
	fail "crashed segment: exit $rc (want 3), $(wc -l < "$work/crash.out") records (want 28)"
	sed 's/^/    /' "$work/crash.err"
else
	passed=$((passed + 1))
fi
# A crashed name map (box 1's, alone): the names flushed before the crash are joined, the one
# after is not, and the segment is named once whether a names pass read it (csv) or the merge
# pass did (text).
mkdir -p "$work/crash-names" "$work/opens1"
"$mkseg" "$work/crash-names" crash-names || { echo "mkseg crash-names failed"; exit 1; }
cp "$work"/box1/opens-*.lz4 "$work/opens1/"
for fmt in csv text; do
	out="$work/cn-$fmt.out" err="$work/cn-$fmt.err"
	"$th" export -q -f $fmt "$work/opens1" "$work/crash-names" > "$out" 2> "$err"
	rc=$?
	ok=1
	[[ $rc -eq 3 && $(wc -l < "$err") -eq 1 && $(grep -vc '^open_time,' "$out") -eq 16 ]] || ok=0
	grep -q 'names-1-.*\.lz4\.tmp: truncated .*after 3 records: .*; continuing with the rest$' \
		"$err" || ok=0
	if [[ $fmt == csv ]]; then
		grep -q ',/srv/projects/alice/alice-thesis-draft.tex,-rw-r--r--$' "$out" || ok=0
	fi
	grep -q budget "$out" && ok=0
	if [[ $ok -eq 1 ]]; then
		passed=$((passed + 1))
	else
		fail "crashed name map, $fmt: exit $rc (want 3), records or paths wrong"
		sed 's/^/    /' "$err"
	fi
done
# The same crashed name map listed: its three names, the segment named as damaged, exit 3.
"$th" export -q --names "$work/opens1" "$work/crash-names" > "$work/cn-names.out" \
	2> "$work/cn-names.err"
rc=$?
[[ $rc -eq 3 && $(wc -l < "$work/cn-names.out") -eq 3 && $(wc -l < "$work/cn-names.err") -eq 1 ]] &&
	grep -q 'names-1-.*\.lz4\.tmp: truncated .*after 3 records: .*; continuing with the rest$' \
		"$work/cn-names.err" &&
	grep -q ' | /srv/projects/alice/alice-thesis-draft.tex$' "$work/cn-names.out"
judge $? "crashed name map, --names: exit $rc (want 3), $(wc -l < "$work/cn-names.out") names (want 3):" \
	"$work/cn-names.err"
# More names than --names-mb holds: those it holds are listed, the others said to be missing
# (even with -q), exit 3 as for any output with records missing.
mkdir -p "$work/many-names"
"$mkseg" "$work/many-names" many-names || { echo "mkseg many-names failed"; exit 1; }
"$th" export -q --names --names-mb 1 "$work/many-names" > "$work/mn.out" 2> "$work/mn.err"
rc=$?
listed=$(wc -l < "$work/mn.out")
[[ $rc -eq 3 && $listed -gt 0 && $listed -lt 5000 ]] &&
	grep -q "^tracehound export: $((5000 - listed)) of 5000 names not kept, --names-mb 1 reached: they are not listed" \
		"$work/mn.err"
judge $? "export --names past --names-mb: exit $rc (want 3), $listed names listed" "$work/mn.err"
"$th" export -q --names "$work/many-names" > "$work/mn.out" 2> "$work/mn.err"
rc=$?
[[ $rc -eq 0 && $(wc -l < "$work/mn.out") -eq 5000 && ! -s $work/mn.err ]]
judge $? "export --names within --names-mb: exit $rc (want 0)" "$work/mn.err"
# Segments without names: said, exit 1, nothing written.
"$th" export --names "$work/opens1" > "$work/nonames.out" 2> "$work/nonames.err"
rc=$?
[[ $rc -eq 1 && ! -s "$work/nonames.out" ]] &&
	grep -q 'no name records in the 3 segments read' "$work/nonames.err"
judge $? "export --names without name segments: exit $rc (want 1)" "$work/nonames.err"
# Damage in the middle of a closed segment: a flipped byte in the fifth of its eight blocks
# (one record each, the header in the first): the first four records are recovered.
mkdir -p "$work/blocks"
"$mkseg" "$work/blocks" blocks || { echo "mkseg blocks failed"; exit 1; }
cp "$work/crash/"*.tmp "$work/"
seg=$(ls "$work/box1/"opens-1-00001-*.lz4)
python3 -c 'import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off = 7  # magic, FLG, BD, HC: no content size, no dictionary
for _ in range(4):  # skip four blocks: size (high bit: stored), data, checksum
	off += 4 + (struct.unpack_from("<I", b, off)[0] & 0x7fffffff) + 4
b[off + 6] ^= 0x55
open(sys.argv[2], "wb").write(b)' "$work"/blocks/*.lz4 "$work/corrupt.lz4"
"$th" export -q "$work/corrupt.lz4" "$work/box2" > "$work/corrupt.out" 2> "$work/corrupt.err"
rc=$?
want='corrupt.lz4: corrupt (.*): 4 records recovered, the rest of the segment is lost; continuing'
if [[ $rc -ne 3 ]] || ! grep -q "$want with the rest\$" "$work/corrupt.err" ||
	[[ $(wc -l < "$work/corrupt.out") -ne 12 ]]
then
	fail "corrupt segment: exit $rc (want 3)"
	sed 's/^/    /' "$work/corrupt.err"
else
	passed=$((passed + 1))
fi
# Each damaged segment is named once, and its count said once.
if grep -h 'recovered' "$work/crash.err" "$work/corrupt.err" "$work"/cn-*.err |
	grep -q 'recovered.*recovered'; then
	fail "a damaged segment's records recovered said twice"
fi
# A segment damaged in its header (a flipped byte in its first block) is named and counted,
# --rpcs or not, in any format: nothing recovered, the rest exported, exit 3. Alone, nothing is
# readable: exit 1.
cp "$seg" "$work/badheader.lz4"
printf '\x55' | dd of="$work/badheader.lz4" bs=1 seek=20 conv=notrunc status=none
for args in "" "--rpcs" "--rpcs -f csv" "--names"; do
	# shellcheck disable=SC2086
	"$th" export $args "$work/badheader.lz4" "${in[@]}" > /dev/null 2> "$work/badheader.err"
	rc=$?
	if [[ $rc -ne 3 ]] ||
		! grep -q 'badheader.lz4: header unreadable (.*): nothing recovered; continuing' \
			"$work/badheader.err" || ! grep -q ' (1 damaged),' "$work/badheader.err"; then
		fail "segment with a damaged header, export $args: exit $rc (want 3), or not named"
		sed 's/^/    /' "$work/badheader.err"
	else
		passed=$((passed + 1))
	fi
done
"$th" export "$work/badheader.lz4" > /dev/null 2> "$work/badheader.err"
rc=$?
if [[ $rc -ne 1 ]] || ! grep -q 'no trace segment could be read' "$work/badheader.err"; then
	fail "a lone segment with a damaged header: exit $rc (want 1)"
	sed 's/^/    /' "$work/badheader.err"
else
	passed=$((passed + 1))
fi
# Files that are not trace segments (a pcap, zeros named .lz4, an LZ4 file of something else)
# are named as such, not as damaged segments: alone, exit 1 (nothing readable); among
# segments, skipped and counted apart, the rest exported, exit 3.
"$th" gen -o "$work/a.pcap" -n 50 > /dev/null 2>&1 || fail "tracehound gen"
head -c 100 /dev/zero > "$work/zeros.lz4"
foreign=("$work/a.pcap" "$work/zeros.lz4")
if command -v lz4 > /dev/null; then
	lz4 -q -c "$work/a.pcap" > "$work/pcap.lz4"
	foreign+=("$work/pcap.lz4")
fi
for f in "${foreign[@]}"; do
	for args in "" "--rpcs" "--rpcs -f csv"; do
		# shellcheck disable=SC2086
		"$th" export $args "$f" > "$work/foreign.out" 2> "$work/foreign.err"
		rc=$?
		if [[ $rc -ne 1 ]] ||
			! grep -q "^tracehound export: $f: not a tracehound trace segment (.*); skipped$" \
				"$work/foreign.err" ||
			! grep -q 'no trace segment could be read' "$work/foreign.err" ||
			grep -q 'damaged\|recovered' "$work/foreign.err" || [[ -s "$work/foreign.out" ]]
		then
			fail "export $args $(basename "$f"): exit $rc (want 1), or not said to be no segment"
			sed 's/^/    /' "$work/foreign.err"
		else
			passed=$((passed + 1))
		fi
		# shellcheck disable=SC2086
		"$th" export $args "$f" "${in[@]}" > "$work/foreign.out" 2> "$work/foreign.err"
		rc=$?
		if [[ $rc -ne 3 ]] || ! grep -q 'not a tracehound trace segment' "$work/foreign.err" ||
			! grep -q ' (0 damaged), 1 file not a trace segment,' "$work/foreign.err" ||
			[[ $(grep -vc '^call_time,' "$work/foreign.out") -ne $([[ -n $args ]] && echo 12 || echo 24) ]]
		then
			fail "export $args $(basename "$f") SEGMENTS: exit $rc (want 3), or wrong summary"
			sed 's/^/    /' "$work/foreign.err"
		else
			passed=$((passed + 1))
		fi
	done
done
# The summary counts the segments export reads: not the RPC streams without --rpcs (box 1's
# opens in two segments and one, box 2's, box 1's names), only those with --rpcs, and the name
# map too where the join needs it.
for args in ":5" "--rpcs:2" "--rpcs -f csv:3" "--srt:2" "--names:1"; do
	# shellcheck disable=SC2086
	"$th" export ${args%:*} "${in[@]}" 2> "$work/count.err" > /dev/null
	n=${args#*:}
	word=segments
	[ "$n" = 1 ] && word=segment
	if grep -q "^tracehound export: $n $word (0 damaged)," "$work/count.err"; then
		passed=$((passed + 1))
	else
		fail "export ${args%:*}: the summary does not count ${args#*:} segments:"
		sed 's/^/    /' "$work/count.err"
	fi
done
# A segment whose trailer was read whole but counts more records than it holds: how many were
# lost is said (the trailer edited, the frame recompressed with the stock lz4).
if command -v lz4 > /dev/null; then
	lz4 -q -d -c "$seg" | python3 -c 'import struct, sys
b = bytearray(sys.stdin.buffer.read())
t = len(b) - 64
assert b[t:t + 8] == b"THSEGEND"
records, opens = struct.unpack_from("<QQ", b, t + 24)
struct.pack_into("<QQ", b, t + 24, records + 3, opens + 3)
sys.stdout.buffer.write(b)' | lz4 -q -BX > "$work/lost.lz4"
	"$th" export -q "$work/lost.lz4" "$work/box2" > "$work/lost.out" 2> "$work/lost.err"
	rc=$?
	want='lost.lz4: .*: 8 records recovered.*; its trailer counts 11 records: 3 lost; continuing'
	if [[ $rc -ne 3 ]] || ! grep -q "$want with the rest\$" "$work/lost.err"; then
		fail "segment with records missing before its trailer: exit $rc (want 3)"
		sed 's/^/    /' "$work/lost.err"
	else
		passed=$((passed + 1))
	fi
fi

# Anonymisation: no original address, uid, gid, handle or name anywhere, in any format.
originals=(10.20.30.40 fd00:1234::5 192.168.77.11 192.168.77.12 2001:db8:77::13 40001 40002
	40003 50001 srv projects alice alice-thesis-draft.tex "alice-thesis, final.tex"
	budget-2024.xls "salaries \"Q3\".ods" salaries a1a4a7aaadb0b3b6 b1b4b7babdc0c3c6
	c1c4c7cacdd0d3d6 d1d4d7dadde0e3e6 f1f4f7fafd000306 0104070a0d101316)
for fmt in text csv json; do
	for pp in "" --prefix-preserving; do
		out="$work/anon-$fmt$pp"
		"$th" export -q -f $fmt --anonymise "$work/key1" $pp "${in[@]}" > "$out" || fail "anon $fmt"
		for o in "${originals[@]}"; do
			if grep -qwF -- "$o" "$out"; then
				fail "anonymised $fmt $pp output contains '$o': $(grep -wF -- "$o" "$out" | head -1)"
			fi
		done
		lines=$(wc -l < "$out")
		[[ $fmt == csv ]] && lines=$((lines - 1))
		[[ $lines -eq 24 ]] || fail "anonymised $fmt $pp: $lines records, not 24"
		# RPC records: nothing original either (their text has no handle, only its CRC).
		"$th" export -q --rpcs -f $fmt --anonymise "$work/key1" $pp "${in[@]}" > "$out.rpcs" ||
			fail "anon --rpcs $fmt"
		for o in "${originals[@]}" 191abd6d 883f1ff8 7a838ca6 1a9bb294; do
			if grep -qwF -- "$o" "$out.rpcs"; then
				fail "anonymised --rpcs $fmt $pp output contains '$o'"
			fi
		done
		[[ $(grep -c 0x0000100 "$out.rpcs") -eq 12 ]] ||
			fail "anonymised --rpcs $fmt $pp: not 12 records"
		# The name map: nothing original either.
		"$th" export -q --names -f $fmt --anonymise "$work/key1" $pp "${in[@]}" \
			> "$out.names" || fail "anon --names $fmt"
		for o in "${originals[@]}"; do
			if grep -qwF -- "$o" "$out.names"; then
				fail "anonymised --names $fmt $pp output contains '$o'"
			fi
		done
		"$th" export -q -f $fmt --anonymise "$work/key1" $pp "${in[@]}" > "$out.again"
		cmp -s "$out" "$out.again" || fail "anonymised $fmt $pp differs between two runs"
		"$th" export -q -f $fmt --anonymise "$work/key2" $pp "${in[@]}" > "$out.key2"
		# Another key: every field that is a pseudonym differs (time fields do not).
		if [[ $fmt == text ]]; then
			paste -d'\n' <(cut -d'|' -f4,5 "$out") <(cut -d'|' -f4,5 "$out.key2") |
				paste - - | awk -F'\t' '$1 == $2 { bad = 1 } END { exit bad }' ||
				fail "anonymised text: a pseudonym is the same under another key"
		fi
		passed=$((passed + 1))
	done
done
# An anonymised path in --names is the same path in an open's row: every open's (server, handle,
# path) is a listed name's, pseudonyms and all (the text has no path column for opens).
for pp in "" --prefix-preserving; do
	opens=$(python3 -c 'import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(len(rows), len([r for r in rows if r["path"]]))
names = {(n["server"], n["handle"], n["path"]) for n in map(json.loads, open(sys.argv[2]))}
paths = {r["path"] for r in csv.DictReader(open(sys.argv[3]))}
sys.exit(any(r["path"] and ((r["server"], r["handle"], r["path"]) not in names or
	r["path"] not in paths) for r in rows))' "$work/anon-csv$pp" "$work/anon-json$pp.names" \
		"$work/anon-csv$pp.names")
	rc=$?
	# 24 opens, 21 with a path (the other 3: a handle without a name record).
	[[ $rc -eq 0 && $opens == "24 21" ]]
	judge $? "anonymised $pp: opens' paths (${opens:-none}, want 24 21) not listed by --names" /dev/null
done
# The summary counts what was computed: the input's 5 addresses, 4 uids and gids, 6 handles.
"$th" export --anonymise "$work/key1" "${in[@]}" 2> "$work/anon.err" > /dev/null
if grep -q 'pseudonyms computed: 5 addresses, 4 uids and gids, 6 handles; 0 replaced' "$work/anon.err"; then
	passed=$((passed + 1))
else
	fail "anonymised export's summary: $(tail -1 "$work/anon.err")"
fi
# Pseudonyms are a function of the key only: this file pins them across versions and boxes.
if [[ ${UPDATE:-0} == 1 ]]; then
	cp "$work/anon-text" "$golden/anon-text.golden"
	cp "$work/anon-json--prefix-preserving" "$golden/anon-json-pp.golden"
fi
diff -u "$golden/anon-text.golden" "$work/anon-text" || fail "anon-text.golden differs"
diff -u "$golden/anon-json-pp.golden" "$work/anon-json--prefix-preserving" ||
	fail "anon-json-pp.golden differs"
# Prefix-preserving: the two clients of 192.168.77.0/24 keep a common /24 and stay apart.
c1=$(cut -d'|' -f5 "$work/anon-text--prefix-preserving" | sed 's/ //g; s/\.[0-9]*$//' |
	grep -v : | sort -u)
if [[ $(echo "$c1" | wc -l) -ne 2 ]] || [[ $(echo "$c1" | cut -d. -f1-3 | sort -u | wc -l) -ne 1 ]]
then
	fail "prefix-preserving: clients $c1 do not share one /24"
fi

# One stream (box, kind, lcore) written by two captures: two boxes left at one trace.box
# (their opens interleave in time), or a later capture of an older trace into the same
# directory (its opens come first). Read one after the other, they came out late; they are
# merged as separate streams, in time order, and said to be so, naming the box and segments.
for mode in samebox:7:'segments of two captures whose records overlap in time (.*opens-7-.*\.lz4 and .*opens-7-.*\.lz4): two boxes with one trace.box = 7' \
	backwards:8:"a later capture's segments hold records earlier than an earlier capture's (.*opens-8-.*\.lz4, then .*opens-8-.*\.lz4): two capture runs into one directory"
do
	name=${mode%%:*} rest=${mode#*:}
	box=${rest%%:*} want=${rest#*:}
	mkdir -p "$work/$name"
	"$mkseg" "$work/$name" "$name" || { echo "mkseg $name failed"; exit 1; }
	"$th" export "$work/$name" > "$work/$name.out" 2> "$work/$name.err"
	rc=$?
	if [[ $rc -ne 0 || $(wc -l < "$work/$name.out") -ne 200 ]] ||
		! sort -c -s -t'|' -k1,1n "$work/$name.out" 2> /dev/null ||
		! grep -q "^tracehound export: box $box, opens stream 0: $want" "$work/$name.err" ||
		! grep -q ' 200 written, .* 0 late$' "$work/$name.err"; then
		fail "$name: exit $rc (want 0), not 200 opens in time order, or not said:"
		sed 's/^/    /' "$work/$name.err"
	else
		passed=$((passed + 1))
	fi
done
# Late records: the summary says the window that would have held them (a stream's opens
# came up to 100.5 s out of order), and that window holds them.
mkdir -p "$work/disorder"
"$mkseg" "$work/disorder" disorder || { echo "mkseg disorder failed"; exit 1; }
"$th" export --window 10 "$work/disorder" 2> "$work/disorder.err" > /dev/null
"$th" export --window 101 "$work/disorder" 2> "$work/disorder101.err" > /dev/null
if grep -q ' 1 late (a stream.s records came up to 100.5 s out of order: --window 101 would have held them)$' \
	"$work/disorder.err" && grep -q ' 0 late$' "$work/disorder101.err"; then
	passed=$((passed + 1))
else
	fail "late records: the summary does not say the window that holds them:"
	sed 's/^/    /' "$work/disorder.err" "$work/disorder101.err"
fi
# A copy of a trace directory read with it: each copied segment (same box, kind, lcore,
# creation time and number) is named once and skipped, not exported twice; of a closed
# segment and a cut .tmp copy of it, the closed one is read (no damage, exit 0).
cp -r "$work/box1" "$work/box1copy"
"$th" export "${in[@]}" "$work/box1copy" > "$work/copy.out" 2> "$work/copy.err"
rc=$?
[[ $rc -eq 0 && $(wc -l < "$work/copy.out") -eq 24 ]] &&
	[[ $(grep -c "^tracehound export: $work/box1copy/.*\.lz4 is a copy of $work/box1/.*\.lz4 (box 1, .*); skipped$" "$work/copy.err") -eq 5 ]] &&
	grep -q '^tracehound export: 5 segments (0 damaged), 5 copies skipped, 24 opens read, .* 0 late$' \
		"$work/copy.err"
judge $? "a copy of a directory: exit $rc (want 0), $(wc -l < "$work/copy.out") records (want 24):" \
	"$work/copy.err"
# Segments missing from the middle of a stream (its numbers skip them) are named, exit 3; its
# first ones gone (a retention policy) or one there but unreadable (named as such) are not.
mkdir -p "$work/rotated"
"$mkseg" "$work/rotated" rotated || { echo "mkseg rotated failed"; exit 1; }
mapfile -t rot < <(ls "$work"/rotated/*.lz4)
rm "${rot[0]}"
"$th" export "$work/rotated" > "$work/rot-head.out" 2> "$work/rot-head.err"
rc=$?
[[ $rc -eq 0 && $(wc -l < "$work/rot-head.out") -eq 5 ]] && ! grep -q missing "$work/rot-head.err"
judge $? "a stream's first segment gone: exit $rc (want 0)" "$work/rot-head.err"
rm "${rot[2]}" "${rot[3]}"
: > "${rot[4]}"
"$th" export "$work/rotated" > "$work/rot.out" 2> "$work/rot.err"
rc=$?
[[ $rc -eq 3 && $(wc -l < "$work/rot.out") -eq 2 && $(grep -c missing "$work/rot.err") -eq 2 ]] &&
	grep -qF "tracehound export: box 10, opens stream 0: 2 of segments 2 to 4 (the others unreadable) are missing, between ${rot[1]} and ${rot[5]}: deleted, or not copied? Their records are not exported" \
		"$work/rot.err" &&
	grep -q '^tracehound export: 3 segments (1 damaged), 2 missing, ' "$work/rot.err"
judge $? "segments missing from a stream: exit $rc (want 3)" "$work/rot.err"
# That empty file is named as a writer names a closed segment: one lost (a copy cut short),
# damage, not some other program's file.
grep -q "^tracehound export: ${rot[4]}: empty, though named as a closed segment (.*): nothing recovered; continuing with the rest$" \
	"$work/rot.err"
judge $? "an empty file named as a segment: not said to be lost" "$work/rot.err"
# Records the capture lost (here one that did not encode; a full disk in life) are in no
# segment: the trailers count them, and export says so, exit 3, the rest exported.
mkdir -p "$work/lossy"
"$mkseg" "$work/lossy" lossy || { echo "mkseg lossy failed"; exit 1; }
"$th" export "$work/lossy" > "$work/lossy.out" 2> "$work/lossy.err"
rc=$?
[[ $rc -eq 3 && $(wc -l < "$work/lossy.out") -eq 2 ]] &&
	grep -q "^tracehound export: box 11, opens stream 0: its capture lost 1 record, in no segment (.*); counted by segment trailers ($work/lossy/opens-11-.*\.lz4)$" \
		"$work/lossy.err" &&
	grep -q '^tracehound export: 2 segments (0 damaged), 1 record lost by the capture, ' \
		"$work/lossy.err"
judge $? "records the capture lost: exit $rc (want 3)" "$work/lossy.err"
# A segment of records older (or newer) than this tracehound reads says which versions it has
# and which way it is, among good ones: exit 3, the rest exported.
mkdir -p "$work/versions"
for tv in 2 99; do
	lz4 -dcq "$(ls "$work"/box1/opens-1-*.lz4 | head -1)" | python3 -c 'import sys
b = bytearray(sys.stdin.buffer.read())
b[12:14] = int(sys.argv[1]).to_bytes(2, "little")
sys.stdout.buffer.write(b)' $tv | lz4 -zcq > "$work/versions/opens-5-00000-$tv.lz4"
done
"$th" export "$work/versions" "$work/box2" > "$work/versions.out" 2> "$work/versions.err"
rc=$?
[[ $rc -eq 3 && $(wc -l < "$work/versions.out") -gt 0 ]] &&
	grep -q 'opens-5-00000-2.lz4: segment format 1, records version 2: older than this tracehound reads: export it with an earlier one (this tracehound reads format 1, records 3 to [0-9]*): nothing read; continuing with the rest$' \
		"$work/versions.err" &&
	grep -q 'opens-5-00000-99.lz4: segment format 1, records version 99: written by a later tracehound: export it with that one (.*): nothing read; continuing with the rest$' \
		"$work/versions.err"
judge $? "segments of other versions: exit $rc (want 3)" "$work/versions.err"
mkdir -p "$work/tmpcopy"
blk=$(ls "$work"/blocks/*.lz4)
python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read()
off = 7
for _ in range(3):  # the header and two opens: three blocks
	off += 4 + (struct.unpack_from("<I", b, off)[0] & 0x7fffffff) + 4
open(sys.argv[2], "wb").write(b[:off])' "$blk" "$work/tmpcopy/$(basename "$blk").tmp"
"$th" export "$work/tmpcopy" "$work/blocks" > "$work/tmpcopy.out" 2> "$work/tmpcopy.err"
rc=$?
[[ $rc -eq 0 && $(wc -l < "$work/tmpcopy.out") -eq 8 ]] &&
	grep -q "^tracehound export: $work/tmpcopy/.*\.lz4\.tmp is a copy of $blk (box 4, .*); skipped$" \
		"$work/tmpcopy.err"
judge $? "a cut .tmp copy of a segment: exit $rc (want 0), $(wc -l < "$work/tmpcopy.out") records (want 8):" \
	"$work/tmpcopy.err"

# Usage errors.
expect2() {
	if "$th" export "$@" > "$work/u.out" 2>&1; then rc=0; else rc=$?; fi
	if [[ $rc -ne 2 ]]; then
		fail "export $*: exit $rc, want 2"
	else
		passed=$((passed + 1))
	fi
}
expect2 -f xml "${in[@]}"
expect2 --anonymise "$work/key1" --hosts "$work/hosts" "${in[@]}"
expect2 --prefix-preserving "${in[@]}"
expect2 --direction sideways "${in[@]}"
expect2 --server filer1 "${in[@]}"
expect2 --from tomorrow "${in[@]}"
expect2 --rpcs --direction read "${in[@]}"
# --names: a binding has no client, user or direction, and is a listing of its own.
expect2 --names --client 192.168.77.11 "${in[@]}"
expect2 --names --uid 40001 "${in[@]}"
expect2 --names --direction write "${in[@]}"
expect2 --names --rpcs "${in[@]}"
expect2 --names --srt "${in[@]}"
expect2 --window '' "${in[@]}"
# The output may not be a segment being read (it would be emptied before it is read).
one=$(find "$work/box1" -name '*.lz4' | head -1)
cp "$one" "$work/keep.lz4"
expect2 -o "$one" "${in[@]}"
cmp -s "$one" "$work/keep.lz4" || fail "export -o SEGMENT changed the segment"
# Nor named as a segment in a directory it reads (at any depth, spelt through a link): the next
# export of the directory would find a file that is not a segment (exit 3).
"$th" export -o "$work/box1/x.lz4" "${in[@]}" > /dev/null 2> "$work/inside.err"
rc=$?
[[ $rc -eq 2 && ! -e $work/box1/x.lz4 ]] &&
	grep -q "^tracehound export: -o $work/box1/x.lz4 is named as a segment (\*\.lz4) in a directory given to read" \
		"$work/inside.err"
judge $? "export -o DIR/x.lz4 DIR: exit $rc (want 2):" "$work/inside.err"
mkdir "$work/box1/sub"
ln -s box1/sub "$work/sublink"
expect2 -o "$work/box1/sub/x.lz4.tmp" "${in[@]}"
expect2 -o "$work/sublink/x.lz4" "${in[@]}"
[[ -z $(ls -A "$work/box1/sub") ]] || fail "export -o wrote into a directory it reads"
# Named otherwise, or outside what is read, it is an output like any other.
"$th" export -q -o "$work/box1/sub/x.txt" "${in[@]}" || fail "export -o DIR/x.txt DIR failed"
"$th" export -q -o "$work/x.lz4" "${in[@]}" || fail "export -o x.lz4 beside DIR failed"
rm -r "$work/box1/sub" "$work/sublink" "$work/x.lz4"
# A segment given twice, or reached twice through a link, is read once.
ln -s . "$work/box1/again"
once=$("$th" export -q "${in[@]}" | wc -l)
twice=$("$th" export -q "${in[@]}" "$work/box1" "$one" | wc -l)
[[ $once -eq $twice && $once -gt 0 ]] || fail "segments read twice: $once lines, then $twice"
rm "$work/box1/again"
# A directory more than 16 levels down, or a path longer than 4095 bytes, is not searched: said
# and counted, exit 3, the rest exported (a link to a directory searched is no deeper one).
deep="$work/deep"
for i in $(seq 17); do deep+="/d$i"; done
long="$work/long/$(printf 'l%.0s' $(seq 250))"
for i in $(seq 15); do long+="/$(printf 'l%.0s' $(seq 250))"; done
mkdir -p "$deep" "$long"
cp "$one" "$deep/"
(cd "$long" && cp "$one" "$(printf 'l%.0s' $(seq 200)).lz4")
ln -s .. "$work/deep/d1/up"
cp -r "$work/box2" "$work/deep/"
cp -r "$work/box2" "$work/long/"
for d in deep long; do
	"$th" export "$work/$d" > "$work/$d.out" 2> "$work/$d.err"
	rc=$?
	want="1 directory more than 16 levels down not searched (the first: $work/deep/d1/.*/d17)"
	[[ $d == long ]] && want="1 name whose path is longer than 4095 bytes not looked at (the first in \.\.\.l*)"
	[[ $rc -eq 3 && $(wc -l < "$work/$d.out") -eq 8 ]] &&
		grep -q "^tracehound export: $work/$d: $want: segments there are not exported$" \
			"$work/$d.err" &&
		grep -q '^tracehound export: 1 segment (0 damaged), 1 not searched, 8 opens read' \
			"$work/$d.err"
	judge $? "a directory too $d to search: exit $rc (want 3), not said" "$work/$d.err"
done
rm -rf "$work/deep" "$work/long"
# An output that fails is said, exit 1, whatever else went wrong: a write (a full disk), or only
# the close, as on NFS, whose delayed writes fail there (a shim fails close() on *.closefail),
# to -o or standard output.
for args in "-o /dev/full" "--srt -o /dev/full" "--names -o /dev/full" "-o $work/out.closefail" \
	"--srt -f csv -o $work/out.closefail" ">/dev/full" ">$work/out.closefail" \
	"--srt >$work/out.closefail"; do
	what=${args##* }
	what=${what#>}
	[[ $args == *'>'* ]] && what="standard output"
	for damage in "" "$work/crash"; do
		# shellcheck disable=SC2086
		eval CLOSE_EIO_SUFFIX=.closefail LD_PRELOAD="$close_eio" \
			ASAN_OPTIONS=verify_asan_link_order=0 \
			'"$th" export -q ${args%%>*} "${in[@]}" $damage' "${args/*>/>}" 2> "$work/outfail.err"
		rc=$?
		[[ $rc -eq 1 ]] && grep -q "^tracehound export: $what: \(No space left on device\|Input/output error\)$" \
			"$work/outfail.err"
		judge $? "export $args $damage: exit $rc (want 1), the output's failure not said" \
			"$work/outfail.err"
	done
done
# A pipe (process substitution) is refused by name: a segment is read more than once, and a
# pipe's second read found it empty or cut in its header.
"$th" export "${in[@]}" <(cat "$one") > "$work/pipe.out" 2> "$work/pipe.err"
rc=$?
[[ $rc -eq 1 && ! -s $work/pipe.out && $(wc -l < "$work/pipe.err") -eq 1 ]] &&
	grep -q '^tracehound export: /dev/fd/[0-9]*: not a regular file (a pipe, .*): export reads a segment more than once; save it to a file first$' \
		"$work/pipe.err"
judge $? "export <(cat SEGMENT): exit $rc (want 1), not said to be a pipe" "$work/pipe.err"
# A link to a segment that is not there (a disk not mounted) is named, exit 3, not passed over.
ln -s "$work/gone/opens-1-00000-1.lz4" "$work/box1/gone.lz4"
"$th" export -q "${in[@]}" > "$work/gone.out" 2> "$work/gone.err"
rc=$?
[[ $rc -eq 3 && $(wc -l < "$work/gone.out") -eq $once ]] &&
	grep -q "box1/gone.lz4: a link to $work/gone/opens-1-00000-1.lz4, which cannot be read: No such file or directory" \
		"$work/gone.err"
judge $? "a dangling link to a segment: exit $rc (want 3)" "$work/gone.err"
rm "$work/box1/gone.lz4"
# -o may not be the key (or hosts file) the export reads: the pseudonyms would be lost.
cp "$work/key1" "$work/key1.keep"
expect2 --anonymise "$work/key1" -o "$work/key1" "${in[@]}"
cmp -s "$work/key1" "$work/key1.keep" || fail "export -o KEY changed the key"
# --rpcs or --srt over segments without RPC records says so (exit 1), not an empty table.
if "$th" export --srt "$work/opens1" > /dev/null 2> "$work/norpc.err"; then
	fail "export --srt without RPC segments: exit 0"
else
	grep -q 'no RPC records in the' "$work/norpc.err" || fail "export --srt without RPC segments: $(cat "$work/norpc.err")"
fi
# Opens over segments of RPCs (or names) alone say so (exit 1), not an empty export of 0 segments.
mkdir -p "$work/rpcs-only" "$work/names-only"
cp "$work"/box1/rpcs-*.lz4 "$work"/box2/deeper/rpcs-*.lz4 "$work/rpcs-only/"
cp "$work"/box1/names-*.lz4 "$work/names-only/"
for d in rpcs-only names-only; do
	"$th" export "$work/$d" > "$work/$d.out" 2> "$work/$d.err"
	rc=$?
	hint=$([[ $d == rpcs-only ]] && echo 'RPC records (export --rpcs' || echo 'names only (export --names')
	[[ $rc -eq 1 && ! -s "$work/$d.out" ]] &&
		grep -qF "no open records in the $([[ $d == rpcs-only ]] && echo 2 segments ||
			echo 1 segment) read: $hint lists them)" "$work/$d.err"
	judge $? "export of $d segments: exit $rc (want 1)" "$work/$d.err"
done
# --to the epoch asks for nothing (0 is no bound inside).
[[ $("$th" export -q --to 0 "${in[@]}" | wc -l) -eq 0 ]] || fail "export --to 0 wrote records"
expect2 --srt --hosts "$work/hosts" "${in[@]}"
expect2 --to 2600-01-01 "${in[@]}"
expect2 --window-mb 0 "${in[@]}"
expect2 --window-mb 2G "${in[@]}"
expect2 --names-mb 0 "${in[@]}"
printf 'short' > "$work/shortkey"
expect2 --anonymise "$work/shortkey" "${in[@]}"
expect2

echo "export golden: $passed passed, $fails failed"
[[ $fails -eq 0 ]]
