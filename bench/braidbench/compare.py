"""Comparing PostgreSQL's sort with braidsort on one set of queries.

For each setting group and query: one untimed warm-up of every variant, then
`reps` rounds in which the variants take turns (the order rotates), so that
a machine getting slower or faster affects all alike; then one capture per
variant with EXPLAIN (ANALYZE, BUFFERS, VERBOSE) kept whole (phase times,
temp blocks written, workers' figures).

Bytes written, per run: the run's pg_stat_database.temp_bytes delta, which
counts PostgreSQL's temporary files and, since braidsort reports its spill
files as temporary files too, braidsort's (equal to its "Device Bytes
Written"); the larger of the two when a BraidSort node ran.
"""
from braidbench import measure


def steps(groups, queries, variants, reps):
    """How many measurements run() makes (for the progress line)."""
    return len(groups) * len(queries) * len(variants) * (reps + 2)


def written(r):
    """Bytes a run wrote to temporary and spill files."""
    return max(r.get("temp_bytes", 0), measure.device_bytes_written(r["plan"]))


def _describe(r):
    p = r["plan"]
    if p["braid"]:
        what = ", ".join(b.get("Sort Method", "?") for b in p["braid"])
    elif p["sorts"]:
        what = ", ".join(s.get("Sort Method", s.get("Node Type", "Sort")) for s in p["sorts"])
    else:
        what = "no sort"
    return f"{what}, wrote {written(r) / 1e6:.1f} MB"


def run_into(result, conn, notices, groups, queries, variants, reps, progress):
    """run(), adding its runs, captures and decisions to those of result
    (and its warnings to result's)."""
    runs, captures, decisions = run(conn, notices, groups, queries, variants, reps,
                                    progress, result["warnings"])
    for key, found in (("runs", runs), ("captures", captures), ("decisions", decisions)):
        result.setdefault(key, []).extend(found)


def run(conn, notices, groups, queries, variants, reps, progress, warnings):
    """groups: list of (label, {setting: value}); queries: list of dicts with
    name, sql, settings, how, and optionally check (verify each plan) and
    expect ({variant: Sort Method}).  Returns (runs, captures, decisions)."""
    runs, captures, decisions = [], [], []
    for label, settings in groups:
        for q in queries:
            base = dict(settings, **q.get("settings", {}))
            measure.apply_settings(conn, base)
            measure.apply_settings(conn, measure.VARIANTS["braid"])
            decisions.append({"query": q["name"], "group": label,
                              "messages": measure.decline_reasons(conn, notices, q["sql"], q["how"])})
            for rep in range(-1, reps):
                k = rep % len(variants)
                order = variants[k:] + variants[:k]
                for v in order:
                    measure.apply_settings(conn, measure.VARIANTS[v])
                    r = measure.run_once(conn, q["sql"], q["how"])
                    if q.get("check"):
                        measure.check_plan(v, r["plan"], f"{label} {q['name']} {v}")
                    rec = {"query": q["name"], "group": label, "variant": v, "rep": rep,
                           "ms": round(r["ms"], 3), "plan": r["plan"],
                           "temp_bytes": r["temp_bytes"], "temp_files": r["temp_files"],
                           "load1": r["load1"]}
                    rec["written"] = written(rec)
                    if "copy_bytes" in r:
                        rec["copy_bytes"] = r["copy_bytes"]
                    if rep >= 0:
                        runs.append(rec)
                    tag = "warm-up" if rep < 0 else f"rep {rep + 1}/{reps}"
                    progress.step(f"{label} {q['name']} {tag} {v:<6} {r['ms']:9.1f} ms  "
                                  f"{_describe(rec)}")
            for v in variants:
                measure.apply_settings(conn, measure.VARIANTS[v])
                doc, tb, tf = measure.capture(conn, q["sql"], q["how"])
                summary = measure.plan_summary(doc["Plan"])
                want = q.get("expect", {}).get(v)
                wants = [want] if isinstance(want, str) else list(want or ())
                got = [b.get("Sort Method") for b in summary["braid"]]
                if wants and not any(w in got for w in wants):
                    warnings.append(f"{label} {q['name']} {v}: expected Sort Method "
                                    f"'{want}', got {got or 'no BraidSort node'}")
                    progress.log("WARNING: " + warnings[-1])
                captures.append({"query": q["name"], "group": label, "variant": v,
                                 "temp_bytes": tb, "temp_files": tf,
                                 "temp_written_bytes": doc["Plan"].get("Temp Written Blocks", 0) * 8192,
                                 "plan": summary, "explain": doc})
                progress.step(f"{label} {q['name']} capture {v:<6} "
                              f"{doc['Execution Time']:9.1f} ms (EXPLAIN ANALYZE, BUFFERS)")
            line = [f"{label} {q['name']}:"]
            meds = {}
            for v in variants:
                meds[v] = measure.median([r["ms"] for r in runs if r["query"] == q["name"]
                                          and r["group"] == label and r["variant"] == v])
                line.append(f"{v} {meds[v]:.0f} ms")
            for v in variants:
                if v != "pg" and "pg" in meds and meds.get(v):
                    line.append(f"pg/{v} {meds['pg'] / meds[v]:.2f}x")
            progress.log("  ".join(line))
    return runs, captures, decisions
