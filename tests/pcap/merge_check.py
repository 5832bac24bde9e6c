#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Several pcap files on one lcore are read in time order, as they happened.

A capture box with an optical tap records each direction of a link on its own
port, so a replay has one file per direction: every call in one, every reply
in the other. Reading one file and then the next would hand every reply over
before its call. `tracehound capture` reads the file ports an lcore polls by
their frames' times; this script splits a generated capture and checks that
the parts decode exactly as the whole did (the same RPC lines and the same
summary line):

  by direction     each IP direction to its own file (the replies' file
                   first), on one decode lcore and behind the dispatcher;
  three files      flows dealt round three files;
  small pool       jumbo frames (five mbufs each) in three files from a pool
                   of 1023 mbufs: held frames must not starve the next read;
  large snap       a capture of snap length 262144 (128 mbufs a frame, as
                   reckoned) split by direction, behind the dispatcher with 6 and
                   8 lcores and 1023 mbufs: no file frame read out of time order
                   (the decode lcores give back their cached mbufs), the whole
                   file's RPC lines;
  beside a live    the two files split by direction beside a net_null port
                   that never runs dry, on one lcore: the files take their
                   turns, and by the SIGINT 2 s in the whole file's RPC lines
                   are out (all but a few: with a live port the tables age by
                   the host's clock, years past the files', so a call may go
                   before its reply), exit 0;
  stopped          SIGINT halfway through two files behind the dispatcher
                   with rings of 64: every frame the ports delivered is
                   decoded, none dropped as "dispatch ring full";
  too many ports   17 files: refused (exit 2), not some of them read;
  coarse clock     stamps rounded to 10 ms (old captures), so that calls and
                   their replies tie: a tie hands on the call first, whichever
                   file holds it.
  shared           each Ethernet capture in ../shared/pcaps (or
                   $TH_SHARED_PCAPS), when present, split by direction, in
                   either file order.
Exit status: 0 pass, 1 a difference, 2 a tool failure.
"""

import os
import re
import signal
import struct
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tshark_diff import gen_pcap, pcap_records, script_args  # noqa: E402

SUMMARY_RE = re.compile(r'^summary:.*$', re.M)


def ip_addrs(frame):
    """(source, destination) addresses of an Ethernet frame's IP header, or None."""
    off, etype = 12, int.from_bytes(frame[12:14], 'big')
    while etype in (0x8100, 0x88a8) and len(frame) >= off + 6:
        off += 4
        etype = int.from_bytes(frame[off:off + 2], 'big')
    ip = frame[off + 2:]
    if etype == 0x0800 and len(ip) >= 20:
        return ip[12:16], ip[16:20]
    if etype == 0x86dd and len(ip) >= 40:
        return ip[8:24], ip[24:40]
    return None


def split(pcap, parts, pick):
    """Write pcap's records to len(parts) files, each to parts[pick(frame)]."""
    _, recs, data = pcap_records(pcap)
    bodies = [bytearray(data[:24]) for _ in parts]
    for off, caplen in recs:
        frame = data[off + 16:off + 16 + caplen]
        bodies[pick(frame)] += data[off:off + 16 + caplen]
    for path, body in zip(parts, bodies):
        with open(path, 'wb') as f:
            f.write(body)
    return parts


def coarsen(pcap, out, step_ns):
    """Write pcap with its record times rounded down to step_ns (records keep their order)."""
    endian, recs, data = pcap_records(pcap)
    per_s = 1000000000 if data[:4] in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d') else 1000000
    body = bytearray(data)
    for off, _ in recs:
        sec, frac = struct.unpack_from(endian + 'II', body, off)
        ns = (sec * 1000000000 + frac * (1000000000 // per_s)) // step_ns * step_ns
        struct.pack_into(endian + 'II', body, off, ns // 1000000000,
                         ns % 1000000000 // (1000000000 // per_s))
    with open(out, 'wb') as f:
        f.write(body)
    return out


def capture(tracehound, pcaps, workdir, lcores, config=None):
    """(exit status, sorted RPC lines, summary line) of one capture of every pcap."""
    out = os.path.join(workdir, 'merge.ops')
    if os.path.exists(out):
        os.unlink(out)
    conf = ['-c', config] if config else []
    vdevs = ['--vdev=net_pcap%d,rx_pcap=%s' % (i, p) for i, p in enumerate(pcaps)]
    res = subprocess.run([tracehound, 'capture'] + conf + ['-o', out, '--'] + lcores.split() +
                         ['--no-huge', '-m', '256', '--no-pci', '--no-shconf',
                          '--file-prefix', 'th-merge-%d' % os.getpid(),
                          '--log-level=error'] + vdevs,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    err = res.stderr.decode(errors='replace')
    lines = []
    if os.path.exists(out):
        with open(out) as f:
            lines = sorted(f.readlines())
    m = SUMMARY_RE.search(err)
    return res.returncode, lines, m.group(0) if m else err[-400:]


def row(err, text):
    """The number on the statistics row that ends with text, or None."""
    m = re.search(r'^  (\d+) +%s$' % re.escape(text), err, re.M)
    return int(m.group(1)) if m else None


def stopped(tracehound, pcaps, workdir, config, lcores):
    """An error string, or None when a capture stopped halfway decoded every frame
    delivered."""
    vdevs = ['--vdev=net_pcap%d,rx_pcap=%s' % (i, p) for i, p in enumerate(pcaps)]
    proc = subprocess.Popen([tracehound, 'capture', '-c', config, '-o', os.devnull,
                             '-s', '0.1', '--'] + lcores.split() +
                            ['--no-huge', '-m', '256', '--no-pci', '--no-shconf',
                             '--file-prefix', 'th-merge-%d' % os.getpid(),
                             '--log-level=error'] + vdevs,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Halfway: once frames flow (a progress line), not at a fixed time, which a loaded
    # machine can spend still starting EAL (the signal then came before its handler).
    seen = []
    flowing = None
    for line in proc.stderr:
        seen.append(line)
        if re.match(rb'capture: [0-9.]+s frames [1-9]', line):
            flowing = line.decode(errors='replace').strip()
            break
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    err = (b''.join(seen) + proc.communicate(timeout=300)[1]).decode(errors='replace')
    got = (row(err, 'frames received'), row(err, 'NIC: frames delivered (ipackets)'),
           row(err, 'dispatch ring full'))
    if proc.returncode != 0 or 'not read to their end (stopped)' not in err or \
            got[0] is None or got[0] != got[1] or got[2] != 0:
        return ('stopped: exit %d, %s frames received, %s delivered, %s ring full; %s; '
                'SIGINT sent after %s'
                % (proc.returncode, got[0], got[1], got[2],
                   (SUMMARY_RE.search(err) or re.search('.*$', err)).group(0),
                   flowing or 'the capture had ended (no progress line with frames)'))
    print('stopped halfway: %d frames delivered, %d decoded, 0 ring full' % (got[1], got[0]))
    return None


def beside_live(tracehound, whole, parts, workdir):
    """An error string, or None when files beside a busy live port are read."""
    want = capture(tracehound, [whole], workdir, '-l 0-1')[1]
    out = os.path.join(workdir, 'live.ops')
    vdevs = ['--vdev=net_pcap%d,rx_pcap=%s' % (i, p) for i, p in enumerate(parts)]
    proc = subprocess.Popen([tracehound, 'capture', '-o', out, '--', '-l', '0-1',
                             '--no-huge', '-m', '256', '--no-pci', '--no-shconf',
                             '--file-prefix', 'th-merge-%d' % os.getpid(),
                             '--log-level=error'] + vdevs + ['--vdev=net_null0,copy=1'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=300)[1].decode(errors='replace')
    lines = []
    if os.path.exists(out):
        with open(out) as f:
            lines = f.readlines()
    # copy=1: net_null's frames are zeros (not IP), not whatever an mbuf held before.
    same = len(set(want) & set(lines))
    if proc.returncode != 0 or same < len(want) - 10:
        return ('beside a live port: exit %d, %d RPC lines (%d as the whole file\'s %d); %s'
                % (proc.returncode, len(lines), same, len(want), err[-300:]))
    print('beside a live port: exit 0, %d of the whole file\'s %d RPC lines' % (same, len(want)))
    return None


def large_snap(tracehound, whole, workdir, config):
    """An error string, or None when a large snap length reads no frame out of order."""
    endian, _, data = pcap_records(whole)
    body = bytearray(data)
    struct.pack_into(endian + 'I', body, 16, 262144)
    big = os.path.join(workdir, 'snap.pcap')
    with open(big, 'wb') as f:
        f.write(body)
    parts = split(big, [os.path.join(workdir, 'snap%d.pcap' % i) for i in range(2)],
                  direction_of(big))
    want = capture(tracehound, [big], workdir, '-l 0-1', config)
    for lcores in ('--lcores=0@0,1@1,2@1,3@0,4@1,5@0', '--lcores=0@0,1@1,2@1,3@0,4@1,5@0,6@1,7@0'):
        out = os.path.join(workdir, 'merge.ops')
        vdevs = ['--vdev=net_pcap%d,rx_pcap=%s' % (i, p) for i, p in enumerate(parts)]
        res = subprocess.run([tracehound, 'capture', '-c', config, '-o', out, '--'] +
                             lcores.split() +
                             ['--no-huge', '-m', '256', '--no-pci', '--no-shconf',
                              '--file-prefix', 'th-merge-%d' % os.getpid(),
                              '--log-level=error'] + vdevs,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        err = res.stderr.decode(errors='replace')
        with open(out) as f:
            lines = sorted(f.readlines())
        slips = row(err, 'file frames read out of time order (too few mbufs)')
        if res.returncode != 0 or slips != 0 or lines != want[1]:
            return ('large snap (%s): exit %d, %s frames out of time order, %d RPC lines '
                    '(%d as the whole file\'s)' % (lcores, res.returncode, slips, len(lines),
                                                   len(set(lines) & set(want[1]))))
        print('large snap (%s): no frame out of time order, the same %d RPC lines'
              % (lcores, len(lines)))
    return None


def check(name, tracehound, whole, parts, workdir, lcores, config=None):
    """An error string, or None when the parts decode as the whole."""
    want = capture(tracehound, [whole], workdir, lcores, config)
    got = capture(tracehound, parts, workdir, lcores, config)
    if want[0] != 0 or got[0] != 0 or got[1] != want[1] or got[2] != want[2]:
        same = len(set(got[1]) & set(want[1]))
        return ('%s: exit %d, %d RPC lines (%d as the whole file\'s), %s; the whole file: '
                'exit %d, %d RPC lines, %s' % (name, got[0], len(got[1]), same, got[2],
                                               want[0], len(want[1]), want[2]))
    print('%s: the same %d RPC lines and "%s"' % (name, len(got[1]), got[2]))
    return None


def direction_of(pcap):
    """A split by IP direction: the direction of pcap's first IP frame to the second file,
    read after the first (frames without IP to the first)."""
    _, recs, data = pcap_records(pcap)
    first = next(a for a in (ip_addrs(data[off + 16:off + 16 + n]) for off, n in recs) if a)

    def pick(frame):
        a = ip_addrs(frame)
        return 0 if a is None else int((a[0] < a[1]) == (first[0] < first[1]))
    return pick


def flow_of(n):
    """A split of conversations (address pairs) over n files."""
    def pick(frame):
        a = ip_addrs(frame)
        return 0 if a is None else zlib.crc32(min(a) + max(a)) % n
    return pick


def main():
    args = script_args(__doc__)
    errors = []
    whole = gen_pcap(args.tracehound, os.path.join(args.workdir, 'whole.pcap'),
                     ['--seed', '8', '--ops', '1500', '--mix', 'mixed', '--udp-share', '0.3'])
    by_direction = direction_of(whole)
    halves = split(whole, [os.path.join(args.workdir, 'dir%d.pcap' % i) for i in range(2)],
                   by_direction)
    thirds = split(whole, [os.path.join(args.workdir, 'flow%d.pcap' % i) for i in range(3)],
                   flow_of(3))
    for e in (check('by direction, one decode lcore', args.tracehound, whole, halves,
                    args.workdir, '-l 0-1'),
              check('by direction, dispatcher and two decode lcores', args.tracehound, whole,
                    halves, args.workdir, '--lcores=0@0,1@1,2@1,3@0'),
              check('three files', args.tracehound, whole, thirds, args.workdir, '-l 0-1')):
        if e:
            errors.append(e)

    jumbo = gen_pcap(args.tracehound, os.path.join(args.workdir, 'jumbo.pcap'),
                     ['--seed', '9', '--ops', '300', '--mix', 'data', '--mtu', '9000'])
    pool = os.path.join(args.workdir, 'pool.ini')
    with open(pool, 'w') as f:
        f.write('[capture]\nmbufs = 1023\nburst = 256\n')
    jparts = split(jumbo, [os.path.join(args.workdir, 'jumbo%d.pcap' % i) for i in range(3)],
                   lambda frame: by_direction(frame) + (len(frame) > 4000))
    for lcores in ('-l 0-1', '--lcores=0@0,1@1,2@1,3@0,4@1,5@0'):
        e = check('small pool, jumbo frames (%s)' % lcores, args.tracehound, jumbo, jparts,
                  args.workdir, lcores, pool)
        if e:
            errors.append(e)

    e = beside_live(args.tracehound, whole, halves, args.workdir)
    if e:
        errors.append(e)
    e = large_snap(args.tracehound, whole, args.workdir, pool)
    if e:
        errors.append(e)

    meta = gen_pcap(args.tracehound, os.path.join(args.workdir, 'meta.pcap'),
                    ['--seed', '5', '--ops', '200000', '--mix', 'meta'])
    mparts = split(meta, [os.path.join(args.workdir, 'meta%d.pcap' % i) for i in range(2)],
                   direction_of(meta))
    small = os.path.join(args.workdir, 'small.ini')
    with open(small, 'w') as f:
        f.write('[capture]\nmbufs = 1023\nburst = 256\nring_size = 64\n')
    e = stopped(args.tracehound, mparts, args.workdir, small, '--lcores=0@0,1@1,2@1,3@0')
    if e:
        errors.append(e)

    many = split(whole, [os.path.join(args.workdir, 'many%d.pcap' % i) for i in range(17)],
                 flow_of(17))
    rc, lines, err = capture(args.tracehound, many, args.workdir, '-l 0-1')
    if rc != 2 or lines:
        errors.append('17 files: exit %d, %d RPC lines; want exit 2 and none' % (rc, len(lines)))
    else:
        print('17 files: refused, exit 2')

    coarse = coarsen(whole, os.path.join(args.workdir, 'coarse.pcap'), 10000000)
    cparts = split(coarse, [os.path.join(args.workdir, 'coarse%d.pcap' % i) for i in range(2)],
                   direction_of(coarse))
    e = check('coarse clock, replies\' file first', args.tracehound, coarse, cparts,
              args.workdir, '-l 0-1')
    if e:
        errors.append(e)

    shared = os.environ.get('TH_SHARED_PCAPS') or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'shared', 'pcaps')
    if not os.path.isdir(shared):
        print('shared captures: %s absent, not split' % shared)
    for name in sorted(os.listdir(shared)) if os.path.isdir(shared) else []:
        pcap = os.path.join(shared, name)
        with open(pcap, 'rb') as f:
            head = f.read(24)
        if not name.endswith('.pcap') or len(head) < 24 or \
                struct.unpack(('<' if head[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1')
                               else '>') + 'I', head[20:24])[0] != 1:
            continue  # Ethernet pcaps only: the split reads their IP headers
        parts = split(pcap, [os.path.join(args.workdir, 'shared%d.pcap' % i) for i in range(2)],
                      direction_of(pcap))
        for order in (parts, parts[::-1]):
            e = check('%s, %s first' % (name, os.path.basename(order[0])), args.tracehound,
                      pcap, order, args.workdir, '-l 0-1')
            if e:
                errors.append(e)

    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
