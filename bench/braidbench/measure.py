"""Running one query in one configuration, and reading what its plan did.

Everything is read from EXPLAIN (ANALYZE, FORMAT JSON): PostgreSQL's Sort
reports "Sort Method", "Sort Space Used" and "Sort Space Type";
braidsort's "Custom Scan (BraidSort)" reports "Sort Method", "Gather
Source", "Rows Sorted", "Runs", "Merge Passes", "Device Bytes Written",
"Device Bytes Read", "Sort Threads" and, with TIMING on, "Build Time",
"Sort Time", "Merge Time" and "Gather Time"; under a Gather each parallel
worker's figures are in the node's "Workers" list.
"""
import os
import statistics
import time


# The settings a result records: what shapes the plans and the sorts.
SETTINGS_QUERY = """
SELECT name, current_setting(name) FROM pg_settings
WHERE name IN ('shared_buffers', 'work_mem', 'max_parallel_workers_per_gather',
               'max_worker_processes', 'parallel_leader_participation', 'jit',
               'hash_mem_multiplier', 'temp_tablespaces', 'shared_preload_libraries',
               'lc_collate', 'random_page_cost', 'effective_cache_size', 'block_size',
               'fsync', 'wal_level', 'huge_pages', 'shared_memory_size_in_huge_pages')
   OR (name LIKE 'braidsort.%' AND source <> 'default')
   OR name = 'braidsort.advise_huge_pages'
ORDER BY 1"""

VARIANTS = {
    # PostgreSQL's own plan
    "pg": {"braidsort.enable": "off", "braidsort.force": "off"},
    # braidsort as shipped: its cost model decides
    "braid": {"braidsort.enable": "on", "braidsort.force": "off"},
    # braidsort wherever eligible (what it would do if it always ran)
    "forced": {"braidsort.enable": "on", "braidsort.force": "on"},
    # forced, its late gather reading a table larger than half of shared
    # buffers through a read stream (PostgreSQL 17 and later), or not
    "stream": {"braidsort.enable": "on", "braidsort.force": "on",
               "braidsort.gather_read_stream": "on"},
    "nostream": {"braidsort.enable": "on", "braidsort.force": "on",
                 "braidsort.gather_read_stream": "off"},
}

VARIANT_NAMES = {
    "pg": "PostgreSQL (braidsort.enable = off)",
    "braid": "braidsort, its cost model deciding (force = off)",
    "forced": "braidsort forced (force = on)",
    "stream": "braidsort forced, the gather through a read stream",
    "nostream": "braidsort forced, the gather one block at a time",
}

PHASES = ("Build Time", "Sort Time", "Merge Time", "Gather Time")

# braidsort's figures that add up over the processes of a parallel sort
_SUMMED = ("Rows Sorted", "Runs", "Device Bytes Written", "Device Bytes Read",
           "Device Lines Written", "Device Lines Read", "Gather Batches")


class PlanError(Exception):
    """A plan is not what the benchmark needs (e.g. no BraidSort where
    braidsort was forced)."""


def apply_settings(conn, settings):
    for k, v in settings.items():
        conn.execute("SELECT set_config(%s, %s, false)", (k, str(v)))


def walk(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from walk(child)


def is_braid(node):
    return node.get("Node Type") == "Custom Scan" and node.get("Custom Plan Provider") == "BraidSort"


def braid_processes(node):
    """The figures of each process that ran a BraidSort node: the leader's
    (the node's own, when it sorted) and each parallel worker's."""
    procs = []
    if "Rows Sorted" in node:
        procs.append(dict(node, Worker=None))
    for w in node.get("Workers", []):
        if "Rows Sorted" in w:
            procs.append(dict(w, Worker=w.get("Worker Number")))
    return procs


def braid_figures(node):
    """One BraidSort node's figures, over all processes: counts and bytes
    summed, merge passes the most any process made, the phase times of the
    process whose phases took longest (it set the node's time)."""
    procs = braid_processes(node)
    out = {"Sort Method": node.get("Sort Method"), "Gather Source": node.get("Gather Source"),
           "Processes": len(procs)}
    methods = sorted({p.get("Sort Method") for p in procs if p.get("Sort Method")})
    if methods:
        out["Sort Method"] = "/".join(methods)
    for k in _SUMMED:
        vals = [p[k] for p in procs if k in p]
        if vals:
            out[k] = sum(vals)
    for k in ("Merge Passes", "Sort Threads", "IndexMap Memory", "Gather Memory", "Key Prefix"):
        vals = [p[k] for p in procs if k in p]
        if vals:
            out[k] = max(vals)
    timed = [p for p in procs if all(ph in p for ph in PHASES)]
    if timed:
        slowest = max(timed, key=lambda p: sum(p[ph] for ph in PHASES))
        for ph in PHASES:
            out[ph] = slowest[ph]
    for k in ("Total Cost", "Parent Relationship", "Sorted Refs"):
        if k in node:
            out[k] = node[k]
    # an adaptive sort: where it switched, or that PostgreSQL's sort ran
    for k in ("Switched At Rows", "Switch Declined At Rows"):
        vals = [x[k] for x in [node] + node.get("Workers", []) if k in x]
        if vals:
            out[k] = sum(vals)
    return out


def sort_figures(node):
    """A PostgreSQL Sort node's method and space, the workers' included."""
    out = {k: node[k] for k in ("Node Type", "Sort Method", "Sort Space Used",
                                "Sort Space Type", "Total Cost") if k in node}
    workers = [w for w in node.get("Workers", []) if "Sort Method" in w]
    if workers:
        out["Workers"] = [{k: w[k] for k in ("Worker Number", "Sort Method", "Sort Space Used",
                                              "Sort Space Type") if k in w} for w in workers]
        out["Disk kB"] = sum(w.get("Sort Space Used", 0) for w in workers
                             if w.get("Sort Space Type") == "Disk")
    else:
        out["Disk kB"] = 0
    if node.get("Sort Space Type") == "Disk":
        out["Disk kB"] += node.get("Sort Space Used", 0)
    return out


def plan_summary(plan):
    """What the sorts of a plan did: BraidSort nodes and PostgreSQL Sorts."""
    out = {"braid": [], "sorts": [], "workers_planned": 0}
    for node in walk(plan):
        if is_braid(node):
            out["braid"].append(braid_figures(node))
        elif node.get("Node Type") in ("Sort", "Incremental Sort"):
            out["sorts"].append(sort_figures(node))
        if node.get("Node Type") in ("Gather", "Gather Merge"):
            out["workers_planned"] += node.get("Workers Planned", 0)
    return out


def device_bytes_written(summary):
    return sum(b.get("Device Bytes Written", 0) for b in summary["braid"])


def check_plan(variant, summary, what=""):
    """braidsort forced must show a BraidSort node; braidsort off must show
    PostgreSQL's Sort and no BraidSort."""
    if variant in ("forced", "stream", "nostream") and not summary["braid"]:
        raise PlanError(f"{what}: braidsort forced, but the plan has no Custom Scan (BraidSort)")
    if variant == "pg":
        if summary["braid"]:
            raise PlanError(f"{what}: braidsort.enable = off, but the plan has a BraidSort node")
        if not summary["sorts"]:
            raise PlanError(f"{what}: braidsort.enable = off, but the plan has no Sort node")


def temp_stats(conn):
    """pg_stat_database's temp_bytes and temp_files of this database, as of
    now: the session's own pending counts are flushed first (they are sent
    when the backend goes idle after a statement that asked for it)."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.execute("SELECT pg_stat_clear_snapshot()")
    row = conn.execute("SELECT temp_bytes, temp_files FROM pg_stat_database "
                       "WHERE datname = current_database()").fetchone()
    return int(row[0]), int(row[1])


def explain(conn, sql, analyze=True, timing=False, buffers=False, verbose=False, costs=True):
    opts = ["FORMAT JSON"]
    if analyze:
        opts.append("ANALYZE")
        opts.append(f"TIMING {'ON' if timing else 'OFF'}")
    if buffers:
        opts.append("BUFFERS")
    if verbose:
        opts.append("VERBOSE")
    if not costs:
        opts.append("COSTS OFF")
    return conn.execute(f"EXPLAIN ({', '.join(opts)}) {sql}").fetchone()[0][0]


def inner_query(sql, how):
    return sql[sql.index("(") + 1:sql.rindex(")")] if how == "copy" else sql


def run_once(conn, sql, how="explain", timing=False):
    """Run sql once; returns a dict: ms, plan (summary), temp_bytes and
    temp_files (the pg_stat_database deltas of the run), load1, and with
    timing the whole EXPLAIN document as "explain".

    "explain": EXPLAIN (ANALYZE, TIMING OFF) -- rows are discarded in the
    server, the time is the server's Execution Time.  "copy": the client
    reads COPY ... TO STDOUT and discards it; the time is the client's.
    """
    b0, f0 = temp_stats(conn)
    out = {}
    if how == "copy":
        t0 = time.perf_counter()
        n = 0
        with conn.cursor() as cur:
            with cur.copy(sql) as cp:
                for block in cp:
                    n += len(block)
        out["ms"] = (time.perf_counter() - t0) * 1000.0
        out["copy_bytes"] = n
        doc = explain(conn, inner_query(sql, how), analyze=False)
    else:
        doc = explain(conn, sql, timing=timing)
        out["ms"] = doc["Execution Time"]
        if timing:
            out["explain"] = doc
    b1, f1 = temp_stats(conn)
    out["plan"] = plan_summary(doc["Plan"])
    out["temp_bytes"] = b1 - b0
    out["temp_files"] = f1 - f0
    out["load1"] = round(os.getloadavg()[0], 2)
    return out


def capture(conn, sql, how="explain"):
    """One EXPLAIN (ANALYZE, BUFFERS, VERBOSE) with timing, kept whole: what
    each phase of a plan took (braidsort prints its phase times only with
    TIMING on, which also costs a little), and the run's temp_bytes."""
    b0, f0 = temp_stats(conn)
    doc = explain(conn, inner_query(sql, how), timing=True, buffers=True, verbose=True)
    b1, f1 = temp_stats(conn)
    return doc, b1 - b0, f1 - f0


class NoticeLog:
    """Collects the server's notices of a connection (DEBUG1 messages)."""

    def __init__(self, conn):
        self.messages = []
        conn.add_notice_handler(self._add)

    def _add(self, diag):
        self.messages.append(f"{diag.severity}:  {diag.message_primary}")


def decline_reasons(conn, notices, sql, how):
    """braidsort's DEBUG1 messages while planning sql (why it declined)."""
    del notices.messages[:]
    conn.execute("SET client_min_messages = debug1")
    try:
        explain(conn, inner_query(sql, how), analyze=False)
    finally:
        conn.execute("RESET client_min_messages")
    return [m.strip() for m in notices.messages if "braidsort" in m]


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    return a / b if a is not None and b else None
