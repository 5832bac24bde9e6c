#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The RPC log's disk fills: every line is written or counted as lost.

`tracehound capture -o` onto a 256 KiB tmpfs (in a mount namespace of its own,
gone with the process) stops with exit 1 once a write fails. The statistics
must account for every RPC line the decode lcores made: the complete lines in
the file plus "RPC lines lost: the output failed" equal RPCs matched + unmatched
calls + unmatched replies, and "bytes of RPC lines written" is the file's size.
Skips (77) where a tmpfs cannot be mounted.
Exit status: 0 pass, 1 a difference, 2 a tool failure, 77 skipped.
"""

import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tshark_diff import gen_pcap, script_args  # noqa: E402


def stat(err, text):
    m = re.search(r'^  (\d+) +%s$' % re.escape(text), err, re.M)
    return int(m.group(1)) if m else None


def main():
    args = script_args(__doc__)
    if shutil.which('unshare') is None or os.geteuid() != 0:
        print('output_full_check: skipped (needs root and unshare to mount a tmpfs)')
        return 77
    pcap = gen_pcap(args.tracehound, os.path.join(args.workdir, 'full.pcap'),
                    ['--seed', '4', '--ops', '20000', '--mix', 'meta'])
    mnt = os.path.join(args.workdir, 'small')
    os.makedirs(mnt, exist_ok=True)
    log = os.path.join(mnt, 'rpcs.txt')
    kept = os.path.join(args.workdir, 'rpcs.txt')
    script = ('mount -t tmpfs -o size=256k none "$1" || exit 77; shift; "$@"; rc=$?; '
              'cp "$0" "$KEEP" 2>/dev/null; exit $rc')
    cmd = ['unshare', '-m', 'sh', '-c', script, log, mnt, args.tracehound, 'capture', '-o', log,
           '--', '-l', '0-1', '--no-huge', '-m', '256', '--no-pci', '--no-shconf',
           '--file-prefix', 'th-full-%d' % os.getpid(), '--log-level=error',
           '--vdev=net_pcap0,rx_pcap=' + pcap]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                         env=dict(os.environ, KEEP=kept))
    err = res.stderr.decode(errors='replace')
    if res.returncode == 77:
        print('output_full_check: skipped (cannot mount a tmpfs here)')
        return 77
    errors = []
    if res.returncode != 1 or 'writing output: No space left on device' not in err:
        errors.append('exit %d, want 1 with "No space left":\n%s' % (res.returncode, err[-1500:]))
    with open(kept, 'rb') as f:
        data = f.read()
    whole = data.count(b'\n')
    made = [stat(err, t) for t in ('RPCs matched (call and reply)', 'unmatched calls (no reply)',
                                   'unmatched replies (no call)')]
    lost = stat(err, 'RPC lines lost: the output failed')
    written = stat(err, 'bytes of RPC lines written')
    if None in made or lost is None or written is None:
        errors.append('statistics incomplete: made %s, lost %s, written %s' % (made, lost,
                                                                               written))
    else:
        if whole + lost != sum(made):
            errors.append('%d whole lines in the file + %d lost != %d RPC lines made'
                          % (whole, lost, sum(made)))
        if written != len(data):
            errors.append('%d bytes written, the file has %d' % (written, len(data)))
        print('disk full: %d whole lines written (%d bytes) + %d lost = %d RPC lines made'
              % (whole, len(data), lost, sum(made)))
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
