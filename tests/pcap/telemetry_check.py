#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Ask a running capture for its counters and response times over DPDK telemetry.

tracehound capture replays a generated pcap without end (net_pcap infinite_rx)
while this script connects to the EAL's telemetry socket, as `dpdk-telemetry.py`
would, and reads /tracehound/stats and /tracehound/srt twice: the counters must
grow, every procedure's figures must be in order (min <= p50 <= ... <= max),
the RPCs timed cannot outnumber the RPCs matched, and after SIGINT the capture
must stop cleanly and print at least as many RPCs in its final table.
Exit status: 0 pass, 1 a check failed, 2 a tool failure.
"""

import json
import os
import re
import signal
import struct
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tshark_diff import gen_pcap, script_args  # noqa: E402

FIELDS = ['rpcs', 'min_ns', 'p50_ns', 'p90_ns', 'p99_ns', 'p999_ns', 'max_ns', 'mean_ns']


def socket_path(prefix):
    """Where EAL puts the telemetry socket: /var/run/dpdk as root, else the runtime dir."""
    bases = ['/var/run/dpdk', os.path.join(os.environ.get('XDG_RUNTIME_DIR', '/tmp'), 'dpdk')]
    return [os.path.join(b, prefix, 'dpdk_telemetry.v2') for b in bases]


def ask(path, command):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(path)
        info = json.loads(s.recv(1024).decode())
        s.send(command.encode())
        return json.loads(s.recv(info['max_output_len']).decode())[command]
    finally:
        s.close()


def add_arp(pcap, n):
    """Put n ARP requests at the start of pcap: frames that are not IP, for pkt_not_ip,
    seen before the first read however slowly the capture runs (a sanitizer build)."""
    with open(pcap, 'rb') as f:
        data = f.read()
    endian = '<' if data[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    first_sec = struct.unpack_from(endian + 'I', data, 24)[0]
    frame = b'\xff' * 6 + b'\x02\x00\x00\x00\x00\x01' + b'\x08\x06' + bytes(28)
    arp = b''.join(struct.pack(endian + 'IIII', first_sec, 0, len(frame), len(frame)) + frame
                   for _ in range(n))
    with open(pcap, 'wb') as f:
        f.write(data[:24] + arp + data[24:])


def main():
    args = script_args(__doc__)
    pcap = gen_pcap(args.tracehound, os.path.join(args.workdir, 'telemetry.pcap'),
                    ['--seed', '3', '--ops', '5000', '--mix', 'meta'])
    add_arp(pcap, 50)
    prefix = 'th-tel-%d' % os.getpid()
    err_path = os.path.join(args.workdir, 'capture.stderr')
    cmd = [args.tracehound, 'capture', '-o', 'none', '-s', '0.3',
           '-r', os.path.join(args.workdir, 'opens.txt'), '--', '-l', '0-1', '--no-huge',
           '-m', '256',
           '--no-pci', '--no-shconf', '--file-prefix', prefix, '--log-level=error',
           '--vdev=net_pcap0,rx_pcap=%s,infinite_rx=1' % pcap]
    errors = []
    with open(err_path, 'w') as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.time() + 20
        path = None
        while path is None and time.time() < deadline and proc.poll() is None:
            path = next((p for p in socket_path(prefix) if os.path.exists(p)), None)
            time.sleep(0.1)
        if path is None:
            print('telemetry_check: no telemetry socket at %s (capture %s)'
                  % (' or '.join(socket_path(prefix)),
                     'running' if proc.poll() is None else 'exited %d' % proc.returncode))
            return 1
        # The socket comes up with EAL, the commands once the ports are set up: until
        # then DPDK answers null. Wait for a first answer that has RPCs in it.
        while time.time() < deadline:
            srt = ask(path, '/tracehound/srt')
            if isinstance(srt, dict) and 'NFS3_GETATTR' in srt:
                break
            time.sleep(0.1)
        reads = []
        for _ in range(2):
            srt = ask(path, '/tracehound/srt')
            stats = ask(path, '/tracehound/stats')
            if not isinstance(srt, dict) or not isinstance(stats, dict):
                print('telemetry_check: no answer: %r %r' % (srt, stats))
                return 1
            reads.append((srt, stats))
            time.sleep(0.5)
        for srt, stats in reads:
            rows = {k: v for k, v in srt.items() if isinstance(v, dict)}
            if 'NFS3_GETATTR' not in rows:
                errors.append('no NFS3_GETATTR row: %s' % sorted(rows))
            for name, row in rows.items():
                if sorted(row) != sorted(FIELDS):
                    errors.append('%s: fields %s' % (name, sorted(row)))
                    continue
                order = [row[k] for k in FIELDS[1:7]]
                if order != sorted(order) or row['rpcs'] == 0:
                    errors.append('%s: figures out of order: %s' % (name, row))
            for k in ('ops_matched', 'flow_gaps_lost', 'flow_flows_evicted', 'xid_table_full',
                      'nic_imissed', 'ring_full'):
                if k not in stats:
                    errors.append('/tracehound/stats has no %s' % k)
            for k in ('pkt_not_ip', 'pkt_frag_later', 'frames_copied', 'sess_ops',
                      'sess_ops_not_used', 'sess_ring_full'):
                if k not in stats:
                    errors.append('/tracehound/stats has no %s' % k)
            # Every frame is a mirror port's copy, a TCP segment, a UDP datagram or a parse
            # outcome; the lcore counts the frame first, so a read may find up to a burst not
            # yet sorted.
            sorted_frames = stats.get('frames_copied', 0) + stats.get('tcp_segments', 0) + \
                stats.get('udp_datagrams', 0) + \
                sum(v for k, v in stats.items() if k.startswith('pkt_'))
            if not 0 <= stats['frames'] - sorted_frames <= 256 or \
                    stats.get('pkt_not_ip', 0) == 0 or stats.get('sess_ops', 0) == 0:
                errors.append('frames %d, sorted %d, pkt_not_ip %s, sess_ops %s'
                              % (stats['frames'], sorted_frames, stats.get('pkt_not_ip'),
                                 stats.get('sess_ops')))
            timed = sum(r.get('rpcs', 0) for r in rows.values())
            if timed > stats['ops_matched']:
                errors.append('%d RPCs timed, %d matched (read after)' % (timed,
                                                                          stats['ops_matched']))
            for k in ('untimed_clock', 'untimed_rows'):
                if srt.get(k) != 0:
                    errors.append('%s = %s' % (k, srt.get(k)))
        (srt0, stats0), (srt1, stats1) = reads
        if not stats1['ops_matched'] > stats0['ops_matched']:
            errors.append('ops_matched did not grow: %d, %d' % (stats0['ops_matched'],
                                                               stats1['ops_matched']))
        last = srt1.get('NFS3_GETATTR', {}).get('rpcs', 0)
        if not last > srt0.get('NFS3_GETATTR', {}).get('rpcs', 0):
            errors.append('NFS3_GETATTR rpcs did not grow')
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            errors.append('capture did not stop within 30 s of SIGINT')
    with open(err_path) as f:
        tail = f.read()
    if rc != 0:
        errors.append('capture exited %d:\n%s' % (rc, tail[-2000:]))
    # The progress lines (-s 0.3) carry the interval's response times.
    lines = re.findall(r'^capture: [\d.]+s .* \| (\d+) RPCs/s p50 ([\d.]+) p99 ([\d.]+) '
                       r'max ([\d.]+) us$', tail, re.M)
    if not lines:
        errors.append('no progress line with response times:\n%s' % tail[:1500])
    for rate, p50, p99, top in lines:
        if not (int(rate) > 0 and float(p50) <= float(p99) <= float(top)):
            errors.append('progress: %s RPCs/s p50 %s p99 %s max %s' % (rate, p50, p99, top))
    m = re.search(r'^  NFS3 GETATTR +(\d+) ', tail, re.M)
    if m is None or int(m.group(1)) < last:
        errors.append('final table: NFS3 GETATTR %s RPCs, telemetry had %d'
                      % (m and m.group(1), last))
    errors += stop_while_asked(args, pcap)
    for e in errors:
        print(e)
    print('telemetry: NFS3 GETATTR %d -> %d RPCs timed while running; %s at the end; %d '
          'progress lines with response times' % (srt0.get('NFS3_GETATTR', {}).get('rpcs', 0),
                                                 last, m and m.group(1), len(lines)))
    return 1 if errors else 0


def stop_while_asked(args, pcap):
    """A capture that reaches the end of its pcap while a client keeps asking for
    /tracehound/srt must stop cleanly: DPDK cannot take a command back, so the
    telemetry thread runs on while the lcores' tables are freed (it crashed)."""
    prefix = 'th-tel-stop-%d' % os.getpid()
    cmd = [args.tracehound, 'capture', '-o', 'none', '--', '-l', '0-1', '--no-huge', '-m',
           '256', '--no-pci', '--no-shconf', '--file-prefix', prefix, '--log-level=error',
           '--vdev=net_pcap0,rx_pcap=%s' % pcap]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    queries = 0
    try:
        deadline = time.time() + 20
        path = None
        while path is None and time.time() < deadline and proc.poll() is None:
            path = next((p for p in socket_path(prefix) if os.path.exists(p)), None)
        if path is not None:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                s.connect(path)
                s.recv(1024)
                while proc.poll() is None:
                    s.send(b'/tracehound/srt')
                    if not s.recv(65536):
                        break
                    queries += 1
            except OSError:
                pass  # the process went away under the socket: its exit status says how
            finally:
                s.close()
        rc = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        return ['capture did not stop at the end of its pcap while asked']
    if rc != 0:
        return ['capture asked %d times while it stopped exited %d' % (queries, rc)]
    print('telemetry: asked %d times while the capture ran out and stopped: exit 0' % queries)
    return []


if __name__ == '__main__':
    sys.exit(main())
