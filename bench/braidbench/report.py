"""Markdown summaries of benchmark results."""
import math

from braidbench.measure import median


def _geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def realistic_rows(result):
    """Per (query, work_mem): medians, ratios and what braidsort did."""
    rows = []
    for wm in result["work_mems"]:
        for q in result["queries"]:
            runs = [r for r in result["runs"] if r["query"] == q["name"] and r["work_mem"] == wm]
            if not runs:
                continue
            med = {}
            plans = {}
            for v in result["variants"]:
                vr = [r for r in runs if r["variant"] == v]
                if vr:
                    med[v] = median([r["ms"] for r in vr])
                    plans[v] = vr[-1]["plan"]
            ran = bool(plans.get("braid", {}).get("braid"))
            eligible = bool(plans.get("forced", {}).get("braid"))
            msgs = next((d["messages"] for d in result["decisions"]
                         if d["query"] == q["name"] and d["work_mem"] == wm), [])
            rows.append({
                "query": q["name"], "work_mem": wm, "median": med, "ran": ran,
                "eligible": eligible,
                "ratio": med["pg"] / med["braid"] if "pg" in med and "braid" in med else None,
                "forced_ratio": med["pg"] / med["forced"] if "pg" in med and "forced" in med else None,
                "braid_plan": plans.get("braid", {}).get("braid", []),
                "forced_plan": plans.get("forced", {}).get("braid", []),
                "pg_sorts": plans.get("pg", {}).get("sorts", []),
                "workers": plans.get("pg", {}).get("workers_planned", 0),
                "messages": msgs,
            })
    return rows


def realistic_markdown(result):
    m = result["machine"]
    rows = realistic_rows(result)
    out = []
    out.append(f"# realistic workload, {result['rows']} orders "
               f"({result['orders_bytes'] / 1e6:.0f} MB), {result['reps']} reps\n")
    out.append(f"Machine: {m['cpus']} CPUs ({m['cpu_model']}), {m['memory_gb']} GB, "
               f"kernel {m['kernel']}, {m['postgres']}, braidsort at {m['commit']}"
               f"{' (dirty tree)' if m['dirty'] else ''}, load at start {m['loadavg_at_start'][0]:.2f}; "
               f"DAX stand-in: {result['dax']}.\n")
    out.append("Settings: " + ", ".join(f"{k}={v}" for k, v in sorted(result["settings"].items())) + "\n")
    out.append("Times are medians of alternating runs (server Execution Time of EXPLAIN "
               "(ANALYZE, TIMING OFF); COPY: client time). Ratio = PostgreSQL / braidsort "
               "(above 1: braidsort faster). `braid` is the cost model's choice, `forced` "
               "braidsort wherever eligible.\n")
    out.append("| work_mem | query | PostgreSQL ms | braid ms | ratio | braidsort ran? | forced ms | forced ratio | workers |")
    out.append("|---|---|---:|---:|---:|---|---:|---:|---:|")
    for r in rows:
        med = r["median"]
        bp = r["braid_plan"]
        ran = ", ".join(p.get("Sort Method", "?") for p in bp) if bp else "declined"
        if not r["eligible"] and not bp:
            ran = "not eligible"
        out.append(f"| {r['work_mem']} | {r['query']} | {med.get('pg', float('nan')):.0f} | "
                   f"{med.get('braid', float('nan')):.0f} | "
                   f"{r['ratio']:.2f} | {ran} | {med.get('forced', float('nan')):.0f} | "
                   f"{(r['forced_ratio'] or float('nan')):.2f} | {r['workers']} |")
    out.append("")
    for wm in result["work_mems"]:
        ran = [r["ratio"] for r in rows if r["work_mem"] == wm and r["ran"]]
        allr = [r["ratio"] for r in rows if r["work_mem"] == wm and r["ratio"]]
        worst = min(ran) if ran else float("nan")
        out.append(f"- work_mem {wm}: braidsort ran in {len(ran)} of {len(allr)} queries; "
                   f"geometric mean where it ran {_geomean(ran):.2f}x (worst {worst:.2f}x); "
                   f"over all queries {_geomean(allr):.2f}x.")
    out.append("")
    out.append("Why braidsort declined (DEBUG1):\n")
    for r in rows:
        if r["messages"] and not r["ran"]:
            out.append(f"- {r['work_mem']} {r['query']}: " + "; ".join(
                msg.replace("DEBUG:  ", "") for msg in r["messages"]))
    out.append("")
    return "\n".join(out)
