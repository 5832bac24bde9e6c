#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Differential test of tracehound's RPC decoding against tshark, and golden
test of tracehound against the ground truth that `tracehound gen` writes.

For each pcap:
  1. tshark decodes it (two passes, TCP heuristics first, out-of-order
     reassembly) to PDML. PDML rather than `-T fields` because a frame can hold
     several RPCs and a procedure can hold several handles and attribute
     blocks: only the tree says which value belongs to which RPC and to which
     argument (object vs directory, entry of a READDIRPLUS, wcc before/after).
  2. `tracehound capture` reads the same pcap through net_pcap and writes its
     per-RPC text log (lib/op/th_op.h documents the format).
  3. Every RPC tshark decodes is matched to tracehound's record by
     (transport, client, server, xid) and, where the key repeats, by order.
     The fields compared are listed in FIELDS; a difference is printed with
     both values and the frames it comes from.
With --truth (generated pcaps) tracehound's output is also compared with the
ground-truth file line by line after sorting: that is the golden test and it
must be byte-identical.

Exit status: 0 all identical (or every difference allowed), 1 differences,
2 usage or tool failure, 77 skipped (tshark or the pcaps are missing).
"""

import argparse
import atexit
import difflib
import fnmatch
import ipaddress
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SKIP = 77

PROG_PORTMAP = 100000
PROG_NFS = 100003
PROG_MOUNT = 100005
PROG_NLM = 100021
PROG_NFSACL = 100227

PROG_NAMES = {
    'PORTMAP': PROG_PORTMAP, 'RPCBIND': PROG_PORTMAP, 'NFS': PROG_NFS, 'MOUNT': PROG_MOUNT,
    'NLM': PROG_NLM, 'NFSACL': PROG_NFSACL, 'STATUS': 100024, 'STAT': 100024,
}

# Procedure numbers by program; names for v2/v3/v4 and MOUNT/portmap versions
# share one table per program because only the number is compared.
NFS3_PROCS = ['NULL', 'GETATTR', 'SETATTR', 'LOOKUP', 'ACCESS', 'READLINK', 'READ', 'WRITE',
              'CREATE', 'MKDIR', 'SYMLINK', 'MKNOD', 'REMOVE', 'RMDIR', 'RENAME', 'LINK',
              'READDIR', 'READDIRPLUS', 'FSSTAT', 'FSINFO', 'PATHCONF', 'COMMIT']
NFS2_PROCS = ['NULL', 'GETATTR', 'SETATTR', 'ROOT', 'LOOKUP', 'READLINK', 'READ', 'WRITECACHE',
              'WRITE', 'CREATE', 'REMOVE', 'RENAME', 'LINK', 'SYMLINK', 'MKDIR', 'RMDIR',
              'READDIR', 'STATFS']
PROC_BY_NAME = {
    (PROG_NFS, 2): {n: i for i, n in enumerate(NFS2_PROCS)},
    (PROG_NFS, 3): {n: i for i, n in enumerate(NFS3_PROCS)},
    (PROG_NFS, 4): {'NULL': 0, 'COMPOUND': 1, 'CB_NULL': 0, 'CB_COMPOUND': 1},
    PROG_MOUNT: {'NULL': 0, 'MNT': 1, 'DUMP': 2, 'UMNT': 3, 'UMNTALL': 4, 'EXPORT': 5,
                 'EXPORTALL': 6, 'PATHCONF': 7},
    PROG_PORTMAP: {'NULL': 0, 'SET': 1, 'UNSET': 2, 'GETPORT': 3, 'GETADDR': 3, 'DUMP': 4,
                   'CALLIT': 5, 'GETTIME': 6, 'UADDR2TADDR': 7, 'TADDR2UADDR': 8},
    # rpcbind v4 (RFC 1833), so that the names of GETVERSADDR and the procedures after it
    # read as their numbers (v3 stops at TADDR2UADDR: the table above).
    (PROG_PORTMAP, 4): {'NULL': 0, 'SET': 1, 'UNSET': 2, 'GETADDR': 3, 'DUMP': 4, 'BCAST': 5,
                        'GETTIME': 6, 'UADDR2TADDR': 7, 'TADDR2UADDR': 8, 'GETVERSADDR': 9,
                        'INDIRECT': 10, 'GETADDRLIST': 11, 'GETSTAT': 12},
}

# nfsstat3 (RFC 1813); nfsstat (RFC 1094) is the same numbering plus WFLUSH.
NFS_STATUS = {
    0: 'OK', 1: 'PERM', 2: 'NOENT', 5: 'IO', 6: 'NXIO', 13: 'ACCES', 17: 'EXIST', 18: 'XDEV',
    19: 'NODEV', 20: 'NOTDIR', 21: 'ISDIR', 22: 'INVAL', 27: 'FBIG', 28: 'NOSPC', 30: 'ROFS',
    31: 'MLINK', 63: 'NAMETOOLONG', 66: 'NOTEMPTY', 69: 'DQUOT', 70: 'STALE', 71: 'REMOTE',
    99: 'WFLUSH', 10001: 'BADHANDLE', 10002: 'NOT_SYNC', 10003: 'BAD_COOKIE', 10004: 'NOTSUPP',
    10005: 'TOOSMALL', 10006: 'SERVERFAULT', 10007: 'BADTYPE', 10008: 'JUKEBOX',
}
# mountstat3 (RFC 1813); MOUNT v1 fhstatus carries the same errno values.
MOUNT_STATUS = {
    0: 'OK', 1: 'PERM', 2: 'NOENT', 5: 'IO', 13: 'ACCES', 20: 'NOTDIR', 22: 'INVAL',
    63: 'NAMETOOLONG', 10004: 'NOTSUPP', 10006: 'SERVERFAULT',
}
ACCEPT_STAT = {1: 'PROG_UNAVAIL', 2: 'PROG_MISMATCH', 3: 'PROC_UNAVAIL', 4: 'GARBAGE_ARGS',
               5: 'SYSTEM_ERR'}
REJECT_STAT = {0: 'RPC_MISMATCH', 1: 'AUTH_ERROR'}

# Fields compared, in report order. CORE_FIELDS (with the xid, part of the key) are what
# the issue asks for; EXTRA_FIELDS are the further key=value pairs tshark also decodes,
# and the timing (TIME, LAT_FIRST, LAT_LAST) recomputed from tshark's frame times.
CORE_FIELDS = ['kind', 'prog', 'vers', 'proc', 'status', 'fh', 'off', 'count', 'size']
EXTRA_FIELDS = ['time', 'lat_first', 'lat_last', 'fh2', 'newfh', 'name', 'name2', 'done', 'eof',
                'stable', 'committed', 'pre_size', 'uid', 'gid', 'machine', 'port', 'dup']

# The v3 reply subtree whose post-op attributes describe the object the
# procedure is about (tshark labels each block); the others are directories
# (LOOKUP dir_attributes, CREATE dir_wcc, RENAME todir_wcc, LINK linkdir_wcc)
# or READDIRPLUS entries.
V3_OBJ_ATTR = {
    'GETATTR': 'obj_attributes', 'SETATTR': 'obj_wcc', 'LOOKUP': 'obj_attributes',
    'ACCESS': 'obj_attributes', 'READLINK': 'symlink_attributes', 'READ': 'file_attributes',
    'WRITE': 'file_wcc', 'CREATE': 'obj_attributes', 'MKDIR': 'obj_attributes',
    'SYMLINK': 'obj_attributes', 'MKNOD': 'obj_attributes', 'REMOVE': 'dir_wcc',
    'RMDIR': 'dir_wcc', 'RENAME': 'fromdir_wcc', 'LINK': 'file_attributes',
    'READDIR': 'dir_attributes', 'READDIRPLUS': 'dir_attributes', 'FSSTAT': 'obj_attributes',
    'FSINFO': 'obj_attributes', 'PATHCONF': 'obj_attributes', 'COMMIT': 'file_wcc',
}
V3_NEWFH = {'LOOKUP', 'CREATE', 'MKDIR', 'SYMLINK', 'MKNOD'}
V2_NEWFH = {'LOOKUP', 'CREATE', 'MKDIR'}
STABLE_NAMES = {0: 'unstable', 1: 'data_sync', 2: 'file_sync'}


class Field:
    """One PDML field of a program body, with the label of its top subtree."""
    __slots__ = ('name', 'show', 'value', 'top', 'path')

    def __init__(self, name, show, value, top, path):
        self.name = name
        self.show = show
        self.value = value
        self.top = top
        self.path = path


class Msg:
    """One RPC message (call or reply) as tshark decoded it."""

    def __init__(self):
        self.frame = 0
        self.time = ''          # capture time of the frame that completed the message
        self.first_frame = 0    # frame of the message's first segment or IP fragment
        self.proto = ''
        self.src = ''
        self.dst = ''
        self.xid = 0
        self.is_call = True
        self.prog = None
        self.vers = None
        self.proc = None
        self.rpc = {}           # first occurrence of each rpc.* field
        self.body = []          # Field list of the program layer(s)
        self.is_dup = False


class Rpc:
    """A call with its reply, either side possibly missing."""

    def __init__(self, key):
        self.key = key
        self.call = None
        self.reply = None
        self.dup = 0
        self.expect = {}        # field -> normalised value, filled by expect_fields()

    def frames(self):
        return '%s/%s' % (self.call.frame if self.call else '-',
                          self.reply.frame if self.reply else '-')


def ip(*args):
    subprocess.run(['ip'] + list(args), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def netns_add(ns):
    """Make network namespace ns: False where this machine cannot."""
    try:
        ip('netns', 'add', ns)
    except subprocess.CalledProcessError:
        return False
    return True


def veth_up(ns, a, b):
    """A veth pair a-b in namespace ns, both up, without IPv6 (whose router solicitations
    would be frames the test did not send)."""
    ip('-n', ns, 'link', 'add', a, 'type', 'veth', 'peer', 'name', b)
    for dev in (a, b):
        subprocess.run(['ip', 'netns', 'exec', ns, 'sysctl', '-q', '-w',
                        'net.ipv6.conf.%s.disable_ipv6=1' % dev], check=True)
        ip('-n', ns, 'link', 'set', dev, 'up')


def netns_end(ns, proc):
    """Stop proc (a capture in ns) if it still runs, and remove the namespace."""
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()
    subprocess.run(['ip', 'netns', 'del', ns], stderr=subprocess.DEVNULL)


def die(msg, code=2):
    print('tshark_diff: ' + msg, file=sys.stderr)
    sys.exit(code)


def endpoint(addr, port):
    """Canonical address:port (IPv6 in brackets) so both sides compare as text."""
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:
        return '%s:%s' % (addr, port)
    if ip.version == 6:
        return '[%s]:%s' % (ip.compressed, port)
    return '%s:%s' % (ip, port)


def to_int(text):
    if text is None or text == '':
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def walk(el, top, path, out):
    for child in el:
        name = child.get('name') or ''
        show = child.get('show') or ''
        label = show.split('  ')[0] if name == '' else name
        if name:
            out.append(Field(name, show, child.get('value'), top, path))
        walk(child, top if top else label, path + '/' + label, out)


def tshark_msgs(pcap, extra_opts):
    """Yield every RPC message tshark decodes in pcap, in frame order."""
    # Heuristics first: clients on privileged ports would otherwise be decoded
    # as whatever protocol tshark registers for that port.
    cmd = ['tshark', '-r', pcap, '-2', '-o', 'tcp.try_heuristic_first:TRUE',
           '-o', 'udp.try_heuristic_first:TRUE',
           '-o', 'tcp.reassemble_out_of_order:TRUE', '-T', 'pdml', '-Y', 'rpc'] + extra_opts
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    msgs = []
    for _, el in ET.iterparse(proc.stdout):
        if el.tag != 'packet':
            continue
        frame = 0
        ftime = ''
        src = dst = l4 = ''
        sport = dport = ''
        cur = None
        pending = []            # frames of the segments/fragments the next message came in
        for pr in el.findall('proto'):
            pname = pr.get('name')
            if pname in ('ip', 'ipv6', 'tcp', 'fake-field-wrapper'):
                # Reassembly lists the frames a PDU came in (IP puts them in its own tree).
                pending += [int(f.get('show')) for f in pr.iter('field')
                            if f.get('name') in ('tcp.segment', 'ip.fragment', 'ipv6.fragment')
                            and (f.get('show') or '').isdigit()]
            if pname == 'geninfo':
                frame = int(pr.find("field[@name='num']").get('show'))
                ftime = pr.find("field[@name='timestamp']").get('value')
            elif pname in ('ip', 'ipv6'):
                f_src = pr.find("field[@name='%s.src']" % pname)
                f_dst = pr.find("field[@name='%s.dst']" % pname)
                if f_src is not None and f_dst is not None:
                    src, dst = f_src.get('show'), f_dst.get('show')
            elif pname in ('tcp', 'udp'):
                l4 = pname
                sport = pr.find("field[@name='%s.srcport']" % pname).get('show')
                dport = pr.find("field[@name='%s.dstport']" % pname).get('show')
            elif pname == 'rpc':
                cur = None
                rpc = {}
                for f in pr.iter('field'):
                    n = f.get('name')
                    if n and n.startswith('rpc.') and n not in rpc:
                        rpc[n] = f.get('show')
                        if n == 'rpc.auth.machinename':
                            rpc[n + '.hex'] = f.get('value')
                if 'rpc.xid' not in rpc or 'rpc.msgtyp' not in rpc:
                    continue    # continuation data without a header
                m = Msg()
                m.frame, m.time, m.proto, m.rpc = frame, ftime, l4, rpc
                m.src, m.dst = endpoint(src, sport), endpoint(dst, dport)
                m.xid = int(rpc['rpc.xid'], 0)
                m.is_call = rpc['rpc.msgtyp'] == '0'
                m.prog = to_int(rpc.get('rpc.program'))
                m.vers = to_int(rpc.get('rpc.programversion'))
                m.proc = to_int(rpc.get('rpc.procedure'))
                m.is_dup = 'rpc.call.dup' in rpc or 'rpc.reply.dup' in rpc
                pending += [int(f.get('show')) for f in pr.iter('field')
                            if f.get('name') == 'rpc.fragment' and (f.get('show') or '').isdigit()]
                m.first_frame = min(pending + [frame])
                pending = []
                msgs.append(m)
                cur = m
            elif cur is not None:
                walk(pr, '', pname, cur.body)
        el.clear()
    _, err = proc.communicate()
    if proc.returncode != 0:
        die('tshark failed on %s: %s' % (pcap, err.decode(errors='replace').strip()))
    return msgs


def frame_times(pcap):
    """Capture time of every frame in ns: first segments do not carry an RPC header."""
    cmd = ['tshark', '-r', pcap, '-T', 'fields', '-e', 'frame.number', '-e', 'frame.time_epoch']
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if res.returncode != 0:
        die('tshark failed on %s: %s' % (pcap, res.stderr.decode(errors='replace').strip()))
    times = {}
    for line in res.stdout.decode().splitlines():
        num, _, t = line.partition('\t')
        times[int(num)] = time_ns(t)
    return times


def time_ns(text):
    sec, _, frac = text.strip().partition('.')
    try:
        return int(sec) * 1000000000 + int((frac + '000000000')[:9])
    except ValueError:
        return None


def pair_msgs(msgs):
    """Pair calls with replies by (transport, client, server, xid), in frame order."""
    rpcs = []
    open_by_key = {}
    for m in msgs:
        if m.is_call:
            key = (m.proto, m.src, m.dst, m.xid)
            last = open_by_key.get(key)
            if last is not None and last.reply is None and last.call is not None and m.is_dup:
                last.dup += 1
                continue
            r = Rpc(key)
            r.call = m
            rpcs.append(r)
            open_by_key[key] = r
        else:
            key = (m.proto, m.dst, m.src, m.xid)
            last = open_by_key.get(key)
            if last is not None and last.reply is None:
                last.reply = m
                continue
            if last is not None and m.is_dup:
                continue        # a retransmitted reply: tracehound keeps the first
            r = Rpc(key)
            r.reply = m
            rpcs.append(r)
            open_by_key[key] = r
    return rpcs


def fields(msg, name, where=None):
    if msg is None:
        return []
    return [f for f in msg.body if f.name == name and (where is None or where(f))]


def first(msg, name, where=None):
    fs = fields(msg, name, where)
    return fs[0] if fs else None


def first_int(msg, name, where=None):
    f = first(msg, name, where)
    return to_int(f.show) if f is not None else None


def listed(msg, eof):
    """A listing's entries, tracehound's done=: known where tshark read the list to its end."""
    return len(fields(msg, 'nfs.readdir.entry')) if eof is not None else None


def not_entry(f):
    return not f.path.split('/', 2)[-1].startswith('nfs.readdir.entry') and \
        'nfs.readdir.entry' not in f.path


def raw_bytes(f):
    if f is None:
        return None
    if f.value is None:
        return f.show.encode()
    try:
        return bytes.fromhex(f.value)
    except ValueError:
        return f.show.encode()


def status_name(table, num):
    return table.get(num, str(num))


def expect_fields(r, times):
    """What tracehound should print for r, from tshark's tree and the frame times."""
    c, p = r.call, r.reply
    head = c if c is not None else p
    e = {'kind': 'RPC' if c and p else ('CALL' if c else 'REPLY')}
    if times:
        e['time'] = times.get(head.first_frame)
        if c is not None and p is not None:
            # Microseconds from the call's first and last segment to the reply's first.
            rf = times.get(p.first_frame)
            e['lat_first'] = (rf - times.get(c.first_frame)) / 1000.0
            e['lat_last'] = (rf - times.get(c.frame)) / 1000.0
    prog, vers, proc = head.prog, head.vers, head.proc
    if prog is None and p is not None:
        prog, vers, proc = p.prog, p.vers, p.proc
    e['prog'], e['vers'], e['proc'] = prog, vers, proc
    if r.dup:
        e['dup'] = r.dup

    is_nfs23 = prog == PROG_NFS and vers in (2, 3)
    is_v4 = prog == PROG_NFS and vers == 4
    pname = None
    if is_nfs23:
        names = NFS3_PROCS if vers == 3 else NFS2_PROCS
        pname = names[proc] if proc is not None and proc < len(names) else None

    # STATUS: RPC-level failure first, then the procedure's own status.
    if p is None:
        e['status'] = '-'
    elif p.rpc.get('rpc.replystat') == '1':
        e['status'] = status_name(REJECT_STAT, to_int(p.rpc.get('rpc.state_reject')))
    elif to_int(p.rpc.get('rpc.state_accept')) not in (None, 0):
        e['status'] = status_name(ACCEPT_STAT, to_int(p.rpc.get('rpc.state_accept')))
    elif is_v4:
        pass                    # v4 is recognised and counted, not decoded (for now)
    elif prog == PROG_NFS and vers == 3 and proc != 0:
        e['status'] = status_name(NFS_STATUS, first_int(p, 'nfs.status3'))
    elif prog == PROG_NFS and vers == 2 and proc != 0:
        e['status'] = status_name(NFS_STATUS, first_int(p, 'nfs.status2'))
    elif prog == PROG_MOUNT and proc == 1:
        e['status'] = status_name(MOUNT_STATUS, first_int(p, 'mount.status'))
    else:
        e['status'] = 'OK'
    if e.get('status') == 'None':
        del e['status']         # tshark did not get that far (short frame)

    if c is not None:
        uid = to_int(c.rpc.get('rpc.auth.uid'))
        gid = to_int(c.rpc.get('rpc.auth.gid'))
        if c.rpc.get('rpc.auth.flavor') == '1' and uid is not None:
            e['uid'], e['gid'] = uid, gid
            e['machine'] = bytes.fromhex(c.rpc.get('rpc.auth.machinename.hex') or '')[:31]

    if is_nfs23 and pname and proc != 0:
        expect_nfs(e, vers, pname, c, p)
    elif prog == PROG_MOUNT and proc in (1, 3) and c is not None:
        e['name'] = raw_bytes(first(c, 'mount.path'))
        if proc == 1 and p is not None and e.get('status') == 'OK':
            fh = first(p, 'nfs.fh.hash')
            if fh is not None:
                e['newfh'] = int(fh.show, 0)
    elif prog == PROG_PORTMAP and vers == 2 and proc == 3:
        if c is not None:
            e['prog='] = first_int(c, 'portmap.prog')
            e['vers='] = first_int(c, 'portmap.version')
        if p is not None and e.get('status') == 'OK':
            e['port'] = first_int(p, 'portmap.port')
    elif prog == PROG_PORTMAP and vers in (3, 4) and proc == 3:
        # rpcbind GETADDR: the same question (program, version) answered by a universal
        # address "h1.h2.h3.h4.p1.p2" whose last two numbers are the port (RFC 1833).
        # (tshark 4.0 names v4 GETVERSADDR, procedure 9, but does not decode its body.)
        if c is not None:
            e['prog='] = first_int(c, 'portmap.rpcb.prog')
            e['vers='] = first_int(c, 'portmap.rpcb.version')
        ua = first(p, 'portmap.uaddr') if e.get('status') == 'OK' else None
        if ua is not None:
            nums = ua.show.split('.')
            if len(nums) >= 3 and nums[-1].isdigit() and nums[-2].isdigit():
                e['port'] = int(nums[-2]) * 256 + int(nums[-1])
            elif ua.show == '':
                e['port'] = 0   # not registered
    for k in [k for k, v in e.items() if v is None]:
        del e[k]
    r.expect = e


def expect_nfs(e, vers, pname, c, p):
    if c is not None:
        fhs = fields(c, 'nfs.fh.hash')
        if fhs:
            e['fh'] = int(fhs[0].show, 0)
        if len(fhs) > 1 and pname in ('RENAME', 'LINK'):
            e['fh2'] = int(fhs[1].show, 0)
        names = fields(c, 'nfs.name')
        if names:
            e['name'] = raw_bytes(names[0])
        if pname == 'RENAME' and len(names) > 1:
            e['name2'] = raw_bytes(names[1])
        if pname == 'SYMLINK':
            e['name2'] = raw_bytes(first(c, 'nfs.symlink.to'))
        if vers == 3:
            if pname in ('READ', 'WRITE', 'COMMIT'):
                e['off'] = first_int(c, 'nfs.offset3')
                e['count'] = first_int(c, 'nfs.count3')
            elif pname == 'READDIR':
                e['off'] = first_int(c, 'nfs.cookie3')
                e['count'] = first_int(c, 'nfs.count3')
            elif pname == 'READDIRPLUS':
                e['off'] = first_int(c, 'nfs.cookie3')
                e['count'] = first_int(c, 'nfs.count3_maxcount')
            if pname == 'WRITE':
                st = first_int(c, 'nfs.write.stable')
                e['stable'] = STABLE_NAMES.get(st, st)
        else:
            if pname == 'READ':
                e['off'] = first_int(c, 'nfs.read.offset')
                e['count'] = first_int(c, 'nfs.read.count')
            elif pname == 'WRITE':
                # RFC 1094: beginoffset and totalcount are unused; the data
                # length is what the client asks to write.
                e['off'] = first_int(c, 'nfs.write.offset')
                e['count'] = first_int(c, 'rpc.opaque_length',
                                       lambda f: f.top.startswith('Data'))
            elif pname == 'READDIR':
                e['off'] = first_int(c, 'nfs.readdir.cookie')
                e['count'] = first_int(c, 'nfs.readdir.count')
    if p is None or e.get('status') is None:
        return
    is_ok = e['status'] == 'OK'
    if vers == 3:
        top = V3_OBJ_ATTR.get(pname)
        e['size'] = first_int(p, 'nfs.fattr3.size', lambda f: f.top == top)
        # tracehound reports "before" attributes only where they are the object's own.
        if pname in ('SETATTR', 'WRITE', 'COMMIT'):
            e['pre_size'] = first_int(p, 'nfs.wcc_attr.size', lambda f: f.top == top)
        if is_ok and pname in V3_NEWFH:
            fh = first(p, 'nfs.fh.hash', not_entry)
            if fh is not None:
                e['newfh'] = int(fh.show, 0)
        if is_ok and pname in ('READ', 'WRITE'):
            e['done'] = first_int(p, 'nfs.count3')
        if is_ok and pname == 'READ':
            eof = first(p, 'nfs.read.eof')
            e['eof'] = None if eof is None else int(eof.show in ('1', 'True', 'true'))
        if is_ok and pname in ('READDIR', 'READDIRPLUS'):
            e['eof'] = first_int(p, 'nfs.readdir.eof')
            e['done'] = listed(p, e['eof'])
        if is_ok and pname == 'WRITE':
            st = first_int(p, 'nfs.write.committed')
            e['committed'] = STABLE_NAMES.get(st, st)
    else:
        if is_ok:
            e['size'] = first_int(p, 'nfs.fattr.size')
            if pname in V2_NEWFH:
                fh = first(p, 'nfs.fh.hash')
                if fh is not None:
                    e['newfh'] = int(fh.show, 0)
            if pname == 'READ':
                e['done'] = first_int(p, 'rpc.opaque_length', lambda f: f.top.startswith('Data'))
            if pname == 'READDIR':
                e['eof'] = first_int(p, 'nfs.readdir.eof')
                e['done'] = listed(p, e['eof'])


# --- tracehound's text ------------------------------------------------------

def unescape(text):
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == '\\' and i + 3 < len(text) and text[i + 1] == 'x':
            try:
                out.append(int(text[i + 2:i + 4], 16))
                i += 4
                continue
            except ValueError:
                pass
        out += text[i].encode()
        i += 1
    return bytes(out)


def parse_prog(text):
    """PROGRAM text -> (prog, vers); None for what cannot be read."""
    if '.' in text:
        a, _, b = text.partition('.')
        return to_int(a), to_int(b)
    i = len(text)
    while i > 0 and text[i - 1].isdigit():
        i -= 1
    name, num = text[:i], text[i:]
    return PROG_NAMES.get(name), to_int(num)


def parse_proc(prog, vers, text):
    n = to_int(text)
    if n is not None:
        return n
    table = PROC_BY_NAME.get((prog, vers)) or PROC_BY_NAME.get(prog) or {}
    return table.get(text, 'unknown name ' + text)


def parse_ours(lines, where):
    """tracehound text -> list of (key, dict of normalised fields, line)."""
    recs = []
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip('\n')
        if not line or line.startswith('#'):
            continue
        tok = line.split(' ')
        if len(tok) < 11:
            print('%s:%d: not an op line: %s' % (where, lineno, line), file=sys.stderr)
            continue
        ttxt, kind, proto, client, server, xid, progtxt, proctxt, status = tok[:9]
        d = {'kind': kind, 'time': time_ns(ttxt)}
        for k, t in (('lat_first', tok[9]), ('lat_last', tok[10])):
            try:
                d[k] = float(t)
            except ValueError:
                d[k] = None if t == '-' else t
        prog, vers = parse_prog(progtxt)
        d['prog'], d['vers'] = prog, vers
        # A reply without its call has no procedure; tracehound prints '?'.
        d['proc'] = None if proctxt == '?' else parse_proc(prog, vers, proctxt)
        d['status'] = status
        kv = {}
        for t in tok[11:]:
            k, sep, v = t.partition('=')
            if sep:
                kv[k] = v
        for k in ('fh', 'fh2', 'newfh'):
            if k in kv:
                d[k] = to_int('0x' + kv[k])
        for k in ('off', 'count', 'size', 'pre_size', 'done', 'done_min', 'uid', 'gid', 'port',
                  'dup'):
            if k in kv:
                d[k] = to_int(kv[k])
        for k in ('name', 'name2', 'machine'):
            if k in kv:
                d[k] = unescape(kv[k])
        if 'eof' in kv:
            d['eof'] = {'1': 1, 'true': 1, 'yes': 1, '0': 0, 'false': 0, 'no': 0}.get(
                kv['eof'].lower(), kv['eof'])
        for k in ('stable', 'committed'):
            if k in kv:
                d[k] = to_int(kv[k]) if to_int(kv[k]) is not None else kv[k].lower()
                if isinstance(d[k], int):
                    d[k] = STABLE_NAMES.get(d[k], d[k])
        if 'prog' in kv:
            d['prog='] = to_int(kv['prog'])
        if 'vers' in kv:
            d['vers='] = to_int(kv['vers'])
        d['cut'] = kv.get('cut')
        key = (proto, endpoint_text(client), endpoint_text(server), to_int(xid))
        recs.append((key, d, line))
    return recs


def endpoint_text(text):
    addr, _, port = text.rpartition(':')
    return endpoint(addr.strip('[]'), port)


# --- comparison -------------------------------------------------------------

def fmt(field, v):
    if v is None:
        return '(absent)'
    if field in ('fh', 'fh2', 'newfh'):
        return '%08x' % v if isinstance(v, int) else str(v)
    if field == 'time' and isinstance(v, int):
        return '%d.%09d' % (v // 1000000000, v % 1000000000)
    if isinstance(v, bytes):
        return repr(v)[2:-1]
    return str(v)


def status_equal(exp, ours, prog):
    if exp == ours:
        return True
    n = to_int(ours)
    if n is None:
        return False
    table = MOUNT_STATUS if prog == PROG_MOUNT else NFS_STATUS
    return table.get(n) == exp


class Allow:
    """Known, explained differences: lines 'PCAP-GLOB XID|* FIELD|* reason...'."""

    def __init__(self, path):
        self.rules = []
        if not path:
            return
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                line = line.split('#', 1)[0].strip()
                if not line:
                    continue
                parts = line.split(None, 3)
                if len(parts) < 4:
                    die('%s:%d: want PCAP XID FIELD REASON' % (path, lineno))
                self.rules.append(parts)
        self.used = [0] * len(self.rules)

    def reason(self, pcap, xid, field):
        base = os.path.basename(pcap)
        for i, (pg, x, fld, why) in enumerate(self.rules):
            if not fnmatch.fnmatch(base, pg):
                continue
            if x != '*' and to_int(x) != xid:
                continue
            if fld != '*' and fld != field:
                continue
            self.used[i] += 1
            return why
        return None


def compare(pcap, rpcs, ours, field_list, allow, times):
    """Return (compared, identical, rows).

    A row is (xid, frames, field, tshark value, tracehound value, allow reason or None,
    remark); frames are tshark's call/reply frame numbers.
    """
    by_key = {}
    for key, d, line in ours:
        by_key.setdefault(key, []).append((d, line))
    rows = []
    compared = identical = 0
    for r in rpcs:
        expect_fields(r, times)
        compared += 1
        cands = by_key.get(r.key)
        row_base = ('0x%08x' % r.key[3], r.frames())
        if not cands:
            why = allow.reason(pcap, r.key[3], 'missing')
            rows.append(row_base + ('missing', r.expect.get('kind'), '(no record)', why, ''))
            continue
        d, line = cands.pop(0)
        bad = []
        is_v4 = r.expect.get('prog') == PROG_NFS and r.expect.get('vers') == 4
        for f in field_list:
            if is_v4 and f not in ('kind', 'prog', 'vers', 'proc', 'dup'):
                continue
            if f == 'name' and 'name' not in r.expect:
                continue        # tracehound also names MNT/UMNT/... we do not extract
            if f in ('prog', 'vers', 'proc') and r.expect.get(f) is None:
                continue        # a reply alone: neither side can know the procedure
            exp, got = r.expect.get(f), d.get(f)
            if f == 'status' and exp is not None and got is not None:
                if status_equal(exp, got, r.expect.get('prog')):
                    continue
            elif f in ('lat_first', 'lat_last') and exp is not None and \
                    isinstance(got, float) and abs(exp - got) < 0.0005:
                continue        # both are exact to the nanosecond; floats are not
            elif exp == got:
                continue
            if exp is None and f in ('uid', 'gid', 'machine'):
                continue        # AUTH_SYS only; tshark shows nothing else
            bad.append(f)
        if not bad:
            identical += 1
            continue
        for f in bad:
            why = allow.reason(pcap, r.key[3], f)
            if why is None and f == 'done' and d.get(f) is None and \
                    d.get('done_min') is not None and r.expect.get(f) is not None and \
                    d['done_min'] <= r.expect[f]:
                # A listing the capture kept in part: done_min= is a lower bound.
                why = 'listing kept in part (done_min=%d of them)' % d['done_min']
            if why is None and d.get(f) is None and d.get('cut'):
                # tracehound says it did not see this part of the record (a later IP
                # fragment, a capture cut): absent is the honest answer.
                why = 'not in the part of the record tracehound saw (line says cut=)'
            rows.append(row_base + (f, fmt(f, r.expect.get(f)), fmt(f, d.get(f)), why,
                                    'cut=' + d['cut'] if d.get('cut') else ''))
    for key, left in by_key.items():
        for d, line in left:
            why = allow.reason(pcap, key[3], 'extra')
            rows.append(('0x%08x' % (key[3] or 0), '-', 'extra', '(not decoded)', line, why, ''))
    return compared, identical, rows


def script_args(doc):
    """--tracehound (made absolute) and --workdir (made) of a test script described by doc."""
    ap = argparse.ArgumentParser(description=doc.split('\n')[0])
    ap.add_argument('--tracehound', required=True)
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    args.tracehound = os.path.abspath(args.tracehound)
    os.makedirs(args.workdir, exist_ok=True)
    return args


def gen_pcap(tracehound, path, gen_args):
    """`tracehound gen GEN_ARGS -o path`; its summary goes nowhere."""
    subprocess.run([tracehound, 'gen'] + gen_args + ['-o', path], check=True,
                   stderr=subprocess.DEVNULL)
    return path


def pcap_records(path):
    """(byte order, [(offset, caplen)], bytes) of a classic pcap's records."""
    with open(path, 'rb') as f:
        data = f.read()
    endian = '<' if data[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    recs, off = [], 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from(endian + 'I', data, off + 8)[0]
        recs.append((off, caplen))
        off += 16 + caplen
    return endian, recs, data


def pcap_files(path):
    """The .pcap files in directory path, sorted, or [path] for a file; None if absent."""
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith('.pcap'))
    return [path] if os.path.exists(path) else None


def run_capture(tracehound, pcap, workdir, timeout, lcores=None, with_stats=False):
    """tracehound's RPC log lines of pcap (and, with_stats, its stderr as one string)."""
    out = os.path.join(workdir, os.path.basename(pcap) + '.ops')
    err = out + '.stderr'
    cmd = [tracehound, 'capture', '-o', out, '--', '--no-huge', '-m', '256', '--no-pci',
           '--no-shconf', '--file-prefix', 'th-diff-%d' % os.getpid(),
           '--vdev=net_pcap0,rx_pcap=' + os.path.abspath(pcap)]
    if lcores:
        # e.g. 0@0,1@1,2@1,3@0: one dispatcher and two decode lcores on two CPUs
        cmd.append('--lcores=' + lcores)
    with open(err, 'w') as ef:
        try:
            rc = subprocess.run(cmd, stdout=ef, stderr=subprocess.STDOUT, timeout=timeout,
                                cwd=workdir).returncode
        except subprocess.TimeoutExpired:
            die('tracehound capture did not finish within %d s on %s (see %s)'
                % (timeout, pcap, err), 1)
    if rc != 0 or not os.path.exists(out):
        with open(err) as ef:
            tail = ef.read()[-3000:]
        die('tracehound capture failed (rc %d) on %s:\n%s\ncommand: %s'
            % (rc, pcap, tail, ' '.join(cmd)), 1)
    with open(out) as f:
        lines = f.readlines()
    if not with_stats:
        return lines
    with open(err) as f:
        return lines, f.read()


CUT_TAIL = re.compile(r' (eof|done|committed)=\S+')
TRUTH_DONE = re.compile(r' done=(\d+)')
OURS_DONE_MIN = re.compile(r' done_min=(\d+)')


def accept_cut(truth, ours):
    """The one documented way tracehound's line may differ from the truth.

    A UDP reply larger than the MTU arrives in IP fragments; tracehound decodes
    the first fragment only (README, How decoding works). Results at the end of
    such a reply (READDIR eof) are not seen: the line leaves them out and says
    cut=reply; a listing's entry count is then done_min=, the entries in that
    fragment, which may not exceed the truth's done=. The truth line, with
    those fields removed (done= becoming that done_min=) and cut=reply added,
    must then equal tracehound's line exactly.
    """
    by_xid = {}
    for i, l in enumerate(ours):
        if ' udp ' in l and l.endswith(' cut=reply'):
            by_xid[l.split(' ')[5]] = i
    out = []
    for l in truth:
        f = l.split(' ')
        if len(f) > 5 and f[5] in by_xid and ' udp ' in l:
            done = TRUTH_DONE.search(l)
            low = OURS_DONE_MIN.search(ours[by_xid[f[5]]])
            if done and low and int(low.group(1)) <= int(done.group(1)):
                l = l[:done.start()] + ' done_min=' + low.group(1) + l[done.end():]
            l = CUT_TAIL.sub('', l) + ' cut=reply'
        out.append(l)
    return out


def golden(truth_path, ours_lines, limit):
    """Sorted line-by-line comparison with the ground truth; returns differing lines."""
    with open(truth_path) as f:
        truth = [l.rstrip('\n') for l in f if l.strip() and not l.startswith('#')]
    ours = sorted(l.rstrip('\n') for l in ours_lines if l.strip() and not l.startswith('#'))
    truth = sorted(accept_cut(truth, ours))
    if truth == ours:
        return truth, ours, []
    diff = list(difflib.unified_diff(truth, ours, 'truth', 'tracehound', n=0, lineterm=''))
    return truth, ours, diff[:limit] + (['... %d more' % (len(diff) - limit)]
                                        if len(diff) > limit else [])


def print_rows(pcap, rows, out):
    if not rows:
        return
    w = [max(len(str(x)) for x in col) for col in zip(*[r[:5] for r in rows],
                                                       ('xid', 'frames', 'field', 'tshark',
                                                        'tracehound'))]
    w = [min(x, 60) for x in w]
    hdr = ('xid', 'frames', 'field', 'tshark', 'tracehound')
    print('  ' + '  '.join(h.ljust(w[i]) for i, h in enumerate(hdr)) + '  note', file=out)
    for r in rows:
        cells = [str(x) for x in r[:5]]
        note = ' '.join(x for x in (r[6], ('allowed: ' + r[5]) if r[5] else '') if x)
        print('  ' + '  '.join(c.ljust(w[i]) for i, c in enumerate(cells)) + '  ' + note,
              file=out)


def proc_text(prog, vers, proc):
    table = PROC_BY_NAME.get((prog, vers)) or PROC_BY_NAME.get(prog) or {}
    for name, num in table.items():
        if num == proc:
            return name
    return str(proc)


def prog_text(prog, vers):
    for name, num in PROG_NAMES.items():
        if num == prog and name in ('PORTMAP', 'NFS', 'MOUNT', 'NLM', 'NFSACL'):
            return '%s%d' % (name, vers)
    return '%s.%s' % (prog, vers)


def emit_expected(r):
    """tshark's view of r as a th_op text line (a reference for hand checks and fakes)."""
    e = r.expect
    lat = ['%.3f' % e[k] if e.get(k) is not None else '-' for k in ('lat_first', 'lat_last')]
    parts = [fmt('time', e.get('time')), e['kind'], r.key[0], r.key[1], r.key[2],
             '0x%08x' % r.key[3], prog_text(e['prog'], e['vers']),
             proc_text(e['prog'], e['vers'], e['proc']),
             e.get('status', 'OK' if r.reply else '-')] + lat
    for k in ('uid', 'gid', 'machine', 'fh', 'name', 'fh2', 'name2', 'off', 'count', 'stable',
              'done', 'eof', 'committed', 'newfh', 'size', 'pre_size', 'port', 'prog=', 'vers=', 'dup'):
        v = e.get(k)
        if v is None:
            continue
        if k in ('fh', 'fh2', 'newfh'):
            v = '%08x' % v
        elif isinstance(v, bytes):
            v = ''.join(chr(b) if 0x20 < b < 0x7f and b not in (0x3d, 0x5c) else '\\x%02x' % b
                        for b in v)
        parts.append('%s=%s' % (k.rstrip('='), v))
    return ' '.join(str(x) for x in parts)


def self_test(pcap, field_list):
    name = os.path.basename(pcap)
    times = frame_times(pcap)
    rpcs = pair_msgs(tshark_msgs(pcap, []))
    for r in rpcs:
        expect_fields(r, times)
    lines = [emit_expected(r) for r in rpcs]
    none = Allow(None)
    _, same, rows = compare(pcap, rpcs, parse_ours(lines, name), field_list, none, times)
    ok = same == len(rpcs) and not rows
    # Break records the way a decoder bug would and expect exactly those reported: flip a bit
    # of one handle, grow one size, drop the last record.
    def bump(tok, key, fmt_, delta):
        return fmt_ % (int(tok[len(key):], 16 if key == 'fh=' else 10) ^ delta) \
            if tok.startswith(key) else tok
    want = set()
    for i in range(len(lines) - 1):
        for key, fmt_, field in (('fh=', 'fh=%08x', 'fh'), ('size=', 'size=%d', 'size')):
            if field not in want and ' ' + key in lines[i]:
                lines[i] = ' '.join(bump(t, key, fmt_, 1) for t in lines[i].split(' '))
                want.add(field)
                break
    if lines:
        lines.pop()
        want.add('missing')
    _, _, rows = compare(pcap, rpcs, parse_ours(lines, name), field_list, none, times)
    got = {r[2] for r in rows}
    ok = ok and got == want
    print('%s: self-test %s (%d rpcs; mutations %s reported as %s)'
          % (name, 'ok' if ok else 'FAILED', len(rpcs), sorted(want), sorted(got)))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('pcaps', nargs='*', help='pcap files (or directories of *.pcap)')
    ap.add_argument('--tracehound', help='tracehound binary (runs capture on each pcap)')
    ap.add_argument('--ours', action='append', default=[],
                    help='use this tracehound output instead of running capture '
                         '(once per pcap, same order)')
    ap.add_argument('--truth', action='append', default=[],
                    help='ground truth of a generated pcap (once per pcap, same order): '
                         'also run the golden comparison')
    ap.add_argument('--gen', action='append', default=[], metavar='NAME:ARGS',
                    help='generate NAME.pcap with "tracehound gen ARGS" in --workdir, then '
                         'test it (differential and golden); repeatable')
    ap.add_argument('--allow', help='file of known, explained differences')
    ap.add_argument('--core-only', action='store_true',
                    help='compare only ' + ' '.join(CORE_FIELDS))
    ap.add_argument('--no-tshark', action='store_true',
                    help='golden comparison only (with --truth or --gen)')
    ap.add_argument('--skip-missing', action='store_true',
                    help='exit 77 when a pcap directory given is absent')
    ap.add_argument('--workdir', help='keep outputs here (default: a temporary directory)')
    ap.add_argument('--timeout', type=int, default=300, help='seconds per capture run')
    ap.add_argument('--lcores', help='EAL --lcores map for capture (several decode lcores)')
    ap.add_argument('--limit', type=int, default=200, help='golden diff lines shown')
    ap.add_argument('--dump-tshark', action='store_true',
                    help='print what tshark expects per RPC and exit (debugging)')
    ap.add_argument('--self-test', action='store_true',
                    help="check the comparison itself: tshark's own view must compare equal, "
                         'and a changed handle, a changed size and a dropped record must be '
                         'reported')
    ap.add_argument('--emit-expected', action='store_true',
                    help="print tshark's view in tracehound's text format and exit")
    args = ap.parse_args()

    if not args.no_tshark and shutil.which('tshark') is None:
        if not (args.gen or args.truth):
            print('tshark_diff: tshark not installed, skipping', file=sys.stderr)
            sys.exit(SKIP)
        print('tshark_diff: tshark not installed: golden comparison only', file=sys.stderr)
        args.no_tshark = True

    workdir = args.workdir
    if workdir is None:
        # A directory of its own, gone when the script ends (an exit included).
        workdir = tempfile.mkdtemp(prefix='th-diff-')
        atexit.register(shutil.rmtree, workdir, True)
    os.makedirs(workdir, exist_ok=True)

    pcaps = []
    for p in args.pcaps:
        found = pcap_files(p)
        if found is not None:
            pcaps += found
        elif args.skip_missing:
            print('tshark_diff: %s absent, skipping' % p, file=sys.stderr)
            sys.exit(SKIP)
        else:
            die('%s: no such file' % p)
    truths = list(args.truth) + [None] * (len(pcaps) - len(args.truth))
    ours_files = list(args.ours) + [None] * (len(pcaps) - len(args.ours))

    for spec in args.gen:
        name, _, gargs = spec.partition(':')
        if not args.tracehound:
            die('--gen needs --tracehound')
        pcap = os.path.join(workdir, name + '.pcap')
        truth = os.path.join(workdir, name + '.truth')
        cmd = [args.tracehound, 'gen'] + gargs.split() + ['-o', pcap, '--truth', truth]
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if res.returncode != 0:
            die('gen failed (rc %d): %s\n%s' % (res.returncode, ' '.join(cmd),
                                                res.stdout.decode(errors='replace')), 1)
        # The pcap is the golden input: the same seed must give the same bytes.
        again = pcap + '.again'
        subprocess.run([args.tracehound, 'gen'] + gargs.split() +
                       ['-o', again, '--truth', again + '.truth'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(pcap, 'rb') as a, open(again, 'rb') as b:
            if a.read() != b.read():
                print('%s: gen is not deterministic: two runs of "%s" differ'
                      % (name, gargs), file=sys.stderr)
                sys.exit(1)
        pcaps.append(pcap)
        truths.append(truth)
        ours_files.append(None)

    if not pcaps:
        if args.skip_missing:
            print('tshark_diff: no pcap found, skipping', file=sys.stderr)
            sys.exit(SKIP)
        die('no pcap given')

    allow = Allow(args.allow)
    field_list = CORE_FIELDS + ([] if args.core_only else EXTRA_FIELDS + ['prog=', 'vers='])
    failed = False
    for pcap, truth, ours_file in zip(pcaps, truths, ours_files):
        name = os.path.basename(pcap)
        if args.self_test:
            failed |= not self_test(pcap, field_list)
            continue
        if args.dump_tshark or args.emit_expected:
            times = frame_times(pcap)
            for r in pair_msgs(tshark_msgs(pcap, [])):
                expect_fields(r, times)
                if args.emit_expected:
                    print(emit_expected(r))
                else:
                    print(name, r.key, r.frames(),
                          {k: fmt(k, v) for k, v in r.expect.items()})
            continue
        if ours_file:
            with open(ours_file) as f:
                ours_lines = f.readlines()
        elif args.tracehound:
            ours_lines = run_capture(args.tracehound, pcap, workdir, args.timeout, args.lcores)
        else:
            die('need --tracehound or --ours')

        if not args.no_tshark:
            rpcs = pair_msgs(tshark_msgs(pcap, []))
            ours = parse_ours(ours_lines, ours_file or name + '.ops')
            compared, identical, rows = compare(pcap, rpcs, ours, field_list, allow,
                                                frame_times(pcap))
            hard = [r for r in rows if not r[5]]
            if rows:
                print('%s: differences (tshark vs tracehound):' % name)
                print_rows(pcap, rows, sys.stdout)
            differ = len({(r[0], r[1]) for r in hard if r[2] != 'extra'})
            extra = sum(1 for r in hard if r[2] == 'extra')
            allowed = len({(r[0], r[1]) for r in rows if r[5]})
            print('%s: %d rpcs compared, %d identical, %d differ%s%s'
                  % (name, compared, identical, differ,
                     ', %d only in tracehound' % extra if extra else '',
                     ', %d with allowed differences' % allowed if allowed else ''))
            if hard:
                failed = True
        if truth:
            t, o, diff = golden(truth, ours_lines, args.limit)
            if diff:
                print('%s: golden: tracehound output differs from the ground truth '
                      '(%d truth lines, %d output lines):' % (name, len(t), len(o)))
                for line in diff:
                    print('  ' + line)
                failed = True
            else:
                print('%s: golden: %d lines identical to the ground truth' % (name, len(t)))
    unused = [' '.join(r[:3]) for r, n in zip(allow.rules, getattr(allow, 'used', []))
              if n == 0]
    if unused and not (args.dump_tshark or args.emit_expected):
        print('note: allow rules never used: ' + '; '.join(unused))
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
