#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn cmbench's lines into the ratio table and the chart's data, and
datapath.sh's dpbench lines into the data-path table and its chart.

    report.py RESULTS OUTDIR

RESULTS holds "cmbench key=value..." lines (and "# " comments).  bench.sh
runs every system once per run, interleaved, and tags each line run=R: a
measurement's min/median/max are then over its runs (a line from a
cmbench run of several runs, as the scale case's, keeps its own), and a
ratio is the median of the per-run ratios, the two systems paired by run,
with their range.  Writes
OUTDIR/table.txt (plain), OUTDIR/table.rst (for performance.rst),
OUTDIR/<system>-<topo>.dat (gnuplot: n, rate min/median/max, p99
min/median/max) and OUTDIR/chart.gp; exits 1 when a system is missing.
The data path (dpbench lines, when there are any) gives OUTDIR/datapath.txt,
datapath.rst, dp-*.dat and chart-datapath.gp (datapath.png); a run that
failed is a "failed" cell with its error listed under the table, and
exits 1; either part's error never stops the other.
"""
import os
import sys

STAGES = ["req_wire", "req_to_queued", "request_queued", "server_accept", "rep_wire",
          "rep_to_queued", "response_queued", "client_establish", "rtu_wire",
          "rtu_to_established", "total"]

SYSTEMS = [  # (system, topo, column title)
    ("softcm", "veth", "softcm veth"),
    # libsoftcm's softcm_submit() on both sides (cmbench -X)
    ("softcm-submit", "veth", "softcm -X veth"),
    ("softcm", "lo", "softcm lo"),
    ("rdmacm", "lo", "rdma_cm rxe lo"),
    ("softcm-to-rdmacm", "veth", "softcm→rdma_cm rxe veth"),
    ("tcp", "veth", "TCP veth"),
    ("tcp", "lo", "TCP lo"),
    # the burst case only (BENCH_BURST_DROP=1): no hold queue, 6.1's timeout
    ("softcm-drop", "veth", "softcm veth, drops (before)"),
]


def load(path):
    runs, notes = {}, []
    for line in open(path):
        line = line.strip()
        if line.startswith("# "):
            notes.append(line[2:])
        if not line.startswith("cmbench "):
            continue
        kv = dict(f.split("=", 1) for f in line.split()[1:])
        key = (kv["system"], kv["topo"], kv["case"], int(kv["n"]), kv["metric"])
        runs.setdefault(key, []).append((int(kv.get("run", "0")), float(kv["min"]),
                                         float(kv["median"]), float(kv["max"]), kv["unit"]))
    res, per_run = {}, {}
    for key, rs in runs.items():
        if len(rs) == 1:
            res[key] = rs[0][1:]
        else:
            med = sorted(r[2] for r in rs)
            res[key] = (med[0], median(med), med[-1], rs[0][4])
        per_run[key] = {r[0]: r[2] for r in rs}
    return res, per_run, notes


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def fmt(v):
    if v is None:
        return "–"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    if abs(v) >= 0.1:
        return "%.2f" % v
    return "%.2g" % v


def main():
    res, per_run, notes = load(sys.argv[1])
    out = sys.argv[2]
    ns = sorted({k[3] for k in res if k[2] == "setup"})
    rows = []  # (label, unit, [median per system], better, [key per system])

    def get(sysname, topo, case, n, metric):
        v = res.get((sysname, topo, case, n, metric))
        return v[1] if v else None

    def row(label, case, n, metric, unit, better):
        keys = [(s, t, case, n, metric) for s, t, _ in SYSTEMS]
        rows.append((label, unit, [get(*k) for k in keys], better, keys))

    for n in ns:
        row("setup rate, N=%d" % n, "setup", n, "rate", "conn/s", "higher")
    for n in ns:
        row("setup latency p50, N=%d in flight" % n, "setup", n, "lat_p50", "µs", "lower")
        row("setup latency p99, N=%d in flight" % n, "setup", n, "lat_p99", "µs", "lower")
    single = sorted({k[3] for k in res if k[2] == "single"})
    for n in single:
        row("one connection at a time, p50", "single", n, "lat_p50", "µs", "lower")
        row("one connection at a time, p99", "single", n, "lat_p99", "µs", "lower")
        row("  connect → ESTABLISHED only, p50", "single", n, "connect_p50", "µs", "lower")
        row("  address resolution, warm, p50", "single", n, "addr_p50", "µs", "lower")
        row("  route resolution, p50", "single", n, "route_p50", "µs", "lower")
    for n in ns:
        row("teardown rate (disconnect), N=%d" % n, "setup", n, "teardown_rate", "conn/s",
            "higher")
        row("destroy rate, N=%d" % n, "setup", n, "destroy_rate", "ids/s", "higher")
    for n in ns:
        row("kernel slab per connection (2 ids), N=%d" % n, "setup", n, "kmem_per_conn",
            "bytes", "lower")
    # The call each system offers for it: an ioctl for softcm, the system
    # call for TCP (librdmacm has neither: its column stays empty).
    keys = [(s, t, "peeraddr", 1, "getpeername" if s == "tcp" else "softcm_getpeername")
            for s, t, _ in SYSTEMS]
    rows.append(("peer address: softcm_getpeername / getpeername(2)", "ns",
                 [get(*k) for k in keys], "lower", keys))
    # rdma-core's inline getter reads the id's copy: no call to compare.
    keys = [(s, t, "peeraddr", 1, "rdma_get_peer_addr") for s, t, _ in SYSTEMS]
    rows.append(("peer address: rdma_get_peer_addr (inline, no call)", "ns",
                 [get(*k) for k in keys], "lower", keys))
    # The burst: N clients at once, a listener of a much smaller backlog;
    # the ratio that matters is softcm veth / TCP veth (target: below 2).
    for cas in sorted({k[2] for k in res if k[2].startswith("burst-")}):
        kind, backlog = cas.split("-")[1], cas.split("-")[2][1:]
        for n in sorted({k[3] for k in res if k[2] == cas}):
            what = "burst of %d clients, backlog %s, %s server" % (n, backlog, kind)
            row(what + ": all established", cas, n, "time", "ms", "lower")
            row(what + ": latency p99", cas, n, "lat_p99", "µs", "lower")
    keys = [(s, t, "resolve_cold", 20, "addr_p50") for s, t, _ in SYSTEMS]
    if any(get(*k) is not None for k in keys):
        rows.append(("address resolution, cold neighbour, p50", "µs",
                     [get(*k) for k in keys], "lower", keys))

    head = ["measurement (median of runs)", "unit"] + [c for _, _, c in SYSTEMS] + \
        ["softcm lo / rdma_cm lo", "softcm veth / TCP veth", "softcm -X veth / TCP veth"]
    col = {(s, t): i for i, (s, t, _) in enumerate(SYSTEMS)}
    pairs = [(col[("softcm", "lo")], col[("rdmacm", "lo")]),
             (col[("softcm", "veth")], col[("tcp", "veth")]),
             (col[("softcm-submit", "veth")], col[("tcp", "veth")])]

    def ratio(k1, k2):
        """Median and range of the per-run ratios k1/k2, runs paired."""
        a, b = per_run.get(k1, {}), per_run.get(k2, {})
        # a slab delta can be negative (freed objects reused): no ratio
        rs = sorted(a[r] / b[r] for r in a if r in b and r and a[r] > 0 and b[r] > 0)
        if not rs:
            # untagged results: the ratio of the medians
            v1, v2 = get(*k1), get(*k2)
            return fmt(v1 / v2) + "×" if v1 and v2 and v1 > 0 and v2 > 0 else "–"
        if len(rs) == 1:
            return fmt(rs[0]) + "×"
        return "%s× (%s–%s)" % (fmt(median(rs)), fmt(rs[0]), fmt(rs[-1]))

    table = []
    for label, unit, vals, better, keys in rows:
        if all(v is None for v in vals):
            continue
        table.append([label, unit] + [fmt(v) for v in vals] +
                     [ratio(keys[a], keys[b]) for a, b in pairs])

    scale = sorted({k[3] for k in res if k[2] == "scale"})
    base = get("softcm", "veth", "scale", scale[0], "rate") if scale else None
    scale_lines = []
    for live in scale:
        r = get("softcm", "veth", "scale", live, "rate")
        lk = get("softcm", "veth", "scale", live, "lookup")
        mem = get("softcm", "veth", "scale", live, "kmem_per_conn")
        rel = " (%.2f× the rate at %d idle ids)" % (r / base, 2 * scale[0]) \
            if base and r and live != scale[0] else ""
        scale_lines.append("softcm veth, %d idle ids (%d connections): batch of 1000 at %s "
                           "conn/s%s; softcm_getpeername %s ns; kernel slab %s bytes per "
                           "idle connection (%s per id)"
                           % (2 * live, live, fmt(r), rel, fmt(lk), fmt(mem),
                              fmt(mem / 2 if mem is not None else None)))

    # Where one connection's time goes (tests/bench/stages.sh), per topology.
    for topo in ("veth", "lo"):
        parts = []
        for k in sorted((k for k in res if k[0] == "softcm-traced" and k[1] == topo
                         and k[2] == "stages"), key=lambda k: STAGES.index(k[4])
                        if k[4] in STAGES else 99):
            parts.append("%s %s" % (k[4], fmt(res[k][1])))
        if parts:
            scale_lines.append("softcm %s, one connection at a time, stages (median µs, "
                               "kernel clock): %s" % (topo, ", ".join(parts)))

    # System calls per connection, one at a time and 1 000 at once
    # (tests/bench/syscalls.sh).
    for s, how in (("softcm-traced", "one at a time"), ("tcp-traced", "one at a time"),
                   ("softcm-traced-many", "1 000, 256 in flight"),
                   ("softcm-submit-traced-many", "1 000, 256 in flight, -X"),
                   ("tcp-traced-many", "1 000, 256 in flight")):
        sv = res.get((s, "veth", "syscalls", next((k[3] for k in res if k[0] == s and
                                                   k[2] == "syscalls"), 0), "syscalls_server"))
        cl = res.get((s, "veth", "syscalls", next((k[3] for k in res if k[0] == s and
                                                   k[2] == "syscalls"), 0), "syscalls_client"))
        if sv or cl:
            scale_lines.append("%s veth, system calls per connection (start to exit, %s): "
                               "server %s, client %s"
                               % (s.split("-")[0], how, fmt(sv[1] if sv else None),
                                  fmt(cl[1] if cl else None)))

    # Kernel memory per idle verbs object (tests/bench/verbsmem.c).
    for cas in sorted({k[2] for k in res if k[2].startswith("verbs-d")},
                      key=lambda c: int(c[len("verbs-d"):])):
        for n in sorted({k[3] for k in res if k[2] == cas}):
            cq = res.get(("softcm", "none", cas, n, "kmem_per_cq"))
            qp = res.get(("softcm", "none", cas, n, "kmem_per_qp"))
            scale_lines.append("softcm kernel memory (slab + vmalloc), %d objects of queue "
                               "depth %s: %s bytes per CQ, %s bytes per idle QP (RESET)"
                               % (n, cas[len("verbs-d"):], fmt(cq[1] if cq else None),
                                  fmt(qp[1] if qp else None)))

    widths = [max(len(r[i]) for r in table + [head]) for i in range(len(head))]
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip() + "\n")
        for r in table:
            f.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
        for s in scale_lines:
            f.write(s + "\n")
        for n in notes:
            if n.startswith("order seed") or n.startswith("run "):
                f.write(n + "\n")
    with open(os.path.join(out, "table.rst"), "w") as f:
        sep = "  ".join("=" * w for w in widths)
        f.write(sep + "\n" + "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip() +
                "\n" + sep + "\n")
        for r in table:
            f.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
        f.write(sep + "\n")
        if scale_lines:
            f.write("\n")
            for s in scale_lines:
                f.write("- " + s + "\n")

    if not ns:
        # the burst case alone (BENCH_ONLY=burst): no chart
        if os.path.exists(os.path.join(out, "chart.gp")):
            os.remove(os.path.join(out, "chart.gp"))
        return 0
    plots_rate, plots_p99 = [], []
    missing = 0
    for s, t, title in SYSTEMS:
        if s == "softcm-drop":
            continue  # burst only
        dat = os.path.join(out, "%s-%s.dat" % (s, t))
        lines = []
        for n in ns:
            r = res.get((s, t, "setup", n, "rate"))
            p = res.get((s, t, "setup", n, "lat_p99"))
            if r and p:
                lines.append("%d %g %g %g %g %g %g\n" % (n, r[1], r[0], r[2],
                                                         p[1] / 1e3, p[0] / 1e3, p[2] / 1e3))
        if not lines:
            missing = 1
            continue
        with open(dat, "w") as f:
            f.writelines(lines)
        plots_rate.append("'%s' using 1:2:3:4 with yerrorlines lw 2 title '%s'" % (dat, title))
        plots_p99.append("'%s' using 1:5:6:7 with yerrorlines lw 2 title '%s'" % (dat, title))
    with open(os.path.join(out, "chart.gp"), "w") as f:
        f.write("""set terminal pngcairo size 1200,520 font ',10' noenhanced
set output '%s'
set multiplot layout 1,2 title 'Connection setup, N connections in a batch (256 in flight); median of runs, bars min..max'
set logscale x
set xrange [%g:%g]
set xlabel 'N (connections)'
set xtics (%s)
set key top left
set grid
set ylabel 'connections per second (both sides ESTABLISHED)'
set logscale y
plot %s
set ylabel 'p99 setup latency (ms)'
set key top left
plot %s
unset multiplot
""" % (os.path.join(out, "bench.png"), min(ns) * 0.7 if ns else 1,
       max(ns) * 1.4 if ns else 10, ", ".join(str(n) for n in ns),
       ", \\\n     ".join(plots_rate), ", \\\n     ".join(plots_p99)))
    return missing


DP_CONFIGS = [  # (config, column title)
    ("softcm", "softcm veth"),
    ("rxe", "rxe↔rxe (loopback)"),
    ("rxe-veth", "rxe↔rxe veth"),
    ("softcm-rxe", "softcm→rxe veth"),
    ("tcp", "TCP veth (iperf3)"),
]
DP_RDMA = [c for c, _ in DP_CONFIGS if c != "tcp"]
DP_TESTS = [("send", "SEND"), ("write", "WRITE"), ("read", "READ")]


def load_dp(path):
    """{(config, test, size): {key: value}} from the dpbench lines."""
    dp = {}
    for line in open(path):
        if not line.startswith("dpbench "):
            continue
        kv = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
        try:
            dp[(kv["config"], kv["test"], int(kv["size"]))] = kv
        except (KeyError, ValueError):
            continue
    return dp


def size_name(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return "%d KiB" % (n >> 10)
    return "%d B" % n


def num(kv, key):
    try:
        return float(kv[key])
    except (KeyError, ValueError, TypeError):
        return None


def datapath(res_path, out):
    dp = load_dp(res_path)
    if not dp:
        return 0
    sizes = sorted({k[2] for k in dp if k[1].endswith("_bw")} |
                   {k[2] for k in dp if k[0] == "tcp"})
    lat_sizes = sorted({k[2] for k in dp if k[1].endswith("_lat")})

    def cell(cfg, test, size, key, scale=1.0):
        kv = dp.get((cfg, test, size))
        if kv is None:
            return None, "–"
        if kv.get("status") != "ok":
            return None, "failed"
        v = num(kv, key)
        return (v * scale if v is not None else None), fmt(v * scale if v is not None else None)

    def rat(a, b):
        return fmt(a / b) + "×" if a and b and a > 0 and b > 0 else "–"

    head = ["measurement", "unit"] + [t for _, t in DP_CONFIGS] + \
        ["softcm / rxe", "softcm / rxe veth", "softcm / TCP", "softcm ACKs/msg", "softcm pkts/msg",
         "softcm copies/byte", "softcm→rxe ACKs/msg"]
    table = []
    for test, tname in DP_TESTS:
        for what, key, unit, scale in (("bandwidth", "bw_mibs", "MiB/s", 1.0),
                                       ("message rate", "mpps", "k msg/s", 1000.0)):
            for size in sizes:
                vals, cells = {}, []
                for cfg, _ in DP_CONFIGS:
                    t = "tcp_stream" if cfg == "tcp" else test + "_bw"
                    vals[cfg], c = cell(cfg, t, size, key, scale)
                    cells.append(c)
                if all(dp.get((cfg, test + "_bw", size)) is None for cfg in DP_RDMA):
                    continue  # TCP alone: this operation was not run
                sc = dp.get(("softcm", test + "_bw", size), {})
                x = dp.get(("softcm-rxe", test + "_bw", size), {})
                extra = [fmt(num(sc, "acks_per_msg")), fmt(num(sc, "pkts_per_msg")),
                         fmt(num(sc, "copies_per_byte")),
                         fmt(num(x, "acks_per_msg"))] if what == "bandwidth" else ["", "", "", ""]
                table.append(["%s %s, %s" % (tname, what, size_name(size)), unit] + cells +
                             [rat(vals["softcm"], vals["rxe"]),
                              rat(vals["softcm"], vals["rxe-veth"]),
                              rat(vals["softcm"], vals["tcp"])] + extra)
        for size in lat_sizes:
            for what, key in (("latency, min", "lat_min_us"), ("latency, typical", "lat_typ_us"),
                              ("latency, p99", "lat_p99_us")):
                vals, cells = {}, []
                for cfg, _ in DP_CONFIGS:
                    if cfg == "tcp":
                        vals[cfg] = None
                        cells.append("–")
                        continue
                    vals[cfg], c = cell(cfg, test + "_lat", size, key)
                    cells.append(c)
                if all(c == "–" for c in cells):
                    continue
                table.append(["%s %s, %s" % (tname, what, size_name(size)), "µs"] + cells +
                             [rat(vals["softcm"], vals["rxe"]),
                              rat(vals["softcm"], vals["rxe-veth"]), "–", "", "", "", ""])
        for size in sorted({k[2] for k in dp if k[1] == test + "_lat_e"}):
            vals, cells = {}, []
            for cfg, _ in DP_CONFIGS:
                vals[cfg], c = cell(cfg, test + "_lat_e", size, "lat_typ_us")
                cells.append(c)
            table.append(["%s latency, typical, %s, sleeping on the CQ (-e)"
                          % (tname, size_name(size)), "µs"] + cells +
                         [rat(vals["softcm"], vals["rxe"]),
                          rat(vals["softcm"], vals["rxe-veth"]), "–", "", "", "", ""])
        for size in sorted({k[2] for k in dp if k[1] == test + "_syscalls"}):
            for side in ("client", "server"):
                vals, cells = {}, []
                for cfg, _ in DP_CONFIGS:
                    if (cfg, test + "_syscalls", size) not in dp:
                        vals[cfg] = None
                        cells.append("–")
                        continue
                    vals[cfg], c = cell(cfg, test + "_syscalls", size, "syscalls_" + side)
                    cells.append(c)
                table.append(["%s system calls per message, %s, %s" % (tname, size_name(size),
                                                                         side),
                              "calls/msg"] + cells +
                             [rat(vals["softcm"], vals["rxe"]),
                              rat(vals["softcm"], vals["rxe-veth"]), "–", "", "", "", ""])
    notes = []
    for k in sorted(dp):
        kv = dp[k]
        if kv.get("status") != "ok":
            notes.append("failed: %s %s %s: %s" % (k[0], k[1], size_name(k[2]),
                                                   kv.get("error", "?")))
    conflicting = sorted(k for k in dp if dp[k].get("clock") == "conflicting")
    if conflicting:
        notes.append("perftest saw its vCPUs' cpu MHz differ (timed on): %s"
                     % ", ".join("%s %s %s" % (k[0], k[1], size_name(k[2]))
                                 for k in conflicting))
    for k in sorted(dp):
        if k[1].endswith("_syscalls") and dp[k].get("status") == "ok":
            notes.append("%s %s %s: the client's most frequent calls (%s messages): %s"
                         % (k[0], k[1], size_name(k[2]), dp[k].get("iters", "?"),
                            dp[k].get("top_client", "?").replace(",", ", ")))

    widths = [max(len(r[i]) for r in table + [head]) for i in range(len(head))]
    with open(os.path.join(out, "datapath.txt"), "w") as f:
        f.write("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip() + "\n")
        for r in table:
            f.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
        for n in notes:
            f.write(n + "\n")
    with open(os.path.join(out, "datapath.rst"), "w") as f:
        sep = "  ".join("=" * w for w in widths)
        f.write(sep + "\n" + "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip() +
                "\n" + sep + "\n")
        for r in table:
            f.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
        f.write(sep + "\n")
        if notes:
            f.write("\n")
            for n in notes:
                f.write("- " + n + "\n")

    # The chart: bandwidth per size for each operation, the ratios
    # against their targets, latency and message rate.
    def dat(name, lines):
        path = os.path.join(out, name)
        with open(path, "w") as f:
            f.writelines(lines)
        return path

    titles = dict(DP_CONFIGS)
    bw_plots, rate_plots, lat_plots, ratio_plots = {}, [], [], []
    for test, tname in DP_TESTS:
        bw_plots[test] = []
        for cfg, _ in DP_CONFIGS:
            t = "tcp_stream" if cfg == "tcp" else test + "_bw"
            pts = []
            for size in sizes:
                kv = dp.get((cfg, t, size))
                if kv and kv.get("status") == "ok" and num(kv, "bw_mibs") is not None:
                    pts.append("%d %g %g\n" % (size, num(kv, "bw_mibs"),
                                               (num(kv, "mpps") or 0) * 1000))
            if not pts:
                continue
            p = dat("dp-%s-%s.dat" % (cfg, t), pts)
            lc = [c for c, _ in DP_CONFIGS].index(cfg) + 1  # one colour a config
            bw_plots[test].append("'%s' using 1:2 with linespoints lw 2 lc %d title '%s'"
                                  % (p, lc, titles[cfg]))
            if cfg != "tcp" or test == "send":
                rate_plots.append("'%s' using 1:3 with linespoints lw 2 title '%s'"
                                  % (p, titles[cfg] if cfg == "tcp" else
                                     "%s %s" % (tname, titles[cfg])))
        pts = []
        for size in sizes:
            a = dp.get(("softcm", test + "_bw", size), {})
            va = num(a, "bw_mibs")
            if a.get("status") != "ok" or not va:
                continue
            r = []
            for key in (("rxe", test + "_bw"), ("tcp", "tcp_stream"),
                        ("rxe-veth", test + "_bw")):
                b = dp.get(key + (size,), {})
                vb = num(b, "bw_mibs")
                r.append("%g" % (va / vb) if b.get("status") == "ok" and vb else "NaN")
            pts.append("%d %s\n" % (size, " ".join(r)))
        if pts:
            p = dat("dp-ratio-%s.dat" % test, pts)
            ratio_plots.append("'%s' using 1:2 with linespoints lw 2 title '%s softcm/rxe'"
                               % (p, tname))
            ratio_plots.append("'%s' using 1:3 with linespoints lw 2 dt 2 title '%s softcm/TCP'"
                               % (p, tname))
            ratio_plots.append("'%s' using 1:4 with linespoints lw 1 dt 3 "
                               "title '%s softcm/rxe veth'" % (p, tname))
        for cfg in DP_RDMA:
            pts = []
            for size in lat_sizes:
                kv = dp.get((cfg, test + "_lat", size))
                if kv and kv.get("status") == "ok" and num(kv, "lat_typ_us") is not None:
                    pts.append("%d %g\n" % (size, num(kv, "lat_typ_us")))
            if pts:
                p = dat("dp-%s-%s_lat.dat" % (cfg, test), pts)
                lat_plots.append("'%s' using 1:2 with linespoints lw 2 title '%s %s'"
                                 % (p, tname, titles[cfg]))
    # the x axis holds the latency runs' sizes too: a point outside it
    # leaves a panel with nothing, which gnuplot refuses
    xs = sorted(set(sizes) | set(lat_sizes))
    xt = ", ".join("'%s' %d" % (size_name(s), s) for s in xs)
    panels = []
    for test, tname in DP_TESTS:
        panels.append("set title '%s bandwidth (perftest -R -F -n; TCP: iperf3 writes)'\n"
                      "set ylabel 'MiB/s'\nset logscale y\nplot %s\n"
                      % (tname, ", \\\n     ".join(bw_plots[test]) or "NaN notitle"))
    panels.append("set title 'softcm / rxe and softcm / TCP bandwidth (targets 2x, 0.8x)'\n"
                  "set ylabel 'ratio'\nset logscale y\nplot %s\n"
                  % ", \\\n     ".join(ratio_plots + ["2 with lines lc rgb 'black' dt 3 "
                                                       "title 'target softcm/rxe'",
                                                       "0.8 with lines lc rgb 'black' dt 4 "
                                                       "title 'target softcm/TCP'"]))
    panels.append("set title 'latency, typical (perftest *_lat)'\nset ylabel 'µs'\n"
                  "set logscale y\nplot %s\n" % (", \\\n     ".join(lat_plots) or
                                                  "NaN notitle"))
    panels.append("set title 'message rate'\nset ylabel 'thousand messages/s'\n"
                  "set logscale y\nplot %s\n" % (", \\\n     ".join(rate_plots) or
                                                  "NaN notitle"))
    with open(os.path.join(out, "chart-datapath.gp"), "w") as f:
        f.write("""set terminal pngcairo size 1500,900 font ',9' noenhanced
set output '%s'
set multiplot layout 2,3 title 'Data path: softcm, rxe and TCP, one VM boot (TCG guest, 2 vCPUs)'
set logscale x 2
set xrange [%g:%g]
set xlabel 'message size'
set xtics (%s)
set key top left font ',8'
set grid
%s
unset multiplot
""" % (os.path.join(out, "datapath.png"), min(xs) / 1.5 if xs else 32,
       max(xs) * 1.5 if xs else 2e6, xt, "".join(panels)))
    return 1 if any(dp[k].get("status") != "ok" for k in dp) else 0


def run_all():
    status = 0
    for part in (main, lambda: datapath(sys.argv[1], sys.argv[2])):
        try:
            status |= part() or 0
        except Exception as e:  # one part's error never hides the other's
            print("report.py: %s: %r" % (getattr(part, "__name__", "datapath"), e),
                  file=sys.stderr)
            import traceback
            traceback.print_exc()
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(run_all())
