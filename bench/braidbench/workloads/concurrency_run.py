"""Concurrency: pgbench clients running the spilling sorts of
bench/concurrency.sql at once, braidsort.io_policy alternating between
interference_aware and overlap (server-wide: ALTER SYSTEM and a reload),
device emulation on.

Every client session is set by PGOPTIONS: braidsort forced, a small
braidsort.work_mem so that each sort spills to tablespace dax, parallel
query off, braidsort.sort_mode = mergepass (the sorts 0.3 ran: every entry
written once per pass), braidsort.emulate_write_ns / emulate_read_ns (a
delay per 64-byte line written / read, reserved on the device's emulated
clock, which all sessions share) and emulate_interference_ns (a delay per
line read while the device is being written: without it a tmpfs has no
interference for the policies to differ on).  Two of the script's
statements are checked in the server: bench_check(NAME) runs NAME's query
and compares its row count, the sum of its row hashes and the sum of its
row hashes weighted by position with those computed with braidsort off
before the runs; a mismatch raises, and pgbench counts the client as
aborted.  Before each run braidsort.stats_reset(); after it, pgbench's tps,
latency and failures, braidsort.scheduler's grants, waits, phase switches
and overlaps for dax, its emulated clock's busy and queued time and lines
read under interference, and dax's device traffic from braidsort.stats.
"""
import os
import re
import subprocess
import time

from braidbench import cluster as clustermod
from braidbench import measure
from braidbench.progress import Progress
from braidbench.workloads import common, sortbench

MB = 1024 * 1024
DEFAULTS = {"rows": 1000000, "rows2": None, "clients": 4, "seconds": 30, "reps": 3}
QUICK = {"rows": 300000, "rows2": 200000, "clients": 2, "seconds": 5, "reps": 1}

SETUP_SQL = [
    """CREATE TABLE bench_expect (name text PRIMARY KEY, query text NOT NULL,
                                  n bigint, hsum numeric, psum numeric)""",
    # an order-sensitive checksum of a query returning (k bytea, v bytea): row
    # count, sum of row hashes, and sum of row hashes weighted by position
    # (row_number() OVER () numbers rows in the order the sort emits them)
    """CREATE FUNCTION bench_checksum_sql(q text) RETURNS text
LANGUAGE sql IMMUTABLE AS $f$
SELECT format($x$SELECT count(*) AS n, coalesce(sum(h), 0) AS hsum, coalesce(sum(rn * (h %% 1000003)), 0) AS psum
FROM (SELECT row_number() OVER () AS rn, hashtextextended(encode(k, 'hex') || encode(v, 'hex'), 0) AS h
      FROM (%s) q) s$x$, q)
$f$""",
    """CREATE FUNCTION bench_checksum(q text, OUT n bigint, OUT hsum numeric, OUT psum numeric)
LANGUAGE plpgsql AS $f$
BEGIN
	EXECUTE bench_checksum_sql(q) INTO n, hsum, psum;
END
$f$""",
    # raises (so that pgbench aborts the client) unless the query's result has
    # the expected checksums; returns the row count
    """CREATE FUNCTION bench_check(which text) RETURNS bigint
LANGUAGE plpgsql AS $f$
DECLARE
	e bench_expect;
	got record;
BEGIN
	SELECT * INTO STRICT e FROM bench_expect WHERE name = which;
	SELECT * INTO got FROM bench_checksum(e.query);
	IF got.n <> e.n OR got.hsum <> e.hsum OR got.psum <> e.psum THEN
		RAISE EXCEPTION 'bench_check(%): wrong result: % rows, hash sum %, position-weighted sum %; expected % / % / %',
			which, got.n, got.hsum, got.psum, e.n, e.hsum, e.psum
			USING DETAIL = 'query: ' || e.query;
	END IF;
	RETURN got.n;
END
$f$""",
    """INSERT INTO bench_expect (name, query) VALUES
  ('tid_small', $q$SELECT k, v FROM sortbench2 ORDER BY k$q$),
  ('vlog_small', $q$SELECT k, v FROM (SELECT k, v FROM sortbench2 UNION ALL SELECT k, v FROM sortbench WHERE k < '\\x20'::bytea) u ORDER BY k$q$)""",
]


def add_arguments(p):
    p.add_argument("--rows", type=int, default=None, help="rows in sortbench [1000000]")
    p.add_argument("--rows2", type=int, default=None, help="rows in sortbench2 [rows / 4]")
    p.add_argument("--payload", type=int, default=90)
    p.add_argument("--clients", type=int, default=None, help="pgbench -c and -j [4]")
    p.add_argument("--seconds", type=int, default=None, help="pgbench -T [30]")
    p.add_argument("--reps", type=int, default=None, help="pgbench runs per policy [3]")
    p.add_argument("--policies", default="interference_aware,overlap")
    p.add_argument("--braid-work-mem", default="4096", help="braidsort.work_mem of the clients (kB)")
    p.add_argument("--emulate-write-ns", type=int, default=300)
    p.add_argument("--emulate-read-ns", type=int, default=100)
    p.add_argument("--emulate-interference-ns", type=int, default=200)
    p.add_argument("--sort-mode", default="mergepass", help="braidsort.sort_mode of the clients")
    p.add_argument("--extra-options", default="",
                   help='more "-c name=value" for the clients\' PGOPTIONS, e.g. '
                        '"-c braidsort.emulate_parallelism=2"')
    p.add_argument("--script", default=None, help="the pgbench script [bench/concurrency.sql]")
    p.add_argument("--profile", action="store_true",
                   help="profile dax under the clients' emulation before the runs, as the README "
                        "asks of a DBA: the gate then keeps reads and writes apart only if the "
                        "profile shows interference")
    p.add_argument("--table-tablespace", default="dax")


def resolve(args):
    d = dict(DEFAULTS, **(QUICK if args.quick else {}))
    for k in ("rows", "rows2", "clients", "seconds", "reps"):
        if getattr(args, k) is None:
            setattr(args, k, d[k])
    if args.rows2 is None:
        args.rows2 = max(args.rows // 4, 1)
    args.policy_list = common.split(args.policies)
    for pol in args.policy_list:
        if pol not in ("interference_aware", "overlap"):
            raise SystemExit(f"--policies: interference_aware and overlap only (got {pol!r})")
    args.pgoptions = " ".join([
        "-c braidsort.force=on", f"-c braidsort.work_mem={args.braid_work_mem}",
        "-c braidsort.spill_tablespace=dax", "-c max_parallel_workers_per_gather=0",
        f"-c braidsort.emulate_write_ns={args.emulate_write_ns}",
        f"-c braidsort.emulate_read_ns={args.emulate_read_ns}",
        f"-c braidsort.emulate_interference_ns={args.emulate_interference_ns}",
        f"-c braidsort.sort_mode={args.sort_mode}"] +
        ([args.extra_options] if args.extra_options else []))
    h = (sortbench.est_heap_bytes(args.rows, args.payload) +
         sortbench.est_heap_bytes(args.rows2, args.payload))
    # per client the spills of the value-log sort over the UNION ALL (rows, a
    # little extra per row, runs, partly filled 64MB segments)
    spill = args.clients * ((args.rows + args.rows2) *
                            (sortbench.est_tuple_len(args.payload) + 40) + 128 * MB)
    used = spill + (h if args.table_tablespace == "dax" else 0)
    args.size = {"tmpfs": f"{sortbench._round_up_mb(used + 256 * MB)}M",
                 "shared_buffers": f"{max(2048, sortbench._round_up_mb(2 * h + 256 * MB))}MB",
                 "heap_bytes": h, "tmpfs_used_bytes": used,
                 "note": f"tables ~{h // MB} MB, braidsort spills of {args.clients} clients "
                         f"~{spill // MB} MB"}


def cluster_spec(args):
    resolve(args)
    return {"tmpfs": args.size["tmpfs"], "locale": None}


def steps(args):
    return 4 + args.reps * len(args.policy_list)


def statements(script):
    """The script's statements, one a line (comments and meta-commands skipped)."""
    out = []
    with open(script) as f:
        for line in f:
            s = line.strip()
            if s and not s.startswith("--") and not s.startswith("\\"):
                out.append(s)
    return out


def setup(conn, args, progress):
    data = {}
    data["sortbench"] = sortbench.load(conn, args.rows, args.payload, args.table_tablespace,
                                       log=progress.log)
    data["sortbench2"] = sortbench.load(conn, args.rows2, args.payload, args.table_tablespace,
                                        table="sortbench2", seed_offset=1000000000,
                                        log=progress.log)
    # the checked results must not depend on the order of equal keys
    conn.execute("SET braidsort.enable = off")
    conn.execute("SET work_mem = '256MB'")
    dup = conn.execute("SELECT count(*) - count(DISTINCT k) FROM (SELECT k FROM sortbench "
                       "UNION ALL SELECT k FROM sortbench2) s").fetchone()[0]
    if dup:
        raise RuntimeError(f"sortbench and sortbench2 share {dup} duplicate keys: the order "
                           "checksum would depend on tie order; rerun")
    conn.execute("DROP TABLE IF EXISTS bench_expect")
    for f in ("bench_check(text)", "bench_checksum(text)", "bench_checksum_sql(text)"):
        conn.execute(f"DROP FUNCTION IF EXISTS {f}")
    for stmt in SETUP_SQL:
        conn.execute(stmt)
    progress.log("computing the expected checksums with braidsort.enable = off")
    conn.execute("UPDATE bench_expect SET (n, hsum, psum) = (SELECT * FROM bench_checksum(query))")
    # sanity: the check passes with PostgreSQL's Sort
    conn.execute("SELECT bench_check(name) FROM bench_expect")
    conn.execute("RESET ALL")
    rows = conn.execute("SELECT name, n, hsum::text, psum::text, query FROM bench_expect "
                        "ORDER BY name").fetchall()
    data["expected"] = [dict(zip(("name", "rows", "hash_sum", "position_sum", "query"), r))
                        for r in rows]
    sortbench.prewarm(conn)
    sortbench.prewarm(conn, "sortbench2")
    return data


def verify(cl, args, stmts, progress, warnings):
    """Each statement alone under the clients' settings: its plan (for
    bench_check(NAME), that of NAME's checksum query), then the statement."""
    out = []
    with cl.session(options=args.pgoptions) as conn:
        for s in stmts:
            m = re.match(r"^SELECT bench_check\('([a-z_]+)'\);$", s)
            if m:
                q = conn.execute("SELECT bench_checksum_sql(query) FROM bench_expect "
                                 "WHERE name = %s", (m.group(1),)).fetchone()
                if not q:
                    raise RuntimeError(f"the script calls bench_check('{m.group(1)}'), "
                                       "but bench_expect has no such row")
                q = q[0]
            else:
                q = s.rstrip(";")
            doc = measure.explain(conn, q, timing=False, costs=False)
            summary = measure.plan_summary(doc["Plan"])
            if not summary["braid"]:
                raise measure.PlanError(f"statement {s!r}: no Custom Scan (BraidSort) under "
                                        "the clients' settings")
            b = summary["braid"]
            rec = {"statement": s, "node": "BraidSort",
                   "Sort Method": "; ".join(x.get("Sort Method", "") for x in b),
                   "Gather Source": "; ".join(x.get("Gather Source", "") for x in b),
                   "Rows Sorted": sum(x.get("Rows Sorted", 0) for x in b),
                   "Device Bytes Written": measure.device_bytes_written(summary),
                   "ms": doc["Execution Time"], "explain": doc}
            if rec["Device Bytes Written"] == 0:
                warnings.append(f"statement {s!r} does not spill alone (Device Bytes Written 0; "
                                f"{rec['Sort Method']}); raise --rows or lower --braid-work-mem")
                progress.log("WARNING: " + warnings[-1])
            conn.execute(s)
            out.append(rec)
            progress.step(f"alone: {s[:60]}: {rec['Sort Method']}, {rec['Gather Source']}, "
                          f"wrote {rec['Device Bytes Written'] / 1e6:.1f} MB, {rec['ms']:.0f} ms")
    return out


def parse_pgbench(text, nstmts):
    def num(pattern, conv=float):
        m = re.search(pattern, text, re.M)
        return conv(m.group(1)) if m else None
    out = {
        "tps": num(r"^tps = ([0-9.]+) \(without initial connection time\)$"),
        "latency_ms": num(r"^latency average = ([0-9.]+) ms$"),
        "transactions": num(r"^number of transactions actually processed: ([0-9]+)", int),
        "failed": num(r"^number of failed transactions: ([0-9]+)", int) or 0,
        "aborted_clients": len(re.findall(r"aborted in command", text)),
    }
    stmt, on = [], False
    for line in text.splitlines():
        if line.startswith("statement latencies in milliseconds"):
            on = True
            continue
        if on:
            m = re.match(r"^\s*([0-9.]+)\s+[0-9]+\s+", line)
            if m:
                stmt.append(float(m.group(1)))
    out["statement_latency_ms"] = stmt if stmt else [None] * nstmts
    return out


def pgbench(cl, args, script_copy, seconds):
    cmd = ["runuser", "-u", "postgres", "--", "env", f"PGOPTIONS={args.pgoptions}",
           f"{clustermod.PGBIN}/pgbench", "-n", "-r", "-c", str(args.clients), "-j",
           str(args.clients), "-T", str(seconds), "-f", script_copy, "-h", cl.dir,
           "-p", str(cl.port), "-U", "postgres", "postgres"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def one_run(cl, args, pol, rep, script_copy, nstmts, result, progress):
    cl.set_sighup("braidsort.io_policy", pol)
    with cl.session() as conn:
        conn.execute("SELECT braidsort.stats_reset()")
    rc, text = pgbench(cl, args, script_copy, args.seconds)
    time.sleep(0.5)     # let the sessions' exits land
    rec = {"policy": pol, "rep": rep, "exit": rc, "load1": round(os.getloadavg()[0], 2)}
    rec.update(parse_pgbench(text, nstmts))
    if rec["transactions"] is None:
        raise RuntimeError(f"pgbench ({pol}, run {rep + 1}) printed no transaction count "
                           f"(exit {rc}):\n{text}")
    rec["tps"] = rec["tps"] or 0.0
    with cl.session() as conn:
        row = conn.execute(
            "SELECT io_policy, read_grants, write_grants, waits, phase_switches, \"overlaps\", "
            "write_thread_cap, readers + writers + waiting_readers + waiting_writers + writer_threads, "
            "emulated_busy_ms, emulated_queued_ms, interfered_lines "
            "FROM braidsort.scheduler WHERE tablespace = 'dax'").fetchone()
        stats = conn.execute(
            "SELECT coalesce(sum(value) FILTER (WHERE scope LIKE 'dax%' AND counter = 'bytes_written'), 0), "
            "coalesce(sum(value) FILTER (WHERE scope LIKE 'dax%' AND counter = 'bytes_read'), 0), "
            "coalesce(sum(value) FILTER (WHERE scope = 'global' AND counter = 'sorts_mergepass'), 0), "
            "coalesce(sum(value) FILTER (WHERE scope = 'global' AND counter = 'sorts_onepass'), 0), "
            "coalesce(sum(value) FILTER (WHERE scope = 'global' AND counter = 'sorts_value_log'), 0) "
            "FROM braidsort.stats").fetchone()
    w = result["warnings"]
    if row is None:
        w.append(f"{pol} run {rep + 1}: braidsort.scheduler has no row for dax: nothing "
                 "went through its gate")
        row = (pol, 0, 0, 0, 0, 0, None, 0, 0.0, 0.0, 0)
    keys = ("io_policy_seen", "read_grants", "write_grants", "waits", "phase_switches",
            "overlaps", "write_thread_cap", "gate_busy", "emulated_busy_ms",
            "emulated_queued_ms", "interfered_lines")
    rec.update(dict(zip(keys, row)))
    rec.update(dict(zip(("bytes_written", "bytes_read", "sorts_mergepass", "sorts_onepass",
                         "sorts_value_log"), (int(x) for x in stats))))
    rec["pgbench_output"] = text
    if rec["io_policy_seen"] != pol:
        raise RuntimeError(f"braidsort.scheduler shows io_policy {rec['io_policy_seen']!r} "
                           f"during the {pol} run")
    if rc != 0 or rec["aborted_clients"] or rec["failed"]:
        errs = [ln for ln in text.splitlines() if re.search("ERROR|aborted|FATAL", ln)][:3]
        w.append(f"{pol} run {rep + 1}: pgbench exit {rc}, {rec['aborted_clients']} aborted "
                 f"clients, {rec['failed']} failed transactions: {' '.join(errs)}")
    # (no profile, or one that did not measure interference: kept apart)
    keeps_apart = result.get("profile", {}).get("read_write_interference") is not False
    if pol == "interference_aware" and keeps_apart and rec["overlaps"]:
        w.append(f"interference_aware run {rep + 1}: braidsort.scheduler counted "
                 f"{rec['overlaps']} read/write overlaps (expected 0)")
    if rec["gate_busy"]:
        w.append(f"{pol} run {rep + 1}: the gate of dax is not free after the run "
                 f"(readers + writers + waiting + writer_threads = {rec['gate_busy']})")
    progress.step(f"{pol} run {rep + 1}/{args.reps}: tps {rec['tps']:.3f}, latency "
                  f"{rec['latency_ms'] or 0:.0f} ms, {rec['transactions']} transactions, "
                  f"waits {rec['waits']}, overlaps {rec['overlaps']}, "
                  f"interfered lines {rec['interfered_lines']}, "
                  f"written {rec['bytes_written'] / 1e6:.0f} MB")
    return rec


def profile(cl, args, progress):
    """Profile dax under the clients' settings (so that the profile matches
    their emulation) and return what device_summary() says of it."""
    progress.log("profiling dax under the clients' emulation")
    with cl.session(options=args.pgoptions) as conn:
        conn.execute("SELECT count(*) FROM braidsort.profile_device('dax', 64)")
        row = conn.execute(
            "SELECT lambda, read_threads, write_threads, interference, read_write_interference, "
            "braid FROM braidsort.device_summary() WHERE tablespace = 'dax'").fetchone()
    if row is None:
        raise RuntimeError("profile_device('dax') stored no profile (a busy machine keeps it "
                           "back: run nothing else beside the benchmark)")
    out = dict(zip(("lambda", "read_threads", "write_threads", "interference",
                    "read_write_interference", "braid"), row))
    progress.log(f"profile: interference {out['interference'] or 0:.2f} "
                 f"(read_write_interference {out['read_write_interference']}), "
                 f"write threads {out['write_threads']}, {out['braid']}")
    return out


def run(args, repo, cl, progress=None):
    resolve(args)
    progress = progress or Progress(steps(args))
    t0 = time.time()
    script = args.script or os.path.join(repo, "bench", "concurrency.sql")
    stmts = statements(script)
    if not stmts:
        raise SystemExit(f"no statements in {script}")
    result = common.new_result("concurrency", args, repo, cl)
    result.update({"rows": args.rows, "rows2": args.rows2, "payload": args.payload,
                   "clients": args.clients, "pgbench_seconds": args.seconds, "reps": args.reps,
                   "policies": args.policy_list, "pgoptions": args.pgoptions,
                   "shared_buffers": args.size["shared_buffers"], "sizing": args.size["note"],
                   "script": open(script).read(), "runs": []})
    cl.set_conf(shared_buffers=args.size["shared_buffers"])
    cl.restart()
    with cl.session() as conn:
        result["data"] = setup(conn, args, progress)
        result["settings"] = common.server_settings(conn)
        result["io_policy_default"] = conn.execute("SHOW braidsort.io_policy").fetchone()[0]
        result["pgbench"] = subprocess.run([f"{clustermod.PGBIN}/pgbench", "--version"],
                                           capture_output=True, text=True).stdout.strip()
    script_copy = os.path.join(cl.dir, "concurrency.sql")
    with open(script_copy, "w") as f:
        f.write(result["script"])
    os.chmod(script_copy, 0o644)
    if args.profile:
        result["profile"] = profile(cl, args, progress)
    progress.log(f"each statement alone, PGOPTIONS='{args.pgoptions}'")
    result["statements"] = verify(cl, args, stmts, progress, result["warnings"])
    progress.log(f"pgbench: {args.clients} clients, {args.seconds} s a run, {args.reps} runs "
                 f"per policy ({', '.join(args.policy_list)})")
    try:
        for rep in range(args.reps):
            for pol in args.policy_list:
                result["runs"].append(one_run(cl, args, pol, rep, script_copy, len(stmts),
                                              result, progress))
    finally:
        cl.reset_sighup("braidsort.io_policy")
    for w in result["warnings"]:
        progress.log("WARNING: " + w)
    return common.finish(result, t0)
