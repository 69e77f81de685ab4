--
-- fallback: an IndexMap that outgrows braidsort.work_mem continues in a
-- tuplesort of <key, ref>; results are unchanged and nothing fails.
--
SET braidsort.force = on;
SET braidsort.work_mem = 64;
SET braidsort.gather_batch = 64;

SELECT * FROM explain_masked('SELECT * FROM longtext ORDER BY t, id');
SELECT check_sort('SELECT * FROM longtext ORDER BY t, id');
SELECT check_sort('SELECT * FROM longtext ORDER BY b DESC, t, id');
SELECT check_sort('SELECT * FROM alltypes ORDER BY bp DESC NULLS LAST, by, i8 DESC, id');
SELECT check_sort('SELECT id, f8 FROM alltypes ORDER BY f8, id');

-- backward scans and rescans of a fallback sort
SELECT check_cursor('SELECT id, t FROM longtext ORDER BY t, id',
	ARRAY['abs 4000', 'prior', 'rel -1000', 'rel -2000', 'next', 'last', 'first',
		  'fwd 10000', 'prior', 'back 3000', 'next']);
SELECT check_sort($q$
	SELECT id, (SELECT string_agg(b, ',') FROM
				 (SELECT b FROM dom_t WHERE a = alltypes.id % 50 + 1 ORDER BY b) s)
	FROM alltypes WHERE id <= 100 ORDER BY id
$q$);
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT check_rows('SELECT l.id, r.id FROM longtext l JOIN longtext r ON l.t = r.t');
RESET enable_hashjoin;
RESET enable_nestloop;
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT check_sort($q$
	SELECT x.id, d.a, d.b FROM (SELECT id FROM alltypes WHERE id <= 5) x,
		(SELECT a, b FROM dom_t ORDER BY a, b OFFSET 0) d
	WHERE d.a = x.id
$q$);
