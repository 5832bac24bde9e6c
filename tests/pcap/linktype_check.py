#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The same traffic captured with other link layers decodes to the same RPCs.

A generated Ethernet pcap is rewritten as Linux cooked captures (SLL, link type
113, and SLL2, 276) and as raw IP (101), the way `tcpdump -i any` and tunnels
write them; `tracehound capture` must print the same RPC lines for each as for
the Ethernet original (net_pcap hands records over as they are: capture reads
the file's link type). A link type it does not decode is refused with exit 2.
Exit status: 0 pass, 1 a difference, 2 a tool failure.
"""

import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tshark_diff import gen_pcap, run_capture, script_args  # noqa: E402


def rewrite(src, dst, linktype, header_of):
    """Copy pcap @src to @dst with link type @linktype, each frame's Ethernet header
    replaced by header_of(dst_mac, src_mac, ethertype) (b'' for raw IP)."""
    with open(src, 'rb') as f:
        data = f.read()
    magic = data[:4]
    endian = '<' if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    out = bytearray(data[:20]) + struct.pack(endian + 'I', linktype)
    off = 24
    while off + 16 <= len(data):
        sec, sub, caplen, wirelen = struct.unpack(endian + 'IIII', data[off:off + 16])
        frame = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        ethertype = struct.unpack('>H', frame[12:14])[0]
        body = header_of(frame[0:6], frame[6:12], ethertype) + frame[14:]
        grow = len(body) - len(frame)
        out += struct.pack(endian + 'IIII', sec, sub, len(body), wirelen + grow) + body
    with open(dst, 'wb') as f:
        f.write(out)


def sll(dst_mac, src_mac, ethertype):
    # packet type 4 (sent by us), ARPHRD_ETHER, address length 6, address padded to 8
    return struct.pack('>HHH', 4, 1, 6) + src_mac + b'\0\0' + struct.pack('>H', ethertype)


def sll2(dst_mac, src_mac, ethertype):
    return (struct.pack('>HHIHBB', ethertype, 0, 2, 1, 4, 6) + src_mac + b'\0\0')


def raw(dst_mac, src_mac, ethertype):
    return b''


def main():
    args = script_args(__doc__)
    # No VLAN tags: raw IP has nowhere to keep them.
    eth = gen_pcap(args.tracehound, os.path.join(args.workdir, 'eth.pcap'),
                   ['--seed', '8', '--ops', '1500', '--mix', 'mixed', '--udp-share', '0.3',
                    '--ipv6-share', '0.3'])
    want = sorted(run_capture(args.tracehound, eth, args.workdir, 300))
    errors = []
    for name, linktype, header_of in (('sll', 113, sll), ('sll2', 276, sll2), ('raw', 101, raw)):
        path = os.path.join(args.workdir, name + '.pcap')
        rewrite(eth, path, linktype, header_of)
        got = sorted(run_capture(args.tracehound, path, args.workdir, 300))
        if got != want:
            diff = [l for l in got if l not in set(want)][:3]
            errors.append('%s: %d lines, Ethernet %d; e.g. %s' % (name, len(got), len(want),
                                                                   diff))
        else:
            print('%s (link type %d): the same %d RPC lines' % (name, linktype, len(got)))
    # pcapng (net_pcap reads it through libpcap): the link type of its first interface.
    if shutil.which('editcap'):
        ng = os.path.join(args.workdir, 'sll.pcapng')
        subprocess.run(['editcap', '-F', 'pcapng', os.path.join(args.workdir, 'sll.pcap'), ng],
                       check=True)
        got = sorted(run_capture(args.tracehound, ng, args.workdir, 300))
        if got != want:
            errors.append('sll as pcapng: %d lines, Ethernet %d' % (len(got), len(want)))
        else:
            print('sll as pcapng: the same %d RPC lines' % len(got))
    # A pcapng with interfaces of two link types: libpcap would stop at the first packet of
    # the second, so capture refuses it (exit 2) rather than read half.
    twoif = os.path.join(args.workdir, 'twoif.pcapng')
    with open(twoif, 'wb') as f:
        def block(kind, body):
            return struct.pack('<II', kind, 12 + len(body)) + body + struct.pack('<I', 12 + len(body))
        f.write(block(0x0A0D0D0A, struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1)) +
                block(1, struct.pack('<HHI', 1, 0, 65535)) +
                block(1, struct.pack('<HHI', 113, 0, 65535)))
    res = subprocess.run([args.tracehound, 'capture', '-o', '/dev/null', '--', '-l', '0-1',
                          '--no-huge', '-m', '256', '--no-pci', '--no-shconf', '--file-prefix',
                          'th-link2-%d' % os.getpid(), '--log-level=error',
                          '--vdev=net_pcap0,rx_pcap=' + twoif],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if res.returncode != 2 or b'interfaces of two link types' not in res.stdout:
        errors.append('pcapng with two link types: exit %d, %s' % (res.returncode,
                                                                    res.stdout[-300:]))
    # The dispatcher parses frames too (to pick a decode lcore by flow).
    got = sorted(run_capture(args.tracehound, os.path.join(args.workdir, 'sll.pcap'),
                             args.workdir, 300, lcores='0@0,1@1,2@1,3@0'))
    if got != want:
        errors.append('sll through the dispatcher: %d lines, Ethernet %d' % (len(got),
                                                                             len(want)))
    # A link type capture does not decode: refused, not read as Ethernet.
    odd = os.path.join(args.workdir, 'odd.pcap')
    rewrite(eth, odd, 105, raw)  # IEEE 802.11
    res = subprocess.run([args.tracehound, 'capture', '-o', '/dev/null', '--', '-l', '0-1',
                          '--no-huge', '-m', '256', '--no-pci', '--no-shconf', '--file-prefix',
                          'th-link-%d' % os.getpid(), '--log-level=error',
                          '--vdev=net_pcap0,rx_pcap=' + odd],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = res.stdout.decode(errors='replace')
    if res.returncode != 2 or 'link type 105 is not decoded' not in text:
        errors.append('link type 105: exit %d, %s' % (res.returncode, text.strip()[-300:]))
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
