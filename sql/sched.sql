--
-- The scheduler's parameters, the braidsort.stats and braidsort.scheduler
-- views, and decline counting.  (Concurrency, the worker and profiles are
-- tested by TAP: test/t/004_scheduler.pl and 005_concurrency.pl.)
--
SET max_parallel_workers_per_gather = 0;
SET braidsort.sort_mode = mergepass;

-- every spill read of the tests before this one (merges, cursors, mark and
-- restore, value logs, parallel workers...) was counted under a read grant
-- (whether they overlapped writes depends on timing under the default
-- io_policy, overlap)
SELECT count(*) > 0 AS devices_used, sum(ungated_reads) AS ungated_reads
FROM braidsort.scheduler;

SHOW braidsort.io_policy;
SET braidsort.io_policy = overlap;          -- server-wide: postgresql.conf only
SET braidsort.read_threads = -1;
SET braidsort.read_threads = 65;
SET braidsort.read_threads = 2;
SET braidsort.write_threads = 2;            -- server-wide too
RESET braidsort.read_threads;

SELECT braidsort.stats_reset();
SELECT counter, value FROM braidsort.stats WHERE scope = 'global' ORDER BY counter;
-- ... since a moment ago
SELECT braidsort.stats_reset_time() BETWEEN now() - interval '1 minute' AND clock_timestamp()
	AS reset_just_now;

CREATE TABLE sched_t AS
SELECT (g * 7919) % 50021 AS k, repeat('p', 30) AS pad, g AS id
FROM generate_series(1, 50000) g;
ANALYZE sched_t;

-- a spilling sort: counted once, with its rows and device traffic
SET braidsort.force = on;
SET braidsort.work_mem = 256;
SELECT count(*), sum(id) FROM (SELECT * FROM sched_t ORDER BY k OFFSET 0) s;
SELECT counter, value FROM braidsort.stats
WHERE scope = 'global' AND counter IN ('sorts_onepass', 'sorts_mergepass', 'rows_sorted')
ORDER BY counter;
SELECT value > 0 AS avoided_value_writes FROM braidsort.stats WHERE counter = 'value_bytes_avoided';
-- ... about what PostgreSQL's sort writes with the same memory
CREATE FUNCTION temp_written(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	PERFORM set_config('braidsort.enable', 'off', true);
	PERFORM set_config('work_mem', '256kB', true);
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO plan;
	RETURN (plan->0->'Plan'->>'Temp Written Blocks')::bigint * current_setting('block_size')::bigint;
END $$;
SELECT temp_written('SELECT count(*), sum(id) FROM (SELECT * FROM sched_t ORDER BY k OFFSET 0) s')
	AS pg_written \gset
SELECT value BETWEEN :pg_written * 2 / 3 AND :pg_written * 3 / 2 AS avoided_near_postgresql_writes
FROM braidsort.stats WHERE counter = 'value_bytes_avoided';
DROP FUNCTION temp_written(text);
SELECT count(DISTINCT scope) > 1 AS has_device_rows,
       bool_and(value > 0) FILTER (WHERE scope <> 'global' AND counter LIKE 'bytes_%') AS device_traffic
FROM braidsort.stats;

-- one row per device used; nothing held, no overlap
SELECT io_policy, phase, readers, writers, waiting_readers, waiting_writers,
       read_grants > 0 AS read, write_grants > 0 AS wrote, "overlaps", ungated_reads
FROM braidsort.scheduler;

-- the emulated device's clock: nothing reserved without emulation; a sort
-- under emulated delays reserves device time on its device's clock
SET braidsort.emulate_parallelism = 0;
SET braidsort.emulate_parallelism = 65;
SELECT sum(emulated_busy_ms) AS busy_ms, sum(emulated_queued_ms) AS queued_ms,
       sum(interfered_lines) AS interfered_lines
FROM braidsort.scheduler;
SET braidsort.emulate_parallelism = 2;
SET braidsort.emulate_write_ns = 200;
SET braidsort.emulate_read_ns = 100;
SELECT count(*), sum(id) FROM (SELECT * FROM sched_t ORDER BY k OFFSET 0) s;
SELECT sum(emulated_busy_ms) > 0 AS clock_busy, sum(interfered_lines) AS interfered_lines
FROM braidsort.scheduler;
RESET braidsort.emulate_parallelism;
RESET braidsort.emulate_write_ns;
RESET braidsort.emulate_read_ns;

-- declines, by reason
SELECT braidsort.stats_reset();
EXPLAIN (COSTS OFF) SELECT * FROM sched_t ORDER BY k LIMIT 10;         -- bounded
EXPLAIN (COSTS OFF) SELECT * FROM sched_t ORDER BY (k || ' days')::interval;  -- no encoder
EXPLAIN (COSTS OFF) SELECT * FROM sched_t ORDER BY k FOR UPDATE;       -- statement
RESET braidsort.force;
EXPLAIN (COSTS OFF) SELECT * FROM sched_t WHERE k < 10 ORDER BY k;     -- too few rows: adaptive
SET braidsort.adaptive = off;
EXPLAIN (COSTS OFF) SELECT * FROM sched_t WHERE k < 10 ORDER BY k;     -- cost: too few rows
SELECT counter, value FROM braidsort.stats
WHERE scope = 'global' AND counter LIKE 'declined%' ORDER BY counter;
-- a plan braidsort.sort_modes() only shows counts no decline
SELECT count(*) FROM braidsort.sort_modes('SELECT * FROM sched_t WHERE k < 10 ORDER BY k');
SELECT value FROM braidsort.stats WHERE scope = 'global' AND counter = 'declined_cost';
RESET braidsort.adaptive;
RESET braidsort.work_mem;
DROP TABLE sched_t;
