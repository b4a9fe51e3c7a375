#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn one VM run into test results.

parse.py LABEL RESULTS CONSOLE [--counts FILE] [--kunit-py PATH]
         [--kunit-suites S,...] [--debug-kernel] [--no-leak-scan]
         [--artifacts-dir DIR] [--host-dir DIR]
         [--skips FILE] [--inventory FILE]

RESULTS is what the guest's init wrote to its second serial port: each
program's TAP output framed by SOFTCM-BEGIN/SOFTCM-END lines, then
SOFTCM-DONE.  CONSOLE is the kernel console.  Files the guest announced
with SOFTCM-ARTIFACT must have arrived whole in the artifacts directory, and
each packet capture among them must have a host-side check (NAME.tap and
NAME.rc in the host directory, written by run.sh), counted as program
host/NAME.  We print one line per test
case ("ok - LABEL/prog/case" or "not ok - ..."), then a summary, and exit 1
when anything failed.  A pass needs positive evidence: a program that
crashed, stopped short of its plan or never ended, a guest that never said
SOFTCM-DONE, and any kernel report on the console are all failures.

A skipped case is shown and counted as skipped, and it fails the run unless
the --skips file allows it (LABEL or *, program/case, then the reason).
With --inventory, every program and KUnit suite it lists for LABEL must
report exactly the number of results it names, and every program that
reports must be listed: a program that stops being built, a case that
disappears and a new case nobody registered all turn the run red.  After
each program the guest reports what it left behind (ids, connections and
files in the initial namespace, references on the module, namespaces):
anything left is a failure of that program.  Each program's wall time
in the guest is printed as "# time LABEL PROGRAM SECONDS".
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Kernel console lines that fail a run whatever the tests said.
KERNEL_REPORTS = [
    r"BUG: ",                                   # KASAN, sleeping in atomic, ...
    r"WARNING: ",                               # WARN(), lockdep splats
    r"\[ BUG: ",                                # lockdep: invalid wait context
    r"UBSAN: ",
    r"Kernel panic",
    r"Oops",
    r"general protection fault",
    r"unreferenced object 0x",                  # kmemleak
    r"INFO: task .* blocked for more than",     # hung task
    r"watchdog: BUG: soft lockup",
    r"rcu: INFO: rcu_.* detected stalls",
    r"Call Trace:",
    r"refcount_t: ",
    r"list_(add|del) corruption",
    r"ODEBUG: ",                                # debug objects
    r"Kernel memory leak detector disabled",    # kmemleak gave up: no verdict
]
REPORT_RE = re.compile("|".join(KERNEL_REPORTS))
# A user program's general protection fault, as the kernel logs it
# ("traps: ib_send_lat[3606] general protection fault ip:... in
# libibverbs.so.1"), like its segfaults: the program's failure, which its
# test reports, not the kernel's.
USER_TRAP_RE = re.compile(r"traps: \S+\[\d+\] general protection fault ip:")

# Taint bits a clean run may show: O (out-of-tree module, 12), E
# (unsigned module, 13) and N (a KUnit test module was loaded, 18).
# Anything else (W for a warning, B for bad page,
# D for an oops, ...) is a failure.
ALLOWED_TAINT = (1 << 12) | (1 << 13) | (1 << 18)
# The slowest cases of a run printed as "# case-time" lines.
CASES_SHOWN = 40


class Run:
    def __init__(self, label, allowed_skips=None):
        self.label = label
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        # None: every skip is allowed (no --skips given)
        self.allowed_skips = allowed_skips
        self.counts = {}	# program or kunit/suite -> results seen
        self.leftovers = set()	# programs whose leftovers were reported
        self.times = {}		# program -> seconds in the guest
        self.costs = {}		# program -> (guest CPU seconds, tasks created)
        self.case_times = []	# (seconds, program/case, CPU s) from "# case-time"

    @staticmethod
    def programs_of(results):
        return {l.split(" ", 1)[1] for l in results if l.startswith("SOFTCM-BEGIN ")}

    def ok(self, name, note=""):
        self.passed += 1
        print(f"ok - {self.label}/{name}{note}")

    def skip(self, name, why):
        if self.allowed_skips is not None and name not in self.allowed_skips:
            self.fail(name, f"skipped ({why}), and tests/vm/skips does not allow it")
            return
        self.skipped += 1
        print(f"ok - {self.label}/{name} # SKIP {why}")

    def fail(self, name, why=""):
        self.failed += 1
        print(f"not ok - {self.label}/{name}" + (f" # {why}" if why else ""))


def parse_program(run, prog, lines, rc):
    """Count one program's TAP; return the lines to show if it failed."""
    plan = None
    seen = 0
    failed_before = run.failed
    running = None
    last = None
    for line in lines:
        m = re.match(r"^1\.\.(\d+)", line)
        if m:
            plan = int(m.group(1))
            continue
        # The kselftest harness names a case on its "#  RUN" line and, for
        # a skip, prints "ok N # SKIP reason" with no name (6.1
        # kselftest.h): the name must come from the RUN line.
        m = re.match(r"^#\s+RUN\s+(\S+) \.\.\.$", line)
        if m:
            running = m.group(1)
            continue
        m = re.match(r"^# case-time ([0-9.]+)(?: ([0-9.]+))?$", line)
        if m and last:
            cpu = float(m.group(2)) if m.group(2) else None
            run.case_times.append((float(m.group(1)), last, cpu))
            continue
        m = re.match(r"^(not ok|ok) (\d+)(?: (.*))?$", line)
        if not m:
            continue
        seen += 1
        text = m.group(3) or ""
        if text.startswith("# "):
            name, directive = running or f"case-{m.group(2)}", text[2:]
        else:
            name, _, directive = text.partition(" # ")
        running = None
        name = f"{prog}/{name.strip()}"
        last = name
        if directive.upper().startswith("SKIP"):
            if m.group(1) == "ok":
                run.skip(name, directive[4:].strip() or "skipped")
            else:
                run.fail(name, directive)
        elif m.group(1) == "ok":
            run.ok(name)
        else:
            run.fail(name)
    run.counts[prog] = seen
    if rc is None:
        run.fail(prog, "did not finish (guest crashed or hung)")
    elif plan is None:
        run.fail(prog, f"printed no TAP plan (exit {rc})")
    elif seen < plan:
        run.fail(prog, f"{seen} of {plan} results, exit {rc} (crashed?)")
    elif rc != 0 and run.failed == failed_before:
        run.fail(prog, f"exit status {rc} with no failing case")
    return run.failed != failed_before


def parse_kunit(run, suite, lines, kunit_py):
    """One suite's debugfs KTAP, parsed by the kernel's own kunit.py."""
    with tempfile.TemporaryDirectory() as tmp:
        ktap = os.path.join(tmp, "results")
        out = os.path.join(tmp, "results.json")
        with open(ktap, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([sys.executable, kunit_py, "parse", "--json=" + out, ktap],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            groups = json.load(open(out))["sub_groups"]
        except (OSError, ValueError, KeyError):
            groups = []
    cases = [c for g in groups if g["name"] == suite for c in g["test_cases"]]
    run.counts[f"kunit/{suite}"] = len(cases)
    if not cases:
        run.fail(f"kunit/{suite}", "no parsable results")
    for c in cases:
        name = f"kunit/{suite}/{c['name']}"
        if c["status"] == "PASS":
            run.ok(name)
        elif c["status"] == "SKIP":
            run.skip(name, "skipped")
        else:
            run.fail(name, c["status"])
    if any(c["status"] not in ("PASS", "SKIP") for c in cases):
        for l in lines:
            print(f"#   kunit: {l}")


def read_table(path, label):
    """Lines of PATH as word lists, comments and blank lines dropped."""
    rows = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            rows.append(line.split())
    return rows


def read_skips(path, label):
    """tests/vm/skips: 'LABEL|* program/case reason...' -> allowed names."""
    return {r[1] for r in read_table(path, label) if r[0] in (label, "*")}


def check_inventory(run, path):
    """Every listed program reported its number of results; no stranger."""
    expected = {}
    for row in read_table(path, run.label):
        if row[0].startswith("stage/"):	# a host stage's row (tap.sh)
            continue
        col = {"stock": 1, "debug": 2}.get(run.label)
        if col is None or len(row) != 3:
            run.fail("inventory", f"bad line or label: {' '.join(row)}")
            return
        if row[col] != "-":
            expected[row[0]] = int(row[col])
    for prog, want in sorted(expected.items()):
        got = run.counts.get(prog)
        if got is None:
            run.fail(f"inventory/{prog}", f"expected {want} results, the program did not run")
        elif got != want:
            run.fail(f"inventory/{prog}", f"{got} results, the inventory says {want}")
    for prog in sorted(set(run.counts) - set(expected)):
        run.fail(f"inventory/{prog}",
                 f"{run.counts[prog]} results from a program the inventory does not list")
    if set(expected) <= set(run.counts):
        run.ok("inventory", f" # {len(expected)} programs, {sum(expected.values())} results")


def check_leftovers(run, line):
    """SOFTCM-LEFTOVERS PROG key=value...: all zero, or PROG failed."""
    words = line.split()
    prog, left = words[1], [w for w in words[2:] if "=" in w and not w.endswith("=0")]
    left += [w for w in words[2:] if w.startswith("netns:")]
    run.leftovers.add(prog)
    if left:
        run.fail(f"{prog}/leaves-nothing-behind", " ".join(left))


def check_artifacts(run, artifacts, adir, hdir):
    """Every announced file arrived whole; every capture was dissected."""
    for name, size in sorted(artifacts.items()):
        path = os.path.join(adir or "", name)
        got = os.path.getsize(path) if adir and os.path.isfile(path) else -1
        if got != size:
            run.fail(f"artifact/{name}", f"{got} of {size} bytes reached the host")
            continue
        if not name.endswith(".pcap"):
            continue
        stem = name[:-len(".pcap")]
        try:
            lines = open(os.path.join(hdir, stem + ".tap"),
                         errors="replace").read().splitlines()
            rc = int(open(os.path.join(hdir, stem + ".rc")).read())
        except (OSError, TypeError, ValueError):
            run.fail(f"host/{stem}", "the capture was not checked")
            continue
        if parse_program(run, f"host/{stem}", lines, rc):
            for l in lines:
                print(f"#   host/{stem}: {l}")


def read_lines(path):
    try:
        # splitlines() also drops the CR a cooked serial line adds
        return open(path, errors="replace").read().splitlines()
    except OSError:
        return []


def parse_guest(run, args, results, console, pre, artifacts, kunit_seen):
    """One guest's results and console; run-wide verdicts named PRE...."""
    booted = any(l.startswith("SOFTCM-BOOT") for l in results)
    unload_seen = False
    done = any(l == "SOFTCM-DONE" for l in results)
    prog, body = None, []
    suite = None
    debug_markers = set()
    for line in results:
        if line.startswith("SOFTCM-KUNIT-LOAD "):
            rc = int(line.split()[1])
            (run.ok if rc == 0 else run.fail)("kunit/module-load")
        elif line.startswith("SOFTCM-KUNIT-BEGIN "):
            suite, body = line.split(" ", 1)[1], []
        elif line.startswith("SOFTCM-KUNIT-END ") and suite:
            parse_kunit(run, suite, body, args.kunit_py)
            kunit_seen.add(suite)
            suite = None
        elif suite:
            body.append(line)
        elif line.startswith("SOFTCM-UNLOAD "):
            unload_seen = True
            rc = line.split()[1]
            if rc == "0":
                run.ok(pre + "module-unload-after-tests")
            else:
                run.fail(pre + "module-unload-after-tests", f"status {rc}")
        elif line.startswith("SOFTCM-TIME ") and not prog:
            _, name, secs = line.split()
            run.times[name] = float(secs)
        elif line.startswith("SOFTCM-COST ") and not prog:
            _, name, cpu, procs = line.split()
            run.costs[name] = (float(cpu), int(procs))
        elif line.startswith("SOFTCM-DEBUG-LOCKS "):
            debug_markers.add("locks")
            if line.split()[1] == "1":
                run.ok(pre + "lockdep-still-on")
            else:
                run.fail(pre + "lockdep-still-on", "debug_locks dropped to 0")
        elif line.startswith("SOFTCM-KMEMLEAK "):
            debug_markers.add("kmemleak")
            words = line.split()
            n, scan = int(words[1]), words[2] if len(words) > 2 else "missing"
            if scan != "0":
                run.fail(pre + "kmemleak",
                         f"the scan was refused (status {scan}): kmemleak is off")
            else:
                (run.ok if n == 0 else run.fail)(pre + "kmemleak",
                                                 f"{n} leak(s)" if n else "")
        elif line.startswith(("# kmemleak: ", "# init: ")) and not prog:
            print(line)
        elif line.startswith("SOFTCM-ARTIFACT ") and not prog:
            _, name, size = line.split(" ", 2)
            artifacts[name] = int(size)
        elif line.startswith("SOFTCM-BEGIN "):
            prog, body = line.split(" ", 1)[1], []
        elif line.startswith("SOFTCM-END ") and prog:
            rc = int(line.split()[2])
            if parse_program(run, prog, body, rc):
                for l in body:
                    print(f"#   {prog}: {l}")
            prog = None
        elif line.startswith("SOFTCM-LEFTOVERS ") and not prog:
            check_leftovers(run, line)
        elif line.startswith("SOFTCM-TAINT "):
            taint = int(line.split()[1])
            if taint & ~ALLOWED_TAINT:
                run.fail(pre + "kernel-taint", f"tainted {taint:#x}")
            else:
                run.ok(pre + "kernel-taint")
        elif prog:
            body.append(line)
    if prog:  # the guest died inside a program
        parse_program(run, prog, body, None)
        for l in body[-20:]:
            print(f"#   {prog}: {l}")

    if done:
        for p in sorted(set(run.counts) - run.leftovers):
            if not p.startswith(("kunit/", "host/")) and p in run.programs_of(results):
                run.fail(f"{p}/leaves-nothing-behind", "the guest did not check")
    if done and not unload_seen:
        run.fail(pre + "module-unload-after-tests", "the guest did not report it")
    if args.debug_kernel and done:
        for m in ("locks",) + (() if args.no_leak_scan else ("kmemleak",)):
            if m not in debug_markers:
                run.fail(f"{pre}debug-check-{m}", "the guest did not report it")

    if not booted:
        run.fail(pre + "guest", "never reached init")
    elif not done:
        run.fail(pre + "guest", "did not finish: panic, hang or timeout")

    reports = [l for l in console if REPORT_RE.search(l) and not USER_TRAP_RE.search(l)]
    if reports:
        run.fail(pre + "kernel-log", f"{len(reports)} report line(s)")
        for l in reports[:20]:
            print(f"#   console: {l}")
    elif booted:
        run.ok(pre + "kernel-log")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("label")
    ap.add_argument("logs", nargs="+", metavar="RESULTS CONSOLE",
                    help="each guest's results and console (several guests "
                    "ran one kernel's programs side by side)")
    ap.add_argument("--counts")
    ap.add_argument("--kunit-py")
    ap.add_argument("--kunit-suites", default="")
    ap.add_argument("--debug-kernel", action="store_true")
    ap.add_argument("--no-leak-scan", action="store_true",
                    help="the guest was told not to scan for leaks")
    ap.add_argument("--artifacts-dir")
    ap.add_argument("--host-dir")
    ap.add_argument("--skips")
    ap.add_argument("--inventory")
    args = ap.parse_args()
    if len(args.logs) % 2:
        ap.error("RESULTS and CONSOLE come in pairs")

    run = Run(args.label, read_skips(args.skips, args.label) if args.skips else None)
    guests = list(zip(args.logs[0::2], args.logs[1::2]))
    artifacts, kunit_seen = {}, set()
    for g, (res, con) in enumerate(guests):
        pre = "" if len(guests) == 1 else f"guest{g + 1}/"
        parse_guest(run, args, read_lines(res), read_lines(con), pre,
                    artifacts, kunit_seen)

    check_artifacts(run, artifacts, args.artifacts_dir, args.host_dir)
    if args.inventory:
        check_inventory(run, args.inventory)
    for suite in filter(None, args.kunit_suites.split(",")):
        if suite not in kunit_seen:
            run.fail(f"kunit/{suite}", "suite did not report")

    if run.passed + run.failed == 0:
        run.fail("guest", "no test ran")

    for p, n in sorted(run.counts.items()):
        print(f"# count {args.label} {p} {n}")
    for p, t in run.times.items():
        print(f"# time {args.label} {p} {t:.1f}")
    for p, (cpu, procs) in run.costs.items():
        print(f"# cost {args.label} {p} {cpu:.1f} {procs}")
    # Only the cases worth a look, the slowest and the costliest (guest
    # CPU): timing.py ranks them.
    slow = sorted(run.case_times, key=lambda r: r[0], reverse=True)[:CASES_SHOWN]
    costly = sorted((r for r in run.case_times if r[2] is not None),
                    key=lambda r: r[2], reverse=True)[:CASES_SHOWN]
    for t, c, cpu in sorted(set(slow) | set(costly), key=lambda r: r[0], reverse=True):
        print(f"# case-time {args.label} {c} {t:.1f}" +
              ("" if cpu is None else f" {cpu:.1f}"))
    print(f"# {args.label}: {run.passed} passed, {run.failed} failed, "
          f"{run.skipped} skipped")
    if args.counts:
        with open(args.counts, "a") as f:
            f.write(f"{run.passed} {run.failed} {run.skipped}\n")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
