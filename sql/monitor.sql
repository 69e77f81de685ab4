--
-- monitor: what a DBA sees of braidsort's sorts: braidsort.progress while
-- they run (read from the sorting session itself, so the phases are
-- deterministic; other sessions, roles and waits are tested by TAP:
-- test/t/008_progress.pl), and each parallel worker's figures in EXPLAIN
-- ANALYZE.
--
SET braidsort.force = on;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE mon_t AS SELECT g AS id, (g * 7919) % 100003 AS k FROM generate_series(1, 20000) g;
ANALYZE mon_t;

-- the view's columns, and nothing of this backend outside a sort
SELECT * FROM braidsort.progress WHERE pid = pg_backend_pid();

-- while the node returns rows
SELECT count(*), min(p), max(p)
FROM (SELECT k, (SELECT format('%s: %s of %s rows read, %s runs, %s batches, leader %s, waiting %s, started %s',
							   phase, rows_read, rows_estimated, runs, batches_gathered,
							   coalesce(leader_pid::text, 'none'), coalesce(waiting, 'no'),
							   CASE WHEN started >= now() THEN 'in' ELSE 'before' END || ' this statement')
				 FROM braidsort.progress WHERE pid = pg_backend_pid()) AS p
	  FROM (SELECT * FROM mon_t ORDER BY k OFFSET 0) s) x;

-- a node that returned its last row shows "done" until it ends: the first
-- subquery reads the sorted CTE to its end, the second looks
WITH s AS MATERIALIZED (SELECT * FROM mon_t ORDER BY k)
SELECT (SELECT count(*) FROM s) AS n,
	   (SELECT string_agg(phase || ' ' || rows_read, ', ')
		FROM braidsort.progress WHERE pid = pg_backend_pid()) AS progress;

-- a spilling sort counts its runs and merge passes
SET braidsort.work_mem = 64;
SELECT count(*), min(p), max(p)
FROM (SELECT k, (SELECT format('%s: %s rows read, runs %s, merge passes %s', phase, rows_read,
							   CASE WHEN runs > 1 THEN 'some' ELSE runs::text END,
							   CASE WHEN merge_passes > 0 THEN 'some' ELSE merge_passes::text END)
				 FROM braidsort.progress WHERE pid = pg_backend_pid()) AS p
	  FROM (SELECT * FROM mon_t ORDER BY k OFFSET 0) s) x;
RESET braidsort.work_mem;

-- both inputs of a merge join at once, one row each
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF)
SELECT a.id FROM mon_t a JOIN mon_t b ON a.k = b.k;
-- (the phases listed in node order by the aggregate, not by a third sort)
BEGIN;
SELECT keep_aggregate_sorts();
SELECT count(*), min(p)
FROM (SELECT a.id, (SELECT string_agg(phase, ', ' ORDER BY node)
					FROM braidsort.progress WHERE pid = pg_backend_pid()) AS p
	  FROM mon_t a JOIN mon_t b ON a.k = b.k) x;
COMMIT;
RESET enable_hashjoin;
RESET enable_nestloop;

-- and gone once the statement is over
SELECT count(*) FROM braidsort.progress WHERE pid = pg_backend_pid();

--
-- EXPLAIN ANALYZE under Gather Merge: each worker's figures, as for a Sort
--
CREATE TABLE mon_par AS
SELECT g AS id, (g * 7919) % 100003 AS k, md5(g::text) AS t FROM generate_series(1, 100000) g;
ANALYZE mon_par;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
-- (a BraidSort in each process, not one in the Gather Merge's place)
SET braidsort.parallel_sort = each;

-- from the JSON plan of q: the rows sorted by the leader and its workers
-- together, and whether there is one "Workers" entry with figures for
-- each worker launched and figures for the leader exactly when it sorted
-- (it did unless workers ran and parallel_leader_participation is off).
-- Whatever number of workers could be launched, the answers are the same.
CREATE FUNCTION sorted_by(q text, OUT total bigint, OUT one_per_worker boolean,
						  OUT leader_shown boolean)
LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
	node jsonb;
	launched int;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO plan;
	node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "BraidSort")');
	launched := coalesce(jsonb_path_query_first(plan, '$.**."Workers Launched"')::int, 0);
	total := coalesce((node->>'Rows Sorted')::bigint, 0) +
		coalesce((SELECT sum((w->>'Rows Sorted')::bigint)
				  FROM jsonb_array_elements(node->'Workers') w), 0);
	one_per_worker := (SELECT count(*) FROM jsonb_array_elements(node->'Workers') w
					   WHERE w ? 'Rows Sorted' AND w ? 'Sort Method' AND w ? 'Device Bytes Written'
					   AND NOT w ? 'Key Prefix') = launched;
	leader_shown := (node ? 'Rows Sorted') =
		(launched = 0 OR current_setting('parallel_leader_participation')::boolean);
END $$;

-- the text format: a "Worker N:" line for each worker launched, with
-- VERBOSE on the line after the worker's own "actual" line
CREATE FUNCTION worker_lines(q text, verb boolean) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	line text;
	launched int := 0;
	lines int := 0;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF, VERBOSE '
		|| verb || ') ' || q LOOP
		IF line ~ '^\s+Workers Launched: \d+$' THEN
			launched := substring(line FROM '\d+')::int;
		ELSIF NOT verb AND line ~ '^\s+Worker \d+:  Sort Method: braid \w+  Rows Sorted: \d+  IndexMap Memory: \d+ kB' THEN
			lines := lines + 1;
		ELSIF verb AND line ~ '^\s+Sort Method: braid \w+  Rows Sorted: \d+  IndexMap Memory: \d+ kB' THEN
			lines := lines + 1;
		END IF;
	END LOOP;
	RETURN lines = launched;
END $$;

EXPLAIN (COSTS OFF) SELECT * FROM mon_par ORDER BY k, id;
SELECT * FROM sorted_by('SELECT * FROM mon_par ORDER BY k, id');
SELECT worker_lines('SELECT * FROM mon_par ORDER BY k, id', false);
SELECT worker_lines('SELECT * FROM mon_par ORDER BY k, id', true);
-- spilling
SET braidsort.work_mem = 256;
SELECT * FROM sorted_by('SELECT * FROM mon_par ORDER BY t');
RESET braidsort.work_mem;
-- a value log (the input is a join)
EXPLAIN (COSTS OFF) SELECT a.id, a.k FROM mon_par a JOIN mon_t b ON a.id = b.id ORDER BY a.t;
SELECT * FROM sorted_by('SELECT a.id, a.k FROM mon_par a JOIN mon_t b ON a.id = b.id ORDER BY a.t');
-- the leader sorts nothing: only the workers' figures
SET parallel_leader_participation = off;
SELECT * FROM sorted_by('SELECT * FROM mon_par ORDER BY k, id');
SELECT worker_lines('SELECT * FROM mon_par ORDER BY k, id', false);
RESET parallel_leader_participation;

-- the XML format nests them well
CREATE FUNCTION xml_workers(q text, OUT well_formed boolean, OUT one_per_worker boolean)
LANGUAGE plpgsql AS $$
DECLARE
	x xml;
	ns text[] := ARRAY[ARRAY['e', 'http://www.postgresql.org/2009/explain']];
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, FORMAT XML) ' || q INTO x;
	well_formed := xml_is_well_formed_document(x::text);
	one_per_worker := (xpath('count(//e:Worker[e:Rows-Sorted])', x, ns))[1]::text::int =
		coalesce((xpath('//e:Workers-Launched/text()', x, ns))[1]::text::int, 0);
END $$;
SELECT * FROM xml_workers('SELECT * FROM mon_par ORDER BY k');

RESET braidsort.parallel_sort;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- the whole plan in one invisible worker: its figures are the node's own
-- (the leader, which did not sort, used to show none)
-- (force_parallel_mode became debug_parallel_query in PostgreSQL 16)
SELECT CASE WHEN current_setting('server_version_num')::int >= 160000
	THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END AS debug_parallel \gset
SET :debug_parallel = regress;
SELECT * FROM explain_masked('SELECT * FROM mon_t ORDER BY k');
RESET :debug_parallel;

RESET max_parallel_workers_per_gather;
RESET braidsort.force;

-- where this session's spill files go: the database's default tablespace,
-- no setting, no profile
SELECT setting, tablespace, setting_unusable, directory,
	   device ~ '^\d+:\d+$' AS device, free_mb > 0 AS room, profile, persistent_memory
FROM braidsort.spill_location;
