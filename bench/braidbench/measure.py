"""Running one query in one configuration, and reading what its plan did."""
import json
import time


class _Sink:
    """A file-like object that discards what COPY writes to it."""

    def __init__(self):
        self.bytes = 0

    def write(self, data):
        self.bytes += len(data)


# The settings a result records: what shapes the plans and the sorts.
SETTINGS_QUERY = """
SELECT name, current_setting(name) FROM pg_settings
WHERE name IN ('shared_buffers', 'work_mem', 'max_parallel_workers_per_gather',
               'max_worker_processes', 'parallel_leader_participation', 'jit',
               'hash_mem_multiplier', 'temp_tablespaces', 'shared_preload_libraries',
               'lc_collate', 'random_page_cost', 'effective_cache_size')
   OR (name LIKE 'braidsort.%' AND source <> 'default')
ORDER BY 1"""

VARIANTS = {
    # PostgreSQL's own plan
    "pg": {"braidsort.enable": "off", "braidsort.force": "off"},
    # braidsort as shipped: its cost model decides
    "braid": {"braidsort.enable": "on", "braidsort.force": "off"},
    # braidsort wherever eligible (what it would do if it always ran)
    "forced": {"braidsort.enable": "on", "braidsort.force": "on"},
}


def apply_settings(cur, settings):
    for k, v in settings.items():
        cur.execute("SELECT set_config(%s, %s, false)", (k, str(v)))


def walk(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from walk(child)


def plan_summary(plan):
    """What the sorts of a plan did: BraidSort nodes and PostgreSQL Sorts."""
    out = {"braid": [], "sorts": [], "workers_planned": 0}
    for node in walk(plan):
        if node.get("Node Type") == "Custom Scan" and node.get("Custom Plan Provider") == "BraidSort":
            keep = ("Sort Method", "Gather Source", "Rows Sorted", "Runs", "Merge Passes",
                    "Device Bytes Written", "Device Bytes Read", "Sort Threads",
                    "Gather Batches", "Total Cost", "Parent Relationship")
            out["braid"].append({k: node[k] for k in keep if k in node})
        elif node.get("Node Type") in ("Sort", "Incremental Sort"):
            keep = ("Node Type", "Sort Method", "Sort Space Used", "Sort Space Type", "Total Cost")
            out["sorts"].append({k: node[k] for k in keep if k in node})
        if node.get("Node Type") in ("Gather", "Gather Merge"):
            out["workers_planned"] += node.get("Workers Planned", 0)
    return out


def run_once(conn, sql, how):
    """Run sql once; returns (milliseconds, plan summary or None).

    "explain": EXPLAIN (ANALYZE, TIMING OFF) -- rows are discarded in the
    server, the time is the server's Execution Time.  "copy": the client
    reads COPY ... TO STDOUT and discards it; the time is the client's.
    """
    with conn.cursor() as cur:
        if how == "copy":
            sink = _Sink()
            t0 = time.perf_counter()
            cur.copy_expert(sql, sink)
            ms = (time.perf_counter() - t0) * 1000.0
            inner = sql[sql.index("(") + 1:sql.rindex(")")]
            cur.execute("EXPLAIN (FORMAT JSON) " + inner)
            plan = cur.fetchone()[0][0]["Plan"]
            return ms, plan_summary(plan)
        cur.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql)
        doc = cur.fetchone()[0][0]
        return doc["Execution Time"], plan_summary(doc["Plan"])


def capture(conn, sql, how):
    """One EXPLAIN (ANALYZE, BUFFERS) with timing, kept whole: what each
    phase of a plan took (braidsort prints its phase times only with
    TIMING on, which also costs a little)."""
    inner = sql[sql.index("(") + 1:sql.rindex(")")] if how == "copy" else sql
    with conn.cursor() as cur:
        cur.execute("EXPLAIN (ANALYZE, BUFFERS, VERBOSE, FORMAT JSON) " + inner)
        return cur.fetchone()[0][0]


def decline_reasons(conn, sql, how):
    """braidsort's DEBUG1 messages while planning sql (why it declined)."""
    inner = sql[sql.index("(") + 1:sql.rindex(")")] if how == "copy" else sql
    del conn.notices[:]
    with conn.cursor() as cur:
        cur.execute("SET client_min_messages = debug1")
        cur.execute("EXPLAIN (FORMAT JSON) " + inner)
        cur.execute("RESET client_min_messages")
    return [n.strip() for n in conn.notices if "braidsort" in n]


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0
