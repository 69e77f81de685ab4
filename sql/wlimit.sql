--
-- wlimit: the write-limited sort modes (hybrid, segment, lazy) forced, each
-- at several write intensities, against PostgreSQL's own sort: types,
-- NULLs, DESC, several keys, duplicates, expressions, a collation, value-log
-- children, cursors walked backward, rescans with changing parameters,
-- mark/restore, parallel workers.  wl_check() shows the mode that really
-- ran (from EXPLAIN ANALYZE), whether selection passes happened and whether
-- lazy materialized, beside check_sort's verdict.
--
SET braidsort.force = on;
SET braidsort.work_mem = 64;
SET braidsort.gather_batch = 64;
SET max_parallel_workers_per_gather = 0;

-- bad values are refused
SET braidsort.sort_mode = quick;
SET braidsort.write_intensity = 1.5;
SET braidsort.write_intensity = -0.5;

CREATE TABLE wl_t AS
SELECT g AS id,
	   (g * 7919) % 211 AS k,
	   CASE WHEN g % 97 = 0 THEN NULL ELSE substr(md5((g % 1500)::text), 1, 3 + g % 9) END
		   COLLATE "C" AS t,
	   CASE g % 50 WHEN 0 THEN 'NaN'::float8 WHEN 1 THEN '-0'::float8
		   WHEN 2 THEN 'Infinity'::float8 WHEN 3 THEN '-Infinity'::float8
		   WHEN 4 THEN NULL ELSE ((g * 37) % 1003 - 501) / 3.0 END AS f,
	   ((g * 104729) % 100003 - 50000)::numeric / 100 AS n,
	   g % 3 = 0 AS b,
	   repeat('w', g % 40) AS pad
FROM generate_series(1, 12000) g;
ANALYZE wl_t;

-- the mode that ran (first BraidSort of the plan), whether it made
-- selection passes, lazy's materialization, then check_sort(q)
CREATE FUNCTION wl_check(mode text, intensity float8, q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	ran text := 'no braidsort';
	passes bigint := 0;
	mat text := '';
BEGIN
	PERFORM set_config('braidsort.sort_mode', mode, true);
	PERFORM set_config('braidsort.write_intensity', intensity::text, true);
	PERFORM set_config('braidsort.force', 'on', true);
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF ran = 'no braidsort' AND line ~ 'Sort Method: braid ' THEN
			ran := substring(line FROM 'Sort Method: braid (\w+)');
		ELSIF line ~ 'Selection Passes: ' THEN
			passes := passes + substring(line FROM 'Selection Passes: (\d+)')::bigint;
		ELSIF line ~ 'Materialized: ' AND mat = '' THEN
			mat := ', materialized ' || substring(line FROM 'Materialized: (\w+)');
		END IF;
	END LOOP;
	RETURN ran || CASE WHEN passes > 0 THEN ', selection passes' ELSE '' END || mat
		|| ': ' || check_sort(q);
END $$;

CREATE TABLE wl_modes (mode text, intensity float8);
INSERT INTO wl_modes VALUES
	('mergepass', -1), ('hybrid', -1), ('hybrid', 0),
	('segment', -1), ('segment', 0), ('segment', 0.5),
	('lazy', -1), ('lazy', 0), ('lazy', 0.8);

-- every mode on a heap scan (selection passes rescan it)
SELECT mode, intensity, wl_check(mode, intensity, 'SELECT id, k FROM wl_t ORDER BY k, id')
FROM wl_modes ORDER BY mode, intensity;
SELECT mode, intensity, wl_check(mode, intensity, 'SELECT * FROM wl_t ORDER BY t DESC NULLS LAST, id')
FROM wl_modes ORDER BY mode, intensity;
SELECT mode, intensity, wl_check(mode, intensity, 'SELECT id, f, n FROM wl_t ORDER BY f NULLS FIRST, n DESC, id')
FROM wl_modes ORDER BY mode, intensity;

-- more key shapes, each mode at one intensity that makes selection passes
CREATE COLLATION wl_en (provider = libc, locale = 'en_US.UTF-8');
CREATE TABLE wl_queries (q text);
INSERT INTO wl_queries VALUES
	('SELECT id, n FROM wl_t ORDER BY n DESC, id'),
	('SELECT id, b, k, t FROM wl_t ORDER BY b, k DESC, t NULLS FIRST, id'),
	('SELECT id, k, t FROM wl_t ORDER BY (k * 7) % 13, lower(t), id DESC'),
	('SELECT k, t FROM wl_t ORDER BY k, t'),
	('SELECT id, t FROM wl_t ORDER BY t COLLATE libc_c_utf8, id'),
	('SELECT id, k, t FROM wl_t ORDER BY left(t, 2) COLLATE wl_en DESC, k % 3, (CASE WHEN id % 2 = 0 THEN upper(t) ELSE t END) COLLATE wl_en, id'),
	('SELECT * FROM alltypes ORDER BY bp DESC NULLS LAST, by, i8 DESC, id'),
	('SELECT id, u, tz FROM alltypes ORDER BY u NULLS FIRST, tz, id');
SELECT m.mode, left(q.q, 50) AS query, wl_check(m.mode, 0, q.q)
FROM (VALUES ('hybrid'), ('segment'), ('lazy')) m(mode), wl_queries q
ORDER BY m.mode, q.q;

-- children that cannot be rescanned: selection passes re-read the value log
SELECT mode, intensity, wl_check(mode, intensity,
	'SELECT * FROM (SELECT k, t FROM wl_t UNION ALL SELECT k, t FROM wl_t WHERE id % 3 = 0) u ORDER BY k, t')
FROM wl_modes ORDER BY mode, intensity;
SELECT mode, intensity, wl_check(mode, intensity,
	'SELECT a.id, b.k, b.pad FROM wl_t a JOIN wl_t b ON a.id = b.id + 1 ORDER BY b.k DESC, a.id')
FROM wl_modes ORDER BY mode, intensity;
SELECT mode, intensity, wl_check(mode, intensity,
	'SELECT k, count(*), max(t) FROM wl_t GROUP BY k, id % 5 ORDER BY 2, 1, 3')
FROM wl_modes ORDER BY mode, intensity;
-- a correlated subquery: the sort is rescanned with a changing parameter,
-- and each run makes its own selection passes over the new rows
SELECT mode, intensity, wl_check(mode, intensity,
	'SELECT x.i, (SELECT md5(string_agg(s::text, E''\n'')) FROM (SELECT id, k, t FROM wl_t WHERE id > x.i * 1500 ORDER BY k, t, id) s) FROM generate_series(0, 3) x(i)')
FROM wl_modes ORDER BY mode, intensity;
-- an empty input, and a filtered one that fits the budget (OnePass)
SELECT mode, wl_check(mode, 0, 'SELECT * FROM wl_t WHERE id < 0 ORDER BY k')
FROM (VALUES ('segment'), ('lazy')) m(mode);
SELECT mode, wl_check(mode, 0, 'SELECT id, k FROM wl_t WHERE id < 100 ORDER BY k, id')
FROM (VALUES ('segment'), ('lazy')) m(mode);

-- keys longer than the IndexMap's prefix, kept aside: a selection pass's
-- candidates and their full keys stay within the budget (lazy's first pass
-- reached twice it, as the key store grew after the check)
CREATE TABLE wl_long AS
SELECT g AS id, repeat(md5(((g * 7919) % 1500)::text), 6) || g AS t
FROM generate_series(1, 6000) g;
CREATE FUNCTION wl_map_kb(mode text, q text) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('braidsort.sort_mode', mode, true);
	PERFORM set_config('braidsort.write_intensity', '0', true);
	RETURN map_kb(q);
END $$;
SELECT mode, wl_map_kb(mode, 'SELECT * FROM wl_long ORDER BY t, id') BETWEEN 1 AND 64 AS within_budget,
	   wl_check(mode, 0, 'SELECT * FROM wl_long ORDER BY t, id')
FROM (VALUES ('segment'), ('lazy')) m(mode);
SELECT mode, wl_map_kb(mode, 'SELECT * FROM wl_long ORDER BY t COLLATE wl_en DESC, id') BETWEEN 1 AND 64 AS within_budget,
	   wl_check(mode, 0, 'SELECT * FROM wl_long ORDER BY t COLLATE wl_en DESC, id')
FROM (VALUES ('segment'), ('lazy')) m(mode);
-- the planner's model counts the full keys in the budget: a pass keeps
-- fewer candidates of these keys than of integers
ANALYZE wl_long;
SELECT l.selection_passes > 4 * i.selection_passes AS long_keys_make_more_passes
FROM braidsort.sort_modes('SELECT * FROM wl_long ORDER BY t, id') l,
	 braidsort.sort_modes('SELECT * FROM wl_long ORDER BY id') i
WHERE l.mode = 'lazy' AND i.mode = 'lazy';
DROP FUNCTION wl_map_kb(text, text);
DROP TABLE wl_long;
-- the sort's first long key arriving when the candidates fill their room
-- (2048 entries of 16 bytes, half of 64 kB): their room is halved and the
-- key still placed (it was placed one entry past the end, and the backend
-- crashed)
CREATE TABLE wl_mix AS
SELECT g AS id, CASE WHEN g = 2049 THEN '!' || repeat('z', 300)
	   ELSE lpad((20000 - g)::text, 5, '0') END COLLATE "C" AS t
FROM generate_series(1, 6000) g;
ANALYZE wl_mix;
SELECT * FROM explain_masked('SELECT * FROM wl_mix ORDER BY t') WHERE explain_masked ~ 'Key Prefix';
SELECT wl_check('segment', 0, 'SELECT * FROM wl_mix ORDER BY t');
DROP TABLE wl_mix;
-- ... when it comes just as the candidates fill their room and is itself
-- not kept: the candidates kept stay (they were dropped whole, and a later
-- pass found rows missing)
CREATE TABLE wl_mix AS
SELECT g AS id, CASE WHEN g < 2048 THEN lpad((2 * g)::text, 6, '0')
	   WHEN g = 2048 THEN repeat('z', 300)
	   ELSE lpad((2 * (g - 2048) - 1)::text, 6, '0') END COLLATE "C" AS t
FROM generate_series(1, 6000) g;
ANALYZE wl_mix;
SELECT wl_check('segment', 0, 'SELECT * FROM wl_mix ORDER BY t');
DROP TABLE wl_mix;
-- keys expected larger than the budget: lazy's first pass keeps room for
-- two candidates (it had one, and placed the second past its end)
SELECT wl_check('lazy', 0, 'SELECT id, t::char(9000) AS c FROM wl_t WHERE id <= 300 ORDER BY c, id');

-- an input a few percent longer than the planner's estimate (ANALYZE's row
-- count runs a percent or two short): hybrid and segment keep their last
-- budget-full in memory all the same, writing a share of it as a small run
-- when it overflows (they wrote it all, and kept the few rows past it)
-- (autovacuum off: its ANALYZE would put the count right)
CREATE TABLE wl_exact WITH (autovacuum_enabled = off) AS SELECT id, k FROM wl_t;
CREATE TABLE wl_under WITH (autovacuum_enabled = off) AS SELECT id, k FROM wl_t;
CREATE TABLE wl_far WITH (autovacuum_enabled = off) AS SELECT id, k FROM wl_t;
ANALYZE wl_exact, wl_under, wl_far;
UPDATE pg_class SET reltuples = reltuples * 0.97 WHERE oid = 'wl_under'::regclass;
UPDATE pg_class SET reltuples = reltuples * 0.8 WHERE oid = 'wl_far'::regclass;
-- the memory run's entries and the runs on the device
CREATE FUNCTION wl_runs(mode text, intensity float8, q text, OUT memrun bigint, OUT runs bigint)
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	memrun := 0;
	runs := 0;
	PERFORM set_config('braidsort.sort_mode', mode, true);
	PERFORM set_config('braidsort.write_intensity', intensity::text, true);
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line ~ 'Memory Run Entries: ' THEN
			memrun := substring(line FROM 'Memory Run Entries: (\d+)')::bigint;
		ELSIF line ~ ' Runs: ' THEN
			runs := substring(line FROM ' Runs: (\d+)')::bigint;
		END IF;
	END LOOP;
END $$;
SET braidsort.work_mem = 192;	-- a fan-in of 12: room for runs more
SELECT mode, intensity,
	   e.memrun > 5000 AS memory_run_as_planned,
	   u.memrun >= 0.9 * e.memrun AS kept_3pct_short,
	   f.memrun >= 0.7 * e.memrun AS kept_20pct_short,
	   f.runs <= e.runs + 4 AS at_most_4_runs_more,
	   wl_check(mode, intensity, 'SELECT * FROM wl_far ORDER BY k, id')
FROM (VALUES ('hybrid', -1), ('segment', -1), ('segment', 0), ('segment', 0.5)) m(mode, intensity),
	 LATERAL wl_runs(mode, intensity, 'SELECT * FROM wl_exact ORDER BY k, id') e,
	 LATERAL wl_runs(mode, intensity, 'SELECT * FROM wl_under ORDER BY k, id') u,
	 LATERAL wl_runs(mode, intensity, 'SELECT * FROM wl_far ORDER BY k, id') f;
SET braidsort.work_mem = 64;

-- one long key among short ones (a random bytea key with four zero bytes
-- runs past its prefix): the keys kept aside get a little of the budget,
-- not an eighth or half of it, whether it comes before the flush or in the
-- memory run (the memory run was cut to a half or less, with runs more)
CREATE TABLE wl_bshort WITH (autovacuum_enabled = off) AS
	SELECT id, decode(substr(md5(id::text), 1, 12), 'hex') AS b FROM wl_t;
CREATE TABLE wl_bearly WITH (autovacuum_enabled = off) AS
	SELECT id, CASE WHEN id = 100 THEN decode(repeat('ab', 60), 'hex')
		   ELSE decode(substr(md5(id::text), 1, 12), 'hex') END AS b FROM wl_t;
CREATE TABLE wl_blate WITH (autovacuum_enabled = off) AS
	SELECT id, CASE WHEN id = 10000 THEN decode(repeat('ab', 60), 'hex')
		   ELSE decode(substr(md5(id::text), 1, 12), 'hex') END AS b FROM wl_t;
-- and a third of the keys long, the count 20% short
CREATE TABLE wl_bmixed WITH (autovacuum_enabled = off) AS
	SELECT id, CASE WHEN id % 3 = 0 THEN decode(md5(id::text) || md5(id::text), 'hex')
		   ELSE decode(substr(md5(id::text), 1, 12), 'hex') END AS b FROM wl_t;
ANALYZE wl_bshort, wl_bearly, wl_blate, wl_bmixed;
UPDATE pg_class SET reltuples = reltuples * 0.8 WHERE oid = 'wl_bmixed'::regclass;
SET braidsort.work_mem = 192;
SELECT mode, intensity,
	   e.memrun >= 0.9 * s.memrun AS early_kept, e.runs <= s.runs + 1 AS early_runs,
	   l.memrun >= 0.9 * s.memrun AS late_kept, l.runs <= s.runs + 1 AS late_runs,
	   wl_check(mode, intensity, 'SELECT * FROM wl_blate ORDER BY b, id'),
	   wl_check(mode, intensity, 'SELECT * FROM wl_bmixed ORDER BY b DESC, id')
FROM (VALUES ('hybrid', -1), ('segment', 0.5)) m(mode, intensity),
	 LATERAL wl_runs(mode, intensity, 'SELECT * FROM wl_bshort ORDER BY b, id') s,
	 LATERAL wl_runs(mode, intensity, 'SELECT * FROM wl_bearly ORDER BY b, id') e,
	 LATERAL wl_runs(mode, intensity, 'SELECT * FROM wl_blate ORDER BY b, id') l;
SET braidsort.work_mem = 64;
-- collated keys, all kept aside, the count 20% short (wl_far's)
SELECT mode, wl_check(mode, -1, 'SELECT w.id, t.t FROM wl_far w JOIN wl_t t USING (id) ORDER BY t.t COLLATE wl_en, w.id')
FROM (VALUES ('hybrid'), ('segment')) m(mode);
DROP TABLE wl_exact, wl_under, wl_far, wl_bshort, wl_bearly, wl_blate, wl_bmixed;
DROP FUNCTION wl_runs(text, float8, text);

-- the executor contract in each mode: scrollable cursors walked backward,
-- rewinds, rescans with changing parameters, mark/restore
SET braidsort.write_intensity = 0;
SET braidsort.sort_mode = hybrid;
SELECT * FROM check_contract('wl_t', 'k, id', 'k', cols => 'id, k, t', rescans => 10);
SET braidsort.sort_mode = segment;
SELECT * FROM check_contract('wl_t', 'k, id', 'k', cols => 'id, k, t', rescans => 10);
SELECT * FROM check_contract('(SELECT k, t, id FROM wl_t UNION ALL SELECT k, t, -id FROM wl_t WHERE id % 4 = 0)',
							 't DESC, id', 't', cols => 'id, t');
SET braidsort.sort_mode = lazy;
SELECT * FROM check_contract('wl_t', 'k, id', 'k', cols => 'id, k, t', rescans => 10);
SET braidsort.write_intensity = -1;
SELECT * FROM check_contract('wl_t', 't, id', 't', cols => 'id, t, pad', rescans => 10);
SELECT * FROM check_contract('(SELECT k, t, id FROM wl_t UNION ALL SELECT k, t, -id FROM wl_t WHERE id % 4 = 0)',
							 't DESC, id', 't', cols => 'id, t');

-- parallel workers: a parallel scan cannot be re-read, each worker's sort
-- runs as hybrid; the results are PostgreSQL's
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET braidsort.parallel_sort = each;
-- (a process whose share of the scan fits its budget sorts in one pass;
-- which processes get how much depends on the machine's load)
SELECT mode, wl_check(mode, 0, 'SELECT id, k, t FROM wl_t ORDER BY k DESC, id')
	~ '^(hybrid|onepass): same, braidsort$' AS hybrid_or_onepass_same_rows
FROM (VALUES ('segment'), ('lazy')) m(mode);
-- one sort in the Gather Merge's place reads the scan in one process, which
-- can read it again: the modes run as asked
SET braidsort.parallel_sort = one;
SELECT wl_check(mode, 0, 'SELECT id, k, t FROM wl_t ORDER BY k DESC, id')
FROM (VALUES ('segment'), ('lazy')) m(mode);
RESET braidsort.parallel_sort;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- a filter calling a stable function (current_setting) may pass other rows
-- in a later pass (a cursor after set_config, a row security policy on
-- current_user after SET ROLE): the scan is not read again, segment and
-- lazy run as hybrid, and the cursor returns PostgreSQL's rows
SELECT set_config('wl.min', '0', false);
SELECT mode, wl_check(mode, 0, 'SELECT id, k FROM wl_t WHERE id > current_setting(''wl.min'')::int ORDER BY k, id')
FROM (VALUES ('segment'), ('lazy')) m(mode);
SET braidsort.sort_mode = lazy;
SET braidsort.write_intensity = 0;
BEGIN;
DECLARE wl_c NO SCROLL CURSOR FOR
	SELECT id, k FROM wl_t WHERE id > current_setting('wl.min')::int ORDER BY k, id;
FETCH 2 FROM wl_c;
SELECT set_config('wl.min', '6000', false);
MOVE 9000 IN wl_c;
FETCH 2 FROM wl_c;
COMMIT;
SET braidsort.enable = off;
SELECT set_config('wl.min', '0', false);
BEGIN;
DECLARE wl_c NO SCROLL CURSOR FOR
	SELECT id, k FROM wl_t WHERE id > current_setting('wl.min')::int ORDER BY k, id;
FETCH 2 FROM wl_c;
SELECT set_config('wl.min', '6000', false);
MOVE 9000 IN wl_c;
FETCH 2 FROM wl_c;
COMMIT;
RESET braidsort.enable;

-- nothing is left in the spill tablespace
SELECT count(*) AS leftover_spill_files FROM pg_ls_tmpdir();

RESET braidsort.sort_mode;
RESET braidsort.write_intensity;
RESET braidsort.work_mem;
RESET braidsort.gather_batch;
RESET braidsort.force;
DROP TABLE wl_t, wl_modes, wl_queries;
DROP FUNCTION wl_check(text, float8, text);
