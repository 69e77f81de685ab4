/* braidsort--0.3--0.3.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION braidsort UPDATE TO '0.3.1'" to load this file. \quit

-- The views are for every role, as the README says: their functions are
-- executable by PUBLIC, the views themselves need SELECT.
GRANT SELECT ON stats, scheduler, device_profiles TO PUBLIC;

-- What each running BraidSort node is doing (progress.c): one row per node
-- (a backend shows at most four), gone when the node ends.  Like
-- pg_stat_progress_*, the details of other roles' backends need the
-- privileges of their role or of pg_read_all_stats; others see the pid.
CREATE FUNCTION progress(OUT pid int, OUT leader_pid int, OUT node int,
						 OUT phase text, OUT rows_read bigint,
						 OUT rows_estimated bigint, OUT runs bigint,
						 OUT merge_passes int, OUT batches_gathered bigint,
						 OUT waiting text, OUT started timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_progress'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW progress AS SELECT * FROM progress();
COMMENT ON VIEW progress IS
'running BraidSort nodes: phase (building, writing run, sorting, merging, gathering, done), rows read of the estimate, runs written, merge passes, gather batches, and a wait for the spill device''s I/O gate';
GRANT SELECT ON progress TO PUBLIC;
