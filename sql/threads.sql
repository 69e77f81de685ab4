--
-- threads: IndexMap sorts and gather copies shared among threads give the
-- same rows in the same order.  The table is large enough for the threaded
-- paths (65536 entries, 1024 pages in a gather chunk).
--
CREATE TABLE big_t AS
SELECT g AS id, decode(md5((g % 150000)::text), 'hex') AS k, repeat('v', g % 40) AS v
FROM generate_series(1, 200000) g;
ANALYZE big_t;

SET braidsort.force = on;
SET braidsort.work_mem = '64MB';
SET braidsort.sort_threads = 2;
SELECT * FROM explain_masked('SELECT * FROM big_t ORDER BY k, id');
SELECT check_sort('SELECT * FROM big_t ORDER BY k, id');
SELECT check_sort('SELECT * FROM big_t ORDER BY k DESC, v, id');
SET braidsort.sort_threads = 4;
SELECT check_sort('SELECT id, k FROM big_t ORDER BY v DESC, k, id');
SELECT check_cursor('SELECT id, k FROM big_t ORDER BY k, id',
	ARRAY['abs 150000', 'prior', 'rel -60000', 'last', 'first', 'fwd 199000', 'prior',
		  'back 100000', 'next']);

-- with runs spilled: each run is sorted, sized and coded on the threads,
-- in stripes that code exactly what one thread would (same bytes written)
SET braidsort.work_mem = 4096;
SELECT check_sort('SELECT * FROM big_t ORDER BY k, id');
CREATE FUNCTION device_bytes_written(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line ~ 'Device Bytes Written: ' THEN
			RETURN substring(line FROM 'Device Bytes Written: (\d+)')::bigint;
		END IF;
	END LOOP;
	RETURN NULL;
END $$;
SET braidsort.sort_threads = 1;
CREATE TEMP TABLE written1 AS
SELECT device_bytes_written('SELECT * FROM big_t ORDER BY k, id') AS b;
SET braidsort.sort_threads = 3;
SELECT b > 0 AS spilled, b = device_bytes_written('SELECT * FROM big_t ORDER BY k, id')
	AS same_bytes_on_3_threads
FROM written1;
SELECT check_sort('SELECT * FROM big_t ORDER BY k DESC, id');
SET braidsort.sort_threads = 4;
SET braidsort.work_mem = '64MB';

SET braidsort.sort_threads = 1;
SELECT check_sort('SELECT * FROM big_t ORDER BY k, id');
RESET braidsort.sort_threads;
SET braidsort.sort_threads = 65;
-- braidsort.max_backend_threads caps what any role asks for: set from the
-- server's configuration only, and what a sort runs on (EXPLAIN says so)
SHOW braidsort.max_backend_threads;
SET braidsort.max_backend_threads = 64;
SET braidsort.sort_threads = 64;
CREATE FUNCTION sort_threads_shown(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line ~ 'Sort Threads: ' THEN
			RETURN btrim(line);
		END IF;
	END LOOP;
	RETURN NULL;
END $$;
SELECT sort_threads_shown('SELECT * FROM big_t ORDER BY k, id');
SELECT check_sort('SELECT * FROM big_t ORDER BY k, id');
RESET braidsort.sort_threads;
