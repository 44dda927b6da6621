#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per kernel function, from tbprof.so's output.

sym.py SYSTEM_MAP RUN [BASELINE|-] [UNITS] [TOP]: the instructions RUN
executed per function, less BASELINE's (a run of the same boot without
the work measured), divided by UNITS (the number of operations), the TOP
largest. User-space addresses count as one "[user]" entry.
"""
import bisect
import collections
import sys


def load(path, addrs, syms):
    c = collections.Counter()
    for line in open(path):
        a, n = line.split()
        a, n = int(a, 16), int(n)
        if a < 0xffff000000000000:
            c["[user]"] += n
            continue
        i = bisect.bisect_right(addrs, a) - 1
        c[syms[i][1] if i >= 0 else "?"] += n
    return c


def main():
    syms = []
    for line in open(sys.argv[1]):
        a, t, n = line.split()[:3]
        if t in "tTwW":
            syms.append((int(a, 16), n))
    syms.sort()
    addrs = [a for a, _ in syms]
    run = load(sys.argv[2], addrs, syms)
    base = collections.Counter()
    if len(sys.argv) > 3 and sys.argv[3] != "-":
        base = load(sys.argv[3], addrs, syms)
    units = float(sys.argv[4]) if len(sys.argv) > 4 else 1
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 40
    d = {k: run[k] - base.get(k, 0) for k in set(run) | set(base)}
    print("total %.1f per unit" % (sum(d.values()) / units))
    for k, v in sorted(d.items(), key=lambda x: -x[1])[:top]:
        print("%10.1f %s" % (v / units, k))


main()
