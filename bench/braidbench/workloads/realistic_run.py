"""Running the realistic workload: load, then compare at each work_mem."""
import time

from braidbench import cluster as clustermod
from braidbench import compare, machine, measure
from braidbench.workloads import realistic


def run(args, repo, log=print):
    work_mems = [w.strip() for w in args.work_mem.split(",") if w.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    wanted = {q.strip() for q in args.queries.split(",") if q.strip()}
    queries = [{"name": q[0], "what": q[1], "sql": q[2], "settings": q[3], "how": q[4]}
               for q in realistic.QUERIES if not wanted or q[0] in wanted]
    extra = dict(s.split("=", 1) for s in args.set)

    result = {
        "workload": "realistic", "machine": machine.describe(repo),
        "rows": args.rows, "customers": args.customers, "reps": args.reps,
        "groups": [f"work_mem={w}" for w in work_mems], "variants": variants,
        "queries": queries,
    }
    # PostgreSQL's defaults, plus where spill files go: braidsort's and
    # PostgreSQL's own temporary files on the same (emulated DAX) medium
    with clustermod.Cluster(locale="en_US.UTF-8", settings=extra) as cl:
        result["dax"] = cl.dax_kind
        with cl.session() as conn, conn.cursor() as cur:
            cur.execute("ALTER SYSTEM SET braidsort.spill_tablespace = 'dax'")
            cur.execute("ALTER SYSTEM SET temp_tablespaces = 'dax'")
            cur.execute("SELECT pg_reload_conf()")
            t0 = time.time()
            for stmt in realistic.setup_sql(args.rows, args.customers):
                cur.execute(stmt)
            cur.execute("SELECT pg_relation_size('orders'), pg_relation_size('customers')")
            result["orders_bytes"], result["customers_bytes"] = cur.fetchone()
            cur.execute(measure.SETTINGS_QUERY)
            result["settings"] = dict(cur.fetchall())
            result["load_seconds"] = round(time.time() - t0, 1)
        log(f"loaded {args.rows} orders ({result['orders_bytes'] / 1e6:.0f} MB) "
            f"in {result['load_seconds']} s")
        with cl.session() as conn:
            groups = [(f"work_mem={w}", {"work_mem": w}) for w in work_mems]
            result["runs"], result["captures"], result["decisions"] = compare.run(
                conn, groups, queries, variants, args.reps, log)
    return result
