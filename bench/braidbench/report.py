"""Markdown summaries of benchmark results (render.py adds the PNGs of plots.py).

    python3 bench/bench.py report [--out DIR] [--plots DIR] [--history] FILES...

Reads result files: those of this driver (any workload) and those of its
first version (realistic, sortbench).
"""
import json
import math
import re

from braidbench import adaptive_report, disk_report, join_report, wlimit_report
from braidbench.measure import PHASES, median, plan_summary

COMPARE = ("realistic", "onepass", "spill", "sweep", "sortbench")
QUICK_TITLE = " (quick: a smoke run, not a measurement)"


# ---- loading --------------------------------------------------------------
def load(path):
    with open(path) as f:
        result = json.load(f)
    if str(result.get("format", "")).startswith("braidbench-legacy"):
        # the bash driver's results as once converted (bench/results/legacy/,
        # removed from the tree; in git history)
        raise SystemExit(f"{path}: a converted result of the old bash driver, "
                         "which this report no longer reads")
    result["_path"] = path
    return result


def kind(result):
    """onepass, spill, sweep, threads, concurrency, realistic, wlimit, join,
    adaptive, ordinary_disk."""
    w = result["workload"]
    return result.get("mode", "onepass") if w == "sortbench" else w


# ---- formatting -----------------------------------------------------------
def _nan(x):
    return x is None or (isinstance(x, float) and math.isnan(x))


def _fmt(x, f="{:.0f}"):
    return "-" if _nan(x) else f.format(x)


def _mb(b):
    return "-" if _nan(b) else (f"{b / 1e6:.1f} MB" if b < 1e8 else f"{b / 1e6:.0f} MB")


def _x(r):
    return "-" if _nan(r) else f"{r:.2f}x"


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def _table(head, rows, align=None):
    align = align or ["---"] * len(head)
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def _huge_pages_needed(result):
    """The huge pages the server's shared memory needs (recorded since the
    setting was added to SETTINGS_QUERY), or None."""
    settings = result.get("settings", {})
    if settings and all(isinstance(v, dict) for v in settings.values()):
        settings = next(iter(settings.values()))
    try:
        return int(settings.get("shared_memory_size_in_huge_pages"))
    except (TypeError, ValueError, AttributeError):
        return None


def machine_line(result):
    m = result["machine"]
    load = m.get("loadavg_at_start", [float("nan")])
    huge = ""
    if m.get("hugepages_total"):
        huge = f"; {m['hugepages_total']} huge pages of {m.get('hugepage_kb', 0) // 1024} MB reserved"
        needed = _huge_pages_needed(result)
        # huge_pages = try falls back to small pages, silently, when too few
        if needed is not None:
            huge += (f" (shared memory needs {needed}: "
                     f"{'enough' if needed <= m['hugepages_total'] else 'too few: PostgreSQL fell back to small pages'})")
    # the kernel's transparent huge pages for shared memory (the selected
    # value is in brackets): under "advise" braidsort.advise_huge_pages puts
    # shared buffers in them, under "always" and the others the kernel does
    thp = re.search(r"\[(\w+)\]", m.get("thp_shmem", "") or "")
    if thp and thp.group(1) not in ("never", "deny"):
        huge += f"; transparent huge pages for shared memory: {thp.group(1)}"
    return (f"Machine: {m['cpus']} CPUs ({m['cpu_model']}), {m['memory_gb']} GB, kernel "
            f"{m['kernel']}, {m['postgres']}; braidsort at {m['commit']}"
            f"{' (with uncommitted changes)' if m.get('dirty') else ''}"
            + huge + "; load average at the "
            f"start {load[0]:.2f}" + (f", run took {result['seconds']:.0f} s" if "seconds" in result
                                      else "") + ".")


def _settings_line(result, skip=()):
    settings = result.get("settings", {})
    if settings and all(isinstance(v, dict) for v in settings.values()):
        settings = next(iter(settings.values()))
    if not settings:
        return []
    return ["Server settings: " + ", ".join(f"{k}={v}" for k, v in sorted(settings.items())
                                            if k not in skip) + ".", ""]


def _warnings(result):
    ws = result.get("warnings", [])
    return (["**Warnings:**", ""] + [f"- {w}" for w in ws] + [""]) if ws else []


# ---- comparisons (realistic, onepass, spill, sweep) ------------------------
def _capture(result, group, query, variant):
    caps = [c for c in result.get("captures", []) if c["group"] == group
            and c["query"] == query and c["variant"] == variant]
    return caps[-1] if caps else None


def phases_of(capture):
    """Phase times (ms) of the BraidSort nodes of a capture, summed over the
    nodes (a plan rarely has more than one), and the capture's total."""
    if capture is None:
        return None
    summary = capture.get("plan") or plan_summary(capture["explain"]["Plan"])
    if not summary["braid"]:
        return None
    out = {ph: sum(b.get(ph, 0.0) for b in summary["braid"]) for ph in PHASES}
    out["Execution Time"] = capture["explain"]["Execution Time"]
    return out


def comparison_rows(result):
    """Per (group, query): medians, ratios, what braidsort did, bytes written."""
    rows = []
    for group in result["groups"]:
        for q in result["queries"]:
            runs = [r for r in result["runs"] if r["query"] == q["name"] and r["group"] == group]
            if not runs:
                continue
            med, plans, written = {}, {}, {}
            for v in result["variants"]:
                vr = [r for r in runs if r["variant"] == v]
                if vr:
                    med[v] = median([r["ms"] for r in vr])
                    plans[v] = vr[-1]["plan"]
                if vr and "written" in vr[0]:
                    written[v] = median([r["written"] for r in vr])
                else:
                    cap = _capture(result, group, q["name"], v)
                    if cap:
                        written[v] = cap["temp_written_bytes"]
            msgs = next((d["messages"] for d in result["decisions"]
                         if d["query"] == q["name"] and d["group"] == group), [])
            rows.append({
                "query": q["name"], "group": group, "median": med, "written": written,
                "ran": bool(plans.get("braid", {}).get("braid")),
                "eligible": bool(plans.get("forced", {}).get("braid")),
                "pg_has_sort": bool(plans.get("pg", {}).get("sorts")),
                "ratio": med["pg"] / med["braid"] if med.get("pg") and med.get("braid") else None,
                "forced_ratio": (med["pg"] / med["forced"] if med.get("pg") and med.get("forced")
                                 else None),
                "braid_plan": plans.get("braid", {}).get("braid", []),
                "forced_plan": plans.get("forced", {}).get("braid", []),
                "pg_plan": plans.get("pg", {}),
                "workers": plans.get("pg", {}).get("workers_planned", 0),
                "messages": msgs,
                "runs": runs,
            })
    return rows


def _source_of(p):
    """A BraidSort's Gather Source, or for an adaptive one that stayed
    PostgreSQL's sort what happened at work_mem."""
    if p.get("Gather Source"):
        src = p["Gather Source"]
        return src + (", switched" if p.get("Switched At Rows") else "")
    if p.get("Switch Declined At Rows") or str(p.get("Sort Method", "")).startswith("external"):
        return "adaptive, switch declined"
    return "adaptive, stayed in memory"


def _what_ran(r):
    bp = r["braid_plan"]
    if bp:
        return ", ".join(f"{p.get('Sort Method', '?')} ({_source_of(p)})" for p in bp)
    if not r["pg_has_sort"]:
        return "no Sort in PostgreSQL's plan"
    if not r["eligible"]:
        return "not eligible"
    return "declined"


def _braid_written(r):
    """What braidsort wrote: as it ran (its cost model), else forced."""
    w = r["written"]
    return w.get("braid") if r["ran"] else w.get("forced")


def comparison_table(result, rows):
    variants = result["variants"]
    head = ["setting", "query"] + [f"{v} ms" for v in variants]
    head += ["pg/braid", "braidsort ran", "pg/forced", "written: PostgreSQL", "braidsort",
             "PostgreSQL/braidsort"]
    body = []
    for r in rows:
        med, wr = r["median"], r["written"]
        bw = _braid_written(r)
        wratio = (f"{wr['pg'] / bw:.1f}x" if wr.get("pg") and bw else
                  ("all" if wr.get("pg") and bw == 0 else "-"))
        body.append([r["group"], r["query"]] + [_fmt(med.get(v)) for v in variants] +
                    [_x(r["ratio"]), _what_ran(r), _x(r["forced_ratio"]), _mb(wr.get("pg")),
                     _mb(bw), wratio])
    return _table(head, body, ["---", "---"] + ["---:"] * len(variants) +
                  ["---:", "---", "---:", "---:", "---:", "---:"])


def phase_table(result, rows):
    body = []
    for r in rows:
        pg = _capture(result, r["group"], r["query"], "pg")
        for v in ("forced", "braid"):
            if v not in result["variants"]:
                continue
            ph = phases_of(_capture(result, r["group"], r["query"], v))
            if not ph:
                continue
            rest = ph["Execution Time"] - sum(ph[p] for p in PHASES)
            body.append([r["group"], r["query"], v,
                         _fmt(pg["explain"]["Execution Time"] if pg else None)] +
                        [_fmt(ph[p]) for p in PHASES] + [_fmt(rest), _fmt(ph["Execution Time"])])
    if not body:
        return []
    head = ["setting", "query", "braidsort", "PostgreSQL total", "Build", "Sort", "Merge",
            "Gather", "rest of the plan", "braidsort total"]
    return (["## Where the time goes", "",
             "One EXPLAIN (ANALYZE, BUFFERS) of each, TIMING on (which costs a little per row, "
             "so the totals run above the medians); braidsort's phases are those of the "
             "process whose phases took longest. ms.", ""] +
            _table(head, body, ["---", "---", "---"] + ["---:"] * 7) + [""])


def runs_table(result, rows):
    body = []
    for r in rows:
        for v in [v for v in result["variants"] if any(x["variant"] == v for x in r["runs"])]:
            vr = [x for x in r["runs"] if x["variant"] == v]
            ms = " ".join(f"{x['ms']:.0f}" for x in vr)
            wr = " ".join(f"{x['written'] / 1e6:.1f}" for x in vr) if "written" in vr[0] else "-"
            body.append([r["group"], r["query"], v, ms, wr])
    return (["## Individual runs", "", "In execution order (the variants alternate).", ""] +
            _table(["setting", "query", "variant", "ms", "MB written"], body) + [""])


def comparison_summary_lines(result, rows):
    out = []
    for group in result["groups"]:
        ran = [r["ratio"] for r in rows if r["group"] == group and r["ran"]]
        allr = [r["ratio"] for r in rows if r["group"] == group and r["ratio"]]
        forced = [r["forced_ratio"] for r in rows if r["group"] == group and r["eligible"]]
        if len(allr) < 2:
            continue
        out.append(f"- {group}: braidsort ran in {len(ran)} of {len(allr)} queries, "
                   f"geometric mean {_fmt(geomean(ran), '{:.2f}')}x where it ran "
                   f"(worst {_fmt(min(ran) if ran else None, '{:.2f}')}x), "
                   f"{_fmt(geomean(allr), '{:.2f}')}x over all; forced: "
                   f"{_fmt(geomean(forced), '{:.2f}')}x.")
    return out + ([""] if out else [])


EXPLAIN_NOTE = ("Times are medians of alternating runs: the server's Execution Time under "
                "EXPLAIN (ANALYZE, TIMING OFF), rows discarded in the server (COPY: the "
                "client's time). pg/braid = PostgreSQL's time / braidsort's, above 1 when "
                "braidsort is faster; `braid` is braidsort as its cost model decides, `forced` "
                "braidsort wherever eligible. Written: median bytes of temporary and spill "
                "files per run (pg_stat_database.temp_bytes delta, which counts braidsort's "
                "spill files too, equal to its Device Bytes Written); braidsort's column is "
                "that of `braid` where it ran, else of `forced`.")


def sweep_table(result, rows):
    body = []
    for r in rows:
        p = r["group"].split("=")[1]
        data = result.get("data", {}).get(r["group"], {})
        med, wr = r["median"], r["written"]
        fp = r["forced_plan"][0] if r["forced_plan"] else {}
        if r["ran"]:
            choice = "BraidSort (" + ", ".join(b.get("Sort Method", "?") for b in r["braid_plan"]) + ")"
        else:
            why = "; ".join(m.split("left to PostgreSQL: ")[-1] for m in r["messages"]) or "declined"
            choice = f"PostgreSQL's Sort ({why})"
        body.append([p, _mb(data.get("bytes")), _fmt(med.get("pg")), _fmt(med.get("forced")),
                     _x(r["forced_ratio"]), _mb(wr.get("pg")), _mb(wr.get("forced")),
                     _x(wr["pg"] / wr["forced"]) if wr.get("pg") and wr.get("forced") else "-",
                     f"{fp.get('Runs', '-')} / {fp.get('Merge Passes', '-')}", choice,
                     _fmt(med.get("braid")), _x(r["ratio"])])
    head = ["payload", "table", "PostgreSQL ms", "braidsort forced ms", "speed-up",
            "written: PostgreSQL", "braidsort", "write reduction", "runs / merge passes",
            "cost model's choice (force = off)", "its ms", "pg/braid"]
    return _table(head, body, ["---:"] * 9 + ["---", "---:", "---:"])


def title(result):
    k = kind(result)
    if k == "realistic":
        return (f"realistic workload: {result['rows']} orders "
                f"({result['orders_bytes'] / 1e6:.0f} MB), {result['reps']} reps, "
                f"DAX stand-in {result.get('dax', '?')}")
    if k == "sweep":
        return (f"value-size sweep: {result['rows']} rows, payloads "
                f"{', '.join(str(p) for p in result['payloads'])} bytes, work_mem "
                f"{result['work_mem']}, shared_buffers {result['shared_buffers']}, "
                f"{result['reps']} reps")
    if k in ("onepass", "spill"):
        return (f"sortbench {k}: {result['rows']} rows, {result['payload']}-byte payloads "
                f"({result['table_bytes'] / 1e6:.0f} MB), work_mem {result['work_mem']}, "
                f"{result['reps']} reps")
    if k == "threads":
        return (f"thread scaling: {result['rows']} rows, {result['payload']}-byte payloads, "
                f"{result['reps']} reps")
    if k == "adaptive":
        return (f"{result['rows']} orders ({result.get('orders_bytes', 0) / 1e6:.0f} MB) sorted "
                f"behind an underestimated predicate, {result['reps']} reps, DAX stand-in "
                f"{result.get('dax', '?')}")
    if k == "concurrency":
        return (f"concurrency: pgbench, {result['clients']} clients, {result['pgbench_seconds']} s "
                f"a run, {result['reps']} runs per io_policy")
    return result.get("title", k)


def comparison_markdown(result):
    rows = comparison_rows(result)
    k = kind(result)
    quick = QUICK_TITLE if result.get("quick") else ""
    out = [f"# {title(result)}{quick}", "", machine_line(result), ""]
    if result.get("note"):
        out += [f"Note: {result['note']}.", ""]
    per_row = ("work_mem", "max_parallel_workers_per_gather") if k != "realistic" else ("work_mem",)
    out += _settings_line(result, per_row)
    if result.get("sizing"):
        out += [f"Sizing: {result['sizing']}.", ""]
    out += [EXPLAIN_NOTE, ""]
    if k == "sweep":
        out += sweep_table(result, rows) + [""]
    else:
        out += comparison_table(result, rows) + [""]
    out += comparison_summary_lines(result, rows)
    declined = [r for r in rows if r["messages"] and not r["ran"]]
    if declined:
        out.append("Why braidsort declined (DEBUG1):\n")
        for r in declined:
            out.append(f"- {r['group']} {r['query']}: " + "; ".join(
                msg.replace("DEBUG:  ", "") for msg in r["messages"]))
        out.append("")
    out += _warnings(result)
    out += phase_table(result, rows)
    out += runs_table(result, rows)
    return "\n".join(out)


# ---- threads --------------------------------------------------------------
def threads_medians(result):
    """{(phase, write_ns, threads): {field: median}} over the timed and total runs."""
    out = {}
    keys = {(r["phase"], r.get("write_ns"), r["threads"]) for r in result["runs"]}
    for key in keys:
        rs = [r for r in result["runs"] if (r["phase"], r.get("write_ns"), r["threads"]) == key]
        timed = [r for r in rs if r["kind"] == "timed"]
        total = [r for r in rs if r["kind"] == "total"]
        m = {p: median([r.get(p) for r in timed]) for p in PHASES}
        m["exec"] = median([r["ms"] for r in timed])
        m["total"] = median([r["ms"] for r in total])
        for f in ("Device Bytes Written", "Runs", "Merge Passes", "Sort Threads"):
            m[f] = median([r.get(f) for r in timed])
        out[key] = m
    return out


def _ratio(a, b):
    return a / b if a is not None and b else None


def threads_markdown(result):
    med = threads_medians(result)
    quick = QUICK_TITLE if result.get("quick") else ""
    out = [f"# {title(result)}{quick}", "", machine_line(result), ""]
    out += _settings_line(result)
    out += ["braidsort forced, parallel query off, one server whose shared_buffers "
            f"({result['shared_buffers']}) hold the table. Phase times are braidsort's EXPLAIN "
            "ANALYZE figures (TIMING on; its Execution Time includes the per-row timing "
            "overhead); \"TIMING OFF\" is the Execution Time of a run without it. Medians; "
            "ratio = time with 1 thread / time with 2. "
            f"Defaults: {', '.join(f'{k} = {v}' for k, v in result.get('defaults', {}).items())}.", ""]
    out += [f"## Sort phase: OnePass, work_mem {result['sort_work_mem']}, "
            "braidsort.sort_threads = 1 vs 2", ""]
    body = []
    for n in result["thread_counts"]:
        m = med.get(("sort", None, n), {})
        body.append([n, _fmt(m.get("Sort Threads"))] +
                    [_fmt(m.get(p)) for p in ("Build Time", "Sort Time", "Gather Time")] +
                    [_fmt(m.get("exec")), _fmt(m.get("total"))])
    a, b = med.get(("sort", None, 1), {}), med.get(("sort", None, 2), {})
    body.append(["**ratio 1/2**", ""] + [_x(_ratio(a.get(p), b.get(p))) for p in
                                         ("Build Time", "Sort Time", "Gather Time", "exec", "total")])
    out += _table(["sort_threads", "Sort Threads", "Build ms", "Sort ms", "Gather ms",
                   "Execution ms", "TIMING OFF ms"], body, ["---:"] * 7) + [""]
    sr = _ratio(a.get("Sort Time"), b.get("Sort Time"))
    if sr:
        out += [f"Sort phase with 2 threads: {sr:.2f}x faster than with 1 (target: 1.6x, "
                f"{'met' if sr >= 1.6 else 'not met'}).", ""]
    for ns in result["write_ns"]:
        out += [f"## Write phase: MergePass, work_mem {result['spill_work_mem']}, "
                f"braidsort.emulate_write_ns = {ns}, braidsort.write_threads = 1 vs 2", ""]
        body = []
        for n in result["thread_counts"]:
            m = med.get(("write", ns, n), {})
            body.append([n] + [_fmt(m.get(p)) for p in ("Sort Time", "Merge Time", "Build Time",
                                                         "Gather Time", "exec", "total")] +
                        [_mb(m.get("Device Bytes Written")), _fmt(m.get("Runs")),
                         _fmt(m.get("Merge Passes"))])
        a, b = med.get(("write", ns, 1), {}), med.get(("write", ns, 2), {})
        body.append(["**ratio 1/2**"] + [_x(_ratio(a.get(p), b.get(p))) for p in
                                         ("Sort Time", "Merge Time", "Build Time", "Gather Time",
                                          "exec", "total")] + ["", "", ""])
        out += _table(["write_threads", "Sort ms (sort + write runs)", "Merge ms", "Build ms",
                       "Gather ms", "Execution ms", "TIMING OFF ms", "written", "Runs",
                       "Merge Passes"], body, ["---:"] * 10) + [""]
    out += _warnings(result)
    body = []
    for r in result["runs"]:
        body.append([r["phase"], _fmt(r.get("write_ns"), "{}"), r["threads"], r["rep"] + 1,
                     r["kind"], _fmt(r["ms"])] + [_fmt(r.get(p)) for p in PHASES] +
                    [_fmt(r.get("write_thread_cap"), "{}")])
    out += ["## Individual runs", ""] + _table(
        ["phase", "emulate_write_ns", "threads", "rep", "run", "Execution ms", "Build",
         "Sort", "Merge", "Gather", "write_thread_cap"], body) + [""]
    return "\n".join(out)


# ---- concurrency ----------------------------------------------------------
CONC_FIELDS = ("tps", "latency_ms", "transactions", "read_grants", "write_grants", "waits",
               "phase_switches", "overlaps", "bytes_written", "bytes_read", "interfered_lines",
               "emulated_queued_ms")


def concurrency_medians(result):
    out = {}
    for pol in result["policies"]:
        rs = [r for r in result["runs"] if r["policy"] == pol]
        m = {f: median([r.get(f) for r in rs]) for f in CONC_FIELDS}
        m["overlaps_max"] = max((r["overlaps"] for r in rs), default=None)
        m["failed"] = sum(r["failed"] for r in rs)
        m["aborted"] = sum(r["aborted_clients"] for r in rs)
        m["exits"] = "/".join(sorted({str(r["exit"]) for r in rs}))
        m["txn_total"] = sum(r["transactions"] for r in rs)
        n = max((len(r["statement_latency_ms"]) for r in rs), default=0)
        m["stmt"] = [median([r["statement_latency_ms"][i] for r in rs
                             if i < len(r["statement_latency_ms"])]) for i in range(n)]
        out[pol] = m
    return out


def concurrency_markdown(result):
    med = concurrency_medians(result)
    quick = QUICK_TITLE if result.get("quick") else ""
    out = [f"# {title(result)}{quick}", "", machine_line(result), ""]
    out += _settings_line(result)
    out += [f"sortbench {result['rows']} rows, sortbench2 {result['rows2']} rows "
            f"({result['payload']}-byte payloads) on the tmpfs; client sessions: "
            f"`PGOPTIONS='{result['pgoptions']}'`; braidsort.io_policy alternates, set "
            "server-wide before each run. Medians over the runs; failed / aborted: totals.", ""]
    prof = result.get("profile")
    if prof:
        apart = prof["read_write_interference"] is not False
        out += [f"dax was profiled under the clients' emulation first: interference "
                f"{_fmt(prof['interference'], '{:.2f}')} (read_write_interference "
                f"{str(prof['read_write_interference']).lower()}: under "
                f"interference_aware the gate {'keeps' if apart else 'does not keep'} "
                f"reads and writes apart), write threads {prof['write_threads']}, "
                f"read threads {prof['read_threads']}, {prof['braid']}.", ""]
    out += ["## Each statement alone", ""]
    body = [[i + 1, f"`{s['statement']}`", s["Sort Method"], s["Gather Source"],
             s["Rows Sorted"], _mb(s["Device Bytes Written"]), _fmt(s["ms"])]
            for i, s in enumerate(result.get("statements", []))]
    out += _table(["#", "statement", "Sort Method", "Gather Source", "Rows Sorted", "written",
                   "ms"], body, ["---:", "---", "---", "---", "---:", "---:", "---:"]) + [""]
    out += ["## Results", ""]
    body = []
    for pol in result["policies"]:
        m = med[pol]
        body.append([pol, _fmt(m["tps"], "{:.3f}"), _fmt(m["latency_ms"]), _fmt(m["transactions"]),
                     m["failed"], m["aborted"], m["exits"], _fmt(m["read_grants"]),
                     _fmt(m["write_grants"]), _fmt(m["waits"]), _fmt(m["phase_switches"]),
                     f"{_fmt(m['overlaps'])} / {_fmt(m['overlaps_max'])}", _mb(m["bytes_written"]),
                     _mb(m["bytes_read"]), _fmt(m["interfered_lines"]),
                     _fmt(m["emulated_queued_ms"])])
    out += _table(["io_policy", "tps", "latency ms", "transactions", "failed", "aborted clients",
                   "pgbench exit", "read grants", "write grants", "waits", "phase switches",
                   "overlaps (median / max)", "device written", "device read",
                   "lines read under interference", "emulated queueing ms"], body,
                  ["---"] + ["---:"] * 15) + [""]
    ia, ov = med.get("interference_aware"), med.get("overlap")
    if ia and ov and ov["tps"]:
        out += [f"tps(interference_aware) / tps(overlap) = **{ia['tps'] / ov['tps']:.2f}x**.", ""]
    nchecks = sum(1 for s in result.get("statements", []) if "bench_check(" in s["statement"])
    for pol in result["policies"]:
        m = med[pol]
        out.append(f"Correctness under {pol}: {m['txn_total']} transactions completed, each "
                   f"with {nchecks} checked sorts that matched (a mismatch aborts the client); "
                   f"aborted clients: {m['aborted']}; failed transactions: {m['failed']}.")
    out.append("")
    n = max((len(m["stmt"]) for m in med.values()), default=0)
    if n:
        out += ["Per-statement average latency (ms; pgbench -r; medians over the runs):", ""]
        out += _table(["io_policy"] + [f"stmt {i + 1}" for i in range(n)],
                      [[pol] + [_fmt(x) for x in med[pol]["stmt"]] for pol in result["policies"]],
                      ["---"] + ["---:"] * n) + [""]
    out += _warnings(result)
    body = [[r["rep"] + 1, r["policy"], _fmt(r["tps"], "{:.3f}"), _fmt(r["latency_ms"]),
             r["transactions"], r["failed"], r["aborted_clients"], r["exit"], r["waits"],
             r["phase_switches"], r["overlaps"], _mb(r["bytes_written"])] for r in result["runs"]]
    out += ["## Individual runs", ""] + _table(
        ["run", "io_policy", "tps", "latency ms", "transactions", "failed", "aborted", "exit",
         "waits", "phase switches", "overlaps", "device written"], body) + [""]
    return "\n".join(out)


def markdown(result):
    k = kind(result)
    if k == "ordinary_disk":
        return disk_report.markdown(result)
    if k == "threads":
        return threads_markdown(result)
    if k == "concurrency":
        return concurrency_markdown(result)
    quick = QUICK_TITLE if result.get("quick") else ""
    if k == "join":
        return join_report.markdown(result, machine_line(result), quick)
    if k == "adaptive":
        return adaptive_report.markdown(
            result, machine_line(result), quick,
            comparison_markdown(result) if result.get("runs") else None)
    if k == "wlimit":
        return wlimit_report.markdown(result, machine_line(result), quick)
    return comparison_markdown(result)
