--
-- mergepass: an IndexMap that outgrows braidsort.work_mem is written to the
-- spill device as sorted runs of <key, ref> and merged; results are
-- unchanged and only keys and refs are ever written.
--
SET braidsort.force = on;
-- MergePass itself (the write-limited modes are tested in wlimit)
SET braidsort.sort_mode = mergepass;
SET braidsort.work_mem = 64;
SET braidsort.gather_batch = 64;
-- two threads whatever the machine: a helper merges ahead, which takes
-- memory from the gather's batches (their number is shown)
SET braidsort.sort_threads = 2;

-- a 64kB budget merges four runs at a time: several merge passes
SELECT * FROM explain_masked('SELECT * FROM longtext ORDER BY t, id');
SELECT * FROM explain_masked('SELECT id FROM par_t ORDER BY k DESC, id');
SELECT check_sort('SELECT * FROM longtext ORDER BY t, id');
-- keys longer than the prefix, kept aside, stay within the budget with
-- the entries (they reached 1.5 times it)
SELECT map_kb('SELECT * FROM longtext ORDER BY t, id') BETWEEN 1 AND 64 AS within_budget;
SELECT check_sort('SELECT * FROM longtext ORDER BY b DESC, t, id');
SELECT check_sort('SELECT * FROM alltypes ORDER BY bp DESC NULLS LAST, by, i8 DESC, id');
SELECT check_sort('SELECT id, f8 FROM alltypes ORDER BY f8, id');
SELECT check_sort('SELECT t FROM longtext ORDER BY t');
SELECT check_sort('SELECT * FROM par_t ORDER BY t DESC');

-- the executor contract over merged runs: cursors read the merged refs by
-- position, rewinds and rescans, mark/restore in merged output
SELECT * FROM check_contract('longtext', 't, id', 't', cols => 'id, t');
SELECT * FROM check_contract('dom_t', 'a, b', 'a', rescans => 100);

-- the final merge takes any number of runs (a loser tree of any size)
CREATE FUNCTION runs_and_check(wm int, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	runs text := '?';
	passes text := '?';
BEGIN
	PERFORM set_config('braidsort.work_mem', wm::text, true);
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line ~ 'Runs: ' THEN
			runs := substring(line FROM 'Runs: (\d+)');
		ELSIF line ~ 'Merge Passes: ' THEN
			passes := substring(line FROM 'Merge Passes: (\d+)');
		END IF;
	END LOOP;
	RETURN runs || ' runs, ' || passes || ' passes: ' || check_sort(q);
END $$;
SELECT wm, runs_and_check(wm, 'SELECT id, k FROM par_t ORDER BY k, id')
FROM (VALUES (2000), (1400), (1100), (900), (750), (600), (500), (420), (360), (300),
	(128), (96), (64)) v(wm);
SELECT runs_and_check(700, 'SELECT * FROM longtext ORDER BY t DESC, id');
-- larger inputs: 5 to 12 runs merged in one pass, and at 150 kB (a fan-in
-- of 9) 47 in two.  With the larger budgets the runs after the first are
-- made from half the IndexMap by a helper while the scan goes on (more
-- runs, never another pass).
CREATE TABLE merge_t AS
SELECT i AS id, md5(i::text) COLLATE "C" AS t
FROM generate_series(1, 150000) i;
ANALYZE merge_t;
SELECT wm, runs_and_check(wm, 'SELECT id, t FROM merge_t ORDER BY t, id')
FROM (VALUES (2600), (2000), (1600), (1300), (1100), (150)) v(wm);
DROP TABLE merge_t;

-- a larger budget: one merge pass
SET braidsort.work_mem = 1024;
SELECT * FROM explain_masked('SELECT * FROM par_t ORDER BY t');
SELECT check_sort('SELECT * FROM par_t ORDER BY t');

-- the spill tablespace must exist; runs go wherever it points
SET braidsort.spill_tablespace = no_such_tablespace;
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE braid_spill LOCATION '';
SET braidsort.spill_tablespace = braid_spill;
SELECT check_sort('SELECT * FROM longtext ORDER BY t DESC, id');
SELECT count(*) AS leftover_spill_files FROM pg_ls_tmpdir(
	(SELECT oid FROM pg_tablespace WHERE spcname = 'braid_spill'));
-- like temp_tablespaces, spilling there needs CREATE on it: a role without
-- it spills where an empty setting would (no error), and cannot SET it
CREATE ROLE braid_nobody;
GRANT SELECT ON longtext TO braid_nobody;
SET ROLE braid_nobody;
SELECT count(*) FROM (SELECT * FROM longtext ORDER BY t OFFSET 0) s;
SET braidsort.spill_tablespace = braid_spill;
RESET ROLE;
RESET braidsort.spill_tablespace;
DROP TABLESPACE braid_spill;
DROP OWNED BY braid_nobody;
DROP ROLE braid_nobody;

-- temp_file_limit applies to spill files
SET temp_file_limit = 64;
SELECT count(*) FROM (SELECT * FROM par_t ORDER BY t OFFSET 0) s;
RESET temp_file_limit;
SELECT count(*) AS leftover_spill_files FROM pg_ls_tmpdir();

-- merging ahead: while a batch of rows spread over many pages is gathered,
-- a helper thread takes the next batch from the final merge.  Keys grow
-- longer along the sort order, so the helper keeps reaching keys its run
-- readers have no room for, and must leave them to the backend.
RESET braidsort.gather_batch;
CREATE TABLE ahead_t (id int, k bytea, pad text);
INSERT INTO ahead_t
SELECT g, decode(lpad(to_hex(v), 8, '0') || repeat('ab', v / 16), 'hex'),
	   repeat('p', 300)
FROM (SELECT g, (g * 7919) % 20011 AS v FROM generate_series(1, 20000) g) s;
ANALYZE ahead_t;
SELECT check_sort('SELECT id, k FROM ahead_t ORDER BY k');
SELECT check_sort('SELECT * FROM ahead_t ORDER BY k DESC');
DO $$
DECLARE
	line text;
	ahead bigint := 0;
BEGIN
	-- a helper's share depends on timing: any of three sorts will do
	FOR attempt IN 1..3 LOOP
		FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF) SELECT * FROM ahead_t ORDER BY k' LOOP
			IF line ~ 'Rows Merged Ahead: ' THEN
				ahead := greatest(ahead, substring(line FROM 'Rows Merged Ahead: (\d+)')::bigint);
			END IF;
		END LOOP;
		EXIT WHEN ahead > 0;
	END LOOP;
	RAISE NOTICE 'rows merged ahead: %', CASE WHEN ahead > 0 THEN 'some' ELSE 'none' END;
END $$;
SELECT count(*) AS leftover_spill_files FROM pg_ls_tmpdir();
DROP TABLE ahead_t;
RESET braidsort.sort_threads;
