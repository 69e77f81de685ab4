--
-- keys_property: for many random and edge-case values of every supported
-- type, memcmp order of braidsort.normalized_key() must be PostgreSQL's
-- order (equal values <=> equal keys), for ASC/DESC and NULLS FIRST/LAST.
-- The oracle is PostgreSQL's own sort (braidsort disabled here).
--
SET braidsort.enable = off;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SELECT setseed(0.4242);

CREATE TABLE kv (t text, v text);

-- random values, as text, cast per type below
INSERT INTO kv
SELECT t, v FROM (
	SELECT 'int2' AS t, (floor(random() * 65536) - 32768)::text AS v FROM generate_series(1, 300)
	UNION ALL SELECT 'int4', (floor(random() * 4294967296) - 2147483648)::bigint::text FROM generate_series(1, 300)
	UNION ALL SELECT 'int4', (floor(random() * 20) - 10)::text FROM generate_series(1, 50)
	UNION ALL SELECT 'int8', ((random() - 0.5) * 1.8e19)::numeric(20,0)::text FROM generate_series(1, 300)
	UNION ALL SELECT 'oid', floor(random() * 4294967295)::bigint::text FROM generate_series(1, 300)
	UNION ALL SELECT 'float4', ((random() - 0.5) * 10 ^ (random() * 70 - 35))::float4::text FROM generate_series(1, 300)
	UNION ALL SELECT 'float8', ((random() - 0.5) * 10 ^ (random() * 600 - 300))::text FROM generate_series(1, 300)
	UNION ALL SELECT 'float8', (floor(random() * 7) - 3)::text FROM generate_series(1, 30)
	UNION ALL SELECT 'date', (date '2000-01-01' + floor((random() - 0.5) * 2000000)::int)::text FROM generate_series(1, 300)
	UNION ALL SELECT 'time', (time '00:00' + random() * interval '24 hours')::text FROM generate_series(1, 300)
	UNION ALL SELECT 'timestamp', (timestamp '2000-01-01' + (random() - 0.5) * interval '200000 days')::text FROM generate_series(1, 300)
	UNION ALL SELECT 'timestamptz', (timestamptz '2000-01-01 00:00+00' + (random() - 0.5) * interval '200000 days')::text FROM generate_series(1, 300)
	UNION ALL SELECT 'uuid', md5(random()::text)::uuid::text FROM generate_series(1, 300)
	UNION ALL SELECT 'bytea', encode(decode(substr(md5(random()::text) || md5(random()::text), 1, 2 * floor(random() * 10)::int), 'hex'), 'hex') FROM generate_series(1, 300)
	UNION ALL SELECT 'bytea', encode(decode(repeat(CASE WHEN random() < 0.5 THEN '00' ELSE 'ff' END, floor(random() * 4)::int) || CASE WHEN random() < 0.5 THEN '00' ELSE '01' END, 'hex'), 'hex') FROM generate_series(1, 100)
	UNION ALL SELECT 'text', substr(md5(random()::text), 1, floor(random() * 8)::int) FROM generate_series(1, 300)
	UNION ALL SELECT 'text', repeat(chr(97 + floor(random() * 2)::int), floor(random() * 4)::int) || chr(200 + floor(random() * 2000)::int) FROM generate_series(1, 100)
	UNION ALL SELECT 'bpchar', substr('ab ', 1 + floor(random() * 3)::int, floor(random() * 4)::int) || repeat(' ', floor(random() * 3)::int) FROM generate_series(1, 200)
	UNION ALL SELECT 'numeric', round(((random() - 0.5) * 10 ^ (random() * 40 - 20))::numeric, floor(random() * 30)::int)::text FROM generate_series(1, 300)
	UNION ALL SELECT 'numeric', (floor(random() * 21) - 10)::numeric(10, 2)::text FROM generate_series(1, 60)
	UNION ALL SELECT 'numeric', ((random() - 0.5) * 2e6)::numeric(20, 4)::text FROM generate_series(1, 60)
) s;

-- edge values
INSERT INTO kv VALUES
	('int2', '-32768'), ('int2', '32767'), ('int2', '0'), ('int2', '-1'), ('int2', '1'),
	('int4', '-2147483648'), ('int4', '2147483647'), ('int4', '0'),
	('int8', '-9223372036854775808'), ('int8', '9223372036854775807'), ('int8', '0'), ('int8', '-1'),
	('oid', '0'), ('oid', '4294967295'), ('oid', '2147483648'), ('oid', '2147483647'),
	('float4', 'NaN'), ('float4', '-NaN'), ('float4', 'Infinity'), ('float4', '-Infinity'),
	('float4', '0'), ('float4', '-0'), ('float4', '1e-45'), ('float4', '-1e-45'),
	('float4', '3.4028235e38'), ('float4', '-3.4028235e38'),
	('float8', 'NaN'), ('float8', '-NaN'), ('float8', 'Infinity'), ('float8', '-Infinity'),
	('float8', '0'), ('float8', '-0'), ('float8', '4.9e-324'), ('float8', '-4.9e-324'),
	('float8', '1.7976931348623157e308'), ('float8', '-1.7976931348623157e308'),
	('bool', 'true'), ('bool', 'false'),
	('date', 'infinity'), ('date', '-infinity'), ('date', '4713-01-01 BC'), ('date', '5874897-12-31'),
	('time', '00:00'), ('time', '24:00'), ('time', '23:59:59.999999'),
	('timestamp', 'infinity'), ('timestamp', '-infinity'), ('timestamp', '4713-01-01 00:00 BC'),
	('timestamp', '294276-12-31 23:59:59.999999'), ('timestamp', '2000-01-01'),
	('timestamptz', 'infinity'), ('timestamptz', '-infinity'), ('timestamptz', '1970-01-01 00:00+00'),
	('uuid', '00000000-0000-0000-0000-000000000000'), ('uuid', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
	('uuid', '7fffffff-ffff-ffff-ffff-ffffffffffff'), ('uuid', '80000000-0000-0000-0000-000000000000'),
	('bytea', ''), ('bytea', '00'), ('bytea', '0000'), ('bytea', '0001'), ('bytea', '00ff'),
	('bytea', 'ff'), ('bytea', 'ff00'), ('bytea', 'ffff'), ('bytea', '01'),
	('text', ''), ('text', 'a'), ('text', 'a '), ('text', E'a\x01'), ('text', 'ab'), ('text', E'\u00ff'),
	('bpchar', ''), ('bpchar', ' '), ('bpchar', 'a'), ('bpchar', 'a '), ('bpchar', E'a\x01'),
	('bpchar', 'a b'),
	('numeric', 'NaN'), ('numeric', 'Infinity'), ('numeric', '-Infinity'), ('numeric', '0'),
	('numeric', '0.000'), ('numeric', '-0.0'), ('numeric', '1'), ('numeric', '1.0'),
	('numeric', '1.00000000000000000001'), ('numeric', '0.99999999999999999999'),
	('numeric', '9999'), ('numeric', '10000'), ('numeric', '10000.0001'), ('numeric', '-9999'),
	('numeric', '-10000'), ('numeric', '-10000.0001'), ('numeric', '0.0001'), ('numeric', '0.00001'),
	('numeric', '-0.0001'), ('numeric', '-0.00001'), ('numeric', '1e100'), ('numeric', '-1e100'),
	('numeric', '1e-100'), ('numeric', '-1e-100'), ('numeric', '123456789012345678901234567890.5'),
	('numeric', '1e1000'), ('numeric', '-1e-1000');

-- violations(type): rows whose rank by value differs from their rank by key
CREATE FUNCTION key_order_violations(typ text, dir text, nulls text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	descending boolean := dir = 'DESC';
	nulls_first boolean := nulls = 'NULLS FIRST';
	conv text := CASE typ WHEN 'bytea' THEN 'decode(v, ''hex'')' ELSE format('v::%s', typ) END;
	src text := CASE typ WHEN 'varchar' THEN 'text' ELSE typ END;
BEGIN
	EXECUTE format($q$
		WITH vals AS (
			SELECT %1$s AS x FROM kv WHERE t = %2$L
			UNION ALL SELECT NULL::%3$s),
		ranked AS (
			SELECT dense_rank() OVER (ORDER BY x %4$s %5$s) AS by_value,
				   dense_rank() OVER (ORDER BY braidsort.normalized_key(x, %6$L, %7$L)) AS by_key
			FROM vals)
		SELECT count(*) FROM ranked WHERE by_value <> by_key$q$,
		conv, src, typ, dir, nulls, descending, nulls_first) INTO n;
	RETURN n;
END $$;

SELECT typ, count(*) AS values,
	   key_order_violations(typ, '', 'NULLS LAST') AS asc_nulls_last,
	   key_order_violations(typ, '', 'NULLS FIRST') AS asc_nulls_first,
	   key_order_violations(typ, 'DESC', 'NULLS FIRST') AS desc_nulls_first,
	   key_order_violations(typ, 'DESC', 'NULLS LAST') AS desc_nulls_last
FROM (SELECT t AS typ FROM kv) s
GROUP BY typ ORDER BY typ;

-- text-like keys in a C collation
SELECT key_order_violations('varchar', '', 'NULLS LAST') AS varchar_violations;

-- text under ICU collations: deterministic ones (ties broken by bytes, as
-- PostgreSQL does) and a case- and accent-insensitive nondeterministic one
CREATE COLLATION ci_ai (provider = icu, locale = 'und-u-ks-level1', deterministic = false);
CREATE TABLE icu_words (w text);
INSERT INTO icu_words
SELECT w FROM unnest(ARRAY['a', 'A', 'à', 'á', 'Á', 'b', 'B', 'ä', 'ae', 'Æ', 'æ', 'z', 'Z',
	'ß', 'ss', 'SS', 'ö', 'o', 'O', 'œ', 'oe', 'é', 'e', 'E', 'ê', 'résumé', 'resume',
	'Resume', 'RÉSUMÉ', 'co-op', 'coop', 'co op', 'cœur', 'coeur', '1', '10', '2', '', ' ',
	'-', '_', 'ﬁ', 'fi', 'ǅ', 'dž', 'Ω', 'ω', 'ώ', 'я', 'Я', 'ё', 'е', '日本', '本日', '😀', '🙂',
	'a b', 'ab', 'a-b', 'a_b', 'zz', 'ZZ', 'Zz']) w
UNION ALL
SELECT substr('aAàbBßsSöoOéeE-_ 1æœ', 1 + floor(random() * 19)::int, 1 + floor(random() * 3)::int)
	|| substr('aAàbBßsSöoOéeE-_ 1æœ', 1 + floor(random() * 19)::int, floor(random() * 3)::int)
FROM generate_series(1, 300);

CREATE FUNCTION icu_violations(coll text, dir text, nulls text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format($q$
		WITH vals AS (SELECT w COLLATE %1$I AS x FROM icu_words UNION ALL SELECT NULL),
		ranked AS (
			SELECT dense_rank() OVER (ORDER BY x %2$s %3$s) AS by_value,
				   dense_rank() OVER (ORDER BY braidsort.normalized_key(x, %4$L, %5$L)) AS by_key
			FROM vals)
		SELECT count(*) FROM ranked WHERE by_value <> by_key$q$,
		coll, dir, nulls, dir = 'DESC', nulls = 'NULLS FIRST') INTO n;
	RETURN n;
END $$;

SELECT coll,
	   icu_violations(coll, '', 'NULLS LAST') AS asc_nulls_last,
	   icu_violations(coll, 'DESC', 'NULLS FIRST') AS desc_nulls_first,
	   icu_violations(coll, '', 'NULLS FIRST') AS asc_nulls_first
FROM unnest(ARRAY['und-x-icu', 'en-x-icu', 'de-x-icu', 'sv-x-icu', 'ci_ai']) coll;

-- libc collations other than C have no exact encoder
SELECT braidsort.normalized_key('abc'::text COLLATE "C");
SELECT braidsort.normalized_key('abc'::text COLLATE libc_c_utf8);
SELECT braidsort.normalized_key(1.5::numeric), braidsort.normalized_key(1.50::numeric);
SELECT braidsort.normalized_key(interval '1 day');
-- an enum's or array's ordering is a polymorphic class's: named by the value's type
SELECT braidsort.normalized_key(ARRAY[1]);
CREATE TYPE kp_mood AS ENUM ('sad', 'ok');
SELECT braidsort.normalized_key('ok'::kp_mood);
DROP TYPE kp_mood;
SELECT braidsort.normalized_key(-1::int4, true);
SELECT braidsort.normalized_key(NULL::int4), braidsort.normalized_key(NULL::int4, nulls_first => true);
-- a NULL direction gives NULL, not the ascending key
SELECT braidsort.normalized_key(42::int4, descending => NULL) IS NULL AS is_null,
	   braidsort.normalized_key(NULL::int4, descending => NULL) IS NULL AS null_value_too;
