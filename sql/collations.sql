--
-- Text under libc collations other than C: one sort key may be one, ordered
-- by the collation's comparator (strcoll_l, then strcmp for strings it
-- calls equal) in the sort, its tie-breaks and the merge, with keys before
-- it in the IndexMap prefix and keys after it compared from the full key.
-- Every query orders totally (equal sort keys carry equal rows).
--
CREATE COLLATION en_libc (provider = libc, locale = 'en_US.UTF-8');
CREATE COLLATION sv_libc (provider = libc, locale = 'sv_SE.UTF-8');
CREATE COLLATION de_libc (provider = libc, locale = 'de_DE.UTF-8');

CREATE TABLE words (id int, grp int, t text, v varchar(400), b char(12), pad text);
INSERT INTO words
SELECT g, g % 3,
	   w || CASE WHEN g % 5 = 0 THEN '' ELSE (g % 11)::text END,
	   w || (g % 4)::text,
	   left(w, 8) || CASE WHEN g % 2 = 0 THEN '  ' ELSE '' END,
	   repeat('p', 40)
FROM generate_series(1, 30000) g,
	 LATERAL (SELECT (ARRAY['apple', 'Apple', 'APPLE', 'äpple', 'Äpfel', 'apfel', 'zebra', 'Zebra',
				 'ångström', 'Ångström', 'angstrom', 'öl', 'Öl', 'oil', 'ol', 'a b', 'ab',
				 'a-b', 'a_b', '', ' x', 'x ', 'résumé', 'resume', 'Résumé', 'straße',
				 'strasse', 'Straße', 'ß', 'ss', 'æble', 'aeble', 'œuvre', 'oeuvre',
				 '1st', '10th', '2nd', 'I', 'ı', 'İ', 'i', '日本', '中文', 'ǅ', 'dž',
				 repeat('long', 90) || 'a', repeat('long', 90) || 'B'])[1 + (g * 7) % 47]) s(w);
INSERT INTO words VALUES (0, 0, NULL, NULL, NULL, 'null'), (-1, 1, NULL, NULL, NULL, 'null');
ANALYZE words;

-- in memory (OnePass), every direction and NULL placement
SELECT check_sort('SELECT t FROM words ORDER BY t COLLATE en_libc');
SELECT check_sort('SELECT t FROM words ORDER BY t COLLATE en_libc DESC');
SELECT check_sort('SELECT t FROM words ORDER BY t COLLATE sv_libc NULLS FIRST');
SELECT check_sort('SELECT t FROM words ORDER BY t COLLATE de_libc DESC NULLS LAST');
SELECT check_sort('SELECT t FROM words ORDER BY t COLLATE libc_c_utf8');
SELECT check_sort('SELECT v FROM words ORDER BY v COLLATE sv_libc');
SELECT check_sort('SELECT b FROM words ORDER BY b COLLATE en_libc');
-- earlier keys in the prefix, the collated one last
SELECT check_sort('SELECT grp, t FROM words ORDER BY grp, t COLLATE en_libc');
SELECT check_sort('SELECT grp, t FROM words ORDER BY grp DESC, t COLLATE sv_libc DESC');
SELECT check_sort('SELECT pad, t FROM words ORDER BY pad COLLATE "C", t COLLATE de_libc');
SELECT check_sort('SELECT grp, t FROM words ORDER BY grp, t COLLATE sv_libc');
-- keys after the collated one
SELECT check_sort('SELECT t, id FROM words ORDER BY t COLLATE en_libc, id');
SELECT check_sort('SELECT t, id FROM words ORDER BY t COLLATE sv_libc DESC NULLS LAST, id DESC');
SELECT check_sort('SELECT grp, b, id FROM words ORDER BY grp, b COLLATE de_libc, id');
SELECT check_sort('SELECT t, v, id FROM words ORDER BY t COLLATE en_libc, v COLLATE "C", id');

-- MergePass: runs merged with the collation's comparator, several passes
SET braidsort.work_mem = 64;
SET work_mem = 64;
SELECT check_sort('SELECT t FROM words ORDER BY t COLLATE en_libc');
SELECT check_sort('SELECT grp, t FROM words ORDER BY grp, t COLLATE sv_libc DESC NULLS LAST');
SELECT check_sort('SELECT t, id FROM words ORDER BY t COLLATE en_libc, id DESC');
-- value log: the input is not a plain table scan
SELECT check_sort('SELECT t FROM (SELECT t FROM words UNION ALL SELECT v FROM words) s ORDER BY t COLLATE de_libc');
SELECT check_sort('SELECT t, count(*) FROM words GROUP BY t ORDER BY t COLLATE en_libc');
-- a cursor, backward over the merged result
BEGIN;
SET LOCAL braidsort.force = on;
DECLARE c SCROLL CURSOR FOR SELECT t FROM words ORDER BY t COLLATE en_libc;
FETCH LAST FROM c;
FETCH BACKWARD 3 FROM c;
FETCH ABSOLUTE 2 FROM c;
COMMIT;
RESET braidsort.work_mem;
RESET work_mem;

-- merge joins on a collated key (mark/restore on both inputs)
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT check_sort('SELECT a.t, a.id AS ida, b.id AS idb FROM words a JOIN words b ON a.t = b.t COLLATE en_libc WHERE a.id % 97 = 0 AND b.id % 89 = 0 ORDER BY a.t COLLATE en_libc, 2, 3');
RESET enable_hashjoin;
RESET enable_nestloop;

SET braidsort.force = on;
EXPLAIN (COSTS OFF) SELECT t, id FROM words ORDER BY t COLLATE en_libc, id;
-- two collated keys: PostgreSQL's Sort stays
EXPLAIN (COSTS OFF) SELECT t, v FROM words ORDER BY t COLLATE en_libc, v COLLATE sv_libc;
RESET braidsort.force;
-- no normalized key: it is not ordered by bytes
SELECT braidsort.normalized_key('abc'::text COLLATE en_libc);
