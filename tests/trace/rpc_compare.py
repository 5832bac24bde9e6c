#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare `tracehound export --rpcs` text with the RPC log the same capture printed.

    rpc_compare.py CAPTURE_LOG EXPORT_TEXT

Every RPC line of the capture must come back once from the segments, with the
same time, kind, protocol, endpoints, xid, program, procedure, status and
LAT_FIRST; LAT_LAST is '-' (a record does not keep the call's last segment).
Of the keys, export writes what a record keeps: uid and gid (0 where the
capture saw no AUTH_SYS credential), fh, off, count, done (a listing's entry
count too), done_min (a listing the capture kept in part) and size, each
equal to the capture's; off and count only where the capture has them.
"""
import sys


def parse(line):
    f = line.rstrip('\n').split(' ')
    keys = {}
    for kv in f[11:]:
        k, _, v = kv.partition('=')
        keys[k] = v
    return (f[0], f[3], f[5]), f[:11], keys


def main():
    cap, exp = {}, {}
    for path, into in ((sys.argv[1], cap), (sys.argv[2], exp)):
        with open(path) as fh:
            for line in fh:
                key, pos, keys = parse(line)
                if key in into:
                    print(f'{path}: two lines for {key}')
                    return 1
                into[key] = (pos, keys)
    bad = 0
    for key in cap.keys() - exp.keys():
        print(f'missing from export: {" ".join(cap[key][0])}')
        bad += 1
    for key in exp.keys() - cap.keys():
        print(f'not in the capture: {" ".join(exp[key][0])}')
        bad += 1
    for key in cap.keys() & exp.keys():
        (cpos, ckeys), (epos, ekeys) = cap[key], exp[key]
        why = []
        if cpos[:10] != epos[:10]:
            why.append(f'fields {cpos[:10]} != {epos[:10]}')
        if epos[10] != '-':
            why.append(f'LAT_LAST {epos[10]}')
        for k, v in ekeys.items():
            if k in ('uid', 'gid') and k not in ckeys:
                if v != '0':
                    why.append(f'{k}={v} without a credential')
            elif k not in ckeys:
                why.append(f'{k}={v} not in the capture line')
            elif ckeys[k] != v:
                why.append(f'{k}={v}, capture {ckeys[k]}')
        for k in ('uid', 'gid', 'fh', 'off', 'count', 'done', 'done_min', 'size'):
            # off and count 0 both: a record cannot tell them from absent.
            if k in ckeys and k not in ekeys and not (
                    k in ('off', 'count') and ckeys.get('off') == '0'
                    and ckeys.get('count') == '0'):
                why.append(f'{k} missing')
        if why:
            print(f'{" ".join(cpos)}: {"; ".join(why)}')
            bad += 1
    print(f'{len(cap)} capture lines, {len(exp)} exported, {bad} differ')
    return 1 if bad or not cap else 0


if __name__ == '__main__':
    sys.exit(main())
