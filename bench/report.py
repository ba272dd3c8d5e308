#!/usr/bin/env python3
"""The benchmark's report: what bench/guest/bench.sh measured in one boot,
as a CSV (one row per system x workload x round), a chart per workload,
and the summary of the ratios issue 6 sets targets for.

    report.py RESULTS_DIR OUT_PREFIX KVER

Writes OUT_PREFIX.csv, OUT_PREFIX-<workload>.png (with gnuplot) and
OUT_PREFIX-summary.txt, and prints the summary.  Every figure is a median
over the rounds; every ratio is of two medians from the same boot.
"""
import csv
import glob
import json
import os
import statistics
import subprocess
import sys

FIELDS = ["kernel", "workload", "variant", "system", "round", "iops", "mb_s",
          "lat_mean_us", "lat_p99_us", "cpu_us_per_io", "hit_ratio",
          "read_hits", "read_misses", "write_hits", "write_misses",
          "steady_hit_ratio", "t90_s", "seconds", "dirty_at_start"]


def num(v):
    return None if v in ("-", "", None) else int(v)


def fio_figures(path):
    """IOPS, MB/s, mean and p99 latency (us), I/Os of a fio JSON output."""
    with open(path) as f:
        text = f.read()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    iops = bw = ios = 0
    lat_sum = 0.0
    p99 = 0.0
    for d in ("read", "write"):
        s = job[d]
        if not s["total_ios"]:
            continue
        iops += s["iops"]
        bw += s["bw_bytes"]
        ios += s["total_ios"]
        lat_sum += s["lat_ns"]["mean"] * s["total_ios"]
        # total latency (submission included: a bio-based target maps in
        # the submitter's context); clat when fio was not asked for lat
        pct = s["lat_ns"].get("percentile") or s["clat_ns"].get("percentile", {})
        p99 = max(p99, pct.get("99.000000", 0.0))
    sync = job.get("sync", {}).get("lat_ns", {})
    if sync.get("N"):
        # fdatasync (fio counts it in lat_ns.N, not total_ios): part of
        # what each write costs
        lat_sum += sync["mean"] * sync["N"]
        p99 = max(p99, sync.get("percentile", {}).get("99.000000", 0.0))
    return iops, bw / 1e6, (lat_sum / ios / 1e3) if ios else 0.0, p99 / 1e3, ios


def hit_ratio(rh, rm, wh, wm, workload):
    """Reads only for the read workloads; reads and writes otherwise."""
    pairs = [(rh, rm)] if workload in ("W1", "W2") else [(rh, rm), (wh, wm)]
    hits = sum(h for h, m in pairs if h is not None and m is not None)
    total = sum(h + m for h, m in pairs if h is not None and m is not None)
    return hits / total if total else None


def w2_curve(path):
    """Steady hit ratio (the last third) and seconds to reach 90% of it."""
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] != "-":
                rows.append((float(p[0]), int(p[1]), int(p[2])))
    if len(rows) < 6:
        return None, None
    a, b = rows[len(rows) * 2 // 3], rows[-1]
    total = (b[1] - a[1]) + (b[2] - a[2])
    steady = (b[1] - a[1]) / total if total else 0.0
    for i in range(2, len(rows)):
        dh = rows[i][1] - rows[i - 2][1]
        dm = rows[i][2] - rows[i - 2][2]
        if dh + dm and dh / (dh + dm) >= 0.9 * steady:
            return steady, round(rows[i][0], 1)
    return steady, None


def main():
    res, out, kver = sys.argv[1], sys.argv[2], sys.argv[3]
    params = {}
    if os.path.exists(os.path.join(res, "params.txt")):
        with open(os.path.join(res, "params.txt")) as f:
            params = dict(kv.split("=", 1) for kv in f.read().split())
    rows = []
    with open(os.path.join(res, "runs.csv")) as f:
        for r in csv.DictReader(f):
            try:
                iops, mbs, lat, p99, ios = fio_figures(os.path.join(res, r["json"]))
            except (OSError, ValueError, KeyError, IndexError) as e:
                print("report: %s unreadable (%s): left out" % (r["json"], e))
                continue
            rh, rm, wh, wm = (num(r[k]) for k in ("rh", "rm", "wh", "wm"))
            busy_us = int(r["busy"]) / int(r["hz"]) * 1e6
            row = dict(kernel=kver, workload=r["workload"], variant=r["variant"],
                       system=r["system"], round=r["round"], iops=round(iops),
                       mb_s=round(mbs, 1), lat_mean_us=round(lat, 1),
                       lat_p99_us=round(p99, 1),
                       cpu_us_per_io=round(busy_us / ios, 1) if ios else "",
                       read_hits=r["rh"], read_misses=r["rm"],
                       write_hits=r["wh"], write_misses=r["wm"])
            hr = hit_ratio(rh, rm, wh, wm, r["workload"])
            row["hit_ratio"] = "" if hr is None else round(hr, 3)
            if r["workload"] == "W2":
                steady, t90 = w2_curve(os.path.join(
                    res, "w2-%s-%s.series" % (r["system"], r["round"])))
                row["steady_hit_ratio"] = "" if steady is None else round(steady, 3)
                row["t90_s"] = "" if t90 is None else t90
            rows.append(row)
    if os.path.exists(os.path.join(res, "w8.csv")):
        with open(os.path.join(res, "w8.csv")) as f:
            for r in csv.DictReader(f):
                rows.append(dict(kernel=kver, workload="W8", variant="drain",
                                 system=r["system"], round=r["round"],
                                 seconds=round(float(r["seconds"]), 2),
                                 dirty_at_start=r.get("dirty_at_start", "")))
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for row in rows:
            w.writerow(row)

    def med(workload, variant, system, key="iops"):
        v = [float(r[key]) for r in rows
             if r["workload"] == workload and r["variant"] == variant and
             r["system"] == system and r.get(key) not in ("", None)]
        return statistics.median(v) if v else None

    groups = sorted({(r["workload"], r["variant"]) for r in rows})
    lines = ["dm-bcache benchmark, %s, %s" % (kver, " ".join(
        "%s=%s" % kv for kv in sorted(params.items()))), ""]
    lines.append("%-4s %-10s %-12s %10s %9s %9s %9s %8s %6s" % (
        "work", "variant", "system", "iops", "MB/s", "lat_us", "p99_us",
        "cpu_us", "hits"))
    for wl, var in groups:
        key = "seconds" if wl == "W8" else "iops"
        for s in sorted({r["system"] for r in rows
                         if r["workload"] == wl and r["variant"] == var}):
            def m(k):
                v = med(wl, var, s, k)
                return "-" if v is None else ("%.3f" % v if k == "hit_ratio" else "%.0f" % v)
            if wl == "W8":
                dirty = [r.get("dirty_at_start") for r in rows
                         if r["workload"] == wl and r["system"] == s]
                lines.append("%-4s %-10s %-12s %10s s  (dirty at start: %s, in the system's unit)" % (
                    wl, var, s, "%.2f" % med(wl, var, s, key),
                    " ".join(str(d) for d in dirty)))
            else:
                lines.append("%-4s %-10s %-12s %10s %9s %9s %9s %8s %6s" % (
                    wl, var, s, m("iops"), m("mb_s"), m("lat_mean_us"),
                    m("lat_p99_us"), m("cpu_us_per_io"), m("hit_ratio")))
    lines += ["", "ratios (medians; target in brackets):"]

    def ratio(name, a, b, target=None, lower_better=False):
        if a is None or b is None:
            lines.append("  %-44s    n/a" % name)
            return
        # Every figure compared is a rate, a time or an amount: one at or
        # below zero is a broken measurement, and fails its target.
        if a <= 0 or b <= 0:
            lines.append("  %-44s invalid (%g / %g: a measurement at or below "
                         "zero)%s" % (name, a, b,
                                      " [NOT met]" if target is not None else ""))
            return
        x = a / b
        met = ""
        if target is not None:
            ok = x <= target if lower_better else x >= target
            met = " [%s %.2f: %s]" % ("<=" if lower_better else ">=", target,
                                     "met" if ok else "NOT met")
        lines.append("  %-44s %6.2f%s" % (name, x, met))

    for q in ("qd1", "qd32"):
        d = med("W1", q, "dmb-wt")
        ratio("W1 %s dmb-wt / linear-ssd" % q, d, med("W1", q, "linear-ssd"), 0.9)
        for p in ("bcache-wt", "dmcache-wt"):
            ratio("W1 %s dmb-wt / %s" % (q, p), d, med("W1", q, p), 1.0)
    for q in ("qd1", "qd32"):
        d = med("W3", q, "dmb-wb")
        ratio("W3 %s dmb-wb / linear-ssd" % q, d, med("W3", q, "linear-ssd"), 0.85)
        for p in ("bcache-wb", "dmcache-wb", "writecache"):
            ratio("W3 %s dmb-wb / %s" % (q, p), d, med("W3", q, p), 1.0)
    for v in ("read", "write"):
        ratio("W5 %s dmb-wt / raw-hdd" % v, med("W5", v, "dmb-wt"),
              med("W5", v, "raw-hdd"), 0.95)
    d = med("W2", "zipf", "dmb-wt", "steady_hit_ratio")
    ratio("W2 hit ratio dmb-wt / bcache-wt", d,
          med("W2", "zipf", "bcache-wt", "steady_hit_ratio"), 1.0)
    ratio("W2 hit ratio dmb-wt / dmcache-wt", d,
          med("W2", "zipf", "dmcache-wt", "steady_hit_ratio"), 1.0)
    peers = [med("W7", "fdatasync", p) for p in ("bcache-wb", "dmcache-wb", "writecache")]
    peers = [p for p in peers if p]
    ratio("W7 dmb-wb / best peer", med("W7", "fdatasync", "dmb-wb"),
          max(peers) if peers else None, 1.0)
    ratio("W8 drain dmb-wb / origin sequential write",
          med("W8", "drain", "dmb-wb", "seconds"),
          med("W8", "drain", "linear-hdd", "seconds"), 1.2, lower_better=True)
    fp = os.path.join(res, "footprint.csv")
    if os.path.exists(fp):
        cache_gib = float(params.get("cache_mib", 128)) / 1024
        lines += ["", "footprint (cache %.3f GiB, 3/4 of it written through):" % cache_gib]
        mem = {}
        with open(fp) as f:
            for r in csv.DictReader(f):
                slab = int(r["slab_kib"]) + int(r["vmalloc_kib"])
                # Results from before used_kib was measured: slab and
                # vmalloc only (which miss page allocations).
                kib = int(r["used_kib"]) if r.get("used_kib") else slab
                mem[r["system"]] = kib / cache_gib
                meta = int(r["cache_written"]) - int(r["user_written"])
                lines.append("  %-10s kernel memory %8.0f KiB per GiB of cache "
                             "(slab and vmalloc %.0f), metadata %.4f bytes "
                             "per user byte" % (
                                 r["system"], kib / cache_gib, slab / cache_gib,
                                 meta / int(r["user_written"])))
        if "dmb-wt" in mem and "bcache-wt" in mem:
            ratio("memory per GiB dmb / mainline", mem["dmb-wt"],
                  mem["bcache-wt"], 1.0, lower_better=True)
    text = "\n".join(lines) + "\n"
    with open(out + "-summary.txt", "w") as f:
        f.write(text)
    sys.stdout.write(text)
    charts(rows, res, out, med, groups)


def charts(rows, res, out, med, groups):
    """A bar chart of the medians per workload; W4's IOPS over time."""
    try:
        subprocess.run(["gnuplot", "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print("report: no gnuplot, no charts")
        return
    for wl in sorted({g[0] for g in groups}):
        key = "seconds" if wl == "W8" else "iops"
        dat = out + "-%s.dat" % wl
        with open(dat, "w") as f:
            for w, var in groups:
                if w != wl:
                    continue
                for s in sorted({r["system"] for r in rows
                                 if r["workload"] == w and r["variant"] == var}):
                    v = med(w, var, s, key)
                    if v is not None:
                        f.write('"%s %s" %f\n' % (s, var, v))
        script = """set terminal png size 1000,500
set output '%s-%s.png'
set title '%s: median %s per system'
set style fill solid 0.6
set boxwidth 0.7
set xtics rotate by -40
set yrange [0:*]
plot '%s' using 2:xtic(1) with boxes notitle
""" % (out, wl, wl, "seconds to drain" if wl == "W8" else "IOPS", dat)
        subprocess.run(["gnuplot"], input=script.encode(), check=False)
        os.remove(dat)
    logs = sorted(glob.glob(os.path.join(res, "w4-*-1_iops.1.log")))
    if logs:
        plots = ", ".join("'%s' using ($1/1000):2 with lines title '%s'" % (
            p, os.path.basename(p)[3:-len("-1_iops.1.log")]) for p in logs)
        script = """set terminal png size 1000,500
set output '%s-W4-time.png'
set title 'W4: IOPS each second, sustained random writes beyond the cache (round 1)'
set xlabel 'seconds'
plot %s
""" % (out, plots)
        subprocess.run(["gnuplot"], input=script.encode(), check=False)


if __name__ == "__main__":
    main()
