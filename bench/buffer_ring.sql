-- buffer_ring.sql: does the late gather keep to its buffer ring?
--
-- After one sort of a table larger than half of shared_buffers (which the
-- gather reads through a BAS_BULKREAD ring, with the read stream on or off),
-- how many pages of a prewarmed table are still in shared buffers, beside
-- PostgreSQL's own sort of the same table.  Run with psql as a superuser in
-- a fresh cluster with shared_buffers = 128MB, braidsort preloaded and
-- braidsort.spill_tablespace set, pg_buffercache and pg_prewarm available
-- (PostgreSQL's contrib).  The read stream exists from PostgreSQL 17 on;
-- before, both braidsort runs read block by block.
\set QUIET on
\pset pager off
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
DROP TABLE IF EXISTS big, hot;
CREATE TABLE big AS SELECT md5(i::text) k, repeat('x', 90) pad FROM generate_series(1, 3000000) i;
CREATE TABLE hot AS SELECT i, repeat('y', 100) pad FROM generate_series(1, 850000) i;
VACUUM ANALYZE big;
VACUUM ANALYZE hot;
SELECT pg_size_pretty(pg_relation_size('big')) AS big, pg_size_pretty(pg_relation_size('hot')) AS hot,
       current_setting('shared_buffers') AS shared_buffers, version();
CREATE OR REPLACE FUNCTION pg_temp.occupancy() RETURNS TABLE (rel text, buffers bigint)
LANGUAGE sql AS $$
	SELECT c.relname::text, count(*) FROM pg_buffercache b JOIN pg_class c ON c.relfilenode = b.relfilenode
	WHERE c.relname IN ('big', 'hot') GROUP BY 1 ORDER BY 1 $$;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SET braidsort.force = on;

SELECT pg_prewarm('hot') AS hot_pages;
SET braidsort.enable = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM big ORDER BY k;
SELECT 'PostgreSQL''s sort' AS after, * FROM pg_temp.occupancy();
RESET braidsort.enable;

SELECT pg_prewarm('hot') AS hot_pages;
SET braidsort.gather_read_stream = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM big ORDER BY k;
SELECT 'braidsort, block by block' AS after, * FROM pg_temp.occupancy();

SELECT pg_prewarm('hot') AS hot_pages;
SET braidsort.gather_read_stream = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM big ORDER BY k;
SELECT 'braidsort, read stream' AS after, * FROM pg_temp.occupancy();
