--
-- types: braidsort forced on vs off over every supported key type, every
-- direction and NULLS placement, multi-column keys, expressions, quals.
--

-- one key column (plus id, so the order is total), all orderings
SELECT c, o, check_sort(format('SELECT id, %s FROM alltypes ORDER BY %s %s, id', c, c, o))
FROM unnest(ARRAY['i2', 'i4', 'i8', 'o', 'f4', 'f8', 'b', 'd', 'tm', 'ts', 'tz',
				  'u', 'by', 'tx', 'vc', 'bp']) WITH ORDINALITY AS cols(c, cn),
	 unnest(ARRAY['', 'DESC', 'NULLS FIRST', 'DESC NULLS LAST']) WITH ORDINALITY AS ords(o, n)
ORDER BY cn, n;

-- duplicates and ties: only the key is output
SELECT c, check_sort(format('SELECT %s FROM alltypes ORDER BY %s', c, c))
FROM unnest(ARRAY['b', 'i2 % 7', 'by', 'tx', 'bp', 'vc', 'd', 'f4 + 0']) c;
SELECT check_sort('SELECT f8 + 0 FROM alltypes ORDER BY f8 DESC');
SELECT check_sort('SELECT b, tx FROM alltypes ORDER BY b DESC, tx NULLS FIRST');

-- multi-column keys in mixed directions
SELECT check_sort('SELECT * FROM alltypes ORDER BY b, tx DESC, f8 NULLS FIRST, id');
SELECT check_sort('SELECT * FROM alltypes ORDER BY bp DESC NULLS LAST, by, i8 DESC, id');
SELECT check_sort('SELECT id, u, ts FROM alltypes ORDER BY ts NULLS FIRST, u DESC, id DESC');
SELECT check_sort('SELECT * FROM alltypes ORDER BY i2 % 5, d DESC, tm, tz, o, id');

-- expressions as keys, expressions in the select list, WHERE quals
SELECT check_sort('SELECT id, tx FROM alltypes ORDER BY length(tx) DESC, tx, id');
SELECT check_sort('SELECT upper(tx), i4 / 2, by || ''\x00''::bytea, id FROM alltypes ORDER BY i4 % 100, lower(tx), id');
SELECT check_sort('SELECT id, f4 FROM alltypes WHERE i4 > 0 AND tx LIKE ''a%'' ORDER BY f4 DESC, id');
SELECT check_sort('SELECT id FROM alltypes WHERE id % 3 = 1 ORDER BY md5(id::text)');
SELECT check_sort('SELECT alltypes FROM alltypes ORDER BY u NULLS FIRST, id');
SELECT check_sort('SELECT tx || ''!'' AS t, 42 AS c FROM alltypes ORDER BY tx || ''!'', c');

-- empty inputs
SELECT check_sort('SELECT * FROM alltypes WHERE id < 0 ORDER BY i4');
CREATE TABLE empty_t (a int, b text);
SELECT check_sort('SELECT * FROM empty_t ORDER BY a, b');

-- domains over supported types are supported
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE TABLE dom_t (a posint, b text);
INSERT INTO dom_t SELECT (g * 17) % 1000 + 1, g::text FROM generate_series(1, 2000) g;
SELECT check_sort('SELECT * FROM dom_t ORDER BY a DESC, b');

-- long text keys that overflow the IndexMap key prefix need tie-breaks
CREATE TABLE longtext (id int, t text COLLATE "C", b bytea);
INSERT INTO longtext
SELECT g, repeat('common-prefix-', 8) || md5((g % 500)::text) || repeat('z', g % 7),
	   decode(repeat('00', 60) || md5((g % 300)::text), 'hex')
FROM generate_series(1, 5000) g;
ANALYZE longtext;
SELECT check_sort('SELECT * FROM longtext ORDER BY t, id');
SELECT check_sort('SELECT * FROM longtext ORDER BY t DESC, id');
SELECT check_sort('SELECT t FROM longtext ORDER BY t');
SELECT check_sort('SELECT * FROM longtext ORDER BY b DESC, t, id');

-- numeric keys are encoded exactly (1.0 and 1.00 are equal)
SELECT check_sort('SELECT id, i4::numeric FROM alltypes ORDER BY i4::numeric, id');
SELECT check_sort('SELECT id, (f8::numeric / 7) n FROM alltypes WHERE f8 <> ''NaN'' ORDER BY n DESC, id');
SELECT check_sort($q$SELECT x FROM (VALUES (1.0::numeric), (1.00), (-0.5), ('NaN'), ('Infinity'), ('-Infinity'), (0), (0.000), (NULL), (1e-30), (-1e30)) v(x) ORDER BY x NULLS FIRST, x::text COLLATE "C"$q$);

-- text under ICU collations: sort keys, with ties broken by the bytes
SELECT c, check_sort(format('SELECT id, tx, vc, bp FROM alltypes ORDER BY tx COLLATE %I, vc COLLATE %I DESC, bp COLLATE %I, id', c, c, c))
FROM unnest(ARRAY['en-x-icu', 'de-x-icu', 'und-x-icu']) c;
SELECT check_sort('SELECT t FROM longtext ORDER BY t COLLATE "en-x-icu"');
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT check_sort('SELECT lower(tx) FROM alltypes ORDER BY tx COLLATE ci');

-- keys without an exact encoder are declined, results unchanged
SELECT check_sort('SELECT id FROM alltypes ORDER BY tm - time ''12:00'', id');
SELECT check_sort('SELECT id, tx FROM alltypes ORDER BY tx USING ~<~, id');
-- a libc collation other than C is compared by strcoll (see collations.sql)
SELECT check_sort('SELECT id, tx FROM alltypes ORDER BY tx COLLATE libc_c_utf8, id');
