#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A live net_af_packet port that falls behind says how many frames the kernel dropped.

The kernel drops frames when a packet socket's ring is full and counts them per
socket; DPDK 22.11's net_af_packet leaves its imissed at 0. In a network
namespace of its own, a veth pair without IPv6 (so nothing but our frames
crosses it): `tracehound capture` reads one end through net_af_packet with a
small ring while this script writes a generated pcap's frames (TCP only: the
driver's fanout reassembles IP fragments) into the other end as fast as it can.
After SIGINT, frames received + "NIC: frames the kernel dropped" must equal the
frames sent. Skips (77) without root or `ip netns`.
Exit status: 0 pass, 1 a difference, 2 a tool failure, 77 skipped.
"""

import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tshark_diff import (gen_pcap, netns_add, netns_end, pcap_records,  # noqa: E402
                         script_args, veth_up)


SENDER = """
import socket, struct, sys
data = open(sys.argv[1], 'rb').read()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(('afp0', 0))
off = 0
while off < len(data):
    n = struct.unpack_from('<H', data, off)[0]
    s.send(data[off + 2:off + 2 + n])
    off += 2 + n
"""


def stat(err, text):
    m = re.search(r'^  (\d+) +%s$' % re.escape(text), err, re.M)
    return int(m.group(1)) if m else None


def main():
    args = script_args(__doc__)
    if os.geteuid() != 0 or shutil.which('ip') is None:
        print('afpacket_drops: skipped (needs root and ip)')
        return 77
    pcap = gen_pcap(args.tracehound, os.path.join(args.workdir, 'tcp.pcap'),
                    ['--seed', '9', '--ops', '30000', '--mix', 'meta', '--udp-share', '0'])
    _, recs, data = pcap_records(pcap)
    frames = [data[off + 16:off + 16 + n] for off, n in recs if n <= 1514]
    ns = 'th-afp-%d' % os.getpid()
    if not netns_add(ns):
        print('afpacket_drops: skipped (cannot make a network namespace)')
        return 77
    errors = []
    proc = None
    try:
        veth_up(ns, 'afp0', 'afp1')
        err_path = os.path.join(args.workdir, 'capture.stderr')
        with open(err_path, 'w') as err:
            proc = subprocess.Popen(
                ['ip', 'netns', 'exec', ns, args.tracehound, 'capture', '-o', 'none', '--',
                 '-l', '0-1', '--no-huge', '-m', '256', '--no-pci', '--no-shconf',
                 '--file-prefix', ns, '--log-level=error',
                 '--vdev=net_af_packet0,iface=afp1,framecnt=512,blocksz=4096,framesz=2048'],
                stdout=subprocess.DEVNULL, stderr=err)
        # The port is up once capture prints its set-up line.
        deadline = time.time() + 20
        while time.time() < deadline and proc.poll() is None:
            with open(err_path) as f:
                if 'decode lcore' in f.read():
                    break
            time.sleep(0.1)
        # Send from inside the namespace, every frame as fast as a raw socket takes them.
        frames_path = os.path.join(args.workdir, 'frames.bin')
        with open(frames_path, 'wb') as f:
            for fr in frames:
                f.write(struct.pack('<H', len(fr)) + fr)
        res = subprocess.run(['ip', 'netns', 'exec', ns, sys.executable, '-c', SENDER,
                              frames_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if res.returncode != 0:
            errors.append('the sender failed: %s' % res.stdout.decode(errors='replace'))
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=30)
        with open(err_path) as f:
            err = f.read()
        got = stat(err, 'frames received')
        drops = stat(err, 'NIC: frames the kernel dropped (net_af_packet ring full)')
        if rc != 0 or got is None or drops is None:
            errors.append('exit %d, frames %s, kernel drops %s:\n%s' % (rc, got, drops,
                                                                       err[-1500:]))
        elif got + drops != len(frames):
            errors.append('%d frames received + %d dropped by the kernel != %d sent'
                          % (got, drops, len(frames)))
        else:
            print('net_af_packet: %d frames sent, %d received, %d dropped by the kernel'
                  % (len(frames), got, drops))
    finally:
        netns_end(ns, proc)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
