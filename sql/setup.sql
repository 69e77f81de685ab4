--
-- setup: the extension, differential-check helpers and test tables.
--
-- check_sort(q) runs q with braidsort off and with braidsort forced on and
-- reports whether both produced the same rows in the same order, and
-- whether the forced run's plan really used BraidSort.  Queries are written
-- so that their order is total (ties carry no distinguishable columns).
-- check_rows(q) does the same for queries whose row order is not defined,
-- check_cursor(q, steps) for a walk of a scrollable cursor, and
-- check_contract(rel, ord, join_key) for everything a Sort node must do in
-- the executor (see below).
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
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		line := regexp_replace(line, '(Memory|Space Used): \d+kB', '\1: NkB');
		line := regexp_replace(line, '(Memory|Space Used): \d+ kB', '\1: N kB');
		line := regexp_replace(line, 'Sort Threads: \d+', 'Sort Threads: N');
		-- PostgreSQL 18 shows actual rows with two decimals
		line := regexp_replace(line, '(actual rows=\d+)\.00 ', '\1 ');
		RETURN NEXT line;
	END LOOP;
END $$;

-- the largest IndexMap Memory EXPLAIN ANALYZE shows for a query, in kB
CREATE FUNCTION map_kb(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	line text;
	kb int := 0;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line ~ 'IndexMap Memory: \d+' THEN
			kb := greatest(kb, substring(line FROM 'IndexMap Memory: (\d+)')::int);
		END IF;
	END LOOP;
	RETURN kb;
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

-- PostgreSQL 16 and later may sort an ordered aggregate's input with a Sort
-- node below it, which braidsort could take: the digests of rows being
-- checked keep that sort inside the aggregate, as 15 does (for the rest of
-- the transaction)
CREATE FUNCTION keep_aggregate_sorts() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF current_setting('server_version_num')::int >= 160000 THEN
		PERFORM set_config('enable_presorted_aggregate', 'off', true);
	END IF;
END $$;

-- like check_sort, for queries whose row order is not defined (joins):
-- compares the rows as multisets
CREATE FUNCTION check_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	pg text;
	braid text;
	used boolean;
	digest text := 'SELECT count(*) || '' rows '' || md5(coalesce(string_agg(r::text, E''\n'' ORDER BY r::text), '''')) FROM (';
BEGIN
	PERFORM keep_aggregate_sorts();
	PERFORM set_config('braidsort.enable', 'off', true);
	EXECUTE digest || q || ') r' INTO pg;
	PERFORM set_config('braidsort.enable', 'on', true);
	PERFORM set_config('braidsort.force', 'on', true);
	used := plan_uses_braidsort(q);
	EXECUTE digest || q || ') r' INTO braid;
	RETURN CASE WHEN pg = braid THEN 'same' ELSE 'DIFFERENT: ' || pg || ' vs ' || braid END
		|| CASE WHEN used THEN ', braidsort' ELSE ', postgres only' END;
END $$;

-- run a cursor script over q and digest what each step found; steps are
-- 'next', 'prior', 'first', 'last', 'abs N', 'rel N' (FETCH) and 'fwd N',
-- 'back N' (MOVE)
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

-- run a cursor script with braidsort off and forced on; compare the rows
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

-- check_sort (ordered) or check_rows of q, then q run once more by EXPLAIN
-- ANALYZE with braidsort forced on: the loops of its BraidSort nodes, in
-- plan order ('never' for one never executed), against those expected
-- ('3', '1,1'); and that plan
CREATE FUNCTION check_loops(q text, loops text, ordered boolean, OUT result text, OUT plan text)
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	got text;
BEGIN
	result := CASE WHEN ordered THEN check_sort(q) ELSE check_rows(q) END;
	plan := '';
	PERFORM set_config('braidsort.enable', 'on', true);
	PERFORM set_config('braidsort.force', 'on', true);
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	SELECT string_agg(coalesce(m[2], 'never'), ',') INTO got
	FROM regexp_matches(plan, 'Custom Scan \(BraidSort\)[^\n]*(loops=(\d+)|never executed)', 'g') m;
	result := result || ', loops ' || coalesce(got, 'none')
		|| CASE WHEN got = loops THEN '' ELSE ', expected ' || loops END;
END $$;

--
-- check_contract(rel, ord, join_key [, cols] [, rescans]): everything a
-- Sort node must do in the executor, for
--		SELECT cols FROM rel braid_r ORDER BY ord
-- (rel is a table or a parenthesized subquery), each with braidsort off and
-- forced on, results compared:
--	forward:	the sorted rows (check_sort);
--	cursor:		a scrollable cursor (EXEC_FLAG_BACKWARD) walked forward,
--				backward, by absolute and relative positions, past both
--				ends, at positions scaled to the row count;
--	rewind:		the inner side of a nested loop without parameters (a left
--				join, so that the sort cannot be the outer side), rescanned
--				three times without its input changing (EXEC_FLAG_REWIND);
--	rescan:		a correlated subplan whose parameter filters the sort's input,
--				run rescans times, each time on another subset of rel;
--	mark/restore: the inner sort of a merge self-join of rel on join_key
--				(EXEC_FLAG_MARK), compared as a multiset.
-- The rows of the rewinds and of the merge join are compared by their
-- 64-bit hashes (a wide row's text costs more than the sorts).  The rescans
-- and the merge join run without parallel workers, so that the sort node
-- itself is rescanned or marked.  The BraidSorts must run the expected
-- loops (shown), and the self-join must be a merge join over two of them.
-- The settings each check changes are put back after it.
--
CREATE FUNCTION check_contract(rel text, ord text, join_key text, cols text DEFAULT '*',
							   rescans int DEFAULT 3)
RETURNS TABLE (contract text, result text) LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT ' || cols || ' FROM ' || rel || ' braid_r ORDER BY ' || ord;
	n bigint;
	jq text;
	plan text;
	saved text[];
	knobs text[] := ARRAY['enable_material', 'enable_hashjoin', 'enable_mergejoin',
						  'enable_nestloop', 'max_parallel_workers_per_gather',
						  'braidsort.enable', 'braidsort.force'];
BEGIN
	SELECT array_agg(current_setting(k)) INTO saved FROM unnest(knobs) k;

	contract := 'forward';
	result := check_sort(q);
	RETURN NEXT;

	PERFORM set_config('braidsort.enable', 'off', true);
	EXECUTE 'SELECT count(*) FROM (' || q || ') s' INTO n;
	contract := 'cursor';
	result := check_cursor(q, ARRAY[
		'next', 'next', 'prior', 'prior', 'prior', 'next',
		'abs ' || n / 2, 'prior', 'rel -' || n / 4, 'rel ' || n / 3,
		'last', 'next', 'prior', 'prior', 'first', 'prior', 'next',
		'fwd ' || n, 'back ' || greatest(n - 1, 0), 'next', 'abs -1', 'abs 1',
		'fwd ' || (5 * n + 10), 'prior', 'back ' || (5 * n + 10), 'next',
		'abs ' || (n - n / 10), 'back ' || n / 2, 'rel ' || n / 5, 'abs -' || n / 3,
		'last', 'first']);
	RETURN NEXT;

	-- the node's own rescans: no Gather (Merge) above it, no Materialize
	PERFORM set_config('max_parallel_workers_per_gather', '0', true);
	PERFORM set_config('enable_material', 'off', true);
	PERFORM set_config('enable_hashjoin', 'off', true);
	PERFORM set_config('enable_mergejoin', 'off', true);
	contract := 'rewind';
	result := (check_loops('SELECT braid_x.i, hash_record_extended(braid_s, 0) '
						   || 'FROM generate_series(1, 3) braid_x(i) '
						   || 'LEFT JOIN (' || q || ' OFFSET 0) braid_s ON true', '3', true)).result;
	RETURN NEXT;
	PERFORM set_config(knobs[i], saved[i], true) FROM generate_subscripts(knobs, 1) i;

	PERFORM set_config('max_parallel_workers_per_gather', '0', true);
	contract := 'rescan';
	result := (check_loops(format('SELECT braid_x.i, (SELECT md5(string_agg(braid_s::text, E''\n'')) FROM '
								  '(SELECT %s FROM %s braid_r WHERE abs(hashtext(braid_r::text)) %% %s = braid_x.i '
								  'ORDER BY %s) braid_s) FROM generate_series(1, %s) braid_x(i)',
								  cols, rel, rescans + 1, ord, rescans),
						   rescans::text, true)).result;
	RETURN NEXT;
	PERFORM set_config(knobs[i], saved[i], true) FROM generate_subscripts(knobs, 1) i;

	-- a merge join sorting both sides; a Materialize would take the marks
	-- of a sort expected to spill, unless disabled
	PERFORM set_config('max_parallel_workers_per_gather', '0', true);
	PERFORM set_config('enable_material', 'off', true);
	PERFORM set_config('enable_hashjoin', 'off', true);
	PERFORM set_config('enable_nestloop', 'off', true);
	jq := format('SELECT hash_record_extended(braid_a, 0), hash_record_extended(braid_b, 0) '
				 'FROM (SELECT %1$s, %3$s AS braid_jk FROM %2$s braid_r) braid_a '
				 'JOIN (SELECT %1$s, %3$s AS braid_jk FROM %2$s braid_r) braid_b '
				 'ON braid_a.braid_jk = braid_b.braid_jk', cols, rel, join_key);
	contract := 'mark/restore';
	-- over an empty input the merge join never starts its inner side
	SELECT * INTO result, plan
	FROM check_loops(jq, CASE WHEN n = 0 THEN '1,never' ELSE '1,1' END, false);
	IF plan !~ 'Merge (\w+ )?Join' OR plan ~ '->\s+Materialize' THEN
		result := result || ', not a merge join of two sorts';
	END IF;
	RETURN NEXT;
	PERFORM set_config(knobs[i], saved[i], true) FROM generate_subscripts(knobs, 1) i;
END $$;
