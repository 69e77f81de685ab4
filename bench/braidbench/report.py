"""Markdown summaries of benchmark results."""
import math

from braidbench.measure import median


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


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
                cap = [c for c in result.get("captures", [])
                       if c["query"] == q["name"] and c["group"] == group and c["variant"] == v]
                if cap:
                    written[v] = cap[-1]["temp_written_bytes"]
            msgs = next((d["messages"] for d in result["decisions"]
                         if d["query"] == q["name"] and d["group"] == group), [])
            rows.append({
                "query": q["name"], "group": group, "median": med, "written": written,
                "ran": bool(plans.get("braid", {}).get("braid")),
                "eligible": bool(plans.get("forced", {}).get("braid")),
                "pg_has_sort": bool(plans.get("pg", {}).get("sorts")),
                "ratio": med["pg"] / med["braid"] if "pg" in med and "braid" in med else None,
                "forced_ratio": med["pg"] / med["forced"] if "pg" in med and "forced" in med else None,
                "braid_plan": plans.get("braid", {}).get("braid", []),
                "forced_plan": plans.get("forced", {}).get("braid", []),
                "workers": plans.get("pg", {}).get("workers_planned", 0),
                "messages": msgs,
            })
    return rows


def _fmt(x, f="{:.0f}"):
    return f.format(x) if x is not None and not (isinstance(x, float) and math.isnan(x)) else "-"


def _what_ran(r):
    bp = r["braid_plan"]
    if bp:
        return ", ".join(f"{p.get('Sort Method', '?')} ({p.get('Gather Source', '?')})" for p in bp)
    if not r["pg_has_sort"]:
        return "no Sort in PostgreSQL's plan"
    if not r["eligible"]:
        return "not eligible"
    return "declined"


def comparison_markdown(result, title):
    m = result["machine"]
    rows = comparison_rows(result)
    out = [f"# {title}\n"]
    out.append(f"Machine: {m['cpus']} CPUs ({m['cpu_model']}), {m['memory_gb']} GB, "
               f"kernel {m['kernel']}, {m['postgres']}, braidsort at {m['commit']}"
               f"{' (with uncommitted changes)' if m['dirty'] else ''}, load at start "
               f"{m['loadavg_at_start'][0]:.2f}.\n")
    if result.get("note"):
        out.append(f"Note: {result['note']}.\n")
    settings = result.get("settings", {})
    if settings and all(isinstance(v, dict) for v in settings.values()):
        settings = next(iter(settings.values()))
    # what each row sets itself is in its label, not the server's default
    per_row = ("work_mem", "max_parallel_workers_per_gather") if result["workload"] == "sortbench" \
        else ("work_mem",)
    if settings:
        out.append("Settings: " + ", ".join(f"{k}={v}" for k, v in sorted(settings.items())
                                           if k not in per_row) + "\n")
    out.append("Times are medians of alternating runs (the server's Execution Time under "
               "EXPLAIN (ANALYZE, TIMING OFF), rows discarded in the server; COPY: the "
               "client's time). Ratio = PostgreSQL / braidsort, above 1 when braidsort is "
               "faster. `braid` is what braidsort's cost model chose, `forced` braidsort "
               "wherever eligible. Written = temporary-file bytes of one EXPLAIN (ANALYZE, "
               "BUFFERS) run (braidsort's spill files count as temporary files).\n")
    variants = result["variants"]
    head = "| setting | query | " + " | ".join(f"{v} ms" for v in variants)
    head += " | ratio | braidsort ran | forced ratio | written PG / braid |"
    out.append(head)
    out.append("|" + "---|" * (2 + len(variants)) + "---:|---|---:|---|")
    for r in rows:
        med = r["median"]
        cells = [r["group"], r["query"]] + [_fmt(med.get(v)) for v in variants]
        wr = r["written"]
        wtxt = "-"
        if "pg" in wr and ("braid" in wr or "forced" in wr):
            b = wr.get("braid") if r["ran"] else wr.get("forced")
            wtxt = f"{wr['pg'] / 1e6:.0f} MB / {b / 1e6:.1f} MB" if b is not None else "-"
        cells += [_fmt(r["ratio"], "{:.2f}"), _what_ran(r), _fmt(r["forced_ratio"], "{:.2f}"), wtxt]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    for group in result["groups"]:
        ran = [r["ratio"] for r in rows if r["group"] == group and r["ran"]]
        allr = [r["ratio"] for r in rows if r["group"] == group and r["ratio"]]
        forced = [r["forced_ratio"] for r in rows if r["group"] == group and r["eligible"]]
        out.append(f"- {group}: braidsort ran in {len(ran)} of {len(allr)} queries, "
                   f"geometric mean {_fmt(geomean(ran), '{:.2f}')}x where it ran "
                   f"(worst {_fmt(min(ran) if ran else None, '{:.2f}')}x), "
                   f"{_fmt(geomean(allr), '{:.2f}')}x over all; forced: "
                   f"{_fmt(geomean(forced), '{:.2f}')}x.")
    out.append("")
    declined = [r for r in rows if r["messages"] and not r["ran"]]
    if declined:
        out.append("Why braidsort declined (DEBUG1):\n")
        for r in declined:
            out.append(f"- {r['group']} {r['query']}: " + "; ".join(
                msg.replace("DEBUG:  ", "") for msg in r["messages"]))
        out.append("")
    return "\n".join(out)


def markdown(result):
    if result["workload"] == "realistic":
        title = (f"realistic workload: {result['rows']} orders "
                 f"({result['orders_bytes'] / 1e6:.0f} MB), {result['reps']} reps, "
                 f"DAX stand-in {result.get('dax', '?')}")
    else:
        title = (f"sortbench {result['mode']}: {result['rows']} rows, {result['payload']}-byte "
                 f"payloads ({result['table_bytes'] / 1e6:.0f} MB), work_mem "
                 f"{result['work_mem']}, {result['reps']} reps")
    return comparison_markdown(result, title)
