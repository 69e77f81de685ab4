--
-- valuelog: Sorts whose input is not a heap scan keep each input row in a
-- value log (in memory while small, on the spill device beyond that) and
-- emit rows straight from it.  Every kind of Sort, braidsort forced on vs
-- off.
--
SET braidsort.force = on;
-- MergePass itself (the write-limited modes are tested in wlimit)
SET braidsort.sort_mode = mergepass;

-- ORDER BY over joins, aggregates, function scans, subqueries, CTEs
-- (a merge join, with statistics whether or not autovacuum has analyzed
-- dom_t meanwhile: the sort's planned method follows the join's estimate)
ANALYZE dom_t;
SET enable_hashjoin = off;
EXPLAIN (COSTS OFF)
SELECT a.id, d.b FROM alltypes a JOIN dom_t d ON a.i4 % 1000 + 1 = d.a ORDER BY a.tx, a.id, d.b;
SELECT check_sort('SELECT a.id, d.b FROM alltypes a JOIN dom_t d ON a.i4 % 1000 + 1 = d.a ORDER BY a.tx, a.id, d.b');
RESET enable_hashjoin;
SELECT check_sort('SELECT i2 % 7, count(*), sum(i8) FROM alltypes GROUP BY 1 ORDER BY 1');
SELECT check_sort('SELECT g, g % 3 FROM generate_series(1, 20000) g ORDER BY g % 3, g DESC');
SELECT check_sort('SELECT * FROM (SELECT tx, count(*) c FROM alltypes GROUP BY tx) s ORDER BY c DESC, tx');
SELECT check_sort('WITH w AS MATERIALIZED (SELECT id, tx FROM alltypes WHERE id % 2 = 0) SELECT * FROM w ORDER BY tx DESC, id');
-- volatile output: the value is kept, not computed again
SELECT check_sort('SELECT id, random() > 2 FROM alltypes ORDER BY 2, id');
SELECT check_sort('SELECT id, (SELECT max(b) FROM dom_t WHERE a = alltypes.id) m FROM alltypes ORDER BY m NULLS FIRST, id');

-- a projection's rows are formed straight into the log (as
-- heap_form_minimal_tuple forms them): every alignment, NULLs in any
-- column, short and long varlenas; in memory and on the spill device
CREATE TEMP VIEW formed AS
SELECT g % 97 AS k, g % 3 = 0 AS b,
	   CASE WHEN g % 5 = 0 THEN NULL ELSE g::int2 END AS s,
	   g::int8 * 1000003 AS i8,
	   CASE WHEN g % 7 = 0 THEN NULL ELSE repeat('x', g % 300) END AS t,
	   g::numeric / 7 AS n,
	   CASE WHEN g % 11 = 0 THEN NULL ELSE g::float8 END AS f, g AS id
FROM generate_series(1, 30000) g;
SET work_mem = '64kB';
SELECT check_sort('SELECT * FROM formed ORDER BY k, id');
SELECT check_sort('SELECT t, s, id FROM formed ORDER BY t DESC NULLS LAST, id');
SET work_mem = '64MB';
SELECT check_sort('SELECT * FROM formed ORDER BY k, id');
RESET work_mem;
SET braidsort.gather_source = value_log;
EXPLAIN (COSTS OFF) SELECT id, i2, tx, i8 FROM alltypes ORDER BY tx, id;
SELECT check_sort('SELECT id, i2, tx, i8 FROM alltypes ORDER BY tx, id');
RESET braidsort.gather_source;
DROP VIEW formed;

-- sorts for GROUP BY, DISTINCT, window functions, set operations
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT tx, count(*) FROM alltypes GROUP BY tx HAVING count(*) > 3;
SELECT check_rows('SELECT tx, count(*) FROM alltypes GROUP BY tx HAVING count(*) > 3');
SELECT check_rows('SELECT DISTINCT bp, b FROM alltypes');
SELECT check_sort('SELECT DISTINCT tx FROM alltypes ORDER BY tx');
SELECT check_rows('SELECT tx FROM alltypes UNION SELECT b FROM dom_t');
SELECT check_rows('SELECT i4 FROM alltypes INTERSECT SELECT a FROM dom_t');
RESET enable_hashagg;
SELECT check_rows('SELECT id, rank() OVER (PARTITION BY b ORDER BY i4), sum(i2) OVER (ORDER BY tx, id) FROM alltypes');
SELECT check_sort('SELECT tx, rank() OVER (PARTITION BY b ORDER BY i4, id) r FROM alltypes ORDER BY 1, 2');

-- merge joins over non-scan inputs
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT check_rows($q$
	SELECT s.k, d.b FROM (SELECT i4 % 1000 + 1 AS k FROM alltypes GROUP BY 1) s
	JOIN dom_t d ON s.k = d.a
$q$);
RESET enable_hashjoin;
RESET enable_nestloop;

-- rescans with changing parameters: a correlated subplan over an aggregate
SELECT check_sort($q$
	SELECT id, (SELECT string_agg(x, ',') FROM
				 (SELECT b || count(*) x FROM dom_t WHERE a <= alltypes.id % 40 + 1
				  GROUP BY b ORDER BY 1) s)
	FROM alltypes WHERE id <= 60 ORDER BY id
$q$);

-- the executor contract over a value log: cursors, rewinds, rescans,
-- mark/restore
SELECT * FROM check_contract('(SELECT g, md5(g::text) AS m FROM generate_series(1, 20000) g)',
							 'm', 'm');

-- parallel: sorts in workers under a Gather Merge (each process's)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET enable_hashagg = off;
SET braidsort.parallel_sort = each;
EXPLAIN (COSTS OFF) SELECT k % 100, count(*) FROM par_t GROUP BY 1;
SELECT check_rows('SELECT k % 100, count(*) FROM par_t GROUP BY 1');
RESET braidsort.parallel_sort;
RESET enable_hashagg;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- a value log larger than its memory share goes to the spill device
SET braidsort.work_mem = 256;
SELECT * FROM explain_masked($q$
	SELECT g, md5(g::text) FROM generate_series(1, 20000) g ORDER BY md5(g::text) DESC
$q$);
SELECT check_sort('SELECT g, md5(g::text) FROM generate_series(1, 20000) g ORDER BY md5(g::text) DESC');
SELECT * FROM check_contract('(SELECT g, md5(g::text) AS m FROM generate_series(1, 20000) g)',
							 'm', 'm');
SELECT check_sort('SELECT a.id, d.b FROM alltypes a JOIN dom_t d ON a.i4 % 1000 + 1 = d.a ORDER BY a.tx, a.id, d.b');
-- rows on the device are packed (a varint length in front, no
-- alignment): short rows, rows of 17 kB and rows over 32 kB (too long for
-- their ref to carry their length) read back through the merge, and by a
-- write-limited sort's selection passes over the log
CREATE VIEW vl_long AS
SELECT g, repeat(chr(65 + g % 26), CASE WHEN g % 500 = 0 THEN 33000 + g
										WHEN g % 500 = 250 THEN 17000
										ELSE g % 300 END) AS r
FROM generate_series(1, 20000) g;
SELECT line FROM explain_masked('SELECT g, r FROM vl_long ORDER BY md5(r) DESC, g') AS line
WHERE line ~ 'Sort Method|Gather Source|Merge Passes|Device Bytes Written';
SELECT check_sort('SELECT g, r FROM vl_long ORDER BY md5(r) DESC, g');
SET braidsort.sort_mode = segment;
SET braidsort.write_intensity = 0;
SELECT line FROM explain_masked('SELECT g, r FROM vl_long ORDER BY md5(r) DESC, g') AS line
WHERE line ~ 'Sort Method|Gather Source|Selection Passes';
SELECT check_sort('SELECT g, r FROM vl_long ORDER BY md5(r) DESC, g');
SET braidsort.sort_mode = lazy;
SELECT check_sort('SELECT g, length(r) FROM vl_long ORDER BY r, g');
RESET braidsort.sort_mode;
RESET braidsort.write_intensity;
DROP VIEW vl_long;
RESET braidsort.work_mem;

-- a table's rows go to the value log straight from their pages (no
-- MinimalTuple made first): in memory and on the device, with NULLs,
-- compressed and TOASTed values
SET braidsort.gather_source = value_log;
CREATE TABLE vl_heap AS
SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE md5(g::text) END AS m,
	   CASE WHEN g % 500 = 0 THEN repeat(md5(g::text), 200)
			WHEN g % 500 = 1 THEN (SELECT string_agg(md5((g * i)::text), '')
								   FROM generate_series(1, 300) i) END AS big
FROM generate_series(1, 20000) g;
SELECT line FROM explain_masked('SELECT * FROM vl_heap ORDER BY m DESC, g') AS line
WHERE line ~ 'Gather Source';
SELECT check_sort('SELECT * FROM vl_heap ORDER BY m DESC, g');
SELECT check_sort('SELECT * FROM alltypes ORDER BY tx DESC, id');
SET braidsort.work_mem = 256;
SELECT line FROM explain_masked('SELECT * FROM vl_heap ORDER BY m DESC, g') AS line
WHERE line ~ 'Gather Source|Merge Passes';
SELECT check_sort('SELECT * FROM vl_heap ORDER BY m DESC, g');
SELECT check_sort('SELECT * FROM alltypes ORDER BY tx DESC, id');
-- rows shorter than the table (a column added since, with a default) and
-- a dropped column
ALTER TABLE vl_heap ADD COLUMN added int DEFAULT 7, DROP COLUMN big;
INSERT INTO vl_heap SELECT g, md5(g::text), g FROM generate_series(20001, 20100) g;
SELECT check_sort('SELECT * FROM vl_heap ORDER BY m DESC, g');
RESET braidsort.work_mem;
SELECT check_sort('SELECT * FROM vl_heap ORDER BY added, m, g');
RESET braidsort.gather_source;
DROP TABLE vl_heap;
SELECT count(*) AS leftover_spill_files FROM pg_ls_tmpdir();
