"""BraidJoin against PostgreSQL's hash join, the paper's shape (Viglas,
VLDB 2014): an inner table of N rows joined to an outer table of 10N rows
in which each inner row matches 10 outer rows, rows of about 80 bytes:

    SELECT count(*), sum(length(o.pad)), sum(length(i.pad))
    FROM jouter o JOIN jinner i ON o.fk = i.id

With --aggregate octet_length the sums are of octet_length() instead:
the rows of both sides are still fetched and their pad read, but not
counted character by character (length() of 20M 64-character strings in
a UTF8 database is about a third of BraidJoin's time at 1M x 10M, the
same in both joins, and so draws their ratio towards 1).

Part 1 (batches): at work_mem values that make PostgreSQL's hash join use
about 4, 16 and 64 batches (calibrated by EXPLAIN ANALYZE of PostgreSQL's
join: its planned batches at work_mem 64kB, scaled, checked at the scaled
work_mem and scaled again where they are off by more than 2x), PostgreSQL and
BraidJoin (join_mode auto, forced: whether the cost model alone would take
the join is recorded as auto_takes) alternate, --reps times each: time (the
plain query, as the client sees it), PostgreSQL's temporary bytes written and
read (EXPLAIN BUFFERS' temp blocks) against BraidJoin's device bytes, the
batches PostgreSQL used and the partitions and mode BraidJoin used.

The time is the plain query's, what a DBA waits for, not EXPLAIN
ANALYZE's Execution Time.  The plan's figures come from one EXPLAIN
(ANALYZE, BUFFERS) per configuration, run before its first timed run and
not timed; braidsort.stats' join counters, read around each timed run,
check that it ran the join those figures describe (timed_ran).  The timed
query is never prepared: psycopg prepares a statement run five times, and
a prepared statement without parameters keeps the plan it was prepared
with whatever work_mem and braidsort.join_mode say later.

Part 2 (modes): at the 16-batch work_mem, every join mode and auto on
devices whose writes cost more and more (braidsort.emulate_write_ns;
reads 10 ns a line), as for the write-limited sorts, --mode-reps times each
in a new shuffled order every time (the report takes medians: single runs
vary by 20% on a noisy machine, more than the modes differ).

jinner is stored in the order of its key, as generate_series makes it (a
serial primary key): BraidJoin then partitions by ranges of the key, so
that a round's inner rows lie in a part of the table.  --inner-order
random stores it shuffled, where BraidJoin partitions by hash.

Parallel query is off by default, so that the targets compare the two
joins in one process each.  With --parallel on (PostgreSQL's default of
2 workers a Gather), PostgreSQL builds a Parallel Hash (one table shared
by the processes, at the same work_mem values, calibrated without
parallel query: its batches are then fewer, as its processes' memory is
combined), and BraidJoin replaces it with its own table in each process,
each reading the inner table whole.
"""
import random
import time

from braidbench import measure
from braidbench.progress import Progress
from braidbench.workloads import common, sortbench

DEFAULTS = {"inner_rows": 1000000, "batches": "4,16,64", "write_ns": "0,600,2400", "reps": 3,
            "mode_reps": 3}
QUICK = {"inner_rows": 20000, "batches": "4,16", "write_ns": "0,2400", "reps": 1, "mode_reps": 1}
MODES = ("grace", "hybrid", "segmented", "lazy", "auto")
READ_NS = 10
AGGREGATES = ("length", "octet_length")


def query(aggregate="length"):
    """The join query, its sums of the pads taken with aggregate."""
    return (f"SELECT count(*), sum({aggregate}(o.pad)), sum({aggregate}(i.pad)) "
            "FROM jouter o JOIN jinner i ON o.fk = i.id")


QUERY = query()


def add_arguments(p):
    p.add_argument("--inner-rows", type=int, default=None,
                   help="rows of the inner table; the outer has 10 times as many [1000000]")
    p.add_argument("--batches", default=None, help="PostgreSQL batch counts to aim at [4,16,64]")
    p.add_argument("--write-ns", default=None,
                   help="braidsort.emulate_write_ns values of the mode sweep [0,600,2400]")
    p.add_argument("--reps", type=int, default=None, help="runs per variant and point [3]")
    p.add_argument("--mode-reps", type=int, default=None,
                   help="runs per mode and write latency in the mode sweep [3]")
    p.add_argument("--no-modes", action="store_true", help="skip the mode sweep")
    p.add_argument("--table-tablespace", default="dax")
    p.add_argument("--aggregate", choices=AGGREGATES, default="length",
                   help="what the query sums of each side's pad: length (characters, the "
                        "reference) or octet_length (bytes: less work beside the join) [length]")
    p.add_argument("--inner-order", choices=("key", "random"), default="key",
                   help="how jinner is stored: in the order of its key, as generated (a "
                        "serial primary key; BraidJoin then partitions by key range), or "
                        "shuffled (partitions by hash) [key]")
    p.add_argument("--parallel", choices=("off", "on"), default="off",
                   help="parallel query for both joins: off, or on (2 workers, PostgreSQL's "
                        "default: its Parallel Hash against BraidJoin under the Gather) [off]")
    p.add_argument("--parallel-join", choices=("shared", "each"), default="shared",
                   help="braidsort.parallel_join for BraidJoin with parallel query on: its "
                        "processes partition the inner table together (shared), or each "
                        "reads it whole (each, the plan before 0.8) [shared]")
    p.add_argument("--shared-buffers", default=None,
                   help="shared_buffers, e.g. 128MB (PostgreSQL's default) [sized to hold "
                        "both tables]")


def resolve(args):
    d = dict(DEFAULTS, **(QUICK if args.quick else {}))
    for k in ("inner_rows", "batches", "write_ns", "reps", "mode_reps"):
        if getattr(args, k) is None:
            setattr(args, k, d[k])
    args.batch_list = [int(b) for b in common.split(args.batches)]
    args.write_list = [] if args.no_modes else [int(w) for w in common.split(args.write_ns)]
    args.size = sortbench.sizing(args.inner_rows * 11, [72], args.table_tablespace)
    args.query = query(args.aggregate)


def cluster_spec(args):
    resolve(args)
    return {"tmpfs": args.size["tmpfs"], "locale": None}


def steps(args):
    resolve(args)
    return 1 + len(args.batch_list) * 2 * args.reps + \
        len(args.write_list) * len(MODES) * args.mode_reps


def load(conn, n, tablespace, log, inner_order="key"):
    want = f"inner={n} tablespace={tablespace}" + \
        ("" if inner_order == "key" else f" inner_order={inner_order}")
    have = conn.execute("SELECT obj_description(to_regclass('jouter'), 'pg_class')").fetchone()[0]
    t0 = time.time()
    if have != want:
        log(f"loading jinner ({n} rows) and jouter ({10 * n} rows), about 80-byte rows")
        for stmt in (
                "DROP TABLE IF EXISTS jinner, jouter",
                f"CREATE TABLE jinner (id int, pad text) TABLESPACE {tablespace}",
                f"CREATE TABLE jouter (id int, fk int, pad text) TABLESPACE {tablespace}",
                f"INSERT INTO jinner SELECT g, repeat(md5(g::text), 2) FROM generate_series(1, {n}) g"
                + (" ORDER BY random()" if inner_order == "random" else ""),
                # each inner row matches 10 outer rows, in no particular order
                f"INSERT INTO jouter SELECT g, (g::bigint * 7919 % {n}) + 1, "
                f"repeat(md5((g + 1)::text), 2) FROM generate_series(1, {10 * n}) g",
                "VACUUM ANALYZE jinner",
                "VACUUM ANALYZE jouter",
                f"COMMENT ON TABLE jouter IS '{want}'"):
            conn.execute(stmt)
    sizes = conn.execute("SELECT pg_relation_size('jinner'), pg_relation_size('jouter')").fetchone()
    return {"inner_rows": n, "outer_rows": 10 * n, "inner_bytes": sizes[0],
            "outer_bytes": sizes[1], "load_s": round(time.time() - t0, 1)}


def _base(parallel="off", parallel_join="shared"):
    return {"max_parallel_workers_per_gather": "2" if parallel == "on" else "0",
            "braidsort.parallel_join": parallel_join,
            "braidsort.spill_tablespace": "dax",
            "braidsort.emulate_read_ns": "0", "braidsort.emulate_write_ns": "0",
            "braidsort.write_intensity": "-1", "braidsort.force": "off"}


def _nodes(doc):
    hj = braid = None
    for node in measure.walk(doc["Plan"]):
        if node.get("Node Type") == "Hash Join" and hj is None:
            hj = node
        if node.get("Custom Plan Provider") == "BraidJoin":
            braid = node
    return hj, braid


def _hash_node(hj):
    for c in hj.get("Plans", []):
        if c.get("Node Type") == "Hash":
            return c
    return {}


def _block_size(conn):
    """The server's block size: EXPLAIN BUFFERS counts temporary blocks."""
    return int(conn.execute("SELECT current_setting('block_size')", prepare=False).fetchone()[0])


def _braid_sum(braid, field):
    """A BraidJoin figure summed over both inputs, the node's own (the
    leader's) and each parallel worker's ("Workers")."""
    total = 0
    for figures in [braid] + braid.get("Workers", []):
        total += figures.get("Outer " + field, 0) + figures.get("Inner " + field, 0)
    return total


def explain_facts(doc, block_size):
    """What one EXPLAIN (ANALYZE, BUFFERS) says of a run: which join ran,
    its batches or partitions and mode, and the bytes it wrote and read."""
    hj, braid = _nodes(doc)
    r = {}
    if braid is not None:
        # under a Gather, the node's own figures are the leader's, and each
        # worker's follow under "Workers"; its spill files also count as
        # the node's temporary blocks, which EXPLAIN BUFFERS sums over the
        # processes (in whole blocks: each process carries its remainder
        # over, so the two agree within a block a process).  The larger is
        # taken: a worker whose report found no room (instr.c) is missing
        # from the first, never from the second.
        temp_written = braid.get("Temp Written Blocks", 0) * block_size
        temp_read = braid.get("Temp Read Blocks", 0) * block_size
        r.update({"ran": "braidjoin", "mode": braid.get("Join Mode"),
                  "partitions": braid.get("Partitions"), "rounds": braid.get("Rounds"),
                  "partitioned_by": braid.get("Partitioned By", "hash"),
                  "bytes_written": max(temp_written, _braid_sum(braid, "Device Bytes Written")),
                  "bytes_read": max(temp_read, _braid_sum(braid, "Device Bytes Read")),
                  "temp_written": temp_written,
                  "lines_written": _braid_sum(braid, "Device Lines Written"),
                  "rescans": braid.get("Outer Rescans", 0) + braid.get("Inner Rescans", 0),
                  "mat_outer": braid.get("Outer Materialized Partitions", 0),
                  "mat_inner": braid.get("Inner Materialized Partitions", 0)})
    elif hj is not None:
        h = _hash_node(hj)
        r.update({"ran": "postgres", "batches": h.get("Hash Batches"),
                  "batches_planned": h.get("Original Hash Batches"),
                  "bytes_written": doc["Plan"].get("Temp Written Blocks", 0) * block_size,
                  "bytes_read": doc["Plan"].get("Temp Read Blocks", 0) * block_size})
    else:
        r["ran"] = "other"
    return r


def run_one(conn, settings, facts=None, sql=QUERY):
    """One timed run of the plain query under settings, with the plan's
    figures from an EXPLAIN (ANALYZE, BUFFERS) of the same settings, run
    (untimed) the first time they are seen; facts caches them by
    settings."""
    measure.apply_settings(conn, settings)
    key = tuple(sorted(settings.items()))
    if facts is None or key not in facts:
        got = explain_facts(measure.explain(conn, sql, buffers=True), _block_size(conn))
        if facts is None:
            facts = {}
        facts[key] = got
    before = _join_counts(conn)
    t0 = time.perf_counter()
    # never prepared: a prepared plan would not follow the settings
    conn.execute(sql, prepare=False).fetchall()
    ms = (time.perf_counter() - t0) * 1000.0
    ran = [c[len("joins_"):] for c, n in _join_counts(conn).items() if n > before.get(c, 0)]
    r = dict(facts[key])
    r.update({"ms": ms, "load1": None, "timed_ran": ran[0] if len(ran) == 1 else
              ("postgres" if not ran else "/".join(ran))})
    return r


def _join_counts(conn):
    """braidsort.stats' finished joins by mode (joins_grace, ...)."""
    return dict(conn.execute("SELECT counter, value FROM braidsort.stats "
                             "WHERE scope = 'global' AND counter LIKE 'joins_%'", prepare=False).fetchall())


def calibrate(conn, progress, sql=QUERY):
    """PostgreSQL's batches at work_mem 64kB: the work_mem for a batch count
    is scaled from it (the batch count is about inner bytes / hash_mem)."""
    measure.apply_settings(conn, dict(_base(), work_mem="64kB", **{"braidsort.join_mode": "off"}))
    t0 = time.perf_counter()
    r = explain_facts(measure.explain(conn, sql, buffers=True), _block_size(conn))
    r["ms"] = (time.perf_counter() - t0) * 1000.0
    b0 = r.get("batches_planned") or r.get("batches") or 1
    progress.step(f"calibration: PostgreSQL plans {b0} batches at work_mem 64kB "
                  f"({r['ms']:.0f} ms)")
    return b0


def work_mem_for(conn, progress, target, b0, sql=QUERY):
    """(work_mem in kB, PostgreSQL's planned batches there): the work_mem at
    which PostgreSQL plans about `target` batches, scaled from the batches
    at 64kB, then checked and scaled again (at most three checks) until the
    planned batches are within a factor of two.  One scaling is not enough
    on 18, which at small work_mem plans fewer batches than the inner side
    needs (it counts the batch files' buffers against hash memory), so that
    the batches at 64kB understate the others.  The batches returned are
    those of the last check; the caller warns when they are still off."""
    wm_kb = max(64, int(64 * b0 / target))
    b = None
    for _ in range(3):
        measure.apply_settings(conn, dict(_base(), work_mem=f"{wm_kb}kB",
                                          **{"braidsort.join_mode": "off"}))
        r = explain_facts(measure.explain(conn, sql, buffers=True), _block_size(conn))
        if r.get("ran") != "postgres":
            raise RuntimeError(f"calibration: no hash join in PostgreSQL's plan at "
                               f"work_mem {wm_kb}kB")
        b = r.get("batches_planned") or r.get("batches") or 1
        if target / 2 <= b <= target * 2:
            break
        scaled = max(64, int(wm_kb * b / target))
        if scaled == wm_kb:
            break
        progress.log(f"calibration: {b} batches at work_mem {wm_kb}kB, "
                     f"{target} wanted: scaled again")
        wm_kb = scaled
    return wm_kb, b


def run(args, repo, cl, progress=None):
    resolve(args)
    progress = progress or Progress(steps(args))
    t0 = time.time()
    result = common.new_result("join", args, repo, cl)
    result.update({"reps": args.reps, "mode_reps": args.mode_reps, "read_ns": READ_NS,
                   "query": args.query, "aggregate": args.aggregate, "parallel": args.parallel,
                   "parallel_join": args.parallel_join,
                   "sizing": args.size["note"], "runs": [], "modes": []})
    if args.shared_buffers:
        result["sizing"] = f"shared_buffers {args.shared_buffers}, as asked"
    cl.set_conf(shared_buffers=args.shared_buffers or args.size["shared_buffers"])
    cl.restart()
    with cl.session() as conn:
        result["data"] = load(conn, args.inner_rows, args.table_tablespace, progress.log,
                              args.inner_order)
        result["inner_order"] = args.inner_order
        conn.execute("SELECT count(*) FROM jinner")
        conn.execute("SELECT count(*) FROM jouter")
        result["settings"] = common.server_settings(conn)
        b0 = calibrate(conn, progress, args.query)
        result["calibration_batches_64kb"] = b0
        result["timing"] = "plain query, client-side"
        facts = {}
        wm16 = None
        for target in args.batch_list:
            wm_kb, planned = work_mem_for(conn, progress, target, b0, args.query)
            if not target / 2 <= planned <= target * 2:
                result["warnings"].append(
                    f"{target} batches: PostgreSQL plans {planned} at the work_mem the "
                    f"calibration ended at ({wm_kb} kB)")
            if target == 16 or wm16 is None:
                wm16 = wm_kb
            # the cost model's own choice (would auto take the join?), then
            # BraidJoin forced, so that it is measured either way
            measure.apply_settings(conn, dict(_base(args.parallel, args.parallel_join), work_mem=f"{wm_kb}kB",
                                              **{"braidsort.join_mode": "auto"}))
            plan = measure.explain(conn, args.query, analyze=False)
            auto_takes = _nodes(plan)[1] is not None
            variants = [("pg", {"braidsort.join_mode": "off"}),
                        ("braid", {"braidsort.join_mode": "auto", "braidsort.force": "on"})]
            for rep in range(args.reps):
                for name, extra in (variants if rep % 2 == 0 else variants[::-1]):
                    r = run_one(conn, dict(_base(args.parallel, args.parallel_join), work_mem=f"{wm_kb}kB", **extra),
                                facts, args.query)
                    r.update({"variant": name, "target_batches": target, "work_mem_kb": wm_kb,
                              "rep": rep, "auto_takes": auto_takes})
                    result["runs"].append(r)
                    if r["timed_ran"] != (r.get("mode") if r["ran"] == "braidjoin" else "postgres"):
                        result["warnings"].append(f"{target} batches {name} rep {rep + 1}: the "
                                                  f"timed run ran {r['timed_ran']}, its EXPLAIN "
                                                  f"{r.get('mode') or r['ran']}")
                    progress.step(f"{target} batches ({wm_kb} kB) {name} rep {rep + 1}: "
                                  f"{r['ms']:.0f} ms, ran {r['ran']} "
                                  f"{r.get('mode') or r.get('batches')}, written "
                                  f"{r['bytes_written'] / 1e6:.1f} MB")
                    if name == "braid" and r["ran"] != "braidjoin":
                        result["warnings"].append(f"{target} batches: braidsort declined the join")
        rng = random.Random(20261125)
        for wns, rep in [(w, r) for w in args.write_list for r in range(args.mode_reps)]:
            order = list(MODES)
            rng.shuffle(order)
            for mode in order:
                settings = dict(_base(args.parallel, args.parallel_join), work_mem=f"{wm16}kB",
                                **{"braidsort.join_mode": mode, "braidsort.force": "on",
                                   "braidsort.emulate_read_ns": str(READ_NS),
                                   "braidsort.emulate_write_ns": str(wns)})
                r = run_one(conn, settings, facts, args.query)
                r.update({"config": mode, "write_ns": wns, "work_mem_kb": wm16, "rep": rep})
                result["modes"].append(r)
                if r["timed_ran"] != r.get("mode"):
                    result["warnings"].append(f"modes: {mode} at {wns} ns: the timed run ran "
                                              f"{r['timed_ran']}, its EXPLAIN {r.get('mode')}")
                progress.step(f"modes: write {wns} ns {mode} rep {rep + 1}: {r['ms']:.0f} ms, ran "
                              f"{r.get('mode')}, {r.get('lines_written', 0)} lines written, "
                              f"{r.get('rescans', 0)} rescans")
                if r["ran"] != "braidjoin" or (mode != "auto" and r.get("mode") != mode):
                    result["warnings"].append(f"modes: {mode} at {wns} ns ran {r.get('mode')}")
        measure.apply_settings(conn, _base())
    return common.finish(result, t0)
