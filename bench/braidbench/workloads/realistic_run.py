"""Running the realistic workload: load, then compare at each work_mem.

PostgreSQL's default settings (shared_buffers 128MB, parallel query on), an
en_US.UTF-8 database; temporary and spill files on the tmpfs.
"""
import time

from braidbench import compare, measure
from braidbench.progress import Progress
from braidbench.workloads import common, realistic

QUICK = {"rows": 100000, "customers": 10000, "reps": 1, "work_mem": "4MB",
         "queries": "ts,text,multi,copy"}


def add_arguments(p):
    p.add_argument("--rows", type=int, default=None, help="orders [3000000]")
    p.add_argument("--customers", type=int, default=None, help="customers [200000]")
    p.add_argument("--reps", type=int, default=None, help="timed runs per variant [5]")
    p.add_argument("--work-mem", default=None, help="comma-separated [4MB,64MB]")
    p.add_argument("--queries", default="", help="comma-separated subset of query names")
    p.add_argument("--variants", default="pg,braid,forced")
    p.add_argument("--set", action="append", default=[],
                   help="extra server setting name=value (recorded)")


def resolve(args):
    d = {"rows": 3000000, "customers": 200000, "reps": 5, "work_mem": "4MB,64MB"}
    if args.quick:
        d.update(QUICK)
    for k in ("rows", "customers", "reps", "work_mem"):
        if getattr(args, k) is None:
            setattr(args, k, d[k])
    if args.quick and not args.queries:
        args.queries = QUICK["queries"]
    wanted = set(common.split(args.queries))
    args.query_list = [{"name": q[0], "what": q[1], "sql": q[2], "settings": q[3], "how": q[4]}
                       for q in realistic.QUERIES if not wanted or q[0] in wanted]


def cluster_spec(args):
    resolve(args)
    return {"tmpfs": "4G", "locale": "en_US.UTF-8", "defaults": True,
            "settings": dict(s.split("=", 1) for s in args.set)}


def steps(args):
    return compare.steps(common.split(args.work_mem), args.query_list,
                         common.split(args.variants), args.reps)


def run(args, repo, cl, progress=None):
    resolve(args)
    progress = progress or Progress(steps(args))
    t0 = time.time()
    result, work_mems, variants = new_result("realistic", args, repo, cl)
    load(cl, args, result, progress)
    compare_at(cl, args, result, work_mems, variants, progress)
    return common.finish(result, t0)


def new_result(kind, args, repo, cl):
    """A result of this workload's shape (kind: "realistic", or a workload
    that reuses its tables and queries), with its work_mem values and
    variants."""
    work_mems = common.split(args.work_mem)
    variants = common.split(args.variants)
    result = common.new_result(kind, args, repo, cl)
    result.update({"rows": args.rows, "customers": args.customers, "reps": args.reps,
                   "groups": [f"work_mem={w}" for w in work_mems], "variants": variants,
                   "queries": args.query_list, "dax": cl.dax_kind})
    return result, work_mems, variants


def load(cl, args, result, progress):
    """Create and fill the orders and customers tables (args.rows,
    args.customers), recording their sizes, the settings and the time."""
    with cl.session() as conn:
        t1 = time.time()
        progress.log(f"loading {args.rows} orders, {args.customers} customers")
        for stmt in realistic.setup_sql(args.rows, args.customers):
            conn.execute(stmt)
        result["orders_bytes"], result["customers_bytes"] = conn.execute(
            "SELECT pg_relation_size('orders'), pg_relation_size('customers')").fetchone()
        result["settings"] = common.server_settings(conn)
        result["load_seconds"] = round(time.time() - t1, 1)
    progress.log(f"loaded {args.rows} orders ({result['orders_bytes'] / 1e6:.0f} MB) "
                 f"in {result['load_seconds']} s")


def compare_at(cl, args, result, work_mems, variants, progress):
    """args.query_list's variants compared at each work_mem, into result."""
    with cl.session() as conn:
        notices = measure.NoticeLog(conn)
        groups = [(f"work_mem={w}", {"work_mem": w}) for w in work_mems]
        compare.run_into(result, conn, notices, groups, args.query_list, variants,
                         args.reps, progress)
