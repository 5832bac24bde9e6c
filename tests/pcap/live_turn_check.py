#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A call that times out on a quiet live link reaches inference behind the dispatcher.

With several decode lcores behind the dispatcher, session lcores take ops in frame
order once every decode lcore is past them (merge_turn()). On a live port, calls
whose reply never came are let go by the decode lcore's ageing, by the host's
clock; keyed at the next frame's ageing point, they waited for a frame that a
quiet link never sends. In a network namespace of its own, a veth pair without
IPv6: `tracehound capture` reads one end through net_af_packet with a dispatcher,
two decode lcores and a session lcore (decode.call_timeout = 1) while this script
writes one NFS SETATTR call, never answered, into the other end. Within 5 s the
session lcore must have taken the call's op (telemetry sess_ops), and nothing else
crosses the link. Skips (77) without root or `ip netns`.
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
from telemetry_check import ask, socket_path  # noqa: E402

SENDER = """
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(('ltn0', 0))
s.send(open(sys.argv[1], 'rb').read())
"""


def setattr_call(pcap):
    """The first NFS SETATTR call of pcap in one unfragmented IPv4 UDP frame, or None."""
    endian, recs, data = pcap_records(pcap)
    for off, n in recs:
        f = data[off + 16:off + 16 + n]
        if f[12:14] != b'\x08\x00' or f[23] != 17 or f[20:22] not in (b'\x00\x00', b'\x40\x00'):
            continue
        rpc = f[14 + (f[14] & 15) * 4 + 8:]
        if len(rpc) >= 24 and struct.unpack_from('>IIII', rpc, 4) == (0, 2, 100003, 3) and \
                struct.unpack_from('>I', rpc, 20)[0] == 2:
            return f
    return None


def main():
    args = script_args(__doc__)
    if os.geteuid() != 0 or shutil.which('ip') is None:
        print('live_turn: skipped (needs root and ip)')
        return 77
    pcap = gen_pcap(args.tracehound, os.path.join(args.workdir, 'udp.pcap'),
                    ['--udp-share', '1', '--ipv6-share', '0', '--ops', '400', '-c', '1'])
    call = setattr_call(pcap)
    if call is None:
        print('live_turn: no SETATTR call in one frame in %s' % pcap)
        return 2
    call_path = os.path.join(args.workdir, 'call.bin')
    with open(call_path, 'wb') as f:
        f.write(call)
    conf = os.path.join(args.workdir, 'live.ini')
    with open(conf, 'w') as f:
        f.write('[decode]\ncall_timeout = 1\n')
    ns = 'th-ltn-%d' % os.getpid()
    if not netns_add(ns):
        print('live_turn: skipped (cannot make a network namespace)')
        return 77
    errors = []
    proc = None
    try:
        veth_up(ns, 'ltn0', 'ltn1')
        err_path = os.path.join(args.workdir, 'capture.stderr')
        with open(err_path, 'w') as err:
            proc = subprocess.Popen(
                ['ip', 'netns', 'exec', ns, args.tracehound, 'capture', '-c', conf,
                 '-o', 'none', '-r', os.path.join(args.workdir, 'live.rec'), '--',
                 '--lcores=0@0,1@1,2@1,3@0,4@1', '--no-huge', '-m', '512', '--no-pci',
                 '--file-prefix', ns, '--log-level=error', '--vdev=net_af_packet0,iface=ltn1'],
                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.time() + 20
        while time.time() < deadline and proc.poll() is None:
            with open(err_path) as f:
                if 'decode lcore' in f.read():
                    break
            time.sleep(0.1)
        subprocess.run(['ip', 'netns', 'exec', ns, sys.executable, '-c', SENDER, call_path],
                       check=True)
        stats = None
        deadline = time.time() + 5
        while time.time() < deadline:
            time.sleep(0.5)
            for path in socket_path(ns):
                if os.path.exists(path):
                    stats = ask(path, '/tracehound/stats')
            if stats is not None and stats.get('sess_ops', 0) >= 1:
                break
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=30)
        with open(err_path) as f:
            err = f.read()
        layout = re.search(r'^capture: 1 port, (\d) decode lcores', err, re.M)
        if rc != 0 or stats is None or not layout or layout.group(1) != '2':
            errors.append('exit %d, telemetry %s, decode lcores %s:\n%s'
                          % (rc, 'answered' if stats else 'silent',
                             layout.group(1) if layout else None, err[-1500:]))
        elif stats.get('frames') != 1 or stats.get('ops_call_only') != 1 or \
                stats.get('sess_ops') != 1:
            errors.append('5 s after one call on a quiet link: %s frames, %s calls timed out, '
                          '%s ops taken by inference (want 1, 1, 1)'
                          % (stats.get('frames'), stats.get('ops_call_only'),
                             stats.get('sess_ops')))
        else:
            print('live turn: a call that timed out on a quiet link reached inference '
                  '(2 decode lcores behind the dispatcher)')
    finally:
        netns_end(ns, proc)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
