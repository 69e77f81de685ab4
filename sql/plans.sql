--
-- plans: where BraidSort replaces a Sort and where it declines.
--
SET braidsort.force = on;

-- plain ORDER BY over a sequential scan, with and without quals
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY i4;
EXPLAIN (COSTS OFF) SELECT id FROM alltypes WHERE tx > 'b' ORDER BY tx DESC, id;
EXPLAIN (VERBOSE, COSTS OFF) SELECT upper(tx), id FROM alltypes ORDER BY i8 NULLS FIRST, by;

-- OFFSET alone bounds nothing
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY i4 OFFSET 10;

-- a LIMIT with a row count leaves the top-N heapsort to PostgreSQL
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY i4 LIMIT 10;
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY i4 LIMIT 10 OFFSET 5;
EXPLAIN (COSTS OFF)
SELECT * FROM (SELECT * FROM alltypes ORDER BY i4 OFFSET 1) s LIMIT 5;

-- index and bitmap heap scans as input
EXPLAIN (COSTS OFF) SELECT * FROM alltypes WHERE id BETWEEN 10 AND 20 ORDER BY tx;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM alltypes WHERE id BETWEEN 10 AND 20 ORDER BY tx;
RESET enable_indexscan;

-- sorts under other nodes: aggregates, subplans, merge joins, unions
EXPLAIN (COSTS OFF)
SELECT i2 % 7, count(*) FROM alltypes GROUP BY 1 ORDER BY 1;
SET enable_hashagg = off;
EXPLAIN (COSTS OFF)
SELECT bp, count(*) FROM alltypes GROUP BY bp;
RESET enable_hashagg;
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF)
SELECT a.id, d.b FROM alltypes a JOIN dom_t d ON a.i4 = d.a;
RESET enable_hashjoin;
RESET enable_nestloop;
EXPLAIN (COSTS OFF)
SELECT id, (SELECT max(b) FROM (SELECT b FROM dom_t WHERE a = alltypes.id ORDER BY b OFFSET 0) s)
FROM alltypes WHERE id < 5;

-- parallel plans: one BraidSort of the whole scan in the Gather Merge's
-- place, or each worker sorts its part under the Gather Merge
CREATE TABLE par_t (id int, k int8, t text COLLATE "C");
INSERT INTO par_t SELECT g, (g * 7919) % 100003, md5(g::text) FROM generate_series(1, 60000) g;
ANALYZE par_t;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT * FROM par_t ORDER BY k, id;
SELECT check_sort('SELECT * FROM par_t ORDER BY k, id');
SELECT check_sort('SELECT * FROM par_t ORDER BY t DESC');
-- a column sorted by but not selected: a whole-row reference to the
-- subquery leaves it out, as it does under the Gather Merge
SELECT check_sort('SELECT r FROM (SELECT id, t FROM par_t ORDER BY k DESC, id) r');
-- a filter and an expression key, read in one process (where the cost
-- model would keep a BraidSort in each process)
SET braidsort.parallel_sort = one;
EXPLAIN (COSTS OFF) SELECT id, k FROM par_t WHERE id % 3 = 0 ORDER BY k % 1000, id;
SELECT check_sort('SELECT id, k FROM par_t WHERE id % 3 = 0 ORDER BY k % 1000, id');
-- columns the query above does not read: the subquery's scan makes them
-- NULL constants, which the Gather Merge and its Sort keep as constants;
-- one sort still takes the Gather Merge's place (count(*) reads none)
EXPLAIN (COSTS OFF) SELECT count(*) FROM (SELECT * FROM par_t ORDER BY k, id) s;
SELECT check_sort('SELECT s.id, s.k FROM (SELECT *, 7 AS seven FROM par_t ORDER BY k, id) s');
SELECT check_sort('SELECT s.seven, s.t FROM (SELECT *, 7 AS seven FROM par_t ORDER BY t DESC) s');
-- under a LIMIT each process keeps its top-N heapsort
EXPLAIN (COSTS OFF) SELECT * FROM par_t ORDER BY k, id LIMIT 10;
SET braidsort.parallel_sort = each;
EXPLAIN (COSTS OFF) SELECT * FROM par_t ORDER BY k, id;
SELECT check_sort('SELECT * FROM par_t ORDER BY k, id');
SELECT check_sort('SELECT r FROM (SELECT id, t FROM par_t ORDER BY k DESC, id) r');
-- shared: a Gather over one BraidSort that every process builds and one
-- sorts.  check_sort and check_rows run their queries from PL/pgSQL,
-- whose EXECUTE ... INTO runs no parallel worker: here each result is
-- compared with PostgreSQL's at the top level too, where the Gather's
-- workers run (by heap TID, from every process's value log, collated
-- keys, runs on the device, the leader taking part or not, no rows)
CREATE FUNCTION shared_sort_planned(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line LIKE '%Shared Sort: built by % processes, sorted by one%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END $$;
SET braidsort.parallel_sort = shared;
\set q 'SELECT * FROM par_t ORDER BY k, id'
EXPLAIN (COSTS OFF) :q;
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
SELECT check_sort('SELECT * FROM par_t ORDER BY k, id');
\set q 'SELECT * FROM par_t ORDER BY t DESC'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
\set q 'SELECT id, k FROM par_t WHERE id % 3 = 0 ORDER BY k % 1000, id'
EXPLAIN (COSTS OFF) :q;
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
SELECT check_sort('SELECT r FROM (SELECT id, t FROM par_t ORDER BY k DESC, id) r');
-- each process's share fits its IndexMap, all of them not the leader's:
-- the entries the workers hand over unsorted make runs as the leader
-- takes them (by heap TID and from value logs, whose refs name the
-- workers' segments)
SET work_mem = '1MB';
\set q 'SELECT * FROM par_t ORDER BY k, id'
-- (planned as the merge it is: all the shares outgrow the leader's budget)
EXPLAIN (COSTS OFF) :q;
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
SET braidsort.gather_source = value_log;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
RESET braidsort.gather_source;
RESET work_mem;
-- every process's share empty
\set q 'SELECT * FROM par_t WHERE k < 0 ORDER BY k, id'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
SET work_mem = '64kB';
\set q 'SELECT id, t || ''x'' FROM par_t ORDER BY 2 DESC, id'
EXPLAIN (COSTS OFF) :q;
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
\set q 'SELECT * FROM par_t ORDER BY t, id'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
SET braidsort.gather_source = value_log;
\set q 'SELECT id, t COLLATE libc_c_utf8 FROM par_t ORDER BY 2, id'
EXPLAIN (COSTS OFF) :q;
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
\set q 'SELECT id, t || ''x'', k FROM par_t ORDER BY 2 DESC, id'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
\set q 'SELECT id, t || ''x'', k FROM par_t WHERE k < 0 ORDER BY 2 DESC, id'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
-- the leader taking no part: the last worker to finish merges
SET parallel_leader_participation = off;
\set q 'SELECT id, t || ''x'', k FROM par_t ORDER BY 2 DESC, id'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
RESET braidsort.gather_source;
\set q 'SELECT * FROM par_t ORDER BY k, id'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
RESET parallel_leader_participation;
-- no worker to be had: the leader builds and merges alone
SET max_parallel_workers = 0;
\set q 'SELECT id, t || ''x'' FROM par_t ORDER BY 2 DESC, id'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
SET parallel_leader_participation = off;
\set q 'SELECT id, t || ''x'' FROM par_t ORDER BY 2 DESC, id'
SELECT shared_sort_planned(:'q');
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
RESET parallel_leader_participation;
RESET max_parallel_workers;
-- rescans: the Gather under a nested loop, built again for every row
SET enable_material = off;
\set q 'SELECT * FROM (SELECT md5(string_agg(id::text || t, '','')) FROM (SELECT id, t || ''x'' AS t FROM par_t ORDER BY t, id) s) ss RIGHT JOIN (VALUES (1), (2), (3)) v(x) ON true'
EXPLAIN (COSTS OFF) :q;
SET braidsort.enable = off;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) AS pg FROM (:q) r \gset
RESET braidsort.enable;
SELECT md5(coalesce(string_agg(r::text, E'\n'), '')) = :'pg' AS same FROM (:q) r;
RESET enable_material;
RESET work_mem;
-- every process's files are gone with the query
SELECT count(*) AS leftover_spill_files FROM pg_ls_tmpdir();
DROP FUNCTION shared_sort_planned(text);
RESET braidsort.parallel_sort;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- the whole plan in a parallel worker: the node is serialized and rebuilt
-- (force_parallel_mode became debug_parallel_query in PostgreSQL 16)
SELECT CASE WHEN current_setting('server_version_num')::int >= 160000
	THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END AS debug_parallel \gset
SET :debug_parallel = on;
EXPLAIN (COSTS OFF) SELECT * FROM par_t WHERE id < 1000 ORDER BY t;
SELECT check_sort('SELECT * FROM par_t WHERE id < 1000 ORDER BY t');
RESET :debug_parallel;
RESET max_parallel_workers_per_gather;

-- input is not a heap scan: rows are kept in a value log
EXPLAIN (COSTS OFF)
SELECT a.id FROM alltypes a JOIN dom_t d ON a.i4 = d.a ORDER BY a.tx;
EXPLAIN (COSTS OFF)
SELECT * FROM generate_series(1, 10) g ORDER BY g DESC;
-- volatile output: not evaluated again at gather time, kept in a value log
EXPLAIN (COSTS OFF) SELECT id, random() > 2 FROM alltypes ORDER BY 2, id;
-- declined: row locks
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY i4 FOR UPDATE;
-- a libc collation other than C: taken as the last key (compared by strcoll)
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY tx COLLATE libc_c_utf8;
-- declined: no exact encoder
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY tm - time '12:00';

-- braidsort.enable = off leaves every Sort alone
SET braidsort.enable = off;
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY i4;
RESET braidsort.enable;

-- the cost model: used only when PostgreSQL's sort would spill and
-- braidsort's estimate is lower (a sort expected to fit in work_mem is
-- taken adaptively: PostgreSQL's sort unless it outgrows work_mem); an
-- IndexMap larger than the budget is planned as a MergePass
SET braidsort.force = off;
EXPLAIN (COSTS OFF) SELECT * FROM longtext ORDER BY t;
SET work_mem = '64kB';
SET braidsort.work_mem = '10MB';
EXPLAIN (COSTS OFF) SELECT * FROM longtext ORDER BY t;
SET braidsort.work_mem = '64kB';
EXPLAIN (COSTS OFF) SELECT * FROM longtext ORDER BY id % 500, id;
-- ... but not with keys longer than its prefix, whose full keys fill the
-- small budget and are merged pass after pass (forced, 2.3x slower than
-- PostgreSQL's sort over 200k such rows)
EXPLAIN (COSTS OFF) SELECT * FROM longtext ORDER BY t;
RESET work_mem;
RESET braidsort.work_mem;

-- keys stored compressed (2240 bytes each, 70 as stored): ANALYZE found
-- them all too wide, so the cost model counts them at least 1024 bytes,
-- written and read again with every merge pass of runs they fill;
-- PostgreSQL's sort carries them compressed (braidsort, taken before,
-- was about 4x slower here by hand)
CREATE TABLE wide_keys AS
SELECT g AS id, repeat(md5(g::text), 70) AS big FROM generate_series(1, 5000) g;
ANALYZE wide_keys;
SELECT avg_width < 100 AS stored_compressed, histogram_bounds IS NULL AS too_wide
FROM pg_stats WHERE tablename = 'wide_keys' AND attname = 'big';
SET work_mem = '64kB';
EXPLAIN (COSTS OFF) SELECT id FROM wide_keys ORDER BY big, id;
-- forced, still in order (full keys merged pass after pass)
SET braidsort.force = on;
SELECT check_sort('SELECT id, big FROM wide_keys ORDER BY big, id');
SET braidsort.force = off;
RESET work_mem;
DROP TABLE wide_keys;

-- EXPLAIN (SETTINGS) lists the braidsort parameters that change plans
-- when they differ from their defaults, as it does PostgreSQL's own
SET braidsort.force = on;
SET braidsort.join_mode = grace;
SET braidsort.write_intensity = 0.5;
SET braidsort.gather_batch = 512;
SET jit = on;			-- (off in the tests' configuration: not listed)
EXPLAIN (COSTS OFF, SETTINGS) SELECT g FROM generate_series(1, 10) g ORDER BY g DESC;
RESET jit;
RESET braidsort.force;
RESET braidsort.join_mode;
RESET braidsort.write_intensity;
RESET braidsort.gather_batch;

-- a node sorted again on each rescan counts the rows of all its sorts,
-- as it does its runs and bytes: 999 + 998 + 997
SET braidsort.force = on;
SELECT line FROM explain_masked($q$
	SELECT count(*) FROM generate_series(1, 3) c(id)
	CROSS JOIN LATERAL (SELECT g FROM generate_series(1, 1000) g WHERE g > c.id ORDER BY g DESC OFFSET 0) x
$q$) AS line WHERE line ~ 'Rows Sorted|Sorts:';
RESET braidsort.force;

-- braidsort.log_declines = notice: each Sort and spilling Hash Join left
-- to PostgreSQL, and why, without debug1 (not a top-N sort under a LIMIT,
-- nor a hash join whose table fits in memory: braidsort would not take
-- them anyway)
SET braidsort.log_declines = notice;
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY i4 LIMIT 10;
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY i4 FOR UPDATE;
EXPLAIN (COSTS OFF) SELECT * FROM alltypes ORDER BY tm - time '12:00';
SELECT count(*) FROM alltypes a JOIN dom_t d ON a.i4 = d.a;
-- "log" is for superusers: the server log is theirs
CREATE ROLE decline_user;
SET ROLE decline_user;
SET braidsort.log_declines = log;
SET braidsort.log_declines = notice;
RESET ROLE;
SET braidsort.log_declines = log;
RESET braidsort.log_declines;
DROP ROLE decline_user;
