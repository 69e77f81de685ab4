--
-- Text under libc collations other than C: any sort key may be one, ordered
-- by the collation's comparator (strcoll_l, then strcmp for strings it
-- calls equal) in the sort, its tie-breaks and the merge, with keys before
-- the first in the IndexMap prefix and the others compared from the full
-- key.  Every query orders totally (equal sort keys carry equal rows).
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
EXPLAIN (COSTS OFF) SELECT t, v FROM words ORDER BY t COLLATE en_libc, v COLLATE sv_libc;
RESET braidsort.force;

-- several collated keys: names, with many ties on the first key, NULLs,
-- strings alike but for case and accents, and long ones
CREATE TABLE people (id int, last text, first text, city varchar(60), code char(6), n int);
INSERT INTO people
SELECT g,
	   CASE WHEN g % 53 = 0 THEN NULL
			ELSE (ARRAY['Müller', 'Muller', 'MÜLLER', 'Mueller', 'Öberg', 'Oberg', 'Åberg', 'Aberg',
						'Zorn', 'zorn', 'van Dijk', 'Van Dijk', 'vandijk', 'O''Brien', 'OBrien',
						'Ängel', 'Angel', 'Ångel', 'Straße', 'Strasse', '',
						repeat('Lång', 80)])[1 + (g * 13) % 22] END,
	   CASE WHEN g % 41 = 0 THEN NULL
			ELSE (ARRAY['Anna', 'anna', 'Änna', 'Åsa', 'Asa', 'Ósk', 'Oskar', 'Øystein', 'Eve',
						'Ève', 'eve', 'Zoë', 'Zoe', 'ZOE', ' Bo', 'Bo ', 'Bö',
						repeat('x', 300) || 'a', repeat('x', 300) || 'B'])[1 + (g * 7) % 19] END,
	   CASE WHEN g % 29 = 0 THEN NULL
			ELSE (ARRAY['Göteborg', 'Goteborg', 'Malmö', 'Malmo', 'Århus', 'Aarhus', 'Zürich',
						'Zurich'])[1 + (g * 5) % 8] END,
	   (ARRAY['ä', 'a ', 'å', 'aa', 'Z', 'z'])[1 + g % 6],
	   g % 4
FROM generate_series(1, 20000) g;
ANALYZE people;

-- OnePass: two and three collated keys in each locale, every direction
SELECT check_sort('SELECT last, first FROM people ORDER BY last COLLATE en_libc, first COLLATE en_libc');
SELECT check_sort('SELECT last, first FROM people ORDER BY last COLLATE sv_libc, first COLLATE sv_libc');
SELECT check_sort('SELECT last, first FROM people ORDER BY last COLLATE de_libc, first COLLATE de_libc');
SELECT check_sort('SELECT last, first FROM people ORDER BY last COLLATE en_libc DESC, first COLLATE sv_libc NULLS FIRST');
SELECT check_sort('SELECT last, first FROM people ORDER BY last COLLATE de_libc NULLS FIRST, first COLLATE en_libc DESC NULLS LAST');
SELECT check_sort('SELECT last, first, city FROM people ORDER BY last COLLATE sv_libc, first COLLATE sv_libc, city COLLATE sv_libc');
SELECT check_sort('SELECT last, first, city FROM people ORDER BY last COLLATE de_libc DESC, first COLLATE de_libc, city COLLATE en_libc DESC');
-- mixed with other keys before, between and after
SELECT check_sort('SELECT n, last, first FROM people ORDER BY n, last COLLATE en_libc, first COLLATE en_libc');
SELECT check_sort('SELECT last, n, first, id FROM people ORDER BY last COLLATE sv_libc, n DESC, first COLLATE de_libc, id');
SELECT check_sort('SELECT code, last, code, city, id FROM people ORDER BY code COLLATE sv_libc, last COLLATE "C", city COLLATE de_libc, id');
SELECT check_sort('SELECT n, last, id % 3, first, city FROM people ORDER BY n DESC, last COLLATE en_libc, 3, first COLLATE sv_libc DESC, city COLLATE de_libc');
-- MergePass: merged with the same comparator
SET braidsort.work_mem = 64;
SET work_mem = 64;
SELECT check_sort('SELECT last, first FROM people ORDER BY last COLLATE en_libc, first COLLATE en_libc');
SELECT check_sort('SELECT last, first, city FROM people ORDER BY last COLLATE sv_libc DESC, first COLLATE sv_libc, city COLLATE de_libc NULLS FIRST');
SELECT check_sort('SELECT n, last, first, id FROM people ORDER BY n, last COLLATE de_libc, first COLLATE de_libc DESC, id');
-- value log
SELECT check_sort('SELECT last, first FROM (SELECT last, first FROM people UNION ALL SELECT first, last FROM people) s ORDER BY last COLLATE en_libc, first COLLATE sv_libc');
-- the merge's memos (a tree node's last two strings ordered by a
-- collation) hold one column's order: the same two strings are ordered
-- one way in Swedish (Zorn before Ängel) and the other in English
CREATE TABLE memo_pairs AS
SELECT g AS id, (ARRAY['Ängel', 'Zorn', 'Angel'])[1 + (g * 7) % 3] AS a,
	   (ARRAY['Zorn', 'Ängel', 'Angel'])[1 + (g * 11 + g / 5) % 3] AS b
FROM generate_series(1, 6000) g;
SELECT check_sort('SELECT a, b, id FROM memo_pairs ORDER BY a COLLATE sv_libc, b COLLATE en_libc, id');
SELECT check_sort('SELECT a, b, id FROM memo_pairs ORDER BY a COLLATE en_libc DESC, b COLLATE sv_libc, id DESC');
RESET braidsort.work_mem;
RESET work_mem;
-- keys before and between collated ones of more than 64 kB (the layout's
-- lengths take 4 bytes)
CREATE TABLE longhead AS
SELECT g AS id, repeat('z', 70000) || g AS c, 'b' || g % 10 AS b FROM generate_series(1, 60) g;
SELECT check_sort('SELECT id, b FROM longhead ORDER BY c COLLATE "C", b COLLATE en_libc, id');
SELECT check_sort('SELECT id FROM longhead ORDER BY b COLLATE en_libc, c COLLATE "C", b COLLATE sv_libc DESC, id');
-- no normalized key: it is not ordered by bytes
SELECT braidsort.normalized_key('abc'::text COLLATE en_libc);

-- Ranks: before a sort (or run), each collated key's distinct strings are
-- gathered, sorted once by the collation, and their ranks put in the
-- entries' prefixes, which the radix sort then orders.  Where a key's
-- strings would take more than a quarter of the budget, it and the keys
-- after it stay compared by the collation.  EXPLAIN VERBOSE's Ranked Keys
-- says how many keys the sorts ranked at most.
CREATE FUNCTION ranked_keys(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	ranked text := 'not tried';
BEGIN
	PERFORM set_config('braidsort.force', 'on', true);
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line ~ 'Ranked Keys: \d+' THEN
			ranked := substring(line FROM 'Ranked Keys: (\d+)');
		END IF;
	END LOOP;
	RETURN ranked;
END $$;
-- in memory: every key ranked, with keys before, between and after
SELECT ranked_keys('SELECT last, first FROM people ORDER BY last COLLATE en_libc, first COLLATE en_libc');
SELECT ranked_keys('SELECT last, n, first, id FROM people ORDER BY last COLLATE sv_libc, n DESC, first COLLATE de_libc, id');
SELECT ranked_keys('SELECT n, last, id % 3, first, city FROM people ORDER BY n DESC, last COLLATE en_libc, 3, first COLLATE sv_libc DESC, city COLLATE de_libc');
-- more than 256 strings: ranks of two bytes
SELECT check_sort('SELECT s, id FROM (SELECT v || (id % 3) AS s, id FROM words) w ORDER BY s COLLATE en_libc DESC, id');
SELECT ranked_keys('SELECT s, id FROM (SELECT v || (id % 3) AS s, id FROM words) w ORDER BY s COLLATE en_libc DESC, id');
-- in runs (MergePass), ranked run by run
SET braidsort.work_mem = 256;
SET work_mem = 256;
SELECT check_sort('SELECT last, first, id FROM people ORDER BY last COLLATE en_libc, first COLLATE en_libc NULLS FIRST, id');
SELECT ranked_keys('SELECT last, first, id FROM people ORDER BY last COLLATE en_libc, first COLLATE en_libc NULLS FIRST, id');
-- a run's strings all distinct: nothing ranked; the first key's few
-- strings ranked, the second's many not
SELECT check_sort('SELECT s FROM (SELECT t || id AS s FROM words) w ORDER BY s COLLATE en_libc');
SELECT ranked_keys('SELECT s FROM (SELECT t || id AS s FROM words) w ORDER BY s COLLATE en_libc');
SELECT check_sort('SELECT t, s FROM (SELECT t, t || id AS s FROM words) w ORDER BY t COLLATE sv_libc, s COLLATE en_libc DESC');
SELECT ranked_keys('SELECT t, s FROM (SELECT t, t || id AS s FROM words) w ORDER BY t COLLATE sv_libc, s COLLATE en_libc DESC');
-- a first key of six strings, then others: few comparisons reach the
-- collation, but unranked every entry of a run ties on its prefix and goes
-- to the tie-break; ranked (by the cost model), the radix sort orders them
SELECT check_sort('SELECT code, n, id FROM people ORDER BY code COLLATE sv_libc, n DESC, id');
SELECT ranked_keys('SELECT code, n, id FROM people ORDER BY code COLLATE sv_libc, n DESC, id');
RESET braidsort.work_mem;
RESET work_mem;
-- compared only between rows tied on a unique key: the cost model does not rank
SELECT check_sort('SELECT id, t FROM words ORDER BY id, t COLLATE en_libc');
SELECT ranked_keys('SELECT id, t FROM words ORDER BY id, t COLLATE en_libc');
