#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Score inferred open records against the ground truth of user-level opens.

    score.py RECORDS TRUTH [--slack S] [--min-writes P] [--min-uncached P]
             [--min-cached P] [--max-over P]

RECORDS: what `tracehound capture -r` wrote, one open per line in the seed's
layout:  timestamp | command-time | direction | file-id | client | transferred | size
TRUTH:   what `tracehound gen --workload users --opens` wrote: the same seven
fields and an eighth, the class: write, uncached-read, partial-read,
cached-read, dir-read, dir-write.

A true open is detected when a record with the same file-id, client (address
and uid) and direction starts within [open - slack, close + slack]; each
record answers at most one true open. A cached read counts as detected only
through a record that says transferred 0. Over-reported cached reads are
records with transferred 0 that answer no true cached read, as a percentage
of the true cached reads (the seed's measure). Prints the table; exits 1 when
a rate misses its bar.

Directory opens (with `[session] detail = dirs`) are reported, not barred: a
record is taken for a directory's when its file-id is one the truth has a
dir-read or dir-write of (the seven fields do not say; a directory no user
listed or made goes unrecognised). Such records that answer no true open are
directory opens over-reported, as a percentage of the true ones, and not
over-reported cached reads. The truth's dir-read transferred is the bytes of
the READDIRPLUS entries; how many matched directory reads say otherwise is
shown too.
"""

import argparse
import bisect
import sys


def parse(path, with_class):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            p = [x.strip() for x in line.split('|')]
            if len(p) < (8 if with_class else 7):
                sys.exit('%s:%d: expected %d fields separated by |, got %d'
                         % (path, n, 8 if with_class else 7, len(p)))
            try:
                t = float(p[0])
                dur = int(p[1]) / 1e6
                rec = {'open': t, 'close': t + dur, 'dir': p[2], 'file': p[3],
                       'client': p[4], 'bytes': int(p[5]), 'size': int(p[6]),
                       'cls': p[7] if with_class else None, 'line': line}
            except ValueError as e:
                sys.exit('%s:%d: %s' % (path, n, e))
            out.append(rec)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('records')
    ap.add_argument('truth')
    ap.add_argument('--slack', type=float, default=1.0, help='seconds (default 1)')
    ap.add_argument('--min-writes', type=float, default=0)
    ap.add_argument('--min-uncached', type=float, default=0)
    ap.add_argument('--min-cached', type=float, default=0)
    ap.add_argument('--max-over', type=float, default=100)
    ap.add_argument('--show', type=int, default=5, help='examples of misses shown per class')
    a = ap.parse_args()

    recs = parse(a.records, False)
    truth = parse(a.truth, True)
    by_key = {}
    for i, r in enumerate(recs):
        by_key.setdefault((r['file'], r['client'], r['dir']), []).append(i)
    for k in by_key:
        by_key[k].sort(key=lambda i: recs[i]['open'])
    used = [False] * len(recs)

    stats = {}
    misses = {}
    wrong_bytes = 0
    matched_reads_writes = 0
    wrong_dir_bytes = 0
    matched_dir_reads = 0
    dir_files = {t['file'] for t in truth if t['cls'] in ('dir-read', 'dir-write')}
    for t in sorted(truth, key=lambda x: x['open']):
        cls = t['cls']
        st = stats.setdefault(cls, [0, 0])
        st[0] += 1
        cands = by_key.get((t['file'], t['client'], t['dir']), [])
        opens = [recs[i]['open'] for i in cands]
        j = bisect.bisect_left(opens, t['open'] - a.slack)
        hit = None
        while j < len(cands) and opens[j] <= t['close'] + a.slack:
            i = cands[j]
            if not used[i] and (cls != 'cached-read' or recs[i]['bytes'] == 0):
                hit = i
                break
            j += 1
        if hit is None:
            misses.setdefault(cls, []).append(t['line'])
            continue
        used[hit] = True
        st[1] += 1
        if cls in ('write', 'uncached-read', 'partial-read'):
            matched_reads_writes += 1
            if recs[hit]['bytes'] != t['bytes']:
                wrong_bytes += 1
        elif cls == 'dir-read':
            matched_dir_reads += 1
            if recs[hit]['bytes'] != t['bytes']:
                wrong_dir_bytes += 1

    true_cached = stats.get('cached-read', [0, 0])[0]
    true_dirs = sum(stats.get(c, [0, 0])[0] for c in ('dir-read', 'dir-write'))
    over = [r for i, r in enumerate(recs)
            if not used[i] and r['dir'] == 'read' and r['bytes'] == 0
            and r['file'] not in dir_files]
    over_dirs = [r for i, r in enumerate(recs) if not used[i] and r['file'] in dir_files]
    unmatched = sum(1 for u in used if not u)

    def pct(x, y):
        return 100.0 * x / y if y else 100.0

    print('%-14s %8s %9s %8s' % ('class', 'true', 'detected', '%'))
    for cls in ('write', 'uncached-read', 'partial-read', 'cached-read', 'dir-read', 'dir-write'):
        if cls in stats:
            n, d = stats[cls]
            print('%-14s %8d %9d %7.2f%%' % (cls, n, d, pct(d, n)))
    print('%-14s %8s %9d %7.2f%%  (of true cached reads)' % ('over-reported', '', len(over),
                                                          pct(len(over), true_cached)))
    if true_dirs:
        print('%-14s %8s %9d %7.2f%%  (of true directory opens)'
              % ('dirs over-rep.', '', len(over_dirs), pct(len(over_dirs), true_dirs)))
    print('records: %d, answering no true open: %d; bytes differ on %d of %d matched reads/writes'
          % (len(recs), unmatched, wrong_bytes, matched_reads_writes))
    if matched_dir_reads:
        print('directory reads: transferred differs on %d of %d matched'
              % (wrong_dir_bytes, matched_dir_reads))
    for cls, lines in sorted(misses.items()):
        for l in lines[:a.show]:
            print('missed %s: %s' % (cls, l))
    for r in over[:a.show]:
        print('over-reported: %s' % r['line'])
    for r in over_dirs[:a.show]:
        print('over-reported directory: %s' % r['line'])

    fail = []
    uncached = [sum(x) for x in zip(stats.get('uncached-read', [0, 0]),
                                    stats.get('partial-read', [0, 0]))]
    checks = [('writes', stats.get('write', [0, 0]), a.min_writes),
              ('uncached reads', uncached, a.min_uncached),
              ('cached reads', stats.get('cached-read', [0, 0]), a.min_cached)]
    for name, (n, d), bar in checks:
        if pct(d, n) < bar:
            fail.append('%s detected %.2f%% < %.2f%%' % (name, pct(d, n), bar))
    if pct(len(over), true_cached) > a.max_over:
        fail.append('cached reads over-reported %.2f%% > %.2f%%'
                    % (pct(len(over), true_cached), a.max_over))
    if fail:
        print('accuracy: FAILED: ' + '; '.join(fail))
        return 1
    print('accuracy: all bars met')
    return 0


if __name__ == '__main__':
    sys.exit(main())
