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

-- with runs spilled: each run is sorted on the threads
SET braidsort.work_mem = 4096;
SELECT check_sort('SELECT * FROM big_t ORDER BY k, id');
SET braidsort.work_mem = '64MB';

SET braidsort.sort_threads = 1;
SELECT check_sort('SELECT * FROM big_t ORDER BY k, id');
RESET braidsort.sort_threads;
SET braidsort.sort_threads = 65;
