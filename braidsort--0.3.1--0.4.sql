/* braidsort--0.3.1--0.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION braidsort UPDATE TO '0.4'" to load this file. \quit

-- What each write-limited sort mode would cost for every sort braidsort
-- would take in a query (sort_modes.c): the query is planned, not run.
CREATE FUNCTION sort_modes(query text,
						   OUT node int, OUT sort_key text, OUT mode text,
						   OUT write_intensity float8, OUT lines_written float8,
						   OUT lines_read float8, OUT input_passes float8,
						   OUT selection_passes float8, OUT est_ms float8,
						   OUT feasible boolean, OUT chosen boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_sort_modes'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION sort_modes(text) IS
'plans a query and estimates, for every sort braidsort would take, each write-limited mode (mergepass, hybrid, segment, lazy) at braidsort.write_intensity: lines written and read, input passes, ms, and which one would run';

COMMENT ON VIEW progress IS
'running BraidSort nodes: phase (building, writing run, sorting, merging, selecting, gathering, done), rows read of the estimate, runs written, merge passes, gather batches, and a wait for the spill device''s I/O gate';

-- The scheduler view gains the emulated device clock's counters (emulate.c):
-- device time reserved, time accesses queued for a free lane, and lines read
-- that paid the interference delay.  Its function gains three columns, so a
-- new one takes its place under the same name and the view is replaced in
-- place, its new columns at the end: views built on it are kept (dropping
-- it would make the update fail on them).
CREATE FUNCTION scheduler_0_4(OUT device text, OUT tablespace text, OUT io_policy text,
							  OUT phase text, OUT readers int, OUT writers int,
							  OUT writer_threads int, OUT waiting_readers int,
							  OUT waiting_writers int, OUT write_thread_cap int,
							  OUT read_grants bigint, OUT write_grants bigint,
							  OUT waits bigint, OUT phase_switches bigint,
							  OUT overlaps bigint, OUT profilers int,
							  OUT ungated_reads bigint, OUT emulated_busy_ms float8,
							  OUT emulated_queued_ms float8, OUT interfered_lines bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_scheduler'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE OR REPLACE VIEW scheduler AS SELECT * FROM scheduler_0_4() AS scheduler;
DROP FUNCTION scheduler();
ALTER FUNCTION scheduler_0_4() RENAME TO scheduler;
GRANT SELECT ON scheduler TO PUBLIC;
COMMENT ON VIEW scheduler IS
'per spill device: active and waiting readers and writers, grants, waits, phase switches, read/write overlaps (0 under io_policy = interference_aware), reads made without a read grant (always 0), and the emulated device clock: time reserved, time queued for a free lane, lines read under interference';
