#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Deal one kernel's test programs to its guests as they ask for them.

dispatch.py order KERNEL BUDGET PROGRAM...
    Prints the programs one per line, the longest first by their time in
    BUDGET (tests/vm/budget: "PROGRAM STOCK DEBUG" rows; 60 s for one
    without a row), ties in the order given: the queue of a run with
    several guests, whose last programs are then the short ones.

dispatch.py serve --queue FILE --pid PID PIPE RESULTS
    One guest's end of its results port (a QEMU pipe chardev: PIPE.out
    from the guest, PIPE.in to it).  Every line the guest writes goes to
    RESULTS, but "SOFTCM-NEXT", which is answered with the first program
    left in the queue FILE (taken out of it under a lock, so that the
    guests of a run share it), or an empty line when none is left.
    Returns once PID (the guest's QEMU) is gone and its output drained.

A guest asks when it is free, so the guests finish within one program's
time of each other, whatever the host's load did to the estimates.
"""

import fcntl
import os
import select
import sys

DEFAULT = 60.0


def order(kernel, budget, progs):
    col = 2 if kernel == "debug" else 1
    cost = {}
    try:
        for line in open(budget):
            row = line.split("#", 1)[0].split()
            if len(row) == 3 and row[col] != "-":
                cost[row[0]] = float(row[col])
    except OSError:
        pass
    ranked = sorted(enumerate(progs), key=lambda ip: (-cost.get(ip[1], DEFAULT), ip[0]))
    for _, p in ranked:
        print(p)


def take(queue):
    """The first program of QUEUE, removed from it; "" when it is empty."""
    with open(queue + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(queue) as f:
            progs = f.read().split()
        if not progs:
            return ""
        with open(queue + ".tmp", "w") as f:
            f.write("".join(p + "\n" for p in progs[1:]))
        os.replace(queue + ".tmp", queue)
        return progs[0]


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def serve(queue, pid, pipe, results):
    # Read-write opens never block and never see an end of file: QEMU's
    # end is told by its PID.
    rfd = os.open(pipe + ".out", os.O_RDWR)
    wfd = os.open(pipe + ".in", os.O_RDWR)
    buf = b""
    with open(results, "ab", buffering=0) as out:
        while True:
            ready, _, _ = select.select([rfd], [], [], 1.0)
            if not ready:
                if not alive(pid):
                    break
                continue
            buf += os.read(rfd, 65536)
            lines = buf.split(b"\n")
            buf = lines.pop()
            for line in lines:
                if line.rstrip(b"\r") == b"SOFTCM-NEXT":
                    os.write(wfd, take(queue).encode() + b"\n")
                else:
                    out.write(line + b"\n")
        out.write(buf)


def main():
    args = sys.argv[1:]
    if args[:1] == ["order"] and len(args) >= 3:
        order(args[1], args[2], args[3:])
    elif args[:1] == ["serve"] and len(args) == 7 and args[1] == "--queue" and args[3] == "--pid":
        serve(args[2], int(args[4]), args[5], args[6])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
