#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Live end-to-end test: real NFSv3 traffic between nfs-ganesha and a libnfs client, captured
# by `tracehound capture` through DPDK net_af_packet, checked against a second witness
# (tshark on the same interface) and against what the client says it did: its NFS-level
# operations against the RPC log, its user-level opens (OP lines) against the open records.
#
#   live_nfs.sh TRACEHOUND NFS_CLIENT
#
# Topology (see ../shared/LIVE-NFS.md): two network namespaces joined by a veth pair,
# 10.99.0.1/24 (server: rpcbind + ganesha) and 10.99.0.2/24 (client: nfs_client, tracehound,
# tshark). Traffic goes only to these addresses. Everything the test starts is stopped by PID
# and the namespaces are deleted on every exit path.
#
# rpcbind and ganesha also share a private mount namespace with its own tmpfs on /run (/var/run
# links to it on Debian). rpcbind serves its local clients, ganesha's registrations among
# them, through /run/rpcbind.sock, and a network namespace does not separate that path: with
# the host's /run, ganesha would register with whatever rpcbind the host runs (Debian starts
# one when the package is installed), and a second rpcbind would take over the host's socket.
# With a private /run the host's rpcbind is neither used nor touched, and what the server
# leaves in /run (socket, lock, warm-start files, /run/ganesha) goes away with the namespace.
#
# Exit status: 0 pass, 1 fail, 77 skipped (no network namespaces, or no private mount
# namespace for the server).
# Set TH_E2E_KEEP=1 to keep the work directory (captures, logs) for a look afterwards.

set -u

TRACEHOUND=${1:?usage: live_nfs.sh TRACEHOUND NFS_CLIENT}
NFS_CLIENT=${2:?usage: live_nfs.sh TRACEHOUND NFS_CLIENT}

SRV_NS=th-srv-$$
CLI_NS=th-cli-$$
SRV_IF=thv-s-$$
CLI_IF=thv-c-$$
SRV_ADDR=10.99.0.1
CLI_ADDR=10.99.0.2
EXPORT=/export

WORK=
NS_MADE=()
RPCBIND_PID=
GANESHA_PID=
TSHARK_PID=
TH_PID=
DPDK_RUN_DIR=/run/dpdk/th-e2e-$$

log() { printf 'live_nfs: %s\n' "$*"; }
skip() { log "SKIP: $*"; exit 77; }
fail() { log "FAIL: $*"; exit 1; }

# Stop one process we started: SIGTERM (or the given signal), then SIGKILL after 5 s.
stop_pid() {
	local pid=$1 sig=${2:-TERM} i
	[ -n "$pid" ] || return 0
	kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
	kill -"$sig" "$pid" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "pid $pid ignored SIG$sig for 5 s, killing it"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	return 0
}

# On failure, the logs that explain it (meson keeps the test's output). tracehound's progress
# lines are left out so that its final statistics block shows whole.
show_logs() {
	local f
	for f in ganesha.log:15 tracehound.err:100 tshark.err:10 client.out:50 client.err:20 \
		 check.txt:100; do
		[ -s "$WORK/${f%:*}" ] || continue
		log "---- last lines of ${f%:*} ----"
		grep -v '^capture: [0-9.]*s frames' "$WORK/${f%:*}" | tail -n "${f#*:}"
	done
}

cleanup() {
	local rc=$? ns
	trap - EXIT INT TERM
	[ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -n "$WORK" ] && show_logs
	stop_pid "$TH_PID" INT
	stop_pid "$TSHARK_PID" INT
	stop_pid "$GANESHA_PID"
	# rpcbind last: it holds the server's mount namespace, whose /run tmpfs (with rpcbind's
	# socket, lock and warm-start files and ganesha's /run/ganesha) vanishes with it.
	stop_pid "$RPCBIND_PID"
	# DPDK's runtime directory is on the host's /run (tracehound runs outside the server's
	# mount namespace).
	rm -rf "$DPDK_RUN_DIR"
	for ns in "${NS_MADE[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	if [ -n "$WORK" ]; then
		if [ "${TH_E2E_KEEP:-0}" = 1 ]; then
			log "work directory kept: $WORK"
		else
			rm -rf "$WORK"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted, cleaning up"; exit 1' INT TERM

# Run a command in a namespace. Background processes are started with `ip netns exec` itself
# (which execs them, so $! is their PID) and with SIGINT restored, because a non-interactive
# shell starts background jobs with SIGINT ignored. The server side runs in rpcbind's network
# and mount namespaces (see the top of the file); nsenter without --pid execs too.
in_srv() { nsenter --target "$RPCBIND_PID" --net --mount "$@"; }
in_cli() { ip netns exec "$CLI_NS" "$@"; }

# Poll a command until it succeeds, every 0.1 s for at most $1 seconds.
wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------------------------------
# Preconditions: what is missing decides between skip (environment) and fail (install).

[ "$(id -u)" = 0 ] || skip "needs root (CAP_NET_ADMIN) to create network namespaces"
for tool in ip ethtool rpcbind rpcinfo ganesha.nfsd tshark python3 unshare nsenter; do
	command -v "$tool" >/dev/null 2>&1 ||
		fail "$tool not found; install the test dependencies (deploy/) and rerun"
done
[ -x "$TRACEHOUND" ] || fail "$TRACEHOUND is not an executable"
[ -x "$NFS_CLIENT" ] || fail "$NFS_CLIENT is not an executable"
GANESHA_PLUGINS=$(dirname "$(find /usr/lib -name libfsalvfs.so -print -quit 2>/dev/null)")
[ "$GANESHA_PLUGINS" != . ] || fail "ganesha's VFS FSAL (nfs-ganesha-vfs) is not installed"

ip netns add "$SRV_NS" 2>/dev/null ||
	skip "cannot create network namespaces (need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
NS_MADE+=("$SRV_NS")
ip netns add "$CLI_NS" || fail "cannot create namespace $CLI_NS"
NS_MADE+=("$CLI_NS")

WORK=$(mktemp -d /tmp/th-e2e.XXXXXX) || fail "cannot create a work directory"
mkdir -p "$WORK/export" "$WORK/recov"

# ---------------------------------------------------------------------------------------
# Network: veth pair at MTU 1500 with offloads off, so the capture sees wire-sized segments.

# Without CAP_NET_ADMIN (CAP_SYS_ADMIN alone makes namespaces) this is where it stops.
ip -n "$SRV_NS" link add "$SRV_IF" mtu 1500 type veth peer name "$CLI_IF" netns "$CLI_NS" ||
	skip "cannot create a veth pair between network namespaces (need CAP_NET_ADMIN)"
ip -n "$SRV_NS" addr add "$SRV_ADDR/24" dev "$SRV_IF" || fail "cannot address $SRV_IF"
ip -n "$CLI_NS" addr add "$CLI_ADDR/24" dev "$CLI_IF" || fail "cannot address $CLI_IF"
# Bring one end up: offloads off (checked: TSO left on would show 64 KB frames), lo up too.
setup_end() {
	local ns=$1 dev=$2
	ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off tx off rx off >/dev/null 2>&1
	ip netns exec "$ns" ethtool -k "$dev" | grep -q '^tcp-segmentation-offload: off' ||
		fail "cannot turn offloads off on $dev"
	ip -n "$ns" link set lo up || fail "cannot bring lo up in $ns"
	ip -n "$ns" link set "$dev" up || fail "cannot bring $dev up"
}
setup_end "$SRV_NS" "$SRV_IF"
setup_end "$CLI_NS" "$CLI_IF"
link_up() { ip -n "$CLI_NS" -o link show "$CLI_IF" | grep -q 'state UP'; }
wait_for 5 link_up || fail "$CLI_IF did not come up"

# ---------------------------------------------------------------------------------------
# Server: rpcbind and ganesha in the server's network namespace and in a mount namespace of
# their own with a private /run.

# Runs "$@" in a fresh mount namespace: a private copy of the one `ip netns exec` made (whose
# /sys shows the server's interfaces), so that nothing mounted here reaches the host, with an
# empty tmpfs on /run holding what rpcbind expects (its state directory, owned by its user).
# mount -n: without it mount(8) creates /run/mount/ for its utab lock on the host's /run before
# the tmpfs covers it. unshare without --fork and sh's exec keep the PID; used in the
# background it must not be wrapped in a shell function (that would be a subshell).
SRV_MNT_NS=(ip netns exec "$SRV_NS" unshare --mount --propagation private sh -c
	    'mount -n -t tmpfs -o mode=0755,size=16m th-e2e-run /run || exit 125
	     mkdir -p /run/rpcbind /run/lock || exit 125
	     chown _rpc /run/rpcbind 2>/dev/null
	     exec "$@"' sh)
# The host's rpcbind socket as "inode" or "none", to prove afterwards that it was not touched.
host_rpcbind_sock() { stat -L -c %i /run/rpcbind.sock 2>/dev/null || echo none; }

# Probe first: the private /run must not show what the host's /run holds (ip netns add made
# /run/netns there), and the host's /run must stay as it was.
[ -e /run/mount ] && RUN_MOUNT_EXISTED=1 || RUN_MOUNT_EXISTED=0
"${SRV_MNT_NS[@]}" sh -c '[ ! -e /run/netns ] && [ ! -e /run/rpcbind.sock ]' 2>"$WORK/mntns.err" ||
	skip "cannot give the server a private /run in its own mount namespace" \
	     "(unshare --mount and mount -t tmpfs need CAP_SYS_ADMIN): $(head -c 200 "$WORK/mntns.err")"
[ -e "/run/netns/$SRV_NS" ] || fail "the probe's tmpfs on /run reached the host's mount namespace"
[ "$RUN_MOUNT_EXISTED" = 1 ] || [ ! -e /run/mount ] ||
	fail "mounting the server's /run created /run/mount on the host's /run"

HOST_SOCK_BEFORE=$(host_rpcbind_sock)
"${SRV_MNT_NS[@]}" rpcbind -f -w >"$WORK/rpcbind.log" 2>&1 &
RPCBIND_PID=$!
# $! becomes rpcbind once ip, unshare and sh have exec'd; only then is /run private.
is_rpcbind() { [ "$(cat "/proc/$RPCBIND_PID/comm" 2>/dev/null)" = rpcbind ]; }
wait_for 5 is_rpcbind || fail "pid $RPCBIND_PID did not become rpcbind (see $WORK/rpcbind.log)"
wait_for 10 in_srv rpcinfo -p 127.0.0.1 || fail "rpcbind did not come up"
in_srv test -S /run/rpcbind.sock || fail "rpcbind did not create /run/rpcbind.sock in its /run"
in_srv test ! -e /run/netns || fail "rpcbind does not run with a private /run"

cat >"$WORK/ganesha.conf" <<EOF
NFS_CORE_PARAM {
	Bind_addr = $SRV_ADDR; NFS_Port = 2049; MNT_Port = 20048;
	Protocols = 3; Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false;
	mount_path_pseudo = true; Plugins_Dir = "$GANESHA_PLUGINS";
}
NFSV4 { Graceless = true; RecoveryBackend = fs; RecoveryRoot = "$WORK/recov"; }
NFS_KRB5 { Active_krb5 = false; }
EXPORT {
	Export_Id = 1; Path = "$WORK/export"; Pseudo = "$EXPORT"; Access_Type = RW;
	Squash = No_Root_Squash; SecType = sys; Protocols = 3; Transports = TCP;
	FSAL { Name = VFS; }
}
EOF
# Into rpcbind's namespaces (not through in_srv: a shell function run in the background is a
# subshell, so $! would not be ganesha's PID).
nsenter --target "$RPCBIND_PID" --net --mount \
	ganesha.nfsd -F -f "$WORK/ganesha.conf" -L "$WORK/ganesha.log" \
	-p "$WORK/ganesha.pid" -N NIV_EVENT >"$WORK/ganesha.out" 2>&1 &
GANESHA_PID=$!
# Registration alone could be stale; a NULL call over TCP proves each service answers.
wait_for 30 in_srv rpcinfo -t "$SRV_ADDR" nfs 3 || fail "ganesha's NFSv3 service did not come up"
wait_for 10 in_srv rpcinfo -t "$SRV_ADDR" mountd 3 || fail "ganesha's MOUNT v3 did not come up"
kill -0 "$GANESHA_PID" 2>/dev/null || fail "ganesha exited"
# ganesha registered with our rpcbind (asked through the private socket), and the host's
# rpcbind socket is as it was: the same one if a host rpcbind runs, none if none does.
in_srv rpcinfo -p | grep -q ' nfs$' || fail "ganesha is not registered with the server's rpcbind"
[ "$(host_rpcbind_sock)" = "$HOST_SOCK_BEFORE" ] ||
	fail "the host's /run/rpcbind.sock changed while the server started (isolation broken)"
in_cli rpcinfo -t "$SRV_ADDR" nfs 3 >/dev/null ||
	fail "the client cannot reach $SRV_ADDR over the veth"

# ---------------------------------------------------------------------------------------
# Capture: tshark (the witness) and tracehound on the client's end of the veth. tracehound
# writes the RPC log and infers user-level opens (-r): the opens still in progress when it
# stops are flushed as records, so the 30 s idle timeout never delays the test.

# tshark prints each packet's UDP destination port (-P) while it writes the pcap, about a
# second late (it reads dumpcap's blocks), which is how the test knows it is capturing:
# sentinel UDP datagrams to a closed port on the server go out until tshark shows one.
ip netns exec "$CLI_NS" env --default-signal=INT \
	tshark -n -l -P -T fields -e udp.dstport -B 64 -i "$CLI_IF" -w "$WORK/witness.pcapng" \
	>"$WORK/tshark.out" 2>"$WORK/tshark.err" &
TSHARK_PID=$!

# Two lcores (control + decode); on a one-CPU machine both share CPU 0.
if [ "$(nproc)" -ge 2 ]; then LCORES=(-l 0-1); else LCORES=(--lcores=0@0,1@0); fi
EAL=(--no-huge -m 512 --no-pci --no-shconf --file-prefix "th-e2e-$$" "${LCORES[@]}"
     "--vdev=net_af_packet0,iface=$CLI_IF,framecnt=16384,blocksz=65536,framesz=2048")
printf '[session]\nnames = %s\n' "$WORK/names.txt" >"$WORK/capture.ini"
ip netns exec "$CLI_NS" env --default-signal=INT \
	"$TRACEHOUND" capture -c "$WORK/capture.ini" -o "$WORK/ops.txt" -r "$WORK/records.txt" \
	--stats-interval 0.2 -- "${EAL[@]}" \
	>"$WORK/tracehound.out" 2>"$WORK/tracehound.err" &
TH_PID=$!

# Send one sentinel datagram to UDP port $1 of the server.
sentinel() { in_cli bash -c "echo th-e2e-sentinel >/dev/udp/$SRV_ADDR/$1" 2>/dev/null; }
# Has tshark shown a datagram to port $1?
tshark_saw() { grep -qx "$1" "$WORK/tshark.out"; }
# Has tracehound counted a frame yet? Its progress lines ("capture: 1.2s frames N rpcs N
# ...") say so.
tracehound_saw_packets() {
	sed -n 's/^capture: [0-9.]*s frames \([0-9]*\) .*/\1/p' "$WORK/tracehound.err" |
		tail -n 1 | grep -q '^[1-9]'
}

ready=0
for ((i = 0; i < 200; i++)); do
	kill -0 "$TH_PID" 2>/dev/null || fail "tracehound capture exited before the traffic"
	kill -0 "$TSHARK_PID" 2>/dev/null || fail "tshark exited before the traffic"
	if tshark_saw 9 && tracehound_saw_packets; then
		ready=1
		break
	fi
	sentinel 9
	sleep 0.1
done
[ "$ready" = 1 ] || fail "the capturers did not see the sentinel datagrams within 20 s"

# ---------------------------------------------------------------------------------------
# Traffic.

# The client's run in host-clock seconds: every open record must lie within it (tracehound
# stamps packets with the same clock).
CLIENT_START=$(date +%s.%N)
in_cli "$NFS_CLIENT" "$SRV_ADDR" "$EXPORT" >"$WORK/client.out" 2>"$WORK/client.err" ||
	fail "nfs_client failed"
CLIENT_END=$(date +%s.%N)
log "client: $(tail -n 1 "$WORK/client.out")"

# A closing sentinel: once tshark shows it, everything before it is in its pcap. tracehound
# polls its ring continuously, so the same wait covers it.
for ((i = 0; i < 100; i++)); do
	sentinel 19
	sleep 0.1
	tshark_saw 19 && break
done
tshark_saw 19 || fail "tshark did not show the closing sentinel"

kill -INT "$TH_PID"
for ((i = 0; i < 150; i++)); do
	kill -0 "$TH_PID" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$TH_PID" 2>/dev/null && fail "tracehound did not stop within 15 s of SIGINT"
wait "$TH_PID"
th_rc=$?
TH_PID=
[ "$th_rc" -eq 0 ] || fail "tracehound capture exited with status $th_rc after SIGINT"
stop_pid "$TSHARK_PID" INT
TSHARK_PID=

# ---------------------------------------------------------------------------------------
# Checks.

[ -s "$WORK/ops.txt" ] || fail "tracehound wrote no RPC lines to $WORK/ops.txt"
# At SIGINT every open in progress is flushed as a record, so the file holds them all now.
[ -s "$WORK/records.txt" ] || fail "tracehound wrote no open records to $WORK/records.txt"
tshark -n -r "$WORK/witness.pcapng" -2 -o tcp.try_heuristic_first:TRUE \
	-o tcp.reassemble_out_of_order:TRUE -Y rpc -T fields -E occurrence=a \
	-e frame.number -e tcp.srcport -e tcp.dstport -e rpc.xid -e rpc.msgtyp \
	-e rpc.program -e rpc.programversion -e rpc.procedure -e nfs.status3 \
	-e rpc.time -e tcp.segment.count -e frame.time_epoch \
	>"$WORK/witness.txt" 2>"$WORK/witness.err" || fail "tshark cannot read its own capture"
python3 "$(dirname "$0")/check_live.py" "$WORK/witness.txt" "$WORK/ops.txt" \
	"$WORK/client.out" "$WORK/tracehound.err" "$WORK/records.txt" \
	"$CLIENT_START" "$CLIENT_END" "$CLI_ADDR" "$SRV_ADDR" >"$WORK/check.txt" 2>&1
check_rc=$?
cat "$WORK/check.txt"
[ "$check_rc" -eq 0 ] || fail "tracehound's output disagrees with the witness or the client"
# The name map's modes as ganesha's attributes gave them, against what the client made: files
# created 0644 (the hard link, renamed into sub, keeps its file's mode), directories, a
# symlink. Every name the run bound has a mode; only the mount root has none.
awk -F' [|] ' '
	BEGIN { want["data"] = want["small"] = want["hard"] = want["moved"] = "-rw-r--r--" }
	NF != 7 { print "names: line " NR " has " NF " fields"; bad++; next }
	$3 ~ /^\// { next }
	$3 in want { seen[$3]++; if ($7 != want[$3]) { print "names: " $3 " has mode " $7; bad++ } }
	($3 == "th-dir" || $3 == "sub") && $7 !~ /^d/ { print "names: " $3 " has mode " $7; bad++ }
	$3 == "soft" && $7 !~ /^l/ { print "names: soft has mode " $7; bad++ }
	$7 == "-" { print "names: " $3 " has no mode"; bad++ }
	END { for (n in want) if (!seen[n]) { print "names: no line for " n; bad++ }
		exit bad > 0 }' "$WORK/names.txt" ||
	fail "the name map's modes disagree with what the client made (names.txt above)"
log "PASS"

