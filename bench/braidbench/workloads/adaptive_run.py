"""Adaptive sorts: what a sort the planner underestimates costs, and what
taking every small sort adaptively costs the sorts that stay small.

Two parts, in one cluster with PostgreSQL's default settings (parallel
query on) and an en_US.UTF-8 database:

spill: the realistic workload's orders table, sorted behind a predicate the
planner cannot estimate (lower(status) = status, which holds on every row
but gets the default 0.5% selectivity), so that the Sort is expected to fit
in work_mem and spills at run time.  Variants as in the realistic workload:
pg (braidsort off), braid (braidsort as shipped: the Sort is taken
adaptively), forced (braidsort forced: a planned braidsort sort, from the
same wrong estimate); and the same query without the predicate (the same
rows, estimated right), which shows what a planned braidsort sort does with
a correct estimate.

small: pgbench clients running short queries whose sorts stay small (an
index range of pgbench_accounts ordered by another column; a grouped
count ordered by the count), with braidsort.adaptive on, off, and
braidsort off, in rotating order, each run the same length: tps, and the
backends' CPU time per transaction (the postmaster's reaped children's
user + system time across the run), whose per-round ratios are less
exposed to a shared machine's changing speed than tps.
"""
import os
import subprocess
import time

from braidbench import cluster as clustermod
from braidbench import compare, measure
from braidbench.progress import Progress
from braidbench.workloads import common, realistic_run

DEFAULTS = {"rows": 2000000, "customers": 200000, "reps": 5, "work_mem": "4MB",
            "scale": 10, "clients": 2, "seconds": 15, "pgbench_reps": 7}
QUICK = {"rows": 50000, "customers": 5000, "reps": 1, "work_mem": "1MB",
         "scale": 1, "clients": 2, "seconds": 2, "pgbench_reps": 1}
QUICK_QUERIES = ("under_multi", "right_multi")

# the predicate holds on every row; the planner expects 0.5% of them
UNDER = "lower(status) = status"
QUERIES = [
    ("under_multi", "ORDER BY two columns, the predicate underestimated",
     f"SELECT * FROM orders WHERE {UNDER} ORDER BY customer_id, created_at DESC"),
    ("right_multi", "the same rows estimated right (no predicate)",
     "SELECT * FROM orders ORDER BY customer_id, created_at DESC"),
    ("under_amount", "ORDER BY a numeric, the predicate underestimated",
     f"SELECT * FROM orders WHERE {UNDER} ORDER BY amount"),
    ("right_amount", "the same rows estimated right (no predicate)",
     "SELECT * FROM orders ORDER BY amount"),
]

# short queries whose sorts stay small
SMALL_SCRIPT = """\\set aid random(1, 100000 * :scale - 200)
SELECT aid, abalance FROM pgbench_accounts WHERE aid BETWEEN :aid AND :aid + 100 ORDER BY abalance, aid;
SELECT bid, count(*) FROM pgbench_accounts WHERE aid BETWEEN :aid AND :aid + 150 GROUP BY bid ORDER BY count(*) DESC, bid;
"""

SMALL_VARIANTS = {
    "adaptive": "-c braidsort.adaptive=on",
    "not_adaptive": "-c braidsort.adaptive=off",
    "pg": "-c braidsort.enable=off",
}


def add_arguments(p):
    p.add_argument("--rows", type=int, default=None, help="orders [2000000]")
    p.add_argument("--customers", type=int, default=None, help="customers [200000]")
    p.add_argument("--reps", type=int, default=None, help="timed runs per variant [5]")
    p.add_argument("--work-mem", default=None, help="comma-separated [4MB]")
    p.add_argument("--variants", default="pg,braid,forced")
    p.add_argument("--scale", type=int, default=None, help="pgbench -i scale [10]")
    p.add_argument("--clients", type=int, default=None, help="pgbench -c and -j [2]")
    p.add_argument("--seconds", type=int, default=None, help="pgbench -T [15]")
    p.add_argument("--pgbench-reps", type=int, default=None,
                   help="pgbench runs per variant [7]")
    p.add_argument("--parts", default="spill,small", help="spill, small or both")


def resolve(args):
    d = dict(DEFAULTS)
    if args.quick:
        d.update(QUICK)
    for k in d:
        if getattr(args, k) is None:
            setattr(args, k, d[k])
    args.part_list = common.split(args.parts)
    # the underestimated sorts must switch to braidsort's path (checked on
    # the EXPLAIN ANALYZE capture of each variant)
    braid_methods = ("braid onepass", "braid mergepass", "braid hybrid", "braid segment",
                     "braid lazy")
    args.query_list = [{"name": n, "what": w, "sql": s, "settings": {}, "how": "explain",
                        "expect": {"braid": braid_methods} if n.startswith("under") else {}}
                       for n, w, s in QUERIES if not args.quick or n in QUICK_QUERIES]


def cluster_spec(args):
    resolve(args)
    return {"tmpfs": "4G", "locale": "en_US.UTF-8", "defaults": True, "settings": {}}


def steps(args):
    resolve(args)
    n = 0
    if "spill" in args.part_list:
        n += compare.steps(common.split(args.work_mem), args.query_list,
                           common.split(args.variants), args.reps)
    if "small" in args.part_list:
        n += args.pgbench_reps * len(SMALL_VARIANTS)
    return n


def pgbench(cl, args, script, options):
    cmd = ["runuser", "-u", "postgres", "--", "env", f"PGOPTIONS={options}",
           f"{clustermod.PGBIN}/pgbench", "-n", "-c", str(args.clients), "-j",
           str(args.clients), "-T", str(args.seconds), "-D", f"scale={args.scale}",
           "-f", script, "-h", cl.dir, "-p", str(cl.port), "-U", "postgres", "postgres"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def backend_cpu_seconds(cl):
    """CPU seconds (user + system) of the server's exited and reaped child
    processes: a run's backends, once their clients have disconnected."""
    with open(os.path.join(cl.data, "postmaster.pid")) as f:
        pid = int(f.readline())
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3): cutime and cstime are fields 16, 17
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def small_part(cl, args, result, progress):
    """pgbench of short queries, the variants rotating."""
    progress.log(f"pgbench -i -s {args.scale}")
    subprocess.run(["runuser", "-u", "postgres", "--", f"{clustermod.PGBIN}/pgbench", "-i",
                    "-q", "-s", str(args.scale), "-h", cl.dir, "-p", str(cl.port), "-U",
                    "postgres", "postgres"], check=True, capture_output=True)
    script = os.path.join(cl.dir, "adaptive_small.sql")
    with open(script, "w") as f:
        f.write(SMALL_SCRIPT)
    os.chmod(script, 0o644)
    with cl.session() as conn:
        plans = {}
        for v, opt in SMALL_VARIANTS.items():
            for setting in opt.split("-c ")[1:]:
                name, value = setting.strip().split("=")
                conn.execute("SELECT set_config(%s, %s, false)", (name, value))
            rows = conn.execute(
                "EXPLAIN (COSTS OFF) SELECT aid, abalance FROM pgbench_accounts "
                "WHERE aid BETWEEN 1000 AND 1100 ORDER BY abalance, aid").fetchall()
            plans[v] = "\n".join(r[0] for r in rows)
            conn.execute("RESET ALL")
    result["small"] = {"script": SMALL_SCRIPT, "scale": args.scale, "clients": args.clients,
                       "seconds": args.seconds, "reps": args.pgbench_reps,
                       "variants": SMALL_VARIANTS, "plans": plans, "runs": []}
    if "Sort Method: adaptive" not in plans["adaptive"]:
        result["warnings"].append("small: the short query's sort is not taken adaptively:\n"
                                  + plans["adaptive"])
    names = list(SMALL_VARIANTS)
    for rep in range(args.pgbench_reps):
        k = rep % len(names)
        for v in names[k:] + names[:k]:
            clustermod.wait_quiet()
            cpu0 = backend_cpu_seconds(cl)
            rc, text = pgbench(cl, args, script, SMALL_VARIANTS[v])
            time.sleep(0.5)     # the backends exit and are reaped
            cpu = backend_cpu_seconds(cl) - cpu0
            tps, tx = None, None
            for line in text.splitlines():
                if line.startswith("tps = ") and "without initial connection" in line:
                    tps = float(line.split()[2])
                if line.startswith("number of transactions actually processed:"):
                    tx = int(line.split(":")[1].split("/")[0])
            if rc != 0 or tps is None or not tx:
                result["warnings"].append(f"small {v} run {rep + 1}: pgbench exit {rc}: "
                                          + text[-300:])
                tps, tx = 0.0, 0
            cpu_us = cpu * 1e6 / tx if tx else None
            result["small"]["runs"].append({"variant": v, "rep": rep, "tps": tps,
                                            "transactions": tx, "backend_cpu_s": round(cpu, 2),
                                            "cpu_us_per_tx": round(cpu_us, 1) if cpu_us else None,
                                            "load1": round(os.getloadavg()[0], 2)})
            progress.step(f"small rep {rep + 1}/{args.pgbench_reps} {v:<13} {tps:9.1f} tps, "
                          f"{cpu_us or 0:6.1f} us CPU a transaction")
    med = {v: measure.median([r["tps"] for r in result["small"]["runs"] if r["variant"] == v])
           for v in names}
    progress.log("small: " + "  ".join(f"{v} {med[v]:.1f} tps" for v in names) +
                 (f"  adaptive/not_adaptive {med['adaptive'] / med['not_adaptive']:.4f}"
                  if med.get("not_adaptive") else ""))


def run(args, repo, cl, progress=None):
    resolve(args)
    progress = progress or Progress(steps(args))
    t0 = time.time()
    result, work_mems, variants = realistic_run.new_result("adaptive", args, repo, cl)
    result["parts"] = args.part_list
    if "spill" in args.part_list:
        realistic_run.load(cl, args, result, progress)
        realistic_run.compare_at(cl, args, result, work_mems, variants, progress)
        with cl.session() as conn:
            conn.execute("DROP TABLE orders, customers")
    if "small" in args.part_list:
        small_part(cl, args, result, progress)
    return common.finish(result, t0)
