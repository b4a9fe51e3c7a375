#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where make check's time went.

timing.py --budget FILE --times FILE [VM-LOG...]

TIMES has "STAGE SECONDS" lines (tests/run.sh writes them); each VM log
carries "# time KERNEL PROGRAM SECONDS" lines (parse.py prints them).
Prints the time of each stage, the slowest programs of each kernel (with
the guest CPU time and the tasks, processes and threads, each created:
parse.py's "# cost KERNEL PROGRAM CPU-SECONDS TASKS" lines; the host is
CPU-bound, so CPU time is what a program takes from the others) and its
slowest cases
(parse.py's "# case-time KERNEL CASE SECONDS [CPU-SECONDS]" lines) and
its costliest cases by guest CPU time,
and a warning for each stage or program that took more than a quarter
longer than BUDGET allows (tests/vm/budget, laid out as the inventory:
"PROGRAM STOCK DEBUG" and "stage/NAME SECONDS").  Warnings never fail
the run: the budget is there to make a slow-down visible in the commit
that causes it.
"""

import argparse
import re

SLACK = 1.25
SHOWN = 8
CASES = 12


def read_budget(path):
    progs, stages = {}, {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return progs, stages
    for line in lines:
        row = line.split("#", 1)[0].split()
        if len(row) == 2 and row[0].startswith("stage/"):
            stages[row[0][len("stage/"):]] = float(row[1])
        elif len(row) == 3:
            for k, v in (("stock", row[1]), ("debug", row[2])):
                if v != "-":
                    progs[(k, row[0])] = float(v)
    return progs, stages


def over(secs, budget):
    return budget is not None and secs > budget * SLACK


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", required=True)
    ap.add_argument("--times", required=True)
    ap.add_argument("logs", nargs="*")
    args = ap.parse_args()
    progs, stages = read_budget(args.budget)
    warnings = []

    print("# === where the time went ===")
    print("# stage                 seconds  budget")
    try:
        times = [l.split() for l in open(args.times).read().splitlines()]
    except OSError:
        times = []
    for name, secs in times:
        secs = int(secs)
        b = stages.get(name)
        print(f"# {name:<22} {secs:7d}  {'-' if b is None else int(b):>6}")
        if over(secs, b):
            warnings.append(f"stage {name} took {secs} s, budget {int(b)} s")

    per_kernel, cases, costs = {}, {}, {}
    for path in args.logs:
        try:
            text = open(path, errors="replace").read()
        except OSError:
            continue
        for k, case, secs, cpu in re.findall(
                r"^# case-time (\w+) (\S+) ([0-9.]+)(?: ([0-9.]+))?$", text, re.M):
            cases.setdefault(k, []).append((float(secs), case,
                                            float(cpu) if cpu else None))
        for k, prog, cpu, procs in re.findall(r"^# cost (\w+) (\S+) ([0-9.]+) ([0-9]+)$",
                                              text, re.M):
            costs[(k, prog)] = (float(cpu), int(procs))
        for k, prog, secs in re.findall(r"^# time (\w+) (\S+) ([0-9.]+)$", text, re.M):
            if prog == "guest":
                continue
            per_kernel.setdefault(k, []).append((float(secs), prog))
    for k, rows in sorted(per_kernel.items()):
        rows.sort(reverse=True)
        total = sum(s for s, _ in rows)
        cpu = sum(costs.get((k, p), (0, 0))[0] for _, p in rows)
        procs = sum(costs.get((k, p), (0, 0))[1] for _, p in rows)
        print(f"# slowest programs, {k} ({len(rows)} programs, {total:.0f} s in all, "
              f"{cpu:.0f} s of guest CPU, {procs} tasks):")
        print(f"#   {'program':<22} {'seconds':>7}  {'budget':>6}  {'cpu-s':>6}  {'tasks':>6}")
        for secs, prog in rows[:SHOWN]:
            b = progs.get((k, prog))
            c = costs.get((k, prog))
            print(f"#   {prog:<22} {secs:7.1f}  {'-' if b is None else int(b):>6}  "
                  f"{'-' if c is None else f'{c[0]:.0f}':>6}  "
                  f"{'-' if c is None else c[1]:>6}")
        for secs, prog in rows:
            b = progs.get((k, prog))
            if b is None:
                warnings.append(f"{k}/{prog} took {secs:.0f} s and has no budget")
            elif over(secs, b):
                warnings.append(f"{k}/{prog} took {secs:.0f} s, budget {int(b)} s "
                                f"(+{100 * (secs / b - 1):.0f} %)")
    for k in sorted(cases):
        rows = sorted(cases[k], key=lambda r: r[0], reverse=True)
        print(f"# slowest cases, {k} (seconds, guest CPU seconds):")
        for secs, case, cpu in rows[:CASES]:
            print(f"#   {case:<60} {secs:7.1f} {'-' if cpu is None else f'{cpu:.1f}':>7}")
        rows = sorted((r for r in cases[k] if r[2] is not None),
                      key=lambda r: r[2], reverse=True)
        if rows:
            print(f"# costliest cases, {k} (seconds, guest CPU seconds):")
        for secs, case, cpu in rows[:CASES]:
            print(f"#   {case:<60} {secs:7.1f} {cpu:7.1f}")
    for w in warnings:
        print(f"# WARNING (time budget, tests/vm/budget): {w}")


if __name__ == "__main__":
    main()
