#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tracehound probe as a user meets it: a file (O_DIRECT, or --buffered where the
# filesystem refuses it), a directory, a loop block device, the sample count and
# warm-up marks, JSON, and the refusals and errors.
#   probe.sh TRACEHOUND
set -u
th=$1
work=$(mktemp -d /var/tmp/th-probe-e2e.XXXXXX)
loopdev=
mnt=
cleanup() {
	[[ -n $mnt ]] && umount "$mnt" 2>/dev/null
	[[ -n $loopdev ]] && losetup -d "$loopdev" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fails=0
passed=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

. "$(dirname "$0")/../cli/expect.sh"

head -c $((16 << 20)) /dev/urandom > "$work/data"
fstype=$(df -T "$work" | awk 'NR == 2 { print $2 }')
mode=()
if ! "$th" probe -n 1 --no-samples "$work/data" > "$work/out" 2>&1; then
	if grep -q -- '--buffered' "$work/out"; then
		echo "note: $fstype refuses O_DIRECT; file tests use --buffered"
		passed=$((passed + 1))
		mode=(--buffered)
	else
		fail "probe of a plain file on $fstype failed:"; cat "$work/out"
	fi
fi

# N samples out, warm-up marked and first, summary and JSON agree.
"$th" probe "${mode[@]}" -n 300 -w 20 --offsets --timestamps -j "$work/p.json" "$work/data" \
	> "$work/samples" 2> "$work/summary"
rc=$?
[[ $rc -eq 0 ]] || fail "probe -n 300 -w 20: exit $rc"
measured=$(grep -cE '^[0-9]+\.[0-9]{3} [0-9]+ [0-9.]+( #.*)?$' "$work/samples")
warm=$(grep -cE '^# warmup [0-9]' "$work/samples")
[[ $measured -eq 300 && $warm -eq 20 ]] && passed=$((passed + 1)) ||
	fail "want 300 samples and 20 warm-up lines, got $measured and $warm"
first_measured=$(grep -nE '^[0-9]' "$work/samples" | head -1 | cut -d: -f1)
last_warm=$(grep -nE '^# warmup' "$work/samples" | tail -1 | cut -d: -f1)
[[ $last_warm -lt $first_measured ]] && passed=$((passed + 1)) ||
	fail "warm-up lines after measured samples"
# Offsets are 4 KiB aligned and inside the file.
awk -v size=$((16 << 20)) '/^[0-9]/ { if ($2 % 4096 || $2 + 4096 > size) bad++ }
	END { exit bad > 0 }' "$work/samples" && passed=$((passed + 1)) ||
	fail "offsets unaligned or outside the file"
for key in 'samples +300 measured, 20 warm-up discarded' 'service us +min .* p50 .* p99_9 .* stddev' \
	'IOPS +[0-9]+ by latency' 'flagged +[0-9]+ high' 'histogram \(service time'; do
	grep -qE -- "$key" "$work/summary" && passed=$((passed + 1)) || fail "summary lacks '$key'"
done
python3 - "$work/p.json" "$work/samples" <<'PY' && passed=$((passed + 1)) || fail "JSON"
import json, sys, statistics
j = json.load(open(sys.argv[1]))
lat = [float(l.split()[0]) for l in open(sys.argv[2]) if l[:1].isdigit()]
assert j["samples"] == 300 and j["warmup"] == 20, j
assert j["service"]["count"] == 300
med = statistics.median(lat)
# the histogram's p50 is within its 1% bucket error of the exact median (plus rounding)
assert abs(j["service"]["p50_us"] - med) <= 0.01 * med + 0.01, (j["service"]["p50_us"], med)
assert abs(j["service"]["mean_us"] - statistics.mean(lat)) < 0.01
PY

# The seed a run drew from the clock is in its summary and JSON: given back with --seed, it
# repeats the run's offsets.
seed=$(sed -nE 's/^mode .*, seed ([0-9]+)$/\1/p' "$work/summary")
if [[ -n $seed ]] && grep -q "\"seed\": $seed," "$work/p.json"; then
	passed=$((passed + 1))
	"$th" probe "${mode[@]}" -n 300 -w 20 --offsets --seed "$seed" "$work/data" 2> /dev/null |
		awk '/^# warmup/ { print $4 } /^[0-9]/ { print $2 }' > "$work/again"
	[[ $(wc -l < "$work/again") -eq 320 ]] && awk '/^# warmup/ { print $4 } /^[0-9]/ { print $2 }' \
		"$work/samples" | cmp -s - "$work/again" &&
		passed=$((passed + 1)) || fail "--seed $seed did not repeat the run's offsets"
else
	fail "the summary or the JSON does not give the seed: $(grep '^mode' "$work/summary")"
fi

# Rate limiting: 100 samples at 500 IOPS take about 0.2 s of wall time.
"$th" probe "${mode[@]}" -n 100 -r 500 --no-samples "$work/data" 2> "$work/summary"
awk '/^samples/ { s = $(NF-1) + 0; exit !(s > 0.18 && s < 0.4) }' "$work/summary" &&
	passed=$((passed + 1)) || { fail "--rate 500: wall time"; cat "$work/summary"; }
grep -qE 'cycle time 2000.0 us' "$work/summary" && passed=$((passed + 1)) || fail "rate line"

# Duration bounds the run when no count is given.
expect 0 'samples +[0-9]+ measured' -- "$th" probe "${mode[@]}" -d 0.3 --no-samples "$work/data"

# Buffered mode says so, in the samples header and the summary.
expect 0 'BUFFERED' -- "$th" probe --buffered -n 10 "$work/data"

# io_uring at depth 4.
expect 0 'io_uring, iodepth 4' -- "$th" probe "${mode[@]}" -q 4 -n 100 --no-samples "$work/data"

# A directory: a temporary file of --size, gone afterwards.
mkdir "$work/dir"
expect 0 'temporary-file, 8388608 bytes' -- "$th" probe "${mode[@]}" -s 8m -n 50 "$work/dir"
[[ -z $(ls -A "$work/dir") ]] && passed=$((passed + 1)) || fail "temporary file left behind"

# A temporary file larger than the free space is refused before a byte is written (it would
# fill the filesystem for everyone, then fail).
expect 1 'temporary file does not fit in .*bytes free\): give a smaller --size' -- \
	timeout 5 "$th" probe -n 5 --size 1000t "$work/dir"

# SIGINT while the temporary file is filled (8 GiB: long on any disk) stops the probe at once,
# and says nothing was measured instead of printing a summary of zeroes.
"$th" probe -n 10 --size 8g --no-samples "$work/dir" > "$work/int.out" 2>&1 &
pid=$!
sleep 0.5
kill -INT "$pid"
for _ in $(seq 30); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2> /dev/null; then
	fail "SIGINT while filling the temporary file: still running 3 s later"
	kill -KILL "$pid"
fi
wait "$pid"
rc=$?
[[ $rc -eq 1 ]] && grep -q 'stopped while filling the temporary file' "$work/int.out" &&
	! grep -q '^service us' "$work/int.out" && passed=$((passed + 1)) ||
	{ fail "SIGINT while filling: exit $rc"; cat "$work/int.out"; }
[[ -z $(ls -A "$work/dir") ]] && passed=$((passed + 1)) || fail "temporary file left behind"
# So does SIGINT in a warm-up that has not ended.
"$th" probe "${mode[@]}" -w 1000 -r 10 --no-samples "$work/data" > "$work/int.out" 2>&1 &
pid=$!
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc -eq 1 ]] && grep -q 'stopped before a sample was measured' "$work/int.out" &&
	! grep -q '^service us' "$work/int.out" && passed=$((passed + 1)) ||
	{ fail "SIGINT in the warm-up: exit $rc"; cat "$work/int.out"; }

# A slow paced probe (100 s between starts) stops at SIGINT, not at its next start: the
# summary of what it measured, exit 0; with psync and with io_uring.
for q in 1 2; do
	"$th" probe "${mode[@]}" -q $q -n 5 -r 0.01 --no-samples "$work/data" > "$work/int.out" 2>&1 &
	pid=$!
	sleep 0.5
	kill -INT "$pid"
	for _ in $(seq 30); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2> /dev/null; then
		fail "SIGINT while waiting for a paced start (-q $q): still running 3 s later"
		kill -KILL "$pid"
	fi
	wait "$pid"
	rc=$?
	[[ $rc -eq 0 ]] && grep -qE '^samples +1 measured, .*\(stopped early\)' "$work/int.out" &&
		passed=$((passed + 1)) || { fail "SIGINT in a paced wait (-q $q): exit $rc"; cat "$work/int.out"; }
done

# A file in tmpfs is memory: the summary and the JSON say so, whatever the numbers look like.
if [[ $(stat -f -c %T /dev/shm 2> /dev/null) == tmpfs ]] && shm=$(mktemp /dev/shm/th-probe.XXXXXX); then
	head -c $((1 << 20)) /dev/urandom > "$shm"
	expect 0 'note +the target is on tmpfs: its blocks are memory' -- "$th" probe --buffered \
		-n 20 --no-samples -j "$work/shm.json" "$shm"
	python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["memory_fs"] == "tmpfs"' \
		"$work/shm.json" && passed=$((passed + 1)) || fail "JSON memory_fs of a tmpfs file"
	rm -f "$shm"
else
	echo "note: /dev/shm is not tmpfs; memory-backed target note not tested"
fi

# Reads never change the target; --write changes only the range.
sum=$(md5sum < "$work/data")
"$th" probe "${mode[@]}" -n 200 --no-samples "$work/data" 2>/dev/null
[[ $(md5sum < "$work/data") == "$sum" ]] && passed=$((passed + 1)) || fail "a read probe changed the file"
cp "$work/data" "$work/before"
expect 0 'write, 4096-byte blocks' -- "$th" probe "${mode[@]}" --write --offset 1m --length 64k \
	-n 50 --no-samples "$work/data"
cmp -l "$work/before" "$work/data" | awk '{ o = $1 - 1; if (o < 1048576 || o >= 1048576 + 65536) bad++; n++ }
	END { exit !(n > 0 && bad == 0) }' && passed=$((passed + 1)) || fail "--write outside its range"

# Errors: what was wrong, where, and what to do.
: > "$work/empty"
expect 2 'no such file' -- "$th" probe "$work/missing"
expect 2 'is empty \(0 bytes\)' -- "$th" probe "${mode[@]}" "$work/empty"
# A hole has no blocks on the disk: its reads would time memory. A sparse file is refused at
# its first hole in the range; the range before it is probed.
{ head -c $((1 << 20)) /dev/urandom; } > "$work/sparse"
truncate -s 16m "$work/sparse"
if python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY)
sys.exit(os.lseek(fd, 0, os.SEEK_HOLE) != 1 << 20)' "$work/sparse"; then
	expect 2 'sparse has a hole at offset 1048576, inside the probed range' -- "$th" probe \
		"${mode[@]}" -n 10 "$work/sparse"
	expect 2 'has a hole at offset 2097152' -- "$th" probe "${mode[@]}" -n 10 --offset 2m \
		"$work/sparse"
	expect 0 'range 0\+1048576' -- "$th" probe "${mode[@]}" -n 10 --length 1m "$work/sparse"
else
	echo "note: $fstype does not report holes (SEEK_HOLE); sparse-file refusal not tested"
fi
expect 2 'block size 1000 is not a multiple of' -- "$th" probe "${mode[@]}" -b 1000 "$work/data"
expect 2 'larger than the probed range' -- "$th" probe "${mode[@]}" -b 32m "$work/data"
expect 2 'exactly one TARGET' -- "$th" probe
expect 2 '--count 0 needs --duration' -- "$th" probe -n 0 "$work/data"
expect 2 'duration .1e-10.: give seconds from 0.000001' -- "$th" probe -d 1e-10 "$work/data"
# Counts are digits: 1k would be 1024 as a byte size and 1000 as a count, so it is neither.
expect 2 "--count '1k': give a number of samples in digits" -- "$th" probe -n 1k "$work/data"
expect 2 "--warmup '2K': give a number of samples in digits" -- "$th" probe -w 2K "$work/data"
expect 2 "--seed '1k': give a number in digits" -- "$th" probe --seed 1k "$work/data"
expect 0 'usage: tracehound probe' -- "$th" probe --help

# An output that is the target is refused before anything is opened for writing: by its
# own name, another spelling, a link, or (not made yet) the same path.
sum=$(md5sum < "$work/data")
ln -s data "$work/link"
expect 2 '-o .*/data is the probe target' -- "$th" probe "${mode[@]}" -n 10 -o "$work/data" "$work/data"
expect 2 '-j .*/link is the probe target' -- "$th" probe "${mode[@]}" -n 10 -j "$work/link" "$work/data"
expect 2 '-o .*/\./data is the probe target' -- "$th" probe "${mode[@]}" -n 10 -o "$work/./data" \
	"$work/link"
[[ $(md5sum < "$work/data") == "$sum" ]] && passed=$((passed + 1)) ||
	fail "an output that is the target was written"
expect 2 '-o .*/absent is the probe target' -- "$th" probe -n 10 -o "$work/absent" "$work/absent"
[[ ! -e $work/absent ]] && passed=$((passed + 1)) || fail "probe made its missing target"
expect 2 '-o and -j both write' -- "$th" probe "${mode[@]}" -n 10 -o "$work/s.txt" \
	-j "$work/./s.txt" "$work/data"
# -j - is standard output, as -o - is, not a file named '-'; the samples cannot share it.
expect 2 '-j - and the samples both write standard output' -- "$th" probe "${mode[@]}" -n 10 \
	-j - "$work/data"
expect 2 '-j /dev/stdout and the samples both write standard output' -- "$th" probe \
	"${mode[@]}" -n 10 -j /dev/stdout "$work/data"
thabs=$(realpath "$th")
(cd "$work" && "$thabs" probe "${mode[@]}" -n 10 --no-samples -j - data 2> /dev/null) > "$work/j.out"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["samples"] == 10' \
	"$work/j.out" && [[ ! -e $work/- ]] && passed=$((passed + 1)) ||
	fail "-j - --no-samples: no JSON on standard output, or a file named '-'"
# An output that cannot be written is said at once, not after the probe ran.
SECONDS=0
expect 1 'cannot write .*/nodir/p.json' -- "$th" probe "${mode[@]}" -d 3 --no-samples \
	-j "$work/nodir/p.json" "$work/data"
((SECONDS < 2)) && passed=$((passed + 1)) || fail "-j checked only after the probe ran"
# A missing target makes no output file.
expect 2 'no such file' -- "$th" probe -o "$work/s2.txt" "$work/missing"
[[ ! -e $work/s2.txt ]] && passed=$((passed + 1)) || fail "output made for a missing target"
# --size is for a directory's temporary file; a file is probed as it is.
expect 2 '--size is the size of the temporary file.*is a file' -- "$th" probe -s 8m -n 10 \
	"$work/data"

# A loop block device: read probe, write refusals.
if ! loopdev=$(losetup -f --show "$work/data" 2>/dev/null); then
	loopdev=
	echo "note: losetup failed; loop device tests skipped"
else
	expect 0 'block-device, 16777216 bytes' -- "$th" probe -n 200 -w 5 "$loopdev"
	expect 0 'io_uring, iodepth 8' -- "$th" probe -q 8 -n 200 --no-samples "$loopdev"
	sum=$(md5sum < "$loopdev")
	"$th" probe -n 100 --no-samples "$loopdev" 2>/dev/null
	[[ $(md5sum < "$loopdev") == "$sum" ]] && passed=$((passed + 1)) ||
		fail "a read probe changed the device"
	# No lazy inode-table or journal init: ext4 would zero them in the background after
	# mounting, changing the device under the checksums below.
	if command -v mkfs.ext4 > /dev/null &&
		mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loopdev" 2>/dev/null &&
		mkdir -p "$work/mnt" && mount "$loopdev" "$work/mnt" 2>/dev/null; then
		mnt=$work/mnt
		sync
		sum=$(md5sum < "$loopdev")
		expect 2 "refusing to write: $loopdev is mounted on $work/mnt" -- \
			"$th" probe --write -n 10 "$loopdev"
		[[ $(md5sum < "$loopdev") == "$sum" ]] && passed=$((passed + 1)) ||
			fail "a refused write changed the mounted device"
		expect 0 'read, 4096-byte blocks' -- "$th" probe -n 20 --no-samples "$loopdev"
		umount "$mnt" && mnt=
	else
		echo "note: could not mount the loop device; mounted-device refusal not tested"
	fi
	# Unmounted and unused: writes are allowed, with the flag.
	expect 0 'write, 4096-byte blocks' -- "$th" probe --write -n 20 --no-samples "$loopdev"
	losetup -d "$loopdev" && loopdev=
	# A read-only device opens for writing and fails the first write (EPERM): refused first.
	if loopdev=$(losetup -f --show -r "$work/data" 2>/dev/null); then
		sum=$(md5sum < "$work/data")
		expect 2 "refusing to write: $loopdev is a read-only device" -- "$th" probe --write \
			-n 10 --no-samples "$loopdev"
		[[ $(md5sum < "$work/data") == "$sum" ]] && passed=$((passed + 1)) ||
			fail "a refused write changed the read-only device"
		expect 0 'read, 4096-byte blocks' -- "$th" probe -n 10 --no-samples "$loopdev"
		losetup -d "$loopdev" && loopdev=
	else
		loopdev=
		echo "note: losetup -r failed; read-only device refusal not tested"
	fi
fi

echo "probe.sh: $passed passed, $fails failed"
[[ $fails -eq 0 ]]
