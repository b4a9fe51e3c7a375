#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Deal one kernel's test programs to N guests that run side by side.

shard.py [--head-start S] N KERNEL BUDGET PROGRAM...

Each program costs its time in BUDGET (tests/vm/budget: "PROGRAM STOCK
DEBUG" rows; KUnit's row is "kunit"), 60 s when it has none.  The longest
goes first, each to the guest with the least time so far; each guest
keeps the programs in the order given.  With --head-start, every guest
but the first starts S seconds late (run.sh --join-after), so it starts
with S seconds already counted.  Prints one line per guest, its programs
separated by spaces (a guest may get none).
"""

import sys

DEFAULT = 60.0


def main():
    args = sys.argv[1:]
    head_start = 0.0
    if args[:1] == ["--head-start"]:
        head_start, args = float(args[1]), args[2:]
    n, kernel, budget, progs = int(args[0]), args[1], args[2], args[3:]
    col = 2 if kernel == "debug" else 1
    cost = {}
    try:
        for line in open(budget):
            row = line.split("#", 1)[0].split()
            if len(row) == 3 and row[col] != "-":
                cost[row[0]] = float(row[col])
    except OSError:
        pass
    load = [0.0] + [head_start] * (n - 1)
    lists = [[] for _ in range(n)]
    for i, p in sorted(enumerate(progs), key=lambda ip: (-cost.get(ip[1], DEFAULT), ip[0])):
        g = load.index(min(load))
        load[g] += cost.get(p, DEFAULT)
        lists[g].append((i, p))
    for guest in lists:
        print(" ".join(p for _, p in sorted(guest)))


if __name__ == "__main__":
    main()
