--
-- exec_contract: cursors, backward scans, rescans, mark/restore, EXPLAIN
-- ANALYZE.  Small gather batches make every test cross batch boundaries.
--
SET braidsort.gather_batch = 64;

-- run a cursor script with braidsort off and forced on; compare the rows
CREATE FUNCTION cursor_digest(q text, steps text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r record;
	out text := '';
	step text;
	n int;
BEGIN
	OPEN c SCROLL FOR EXECUTE q;
	FOREACH step IN ARRAY steps LOOP
		n := coalesce(nullif(split_part(step, ' ', 2), '')::int, 0);
		CASE split_part(step, ' ', 1)
			WHEN 'next' THEN FETCH NEXT FROM c INTO r;
			WHEN 'prior' THEN FETCH PRIOR FROM c INTO r;
			WHEN 'first' THEN FETCH FIRST FROM c INTO r;
			WHEN 'last' THEN FETCH LAST FROM c INTO r;
			WHEN 'abs' THEN FETCH ABSOLUTE n FROM c INTO r;
			WHEN 'rel' THEN FETCH RELATIVE n FROM c INTO r;
			WHEN 'fwd' THEN MOVE FORWARD n FROM c;
			WHEN 'back' THEN MOVE BACKWARD n FROM c;
		END CASE;
		out := out || step || '=' || CASE WHEN FOUND THEN coalesce(r::text, 'null') ELSE 'none' END || ';';
	END LOOP;
	CLOSE c;
	RETURN md5(out);
END $$;

CREATE FUNCTION check_cursor(q text, steps text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	pg text;
	braid text;
BEGIN
	PERFORM set_config('braidsort.enable', 'off', true);
	pg := cursor_digest(q, steps);
	PERFORM set_config('braidsort.enable', 'on', true);
	PERFORM set_config('braidsort.force', 'on', true);
	braid := cursor_digest(q, steps);
	RETURN CASE WHEN pg = braid THEN 'same' ELSE 'DIFFERENT' END
		|| CASE WHEN plan_uses_braidsort(q) THEN ', braidsort' ELSE ', postgres only' END;
END $$;

SELECT check_cursor('SELECT id, i4, tx FROM alltypes ORDER BY i4, id',
	ARRAY['next', 'next', 'prior', 'prior', 'prior', 'next', 'abs 2000', 'prior',
		  'rel -700', 'rel 1500', 'last', 'next', 'prior', 'prior', 'first', 'prior',
		  'next', 'fwd 3000', 'back 2999', 'next', 'abs -1', 'abs 1', 'fwd 100000',
		  'prior', 'back 100000', 'next']);
SELECT check_cursor('SELECT * FROM longtext ORDER BY t DESC, id',
	ARRAY['abs 4000', 'prior', 'rel -1000', 'rel -2000', 'next', 'last', 'first']);
SELECT check_cursor('SELECT * FROM empty_t ORDER BY a',
	ARRAY['next', 'prior', 'last', 'first', 'abs 3']);

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

-- rescans with changing parameters (correlated subplan)
SELECT check_sort($q$
	SELECT id, (SELECT string_agg(b, ',') FROM
				 (SELECT b FROM dom_t WHERE a = alltypes.id % 50 + 1 ORDER BY b) s)
	FROM alltypes WHERE id <= 300 ORDER BY id
$q$);

-- rescans without parameter changes (inner side of a nested loop)
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT x.id, d.a, d.b FROM (SELECT id FROM alltypes WHERE id <= 5) x,
	(SELECT a, b FROM dom_t ORDER BY a, b OFFSET 0) d
WHERE d.a = x.id;
SELECT check_sort($q$
	SELECT x.id, d.a, d.b FROM (SELECT id FROM alltypes WHERE id <= 5) x,
		(SELECT a, b FROM dom_t ORDER BY a, b OFFSET 0) d
	WHERE d.a = x.id
$q$);
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- merge joins: the inner sort is marked and restored across duplicates
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT check_rows('SELECT a.id, d.b FROM alltypes a JOIN dom_t d ON a.i4 % 1000 + 1 = d.a');
SELECT check_rows('SELECT l.id, r.id FROM longtext l JOIN longtext r ON l.t = r.t');
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
SELECT check_cursor('SELECT id, n, pad FROM hdr_t ORDER BY t',
	ARRAY['abs 5000', 'prior', 'rel -3000', 'next', 'last', 'back 200', 'first']);
SELECT check_cursor('SELECT xmin, id FROM hdr_t ORDER BY t',
	ARRAY['abs 5000', 'prior', 'rel -3000', 'next', 'last', 'back 200', 'first']);
RESET braidsort.work_mem;
