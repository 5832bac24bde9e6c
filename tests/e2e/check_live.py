#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check what `tracehound capture` reported for the live NFS test (live_nfs.sh).

Three sources are compared:
  witness  tshark fields (tab separated) decoded from a pcap taken on the same interface at
           the same time: every RPC call tshark saw must be in tracehound's output as a
           matched RPC line with the same program, version, procedure (and NFS status),
           and tracehound must report no RPC that tshark did not see;
  client   nfs_client's own account of what it did: operations that map to exactly one
           RPC must appear exactly that many times, and the bytes that WRITE and READ
           lines carry must add up to what the client wrote and read;
  stats    tracehound's final statistics block: frames counted, nothing unmatched or lost;
  records  tracehound's open records (-r) scored against the client's user-level operations
           (its "OP ..." lines): every write and read open the client made must be a record
           of the same direction, file, client address and uid that moved exactly the bytes
           the client moved; no record may claim more bytes than the RPC log shows for its
           file; every duration lies within the client's run.

Prints one line per problem and exits 1 when there is any, 0 otherwise.
"""

import collections
import re
import sys
import zlib

NFS3_PROCS = [
    "NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE", "CREATE",
    "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR",
    "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT",
]
MOUNT_PROCS = ["NULL", "MNT", "DUMP", "UMNT", "UMNTALL", "EXPORT"]
PMAP2_PROCS = ["NULL", "SET", "UNSET", "GETPORT", "DUMP", "CALLIT"]
PROGRAMS = {100000: "PORTMAP", 100003: "NFS", 100005: "MOUNT"}

# nfsstat3 values a clean run can produce, with the names th_op.h prints.
NFS3_STATUS = {0: "OK", 1: "PERM", 2: "NOENT", 5: "IO", 13: "ACCES", 17: "EXIST",
               20: "NOTDIR", 21: "ISDIR", 22: "INVAL", 39: "NOTEMPTY", 70: "STALE"}

# nfs_client operations that cause exactly one RPC of a known procedure (libnfs 4.0 over
# NFSv3: truncate is one SETATTR, statvfs one FSSTAT).
ONE_RPC_OPS = {
    "mount": ("MOUNT3", "MNT"), "umount": ("MOUNT3", "UMNT"),
    "mkdir": ("NFS3", "MKDIR"), "rmdir": ("NFS3", "RMDIR"), "creat": ("NFS3", "CREATE"),
    "unlink": ("NFS3", "REMOVE"), "rename": ("NFS3", "RENAME"), "link": ("NFS3", "LINK"),
    "symlink": ("NFS3", "SYMLINK"), "readlink": ("NFS3", "READLINK"),
    "truncate": ("NFS3", "SETATTR"),
    "statvfs": ("NFS3", "FSSTAT"),
}

# Procedures the issue names, which this client's traffic must contain.
REQUIRED = [
    ("MOUNT3", "MNT"), ("MOUNT3", "UMNT"), ("PORTMAP2", "GETPORT"), ("NFS3", "NULL"),
    ("NFS3", "FSINFO"), ("NFS3", "GETATTR"), ("NFS3", "SETATTR"), ("NFS3", "LOOKUP"),
    ("NFS3", "CREATE"), ("NFS3", "WRITE"), ("NFS3", "COMMIT"), ("NFS3", "READ"),
    ("NFS3", "MKDIR"), ("NFS3", "RMDIR"), ("NFS3", "RENAME"), ("NFS3", "REMOVE"),
    ("NFS3", "LINK"), ("NFS3", "SYMLINK"), ("NFS3", "READLINK"), ("NFS3", "FSSTAT"),
]

problems = []


def problem(msg):
    problems.append(msg)
    print("check: " + msg)


def proc_name(prog, vers, proc):
    table = None
    if prog == 100003 and vers == 3:
        table = NFS3_PROCS
    elif prog == 100005:
        table = MOUNT_PROCS
    elif prog == 100000 and vers == 2:
        table = PMAP2_PROCS
    if table is not None and proc < len(table):
        return table[proc]
    return str(proc)


def prog_label(prog, vers):
    name = PROGRAMS.get(prog)
    return "%s%d" % (name, vers) if name else "%d.%d" % (prog, vers)


def read_witness(path):
    """tshark fields: frame srcport dstport xid msgtyp program version procedure status3
    rpc.time tcp.segment.count frame.time_epoch.

    Returns calls {(client port, xid): (prog, vers, proc, frame, time)} and replies
    {(client port, xid): (status3, latency in us or None)}. The latency is kept only for a
    reply that came in one segment, where tshark's rpc.time (call's last segment to reply)
    is what th_op.h calls LAT_LAST. A frame can end several RPC messages (occurrence=a joins
    them with commas); in one TCP direction they are all calls or all replies, so the
    per-call lists line up.
    """
    calls = {}
    replies = {}
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            cols += [""] * (12 - len(cols))
            if not cols[3]:
                continue
            frame, sport, dport = cols[0], cols[1], cols[2]
            xids = cols[3].split(",")
            types = cols[4].split(",")
            progs = cols[5].split(",") if cols[5] else []
            vers = cols[6].split(",") if cols[6] else []
            procs = cols[7].split(",") if cols[7] else []
            stats = cols[8].split(",") if cols[8] else []
            # tshark shows rpc.programversion twice per call (header and generated copy).
            if progs and len(vers) % len(progs) == 0 and len(vers) > len(progs):
                vers = vers[::len(vers) // len(progs)]
            for i, xid_text in enumerate(xids):
                xid = int(xid_text, 16)
                mtype = int(types[i]) if i < len(types) else -1
                if mtype == 0:
                    if i >= len(progs) or i >= len(vers) or i >= len(procs):
                        problem("witness frame %s: call 0x%08x without program fields"
                                % (frame, xid))
                        continue
                    key = (int(sport), xid)
                    calls[key] = (int(progs[i]), int(vers[i]), int(procs[i]), frame,
                                  float(cols[11]) if cols[11] else None)
                elif mtype == 1:
                    key = (int(dport), xid)
                    alone = len(xids) == 1
                    status = int(stats[0]) if alone and len(stats) == 1 else None
                    lat = None
                    if alone and cols[9] and not cols[10]:
                        lat = float(cols[9]) * 1e6
                    replies[key] = (status, lat)
    return calls, replies


OP_LINE = re.compile(
    r"^(?P<time>\d+\.\d{9}) (?P<kind>RPC|CALL|REPLY) (?P<proto>tcp|udp) "
    r"(?P<client>\S+):(?P<cport>\d+) (?P<server>\S+):(?P<sport>\d+) 0x(?P<xid>[0-9a-f]{8}) "
    r"(?P<prog>\S+) (?P<proc>\S+) (?P<status>\S+) (?P<lat1>\S+) (?P<lat2>\S+)(?P<rest>.*)$")


def read_ops(path):
    ops = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = OP_LINE.match(line)
            if m is None:
                problem("ops line %d does not follow th_op.h: %s" % (n, line))
                continue
            op = m.groupdict()
            op["kv"] = dict(kv.split("=", 1) for kv in op["rest"].split() if "=" in kv)
            op["line"] = line
            ops.append(op)
    return ops


def read_client(path):
    counts = collections.Counter()
    totals = {}
    with open(path) as f:
        for line in f:
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if line.startswith("op="):
                counts[fields["op"]] += 1
            elif line.startswith("done "):
                totals = {k: int(v) for k, v in fields.items()}
    return counts, totals


# Rows of the final block that mean the trace is incomplete; a clean run must show 0.
MUST_BE_ZERO = ["unmatched", "NIC: frames missed", "NIC: no mbuf", "dispatch ring full",
                "frames the kernel dropped", "ops dropped", "RPC records lost",
                "RPC records unfinished", "RPC records cut", "XID table full",
                # open/close inference: nothing lost on the way to the records, no table
                # pressure with a handful of files, no impossible values from a real client.
                "ops lost to inference", "records dropped", "table full",
                "impossible values"]


def check_stats(path):
    """tracehound's final statistics block on stderr, after the line
    '--- tracehound capture statistics ...': rows are '  <count>  <what>'. Frames received
    must be nonzero; every loss that would leave RPCs out must be zero."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    start = None
    for i, line in enumerate(lines):
        if line.startswith("--- tracehound capture statistics"):
            start = i
    if start is None:
        problem("stats: no final statistics block on tracehound's stderr")
        return None
    rows = {}
    for line in lines[start + 1:]:
        m = re.match(r"^\s+(\d+)\s+(\S.*)$", line)
        if m:
            rows[m.group(2)] = int(m.group(1))
    frames = rows.get("frames received")
    if not frames:
        problem("stats: 'frames received' is %s, expected nonzero" % frames)
    if not any("unmatched" in what for what in rows):
        problem("stats: the final block has no 'unmatched' counters")
    for what, value in rows.items():
        if value != 0 and any(key in what for key in MUST_BE_ZERO):
            problem("stats: %d %s (expected 0 in a clean run)" % (value, what))
    # The block's last line: a clean run has nothing to name.
    summary = [line for line in lines[start + 1:] if line.startswith("summary:")]
    if summary != ["summary: nothing lost: every frame decoded, every call met its reply"]:
        problem("stats: summary %s (expected nothing lost in a clean run)" % summary)
    return frames


# tshark reads kernel timestamps; net_af_packet has none in DPDK 22.11, so tracehound stamps
# each receive burst with the host clock. On an idle machine LAT_LAST is within ~20 us of
# tshark's rpc.time, but when the decode lcore shares its CPU (2 cores here: ganesha, the
# client and tshark too) a call and its reply can land in one burst (LAT 0) or wait
# milliseconds. So the agreement is reported, not asserted; ordering is asserted.
lat_diffs = []
# TIME is the host clock at receive (TSC-derived); it must be the right moment, not exact.
TIME_TOLERANCE_S = 1.0
# session.confirm's default, which live_nfs.sh keeps: how long an open's GETATTR/ACCESS wait
# for its first READ.
CONFIRM_S = 0.5


def check_latency(op, witness_lat):
    """LAT_FIRST (from the call's first segment) can never be below LAT_LAST (from its last),
    and a call over several segments must show the difference. The distance from tshark's
    rpc.time (when the reply came in one segment) is collected for the summary."""
    try:
        first, last = float(op["lat1"]), float(op["lat2"])
    except ValueError:
        problem("matched RPC without latencies: " + op["line"])
        return
    if last < 0 or first < last:
        problem("latencies out of order (first %.3f, last %.3f): %s" % (first, last, op["line"]))
    if op["proc"] == "WRITE" and int(op["kv"].get("count", 0)) >= 65536 and first <= last:
        problem("a WRITE call over many segments shows LAT_FIRST = LAT_LAST: " + op["line"])
    if witness_lat is not None:
        lat_diffs.append(abs(last - witness_lat))


# ---------------------------------------------------------------------------------------
# Open records against the client's user-level operations.

RECORD_LINE = re.compile(
    r"^(?P<sec>\d+)\.(?P<usec>\d{6}) \| (?P<cmd>-?\d+) \| (?P<dir>read|write) \| "
    r"(?P<server>[0-9.]+|\[[0-9a-f:.]+\]):(?P<fh>[0-9a-f]+) \| "
    r"(?P<client>[0-9a-f.:]+)\.(?P<uid>\d+) \| (?P<transferred>\d+) \| (?P<size>\d+)$")


def read_records(path):
    records = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            m = RECORD_LINE.match(line)
            if m is None or len(m.group("fh")) % 2:
                problem("records line %d is not in the seed's layout: %s" % (n, line))
                continue
            r = m.groupdict()
            r["open"] = int(r["sec"]) + int(r["usec"]) / 1e6
            for k in ("cmd", "uid", "transferred", "size"):
                r[k] = int(r[k])
            # The handle in full; its CRC-32 is what the RPC log's fh=/newfh= print.
            r["crc"] = "%08x" % zlib.crc32(bytes.fromhex(r["fh"]))
            r["line"] = line
            r["used"] = False
            records.append(r)
    return records


def read_client_ops(path):
    """The client's "OP kind key=value ..." lines, in order."""
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("OP "):
                words = line.split()
                kv = dict(w.split("=", 1) for w in words[2:] if "=" in w)
                out.append(dict(kv, kind=words[1]))
    return out


def resolve(path, root, nfs_ops):
    """The CRC-32 of the handle @p path named, walking from the mount's root handle through
    the OK CREATE/MKDIR/LOOKUP/SYMLINK replies: the directory handle (fh=) is part of the
    key, so a name looked up in several directories is not confused. None when no reply
    names it; a problem when one name in one directory had several handles."""
    fh = root
    for comp in path.strip("/").split("/"):
        found = {op["kv"]["newfh"] for op in nfs_ops
                 if op["proc"] in ("LOOKUP", "CREATE", "MKDIR", "SYMLINK")
                 and op["status"] == "OK" and op["kv"].get("fh") == fh
                 and op["kv"].get("name") == comp and "newfh" in op["kv"]}
        if len(found) != 1:
            if len(found) > 1:
                problem("records: %s in directory %s had several handles %s; the test must "
                        "not reuse names" % (comp, fh, sorted(found)))
            return None
        fh = found.pop()
    return fh


def check_records(records_path, client_path, ops, t_start, t_end, cli_addr, srv_addr):
    records = read_records(records_path)
    client_ops = read_client_ops(client_path)
    nfs_ops = [op for op in ops if op["kind"] == "RPC" and op["prog"] == "NFS3"]
    roots = {op["kv"].get("newfh") for op in ops
             if op["kind"] == "RPC" and op["proc"] == "MNT" and op["status"] == "OK"}
    roots.discard(None)
    if len(roots) != 1:
        problem("records: %d root handles in the MNT replies, expected 1" % len(roots))
        return
    root = roots.pop()
    # Bytes on the wire per handle CRC and direction (WRITE/READ done=).
    wire = collections.Counter()
    for op in nfs_ops:
        if op["proc"] in ("READ", "WRITE") and "fh" in op["kv"]:
            wire[(op["kv"]["fh"], op["proc"].lower())] += int(op["kv"].get("done", 0))

    # Expected opens: (kind, direction, path, crc, uid, bytes or None, size).
    expected = []
    names = {}
    for cop in client_ops:
        if cop["kind"] not in ("write", "read", "truncate", "stat"):
            problem("records: unknown client operation %s" % cop)
            continue
        crc = resolve(cop["path"], root, nfs_ops)
        if crc is None:
            problem("records: the RPC log names no handle for %s (client %s)"
                    % (cop["path"], cop["kind"]))
            continue
        names[crc] = cop["path"]
        direction = "read" if cop["kind"] in ("read", "stat") else "write"
        nbytes = {"write": None, "read": None, "truncate": 0, "stat": 0}[cop["kind"]]
        if nbytes is None:
            nbytes = int(cop["bytes"])
        expected.append({"kind": cop["kind"], "dir": direction, "path": cop["path"],
                         "crc": crc, "uid": int(cop["uid"]), "bytes": nbytes,
                         "size": int(cop["size"]) if "size" in cop else None})

    # Records that belong to no file of the client, or a wrong server/client address.
    wall = t_end - t_start
    for r in records:
        where = "record %s" % r["line"]
        if r["server"] != srv_addr:
            problem("records: server %s, expected %s: %s" % (r["server"], srv_addr, where))
        if r["client"] != cli_addr:
            problem("records: client %s, expected %s: %s" % (r["client"], cli_addr, where))
        if r["cmd"] < 0 or r["cmd"] / 1e6 > wall + TIME_TOLERANCE_S:
            problem("records: command-time %d us outside 0..%.3f s (the client's run): %s"
                    % (r["cmd"], wall, where))
        if (r["open"] < t_start - TIME_TOLERANCE_S
                or r["open"] + r["cmd"] / 1e6 > t_end + TIME_TOLERANCE_S):
            problem("records: open %.6f + %d us is not within the client's run %.6f..%.6f: %s"
                    % (r["open"], r["cmd"], t_start, t_end, where))
    # No record claims more than the wire carried for its file, alone or with the others.
    claimed = collections.Counter()
    for r in records:
        claimed[(r["crc"], r["dir"])] += r["transferred"]
        if r["transferred"] > wire[(r["crc"], r["dir"])]:
            problem("records: %d bytes %s, the RPC log shows %d for handle %s: %s"
                    % (r["transferred"], r["dir"], wire[(r["crc"], r["dir"])], r["crc"],
                       r["line"]))
    for (crc, direction), total in sorted(claimed.items()):
        if total > wire[(crc, direction)]:
            problem("records: the %s records of handle %s (%s) claim %d bytes, the RPC log "
                    "shows %d" % (direction, crc, names.get(crc, "?"), total,
                                  wire[(crc, direction)]))

    # Match: exact first (direction, file, uid, bytes), then what is left of the same
    # direction, file and uid is a wrong byte count.
    def candidates(e):
        return [r for r in records if not r["used"] and r["dir"] == e["dir"]
                and r["crc"] == e["crc"] and r["uid"] == e["uid"]]

    for e in expected:
        exact = [r for r in candidates(e) if r["transferred"] == e["bytes"]]
        if exact:
            e["record"] = exact[0]
            exact[0]["used"] = True
    for e in expected:
        if "record" in e or e["kind"] == "stat":
            continue
        left = candidates(e)
        if left:
            e["record"] = left[0]
            left[0]["used"] = True
            problem("records: %s %s by uid %d moved %d bytes, the record says %d: %s"
                    % (e["kind"], e["path"], e["uid"], e["bytes"], left[0]["transferred"],
                       left[0]["line"]))
    notes = []
    for e in expected:
        r = e.get("record")
        if r is None:
            if e["kind"] != "stat":
                problem("records: missing: %s %s by uid %d (%d bytes, handle %s)"
                        % (e["kind"], e["path"], e["uid"], e["bytes"], e["crc"]))
            continue
        want_size = e["size"]
        if want_size is not None and r["size"] != want_size:
            problem("records: %s %s: size %d at close, the client left the file at %d bytes "
                    "during that open: %s" % (e["kind"], e["path"], r["size"], want_size,
                                              r["line"]))
    # Records no client operation explains, shown on the row of the kind they look like. A
    # zero-byte read on a file the client used is a cache read the heuristics may infer (a
    # stat, an open's GETATTR); anything else is a phantom open.
    def extra_kind(r):
        if r["dir"] == "write":
            return "write" if r["transferred"] else "truncate"
        return "read" if r["transferred"] else "stat"

    # Except one that the same user's read open of the file follows with no RPC on another
    # handle between: that is the open's own LOOKUP and ACCESS split off as a phantom (libnfs
    # asks GETATTR after ACCESS), counted on the read row. Records open at the first RPC's
    # call, cut to the microsecond.
    reads = [e["record"] for e in expected
             if e["kind"] == "read" and "record" in e and e["record"]["transferred"]]
    rpc_at = [(float(op["time"]), op["kv"].get("fh")) for op in nfs_ops]

    def split_from_read(r):
        if r["dir"] != "read" or r["transferred"]:
            return None
        end = r["open"] + r["cmd"] / 1e6
        for o in reads:
            if (o["crc"] != r["crc"] or o["uid"] != r["uid"]
                    or not r["open"] < o["open"] <= end + CONFIRM_S):
                continue
            if all(fh == r["crc"] for at, fh in rpc_at if r["open"] + 1e-6 <= at < o["open"]):
                return o
        return None

    extra = collections.Counter()
    for r in records:
        if r["used"]:
            continue
        split = split_from_read(r)
        if split is not None:
            extra["read"] += 1
            problem("records: extra: a cache read split off the read open right after it: "
                    "%s, then %s" % (r["line"], split["line"]))
            continue
        extra[extra_kind(r)] += 1
        if extra_kind(r) != "stat" or r["crc"] not in names:
            problem("records: extra: no client operation explains %s (%s)"
                    % (r["line"], names.get(r["crc"], "unknown file")))

    print("check: records scored against the client's operations (%d records)" % len(records))
    print("check:   %-18s %8s %8s %8s %8s" % ("kind", "expected", "matched", "missing", "extra"))
    for kind in ("write", "read", "truncate", "stat"):
        exp = [e for e in expected if e["kind"] == kind]
        got = sum(1 for e in exp if "record" in e)
        # A stat need not be a record, and zero-byte reads are allowed cache reads.
        print("check:   %-18s %8d %8d %8s %8d%s"
              % (kind if kind != "stat" else "stat (cache read)", len(exp), got,
                 len(exp) - got if kind != "stat" else "-", extra[kind],
                 " (allowed)" if kind == "stat" and extra[kind] else ""))
    for note in notes:
        print("check: note (not asserted): " + note)


def main():
    if len(sys.argv) != 10:
        sys.exit("usage: check_live.py WITNESS_FIELDS OPS CLIENT_OUT TRACEHOUND_STDERR "
                 "RECORDS CLIENT_START CLIENT_END CLIENT_ADDR SERVER_ADDR")
    witness_path, ops_path, client_path, stats_path, records_path = sys.argv[1:6]
    t_start, t_end = float(sys.argv[6]), float(sys.argv[7])
    cli_addr, srv_addr = sys.argv[8], sys.argv[9]

    calls, replies = read_witness(witness_path)
    ops = read_ops(ops_path)
    client_counts, client_totals = read_client(client_path)

    # The witness must have seen the traffic, or the comparison below proves nothing.
    if len(calls) < 40:
        problem("witness: tshark saw only %d RPC calls; the capture is not usable"
                % len(calls))

    th = {}
    for op in ops:
        if op["kind"] != "RPC":
            problem("half RPC in a clean run: " + op["line"])
            continue
        key = (int(op["cport"]), int(op["xid"], 16))
        if key in th:
            problem("RPC reported twice: " + op["line"])
        th[key] = op

    # Every call tshark saw, matched and decoded alike.
    for key, (prog, vers, proc, frame, when) in sorted(calls.items(),
                                                       key=lambda kv: int(kv[1][3])):
        want_prog, want_proc = prog_label(prog, vers), proc_name(prog, vers, proc)
        op = th.get(key)
        if op is None:
            problem("missing: %s %s xid 0x%08x from port %d (tshark frame %s)"
                    % (want_prog, want_proc, key[1], key[0], frame))
            continue
        if op["prog"] != want_prog or op["proc"] != want_proc:
            problem("decoded as %s %s, tshark says %s %s: %s"
                    % (op["prog"], op["proc"], want_prog, want_proc, op["line"]))
        if when is not None and abs(float(op["time"]) - when) > TIME_TOLERANCE_S:
            problem("TIME %s, tshark saw the call's last segment at %.9f: %s"
                    % (op["time"], when, op["line"]))
        if key not in replies:
            problem("tshark saw no reply to 0x%08x, tracehound matched one" % key[1])
            continue
        status, lat = replies[key]
        if prog == 100003 and vers == 3 and proc != 0 and status is not None:
            want = NFS3_STATUS.get(status, str(status))
            if op["status"] != want:
                problem("status %s, tshark says %s: %s" % (op["status"], want, op["line"]))
        check_latency(op, lat)
    for key, op in th.items():
        if key not in calls:
            problem("not in the witness capture: " + op["line"])

    per_proc = collections.Counter((op["prog"], op["proc"]) for op in th.values())
    for prog, proc in REQUIRED:
        if per_proc[(prog, proc)] == 0:
            problem("no %s %s in tracehound's output" % (prog, proc))
    if per_proc[("NFS3", "READDIRPLUS")] + per_proc[("NFS3", "READDIR")] == 0:
        problem("no NFS3 READDIRPLUS or READDIR in tracehound's output")

    # What the client says it did.
    for op_name, (prog, proc) in ONE_RPC_OPS.items():
        if per_proc[(prog, proc)] != client_counts[op_name]:
            problem("%s %s: %d in tracehound's output, the client did %d %s"
                    % (prog, proc, per_proc[(prog, proc)], client_counts[op_name], op_name))
    # fsync is one COMMIT, but libnfs also commits when it closes a file it wrote to.
    if per_proc[("NFS3", "COMMIT")] < client_counts["fsync"]:
        problem("NFS3 COMMIT: %d in tracehound's output, fewer than the client's %d fsync"
                % (per_proc[("NFS3", "COMMIT")], client_counts["fsync"]))
    nfs_ops = [op for op in th.values() if op["prog"] == "NFS3"]
    sums = collections.Counter()
    for op in nfs_ops:
        if op["proc"] in ("WRITE", "READ"):
            for k in ("count", "done"):
                sums[op["proc"] + "." + k] += int(op["kv"].get(k, 0))
    wrote, read = client_totals.get("write_bytes", -1), client_totals.get("read_bytes", -1)
    if sums["WRITE.count"] != wrote or sums["WRITE.done"] != wrote:
        problem("WRITE lines carry count=%d done=%d bytes, the client wrote %d"
                % (sums["WRITE.count"], sums["WRITE.done"], wrote))
    if sums["READ.done"] != read:
        problem("READ lines carry done=%d bytes, the client read %d" % (sums["READ.done"], read))
    if not any(op["proc"] == "LOOKUP" and op["status"] == "NOENT"
               and op["kv"].get("name") == "missing" for op in nfs_ops):
        problem("no NFS3 LOOKUP name=missing with status NOENT (the client's failed stat)")

    frames = check_stats(stats_path)
    check_records(records_path, client_path, ops, t_start, t_end, cli_addr, srv_addr)

    lat_diffs.sort()
    if lat_diffs:
        print("check: |LAT_LAST - tshark rpc.time| over %d single-segment replies: median "
              "%.1f us, max %.1f us (not asserted: af_packet has no RX timestamps)"
              % (len(lat_diffs), lat_diffs[len(lat_diffs) // 2], lat_diffs[-1]))
    print("check: witness %d calls, tracehound %d RPCs, %d frames, wrote %d, read %d: %s"
          % (len(calls), len(th), frames or 0, wrote, read,
             "%d problems" % len(problems) if problems else "ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
