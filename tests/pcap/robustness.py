#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Robustness of `tracehound capture` against damaged captures.

README promises: "No record is ever emitted with bytes that were not seen", and
every loss is counted by reason. This test generates one pcap with `tracehound
gen` (with its ground truth), damages it in five deterministic ways, decodes
every variant with `tracehound capture` through net_pcap and checks:

  every line   parses; an RPC line's transport, endpoints and XID are in the
               truth, and so is a CALL/REPLY half line's, unless the half line
               is one the damage made up (counted and reported, allowed);
  RPC lines    PROGRAM, PROC, STATUS and every key=value printed equal the
               truth; a field the truth has may be missing only when the line
               says cut=; no field the truth lacks (no dup=: a frame written
               twice is a mirror port's copy; done_min= in place of a listing's done=, at
               most that count, where the capture kept part of the listing);
               at most one RPC line per RPC;
  CALL lines   PROGRAM, PROC and every call field printed equal the truth;
  REPLY lines  STATUS agrees with the truth where it names one;
  timing       TIME and LAT_FIRST exact (the first segment of the call and of
               the reply must have been seen for the line to exist); LAT_LAST
               exact unless a frame of that connection was dropped or moved
               between the call and the reply, where it may only grow (the
               call's last segment was not seen), up to LAT_FIRST;
  counters     exit status 0; the statistics count exactly the frames and
               bytes in the file and name the damage (TCP gaps, retransmitted
               segments, frames cut by the capture length, hunting, unmatched
               calls and replies); RPC/CALL/REPLY line counts equal the
               matched/call-only/reply-only counters.
The undamaged pcap must reproduce the truth exactly (the control), with the one
documented exception (a UDP reply in IP fragments is decoded from its first
fragment: fields at its end are left out and the line says cut=reply; a
listing's done= is then done_min=, the entries in that fragment).

A sixth variant comes from gen itself: the same traffic with --tap-reorder 0.05,
a SPAN port that lets a TCP frame through after the next frame of the other
direction of its connection (a reply before the end of its call), each frame at
its own time. Nothing is lost, so gen's truth is the same file, and the capture
must reproduce it exactly, as the control does: no cut=, no TCP gap, no
retransmission; every segment that waited for the other direction's bytes it
acknowledges saw them come.

A seventh, tapdup, is gen's --tap-dup 0.05: a mirror port that shows a frame twice
(a SPAN session of both ends' switch ports, or of a port's rx and tx), the copy
byte for byte the same and 1 to 50 us later. Nothing is lost and nothing was sent
twice, so the capture must reproduce the truth exactly, as the control does: no
retransmission, no duplicate UDP call, no unmatched call or reply, no gap, and its
counter of mirror copies equal to the copies gen wrote.

Exit status: 0 every invariant held, 1 an invariant failed, 2 usage or tool
failure.
"""

import argparse
import ipaddress
import os
import random
import re
import struct
import subprocess
import sys

# The generated workload: every transport, both address families, a VLAN tag,
# pipelined calls sharing segments and UDP calls and replies in IP fragments.
GEN_ARGS = ['--ops', '2500', '--mix', 'mixed', '--clients', '12', '--servers', '2',
            '--udp-share', '0.4', '--ipv6-share', '0.3', '--vlan', '1', '--pipeline', '0.3']

PCAP_MAGIC_NS = 0xa1b23c4d
PCAP_MAGIC_US = 0xa1b2c3d4
LINKTYPE_ETHERNET = 1

# Fields that the damage itself may add to a line, not present in the truth.
CUT_KEY = 'cut'
DUP_KEY = 'dup'
DONE_MIN_KEY = 'done_min'


def die(msg, rc=2):
    print('robustness: ' + msg, file=sys.stderr)
    sys.exit(rc)


# --- classic pcap -------------------------------------------------------------

class Frame:
    __slots__ = ('ts_sec', 'ts_frac', 'wirelen', 'data', 'conn', 'udp_rpc', 'tcp_dir',
                 'tcp_payload', 'later_frag')

    def __init__(self, ts_sec, ts_frac, wirelen, data):
        self.ts_sec = ts_sec
        self.ts_frac = ts_frac
        self.wirelen = wirelen
        self.data = data
        self.conn = None                # (proto, endpoint, endpoint) sorted, or None
        self.udp_rpc = None             # ('call' or 'reply', RPC key) of a UDP first fragment
        self.tcp_dir = None             # (source, destination) of a TCP segment
        self.tcp_payload = 0            # TCP payload bytes in the frame
        self.later_frag = False         # an IP fragment after the first (no L4 header)

    def ns(self, nanos):
        return self.ts_sec * 1000000000 + (self.ts_frac if nanos else self.ts_frac * 1000)

    def cut(self, snaplen):
        f = Frame(self.ts_sec, self.ts_frac, self.wirelen, self.data[:snaplen])
        f.conn, f.udp_rpc, f.tcp_dir, f.tcp_payload, f.later_frag = \
            self.conn, self.udp_rpc, self.tcp_dir, self.tcp_payload, self.later_frag
        return f


class Pcap:
    def __init__(self, endian, magic, header, frames):
        self.endian = endian
        self.magic = magic
        self.header = header            # (vmaj, vmin, thiszone, sigfigs, snaplen, linktype)
        self.frames = frames

    @property
    def nanos(self):
        return self.magic == PCAP_MAGIC_NS

    @classmethod
    def read(cls, path):
        with open(path, 'rb') as f:
            buf = f.read()
        if len(buf) < 24:
            die('%s: too short for a pcap header' % path)
        for endian in ('<', '>'):
            magic = struct.unpack(endian + 'I', buf[:4])[0]
            if magic in (PCAP_MAGIC_NS, PCAP_MAGIC_US):
                break
        else:
            die('%s: not a classic pcap (magic %s)' % (path, buf[:4].hex()))
        header = struct.unpack(endian + 'HHiIII', buf[4:24])
        frames = []
        off = 24
        while off < len(buf):
            if off + 16 > len(buf):
                die('%s: truncated record header at offset %d' % (path, off))
            sec, frac, caplen, wirelen = struct.unpack(endian + 'IIII', buf[off:off + 16])
            off += 16
            if off + caplen > len(buf):
                die('%s: truncated record at offset %d' % (path, off))
            frames.append(Frame(sec, frac, wirelen, buf[off:off + caplen]))
            off += caplen
        return cls(endian, magic, header, frames)

    def write(self, path, frames, snaplen=None):
        header = list(self.header)
        if snaplen is not None:
            header[4] = snaplen
        e = self.endian
        with open(path, 'wb') as f:
            f.write(struct.pack(e + 'I', self.magic) + struct.pack(e + 'HHiIII', *header))
            for fr in frames:
                f.write(struct.pack(e + 'IIII', fr.ts_sec, fr.ts_frac, len(fr.data), fr.wirelen))
                f.write(fr.data)


def endpoint(addr, port):
    return ('[%s]:%d' % (addr, port)) if addr.version == 6 else ('%s:%d' % (addr, port))


def classify(frames):
    """Give each frame its connection (transport and both endpoints, in the truth's
    text form) so damage can be traced to the RPCs around it. Later IP fragments
    carry no ports: they take the first fragment's, found by (source, destination,
    IP id); gen writes the first fragment first."""
    frag_conn = {}
    for fr in frames:
        d = fr.data
        off = 12
        if len(d) < 14:
            continue
        etype = struct.unpack('>H', d[12:14])[0]
        off = 14
        while etype in (0x8100, 0x88a8) and len(d) >= off + 4:
            etype = struct.unpack('>H', d[off + 2:off + 4])[0]
            off += 4
        frag_key = None
        first = True
        if etype == 0x0800 and len(d) >= off + 20:
            ihl = (d[off] & 0x0f) * 4
            total = struct.unpack('>H', d[off + 2:off + 4])[0]
            ident, fl = struct.unpack('>HH', d[off + 4:off + 8])
            proto = d[off + 9]
            src = ipaddress.IPv4Address(d[off + 12:off + 16])
            dst = ipaddress.IPv4Address(d[off + 16:off + 20])
            if fl & 0x3fff:
                frag_key = (src, dst, ident)
                first = (fl & 0x1fff) == 0
            l4 = off + ihl
            l4_end = off + total
        elif etype == 0x86dd and len(d) >= off + 40:
            plen = struct.unpack('>H', d[off + 4:off + 6])[0]
            proto = d[off + 6]
            src = ipaddress.IPv6Address(d[off + 8:off + 24])
            dst = ipaddress.IPv6Address(d[off + 24:off + 40])
            l4 = off + 40
            l4_end = l4 + plen
            while proto in (0, 43, 60, 44) and len(d) >= l4 + 8:
                if proto == 44:
                    fo, ident = struct.unpack('>HI', d[l4 + 2:l4 + 8])
                    frag_key = (src, dst, ident)
                    first = (fo & 0xfff8) == 0
                    proto = d[l4]
                    l4 += 8
                else:
                    proto, hlen = d[l4], (d[l4 + 1] + 1) * 8
                    l4 += hlen
        else:
            continue
        if proto not in (6, 17):
            continue
        if not first:
            fr.conn = frag_conn.get(frag_key)
            fr.later_frag = True
            continue
        if len(d) < l4 + 4:
            continue
        sport, dport = struct.unpack('>HH', d[l4:l4 + 4])
        a, b = endpoint(src, sport), endpoint(dst, dport)
        name = 'tcp' if proto == 6 else 'udp'
        fr.conn = (name,) + tuple(sorted((a, b)))
        if frag_key is not None:
            frag_conn[frag_key] = fr.conn
        if proto == 17 and len(d) >= l4 + 16:
            # The RPC message starts the datagram: XID, then 0 for a call, 1 for a reply.
            xid, mtype = struct.unpack('>II', d[l4 + 8:l4 + 16])
            if mtype in (0, 1):
                cl, sv = (a, b) if mtype == 0 else (b, a)
                fr.udp_rpc = (('call', 'reply')[mtype], ('udp', cl, sv, '0x%08x' % xid))
        if proto == 6 and len(d) >= l4 + 13:
            doff = (d[l4 + 12] >> 4) * 4
            fr.tcp_dir = (a, b)
            fr.tcp_payload = max(0, l4_end - (l4 + doff))


# --- damage -------------------------------------------------------------------

class Variant:
    """One damaged copy of the capture: the frames in file order and what was done."""

    def __init__(self, name, what, frames, snaplen=None, damaged=(), duplicated=(),
                 tcp_gaps=None, reordered=None, copies=None, bare_copies=None):
        self.name = name
        self.what = what
        self.frames = frames
        self.snaplen = snaplen
        self.damaged = list(damaged)        # (connection, ns) of frames lost or moved
        self.duplicated = list(duplicated)  # frames written twice
        self.tcp_gaps = tcp_gaps            # runs of lost TCP payload the decoder must see
        self.reordered = reordered          # swapped pairs of one TCP direction's data
        self.copies = copies                # frames the mirror wrote twice (gen --tap-dup)
        self.bare_copies = bare_copies      # of them, TCP segments without payload


def count_gaps(frames, lost):
    """Holes in the TCP byte streams: a run of lost segments with payload in one
    direction, followed by a segment that arrives. gen writes every stream in order,
    without retransmissions, so each such run is one gap the decoder must notice."""
    pending = set()
    gaps = 0
    for fr in frames:
        if fr.tcp_dir is None or fr.tcp_payload == 0:
            continue
        if id(fr) in lost:
            pending.add(fr.tcp_dir)
        elif fr.tcp_dir in pending:
            pending.discard(fr.tcp_dir)
            gaps += 1
    return gaps


def make_variants(pcap, seed):
    frames = pcap.frames
    nanos = pcap.nanos
    out = [Variant('control', 'undamaged', list(frames))]

    rng = random.Random('%d:loss' % seed)
    kept, lost = [], []
    for fr in frames:
        (lost if rng.random() < 0.02 else kept).append(fr)
    out.append(Variant('loss', '2%% of frames dropped (%d)' % len(lost), kept,
                       damaged=[(fr.conn, fr.ns(nanos)) for fr in lost],
                       tcp_gaps=count_gaps(frames, {id(fr) for fr in lost})))

    out.append(Variant('snaplen', 'every frame cut to 200 bytes',
                       [fr.cut(200) for fr in frames], snaplen=200))

    rng = random.Random('%d:dup' % seed)
    res, dups = [], []
    for fr in frames:
        res.append(fr)
        if rng.random() < 0.05:
            res.append(fr)
            dups.append(fr)
    out.append(Variant('dup', '5%% of frames written twice, as a mirror port copies them (%d)'
                       % len(dups), res, duplicated=dups))

    rng = random.Random('%d:swap' % seed)
    res, moved = list(frames), []
    i = same = 0
    while i + 1 < len(res):
        if rng.random() < 0.03:
            res[i], res[i + 1] = res[i + 1], res[i]
            moved += [res[i], res[i + 1]]
            # Both carry data one way on one connection: the first to arrive leaves a hole
            # the second fills.
            if res[i].tcp_dir is not None and res[i].tcp_dir == res[i + 1].tcp_dir and \
                    res[i].tcp_payload > 0 and res[i + 1].tcp_payload > 0:
                same += 1
            i += 2
        else:
            i += 1
    out.append(Variant('reorder', '3%% of adjacent pairs swapped (%d)' % (len(moved) // 2),
                       res, damaged=[(fr.conn, fr.ns(nanos)) for fr in moved],
                       tcp_gaps=0, reordered=same))

    start = len(frames) * 40 // 100
    out.append(Variant('midstart', 'first 40%% of frames dropped (%d)' % start,
                       frames[start:]))
    return out


# --- tracehound's output ------------------------------------------------------

LINE_RE = re.compile(r'^(\d+)\.(\d{9}) (RPC|CALL|REPLY) (tcp|udp) (\S+) (\S+) (0x[0-9a-f]{8}) '
                     r'(\S+) (\S+) (\S+) (-|-?\d+\.\d{3}) (-|-?\d+\.\d{3})((?: [a-z_0-9]+=\S*)*)$')


class Line:
    __slots__ = ('text', 'time', 'kind', 'key', 'prog', 'proc', 'status', 'lat_first',
                 'lat_last', 'kv', 'order')

    def __init__(self, text):
        m = LINE_RE.match(text)
        if not m:
            raise ValueError('unparsable line: ' + text)
        self.text = text
        self.time = int(m.group(1)) * 1000000000 + int(m.group(2))
        self.kind = m.group(3)
        self.key = (m.group(4), m.group(5), m.group(6), m.group(7))
        self.prog, self.proc, self.status = m.group(8), m.group(9), m.group(10)
        self.lat_first = lat_ns(m.group(11))
        self.lat_last = lat_ns(m.group(12))
        self.kv = {}
        self.order = []
        for item in m.group(13).split():
            k, _, v = item.partition('=')
            self.kv[k] = v
            self.order.append(k)


def lat_ns(text):
    if text == '-':
        return None
    sign = -1 if text.startswith('-') else 1
    us, _, frac = text.lstrip('-').partition('.')
    return sign * (int(us) * 1000 + int(frac))


def read_lines(path):
    with open(path) as f:
        return [l.rstrip('\n') for l in f if l.strip() and not l.startswith('#')]


STAT_RE = re.compile(r'^  (\d+)\s+(\S.*)$')


def parse_stats(stderr):
    """The final statistics block: '  N   description' lines after its title."""
    idx = stderr.rfind('--- tracehound capture statistics')
    if idx < 0:
        return None
    stats = {}
    for line in stderr[idx:].splitlines():
        m = STAT_RE.match(line)
        if m:
            stats[m.group(2).strip()] = int(m.group(1))
    return stats


def stat(stats, prefix):
    """A counter by the start of its description (the texts carry explanations)."""
    found = [v for k, v in stats.items() if k.startswith(prefix)]
    if len(found) != 1:
        raise KeyError('statistics: %d counters start with %r' % (len(found), prefix))
    return found[0]


def run_capture(tracehound, pcap, out, timeout):
    cmd = [tracehound, 'capture', '-o', out, '--', '--no-huge', '-m', '256', '--no-pci',
           '--no-shconf', '--file-prefix', 'th-rob-%d' % os.getpid(),
           '--vdev=net_pcap0,rx_pcap=' + os.path.abspath(pcap)]
    try:
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, '', 'did not finish within %d s' % timeout
    err = res.stderr.decode('utf-8', 'replace')
    return res.returncode, err, ' '.join(cmd)


# --- invariants ---------------------------------------------------------------

class Report:
    def __init__(self, name, what):
        self.name = name
        self.what = what
        self.failures = []      # (invariant, truth line or '', tracehound line or '')
        self.m = {}             # metrics for the table
        self.counters = []      # 'name=value' of the counters checked

    def fail(self, why, truth='', ours=''):
        self.failures.append((why, truth, ours))


def side_by_side(why, truth, ours):
    return '  %s\n    truth:      %s\n    tracehound: %s' % (why, truth or '(none)',
                                                            ours or '(none)')


def damage_near(variant, line):
    """Was a frame of this RPC's connection dropped or moved between its call and its
    reply (inclusive)? Then the call's last segment may not have been seen."""
    conn = (line.key[0],) + tuple(sorted(line.key[1:3]))
    lo, hi = line.time, line.time + (line.lat_first or 0)
    return any(c == conn and lo <= ns <= hi for c, ns in variant.damaged)


def is_listing_low(t, o):
    """done_min= in place of done=: a listing the capture kept in part, whose entries
    before the cut are no more than the truth's."""
    return DONE_MIN_KEY in o.kv and 'done' in t.kv and 'done' not in o.kv and \
        o.kv[DONE_MIN_KEY].isdigit() and int(o.kv[DONE_MIN_KEY]) <= int(t.kv['done'])


def check_rpc(rep, variant, t, o):
    for name in ('prog', 'proc', 'status'):
        if getattr(t, name) != getattr(o, name):
            rep.fail('%s differs on an RPC line' % name.upper(), t.text, o.text)
            return False
    cut = CUT_KEY in o.kv
    for k, v in o.kv.items():
        if k == CUT_KEY:
            continue
        if k == DUP_KEY and k not in t.kv:
            rep.fail('dup= on a call the client did not send again', t.text, o.text)
            return False
        if k == 'auth' and v == '?' and o.kv.get(CUT_KEY) in ('call', 'both'):
            continue    # the cut reached into the credential: unseen, and said so
        if k == DONE_MIN_KEY and is_listing_low(t, o):
            continue
        if k not in t.kv:
            rep.fail('field %s= is not in the truth' % k, t.text, o.text)
            return False
        if t.kv[k] != v:
            rep.fail('field %s= differs (truth %s, ours %s)' % (k, t.kv[k], v), t.text, o.text)
            return False
    missing = [k for k in t.kv if k not in o.kv and not (k == 'done' and is_listing_low(t, o))]
    if missing and not cut:
        rep.fail('fields %s left out without cut=' % ' '.join(missing), t.text, o.text)
        return False
    if o.time != t.time:
        rep.fail('TIME differs (the call\'s first segment was seen)', t.text, o.text)
        return False
    if o.lat_first != t.lat_first:
        rep.fail('LAT_FIRST differs (both first segments were seen)', t.text, o.text)
        return False
    if o.lat_last != t.lat_last:
        if not damage_near(variant, o):
            rep.fail('LAT_LAST differs though no frame around this RPC was lost or moved',
                     t.text, o.text)
            return False
        if not t.lat_last <= o.lat_last <= o.lat_first:
            rep.fail('LAT_LAST outside [truth LAT_LAST, LAT_FIRST]', t.text, o.text)
            return False
        rep.m['lat_moved'] += 1
    return True


def check_half(rep, t, o):
    if o.kind == 'CALL':
        if (o.prog, o.proc, o.status) != (t.prog, t.proc, '-'):
            rep.fail('PROGRAM/PROC of a CALL line differ from the truth', t.text, o.text)
            return
        if o.time != t.time:
            rep.fail('TIME of a CALL line differs from the call\'s first segment', t.text, o.text)
            return
    else:
        if (o.prog, o.proc) != ('?', '?'):
            rep.fail('a REPLY line names a program', t.text, o.text)
            return
        if o.status not in ('?', '-') and o.status != t.status and not \
                (o.status == 'OK' and t.status not in RPC_LEVEL_STATUS):
            rep.fail('STATUS of a REPLY line differs from the truth', t.text, o.text)
            return
    for k, v in o.kv.items():
        if k in (CUT_KEY, DUP_KEY):
            continue
        if t.kv.get(k) != v:
            rep.fail('field %s= of a half line differs from the truth' % k, t.text, o.text)
            return


# RPC-level statuses a REPLY line can name without knowing the procedure; any other
# accepted reply reads OK there (its nfsstat needs the procedure's result layout).
RPC_LEVEL_STATUS = {'PROG_UNAVAIL', 'PROC_UNAVAIL', 'GARBAGE_ARGS', 'SYSTEM_ERR',
                    'PROG_MISMATCH', 'RPC_MISMATCH', 'AUTH_ERROR'}


def check_lines(rep, variant, truth, ours):
    by_key = {t.key: t for t in truth}
    rpc_seen = {}
    m = rep.m
    for k in ('identical', 'cut', 'half', 'made_up', 'lat_moved', 'rpc'):
        m[k] = 0
    for o in ours:
        t = by_key.get(o.key)
        if CUT_KEY in o.kv:
            m['cut'] += 1
        if o.kind != 'RPC':
            m['half'] += 1
            if t is None:
                m['made_up'] += 1
            else:
                check_half(rep, t, o)
            continue
        m['rpc'] += 1
        if t is None:
            rep.fail('an RPC line for a transport+endpoints+XID absent from the truth', '',
                     o.text)
            continue
        if o.key in rpc_seen:
            rep.fail('a second RPC line for the same RPC', rpc_seen[o.key], o.text)
            continue
        rpc_seen[o.key] = o.text
        if check_rpc(rep, variant, t, o) and o.text == t.text:
            m['identical'] += 1
    return rpc_seen


def accept_udp_frag_cut(t, o):
    """The documented difference on an undamaged capture: a UDP reply in IP fragments
    is decoded from its first fragment; fields at its end are left out, cut=reply."""
    if o.key[0] != 'udp' or o.kv.get(CUT_KEY) != 'reply':
        return False
    if o.text.split(' ')[:11] != t.text.split(' ')[:11]:
        return False
    low = is_listing_low(t, o)
    kept = [DONE_MIN_KEY if k == 'done' and low else k for k in t.order
            if k in o.kv or (k == 'done' and low)]
    return kept + [CUT_KEY] == o.order and all(
        k == DONE_MIN_KEY or t.kv[k] == o.kv[k] for k in kept)


def check_control(rep, truth, ours):
    by_key = {o.key: o for o in ours if o.kind == 'RPC'}
    if len(ours) != len(truth) or len(by_key) != len(truth):
        rep.fail('the undamaged capture gives %d lines (%d RPC lines), the truth has %d'
                 % (len(ours), len(by_key), len(truth)))
    for t in sorted(truth, key=lambda x: x.text):
        o = by_key.get(t.key)
        if o is None:
            rep.fail('RPC missing from the undamaged capture', t.text, '')
        elif o.text != t.text and not accept_udp_frag_cut(t, o):
            rep.fail('line differs on the undamaged capture', t.text, o.text)


# --- counters -----------------------------------------------------------------

GAPS_LOST = 'TCP gaps that lost a record boundary'
GAPS_INSIDE = 'TCP gaps inside record data'
RECORDS_LOST = 'RPC records lost to TCP gaps'
RETRANS = 'TCP segments retransmitted'
SYN_AGAIN = 'TCP SYNs seen again'
REORDERED = 'TCP segments put back in order (reordering repaired)'
HELD_ACK = "TCP segments held for the other direction's late bytes"
ACK_REORDERED = 'TCP segments let in after the bytes they acknowledge'
HUNT_SKIP = 'TCP segments skipped hunting'
HUNT_FOUND = 'TCP record boundary found by hunting'
FRAMES_CUT = 'frames cut by the capture length'
COPIES = 'frames seen again within decode.copy_window'  # a mirror port's copies
UNM_CALLS = 'unmatched calls'
UNM_REPLIES = 'unmatched replies'
DUP_CALLS = 'calls retransmitted (duplicates)'
PUSHED = 'calls pushed out early'
MATCHED = 'RPCs matched'


def check_counters(rep, variant, truth, ours, stats):
    def want(cond, label, value, expect):
        rep.counters.append('%s=%d' % (label, value))
        if not cond:
            rep.fail('counter "%s" is %d, expected %s' % (label, value, expect))

    def get(prefix):
        try:
            return stat(stats, prefix)
        except KeyError as e:
            rep.fail(str(e))
            return -1

    frames = variant.frames
    n = get('frames received')
    want(n == len(frames), 'frames', n, '%d (frames in the file)' % len(frames))
    kinds = {k: sum(1 for o in ours if o.kind == k) for k in ('RPC', 'CALL', 'REPLY')}
    v = get(MATCHED)
    want(v == kinds['RPC'], 'matched', v, '%d (RPC lines)' % kinds['RPC'])
    v = get(UNM_CALLS) + get(PUSHED)
    want(v == kinds['CALL'], 'unmatched calls+pushed out', v, '%d (CALL lines)' % kinds['CALL'])
    v = get(UNM_REPLIES)
    want(v == kinds['REPLY'], 'unmatched replies', v, '%d (REPLY lines)' % kinds['REPLY'])

    name = variant.name
    if name == 'tapreorder':
        for prefix in (GAPS_LOST, GAPS_INSIDE, RECORDS_LOST, RETRANS, HUNT_SKIP, FRAMES_CUT,
                       DUP_CALLS, REORDERED):
            v = get(prefix)
            want(v == 0, prefix, v, '0 (frames moved across directions, nothing lost)')
        v = get(MATCHED)
        want(v == len(truth), 'matched', v, '%d (truth lines)' % len(truth))
        held = get(HELD_ACK)
        want(held > 0, HELD_ACK, held, '> 0 (gen moved %d frames)' % variant.reordered)
        v = get(ACK_REORDERED)
        want(v == held, ACK_REORDERED, v, '%d (every segment held for them)' % held)
    elif name == 'tapdup':
        # Every copy is the mirror's: dropped and counted as such, never taken for a
        # retransmission, a duplicate call or an answer without a call; a SYN's copy is
        # one seen again, not a new connection.
        for prefix in (GAPS_LOST, GAPS_INSIDE, RECORDS_LOST, RETRANS, HUNT_SKIP,
                       FRAMES_CUT, DUP_CALLS, REORDERED, UNM_CALLS, UNM_REPLIES, PUSHED):
            v = get(prefix)
            want(v == 0, prefix, v, '0 (frames seen twice, nothing lost or resent)')
        v = get(MATCHED)
        want(v == len(truth), 'matched', v, '%d (truth lines)' % len(truth))
        v = get(COPIES)
        want(v == variant.copies, COPIES, v,
             '%d (copies gen --tap-dup wrote of frames that carry bytes)' % variant.copies)
        v = get(SYN_AGAIN)
        want(v <= variant.bare_copies, SYN_AGAIN, v,
             'at most %d (copies of TCP segments without payload)' % variant.bare_copies)
    elif name == 'control':
        for prefix in (GAPS_LOST, GAPS_INSIDE, RECORDS_LOST, RETRANS, HUNT_SKIP, FRAMES_CUT,
                       DUP_CALLS):
            v = get(prefix)
            want(v == 0, prefix, v, '0 on an undamaged capture')
        v = get(MATCHED)
        want(v == len(truth), 'matched', v, '%d (truth lines)' % len(truth))
    elif name in ('loss', 'reorder'):
        v = get(GAPS_LOST) + get(GAPS_INSIDE)
        if variant.tcp_gaps is not None:
            want(v == variant.tcp_gaps, 'TCP gaps (both kinds)', v,
                 '%d (runs of dropped TCP segments with payload)' % variant.tcp_gaps)
        else:
            want(v > 0, 'TCP gaps (both kinds)', v, '> 0')
        if name == 'loss':
            v = get(UNM_CALLS)
            want(v > 0, UNM_CALLS, v, '> 0')
            v = get(UNM_REPLIES)
            want(v > 0, UNM_REPLIES, v, '> 0')
            v = get(HUNT_FOUND)
            want(v > 0, HUNT_FOUND, v, '> 0')
        else:
            # A swapped pair of one direction's data is put back in order: the later
            # segment waits for the earlier one; nothing lost, nothing "retransmitted".
            v = get(REORDERED)
            want(v == variant.reordered, REORDERED, v,
                 '%d (swapped pairs of one TCP direction, both with data)' % variant.reordered)
            v = get(RETRANS)
            want(v == 0, RETRANS, v, '0 (the earlier segment of a swapped pair fills its hole)')
    elif name == 'snaplen':
        # Later IP fragments are skipped unread (README), so their cut loses nothing;
        # every other frame with caplen < wire length lost bytes tracehound reads.
        expect = sum(1 for fr in frames if len(fr.data) < fr.wirelen and not fr.later_frag)
        v = get(FRAMES_CUT)
        want(v == expect, FRAMES_CUT, v,
             '%d (frames with caplen < wire length, later IP fragments aside)' % expect)
        v = get('call arguments cut') + get('reply results cut')
        want(v > 0, 'arguments/results cut', v, '> 0')
        v = get(HUNT_FOUND)
        want(v > 0, HUNT_FOUND, v, '> 0')
    elif name == 'dup':
        # Each frame written twice at one time is a mirror port's copy: counted, not decoded,
        # where it carries bytes (a TCP segment with payload, a UDP datagram or fragment).
        expect = sum(1 for fr in variant.duplicated
                     if fr.tcp_payload > 0 or (fr.conn and fr.conn[0] == 'udp'))
        v = get(COPIES)
        want(v == expect, COPIES, v, '%d (duplicated frames that carry bytes)' % expect)
        for prefix, why in ((RETRANS, 'a copy is no retransmission'),
                            (DUP_CALLS, 'a copy is no call sent again'),
                            (UNM_REPLIES, 'a copy is no reply without its call')):
            v = get(prefix)
            want(v == 0, prefix, v, '0 (%s)' % why)
        if any(DUP_KEY in o.kv for o in ours):
            rep.fail('dup= on a line: a copy is no call sent again')
        v = kinds['RPC']
        want(v == len(truth), 'RPC lines', v, '%d (every RPC of the truth)' % len(truth))
        for prefix in (GAPS_LOST, GAPS_INSIDE, RECORDS_LOST, HUNT_SKIP):
            v = get(prefix)
            want(v == 0, prefix, v, '0 (nothing was lost)')
    elif name == 'midstart':
        v = get(HUNT_FOUND)
        want(v > 0, HUNT_FOUND, v, '> 0')
        v = get(UNM_REPLIES) + get('TCP/UDP payloads that are not RPC')
        want(v > 0, 'replies without their call', v, '> 0')


SUMMARY_RE = re.compile(r'^summary: (.*)$', re.M)
SUMMARY_ITEM_RE = re.compile(r'^(\d+) (.*)$')


def check_summary(rep, variant, ours, stats, err):
    """The block's last line names each kind of loss with what the rows above and the
    lines out say: TCP gaps, RPCs decoded in part (cut= lines), RPCs without their call or
    reply (CALL and REPLY lines), records lost; on the undamaged capture only the documented
    cut replies; and 'nothing lost' only when there is nothing to name."""
    m = SUMMARY_RE.search(err)
    if m is None:
        rep.fail('no summary line after the statistics')
        return
    text = m.group(1)
    items = {}
    if not text.startswith('nothing lost'):
        for part in text.split(', '):
            im = SUMMARY_ITEM_RE.match(part)
            if im is None:
                rep.fail('summary item not "N what": %r' % part)
                continue
            what = im.group(2).replace('RPC without its', 'RPCs without their')
            what = what.replace('call or reply decoded', 'calls or replies decoded')
            what = re.sub(r'^(TCP gap|RPC record|frame)\b(?!s)', r'\1s', what)
            items[what] = int(im.group(1))
    want = {
        'TCP gaps': stat(stats, GAPS_LOST) + stat(stats, GAPS_INSIDE),
        'calls or replies decoded in part (cut=)':
            sum(2 if o.kv[CUT_KEY] == 'both' else 1 for o in ours if CUT_KEY in o.kv),
        'RPCs without their call or reply': sum(1 for o in ours if o.kind != 'RPC'),
        'frames cut short': stat(stats, FRAMES_CUT) + stat(stats, 'truncated link header') +
        stat(stats, 'truncated IP header') + stat(stats, 'truncated TCP/UDP header'),
    }
    for what, n in want.items():
        got = items.get(what, 0)
        rep.counters.append('summary %s=%d' % (what, got))
        if got != n:
            rep.fail('summary says %d %s, the block and lines %d' % (got, what, n))
    if variant.name in UNDAMAGED and \
            set(items) - {'calls or replies decoded in part (cut=)'}:
        rep.fail('summary of the undamaged capture names losses: %s' % text)


# --- driver -------------------------------------------------------------------

# Variants whose capture holds every frame of the truth: it must reproduce it exactly.
UNDAMAGED = ('control', 'tapreorder', 'tapdup')

TAP_REORDERED_RE = re.compile(r"frames written after the other direction's next frame (\d+)")
TAP_COPIES_RE = re.compile(r'frames the mirror wrote twice (\d+)')


def gen_tap(args, truth_path, name, option, summary_re):
    """gen's pcap of the same seed with OPTION 0.05 (frames, and the count its summary line
    SUMMARY_RE gives); the truth must be the same as without it."""
    base = os.path.join(args.workdir, 'gen-%d-%s.pcap' % (args.seed, name))
    truth2 = base[:-5] + '.truth'
    cmd = [args.tracehound, 'gen', '--seed', str(args.seed)] + GEN_ARGS + \
        [option, '0.05', '-o', base, '--truth', truth2]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = res.stdout.decode('utf-8', 'replace')
    m = summary_re.search(out)
    if res.returncode != 0 or m is None:
        die('%s failed (rc %d):\n%s' % (' '.join(cmd), res.returncode, out))
    with open(truth_path, 'rb') as a, open(truth2, 'rb') as b:
        if a.read() != b.read():
            die('gen %s changed the truth (%s, %s)' % (option, truth_path, truth2))
    pcap = Pcap.read(base)
    classify(pcap.frames)
    return pcap.frames, int(m.group(1))


def tap_reorder_variant(args, truth_path):
    """The same traffic from gen with --tap-reorder 0.05: the same truth, frames moved."""
    frames, n = gen_tap(args, truth_path, 'tapreorder', '--tap-reorder', TAP_REORDERED_RE)
    return Variant('tapreorder', "gen --tap-reorder 0.05: %d frames after the other "
                   "direction's next one" % n, frames, reordered=n)


def tap_dup_variant(args, truth_path):
    """The same traffic from gen with --tap-dup 0.05: the same truth, some frames twice."""
    frames, n = gen_tap(args, truth_path, 'tapdup', '--tap-dup', TAP_COPIES_RE)
    # capture looks for copies of frames that carry bytes: a copy of a bare TCP segment
    # changes nothing (a SYN's is counted by the stream, as seen again).
    seen, carrying, bare = set(), 0, 0
    for fr in frames:
        if fr.data not in seen:
            seen.add(fr.data)
        elif fr.tcp_payload > 0 or (fr.conn and fr.conn[0] == 'udp'):
            carrying += 1
        else:
            bare += 1
    if carrying + bare != n:
        die('gen --tap-dup says %d copies, the pcap holds %d' % (n, carrying + bare))
    return Variant('tapdup', 'gen --tap-dup 0.05: %d frames written twice, 1 to 50 us apart'
                   % n, frames, copies=carrying, bare_copies=bare)


# Variants gen makes from the same seed, by name.
GEN_VARIANTS = (('tapreorder', tap_reorder_variant), ('tapdup', tap_dup_variant))


def run_variant(args, pcap, variant, truth):
    rep = Report(variant.name, variant.what)
    path = os.path.join(args.workdir, variant.name + '.pcap')
    out = os.path.join(args.workdir, variant.name + '.out')
    pcap.write(path, variant.frames, variant.snaplen)
    if os.path.exists(out):
        os.unlink(out)
    rc, err, cmd = run_capture(args.tracehound, path, out, args.timeout)
    with open(out + '.stderr', 'w') as f:
        f.write(err)
    if rc != 0:
        rep.fail('tracehound capture exited with %s on %s (stderr in %s.stderr): %s'
                 % (rc, path, out, cmd))
        return rep
    stats = parse_stats(err)
    if stats is None:
        rep.fail('no statistics block on stderr (%s.stderr)' % out)
        return rep
    ours = []
    for text in read_lines(out):
        try:
            ours.append(Line(text))
        except ValueError as e:
            rep.fail(str(e), '', text)
    if variant.name in UNDAMAGED:
        check_control(rep, truth, ours)
    check_lines(rep, variant, truth, ours)
    check_counters(rep, variant, truth, ours, stats)
    check_summary(rep, variant, ours, stats, err)
    rep.m['truth'] = len(truth)
    rep.m['out'] = len(ours)
    if args.verbose:
        for k, v in stats.items():
            print('  %s %-8d %s' % (variant.name, v, k))
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tracehound', required=True, help='the tracehound binary')
    ap.add_argument('--workdir', required=True, help='where pcaps and outputs are written')
    ap.add_argument('--seed', type=int, default=7, help='gen seed and damage seed')
    ap.add_argument('--timeout', type=int, default=120, help='seconds per capture run')
    ap.add_argument('--limit', type=int, default=2, help='examples printed per kind of failure')
    ap.add_argument('--verbose', action='store_true', help='print every counter')
    ap.add_argument('--only', help='comma-separated variants to run (default all)')
    args = ap.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    base = os.path.join(args.workdir, 'gen-%d.pcap' % args.seed)
    truth_path = base[:-5] + '.truth'
    cmd = [args.tracehound, 'gen', '--seed', str(args.seed)] + GEN_ARGS + \
        ['-o', base, '--truth', truth_path]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if res.returncode != 0:
        die('%s failed (rc %d):\n%s' % (' '.join(cmd), res.returncode,
                                        res.stdout.decode('utf-8', 'replace')))
    pcap = Pcap.read(base)
    if pcap.header[5] != LINKTYPE_ETHERNET:
        die('%s: link type %d, expected Ethernet' % (base, pcap.header[5]))
    classify(pcap.frames)
    truth = [Line(t) for t in read_lines(truth_path)]
    if len({t.key for t in truth}) != len(truth):
        die('%s: a transport+endpoints+XID repeats in the truth' % truth_path)

    only = set(args.only.split(',')) if args.only else None
    variants = make_variants(pcap, args.seed)
    for name, make in GEN_VARIANTS:
        if only is None or name in only:
            variants.append(make(args, truth_path))
    if only is not None:
        variants = [v for v in variants if v.name in only]
    reports = [run_variant(args, pcap, v, truth) for v in variants]

    cols = ('variant', 'truth', 'out', 'identical', 'cut=', 'half', 'made-up half',
            'LAT_LAST moved', 'failures')
    rows = [(r.name, r.m.get('truth', '-'), r.m.get('out', '-'), r.m.get('identical', '-'),
             r.m.get('cut', '-'), r.m.get('half', '-'), r.m.get('made_up', '-'),
             r.m.get('lat_moved', '-'), len(r.failures)) for r in reports]
    w = [max(len(str(x)) for x in col) for col in zip(cols, *rows)]
    print('gen --seed %d %s' % (args.seed, ' '.join(GEN_ARGS)))
    for row in [cols] + rows:
        print('  '.join(str(x).rjust(w[i]) if i else str(x).ljust(w[i])
                        for i, x in enumerate(row)))
    print()
    for r in reports:
        print('%s (%s): counters checked: %s' % (r.name, r.what, ', '.join(r.counters)))
    failed = False
    for r in reports:
        if not r.failures:
            continue
        failed = True
        print('\n%s: %d invariant failures, by kind, %d example(s) each:'
              % (r.name, len(r.failures), args.limit))
        kinds = {}
        for why, t, o in r.failures:
            kinds.setdefault(re.sub(r'\(truth .*\)|\d+', 'N', why), []).append((why, t, o))
        for kind, items in sorted(kinds.items(), key=lambda x: -len(x[1])):
            print('  %d x %s' % (len(items), kind))
            for why, t, o in items[:args.limit]:
                print(side_by_side(why, t, o) if (t or o) else '  ' + why)
    print('\nrobustness: %s' % ('FAILED' if failed else 'all invariants held'))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
