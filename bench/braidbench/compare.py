"""Comparing PostgreSQL's sort with braidsort on one set of queries.

For each setting group and query: one untimed warm-up of every variant, then
`reps` rounds in which the variants take turns (the order rotates), so that
a machine getting slower or faster affects all alike; then one capture per
variant with EXPLAIN (ANALYZE, BUFFERS) kept whole (phase times, temp blocks
written, workers' figures).
"""
import os

from braidbench import measure


def temp_written_bytes(explain):
    """Temporary-file bytes a plan wrote (PostgreSQL's and braidsort's)."""
    return explain["Plan"].get("Temp Written Blocks", 0) * 8192


def run(conn, groups, queries, variants, reps, log=print):
    """groups: list of (label, {setting: value}); queries: list of dicts with
    name, sql, settings, how.  Returns (runs, captures, decisions)."""
    runs, captures, decisions = [], [], []
    for label, settings in groups:
        for q in queries:
            with conn.cursor() as cur:
                measure.apply_settings(cur, dict(settings, **q.get("settings", {})))
                measure.apply_settings(cur, measure.VARIANTS["braid"])
            decisions.append({"query": q["name"], "group": label,
                              "messages": measure.decline_reasons(conn, q["sql"], q["how"])})
            for rep in range(-1, reps):
                order = variants[rep % len(variants):] + variants[:rep % len(variants)]
                for v in order:
                    with conn.cursor() as cur:
                        measure.apply_settings(cur, measure.VARIANTS[v])
                    ms, summary = measure.run_once(conn, q["sql"], q["how"])
                    if rep >= 0:
                        runs.append({"query": q["name"], "group": label, "variant": v,
                                     "rep": rep, "ms": round(ms, 2), "plan": summary,
                                     "load1": round(os.getloadavg()[0], 2)})
            for v in variants:
                with conn.cursor() as cur:
                    measure.apply_settings(cur, measure.VARIANTS[v])
                ex = measure.capture(conn, q["sql"], q["how"])
                captures.append({"query": q["name"], "group": label, "variant": v,
                                 "temp_written_bytes": temp_written_bytes(ex), "explain": ex})
            line = [f"{label:>12} {q['name']:<11}"]
            for v in variants:
                ms = measure.median([r["ms"] for r in runs if r["query"] == q["name"]
                                     and r["group"] == label and r["variant"] == v])
                line.append(f"{v} {ms:8.0f} ms")
            log("  ".join(line))
    return runs, captures, decisions
