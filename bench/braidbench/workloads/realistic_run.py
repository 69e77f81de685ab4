"""Running the realistic workload: load, then alternate the variants."""
import os
import time

from braidbench import cluster as clustermod
from braidbench import machine, measure
from braidbench.workloads import realistic


def run(args, repo):
    work_mems = [w.strip() for w in args.work_mem.split(",") if w.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    wanted = {q.strip() for q in args.queries.split(",") if q.strip()}
    queries = [q for q in realistic.QUERIES if not wanted or q[0] in wanted]
    extra = dict(s.split("=", 1) for s in args.set)

    result = {
        "workload": "realistic",
        "machine": machine.describe(repo),
        "rows": args.rows,
        "customers": args.customers,
        "reps": args.reps,
        "work_mems": work_mems,
        "variants": variants,
        "runs": [],
        "decisions": [],
    }
    # PostgreSQL's defaults, plus where spill files go: braidsort's and
    # PostgreSQL's own temporary files on the same (emulated DAX) medium
    with clustermod.Cluster(locale="en_US.UTF-8", settings=extra) as cl:
        with cl.session() as conn:
            with conn.cursor() as cur:
                cur.execute("ALTER SYSTEM SET braidsort.spill_tablespace = 'dax'")
                cur.execute("ALTER SYSTEM SET temp_tablespaces = 'dax'")
                cur.execute("SELECT pg_reload_conf()")
        result["dax"] = cl.dax_kind
        t0 = time.time()
        with cl.session() as conn:
            with conn.cursor() as cur:
                for stmt in realistic.setup_sql(args.rows, args.customers):
                    cur.execute(stmt)
                cur.execute("SELECT pg_relation_size('orders'), pg_relation_size('customers')")
                result["orders_bytes"], result["customers_bytes"] = cur.fetchone()
                cur.execute("SELECT name, setting FROM pg_settings WHERE source <> 'default' "
                            "OR name IN ('shared_buffers','work_mem','max_parallel_workers_per_gather',"
                            "'jit','hash_mem_multiplier','max_worker_processes') ORDER BY 1")
                result["settings"] = dict(cur.fetchall())
        result["load_seconds"] = round(time.time() - t0, 1)
        print(f"loaded {args.rows} orders ({result['orders_bytes'] / 1e6:.0f} MB) "
              f"in {result['load_seconds']} s", flush=True)

        with cl.session() as conn:
            for wm in work_mems:
                for name, what, sql, needs, how in queries:
                    with conn.cursor() as cur:
                        measure.apply_settings(cur, dict(needs, work_mem=wm))
                        measure.apply_settings(cur, measure.VARIANTS["braid"])
                    result["decisions"].append({
                        "query": name, "work_mem": wm,
                        "messages": measure.decline_reasons(conn, sql, how)})
                    # one untimed warm-up of each variant, then alternate
                    for rep in range(-1, args.reps):
                        order = variants[rep % len(variants):] + variants[:rep % len(variants)]
                        for v in order:
                            with conn.cursor() as cur:
                                measure.apply_settings(cur, measure.VARIANTS[v])
                            ms, summary = measure.run_once(conn, sql, how)
                            if rep < 0:
                                continue
                            result["runs"].append({
                                "query": name, "work_mem": wm, "variant": v, "rep": rep,
                                "ms": round(ms, 2), "plan": summary,
                                "load1": round(os.getloadavg()[0], 2)})
                    # what each phase took, for the record (and the cost model)
                    for v in variants:
                        with conn.cursor() as cur:
                            measure.apply_settings(cur, measure.VARIANTS[v])
                        result.setdefault("captures", []).append({
                            "query": name, "work_mem": wm, "variant": v,
                            "explain": measure.capture(conn, sql, how)})
                    line = [f"{wm:>5} {name:<11}"]
                    for v in variants:
                        ms = measure.median([r["ms"] for r in result["runs"]
                                             if r["query"] == name and r["work_mem"] == wm
                                             and r["variant"] == v])
                        line.append(f"{v} {ms:8.0f} ms")
                    print("  ".join(line), flush=True)
        result["queries"] = [{"name": q[0], "what": q[1], "sql": q[2], "settings": q[3],
                              "how": q[4]} for q in queries]
    return result
