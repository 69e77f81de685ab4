"""Running the sortbenchmark workload: per shared_buffers, parallel off and on."""
import time

from braidbench import cluster as clustermod
from braidbench import compare, machine, measure
from braidbench.workloads import sortbench


def run(args, repo, log=print):
    mode = args.mode
    work_mem = args.work_mem or ("128MB" if mode == "onepass" else "16MB")
    sbs = [s for s in args.shared_buffers.split(",") if s]
    parallel = [p for p in args.parallel.split(",") if p]
    variants = [v for v in args.variants.split(",") if v]
    result = {
        "workload": "sortbench", "mode": mode, "machine": machine.describe(repo),
        "rows": args.rows, "payload": args.payload, "reps": args.reps,
        "work_mem": work_mem, "variants": variants, "groups": [],
        "runs": [], "captures": [], "decisions": [],
    }
    settings = {"jit": "off"}
    with clustermod.Cluster(locale=None, settings=settings, tmpfs_size=args.tmpfs) as cl:
        with cl.session() as conn, conn.cursor() as cur:
            cur.execute("ALTER SYSTEM SET braidsort.spill_tablespace = 'dax'")
            cur.execute("ALTER SYSTEM SET temp_tablespaces = 'dax'")
            cur.execute("SELECT pg_reload_conf()")
            t0 = time.time()
            for stmt in sortbench.setup_sql(args.rows, args.payload):
                cur.execute(stmt)
            cur.execute("SELECT pg_relation_size('sortbench')")
            result["table_bytes"] = cur.fetchone()[0]
            result["load_seconds"] = round(time.time() - t0, 1)
        log(f"loaded {args.rows} rows ({result['table_bytes'] / 1e6:.0f} MB)")
        for sb in sbs:
            cl.set_conf(shared_buffers=sb)
            cl.restart()
            with cl.session() as conn:
                with conn.cursor() as cur:
                    cur.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
                    cur.execute("SELECT pg_prewarm('sortbench')")
                    cur.execute(measure.SETTINGS_QUERY)
                    result.setdefault("settings", {})[sb] = dict(cur.fetchall())
                groups = [(f"sb={sb} parallel={p}",
                           {"work_mem": work_mem,
                            "max_parallel_workers_per_gather": "2" if p == "on" else "0"})
                          for p in parallel]
                result["groups"] += [g[0] for g in groups]
                runs, captures, decisions = compare.run(conn, groups, sortbench.QUERIES,
                                                        variants, args.reps, log)
                result["runs"] += runs
                result["captures"] += captures
                result["decisions"] += decisions
    result["queries"] = sortbench.QUERIES
    return result
