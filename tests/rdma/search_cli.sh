#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tracehound search as a user meets it: a documented anomaly's trigger
# replays as that anomaly, bad workload files and profiles are refused with
# file:line (exit 2), impossible workloads never reach the backend, the same
# seed writes the same log, an interrupted search keeps what it found and
# tells special cases of a cause from distinct ones, and a small evaluation
# prints its table.
#   search_cli.sh TRACEHOUND SOURCE_ROOT
set -u
th=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
passed=0
prof=$root/config/rdma/F.ini

. "$(dirname "$0")/../cli/expect.sh"

expect 0 '--replay' -- "$th" search --help
expect 0 'search ' -- "$th" --help
expect 2 'give one --profile' -- "$th" search
expect 2 'unknown algorithm' -- "$th" search --profile "$prof" --algo simplex
expect 2 '--hours' -- "$th" search --profile "$prof" --hours -1
# A budget of 0 runs nothing: refused, for a search and an evaluation alike.
expect 2 "--hours wants a number in \\(0, 10000\\], not '0'" -- "$th" search --profile "$prof" --hours 0
expect 2 "--hours wants a number in \\(0, 10000\\], not '0.0'" -- "$th" search --eval --hours 0.0
# A budget below one experiment's cost (F: 15 s of setup and 4 samples at least) runs nothing:
# refused, saying what an experiment costs; so is one the search's first point did not fit.
expect 2 '--hours 0.001 \(3.6 testbed seconds\) runs no experiment on F: one costs 19.0 to 59.0 s .*--hours 0.0164 or more runs one' \
	-- "$th" search --profile "$prof" --hours 0.001
expect 2 '--hours 0.001 \(3.6 testbed seconds\) runs no experiment on H' -- "$th" search --eval \
	--profile "$root/config/rdma/H.ini" --seeds 1 --hours 0.001
expect 2 '--hours 0.0053 .* ran no experiment on F: the first point the search chose costs more' \
	-- "$th" search --profile "$prof" --hours 0.0053 --seed 1
expect 2 'temp-min 100 is above the starting --temp 1' -- "$th" search --profile "$prof" \
	--temp 1 --temp-min 100
# A start below the default floor lowers the floor, as before.
expect 0 'of 13 documented' -- "$th" search --profile "$prof" --hours 0.05 --temp 0.01

# Every documented anomaly's trigger replays as that anomaly.
expect 0 'F#1 ' -- "$th" search --profile "$prof" --known "$work/known"
for f in "$work"/known/F-*.ini; do
	id=$(basename "$f" .ini)
	expect 0 "matches documented anomaly ${id/-/#}:" -- \
		"$th" search --profile "$prof" --replay "$f"
done

# A documented trigger holds in every run; --repeat counts them. Near a threshold a
# point shows its symptom in some runs only, so the count is what a user checks.
expect 0 '^shown in 6 of 6 runs \(pause 6, ' -- "$th" search --profile "$prof" \
	--replay "$work/known/F-12.ini" --repeat 6
expect 2 'repeat goes with --replay' -- "$th" search --profile "$prof" --repeat 1
expect 2 '--confirm wants an integer' -- "$th" search --profile "$prof" --confirm 11

# A workload file with a bad value, a missing key, a typo key: file:line, exit 2.
sed 's/^mtu = .*/mtu = 1500/' "$work/known/F-1.ini" > "$work/bad_mtu.ini"
expect 2 'bad_mtu.ini:[0-9]+: .*mtu' -- "$th" search --profile "$prof" --replay "$work/bad_mtu.ini"
grep -v '^sge' "$work/known/F-1.ini" > "$work/no_sge.ini"
expect 2 'no_sge.ini.*sge' -- "$th" search --profile "$prof" --replay "$work/no_sge.ini"
{ cat "$work/known/F-1.ini"; echo "qp_cuont = 4"; } > "$work/typo.ini"
expect 2 'typo.ini:[0-9]+: .*qp_cuont' -- "$th" search --profile "$prof" --replay "$work/typo.ini"
# A typo in place of a key it needs is named at its line; so is a misspelt section.
sed 's/^sge /sgee /' "$work/known/F-1.ini" > "$work/sgee.ini"
expect 2 "sgee.ini:[0-9]+: unknown key 'workload.sgee' \\(\\[workload\\] needs 'sge'\\)" -- \
	"$th" search --profile "$prof" --replay "$work/sgee.ini"
# A key above the header is misplaced, not unknown; a UTF-8 byte-order mark is skipped.
{ echo "sge = 2"; cat "$work/known/F-1.ini"; } > "$work/top.ini"
expect 2 "top.ini:1: 'sge' is before any \\[section\\]" -- \
	"$th" search --profile "$prof" --replay "$work/top.ini"
{ printf '\xef\xbb\xbf'; cat "$work/known/F-1.ini"; } > "$work/bom.ini"
expect 0 'matches documented anomaly F#1:' -- "$th" search --profile "$prof" --replay "$work/bom.ini"
# A number is digits: a sign in front is refused, not read past.
sed 's/^qp_count = .*/qp_count = +5/' "$work/known/F-1.ini" > "$work/plus.ini"
expect 2 "plus.ini:[0-9]+: workload.qp_count = '\+5': expected a whole number" -- \
	"$th" search --profile "$prof" --replay "$work/plus.ini"
# A second [workload] block is not merged into the first: refused at its header.
{ cat "$work/known/F-1.ini"; printf '[workload]\nmsg = 1024\n'; } > "$work/twice.ini"
expect 2 'twice.ini:15: \[workload\] already begun on line 2$' -- \
	"$th" search --profile "$prof" --replay "$work/twice.ini"
# Any other section, even an empty one, is not the workload's: named at its header.
{ cat "$work/known/F-1.ini"; printf '[known.abc]\n'; } > "$work/other.ini"
expect 2 'other.ini:15: unknown section \[known.abc\]' -- \
	"$th" search --profile "$prof" --replay "$work/other.ini"
sed 's/^\[workload\]/[work]/' "$work/known/F-1.ini" > "$work/work.ini"
expect 2 'work.ini: no \[workload\] section \(line [0-9]+ is in \[work\]\)' -- \
	"$th" search --profile "$prof" --replay "$work/work.ini"
printf '[workload\nmem = local\n' > "$work/broken.ini"
expect 2 'broken.ini:1' -- "$th" search --profile "$prof" --replay "$work/broken.ini"
expect 2 'nonexistent.ini: cannot open: No such file or directory$' -- "$th" search \
	--profile "$prof" --replay "$work/nonexistent.ini"

# Impossible workloads are the space's to refuse: nothing runs. Past the profile's limits
# (F allows 20000 QPs), at the line of the feature at fault.
for n in 30000 999999999; do
	sed "s/^qp_count = .*/qp_count = $n/" "$work/known/F-1.ini" > "$work/many_qps.ini"
	expect 2 "many_qps.ini:[0-9]+: qp_count=$n: .*\\(impossible workload on F\\)" -- \
		"$th" search --profile "$prof" --replay "$work/many_qps.ini"
done
# A size whose pinned total overflows is past the profile's own limit, said as such.
sed "s/^mr_size = .*/mr_size = 18446744073709551615/" "$work/known/F-1.ini" > "$work/mr.ini"
expect 2 'mr.ini:[0-9]+: mr_size=18446744073709551615: .*\(max_mr_size\) \(impossible workload on F\)' \
	-- "$th" search --profile "$prof" --replay "$work/mr.ini"
sed -e 's/^qp_type = .*/qp_type = UD/' -e 's/^opcode = .*/opcode = READ/' \
	"$work/known/F-1.ini" > "$work/ud_read.ini"
expect 2 'ud_read.ini:[0-9]+: .*READ' -- \
	"$th" search --profile "$prof" --replay "$work/ud_read.ini"

# A malformed profile: file:line, exit 2.
{ cat "$prof"; printf '\n[link]\nbps = fast\n'; } > "$work/badprof.ini"
expect 2 'badprof.ini:[0-9]+' -- "$th" search --profile "$work/badprof.ini" --hours 0.1
sed 's/^gbps/gbpz/' "$prof" > "$work/gbpz.ini"
expect 2 "gbpz.ini:[0-9]+: unknown key 'link.gbpz'" -- "$th" search --profile "$work/gbpz.ini" \
	--hours 0.1
{ echo "gbps = 100"; cat "$prof"; } > "$work/topprof.ini"
expect 2 "topprof.ini:1: 'gbps' is before any \\[section\\]" -- \
	"$th" search --profile "$work/topprof.ini" --hours 0.1
# [known.N] is the paper's anomaly N (F#N): a word is no such number, refused at its header.
sed 's/^\[known\.2\]/[known.abc]/' "$prof" > "$work/known_abc.ini"
expect 2 'known_abc.ini:[0-9]+: \[known.abc\]: expected \[known.N\]' -- \
	"$th" search --profile "$work/known_abc.ini" --hours 0.1
sed 's/^setup_s = .*/setup_s = 99/' "$prof" > "$work/setup.ini"
expect 2 'setup.ini:[0-9]+: need setup_s <= base_s' -- "$th" search --profile "$work/setup.ini" \
	--hours 0.1

# One profile given twice (under two spellings) would be evaluated twice.
expect 2 'is given twice' -- "$th" search --eval --profile "$prof" \
	--profile "$root/config/../config/rdma/F.ini"
# An option that would do nothing where it is given is refused, not dropped.
expect 2 '--seeds goes with --eval, not with a search' -- "$th" search --profile "$prof" \
	--seeds 3
expect 2 '--out goes with a search, not with --replay' -- "$th" search --profile "$prof" \
	--replay "$work/known/F-1.ini" --out "$work/nothing"
expect 2 '--algo goes with a search, not with --eval' -- "$th" search --eval --algo bo
expect 2 '--known and --replay do not go together' -- "$th" search --profile "$prof" \
	--known "$work/k2" --replay "$work/known/F-1.ini"
expect 2 '--temp does nothing with --algo random' -- "$th" search --profile "$prof" \
	--algo random --temp 2
# Outputs are checked before any testbed time is spent.
touch "$work/a-file"
expect 1 '--out .*/a-file: Not a directory' -- "$th" search --profile "$prof" \
	--out "$work/a-file"
expect 1 'nodir/x.svg: No such file' -- "$th" search --eval --profile "$prof" \
	--chart "$work/nodir/x.svg"

# A short search: the anomaly list with replayable triggers; the same seed, the same log.
expect 0 'documented anomalies found' -- "$th" search --profile "$prof" --hours 1 --seed 3 \
	--log "$work/a.jsonl" --out "$work/out1"
expect 0 'documented' -- "$th" search --profile "$prof" --hours 1 --seed 3 \
	--log "$work/b.jsonl"
if ! cmp -s "$work/a.jsonl" "$work/b.jsonl" || [[ ! -s $work/a.jsonl ]]; then
	echo "FAIL: the same seed wrote different (or empty) logs"
	fails=$((fails + 1))
fi
expect 0 '"algo":"anneal","seed":3' -- head -1 "$work/a.jsonl"
# Every experiment logs its per-second samples, and "ctr" is their mean.
expect 0 'samples ok' -- python3 - "$work/a.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["rc"] < 0:
        continue
    assert len(r["samples"]) == 4, line
    for h, host in enumerate(r["ctr"]):
        for k, v in host.items():
            m = sum(s[h][k] for s in r["samples"]) / 4
            assert abs(m - v) <= 1e-5 * max(1.0, abs(m)), (k, m, v)
print("samples ok")
PY
if [[ -f $work/out1/anomaly-0.ini ]]; then
	expect 0 'reproduce: tracehound search --profile' -- cat "$work/out1/anomalies.txt"
	expect 0 'verdict: (pause|.*low_tput)' -- \
		"$th" search --profile "$prof" --replay "$work/out1/anomaly-0.ini"
else
	echo "FAIL: a 1-hour search on F found nothing"
	fails=$((fails + 1))
fi

# The monitor's settings go into the reproduce command: the trigger replays as found.
"$th" search --profile "$prof" --hours 2 --seed 2 --shortfall 0.05 --out "$work/sf" -q \
	> /dev/null
cmd=$(sed -n 's/^  reproduce: tracehound //p' "$work/sf/anomalies.txt" | head -1)
# Its paths are absolute, so it runs from any directory.
if [[ $cmd != *' --shortfall 0.05'* || $cmd != *"--replay /"* || $cmd != *"--profile /"* ]]; then
	echo "FAIL: reproduce command without the search's --shortfall: '$cmd'"
	fails=$((fails + 1))
else
	# shellcheck disable=SC2086
	expect 0 '^verdict: (pause|.*low_tput)' -- "$th" $cmd
fi
# A second search into the same DIR leaves only its own triggers there; -q keeps the counts.
expect 0 '^0 anomalies, 0 distinct' -- "$th" search --profile "$prof" --hours 0.01 --seed 2 \
	--out "$work/sf" -q
left=$(find "$work/sf" -name 'anomaly-*.ini' | wc -l)
if [[ $left -ne 0 ]]; then
	echo "FAIL: $left anomaly files of the earlier search left in its --out DIR"
	fails=$((fails + 1))
else
	passed=$((passed + 1))
fi

# A full search counts distinct causes: anomalies neither inside another's MFS nor
# widening one; anomalies.txt names the same special cases as the summary.
"$th" search --profile "$prof" --seed 1 --out "$work/full" > "$work/full.out" 2>&1
total=$(sed -nE 's/^([0-9]+) anomalies, [0-9]+ distinct.*/\1/p' "$work/full.out")
# Every anomaly the search recorded cost one confirming run (the default), every
# unconfirmed one too; a cause met while extracting another's MFS has its own check.
confirming=$(sed -nE 's/.* ([0-9]+) confirming runs, ([0-9]+) anomalous points not confirmed$/\1 \2/p' \
	"$work/full.out")
read -r cruns uncon <<< "${confirming:-0 0}"
sides=$(grep -c '(met extracting' "$work/full.out")
if [[ -z $confirming || -z $total ]] || ((cruns != uncon + total - sides)); then
	echo "FAIL: '$confirming' confirming runs / not confirmed, $total anomalies, $sides met"
	fails=$((fails + 1))
else
	passed=$((passed + 1))
fi
distinct=$(sed -nE 's/^[0-9]+ anomalies, ([0-9]+) distinct.*/\1/p' "$work/full.out")
inside=$(grep -cE '^ +[0-9]+ .*\(inside [0-9]+\)$' "$work/full.out")
widened=$(grep -cE '^ +[0-9]+ .* = [0-9]+ \(its MFS widened' "$work/full.out")
special=$(grep -c 'a special case of anomaly' "$work/full/anomalies.txt")
if [[ -z $total || $inside -eq 0 || $((total - inside - widened)) -ne ${distinct:--1} ||
	$special -ne $inside ]]; then
	echo "FAIL: $total anomalies, $distinct distinct, $inside inside another, $widened" \
		"widened, $special special cases in anomalies.txt"
	fails=$((fails + 1))
else
	passed=$((passed + 1))
fi

# A later search skips what an earlier one found: DIR/mfs.txt goes back in with --skip-mfs.
if [[ -s $work/out1/mfs.txt ]]; then
	n=$(grep -vc '^#' "$work/out1/mfs.txt")
	expect 0 "^$n MFS given" -- "$th" search --profile "$prof" --hours 0.5 --seed 4 \
		--skip-mfs "$work/out1/mfs.txt"
else
	echo "FAIL: --out wrote no mfs.txt"
	fails=$((fails + 1))
fi
{ echo '# two good lines, then a bad one'; echo 'pause: dir=loopback'; echo;
	echo 'low_tput: qp_type=UD wq_depth>=1024'; echo 'pause: qp_count>=lots'; } > "$work/bad-mfs.txt"
expect 2 'bad-mfs.txt:5: ' -- "$th" search --profile "$prof" --hours 0.1 --skip-mfs "$work/bad-mfs.txt"
# An MFS no workload of this profile meets (H has no GPU) skips nothing: a note, not an error.
printf 'pause: mem=gpu\npause: dir=loopback\n' > "$work/gpu-mfs.txt"
expect 0 'gpu-mfs.txt:1: note: no workload H allows meets it' -- "$th" search \
	--profile "$root/config/rdma/H.ini" --hours 0.1 --skip-mfs "$work/gpu-mfs.txt"
echo 'pause:' > "$work/empty-mfs.txt"
expect 2 'empty-mfs.txt:1: no conditions' -- "$th" search --profile "$prof" --hours 0.1 \
	--skip-mfs "$work/empty-mfs.txt"
expect 2 'skip-mfs goes with a search' -- "$th" search --eval --profile "$prof" --seeds 1 \
	--hours 0.1 --skip-mfs "$work/bad-mfs.txt"

# An output over an input or another output is refused before anything is written: the
# profile, a --skip-mfs file, a file --out writes, the chart and its series.
cp "$prof" "$work/own.ini"
cp "$work/out1/mfs.txt" "$work/keep-mfs.txt"
sums=$(md5sum "$work/own.ini" "$work/keep-mfs.txt")
expect 2 '--log .*/own.ini is the profile' -- "$th" search --profile "$work/own.ini" --hours 0.1 \
	--log "$work/own.ini"
expect 2 '--log .*/keep-mfs.txt is the --skip-mfs file' -- "$th" search --profile \
	"$work/own.ini" --hours 0.1 --skip-mfs "$work/keep-mfs.txt" --log "$work/./keep-mfs.txt"
expect 2 '--chart .*/own.ini is the profile' -- "$th" search --eval --profile "$work/own.ini" \
	--seeds 1 --hours 0.1 --chart "$work/own.ini"
expect 2 '--series .*/own.ini is the profile' -- "$th" search --eval --profile "$work/own.ini" \
	--seeds 1 --hours 0.1 --series "$work/own.ini"
[[ $(md5sum "$work/own.ini" "$work/keep-mfs.txt") == "$sums" ]] && passed=$((passed + 1)) ||
	{ echo "FAIL: a refused output was written over an input"; fails=$((fails + 1)); }
expect 2 '--chart and --series both write' -- "$th" search --eval --profile "$prof" --seeds 1 \
	--hours 0.1 --chart "$work/cs" --series "$work/./cs"
for f in mfs.txt anomalies.txt anomaly-0.ini anomaly-99.ini; do
	expect 2 "--log .*/out1/$f is a file --out .* writes" -- "$th" search --profile "$prof" \
		--hours 0.1 --out "$work/out1" --log "$work/out1/$f"
done
# Also while the --out DIR is not made yet, however the log's path is spelt: the search would
# make DIR and write its anomaly list over the log.
expect 2 '--log .*/new/\.\./new/anomalies.txt is a file --out .*/new writes' -- "$th" search \
	--profile "$prof" --hours 0.1 --out "$work/new" --log "$work/new/../new/anomalies.txt"
expect 2 '--log .*/mfs.txt is a file --out .*/new2/ writes' -- "$th" search --profile "$prof" \
	--hours 0.1 --out "$work/new2/" --log "$work/new2/x/.././mfs.txt"
[[ ! -e $work/new && ! -e $work/new2 ]] && passed=$((passed + 1)) ||
	{ echo "FAIL: a refused search made its --out DIR"; fails=$((fails + 1)); }
# Continuing over the same directory reads its mfs.txt first: allowed.
expect 0 'anomaly list' -- "$th" search --profile "$prof" --hours 0.1 --out "$work/cont" \
	--skip-mfs "$work/keep-mfs.txt"
cp "$work/keep-mfs.txt" "$work/cont/mfs.txt"
expect 0 'anomaly list' -- "$th" search --profile "$prof" --hours 0.1 --out "$work/cont" \
	--skip-mfs "$work/cont/mfs.txt"

# --refine: more testbed time after the search, counted and said; a search option only.
expect 0 'refining the MFS \(--refine\): [1-9][0-9]* of those MFS experiments' -- "$th" search \
	--profile "$prof" --hours 2 --refine 1
expect 2 'refine goes with a search' -- "$th" search --eval --profile "$prof" --seeds 1 \
	--hours 0.1 --refine 1
expect 2 'refine' -- "$th" search --profile "$prof" --refine -1

# SIGINT ends a long search with what it found: summary, anomaly list, a whole log.
"$th" search --profile "$prof" --hours 10000 --log "$work/int.jsonl" --out "$work/int" \
	> "$work/int.out" 2> "$work/int.err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
if [[ $rc -ne 0 ]] || ! grep -q 'interrupted; what was found' "$work/int.err" ||
	! grep -qE 'testbed hours \(interrupted\)' "$work/int.out" ||
	[[ ! -s $work/int/anomalies.txt ]] || [[ $(tail -c 1 "$work/int.jsonl" | od -An -c) != *'\n'* ]]; then
	echo "FAIL: an interrupted search (exit $rc) lost its results:"
	sed 's/^/    /' "$work/int.err" "$work/int.out" | head -8
	fails=$((fails + 1))
else
	passed=$((passed + 1))
fi

# A small evaluation prints the table and the chart.
expect 0 'anneal-nomfs +[0-9.]+ ± ' -- "$th" search --eval --profile "$prof" --seeds 2 \
	--hours 0.5 --chart "$work/c.svg"
expect 0 '<polyline' -- cat "$work/c.svg"
# It says what no search could beat: every documented anomaly against the baselines.
expect 0 'ceiling: all [0-9]+ documented would be [0-9.]+x random' -- "$th" search --eval \
	--profile "$prof" --seeds 2 --hours 0.5
# And what MFS did to the time, in the direction it went.
expect 0 '^MFS: [0-9]+ anomalies .* \([0-9.]+x (faster|slower); target: 2x faster\)' -- \
	"$th" search --eval --profile "$prof" --seeds 2 --hours 2

# Two profiles of one [profile] name would give rows no one can tell apart: refused first.
cp "$prof" "$work/F-copy.ini"
expect 2 "profiles .*/F.ini and .*/F-copy.ini are both named 'F'" -- "$th" search --eval \
	--profile "$prof" --profile "$work/F-copy.ini" --seeds 1 --hours 0.1
sed 's/^name = F$/name = F2/' "$prof" > "$work/F2.ini"
expect 0 'profile F2 ' -- "$th" search --eval --profile "$prof" --profile "$work/F2.ini" \
	--seeds 1 --hours 0.1

# A profile without [known.N] sections has nothing to score against: said, not targets of 0%.
awk '/^\[known\./ { skip = 1; next } /^\[/ { skip = 0 } !skip' "$prof" > "$work/noknown.ini"
expect 0 'no documented anomalies \(\[known.N\]\) in .*noknown.ini: nothing to score' -- \
	"$th" search --eval --profile "$work/noknown.ini" --seeds 1 --hours 0.5
if grep -qE '^(targets|ceiling):' "$work/out"; then
	echo "FAIL: targets printed for a profile without documented anomalies"
	fails=$((fails + 1))
else
	passed=$((passed + 1))
fi

# Baselines that found nothing (a budget of one experiment) give no ratio, not one of billions.
expect 0 'ceiling: all 5 documented would be - random, - bo' -- "$th" search --eval \
	--profile "$root/config/rdma/H.ini" --seeds 1 --hours 0.01
cp "$work/out" "$work/zero.out"
expect 0 '^\(-: random and bo found no documented anomaly' -- cat "$work/zero.out"

# MFS experiments spent on causes met before: some in ten hours on F (its GPU,
# socket and loopback pauses are met again), never more than all MFS experiments.
"$th" search --eval --profile "$prof" --seeds 3 --hours 10 > "$work/again.out"
if awk '$1 ~ /^(anneal|anneal-perf|random|random-shaped|bo)$/ && $3 == "±" {
		n++; if ($11 > $10) bad = 1; if ($1 == "anneal" && $11 <= 0) bad = 1 }
	END { exit !(n == 5 && !bad) }' "$work/again.out"; then
	passed=$((passed + 1))
else
	echo "FAIL: mfs_again column: $(grep -E '^(algorithm|anneal|random|bo)' "$work/again.out")"
	fails=$((fails + 1))
fi

echo "search_cli: $passed passed, $fails failed"
[[ $fails -eq 0 ]]
