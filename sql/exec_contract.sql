--
-- exec_contract: what a Sort node must do in the executor (cursors and
-- backward scans, rewinds, rescans, mark/restore: check_contract in
-- setup.sql), plain SQL cursors, EXPLAIN ANALYZE, rescans that read the
-- input again, WHERE CURRENT OF, temporary tables, system columns.  Small
-- gather batches make every test cross batch boundaries.
--
SET braidsort.gather_batch = 64;

-- the executor contract (check_contract in setup.sql) over keys of several
-- types, long keys broken by tie-breaks, an empty input, and a small table
-- sorted again, a few rows at a time, on each of 300 rescans
SELECT * FROM check_contract('alltypes', 'i4, id', 'i4', cols => 'id, i4, tx');
SELECT * FROM check_contract('longtext', 't DESC, id', 't');
SELECT * FROM check_contract('empty_t', 'a', 'a');
SELECT * FROM check_contract('dom_t', 'a, b', 'a', rescans => 300);

-- plain SQL cursors, forward only and scrollable
SET braidsort.force = on;
BEGIN;
DECLARE fwd CURSOR FOR SELECT id, i2 FROM alltypes WHERE id <= 40 ORDER BY i2, id;
FETCH 3 FROM fwd;
FETCH 2 FROM fwd;
MOVE 30 IN fwd;
FETCH 10 FROM fwd;
COMMIT;
BEGIN;
DECLARE scr SCROLL CURSOR FOR SELECT id, i2 FROM alltypes WHERE id <= 40 ORDER BY i2, id;
FETCH LAST FROM scr;
FETCH BACKWARD 3 FROM scr;
FETCH ABSOLUTE 5 FROM scr;
FETCH RELATIVE -2 FROM scr;
COMMIT;

-- merge joins of two tables, and a full join: the inner sort is marked and
-- restored across duplicates
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT check_rows('SELECT a.id, d.b FROM alltypes a JOIN dom_t d ON a.i4 % 1000 + 1 = d.a');
SELECT check_rows('SELECT a.id, b.id FROM alltypes a FULL JOIN alltypes b ON a.bp = b.bp');
RESET enable_hashjoin;
RESET enable_nestloop;

-- EXPLAIN ANALYZE reports what the sort did
SET braidsort.force = on;
SELECT * FROM explain_masked('SELECT * FROM alltypes ORDER BY tx, id');
SELECT * FROM explain_masked('SELECT * FROM longtext WHERE id < 0 ORDER BY t');

-- a correlated subplan rescans without asking for a rewind: the input is read
-- again, as PostgreSQL's Sort does (it may differ: volatile quals, nextval)
SET braidsort.force = on;
CREATE SEQUENCE braid_seq;
EXPLAIN (COSTS OFF)
SELECT o.i, (SELECT max(n) FROM (SELECT nextval('braid_seq') n FROM generate_series(1, 2000)
	ORDER BY 1) x WHERE x.n > o.i) FROM generate_series(1, 3) o(i);
SELECT o.i, (SELECT max(n) FROM (SELECT nextval('braid_seq') n FROM generate_series(1, 2000)
	ORDER BY 1) x WHERE x.n > o.i) FROM generate_series(1, 3) o(i);
SELECT nextval('braid_seq');
CREATE SEQUENCE braid_seq2;
SELECT o.i, (SELECT count(*) FROM (SELECT a FROM dom_t WHERE nextval('braid_seq2') > 0
	ORDER BY a OFFSET 0) x WHERE x.a > o.i) FROM generate_series(1, 3) o(i);
SELECT nextval('braid_seq2');

-- WHERE CURRENT OF through a sort is refused, as with PostgreSQL's Sort
BEGIN;
DECLARE cc CURSOR FOR SELECT * FROM dom_t ORDER BY a, b;
FETCH 1 FROM cc;
UPDATE dom_t SET b = b WHERE CURRENT OF cc;
ROLLBACK;

-- temporary tables gather through the session's local buffers
SET temp_buffers = '800kB';
CREATE TEMP TABLE temp_big AS SELECT g AS id, md5(g::text) AS t FROM generate_series(1, 30000) g;
SELECT check_sort('SELECT * FROM temp_big ORDER BY t');

-- the gather copies tuples without the header fields only system columns
-- read (xmin, xmax, cmin, cmax), unless the query reads them or the whole
-- row: rows of several transactions, lengths and NULL patterns, in many
-- small batches, with and without those columns
CREATE TABLE hdr_t (id int, t text, n int, pad text);
INSERT INTO hdr_t SELECT g, md5(g::text), CASE WHEN g % 5 = 0 THEN NULL ELSE g END,
	CASE WHEN g % 3 = 0 THEN NULL ELSE repeat('p', g % 97) END
	FROM generate_series(1, 12000) g;
UPDATE hdr_t SET t = t || 'u', pad = repeat('q', id % 41) WHERE id % 7 = 0;
DELETE FROM hdr_t WHERE id % 11 = 0;
SET braidsort.work_mem = 64;
SELECT check_sort('SELECT id, t, n, pad FROM hdr_t ORDER BY t');
SELECT check_sort('SELECT ctid, tableoid::regclass, id, pad FROM hdr_t ORDER BY t');
SELECT check_sort('SELECT xmin, xmax, cmin, cmax, id, n FROM hdr_t ORDER BY t');
SELECT check_sort('SELECT h.xmin = (SELECT min(xmin::text::bigint) FROM hdr_t)::text::xid, id FROM hdr_t h ORDER BY t');
SELECT check_sort('SELECT h FROM hdr_t h ORDER BY t');
SELECT check_sort('SELECT row_to_json(h), id FROM hdr_t h WHERE n IS NULL ORDER BY pad, id');
SELECT * FROM check_contract('hdr_t', 't', 't', cols => 'id, n, pad');
SELECT * FROM check_contract('hdr_t', 't', 't', cols => 'xmin, id');
RESET braidsort.work_mem;

-- rows are refetched by TID only where the row refetched is the row
-- scanned: not a system catalog's (VACUUM and ANALYZE overwrite pg_class's
-- rows in place), nor xmax, cmin or cmax (later lockers and updaters
-- overwrite them).  Even when asked to, these sorts keep a value log.
SET braidsort.force = on;
SET braidsort.gather_source = heap_tid;
EXPLAIN (COSTS OFF) SELECT relname, relpages FROM pg_class ORDER BY relpages DESC, oid;
EXPLAIN (COSTS OFF) SELECT xmax, id FROM hdr_t ORDER BY t;
EXPLAIN (COSTS OFF) SELECT cmin, id FROM hdr_t ORDER BY t;
EXPLAIN (COSTS OFF) SELECT xmin, id FROM hdr_t ORDER BY t;
RESET braidsort.gather_source;
RESET braidsort.force;
