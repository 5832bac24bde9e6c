#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the response-time table `tracehound capture` prints at the end.

For each pcap (generated with --gen NAME:GEN-ARGS, or given), tracehound
captures it with its RPC log on; then
  1. against the log: every procedure's row must hold exactly the matched
     RPCs (KIND RPC) the log has for it, with min, max and mean of their
     LAT_LAST, and each percentile within its bucket (1.6%) of
     the nearest-rank value of those latencies;
  2. against tshark's `-z rpc,srt` (the same dissector options as
     tshark_diff.py): the same RPCs per procedure, and min, max and mean
     within tshark's microsecond rounding. tshark times a reply at its last
     segment and tracehound at its first, so for procedures whose replies
     span segments (READ, READDIR, READDIRPLUS, READLINK) tracehound's
     figures may only be lower.
With --table and --log it checks `tracehound export --srt` instead: its
table against the LAT_FIRST of the log of the capture that wrote the
segments (a record keeps the call's first segment only), and its RPCs not
timed against the log's CALL and REPLY lines.
Exit status: 0 equal, 1 a difference, 2 a usage or tool failure, 77 nothing
to check (no pcap present).
"""

import argparse
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tshark_diff import pcap_files, run_capture  # noqa: E402

SKIP = 77
HEADER = 'server response time by procedure'
COLUMNS = ['rpcs', 'min', 'p50', 'p90', 'p99', 'p99.9', 'max', 'mean']
PERCENTILES = {'p50': 50, 'p90': 90, 'p99': 99, 'p99.9': 99.9}
# (program number, version) of each name the table prints, for tshark's -z rpc,srt.
PROGRAMS = {'NFS2': (100003, 2), 'NFS3': (100003, 3), 'MOUNT1': (100005, 1),
            'MOUNT3': (100005, 3), 'PORTMAP2': (100000, 2)}
MULTI_SEGMENT_REPLIES = {'READ', 'READDIR', 'READDIRPLUS', 'READLINK'}
TSHARK_OPTS = ['-2', '-o', 'tcp.try_heuristic_first:TRUE', '-o', 'udp.try_heuristic_first:TRUE',
               '-o', 'tcp.reassemble_out_of_order:TRUE']


def die(msg, code=2):
    print('srt_check: ' + msg, file=sys.stderr)
    sys.exit(code)


def ns_of(text):
    """'337.000' (microseconds, three decimals) -> 337000 ns; None for '-'."""
    if text == '-':
        return None
    neg = text.startswith('-')
    whole, _, frac = text.lstrip('-').partition('.')
    ns = int(whole) * 1000 + int((frac + '000')[:3])
    return -ns if neg else ns


def parse_table(stats):
    """{label: {column: value}} from the statistics block, and the not-timed rows."""
    lines = stats.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith(HEADER)]
    if len(at) != 1:
        die('the statistics block has %d response-time tables' % len(at), 1)
    i = at[0] + 1
    if lines[i].split() != ['procedure'] + COLUMNS:
        die('unexpected column header: %r' % lines[i], 1)
    rows, untimed = {}, {}
    for l in lines[i + 1:]:
        m = re.match(r'^  (\S.*?)\s+(\d+)((?:\s+\d+\.\d{3}){7})$', l)
        if m:
            vals = [int(m.group(2))] + [ns_of(v) for v in m.group(3).split()]
            rows[m.group(1)] = dict(zip(COLUMNS, vals))
            continue
        m = re.match(r'^  (\d+)\s+RPCs not timed: (.*)$', l)
        if not m:
            break
        untimed[m.group(2)] = int(m.group(1))
    return rows, untimed


def client_of(field):
    """'10.1.0.7:993' or '[fd00::7]:993' -> the address."""
    return field.rsplit(':', 1)[0].strip('[]')


def from_log(lines, column=10, client=None):
    """{label: sorted LAT_LAST (column 10; LAT_FIRST: 9) in ns} of the log's matched RPCs."""
    lat = {}
    for l in lines:
        f = l.split(' ')
        if len(f) < 11 or f[1] != 'RPC' or (client and client_of(f[3]) != client):
            continue
        v = ns_of(f[column].rstrip('\n'))
        if v is None or v < 0:
            continue
        lat.setdefault(f[6] + ' ' + f[7], []).append(v)
    return {k: sorted(v) for k, v in lat.items()}


def nearest_rank(values, p):
    return values[max(1, math.ceil(p / 100.0 * len(values))) - 1]


def check_log(name, rows, untimed, lat, errors, unmatched=0):
    """The table against the log's latencies; unmatched: its CALL and REPLY lines (export)."""
    for why, n in untimed.items():
        want = unmatched if why.startswith('no reply or no call') else 0
        if n != want:
            errors.append('%s: %d RPCs not timed: %s (want %d)' % (name, n, why, want))
    for label in sorted(set(rows) | set(lat)):
        row, v = rows.get(label), lat.get(label)
        if row is None or v is None:
            errors.append('%s: %s: %s in the table, %s in the log'
                          % (name, label, row and row['rpcs'], v and len(v)))
            continue
        want = {'rpcs': len(v), 'min': v[0], 'max': v[-1]}
        for col, w in want.items():
            if row[col] != w:
                errors.append('%s: %s %s: table %s, log %s' % (name, label, col, row[col], w))
        mean = sum(v) / len(v)
        if abs(row['mean'] - mean) > 1:  # printed to the nanosecond
            errors.append('%s: %s mean: table %d ns, log %.1f ns' % (name, label, row['mean'],
                                                                    mean))
        for col, p in PERCENTILES.items():
            exact = nearest_rank(v, p)
            if abs(row[col] - exact) > exact / 64 + 1:
                errors.append('%s: %s %s: table %d ns, nearest rank of the log %d ns'
                              % (name, label, col, row[col], exact))


def tshark_srt(pcap, prog, vers):
    """{procedure name: (calls, min, max, avg) in ns} from tshark -z rpc,srt."""
    res = subprocess.run(['tshark', '-r', pcap, '-q'] + TSHARK_OPTS +
                         ['-z', 'rpc,srt,%d,%d' % (prog, vers)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300)
    if res.returncode != 0:
        die('tshark failed on %s' % pcap, 2)
    out = {}
    for l in res.stdout.decode(errors='replace').splitlines():
        m = re.match(r'^\s*\d+\s+(\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+$', l)
        if m:
            out[m.group(1)] = (int(m.group(2)),) + tuple(
                round(float(m.group(k)) * 1e9) for k in (3, 4, 5))
    return out


def check_tshark(name, pcap, rows, errors):
    for prog_name, (prog, vers) in PROGRAMS.items():
        theirs = tshark_srt(pcap, prog, vers)
        ours = {l.split(' ', 1)[1]: r for l, r in rows.items()
                if l.split(' ', 1)[0] == prog_name}
        for proc in sorted(set(theirs) | set(ours)):
            t, o = theirs.get(proc), ours.get(proc)
            if t is None or o is None or t[0] != o['rpcs']:
                errors.append('%s: %s %s: tshark %s RPCs, tracehound %s'
                              % (name, prog_name, proc, t and t[0], o and o['rpcs']))
                continue
            for col, tv in zip(('min', 'max', 'mean'), t[1:]):
                # tshark prints seconds to six decimals: its value is within 500 ns.
                if proc in MULTI_SEGMENT_REPLIES:
                    ok = o[col] <= tv + 500
                else:
                    ok = abs(o[col] - tv) <= 500
                if not ok:
                    errors.append('%s: %s %s %s: tshark %d ns, tracehound %d ns'
                                  % (name, prog_name, proc, col, tv, o[col]))


def check_export(args):
    """`tracehound export --srt` output (--table) against the capture's log (--log)."""
    with open(args.table) as f:
        rows, untimed = parse_table(f.read())
    with open(args.log) as f:
        lines = f.readlines()
    unmatched = sum(1 for l in lines if l.split(' ')[1:2] in (['CALL'], ['REPLY']) and
                    (not args.client or client_of(l.split(' ')[3]) == args.client))
    errors = []
    check_log(os.path.basename(args.table), rows, untimed, from_log(lines, 9, args.client),
              errors, unmatched)
    for e in errors:
        print(e)
    print('%s: %d procedures, %d RPCs timed, %d not (no reply or no call)'
          % (args.table, len(rows), sum(r['rpcs'] for r in rows.values()), unmatched))
    sys.exit(1 if errors else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--table', help="check this `export --srt` output against --log's "
                    'LAT_FIRST instead (no capture run)')
    ap.add_argument('--log', help='the RPC log of the capture that wrote the segments')
    ap.add_argument('--client', help="with --table: only this client's RPCs")
    ap.add_argument('--tracehound')
    ap.add_argument('--workdir')
    ap.add_argument('--gen', action='append', default=[], metavar='NAME:ARGS')
    ap.add_argument('--lcores', help='EAL --lcores, e.g. 0@0,1@1,2@1 (dispatch, 2 decoders)')
    ap.add_argument('pcaps', nargs='*', help='pcap files or directories of them')
    args = ap.parse_args()
    if args.table:
        check_export(args)
    if not args.tracehound or not args.workdir:
        die('--tracehound and --workdir, or --table and --log')
    args.tracehound = os.path.abspath(args.tracehound)
    os.makedirs(args.workdir, exist_ok=True)

    pcaps = []
    for p in args.pcaps:
        pcaps += pcap_files(p) or []
    for spec in args.gen:
        name, _, gargs = spec.partition(':')
        pcap = os.path.join(args.workdir, name + '.pcap')
        res = subprocess.run([args.tracehound, 'gen'] + gargs.split() + ['-o', pcap],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if res.returncode != 0:
            die('gen %s failed: %s' % (gargs, res.stdout.decode(errors='replace')), 1)
        pcaps.append(pcap)
    if not pcaps:
        print('srt_check: no pcap to check, skipping', file=sys.stderr)
        sys.exit(SKIP)
    has_tshark = shutil.which('tshark') is not None
    if not has_tshark:
        print('srt_check: tshark not installed: checking against the log alone',
              file=sys.stderr)

    errors = []
    for pcap in pcaps:
        name = os.path.basename(pcap)
        lines, stats = run_capture(args.tracehound, pcap, args.workdir, 300, args.lcores,
                                   with_stats=True)
        rows, untimed = parse_table(stats)
        lat = from_log(lines)
        check_log(name, rows, untimed, lat, errors)
        if has_tshark:
            check_tshark(name, pcap, rows, errors)
        print('%s: %d procedures, %d RPCs timed' % (name, len(rows),
                                                    sum(r['rpcs'] for r in rows.values())))
    for e in errors:
        print(e)
    sys.exit(1 if errors else 0)


if __name__ == '__main__':
    main()
