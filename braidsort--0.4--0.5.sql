/* braidsort--0.4--0.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION braidsort UPDATE TO '0.5'" to load this file. \quit

-- What each BraidJoin mode would cost for every hash join braidsort would
-- take in a query (modes.c): the query is planned, not run.
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

-- When the counters of stats (and scheduler) last started.
CREATE FUNCTION stats_reset_time() RETURNS timestamptz
AS 'MODULE_PATHNAME', 'braidsort_stats_reset_time'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION stats_reset_time() IS
'when braidsort''s counters (stats, and scheduler''s) last started: the server''s start or the last stats_reset()';

COMMENT ON VIEW stats IS
'braidsort counters since server start or stats_reset(): sorts by method, joins by mode, rows, value bytes avoided, declines by reason, and per-device spill traffic';

-- 0.4 as first written recreated the scheduler view without the grant
-- every view has: every role may read it again.
GRANT SELECT ON scheduler TO PUBLIC;
