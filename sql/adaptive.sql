--
-- adaptive: a Sort braidsort declines only because of its row estimate is
-- taken adaptively: it runs as PostgreSQL's in-memory sort and switches to
-- braidsort's path when its input outgrows work_mem, carrying over the rows
-- read so far (braidsort.adaptive = always: whenever it outgrows work_mem;
-- on: if the cost model expects a gain, else PostgreSQL's external sort
-- takes over).  Every check compares braidsort on (not forced) with
-- braidsort off.
--
SET max_parallel_workers_per_gather = 0;
SET braidsort.adaptive = always;
-- "a = b" holds on every row, but the planner expects one row in 50000
CREATE TABLE ad (id int, a int, b int, k int, t text COLLATE "C", pad text);
INSERT INTO ad
SELECT g, g, g, (g * 7919) % 5000,
	   CASE WHEN g % 11 = 0 THEN NULL ELSE substr(md5((g % 3000)::text), 1, 1 + g % 20) END,
	   repeat('x', g % 200)
FROM generate_series(1, 50000) g;
ANALYZE ad;

-- result digests with braidsort off and on, and whether the plan is adaptive
CREATE FUNCTION check_adaptive(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	pg text;
	braid text;
	adaptive boolean := false;
	line text;
BEGIN
	PERFORM set_config('braidsort.enable', 'off', true);
	pg := result_digest(q);
	PERFORM set_config('braidsort.enable', 'on', true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		adaptive := adaptive OR line LIKE '%Sort Method: adaptive%';
	END LOOP;
	braid := result_digest(q);
	RETURN CASE WHEN pg = braid THEN 'same' ELSE 'DIFFERENT: ' || pg || ' vs ' || braid END
		|| CASE WHEN adaptive THEN ', adaptive' ELSE ', not adaptive' END;
END $$;

-- EXPLAIN ANALYZE with the figures that depend on memory accounting masked
CREATE FUNCTION explain_adaptive(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN SELECT explain_masked(q) LOOP
		line := regexp_replace(line, 'Switched At Rows: \d+', 'Switched At Rows: N');
		line := regexp_replace(line, 'Memory Usage: \d+kB', 'Memory Usage: NkB');
		line := regexp_replace(line, '(Disk: |Switch Declined At Rows: )\d+', '\1N');
		line := regexp_replace(line, 'Switch Estimates: braidsort \d+\.\d+ ms', 'Switch Estimates: braidsort N ms');
		-- PostgreSQL's estimate to the ms: the rows read when the tuplesort
		-- outgrew work_mem depend on the build's chunk headers
		line := regexp_replace(line, 'PostgreSQL (\d+)\.\d+ ms', 'PostgreSQL \1 ms');
		line := regexp_replace(line, '(Rows Sorted|Device Bytes Written|Device Bytes Read|Device Lines Written|Device Lines Read|Gather Batches|Runs|Merge Passes): \d+', '\1: N');
		RETURN NEXT line;
	END LOOP;
END $$;

-- the plan: the Sort is taken, and says it is adaptive
EXPLAIN (COSTS OFF) SELECT * FROM ad WHERE a = b ORDER BY k, id;
SET braidsort.adaptive = off;
EXPLAIN (COSTS OFF) SELECT * FROM ad WHERE a = b ORDER BY k, id;
SET braidsort.adaptive = always;
-- key expressions: the scan computes them for the node
EXPLAIN (COSTS OFF) SELECT id FROM ad WHERE a = b ORDER BY k + 1, id;

-- small: it stays PostgreSQL's sort, and says so as a Sort would
SET work_mem = '4MB';
SELECT explain_adaptive('SELECT * FROM ad WHERE a = b AND id <= 500 ORDER BY k, id');
SELECT check_adaptive('SELECT * FROM ad WHERE a = b AND id <= 500 ORDER BY k, id');
SELECT check_adaptive('SELECT * FROM ad WHERE a = b AND id <= 500 ORDER BY t DESC NULLS LAST, id');

-- large: it switches, the rows read so far carried into IndexMap entries
-- (their tuples refetched by TID like the rest)
SET work_mem = '256kB';
SELECT explain_adaptive('SELECT * FROM ad WHERE a = b ORDER BY k, id');
SELECT check_adaptive('SELECT * FROM ad WHERE a = b ORDER BY k, id');
SELECT check_adaptive('SELECT * FROM ad WHERE a = b ORDER BY t NULLS FIRST, k DESC, id');
SELECT check_adaptive('SELECT id, t FROM ad WHERE a = b ORDER BY t COLLATE "default", id');
-- ... with a small braidsort budget: runs, the value log on the device
SET braidsort.work_mem = '1MB';
SELECT explain_adaptive('SELECT * FROM ad WHERE a = b ORDER BY t, id');
SELECT check_adaptive('SELECT * FROM ad WHERE a = b ORDER BY t, id');
SELECT check_adaptive('SELECT * FROM ad WHERE a = b ORDER BY pad DESC, id');
RESET braidsort.work_mem;
-- ... over a value log: a join's rows, and a scan's under gather_source
SET work_mem = '256kB';
SELECT explain_adaptive('SELECT x.id, y.k, x.pad FROM ad x JOIN ad y ON x.id = y.id
	WHERE x.a = x.b AND y.a = y.b ORDER BY y.k, x.id');
SELECT check_adaptive('SELECT x.id, y.k, x.pad FROM ad x JOIN ad y ON x.id = y.id
	WHERE x.a = x.b AND y.a = y.b ORDER BY y.k, x.id');
SELECT check_adaptive('SELECT x.id, y.t FROM ad x JOIN ad y ON x.id = y.id
	WHERE x.a = x.b AND y.a = y.b AND x.id <= 400 ORDER BY y.t DESC, x.id');
SET braidsort.gather_source = value_log;
SELECT explain_adaptive('SELECT * FROM ad WHERE a = b ORDER BY t, id');
SELECT check_adaptive('SELECT * FROM ad WHERE a = b ORDER BY t, id');
SELECT check_adaptive('SELECT * FROM ad WHERE a = b AND id <= 400 ORDER BY t, id');
RESET braidsort.gather_source;
-- ... into each write-limited mode, its IndexMap budget far below work_mem
-- (segment leaves the head of the input, carried rows included, to its
-- selection passes)
SET work_mem = '1MB';
SET braidsort.work_mem = '64kB';
SET braidsort.sort_mode = segment;
SELECT check_adaptive('SELECT id, k FROM ad WHERE a = b ORDER BY k, id');
SET braidsort.sort_mode = hybrid;
SELECT check_adaptive('SELECT id, k FROM ad WHERE a = b ORDER BY k, id');
SET braidsort.sort_mode = lazy;
SET braidsort.write_intensity = 0.5;
SELECT check_adaptive('SELECT id, k FROM ad WHERE a = b ORDER BY k, id');
SET braidsort.gather_source = value_log;
SET braidsort.sort_mode = segment;
SELECT check_adaptive('SELECT id, k FROM ad WHERE a = b ORDER BY k, id');
RESET braidsort.gather_source;
RESET braidsort.sort_mode;
RESET braidsort.write_intensity;
RESET braidsort.work_mem;
-- braidsort.adaptive = on: the cost model decides at the switch; where it
-- expects no gain (here narrow rows, two integers, in a value log spilling
-- at 128 kB against PostgreSQL's 256 kB sort), PostgreSQL's external sort
-- takes over (PostgreSQL's estimate at the switch is of the rows its
-- tuplesort held in work_mem, as many more from 17 on as these narrow
-- rows take less room there)
SET braidsort.adaptive = on;
SET work_mem = '256kB';
SELECT regexp_replace(l, 'PostgreSQL \d+ ms', 'PostgreSQL N ms') AS explain_adaptive
FROM explain_adaptive('SELECT x.id, y.k FROM ad x JOIN ad y ON x.id = y.id
	WHERE x.a = x.b AND y.a = y.b ORDER BY y.k, x.id') l;
SELECT check_adaptive('SELECT x.id, y.k FROM ad x JOIN ad y ON x.id = y.id
	WHERE x.a = x.b AND y.a = y.b ORDER BY y.k, x.id');
BEGIN;
SET LOCAL braidsort.enable = off;
SELECT cursor_digest('SELECT x.id, y.k FROM ad x JOIN ad y ON x.id = y.id
	WHERE x.a = x.b AND y.a = y.b ORDER BY y.k, x.id',
	ARRAY['next', 'fwd 30000', 'prior', 'last', 'prior', 'abs 3', 'first', 'back 1', 'next']) AS pg \gset
SET LOCAL braidsort.enable = on;
SELECT cursor_digest('SELECT x.id, y.k FROM ad x JOIN ad y ON x.id = y.id
	WHERE x.a = x.b AND y.a = y.b ORDER BY y.k, x.id',
	ARRAY['next', 'fwd 30000', 'prior', 'last', 'prior', 'abs 3', 'first', 'back 1', 'next']) = :'pg'
	AS same_cursor;
COMMIT;
-- ... and where it expects one, it switches (a heap scan, OnePass budget)
SET braidsort.work_mem = '64MB';
SELECT explain_adaptive('SELECT * FROM ad WHERE a = b ORDER BY k, id');
RESET braidsort.work_mem;
SET braidsort.adaptive = always;
-- switching right at the first row (a row larger than work_mem)
SET work_mem = '64kB';
SELECT check_adaptive('SELECT id, repeat(t, 5000) r FROM ad WHERE a = b AND id <= 300 ORDER BY r, id');

-- scrollable cursors: backward scans from the tuplesort that stayed and
-- from the braidsort path it switched to
CREATE FUNCTION check_adaptive_cursor(q text, steps text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	pg text;
	braid text;
BEGIN
	PERFORM set_config('braidsort.enable', 'off', true);
	pg := cursor_digest(q, steps);
	PERFORM set_config('braidsort.enable', 'on', true);
	braid := cursor_digest(q, steps);
	RETURN CASE WHEN pg = braid THEN 'same' ELSE 'DIFFERENT' END;
END $$;
SET work_mem = '4MB';
SELECT check_adaptive_cursor('SELECT id, k FROM ad WHERE a = b AND id <= 2000 ORDER BY k, id',
	ARRAY['next', 'fwd 700', 'prior', 'last', 'next', 'prior', 'abs 3', 'rel -2', 'first',
		  'back 1', 'next', 'abs 1999', 'next', 'next', 'prior']);
SET work_mem = '256kB';
SELECT check_adaptive_cursor('SELECT id, k FROM ad WHERE a = b ORDER BY k, id',
	ARRAY['next', 'fwd 30000', 'prior', 'last', 'next', 'prior', 'abs 3', 'rel -2', 'first',
		  'back 1', 'next', 'abs 49999', 'next', 'next', 'prior']);
-- ... and over a value log, staying and switching
SET braidsort.gather_source = value_log;
SELECT check_adaptive_cursor('SELECT id, k FROM ad WHERE a = b AND id <= 1000 ORDER BY k, id',
	ARRAY['next', 'fwd 700', 'prior', 'last', 'next', 'prior', 'abs 3', 'rel -2', 'first',
		  'back 1', 'next', 'abs 999', 'next', 'next', 'prior']);
SELECT check_adaptive_cursor('SELECT id, k FROM ad WHERE a = b ORDER BY k, id',
	ARRAY['next', 'fwd 30000', 'prior', 'last', 'next', 'prior', 'abs 3', 'rel -2', 'first',
		  'back 1', 'next', 'abs 49999', 'next', 'next', 'prior']);
RESET braidsort.gather_source;

-- mark/restore: both sides of a merge join, one small and one large
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET work_mem = '1MB';
EXPLAIN (COSTS OFF)
SELECT x.id, y.id FROM (SELECT * FROM ad WHERE a = b AND id <= 3000) x
	JOIN (SELECT * FROM ad WHERE a = b) y ON x.k % 1000 = y.k % 1000;
SELECT check_adaptive('SELECT count(*), sum(x.id::bigint * y.id), sum(hashtext(y.pad)) FROM
	(SELECT * FROM ad WHERE a = b AND id <= 3000) x
	JOIN (SELECT * FROM ad WHERE a = b) y ON x.k % 1000 = y.k % 1000');
-- ... both staying PostgreSQL's sorts: mark/restore on the tuplesort
SET work_mem = '4MB';
SELECT explain_adaptive('SELECT count(*) FROM (SELECT * FROM ad WHERE a = b AND id <= 3000) x
	JOIN (SELECT * FROM ad WHERE a = b AND id <= 9000) y ON x.k % 1000 = y.k % 1000');
SELECT check_adaptive('SELECT count(*), sum(x.id::bigint * y.id), sum(hashtext(y.pad)) FROM
	(SELECT * FROM ad WHERE a = b AND id <= 3000) x
	JOIN (SELECT * FROM ad WHERE a = b AND id <= 9000) y ON x.k % 1000 = y.k % 1000');
RESET enable_hashjoin;
RESET enable_nestloop;

-- rescans with changing parameters: a correlated subplan sorting a
-- different part of the table each time, small and large
SET work_mem = '256kB';
SELECT check_adaptive('SELECT g, (SELECT string_agg(id::text, '','' ORDER BY ord)
	FROM (SELECT id, row_number() OVER () ord FROM
		(SELECT id FROM ad WHERE a = b AND id % 25 = g ORDER BY k DESC, id) s) s2)
	FROM generate_series(0, 3) g ORDER BY g');
SELECT check_adaptive('SELECT g, (SELECT md5(string_agg(id::text, '','' ORDER BY ord))
	FROM (SELECT id, row_number() OVER () ord FROM
		(SELECT id FROM ad WHERE a = b AND id > g * 20000 ORDER BY pad, id) s) s2)
	FROM generate_series(0, 2) g ORDER BY g');
-- rewinds: the inner side of a nested loop without parameters
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET work_mem = '4MB';
SELECT check_adaptive('SELECT count(*), sum(x.id * s.id) FROM generate_series(1, 3) x(id)
	LEFT JOIN (SELECT id, k FROM ad WHERE a = b AND id <= 700 ORDER BY k, id) s ON s.k > x.id * 1000');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- a few columns of wider rows: the tuplesort holds the rows PostgreSQL's
-- would (value log form), not whole table rows, so it sorts in memory where
-- PostgreSQL's sort does (whole rows would pass work_mem: switched, or
-- handed back to a tuplesort that spills)
SET work_mem = '2MB';
SELECT explain_adaptive('SELECT id, k FROM ad WHERE a = b AND id <= 20000 ORDER BY k, id');
SELECT check_adaptive('SELECT id, k FROM ad WHERE a = b AND id <= 20000 ORDER BY k, id');

-- a switched sort counts as braidsort's; one that stayed does not
SET work_mem = '256kB';
SELECT braidsort.stats_reset();
SELECT count(*) FROM (SELECT * FROM ad WHERE a = b AND id <= 100 ORDER BY k, id) s;
SELECT count(*) FROM (SELECT * FROM ad WHERE a = b ORDER BY k, id) s;
SELECT counter, value FROM braidsort.stats
WHERE scope = 'global' AND counter LIKE 'sorts_%' AND value > 0 ORDER BY counter;
-- the switch weighs what rows tied on the first key cost PostgreSQL's sort
-- (it compares them by the second key, here a numeric past a text column;
-- its estimates: majors.sql) ...
SET braidsort.adaptive = on;
SET work_mem = '1MB';
CREATE TABLE ad_ties AS
SELECT g AS id, g % 2 AS a, g % 2 AS b, (g % 3)::text AS status, (g % 30000)::numeric AS amount
FROM generate_series(1, 60000) g;
ANALYZE ad_ties;
-- ... over an index-only scan, whose output columns are its index's
-- (the statistics are still the table's): with 3 distinct first keys the
-- planner expects PostgreSQL's sort to cost far more than with 30000 (its
-- comparisons of tied rows), and replaces the first, not the second
CREATE INDEX ad_ties_ios ON ad_ties (a, status, amount);
VACUUM ANALYZE ad_ties;
SET braidsort.sort_threads = 1;			-- the same estimate on any machine
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_incremental_sort = off;
CREATE FUNCTION plan_nodes(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line ~ '(Sort|Scan)' AND line !~ 'Sort (Key|Method)' THEN
			RETURN NEXT line;
		END IF;
	END LOOP;
END $$;
SELECT * FROM plan_nodes('SELECT status, amount FROM ad_ties WHERE a = 1 ORDER BY status, amount DESC');
SELECT * FROM plan_nodes('SELECT status, amount FROM ad_ties WHERE a = 1 ORDER BY amount DESC, status');
DROP FUNCTION plan_nodes(text);
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_incremental_sort;
-- parallel workers show the estimates their switch weighed too, whether
-- they switched or not (in JSON the properties the node's own figures have)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE FUNCTION switched_workers(q text, OUT workers int, OUT switched int, OUT with_estimates int)
LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO plan;
	SELECT count(*),
		   count(*) FILTER (WHERE w ? 'Switched At Rows' OR w ? 'Switch Declined At Rows'),
		   count(*) FILTER (WHERE (w ? 'Switched At Rows' OR w ? 'Switch Declined At Rows')
							AND w ? 'Switch Estimate braidsort'
							AND w ? 'Switch Estimate PostgreSQL')
	INTO workers, switched, with_estimates
	FROM jsonb_array_elements(jsonb_path_query_first(plan,
		'$.** ? (@."Custom Plan Provider" == "BraidSort")')->'Workers') w;
END $$;
CREATE TABLE ad_par AS
SELECT g AS id, g % 2 AS a, g % 2 AS b, md5(g::text) AS t FROM generate_series(1, 200000) g;
ANALYZE ad_par;
SELECT workers > 0 AS workers, switched > 0 AS some_weighed, with_estimates = switched AS all_show_estimates
FROM switched_workers('SELECT * FROM ad_par WHERE a = b ORDER BY a, id DESC');
DROP FUNCTION switched_workers(text);
DROP TABLE ad_par;
SET max_parallel_workers_per_gather = 0;
RESET braidsort.sort_threads;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP TABLE ad_ties;
RESET work_mem;
RESET braidsort.adaptive;
DROP TABLE ad;
