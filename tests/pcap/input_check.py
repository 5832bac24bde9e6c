#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A pcap that ends badly: capture says where its file stopped being read.

net_pcap reads a file with libpcap and ends the port at libpcap's first error as
if the file had ended. `tracehound capture` reads each file port's file again
when the port ends and names what it found in the statistics' `inputs` section:

  intact       "N records in FILE", N the file's records; exit 0;
  cut short    a capture killed inside its last record: the records before it,
               "then cut short in its last record"; exit 0, and the same RPC
               lines as a clean file of those records;
  damaged      a record length past the snap length halfway: the records before
               it, "then damaged: B bytes after it not read" with B the bytes
               from that record's data on; exit 1 (records went unread);
  pcapng       cut short too (when editcap is installed);
  small pool   1023 mbufs behind a dispatcher whose rings hold 8192: net_pcap
               drops a record when the pool is empty, and a replay that polled
               then stopped at 1023 frames; it must wait for the decode lcores
               and read every record;
  small rings  rings of 64 behind the dispatcher: a file's frames wait for room
               rather than being dropped as "dispatch ring full";
  session ring inference on its own lcore behind a ring of 64: a replay's ops
               wait for room too, and the records are those of the default
               ring (it lost 35632 ops of a users capture and kept 390 of
               4980 records when ops that did not fit were let go); and on
               eight session lcores, whose event caches must go back to the
               pool while they idle (else the decode lcore waited for ever);
  jumbo        9000-byte frames (several mbufs each) from a small pool: every one;
  resync       damaged where libpcap could read on: the port ends at the error;
  refused      a file that is not a pcap (four bytes) beside an intact one:
               its port never comes up, and capture says which and exits 1
               rather than read the other alone; the same for two files
               under one vdev name (EAL makes one port);
  deep headers eight IPv6 TCP calls each with a 2 KiB hop-by-hop header
               (frames in two mbufs, TCP past the first 512 bytes) and their
               replies, then eight WRITEs whose TCP header straddles byte 512:
               behind the dispatcher as on one lcore, 8 RPC lines each;
  outlier      150 calls, 2 ARP frames stamped a century on, 150 calls, 10 more,
               and the 300 replies: a step of the clock of a day or more is
               not aged at until 16 frames in a row agree with it, so every
               call meets its reply;
  offload      a TCP call whose IPv4 total length is 0 (captured on the sender
               before segmentation offload) and its reply: one RPC line,
               "nothing lost"; then a frame whose IPv4 header length is 16
               bytes: the summary counts it;
  giant        records of 200000, 67584 and 65549 bytes among the file's:
               net_pcap (DPDK 22.11) reads what follows a record's first 2048
               bytes by a 16-bit length but says the frame is whole, so the
               first two come in part (3392 bytes in two mbufs, 2048 in one)
               and are decoded as cut (the summary says so, "2 frames cut
               short"); the third, an Ethernet frame of a 64 KiB IP packet,
               whole; the rest as without them, on one lcore and behind the
               dispatcher;
  clock back   a users capture whose second half is stamped 100 s earlier (a
               clock step; captures end to end): the same open records, those
               after the step 100 s earlier, but for the open in progress at
               the step, which ends there (6 cache reads of 38 were lost when
               histories from before the step stayed ahead of the clock).
               Two and three decode lcores behind the dispatcher give the
               same records as one, with the step and without, and count
               the step once (ops taken in frame order; each lcore told of
               the step as it reached it before, and opens ended at both).
  stray stamps the same capture with one frame stamped an hour ahead, three in a
               row with one stamp half an hour ahead and one an hour behind: the
               same records, all five counted as stray stamps, no clock
               step, on one lcore and behind the dispatcher (one such frame
               used to read as a step and close every open; a run of them,
               until STAMP_HOLD_MAX frames could wait).
Exit status: 0 pass, 1 a difference, 2 a tool failure.
"""

import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tshark_diff import gen_pcap, pcap_records, run_capture, script_args  # noqa: E402

INPUT_RE = re.compile(r'^  (\d+) +records in (\S+)(.*)$', re.M)


def capture(tracehound, pcap, workdir, config=None, lcores='-l 0-1'):
    """(exit status, RPC lines, stderr) of a capture of pcap, on one decode lcore unless
    lcores says otherwise."""
    out = os.path.join(workdir, os.path.basename(pcap) + '.ops')
    if os.path.exists(out):
        os.unlink(out)
    conf = ['-c', config] if config else []
    res = subprocess.run([tracehound, 'capture'] + conf + ['-o', out, '--'] + lcores.split() +
                         ['--no-huge',
                          '-m', '256', '--no-pci', '--no-shconf', '--file-prefix',
                          'th-input-%d' % os.getpid(), '--log-level=error',
                          '--vdev=net_pcap0,rx_pcap=' + pcap],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    lines = []
    if os.path.exists(out):
        with open(out) as f:
            lines = f.readlines()
    return res.returncode, lines, res.stderr.decode(errors='replace')


def inputs_line(err):
    m = INPUT_RE.search(err)
    return (int(m.group(1)), m.group(3)) if m else (None, '')


def main():
    args = script_args(__doc__)
    errors = []
    whole = gen_pcap(args.tracehound, os.path.join(args.workdir, 'whole.pcap'),
                     ['--seed', '5', '--ops', '800', '--mix', 'mixed', '--udp-share', '0.3'])
    endian, recs, data = pcap_records(whole)

    rc, lines, err = capture(args.tracehound, whole, args.workdir)
    n, rest = inputs_line(err)
    if rc != 0 or n != len(recs) or rest.strip() != '':
        errors.append('intact: exit %d, inputs %s%s, file %d records' % (rc, n, rest, len(recs)))
    else:
        print('intact: %d records, exit 0' % n)

    # Cut inside the last record's data, as a capture killed mid-write leaves it; the clean
    # file of the records before it is what the cut file must decode as.
    keep = len(recs) - 1
    cut = os.path.join(args.workdir, 'cut.pcap')
    with open(cut, 'wb') as f:
        f.write(data[:recs[keep][0] + 16 + recs[keep][1] // 2])
    clean = os.path.join(args.workdir, 'clean.pcap')
    with open(clean, 'wb') as f:
        f.write(data[:recs[keep][0]])
    want = sorted(run_capture(args.tracehound, clean, args.workdir, 300))
    rc, lines, err = capture(args.tracehound, cut, args.workdir)
    n, rest = inputs_line(err)
    if rc != 0 or n != keep or 'then cut short in its last record' not in rest:
        errors.append('cut short: exit %d, inputs %s%s; want exit 0, %d records, cut short'
                      % (rc, n, rest, keep))
    elif sorted(lines) != want:
        errors.append('cut short: %d RPC lines, the clean file of its %d records %d'
                      % (len(lines), keep, len(want)))
    else:
        print('cut short: %d records, exit 0, the same %d RPC lines as without the cut record'
              % (n, len(want)))

    # A record length past any snap length halfway: libpcap stops there.
    bad = len(recs) // 2
    damaged = os.path.join(args.workdir, 'damaged.pcap')
    body = bytearray(data)
    struct.pack_into(endian + 'II', body, recs[bad][0] + 8, 0x7fffff, 0x7fffff)
    with open(damaged, 'wb') as f:
        f.write(body)
    unread = len(data) - (recs[bad][0] + 16)
    rc, lines, err = capture(args.tracehound, damaged, args.workdir)
    n, rest = inputs_line(err)
    if rc != 1 or n != bad or ('then damaged: %d bytes after it not read' % unread) not in rest:
        errors.append('damaged: exit %d, inputs %s%s; want exit 1, %d records, %d bytes unread'
                      % (rc, n, rest, bad, unread))
    else:
        print('damaged: %d records, %d bytes unread, exit 1' % (n, unread))

    if shutil.which('editcap'):
        ng = os.path.join(args.workdir, 'whole.pcapng')
        subprocess.run(['editcap', '-F', 'pcapng', whole, ng], check=True)
        with open(ng, 'rb') as f:
            ng_data = f.read()
        cut_ng = os.path.join(args.workdir, 'cut.pcapng')
        with open(cut_ng, 'wb') as f:
            f.write(ng_data[:-40])
        rc, lines, err = capture(args.tracehound, cut_ng, args.workdir)
        n, rest = inputs_line(err)
        if rc != 0 or n != len(recs) - 1 or 'then cut short in its last record' not in rest:
            errors.append('pcapng cut short: exit %d, inputs %s%s' % (rc, n, rest))
        else:
            print('pcapng cut short: %d records, exit 0' % n)
    else:
        print('pcapng: skipped (no editcap)')

    # Behind the dispatcher (two decode lcores): a pool far smaller than the rings, then
    # rings of 64. Every record is read, none is dropped as "dispatch ring full".
    for name, ini, lcores in (
            ('small pool', 'mbufs = 1023\nburst = 256\nring_size = 8192\n',
             '--lcores=0@0,1@1,2@1,3@0'),
            ('small pool, 4 decode lcores', 'mbufs = 1023\nburst = 256\n',
             '--lcores=0@0,1@1,2@1,3@0,4@1,5@0'),
            ('small rings', 'ring_size = 64\nburst = 256\n', '--lcores=0@0,1@1,2@1,3@0')):
        conf = os.path.join(args.workdir, name.replace(' ', '-').replace(',', '') + '.ini')
        with open(conf, 'w') as f:
            f.write('[capture]\n' + ini)
        rc, lines, err = capture(args.tracehound, whole, args.workdir, conf, lcores)
        m = re.search(r'^  (\d+) +frames received$', err, re.M)
        frames = int(m.group(1)) if m else None
        m = re.search(r'^  (\d+) +dispatch ring full$', err, re.M)
        full = int(m.group(1)) if m else None
        if rc != 0 or frames != len(recs) or full != 0 or len(lines) != 800:
            errors.append('%s: exit %d, %s frames of %d, %s ring full, %d RPC lines of 800'
                          % (name, rc, frames, len(recs), full, len(lines)))
        else:
            print('%s: %d frames, 0 ring full, %d RPC lines, exit 0' % (name, frames,
                                                                        len(lines)))

    # Jumbo frames (MTU 9000: five mbufs a frame) from a pool of 1023 with bursts of 256, on
    # one decode lcore and behind the dispatcher: net_pcap dropped the records it could not
    # get every mbuf for.
    jumbo = gen_pcap(args.tracehound, os.path.join(args.workdir, 'jumbo.pcap'),
                     ['--seed', '6', '--ops', '300', '--mix', 'data', '--mtu', '9000'])
    _, jrecs, _ = pcap_records(jumbo)
    pool = os.path.join(args.workdir, 'jumbo-pool.ini')
    with open(pool, 'w') as f:
        f.write('[capture]\nmbufs = 1023\nburst = 256\n')
    # Four decode lcores: each keeps a cache of mbufs the dispatcher cannot take.
    for lcores in ('-l 0-1', '--lcores=0@0,1@1,2@1,3@0', '--lcores=0@0,1@1,2@1,3@0,4@1,5@0'):
        rc, lines, err = capture(args.tracehound, jumbo, args.workdir, pool, lcores)
        m = re.search(r'^  (\d+) +frames received$', err, re.M)
        frames = int(m.group(1)) if m else None
        if rc != 0 or frames != len(jrecs) or len(lines) != 300:
            errors.append('jumbo frames (%s): exit %d, %s frames of %d, %d RPC lines of 300'
                          % (lcores, rc, frames, len(jrecs), len(lines)))
        else:
            print('jumbo frames (%s): %d frames, %d RPC lines, exit 0' % (lcores, frames,
                                                                          len(lines)))

    # Damaged so that libpcap could go on after the bad record (its data starts with a
    # plausible record header): the port still ends at libpcap's first error, where the
    # inputs section says, rather than read on into bytes it cannot vouch for.
    body = bytearray(data)
    off = recs[bad][0]
    struct.pack_into(endian + 'II', body, off + 8, 0x7fffffff, 0x7fffffff)
    struct.pack_into(endian + 'IIII', body, off + 16, 0, 0, 60, 60)
    resync = os.path.join(args.workdir, 'resync.pcap')
    with open(resync, 'wb') as f:
        f.write(body)
    rc, lines, err = capture(args.tracehound, resync, args.workdir)
    n, rest = inputs_line(err)
    m = re.search(r'^  (\d+) +frames received$', err, re.M)
    frames = int(m.group(1)) if m else None
    if rc != 1 or n != bad or frames != bad or 'then damaged' not in rest:
        errors.append('damaged, resync possible: exit %d, inputs %s%s, %s frames; want exit 1, '
                      '%d records and frames' % (rc, n, rest, frames, bad))
    else:
        print('damaged, resync possible: %d frames, the port ended there, exit 1' % frames)

    bad = os.path.join(args.workdir, 'four-bytes.pcap')
    with open(bad, 'wb') as f:
        f.write(data[:4])
    for what, vdevs, want in (
            ('refused beside an intact file', ('net_pcap0', whole, 'net_pcap1', bad),
             'net_pcap1,rx_pcap=%s did not come up' % bad),
            # One name twice: EAL makes one port and only logs the second.
            ('one name twice', ('net_pcap0', whole, 'net_pcap0', cut), 'net_pcap0 is named twice')):
        res = subprocess.run([args.tracehound, 'capture', '-o', os.devnull, '--', '-l', '0-1',
                              '--no-huge', '-m', '256', '--no-pci', '--no-shconf', '--file-prefix',
                              'th-input-%d' % os.getpid(), '--log-level=critical',
                              '--vdev=%s,rx_pcap=%s' % vdevs[:2],
                              '--vdev=%s,rx_pcap=%s' % vdevs[2:]],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        err = res.stderr.decode(errors='replace')
        if res.returncode != 1 or want not in err:
            errors.append('%s: exit %d; %s' % (what, res.returncode, err[-300:]))
        else:
            print('%s: exit 1, "%s"' % (what, err.strip().splitlines()[-1]))

    for e in (deep_headers(args.tracehound, args.workdir),
              outlier(args.tracehound, args.workdir),
              offload(args.tracehound, args.workdir),
              giant(args.tracehound, args.workdir, endian, recs, data),
              session_ring(args.tracehound, args.workdir),
              clock_back(args.tracehound, args.workdir),
              stray_stamps(args.tracehound, args.workdir)):
        if e:
            errors.append(e)

    for e in errors:
        print(e)
    return 1 if errors else 0


def deep_headers(tracehound, workdir):
    """An error string, or None when frames whose TCP header lies past byte 512 of
    several mbufs, or straddles it, reach the decode lcore of their flow."""
    client = bytes.fromhex('2001' + '00' * 13 + '01')
    server = bytes.fromhex('2001' + '00' * 13 + '02')

    def frame(src, dst, sport, dport, rpc, hbh):
        tcp = struct.pack('>HHIIBBHHH', sport, dport, 1, 1, 5 << 4, 0x18, 65535, 0, 0)
        body = tcp + struct.pack('>I', 0x80000000 | len(rpc)) + rpc
        ext = bytes([6, hbh // 8 - 1]) + bytes(hbh - 2) if hbh else b''
        ip6 = struct.pack('>IHBB', 6 << 28, len(ext) + len(body), 0 if hbh else 6, 64)
        return b'\x02' * 6 + b'\x04' * 6 + b'\x86\xdd' + ip6 + src + dst + ext + body

    def getattr_pair(xid):
        return (struct.pack('>10I', xid, 0, 2, 100003, 3, 1, 0, 0, 0, 0) +
                struct.pack('>I', 8) + b'A' * 8,
                struct.pack('>8I', xid, 1, 0, 0, 0, 0, 0, 1) + bytes(80))

    def write_pair(xid):
        return (struct.pack('>10I', xid, 0, 2, 100003, 3, 7, 0, 0, 0, 0) +
                struct.pack('>I', 8) + b'A' * 8 + struct.pack('>QIII', 0, 2000, 2, 2000) +
                bytes(2000),
                struct.pack('>6I', xid, 1, 0, 0, 0, 0) + struct.pack('>5I', 0, 0, 0, 2000, 2) +
                bytes(8))

    # 2048 bytes of hop-by-hop options: TCP past byte 512; 448: TCP across it.
    for hbh, pair in ((2048, getattr_pair), (448, write_pair)):
        body = bytearray(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
        for k in range(8):
            call, reply = pair(0x1000 + k)
            for i, f in enumerate((frame(client, server, 1000 + k, 2049, call, hbh),
                                   frame(server, client, 2049, 1000 + k, reply, 0))):
                body += struct.pack('<IIII', 1000, 2 * k + i, len(f), len(f)) + f
        path = os.path.join(workdir, 'deep%d.pcap' % hbh)
        with open(path, 'wb') as f:
            f.write(body)
        got = []
        for lcores in ('-l 0-1', '--lcores=0@0,1@1,2@1,3@0,4@1'):
            rc, lines, err = capture(tracehound, path, workdir, None, lcores)
            got.append(sorted(lines))
            summary = (re.search(r'^summary:.*$', err, re.M) or re.search('.*$', err)).group(0)
            if rc != 0 or len(lines) != 8 or got[-1] != got[0] or 'without' in summary:
                return ('deep headers (%d bytes, %s): exit %d, %d RPC lines (%d as on one '
                        'lcore); %s' % (hbh, lcores, rc, len(lines),
                                        len(set(got[-1]) & set(got[0])), summary))
        print('deep headers (%d bytes): 8 RPC lines, the same behind the dispatcher' % hbh)
    return None


CLIENT, SERVER = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])


def tcp4(src, dst, sport, dport, rpc, tot=None, vihl=0x45):
    """An Ethernet frame of one RPC record over IPv4 TCP (total length tot when given)."""
    tcp = struct.pack('>HHIIBBHHH', sport, dport, 1, 1, 5 << 4, 0x18, 65535, 0, 0)
    body = tcp + struct.pack('>I', 0x80000000 | len(rpc)) + rpc
    ip = struct.pack('>BBHHHBBH', vihl, 0, 20 + len(body) if tot is None else tot, 0, 0,
                     64, 6, 0) + src + dst
    return b'\x02' * 6 + b'\x04' * 6 + b'\x08\x00' + ip + body


def getattr_call(xid):
    return (struct.pack('>10I', xid, 0, 2, 100003, 3, 1, 0, 0, 0, 0) + struct.pack('>I', 8) +
            b'A' * 8)


def getattr_reply(xid):
    return struct.pack('>8I', xid, 1, 0, 0, 0, 0, 0, 1) + bytes(80)


def write_pcap(path, records):
    """A microsecond pcap of (seconds, microseconds, frame) records."""
    body = bytearray(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
    for sec, usec, f in records:
        body += struct.pack('<IIII', sec, usec, len(f), len(f)) + f
    with open(path, 'wb') as f:
        f.write(body)
    return path


def outlier(tracehound, workdir):
    """An error string, or None when stray frames stamped a century ahead do not age
    the tables: 150 calls, 2 ARP frames at second 4e9, 150 calls, 10 more, 300 replies.
    The two are told from a step by the frame after them (counted as strays); the ten, more
    than can wait for it, by the clock's distrust of a leap of a day."""
    arp = b'\xff' * 6 + b'\x04' * 6 + b'\x08\x06' + bytes(28)
    recs = [(1000, k, tcp4(CLIENT, SERVER, 1000 + k, 2049, getattr_call(k))) for k in range(150)]
    recs += [(4000000000, k, arp) for k in range(2)]
    recs += [(1000, k, tcp4(CLIENT, SERVER, 1000 + k, 2049, getattr_call(k)))
             for k in range(150, 300)]
    recs += [(4000000000, k, arp) for k in range(10)]
    recs += [(1001, k, tcp4(SERVER, CLIENT, 2049, 1000 + k, getattr_reply(k))) for k in range(300)]
    path = write_pcap(os.path.join(workdir, 'outlier.pcap'), recs)
    rc, lines, err = capture(tracehound, path, workdir)
    m = re.search(r'^summary:.*$', err, re.M)
    summary = m.group(0) if m else err[-200:]
    if rc != 0 or len(lines) != 300 or summary != 'summary: 2 frames with a stray time stamp':
        return 'outlier stamps: exit %d, %d RPC lines of 300, %s' % (rc, len(lines), summary)
    print('outlier stamps: 300 RPC lines, "%s"' % summary)
    return None


def offload(tracehound, workdir):
    """An error string, or None when a sender-side capture (IPv4 total length 0) decodes
    and a malformed IPv4 header shows in the summary."""
    frames = [tcp4(CLIENT, SERVER, 800, 2049, getattr_call(7), tot=0),
              tcp4(SERVER, CLIENT, 2049, 800, getattr_reply(7))]
    got = []
    for n in (2, 3):
        if n == 3:
            frames.append(tcp4(CLIENT, SERVER, 801, 2049, getattr_call(7), vihl=0x44))
        path = write_pcap(os.path.join(workdir, 'offload%d.pcap' % n),
                          [(1000, i, f) for i, f in enumerate(frames)])
        rc, lines, err = capture(tracehound, path, workdir)
        m = re.search(r'^summary:.*$', err, re.M)
        got.append((rc, len(lines), m.group(0) if m else err[-200:]))
    want = [(0, 1, 'summary: nothing lost: every frame decoded, every call met its reply'),
            (0, 1, 'summary: 1 frame with a malformed IP or TCP/UDP header')]
    if got != want:
        return 'offload: got %s; want %s' % (got, want)
    print('offload: 1 RPC line, "%s"; with a malformed header, "%s"' % (got[0][2], got[1][2]))
    return None


def session_ring(tracehound, workdir):
    """An error string, or None when a replay loses no op to a small session ring."""
    users = gen_pcap(tracehound, os.path.join(workdir, 'users.pcap'),
                     ['--workload', 'users', '--seed', '3', '--hours', '0.05'])
    got = []
    # The default ring; a ring of 64; and 64 with eight session lcores, whose event caches
    # once held every free event while the decode lcore waited for one.
    for ring, sessions, lcores in ((None, 1, '0@0,1@1,2@1'), (64, 1, '0@0,1@1,2@1'),
                                   (64, 8, '0@0,1@1,(2-9)@(0-1)')):
        conf = os.path.join(workdir, 'sess-ring.ini')
        with open(conf, 'w') as f:
            f.write('[capture]\nmbufs = 16383\n' + ('ring_size = %d\n' % ring if ring else '') +
                    '[session]\nlcores = %d\n' % sessions)
        rec = os.path.join(workdir, 'sess-ring.rec')
        try:
            res = subprocess.run([tracehound, 'capture', '-c', conf, '-o', 'none', '-r', rec,
                                  '--', '--lcores=' + lcores, '--no-huge', '-m', '512',
                                  '--no-pci', '--no-shconf', '--file-prefix',
                                  'th-input-%d' % os.getpid(), '--log-level=error',
                                  '--vdev=net_pcap0,rx_pcap=' + users],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        except subprocess.TimeoutExpired:
            return ('session ring: %d session lcores, ring %s: still running after 120 s'
                    % (sessions, ring))
        err = res.stderr.decode(errors='replace')
        m = re.search(r'^  (\d+) +ops lost to inference: session ring full$', err, re.M)
        with open(rec) as f:
            got.append((res.returncode, int(m.group(1)) if m else None, sorted(f.readlines())))
    if any(g[:2] != (0, 0) or g[2] != got[0][2] for g in got) or not got[0][2]:
        return ('session ring: exits %s, ops lost %s, records %s'
                % ([g[0] for g in got], [g[1] for g in got], [len(g[2]) for g in got]))
    print('session ring: rings of 64, on one session lcore and on eight, lose no op; the '
          'same %d records' % len(got[0][2]))
    return None


def giant(tracehound, workdir, endian, recs, data):
    """An error string, or None when records past 64 KiB are decoded as cut."""
    base = sorted(run_capture(tracehound, os.path.join(workdir, 'whole.pcap'), workdir, 300))
    half = recs[len(recs) // 2][0]
    sec, usec = struct.unpack_from(endian + 'II', data, half)
    body = bytearray(data[:half])
    struct.pack_into(endian + 'I', body, 16, 262144)  # the header's snap length
    for size in (200000, 67584, 65549):
        frame = bytearray(size)
        frame[0:14] = b'\x02' * 6 + b'\x04' * 6 + b'\x08\x00'
        # IPv4 (total length 65535), UDP 5000 -> 6000, 10.9.9.1 -> 10.9.9.2.
        frame[14:34] = bytes.fromhex('4500ffff00000000401100000a0909010a090902')
        frame[34:42] = struct.pack('>HHHH', 5000, 6000, 65515, 0)
        body += struct.pack(endian + 'IIII', sec, usec, size, size) + frame
    body += data[half:]
    path = os.path.join(workdir, 'giant.pcap')
    with open(path, 'wb') as f:
        f.write(body)
    for lcores in ('-l 0-1', '--lcores=0@0,1@1,2@1,3@0'):
        rc, lines, err = capture(tracehound, path, workdir, None, lcores)
        m = re.search(r'^  (\d+) +frames received$', err, re.M)
        frames = int(m.group(1)) if m else None
        summary = (re.search(r'^summary:.*$', err, re.M) or re.search('.*$', err)).group(0)
        if rc != 0 or frames != len(recs) + 3 or sorted(lines) != base or \
                '2 frames cut short' not in summary:
            return ('giant records (%s): exit %d, %s frames of %d, %d RPC lines (%d without '
                    'them), %s' % (lcores, rc, frames, len(recs) + 3, len(lines), len(base),
                                   summary))
        print('giant records (%s): %d frames, the same %d RPC lines, "%s"'
              % (lcores, frames, len(lines), summary))
    return None



def open_records(tracehound, pcap, workdir, lcores='-l 0-1', config=None):
    """(exit status, [open record fields], stderr) of inference over pcap, on one lcore
    unless lcores says otherwise, with the config file when given."""
    rec = os.path.join(workdir, os.path.basename(pcap) + '.rec')
    conf = ['-c', config] if config else []
    res = subprocess.run([tracehound, 'capture'] + conf + ['-o', 'none', '-r', rec, '--'] +
                         lcores.split() +
                         ['--no-huge', '-m', '512', '--no-pci', '--no-shconf', '--file-prefix',
                          'th-input-%d' % os.getpid(), '--log-level=error',
                          '--vdev=net_pcap0,rx_pcap=' + pcap],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    with open(rec) as f:
        recs = [[x.strip() for x in line.split('|')] for line in f]
    return res.returncode, recs, res.stderr.decode(errors='replace')


def clock_back(tracehound, workdir):
    """An error string, or None when a clock that goes back 100 s halfway through a users
    capture leaves its open records as they were, those after the step 100 s earlier."""
    users = gen_pcap(tracehound, os.path.join(workdir, 'users.pcap'),
                     ['--workload', 'users', '--seed', '3', '--hours', '0.05'])
    endian, recs, data = pcap_records(users)
    half = len(recs) // 2
    frac_ns = 1 if data[:4] in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d') else 1000
    step_ns = None
    stepped = bytearray(data)
    for off, _ in recs[half:]:
        sec, frac = struct.unpack_from(endian + 'II', data, off)
        if step_ns is None:
            step_ns = sec * 10**9 + frac * frac_ns
        struct.pack_into(endian + 'I', stepped, off, sec - 100)
    path = os.path.join(workdir, 'clock-back.pcap')
    with open(path, 'wb') as f:
        f.write(stepped)
    rc0, want, _ = open_records(tracehound, users, workdir)
    rc, got, err = open_records(tracehound, path, workdir)
    # Behind the dispatcher, two and three decode lcores take the ops in frame order: the
    # same records as one, with or without the step, told of it once.
    for lcores in ('--lcores=0@0,1@1,2@1,3@0,4@1', '--lcores=0@0,1@1,2@1,3@0,4@1,5@0'):
        for name, pcap, one in (('users', users, want), ('stepped', path, got)):
            rc2, got2, err2 = open_records(tracehound, pcap, workdir, lcores)
            steps = re.search(r'^  (\d+) +capture clock went back', err2, re.M)
            layout = re.search(r'^capture: 1 port, (\d) decode lcores', err2, re.M)
            if rc2 != 0 or sorted(got2) != sorted(one) or not layout or \
                    steps is None or steps.group(1) != ('1' if pcap == path else '0'):
                return ('clock back: %s, %s: exit %d, %d records (%d on one lcore, %d the '
                        'same), %s decode lcores, steps counted %s'
                        % (name, lcores, rc2, len(got2), len(one),
                           len(set(map(tuple, got2)) & set(map(tuple, one))),
                           layout.group(1) if layout else None,
                           steps.group(1) if steps else None))
        print('clock back: %s decode lcores behind the dispatcher: the same records, one step'
              % layout.group(1))
    # Rings of 64 and bursts of 256: what waits for the slowest decode lcore still fits the
    # merge queues (they held ring_size ops: 136-302 taken out of order, records changed).
    small = os.path.join(workdir, 'small-rings.ini')
    with open(small, 'w') as f:
        f.write('[capture]\nring_size = 64\nburst = 256\n')
    for lcores in ('--lcores=0@0,1@1,2@1,3@0,4@1', '--lcores=0@0,1@1,2@1,3@0,4@1,5@0'):
        rc2, got2, err2 = open_records(tracehound, path, workdir, lcores, small)
        early = re.search(r'^  (\d+) +ops taken out of frame order', err2, re.M)
        if rc2 != 0 or sorted(got2) != sorted(got) or not early or early.group(1) != '0':
            return ('clock back, small rings, %s: exit %d, %d records (%d on one lcore), %s '
                    'taken out of frame order' % (lcores, rc2, len(got2), len(got),
                                                  early.group(1) if early else None))
    print('clock back: small rings and large bursts, 2 and 3 decode lcores: the same records')

    def key(r, shift=True):
        """A record without its command-time, on the stepped file's clock."""
        sec, usec = r[0].split('.')
        ns = int(sec) * 10**9 + int(usec) * 1000
        return (ns - (100 * 10**9 if shift and ns >= step_ns else 0),) + tuple(r[2:])

    # Only an open that began before the step and went on past it may end elsewhere.
    spans = set(key(r) for r in want
                if key(r)[0] < step_ns and key(r)[0] + int(r[1]) * 1000 >= step_ns)
    times = dict((key(r), r[1]) for r in want)
    have = [(key(r, False), r[1]) for r in got]
    missing = set(times) - set(k for k, _ in have)
    extra = set(k for k, _ in have) - set(times)
    changed = [k for k, t in have if k in times and k not in spans and times[k] != t]
    m = re.search(r'^  (\d+) +capture clock went back', err, re.M)
    if (rc0, rc) != (0, 0) or missing or extra or changed or not m or m.group(1) != '1':
        return ('clock back: exits %d, %d; %d records, %d without the step; %d missing, %d '
                'extra, %d with another command-time; steps counted %s'
                % (rc0, rc, len(got), len(want), len(missing), len(extra), len(changed),
                   m.group(1) if m else None))
    print('clock back: the same %d records, those after a 100 s step 100 s earlier (%d open '
          'across it)' % (len(got), len(spans)))
    return None


def stray_stamps(tracehound, workdir):
    """An error string, or None when two frames of a users capture stamped an hour off (one
    ahead, one behind) change no open record, on one lcore and behind the dispatcher."""
    users = gen_pcap(tracehound, os.path.join(workdir, 'users.pcap'),
                     ['--workload', 'users', '--seed', '3', '--hours', '0.05'])
    endian, recs, data = pcap_records(users)
    stray = bytearray(data)
    # One frame an hour ahead, three in a row with one stamp half an hour ahead (frames of
    # another capture), one an hour behind.
    half = len(recs) // 2
    sec_half, = struct.unpack_from(endian + 'I', data, recs[half][0])
    for k in (len(recs) // 3, half, half + 1, half + 2, 2 * len(recs) // 3):
        off, _ = recs[k]
        sec, = struct.unpack_from(endian + 'I', data, off)
        struct.pack_into(endian + 'I', stray, off,
                         sec + 3600 if k == len(recs) // 3 else
                         sec - 3600 if k == 2 * len(recs) // 3 else sec_half + 1800)
    path = os.path.join(workdir, 'stray.pcap')
    with open(path, 'wb') as f:
        f.write(stray)
    rc0, want, _ = open_records(tracehound, users, workdir)
    for lcores in ('-l 0-1', '--lcores=0@0,1@1,2@1,3@0,4@1'):
        rc, got, err = open_records(tracehound, path, workdir, lcores)
        strays = re.search(r'^  (\d+) +frames with a stray time stamp', err, re.M)
        steps = re.search(r'^  (\d+) +capture clock went back', err, re.M)
        if (rc0, rc) != (0, 0) or sorted(got) != sorted(want) or not strays or \
                strays.group(1) != '5' or not steps or steps.group(1) != '0':
            return ('stray stamps (%s): exits %d, %d; %d records (%d without, %d the same); '
                    'strays counted %s, steps %s'
                    % (lcores, rc0, rc, len(got), len(want),
                       len(set(map(tuple, got)) & set(map(tuple, want))),
                       strays.group(1) if strays else None, steps.group(1) if steps else None))
    print('stray stamps: the same %d records with five frames off (three in a row with one '
          'stamp), five counted, no step (one lcore, dispatcher)' % len(want))
    return None


if __name__ == '__main__':
    sys.exit(main())
