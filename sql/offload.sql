--
-- offload: a OnePass sort whose tuples need several gather batches writes
-- its sorted refs to the spill device, so that the whole budget holds
-- gathered tuples and the gather makes fewer passes over the table.  The
-- refs are then read back from the device by every consumer: the forward
-- gather, backward scans and cursors, rewinds, merge-join mark/restore.
--
-- wide rows (about 430 bytes), 20000 of them: the IndexMap (16-byte entries,
-- 320 kB) fits a 1 MB budget, the 8.6 MB of tuples need about ten batches
CREATE TABLE wide_t (id int, k int, g int, pad text COLLATE "C");
INSERT INTO wide_t
SELECT i, (i * 7919) % 5003, i % 97, repeat(chr(65 + i % 26), 400)
FROM generate_series(1, 20000) i;
ANALYZE wide_t;
SET braidsort.work_mem = 1024;
-- these are the heap TID gather's refs (a value log could be cheaper here)
SET braidsort.gather_source = heap_tid;

-- the refs go to the device: Device Bytes Written is exactly 8 bytes a row
SET braidsort.force = on;
SELECT * FROM explain_masked('SELECT id, k, length(pad) FROM wide_t ORDER BY k, id');

-- with the refs kept in memory (a gather batch cap makes both layouts need
-- the same passes) nothing is written
SET braidsort.gather_batch = 512;
SELECT line FROM explain_masked('SELECT * FROM wide_t ORDER BY k, id') line
WHERE line ~ 'Sorted Refs|Device Bytes Written|Gather Batches';
RESET braidsort.gather_batch;

-- results against PostgreSQL's sort
SELECT check_sort('SELECT * FROM wide_t ORDER BY k, id');
SELECT check_sort('SELECT id, pad FROM wide_t ORDER BY k DESC, id DESC');
SELECT check_sort('SELECT id, k FROM wide_t WHERE g < 50 ORDER BY g, k, id');
SELECT check_sort('SELECT id, left(pad, 3) FROM wide_t ORDER BY pad, id OFFSET 19990');

-- the executor contract: cursors, rewinds, rescans and merge-join
-- mark/restore read the refs from the device across batches
SELECT * FROM check_contract('wide_t', 'k, id', 'k', cols => 'id, k, pad');
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT check_rows('SELECT a.id, b.id FROM wide_t a FULL JOIN wide_t b ON a.g = b.k');
RESET enable_hashjoin;
RESET enable_nestloop;

-- a temp_file_limit too small for the refs keeps them in memory instead of
-- failing the sort (PostgreSQL's sort fits its work_mem here)
SET work_mem = '64MB';
SET temp_file_limit = 64;
SELECT line FROM explain_masked('SELECT * FROM wide_t ORDER BY k, id') line
WHERE line ~ 'Sorted Refs|Device Bytes Written';
SELECT check_sort('SELECT * FROM wide_t ORDER BY k, id');
RESET temp_file_limit;
RESET work_mem;

-- a temporary table lives in local buffers, of which the gather pins only a
-- few at a time: pages are streamed to a copier thread one by one
CREATE TEMP TABLE wide_tmp AS SELECT * FROM wide_t;
ANALYZE wide_tmp;
SET braidsort.work_mem = 4096;
SELECT check_sort('SELECT * FROM wide_tmp ORDER BY k, id');
SELECT check_sort('SELECT id, k FROM wide_tmp WHERE g % 3 = 0 ORDER BY pad DESC, id');
SELECT * FROM check_contract('wide_tmp', 'k, id', 'k', cols => 'id, k, pad');
SET braidsort.sort_threads = 1;
SELECT check_sort('SELECT * FROM wide_tmp ORDER BY k DESC, id');
RESET braidsort.sort_threads;
SET braidsort.work_mem = 1024;

-- nothing is left behind
SELECT count(*) AS leftover_spill_files FROM pg_ls_tmpdir();
RESET braidsort.work_mem;
RESET braidsort.force;
