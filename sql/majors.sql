--
-- majors: what PostgreSQL's majors show differently, kept apart so that the
-- alternate expected files are short.  majors.out is 15's, majors_1.out
-- 17's (16 is not tested), majors_2.out 18's.  Runs last: it uses join.sql's
-- tables and functions and adaptive.sql's.
--

-- braidsort's parameters refuse bad values with PostgreSQL's own messages,
-- which name a range's units from 17 on
SET braidsort.work_mem = 10;
SET braidsort.work_mem = -2;
SET braidsort.gather_batch = 0;
SET braidsort.enable = 'maybe';
SET braidsort.no_such_setting = 1;
SHOW braidsort.work_mem;
SHOW braidsort.gather_batch;

-- the scheduler worker's wait, idle, has a name of its own from 17 on
SELECT wait_event_type, wait_event FROM pg_stat_activity
WHERE backend_type = 'braidsort scheduler';

-- the adaptive switch's estimate of PostgreSQL's sort does not depend on
-- the machine (shown to the ms), and whether it switches does.  It depends
-- on the rows read when the tuplesort outgrew work_mem: more from 17 on,
-- whose tuplesort keeps tuples in a bump context (no chunk headers)
SET braidsort.adaptive = on;
SET work_mem = '1MB';
CREATE TABLE ad_ties AS
SELECT g AS id, g % 2 AS a, g % 2 AS b, (g % 3)::text AS status, (g % 1000)::numeric AS amount
FROM generate_series(1, 60000) g;
ANALYZE ad_ties;
SELECT regexp_replace(l, '^\s+', '') AS estimates
FROM explain_adaptive('SELECT * FROM ad_ties WHERE a = b ORDER BY status, amount DESC') l
WHERE l LIKE '%Switch Estimates%';
SELECT regexp_replace(l, '^\s+', '') AS estimates
FROM explain_adaptive('SELECT * FROM ad_ties WHERE a = b ORDER BY id, amount DESC') l
WHERE l LIKE '%Switch Estimates%';
DROP TABLE ad_ties;
RESET braidsort.adaptive;
RESET work_mem;

-- BraidJoin where the planners differ: from 16 on, the planner may hash the
-- outer side of an anti join (Hash Right Anti Join), which braidsort leaves
-- to PostgreSQL (it would need a match flag per inner row); 18's EXPLAIN
-- shows the nodes that enable_* settings turned down
SET braidsort.force = on;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SET max_parallel_workers_per_gather = 0;
SET enable_mergejoin = off;
SET enable_nestloop = off;

-- SEMI and ANTI on one key carry the key itself in the inner entries
SELECT join_check('SELECT jo.id FROM jo WHERE NOT EXISTS (SELECT 1 FROM ji WHERE ji.k::int2 = jo.k)');
-- ... over an inner input that is not a table scan (no value log either)
SELECT join_check('SELECT jo.id FROM jo WHERE NOT EXISTS
	(SELECT 1 FROM generate_series(1, 20000) g WHERE (g * 3) % 3001 = jo.k)');
SELECT join_ran('SELECT jo.id FROM jo WHERE NOT EXISTS
	(SELECT 1 FROM generate_series(1, 20000) g WHERE (g * 3) % 3001 = jo.k)');

-- the first pass reads outer rows ahead of their probes (the ring): over
-- an index scan and a bitmap scan (pages revisited out of order).  18 marks
-- the Seq Scan enable_seqscan turned down "Disabled: true", and the
-- BraidJoin above it too (its rule for a custom scan counts only the
-- children in custom_plans, and BraidJoin's are its outer and inner plans)
CREATE INDEX jo_k_idx ON jo (k);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT join_check('SELECT jo.id, ji.pad FROM jo LEFT JOIN ji ON jo.k = ji.k WHERE jo.k > 100');
EXPLAIN (COSTS OFF) SELECT jo.id, ji.pad FROM jo LEFT JOIN ji ON jo.k = ji.k WHERE jo.k > 100;
-- unforced, auto leaves it to PostgreSQL: its written partitions' outer
-- rows would be fetched back in index order (0.78x measured); the same
-- join over a sequential scan it takes
SET braidsort.force = off;
SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) SELECT jo.id, ji.pad FROM jo LEFT JOIN ji ON jo.k = ji.k WHERE jo.k > 100;
RESET client_min_messages;
SET enable_indexscan = off;
SET enable_seqscan = on;
SELECT join_ran('SELECT jo.id, ji.pad FROM jo LEFT JOIN ji ON jo.k = ji.k WHERE jo.k > 100');
RESET enable_indexscan;
SET enable_seqscan = off;
SET braidsort.force = on;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT join_check('SELECT jo.id, ji.pad FROM jo JOIN ji ON jo.k = ji.k WHERE jo.k > 100');
EXPLAIN (COSTS OFF) SELECT jo.id, ji.pad FROM jo JOIN ji ON jo.k = ji.k WHERE jo.k > 100;
RESET enable_indexscan;
RESET enable_seqscan;
DROP INDEX jo_k_idx;
