"""PNG plots of benchmark results (matplotlib, Agg backend: no display).

plot_result(result, dir, stem) draws what fits the workload:
  <stem>-phases.png      braidsort's phases (build, sort, merge, gather)
                         stacked, next to PostgreSQL's total, per setting
  <stem>-speedup.png     PostgreSQL's median time / braidsort's, per setting
  <stem>-sweep.png       speed-up and bytes written against payload size
  <stem>-threads.png     phase times with 1 and 2 threads
  <stem>-concurrency.png tps, latency and the gate's counters per io_policy
  <stem>-ordinary_disk.png time and sectors written, spilling to ext4
  <stem>-time.png        write-limited sorts: time against write latency per mode
  <stem>-written.png     write-limited sorts: lines written against write intensity
plot_history(results, dir) draws history.png: the headline speed-ups and
write reductions of every run given, over time.
"""
import datetime
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from braidbench import adaptive_report, disk_report, join_report, report, wlimit_report  # noqa: E402
from braidbench.measure import PHASES, median  # noqa: E402

PHASE_COLORS = {"Build Time": "#4c72b0", "Sort Time": "#dd8452", "Merge Time": "#55a868",
                "Gather Time": "#c44e52", "rest": "#bbbbbb"}
PG_COLOR = "#8172b3"
VARIANT_COLORS = {"pg": PG_COLOR, "braid": "#dd8452", "forced": "#4c72b0",
                  "stream": "#55a868", "nostream": "#c44e52"}
DECLINED_COLOR = "#c8c8c8"  # the cost model declined: both runs were PostgreSQL's plan


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _subtitle(result):
    m = result["machine"]
    q = " — quick smoke run" if result.get("quick") else ""
    when = _when(result)
    # "postgres (PostgreSQL) 18.6 (Debian 18.6-3)": the server's version
    pg = (m.get("postgres") or "").split()
    pg = f"PostgreSQL {pg[2]}, " if len(pg) > 2 else ""
    return (f"{m['cpus']} CPUs ({m['cpu_model']}), {pg}braidsort {m['commit']}"
            f"{', ' + when.strftime('%Y-%m-%d %H:%M') if when else ''}{q}")


# ---- comparisons ----------------------------------------------------------
def _panels(result, rows):
    """One panel per setting when several queries ran (realistic), else one
    panel with the settings side by side: [(panel title, [(label, row)])]."""
    if len(result["queries"]) > 1:
        return [(g, [(r["query"], r) for r in rows if r["group"] == g]) for g in result["groups"]]
    return [("", [(r["group"], r) for r in rows])]


def _phase_bars(ax, result, items, seen):
    n = 0
    for i, (label, r) in enumerate(items):
        pg = report._capture(result, r["group"], r["query"], "pg")
        v = "forced" if "forced" in result["variants"] else "braid"
        ph = report.phases_of(report._capture(result, r["group"], r["query"], v))
        x = i * 3
        med = r["median"]
        top = 0.0
        if pg:
            top = pg["explain"]["Execution Time"]
            ax.bar(x, top, color=PG_COLOR,
                   label="PostgreSQL (total)" if "pg" not in seen else None)
            seen.add("pg")
        if ph:
            n += 1
            bottom = 0.0
            parts = [(p, ph[p]) for p in PHASES]
            parts.append(("rest", max(ph["Execution Time"] - sum(ph[p] for p in PHASES), 0.0)))
            for name, val in parts:
                ax.bar(x + 1, val, bottom=bottom, color=PHASE_COLORS[name],
                       label=(name.replace(" Time", "") if name != "rest" else "rest of the plan")
                       if name not in seen else None)
                seen.add(name)
                bottom += val
            top = max(top, bottom)
        for dx, var in ((0, "pg"), (1, v)):
            if med.get(var) and (var == "pg" or ph):
                ax.plot(x + dx, med[var], marker="_", markersize=18, color="black",
                        label="median, TIMING OFF" if "med" not in seen else None)
                seen.add("med")
                top = max(top, med[var])
        if med.get("pg") and med.get(v) and ph:
            ax.text(x + 0.5, top * 1.02, f"{med['pg'] / med[v]:.2f}x", ha="center", fontsize=8)
    ax.set_xticks([i * 3 + 0.5 for i in range(len(items))])
    ax.set_xticklabels([lb for lb, _ in items], fontsize=8)
    ax.set_ylabel("ms")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
    return n


def phases_plot(result, path):
    rows = report.comparison_rows(result)
    panels = _panels(result, rows)
    if not rows:
        return None
    most = max(len(items) for _, items in panels)
    fig, axes = plt.subplots(len(panels), 1, squeeze=False,
                             figsize=(min(max(7.5, 1.1 * most + 3.5), 16), 3.6 * len(panels) + 1))
    seen, n = set(), 0
    for ax, (name, items) in zip(axes[:, 0], panels):
        n += _phase_bars(ax, result, items, seen)
        if name:
            ax.set_title(name, fontsize=9)
    if not n:
        plt.close(fig)
        return None
    axes[0, 0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"{report.title(result)}\nPostgreSQL (left) vs braidsort forced (right: its "
                 f"phases), one EXPLAIN ANALYZE each; ratio of the medians on top\n"
                 f"{_subtitle(result)}", fontsize=9)
    return _save(fig, path)


def speedup_plot(result, path):
    rows = report.comparison_rows(result)
    if not rows:
        return None
    panels = _panels(result, rows)
    most = max(len(items) for _, items in panels)
    fig, axes = plt.subplots(len(panels), 1, squeeze=False,
                             figsize=(min(max(6.5, 0.8 * most + 3), 16), 3.2 * len(panels) + 1))
    w = 0.38
    # legend entries by colour (a bar series' first bar may be grey)
    handles = {}
    for ax, (name, items) in zip(axes[:, 0], panels):
        xs = range(len(items))
        for off, key, v, label in ((-w / 2, "ratio", "braid", "braidsort (cost model)"),
                                   (w / 2, "forced_ratio", "forced", "braidsort forced")):
            if v not in result["variants"]:
                continue
            vals = [r[key] or 0 for _, r in items]
            colors = [VARIANT_COLORS[v] if v != "braid" or r["ran"] else DECLINED_COLOR
                      for _, r in items]
            ax.bar([x + off for x in xs], vals, w, color=colors)
            handles.setdefault(label, Patch(color=VARIANT_COLORS[v], label=label))
            if v == "braid" and not all(r["ran"] for _, r in items):
                declined = "cost model declined (PostgreSQL's plan both times: noise)"
                handles.setdefault(declined, Patch(color=DECLINED_COLOR, label=declined))
            for x, val in zip(xs, vals):
                if val:
                    ax.text(x + off, val + 0.03, f"{val:.2f}", ha="center", fontsize=7)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([lb for lb, _ in items], fontsize=8)
        ax.set_ylabel("PostgreSQL / braidsort")
        if name:
            ax.set_title(name, fontsize=9)
    if handles:
        axes[0, 0].legend(handles=list(handles.values()), fontsize=8, loc="upper left",
                          bbox_to_anchor=(1.01, 1.0))
    # three lines: a narrow figure (few queries) would cut one long line off
    fig.suptitle(f"{report.title(result)}\nspeed-up: ratio of the median times (braid: as its "
                 f"cost model decided)\n{_subtitle(result)}", fontsize=9)
    return _save(fig, path)


def sweep_plot(result, path):
    rows = report.comparison_rows(result)
    pay = [int(r["group"].split("=")[1].rstrip("B")) for r in rows]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for key, v, name in (("forced_ratio", "forced", "braidsort forced"),
                         ("ratio", "braid", "braidsort (cost model)")):
        if v in result["variants"]:
            a1.plot(pay, [r[key] for r in rows], marker="o", color=VARIANT_COLORS[v], label=name)
    a1.axhline(1.0, color="black", linewidth=0.8)
    a1.set_xscale("log")
    a1.set_xlabel("payload (bytes)")
    a1.set_ylabel("PostgreSQL time / braidsort time")
    a1.set_title("speed-up")
    a1.legend(fontsize=8)
    for v, name in (("pg", "PostgreSQL"), ("forced", "braidsort forced")):
        a2.plot(pay, [(r["written"].get(v) or 0) / 1e6 for r in rows], marker="o",
                color=VARIANT_COLORS[v], label=name)
    a2.set_xscale("log")
    a2.set_yscale("log")
    a2.set_xlabel("payload (bytes)")
    a2.set_ylabel("MB written (temporary / spill files)")
    a2.set_title("bytes written")
    a2.legend(fontsize=8)
    for a in (a1, a2):
        a.set_xticks(pay)
        a.set_xticklabels([str(p) for p in pay])
    fig.suptitle(f"{report.title(result)}\n{_subtitle(result)}", fontsize=9)
    return _save(fig, path)


# ---- threads --------------------------------------------------------------
def threads_plot(result, path):
    med = report.threads_medians(result)
    series = [("sort", None)] + [("write", ns) for ns in result["write_ns"]]
    fig, axes = plt.subplots(1, len(series), figsize=(3.6 * len(series) + 1, 4.2))
    if len(series) == 1:
        axes = [axes]
    for ax, (phase, ns) in zip(axes, series):
        seen = set()
        for i, n in enumerate(result["thread_counts"]):
            m = med.get((phase, ns, n), {})
            bottom = 0.0
            parts = [(p, m.get(p) or 0.0) for p in PHASES]
            parts.append(("rest", max((m.get("exec") or 0.0) - sum(v for _, v in parts), 0.0)))
            for name, val in parts:
                ax.bar(i, val, bottom=bottom, color=PHASE_COLORS[name],
                       label=(name.replace(" Time", "") if name != "rest" else "rest")
                       if name not in seen else None)
                seen.add(name)
                bottom += val
            if m.get("total"):
                ax.plot(i, m["total"], marker="_", markersize=30, color="black",
                        label="TIMING OFF total" if "t" not in seen else None)
                seen.add("t")
        knob = "sort_threads" if phase == "sort" else "write_threads"
        ax.set_xticks(range(len(result["thread_counts"])))
        ax.set_xticklabels([f"{knob}={n}" for n in result["thread_counts"]], fontsize=8)
        ax.set_title("sort phase (OnePass)" if phase == "sort"
                     else f"write phase (MergePass)\nemulate_write_ns={ns}", fontsize=9)
        ax.set_ylabel("ms (medians)")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{report.title(result)} — {_subtitle(result)}", fontsize=9)
    return _save(fig, path)


# ---- concurrency ----------------------------------------------------------
def concurrency_plot(result, path):
    pols = result["policies"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    for ax, field, name in ((axes[0], "tps", "tps"), (axes[1], "latency_ms", "latency (ms)")):
        for i, pol in enumerate(pols):
            vals = [r[field] for r in result["runs"] if r["policy"] == pol and r[field] is not None]
            if vals:
                ax.bar(i, median(vals), color=["#4c72b0", "#dd8452"][i % 2], alpha=0.8)
                ax.plot([i] * len(vals), vals, "o", color="black", markersize=4)
        ax.set_xticks(range(len(pols)))
        ax.set_xticklabels(pols, fontsize=8)
        ax.set_title(f"{name} (bar: median, dots: runs)", fontsize=9)
    med = report.concurrency_medians(result)
    fields = ("waits", "phase_switches", "overlaps")
    w = 0.8 / max(len(pols), 1)
    for i, pol in enumerate(pols):
        axes[2].bar([j + i * w for j in range(len(fields))],
                    [med[pol][f] or 0 for f in fields], w, label=pol,
                    color=["#4c72b0", "#dd8452"][i % 2])
    axes[2].set_xticks([j + w * (len(pols) - 1) / 2 for j in range(len(fields))])
    axes[2].set_xticklabels([f.replace("_", " ") for f in fields], fontsize=8)
    axes[2].set_title("the gate of dax (medians)", fontsize=9)
    axes[2].legend(fontsize=8)
    fig.suptitle(f"{report.title(result)} — {_subtitle(result)}", fontsize=9)
    return _save(fig, path)


def plot_result(result, out_dir, stem):
    k = report.kind(result)
    made = []

    def add(fn, suffix):
        name = stem if stem == suffix else f"{stem}-{suffix}"
        p = fn(result, os.path.join(out_dir, f"{name}.png"))
        if p:
            made.append(p)
    if k == "threads":
        add(threads_plot, "threads")
    elif k == "concurrency":
        add(concurrency_plot, "concurrency")
    elif k == "ordinary_disk":
        add(lambda r, p: disk_report.plot(r, p, plt, _save), "ordinary_disk")
    elif k == "join":
        made += join_report.plots(result, out_dir, stem, plt, _save, _subtitle(result))
    elif k == "adaptive":
        made += adaptive_report.plots(result, out_dir, stem, plt, _save, _subtitle(result))
    elif k == "wlimit":
        made += wlimit_report.plots(result, out_dir, stem, plt, _save, _subtitle(result))
    elif k == "sweep":
        add(sweep_plot, "sweep")
        add(phases_plot, "phases")
    elif k in report.COMPARE:
        add(phases_plot, "phases")
        add(speedup_plot, "speedup")
    return made


# ---- history --------------------------------------------------------------
def _when(result):
    s = result.get("started")
    if s:
        try:
            return datetime.datetime.fromisoformat(s).replace(tzinfo=None)
        except ValueError:
            pass
    path = result.get("_path", "")
    stem = os.path.basename(path).rsplit(".", 1)[0]
    try:
        return datetime.datetime.strptime(stem[-15:], "%Y%m%d-%H%M%S")
    except ValueError:
        return None


def _sb(text):
    """A shared_buffers setting as a group names it (2048MB -> 2GB)."""
    t = str(text)
    if t.endswith("MB") and t[:-2].isdigit() and int(t[:-2]) % 1024 == 0:
        return f"{int(t[:-2]) // 1024}GB"
    return t


def history_points(results):
    """(series, when, speed-up, write reduction or None) of each run: the
    parallel-off groups of onepass and spill per shared_buffers (A: cached,
    B: 128MB), every payload of the sweep, and the threads' sort phase;
    braidsort forced."""
    pts = []
    for r in results:
        if r.get("quick"):
            continue
        k, t = report.kind(r), _when(r)
        if t is None:
            continue
        if k in ("onepass", "spill"):
            for row in report.comparison_rows(r):
                if not row["group"].endswith("parallel=off") or not row["forced_ratio"]:
                    continue
                sb = _sb(row["group"].split()[0].split("=")[1])
                cfg = "A" if sb not in ("128MB",) else "B"
                name = f"{k} {cfg} ({sb}, {r['rows'] // 1000000}M rows)"
                wr = row["written"]
                red = wr["pg"] / wr["forced"] if wr.get("pg") and wr.get("forced") else None
                pts.append((name, t, row["forced_ratio"], red if k == "spill" else None))
        elif k == "sweep":
            for row in report.comparison_rows(r):
                wr = row["written"]
                pts.append((f"sweep {row['group'].split('=')[1].rstrip('B')} B", t,
                            row["forced_ratio"],
                            wr["pg"] / wr["forced"] if wr.get("pg") and wr.get("forced") else None))
        elif k == "threads":
            med = report.threads_medians(r)
            a, b = med.get(("sort", None, 1)), med.get(("sort", None, 2))
            if a and b and b.get("Sort Time"):
                pts.append(("threads: sort phase 1/2 threads", t, a["Sort Time"] / b["Sort Time"],
                            None))
    return pts


def plot_history(results, out_dir):
    pts = history_points(results)
    if not pts:
        return []
    names = sorted({p[0] for p in pts})
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(11, 7.5), sharex=True)
    for name in names:
        s = sorted((p for p in pts if p[0] == name), key=lambda p: p[1])
        xs = [p[1] for p in s]
        a1.plot(xs, [p[2] for p in s], marker="o", markersize=3, linewidth=1, label=name)
        red = [(p[1], p[3]) for p in s if p[3]]
        if red:
            a2.plot([x for x, _ in red], [y for _, y in red], marker="o", markersize=3,
                    linewidth=1, label=name)
    a1.axhline(1.0, color="black", linewidth=0.8)
    a1.set_ylabel("PostgreSQL time / braidsort time")
    a1.set_title("speed-up of braidsort (forced) over PostgreSQL's sort, parallel query off, "
                 "per run", fontsize=10)
    a1.legend(fontsize=7, ncol=2)
    a2.set_ylabel("PostgreSQL bytes written / braidsort's")
    a2.set_yscale("log")
    a2.set_title("write reduction (spill and sweep runs)", fontsize=10)
    a2.legend(fontsize=7, ncol=2)
    fig.autofmt_xdate()
    return [_save(fig, os.path.join(out_dir, "history.png"))]
