"""The onepass and spill workloads: SELECT * FROM sortbench ORDER BY k,
per shared_buffers configuration and parallel query off and on, PostgreSQL's
sort against braidsort (its cost model deciding, and forced).

onepass: work_mem 128MB, which braidsort's IndexMap fits and PostgreSQL's
tuples do not (PostgreSQL sorts externally, braidsort in one pass);
configurations A (shared_buffers 2GB: the table cached) and B (128MB,
PostgreSQL's default).  spill: work_mem 16MB, which neither fits
(braidsort spills sorted runs of <key, ref> and merges them), configuration
A only, its shared_buffers sized to hold the table twice.
"""
import time

from braidbench import compare, measure
from braidbench.progress import Progress
from braidbench.workloads import common, sortbench

DEFAULTS = {
    "onepass": {"rows": 5000000, "work_mem": "128MB", "shared_buffers": "2GB,128MB"},
    "spill": {"rows": 5000000, "work_mem": "16MB", "shared_buffers": "auto"},
}
QUICK = {
    "onepass": {"rows": 300000, "work_mem": "12MB", "shared_buffers": "256MB", "reps": 1},
    "spill": {"rows": 300000, "work_mem": "4MB", "shared_buffers": "256MB", "reps": 1},
}
# a spilling sort runs in whichever write-limited mode braidsort.sort_mode =
# auto picks (MergePass or one that writes less)
SPILLED = ("braid mergepass", "braid hybrid", "braid segment", "braid lazy")
EXPECT = {"onepass": "braid onepass", "spill": SPILLED}


def add_arguments(p, mode):
    d = DEFAULTS[mode]
    p.add_argument("--rows", type=int, default=None, help=f"rows in sortbench [{d['rows']}]")
    p.add_argument("--payload", type=int, default=90, help="bytes in v [90]")
    p.add_argument("--reps", type=int, default=None, help="timed runs per variant [5]")
    p.add_argument("--work-mem", default=None, help=f"work_mem of both systems [{d['work_mem']}]")
    p.add_argument("--shared-buffers", default=None,
                   help="comma-separated, one server configuration each; auto = "
                        f"at least 2GB and twice the table [{d['shared_buffers']}]")
    p.add_argument("--parallel", default="off,on",
                   help="max_parallel_workers_per_gather 0 (off) / 2 (on) [off,on]")
    p.add_argument("--variants", default="pg,braid,forced")
    p.add_argument("--table-tablespace", default="dax", help="dax (the tmpfs) or pg_default")


def resolve(args, mode):
    """Fill in the defaults of the mode (and of --quick)."""
    d = dict(DEFAULTS[mode], reps=5)
    if args.quick:
        d.update(QUICK[mode])
    for k in ("rows", "work_mem", "shared_buffers", "reps"):
        if getattr(args, k) is None:
            setattr(args, k, d[k])
    args.size = sortbench.sizing(args.rows, [args.payload], args.table_tablespace)
    args.sb_list = [args.size["shared_buffers"] if s == "auto" else s
                    for s in common.split(args.shared_buffers)]


def cluster_spec(args, mode):
    resolve(args, mode)
    return {"tmpfs": args.size["tmpfs"], "locale": None}


def steps(args, mode=None):
    return (len(args.sb_list) * len(common.split(args.parallel)) *
            compare.steps([1], [1], common.split(args.variants), args.reps))


def run(args, mode, repo, cl, progress=None):
    resolve(args, mode)
    progress = progress or Progress(steps(args))
    t0 = time.time()
    variants = common.split(args.variants)
    parallel = common.split(args.parallel)
    result = common.new_result(mode, args, repo, cl)
    result.update({"family": "sortbench", "mode": mode, "rows": args.rows,
                   "payload": args.payload, "reps": args.reps, "work_mem": args.work_mem,
                   "variants": variants, "groups": [], "runs": [], "captures": [],
                   "decisions": [], "settings": {}, "sizing": args.size["note"],
                   "queries": [sortbench.query(expect={"forced": EXPECT[mode]})]})
    with cl.session() as conn:
        result["data"] = sortbench.load(conn, args.rows, args.payload, args.table_tablespace,
                                        log=progress.log)
    result["table_bytes"] = result["data"]["bytes"]
    for sb in args.sb_list:
        cl.set_conf(shared_buffers=sb)
        cl.restart()
        with cl.session() as conn:
            notices = measure.NoticeLog(conn)
            sortbench.prewarm(conn)
            result["settings"][sb] = common.server_settings(conn)
            # configuration A (the first) is meant to hold the table
            if sb == args.sb_list[0] and 2 * result["table_bytes"] > _bytes(conn, sb):
                result["warnings"].append(
                    f"shared_buffers={sb}: the table ({result['table_bytes'] / 1e6:.0f} MB) is "
                    "more than half of it: braidsort's planner counts it as not cached")
            groups = [(f"sb={sb} parallel={p}",
                       {"work_mem": args.work_mem,
                        "max_parallel_workers_per_gather": "2" if p == "on" else "0"})
                      for p in parallel]
            result["groups"] += [g[0] for g in groups]
            progress.log(f"shared_buffers={sb}: {', '.join(g[0] for g in groups)}")
            compare.run_into(result, conn, notices, groups, result["queries"], variants,
                             args.reps, progress)
    return common.finish(result, t0)


def _bytes(conn, setting):
    return conn.execute("SELECT pg_size_bytes(%s)", (setting,)).fetchone()[0]
