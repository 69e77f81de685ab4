--
-- setup: the extension, differential-check helpers and test tables.
--
-- check_sort(q) runs q with braidsort off and with braidsort forced on and
-- reports whether both produced the same rows in the same order, and
-- whether the forced run's plan really used BraidSort.  Queries are written
-- so that their order is total (ties carry no distinguishable columns).
--
CREATE EXTENSION braidsort;

-- a libc collation that is not C: braidsort has no exact encoder for it
CREATE COLLATION libc_c_utf8 (provider = libc, locale = 'C.UTF-8');

CREATE FUNCTION result_digest(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	d text;
BEGIN
	EXECUTE 'SELECT count(*), md5(coalesce(string_agg(r::text, E''\n''), '''')) FROM ('
		|| q || ') r' INTO n, d;
	RETURN n || ' rows ' || d;
END $$;

CREATE FUNCTION plan_uses_braidsort(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line LIKE '%Custom Scan (BraidSort)%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END $$;

CREATE FUNCTION check_sort(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	pg text;
	braid text;
	used boolean;
BEGIN
	PERFORM set_config('braidsort.enable', 'off', true);
	pg := result_digest(q);
	PERFORM set_config('braidsort.enable', 'on', true);
	PERFORM set_config('braidsort.force', 'on', true);
	used := plan_uses_braidsort('SELECT * FROM (' || q || ') r');
	braid := result_digest(q);
	RETURN CASE WHEN pg = braid THEN 'same' ELSE 'DIFFERENT: ' || pg || ' vs ' || braid END
		|| CASE WHEN used THEN ', braidsort' ELSE ', postgres only' END;
END $$;

-- EXPLAIN ANALYZE with run-dependent numbers masked
CREATE FUNCTION explain_masked(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		line := regexp_replace(line, '(Memory|Space Used): \d+kB', '\1: NkB');
		line := regexp_replace(line, '(Memory|Space Used): \d+ kB', '\1: N kB');
		line := regexp_replace(line, 'Sort Threads: \d+', 'Sort Threads: N');
		RETURN NEXT line;
	END LOOP;
END $$;

-- every supported key type, with NULLs and edge values
CREATE TABLE alltypes (
	id int PRIMARY KEY,
	i2 int2, i4 int4, i8 int8, o oid,
	f4 float4, f8 float8, b bool,
	d date, tm time, ts timestamp, tz timestamptz,
	u uuid, by bytea,
	tx text COLLATE "C", vc varchar(20) COLLATE "C", bp char(6) COLLATE "C"
);

INSERT INTO alltypes
SELECT g,
	   ((g * 7919) % 65521 - 32760)::int2,
	   (g * 104729) % 2000003 - 1000000,
	   (g::int8 * 1000000007) % 9000000000000000 - 4500000000000000,
	   ((g * 2654435761) % 4294967296)::oid,
	   ((g * 31) % 1001 - 500) / 7.0,
	   ((g * 37) % 1003 - 501) / 3.0,
	   g % 3 = 0,
	   date '2000-01-01' + (g * 13) % 20000 - 10000,
	   time '00:00' + ((g * 17) % 86400) * interval '1 second',
	   timestamp '2000-01-01' + ((g * 7) % 100000) * interval '37 minutes',
	   timestamptz '2000-01-01 00:00+00' - ((g * 11) % 100000) * interval '41 minutes',
	   md5(g::text)::uuid,
	   decode(substr(md5((g % 700)::text), 1, 2 * (g % 9)), 'hex'),
	   substr(md5((g % 900)::text), 1, g % 12),
	   substr(md5((g % 800)::text), 1 + g % 5, g % 15),
	   substr(md5((g % 600)::text), 1, g % 5) || repeat(' ', g % 3)
FROM generate_series(1, 3000) g;

-- NULLs in every key column
INSERT INTO alltypes (id) SELECT g FROM generate_series(3001, 3050) g;

-- edge values
INSERT INTO alltypes (id, i2, i4, i8, o, f4, f8, b, d, tm, ts, tz, u, by, tx, vc, bp) VALUES
	(4001, -32768, -2147483648, -9223372036854775808, 0, '-Infinity', '-Infinity', false,
	 '-infinity', '00:00', '-infinity', '-infinity', '00000000-0000-0000-0000-000000000000',
	 '\x', '', '', ''),
	(4002, 32767, 2147483647, 9223372036854775807, 4294967295, 'Infinity', 'Infinity', true,
	 'infinity', '24:00', 'infinity', 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
	 '\xffffffff', 'zzzz', 'zzzz', 'zzzzzz'),
	(4003, 0, 0, 0, 1, 'NaN', 'NaN', true, '4713-01-01 BC', '23:59:59.999999',
	 '4713-01-01 BC', '294276-12-30 23:59:59+00', '80000000-0000-0000-0000-000000000000',
	 '\x00', 'a', 'a', 'a'),
	(4004, -1, -1, -1, 2147483648, '-0', '-0', false, '1970-01-01', '12:00',
	 '1970-01-01', '1970-01-01 00:00+00', '7fffffff-ffff-ffff-ffff-ffffffffffff',
	 '\x0000', 'a ', 'a ', 'a '),
	(4005, 1, 1, 1, 3, '0', '0', false, '1969-12-31', '00:00:00.000001',
	 '1969-12-31 23:59:59.999999', '1969-12-31 23:59:59.999999+00', NULL,
	 '\x0001', E'a\t', 'ab', 'a  b'),
	(4006, NULL, NULL, NULL, NULL, '1e-45', '4.9e-324', NULL, NULL, NULL, NULL, NULL,
	 NULL, '\x00ff', 'A', 'B', ' '),
	(4007, NULL, NULL, NULL, NULL, '-1e-45', '-4.9e-324', NULL, NULL, NULL, NULL, NULL,
	 NULL, '\xff00', E'\u00e9', E'\u00e9t\u00e9', 'b'),
	(4008, NULL, NULL, NULL, NULL, '3.4028235e38', '1.7976931348623157e308', NULL, NULL,
	 NULL, NULL, NULL, NULL, '\xff', 'a\', 'a ', 'a');

ANALYZE alltypes;

-- like check_sort, for queries whose row order is not defined (joins):
-- compares the rows as multisets
CREATE FUNCTION check_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	pg text;
	braid text;
	used boolean;
	digest text := 'SELECT count(*) || '' rows '' || md5(coalesce(string_agg(r::text, E''\n'' ORDER BY r::text), '''')) FROM (';
BEGIN
	PERFORM set_config('braidsort.enable', 'off', true);
	EXECUTE digest || q || ') r' INTO pg;
	PERFORM set_config('braidsort.enable', 'on', true);
	PERFORM set_config('braidsort.force', 'on', true);
	used := plan_uses_braidsort(q);
	EXECUTE digest || q || ') r' INTO braid;
	RETURN CASE WHEN pg = braid THEN 'same' ELSE 'DIFFERENT: ' || pg || ' vs ' || braid END
		|| CASE WHEN used THEN ', braidsort' ELSE ', postgres only' END;
END $$;
