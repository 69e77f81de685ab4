/* braidsort--0.5--0.6.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION braidsort UPDATE TO '0.6'" to load this file. \quit

-- The version of the braidsort library the server has loaded: a library
-- installed since the server started is not loaded until it restarts, so
-- this may differ from the extension's version (pg_extension.extversion).
CREATE FUNCTION version() RETURNS text
AS 'MODULE_PATHNAME', 'braidsort_version'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION version() IS
'the version of the braidsort library loaded in the server (it changes at a restart after a new library is installed; the extension''s SQL objects are brought up to it with ALTER EXTENSION braidsort UPDATE)';

-- A database updated to 0.5 before its script took its final form (25 to
-- 27 November 2026) lacks what that script added since: join_modes()'s
-- compared_ms, stats_reset_time() and the scheduler view's grant.  Give
-- it them, so that every 0.5 comes to what a fresh 0.6 has.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_proc
				   WHERE oid = 'join_modes(text)'::regprocedure
					 AND 'compared_ms' = ANY (proargnames)) THEN
		DROP FUNCTION join_modes(text);
		CREATE FUNCTION join_modes(query text,
								   OUT node int, OUT join_clause text, OUT mode text,
								   OUT write_intensity float8, OUT partitions int,
								   OUT lines_written float8, OUT lines_read float8,
								   OUT rescans float8, OUT est_ms float8,
								   OUT postgresql_ms float8, OUT compared_ms float8,
								   OUT feasible boolean, OUT chosen boolean)
		RETURNS SETOF record
		AS 'MODULE_PATHNAME', 'braidsort_join_modes'
		LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
		COMMENT ON FUNCTION join_modes(text) IS
		'plans a query and estimates, for every hash join braidsort would take (BraidJoin), each mode (grace, hybrid, segmented, lazy) at braidsort.write_intensity: partitions, lines written and read, rescans, ms, PostgreSQL''s own hash join''s ms, the mode''s ms as weighed against it (the join is taken when the chosen mode''s is lower), and which one would run';
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION stats_reset_time() RETURNS timestamptz
AS 'MODULE_PATHNAME', 'braidsort_stats_reset_time'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION stats_reset_time() IS
'when braidsort''s counters (stats, and scheduler''s) last started: the server''s start or the last stats_reset()';

GRANT SELECT ON scheduler TO PUBLIC;
