"""Write-limited sorts: SELECT * FROM sortbench ORDER BY k with an IndexMap
that does not fit the budget, every braidsort.sort_mode at several
braidsort.write_intensity values, on emulated devices whose writes cost
more and more (braidsort.emulate_write_ns; reads 10 ns a line), after
Viglas's evaluation of the write-limited sorts.

The budget (work_mem) is sized from the IndexMap of a OnePass run so that
MergePass makes about beta budgets' worth of entries (beta in --betas).
Per (beta, write latency) every configuration (mode, intensity) runs
--reps times, the configurations in a new order each repetition; recorded
are the time (EXPLAIN ANALYZE's Execution Time), the device lines written
and read, selection passes, whether lazy materialized, the mode that ran,
and braidsort.sort_modes()'s estimate of the configuration (the model's
time, lines, passes), from which the report ranks the modes.

--long-key places keys that run past braidsort's 16-byte key prefix (a
bytea key with four zero bytes, which its encoding escapes): as random
keys come (natural, about one 5M-row load in five has one), none, or one at
a given row.  The rows where the table has one are recorded.

Parallel query is off: a selection pass rescans a plain serial heap scan
(a parallel scan cannot be re-read, and under it every mode runs as
hybrid), so the modes are compared on one process.

--spillcheck instead runs the MergePass benchmark's configuration (5M
rows, work_mem 16MB, no emulation, parallel query off): PostgreSQL's sort,
braidsort with sort_mode = auto and with sort_mode = mergepass: time, and
bytes written to the device against PostgreSQL's temporary files.
"""
import math
import random
import time

from braidbench import measure
from braidbench.progress import Progress
from braidbench.workloads import common, sortbench

DEFAULTS = {"rows": 5000000, "betas": "2,4,8", "write_ns": "0,150,300,600,1200,2400",
            "reps": 3}
QUICK = {"rows": 200000, "betas": "2,4", "write_ns": "0,2400", "reps": 1}
# (mode, write intensity); -1 is cost-optimal.  MergePass has no knob.
CONFIGS = [("mergepass", -1.0)] + [(m, wi) for m in ("hybrid", "segment", "lazy")
                                   for wi in (-1.0, 0.0, 0.5, 0.8)] + [("auto", -1.0)]
QUICK_CONFIGS = [("mergepass", -1.0), ("hybrid", -1.0), ("segment", 0.0), ("segment", -1.0),
                 ("lazy", 0.0), ("lazy", -1.0), ("auto", -1.0)]
READ_NS = 10
SPILLCHECK = {"rows": 5000000, "work_mem": "16MB", "reps": 3}
SPILLCHECK_QUICK = {"rows": 200000, "work_mem": "1MB", "reps": 1}


def add_arguments(p):
    p.add_argument("--rows", type=int, default=None, help="rows in sortbench [5000000]")
    p.add_argument("--payload", type=int, default=90, help="bytes in v [90]")
    p.add_argument("--betas", default=None, help="budgets' worth of entries MergePass makes [2,4,8]")
    p.add_argument("--write-ns", default=None,
                   help="braidsort.emulate_write_ns values [0,150,300,600,1200,2400]")
    p.add_argument("--configs", default=None,
                   help="mode:intensity pairs, e.g. mergepass:-1,lazy:0 [every mode at "
                        "-1, 0, 0.5, 0.8; mergepass and auto at -1]")
    p.add_argument("--reps", type=int, default=None, help="runs per configuration and point [3]")
    p.add_argument("--spillcheck", action="store_true",
                   help="the MergePass benchmark's configuration instead: PostgreSQL, auto, "
                        "mergepass (5M rows, work_mem 16MB, no emulation)")
    p.add_argument("--work-mem", default=None, help="--spillcheck: work_mem [16MB]")
    p.add_argument("--table-tablespace", default="dax")
    p.add_argument("--long-key", default="natural",
                   help="keys with four zero bytes (run past the 16-byte prefix): natural (as "
                        "random keys come: in about one 5M-row load of five), none, or a row "
                        "number (that row's only) [natural]")


def _configs(text):
    out = []
    for item in common.split(text):
        mode, _, wi = item.partition(":")
        if mode not in ("mergepass", "hybrid", "segment", "lazy", "auto"):
            raise SystemExit(f"--configs: unknown mode {mode!r}")
        wi = float(wi or -1)
        if not (wi == -1 or 0 <= wi <= 1):
            raise SystemExit(f"--configs: write intensity {wi} is not -1 or in [0, 1]")
        out.append((mode, wi))
    return out


def resolve(args):
    if args.long_key not in ("natural", "none") and not (args.long_key.isdigit() and
                                                         int(args.long_key) > 0):
        raise SystemExit(f"--long-key: {args.long_key!r} is not natural, none or a row number")
    if args.spillcheck:
        d = dict(SPILLCHECK, **(SPILLCHECK_QUICK if args.quick else {}))
        for k in ("rows", "reps", "work_mem"):
            if getattr(args, k) is None:
                setattr(args, k, d[k])
        args.beta_list, args.write_list, args.config_list = [], [], []
    else:
        d = dict(DEFAULTS, **(QUICK if args.quick else {}))
        for k in ("rows", "betas", "write_ns", "reps"):
            if getattr(args, k) is None:
                setattr(args, k, d[k])
        args.beta_list = [float(b) for b in common.split(args.betas)]
        args.write_list = [int(w) for w in common.split(args.write_ns)]
        args.config_list = (_configs(args.configs) if args.configs
                            else QUICK_CONFIGS if args.quick else CONFIGS)
    args.size = sortbench.sizing(args.rows, [args.payload], args.table_tablespace)


def cluster_spec(args):
    resolve(args)
    return {"tmpfs": args.size["tmpfs"], "locale": None}


def steps(args):
    resolve(args)
    if args.spillcheck:
        return 3 * args.reps
    return len(args.beta_list) * len(args.write_list) * len(args.config_list) * args.reps


def _base_settings():
    return {"braidsort.force": "on", "braidsort.spill_tablespace": "dax",
            "max_parallel_workers_per_gather": "0", "braidsort.emulate_read_ns": str(READ_NS)}


def _braid_node(doc):
    for node in measure.walk(doc["Plan"]):
        if measure.is_braid(node):
            return node
    return None


def calibrate(conn, progress):
    """The IndexMap of all rows, in kB: a OnePass run with a budget it fits."""
    measure.apply_settings(conn, dict(_base_settings(), work_mem="4GB",
                                      **{"braidsort.sort_mode": "mergepass"}))
    doc = measure.explain(conn, sortbench.QUERY)
    node = _braid_node(doc)
    if node is None or node.get("Sort Method") != "braid onepass":
        raise RuntimeError("calibration: the sort did not run as a braidsort OnePass "
                           f"({node and node.get('Sort Method')})")
    kb = node["IndexMap Memory"]
    progress.log(f"IndexMap of {node['Rows Sorted']} rows: {kb} kB "
                 f"({kb * 1024 / node['Rows Sorted']:.1f} bytes an entry)")
    return kb


def model_estimates(conn):
    """braidsort.sort_modes() at the session's settings: {mode: row}."""
    rows = conn.execute(
        "SELECT mode, write_intensity, lines_written, lines_read, input_passes, "
        "selection_passes, est_ms, feasible, chosen FROM braidsort.sort_modes(%s)",
        (sortbench.QUERY,)).fetchall()
    keys = ("mode", "write_intensity", "lines_written", "lines_read", "input_passes",
            "selection_passes", "est_ms", "feasible", "chosen")
    return {r[0]: dict(zip(keys, r)) for r in rows}


def run_point(conn, settings, mode, wi):
    """One sort under settings in (mode, wi); its figures, and the model's."""
    measure.apply_settings(conn, dict(settings, **{"braidsort.sort_mode": mode,
                                                   "braidsort.write_intensity": str(wi)}))
    est = model_estimates(conn)
    doc = measure.explain(conn, sortbench.QUERY)
    node = _braid_node(doc)
    if node is None:
        raise RuntimeError(f"{mode}@{wi}: no BraidSort in the plan")
    ran = (node.get("Sort Method") or "").replace("braid ", "")
    chosen = [m for m, e in est.items() if e["chosen"]]
    model = est.get(mode) if mode != "auto" else (est.get(chosen[0]) if chosen else None)
    return {"ms": doc["Execution Time"], "ran": ran,
            "lines_written": node.get("Device Lines Written", 0),
            "lines_read": node.get("Device Lines Read", 0),
            "bytes_written": node.get("Device Bytes Written", 0),
            "selection_passes": node.get("Selection Passes", 0),
            "merge_passes": node.get("Merge Passes", 0), "runs": node.get("Runs", 0),
            "materialized": node.get("Materialized"),
            "memory_run_entries": node.get("Memory Run Entries", 0),
            "model": model, "model_chosen": chosen[0] if chosen else None,
            "load1": None}


def run(args, repo, cl, progress=None):
    resolve(args)
    progress = progress or Progress(steps(args))
    t0 = time.time()
    result = common.new_result("wlimit", args, repo, cl)
    result.update({"mode": "spillcheck" if args.spillcheck else "grid", "rows": args.rows,
                   "payload": args.payload, "reps": args.reps, "read_ns": READ_NS,
                   "sizing": args.size["note"], "runs": [], "points": []})
    cl.set_conf(shared_buffers=args.size["shared_buffers"])
    cl.restart()
    with cl.session() as conn:
        result["data"] = sortbench.load(conn, args.rows, args.payload, args.table_tablespace,
                                        log=progress.log, long_key=args.long_key)
        result["data"]["long_key"] = args.long_key
        result["data"]["long_key_rows"] = sortbench.long_keys(conn)
        progress.log(f"keys with four zero bytes at rows {result['data']['long_key_rows']}")
        sortbench.prewarm(conn)
        result["settings"] = common.server_settings(conn)
        if args.spillcheck:
            _spillcheck(args, conn, result, progress)
        else:
            _grid(args, conn, result, progress)
    return common.finish(result, t0)


def _grid(args, conn, result, progress):
    map_kb = calibrate(conn, progress)
    result["indexmap_kb"] = map_kb
    result["configs"] = [list(c) for c in args.config_list]
    total = len(args.beta_list) * len(args.write_list) * len(args.config_list) * args.reps
    started = time.time()
    done = 0
    rng = random.Random(20261124)
    for beta in args.beta_list:
        wm_kb = max(64, int(math.ceil(map_kb / beta)))
        for wns in args.write_list:
            settings = dict(_base_settings(), work_mem=f"{wm_kb}kB",
                            **{"braidsort.emulate_write_ns": str(wns)})
            point = {"beta": beta, "beta_obtained": map_kb / wm_kb, "work_mem_kb": wm_kb,
                     "write_ns": wns}
            result["points"].append(point)
            for rep in range(args.reps):
                order = list(args.config_list)
                rng.shuffle(order)
                for mode, wi in order:
                    r = run_point(conn, settings, mode, wi)
                    r.update({"beta": beta, "write_ns": wns, "mode": mode, "intensity": wi,
                              "rep": rep})
                    result["runs"].append(r)
                    done += 1
                    left = (time.time() - started) / done * (total - done)
                    progress.step(f"beta {beta:g} write {wns} ns {mode}@{wi:g} rep {rep + 1}: "
                                  f"{r['ms']:.0f} ms, ran {r['ran']}, written "
                                  f"{r['lines_written']} lines (about {left / 60:.0f} min left)")
                    want = r["ran"] if mode == "auto" else mode
                    if r["ran"] != want and r["ran"] != "onepass":
                        result["warnings"].append(f"beta {beta:g} write {wns}: {mode}@{wi:g} "
                                                  f"ran as {r['ran']}")


def _spillcheck(args, conn, result, progress):
    """PostgreSQL, braidsort auto and mergepass at work_mem 16MB, no emulation."""
    settings = {"braidsort.spill_tablespace": "dax", "max_parallel_workers_per_gather": "0",
                "work_mem": args.work_mem, "braidsort.emulate_write_ns": "0",
                "braidsort.emulate_read_ns": "0"}
    result["work_mem"] = args.work_mem
    variants = [("pg", {"braidsort.enable": "off"}),
                ("auto", {"braidsort.enable": "on", "braidsort.force": "on",
                          "braidsort.sort_mode": "auto"}),
                ("mergepass", {"braidsort.enable": "on", "braidsort.force": "on",
                               "braidsort.sort_mode": "mergepass"})]
    for rep in range(args.reps):
        for name, extra in (variants if rep % 2 == 0 else list(reversed(variants))):
            measure.apply_settings(conn, dict(settings, **extra))
            r = measure.run_once(conn, sortbench.QUERY)
            summary = r.pop("plan")
            braid = summary["braid"][0] if summary["braid"] else {}
            r.update({"variant": name, "rep": rep, "ran": braid.get("Sort Method", "postgres"),
                      "device_bytes_written": measure.device_bytes_written(summary)})
            result["runs"].append(r)
            progress.step(f"{name} rep {rep + 1}: {r['ms']:.0f} ms, ran {r['ran']}, temp "
                          f"{r['temp_bytes'] / 1e6:.0f} MB, device "
                          f"{r['device_bytes_written'] / 1e6:.0f} MB")
    measure.apply_settings(conn, {"braidsort.enable": "on"})
