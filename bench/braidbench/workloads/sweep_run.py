"""The value-size sweep (after WiscSort's Figure 8): the spill comparison
for several payload sizes, one server whose shared_buffers hold the largest
table, parallel query off.  The table is reloaded for each payload.  Besides
PostgreSQL and braidsort forced, the comparison runs braidsort with its cost
model deciding, which shows the plan it picks for each payload (and why it
declines, from its DEBUG1 message).
"""
import time

from braidbench import compare, measure
from braidbench.progress import Progress
from braidbench.workloads import common, sortbench

DEFAULTS = {"rows": 2000000, "payloads": "10,50,90,500", "reps": 3, "work_mem": "16MB"}
QUICK = {"rows": 200000, "payloads": "10,500", "reps": 1, "work_mem": "4MB"}


def add_arguments(p):
    p.add_argument("--rows", type=int, default=None, help="rows in sortbench [2000000]")
    p.add_argument("--payloads", default=None, help="payload sizes in bytes, at most 1900 "
                   "(larger values would be TOASTed) [10,50,90,500]")
    p.add_argument("--reps", type=int, default=None, help="timed runs per variant [3]")
    p.add_argument("--work-mem", default=None, help="work_mem of both systems [16MB]")
    p.add_argument("--shared-buffers", default="auto",
                   help="auto = at least 2GB and twice the largest table")
    p.add_argument("--variants", default="pg,braid,forced")
    p.add_argument("--table-tablespace", default="dax")


def resolve(args):
    d = dict(DEFAULTS, **(QUICK if args.quick else {}))
    for k in ("rows", "payloads", "reps", "work_mem"):
        if getattr(args, k) is None:
            setattr(args, k, d[k])
    args.payload_list = [int(p) for p in common.split(args.payloads)]
    for p in args.payload_list:
        if not 1 <= p <= 1900:
            raise SystemExit(f"payload {p}: use 1 to 1900 bytes (larger values are TOASTed)")
    args.size = sortbench.sizing(args.rows, args.payload_list, args.table_tablespace)
    args.sb = args.size["shared_buffers"] if args.shared_buffers == "auto" else args.shared_buffers


def cluster_spec(args):
    resolve(args)
    return {"tmpfs": args.size["tmpfs"], "locale": None}


def steps(args):
    return len(args.payload_list) * compare.steps([1], [1], common.split(args.variants), args.reps)


def run(args, repo, cl, progress=None):
    resolve(args)
    progress = progress or Progress(steps(args))
    t0 = time.time()
    variants = common.split(args.variants)
    result = common.new_result("sweep", args, repo, cl)
    result.update({"family": "sortbench", "mode": "sweep", "rows": args.rows,
                   "payloads": args.payload_list, "reps": args.reps, "work_mem": args.work_mem,
                   "shared_buffers": args.sb, "variants": variants, "groups": [], "runs": [],
                   "captures": [], "decisions": [], "data": {}, "sizing": args.size["note"],
                   "queries": [sortbench.query(expect={"forced": ("braid mergepass", "braid hybrid",
                                                                        "braid segment", "braid lazy")})]})
    cl.set_conf(shared_buffers=args.sb)
    cl.restart()
    with cl.session() as conn:
        notices = measure.NoticeLog(conn)
        result["settings"] = common.server_settings(conn)
        for p in args.payload_list:
            label = f"payload={p}B"
            result["data"][label] = sortbench.load(conn, args.rows, p, args.table_tablespace,
                                                   log=progress.log)
            sortbench.prewarm(conn)
            groups = [(label, {"work_mem": args.work_mem, "max_parallel_workers_per_gather": "0"})]
            result["groups"].append(label)
            compare.run_into(result, conn, notices, groups, result["queries"], variants,
                             args.reps, progress)
        # leave no payload's table behind for another workload's reuse check
        conn.execute("DROP TABLE IF EXISTS sortbench")
    return common.finish(result, t0)
