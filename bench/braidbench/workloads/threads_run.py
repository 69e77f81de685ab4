"""Thread scaling, 1 against 2 threads per phase, braidsort forced, one
server whose shared_buffers hold the table, parallel query off.

Sort phase: a OnePass (work_mem 512MB, checked: "braid onepass") with
braidsort.sort_threads = 1 and 2 (checked: "Sort Threads").  Write phase: a
MergePass (work_mem 16MB, checked: "braid mergepass") with
braidsort.write_threads = 1 and 2 (server-wide: ALTER SYSTEM and a reload,
checked in the session of each run), for each braidsort.emulate_write_ns
(a delay per 64-byte line written, paid by the writing thread).

braidsort shows its phase times only with TIMING on, so each repetition has
two runs per thread count: EXPLAIN (ANALYZE) for the phases ("timed", whose
Execution Time includes EXPLAIN's per-row timing overhead) and EXPLAIN
(ANALYZE, TIMING OFF) for the total without that overhead ("total").  The
thread counts alternate; one untimed capture of each comes first.
"""
import os
import time

from braidbench import measure
from braidbench.progress import Progress
from braidbench.workloads import common, sortbench

DEFAULTS = {"rows": 5000000, "reps": 5, "sort_work_mem": "512MB", "spill_work_mem": "16MB"}
QUICK = {"rows": 300000, "reps": 1, "spill_work_mem": "4MB"}
THREADS = (1, 2)


def add_arguments(p):
    p.add_argument("--rows", type=int, default=None, help="rows in sortbench [5000000]")
    p.add_argument("--payload", type=int, default=90)
    p.add_argument("--reps", type=int, default=None, help="repetitions [5]")
    p.add_argument("--sort-work-mem", default=None, help="work_mem of the sort phase [512MB]")
    p.add_argument("--spill-work-mem", default=None, help="work_mem of the write phase [16MB]")
    p.add_argument("--write-ns", default="0,200",
                   help="write phase: the braidsort.emulate_write_ns values [0,200]")
    p.add_argument("--table-tablespace", default="dax")


def resolve(args):
    d = dict(DEFAULTS, **(QUICK if args.quick else {}))
    for k in ("rows", "reps", "sort_work_mem", "spill_work_mem"):
        if getattr(args, k) is None:
            setattr(args, k, d[k])
    args.ns_list = [int(x) for x in common.split(args.write_ns)]
    args.size = sortbench.sizing(args.rows, [args.payload], args.table_tablespace)


def cluster_spec(args):
    resolve(args)
    return {"tmpfs": args.size["tmpfs"], "locale": None}


def steps(args):
    per = len(THREADS) * (1 + 2 * args.reps)
    return per * (1 + len(args.ns_list))


def _settings(args, phase, n, ns):
    s = {"braidsort.enable": "on", "braidsort.force": "on",
         "max_parallel_workers_per_gather": "0"}
    if phase == "sort":
        s.update({"work_mem": args.sort_work_mem, "braidsort.sort_threads": str(n)})
    else:
        # MergePass's runs: every entry written (hybrid would keep some back)
        s.update({"work_mem": args.spill_work_mem, "braidsort.spill_tablespace": "dax",
                  "braidsort.emulate_write_ns": str(ns), "braidsort.sort_mode": "mergepass"})
    return s


def one_run(cl, args, phase, n, ns, kind):
    """One braidsort run in its own session; returns its record (and the
    EXPLAIN document of a capture)."""
    with cl.session() as conn:
        seen = conn.execute("SELECT current_setting('braidsort.write_threads')").fetchone()[0]
        measure.apply_settings(conn, _settings(args, phase, n, ns))
        doc = measure.explain(conn, sortbench.QUERY, timing=kind != "total",
                              buffers=kind == "capture", costs=kind == "capture")
        cap = conn.execute("SELECT write_thread_cap FROM braidsort.scheduler "
                           "WHERE tablespace = 'dax'").fetchone()
    summary = measure.plan_summary(doc["Plan"])
    measure.check_plan("forced", summary, f"{phase} phase")
    b = summary["braid"][0]
    want = "braid onepass" if phase == "sort" else "braid mergepass"
    if b.get("Sort Method") != want:
        hint = ("raise --sort-work-mem" if phase == "sort"
                else "raise --rows or lower --spill-work-mem")
        raise measure.PlanError(f"{phase} phase: Sort Method {b.get('Sort Method')!r}, "
                                f"expected {want!r}; {hint}")
    if phase == "sort" and b.get("Sort Threads") != n:
        raise measure.PlanError(f"braidsort.sort_threads = {n}, but EXPLAIN says "
                                f"Sort Threads: {b.get('Sort Threads')}")
    if phase == "write" and seen != str(n):
        raise measure.PlanError(f"braidsort.write_threads = {n} was set, but the run's "
                                f"session sees {seen!r}")
    rec = {"phase": phase, "threads": n, "write_ns": ns if phase == "write" else None,
           "kind": kind, "ms": doc["Execution Time"], "write_threads_seen": int(seen),
           "write_thread_cap": cap[0] if cap else None, "load1": round(os.getloadavg()[0], 2)}
    for k in ("Sort Method", "Sort Threads", "Runs", "Merge Passes", "Device Bytes Written",
              "Device Bytes Read", "Rows Sorted") + measure.PHASES:
        if k in b:
            rec[k] = b[k]
    return rec, doc


def run(args, repo, cl, progress=None):
    resolve(args)
    progress = progress or Progress(steps(args))
    t0 = time.time()
    result = common.new_result("threads", args, repo, cl)
    result.update({"family": "sortbench", "rows": args.rows, "payload": args.payload,
                   "reps": args.reps, "sort_work_mem": args.sort_work_mem,
                   "spill_work_mem": args.spill_work_mem, "write_ns": args.ns_list,
                   "thread_counts": list(THREADS), "shared_buffers": args.size["shared_buffers"],
                   "sizing": args.size["note"], "query": sortbench.QUERY,
                   "runs": [], "captures": []})
    cl.set_conf(shared_buffers=args.size["shared_buffers"])
    cl.restart()
    with cl.session() as conn:
        result["data"] = sortbench.load(conn, args.rows, args.payload, args.table_tablespace,
                                        log=progress.log)
        sortbench.prewarm(conn)
        result["settings"] = common.server_settings(conn)
        result["defaults"] = {
            "braidsort.sort_threads": conn.execute("SHOW braidsort.sort_threads").fetchone()[0],
            "braidsort.write_threads": conn.execute("SHOW braidsort.write_threads").fetchone()[0]}

    def series(phase, ns):
        tag = "sort phase" if phase == "sort" else f"write phase ns={ns}"
        knob = "sort_threads" if phase == "sort" else "write_threads"
        for n in THREADS:
            if phase == "write":
                cl.set_sighup("braidsort.write_threads", n)
            rec, doc = one_run(cl, args, phase, n, ns, "capture")
            result["captures"].append({"phase": phase, "threads": n, "write_ns": rec["write_ns"],
                                       "explain": doc})
            progress.step(f"{tag} capture {knob}={n}: {rec['Sort Method']}, "
                          f"{rec['ms']:.0f} ms")
        for i in range(args.reps):
            for kind in ("timed", "total"):
                for n in THREADS:
                    if phase == "write":
                        cl.set_sighup("braidsort.write_threads", n)
                    rec, _ = one_run(cl, args, phase, n, ns, kind)
                    rec["rep"] = i
                    result["runs"].append(rec)
                    if kind == "timed":
                        ph = "  ".join(f"{p.split()[0].lower()} {rec.get(p, 0):.0f}"
                                       for p in measure.PHASES)
                        progress.step(f"{tag} rep {i + 1}/{args.reps} {knob}={n}  {ph}  "
                                      f"total {rec['ms']:.0f} ms")
                    else:
                        progress.step(f"{tag} rep {i + 1}/{args.reps} {knob}={n}  "
                                      f"TIMING OFF total {rec['ms']:.0f} ms")

    try:
        series("sort", None)
        for ns in args.ns_list:
            series("write", ns)
    finally:
        cl.reset_sighup("braidsort.write_threads")
    return common.finish(result, t0)
