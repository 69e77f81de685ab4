/* braidsort--0.3.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION braidsort" to load this file. \quit

CREATE FUNCTION normalized_key(value anyelement,
							   descending boolean DEFAULT false,
							   nulls_first boolean DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'braidsort_normalized_key'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION normalized_key(anyelement, boolean, boolean) IS
'the memcmp-ordered key braidsort sorts this value by (errors if the type or collation has no exact encoder)';

-- Cumulative statistics of all sessions (stats.c)
CREATE FUNCTION stats(OUT scope text, OUT counter text, OUT value bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW stats AS SELECT * FROM stats();
COMMENT ON VIEW stats IS
'braidsort counters since server start or stats_reset(): sorts by method, rows, value bytes avoided, declines by reason, and per-device spill traffic';

CREATE FUNCTION stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'braidsort_stats_reset'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION stats_reset() FROM PUBLIC;

-- The interference-aware phase gate of each spill device (iosched.c)
CREATE FUNCTION scheduler(OUT device text, OUT tablespace text, OUT io_policy text,
						  OUT phase text, OUT readers int, OUT writers int,
						  OUT writer_threads int, OUT waiting_readers int,
						  OUT waiting_writers int, OUT write_thread_cap int,
						  OUT read_grants bigint, OUT write_grants bigint,
						  OUT waits bigint, OUT phase_switches bigint,
						  OUT overlaps bigint, OUT profilers int,
						  OUT ungated_reads bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_scheduler'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW scheduler AS SELECT * FROM scheduler();
COMMENT ON VIEW scheduler IS
'per spill device: active and waiting readers and writers, grants, waits, phase switches, read/write overlaps (0 under io_policy = interference_aware), and reads made without a read grant (always 0)';

-- Device profiling (profile.c)
CREATE FUNCTION profile_device(tablespace name DEFAULT NULL,
							   size_mb int DEFAULT 256,
							   max_threads int DEFAULT 0,
							   OUT operation text, OUT access_size int,
							   OUT threads int, OUT mb_per_s float8,
							   OUT ns_per_access float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_profile_device'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION profile_device(name, int, int) FROM PUBLIC;
COMMENT ON FUNCTION profile_device(name, int, int) IS
'microbenchmark the device of a tablespace (default: where braidsort spills) and store the profile';

CREATE FUNCTION device_profiles(OUT tablespace text, OUT device text,
								OUT taken_at timestamptz, OUT operation text,
								OUT access_size int, OUT threads int,
								OUT mb_per_s float8, OUT ns_per_access float8,
								OUT emulate_read_ns int, OUT emulate_write_ns int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_device_profiles'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW device_profiles AS SELECT * FROM device_profiles();
COMMENT ON VIEW device_profiles IS
'the stored measurements of the last profile of each tablespace (they survive restarts)';

CREATE FUNCTION device_summary(OUT tablespace text, OUT device text,
							   OUT taken_at timestamptz, OUT lambda float8,
							   OUT read_threads int, OUT write_threads int,
							   OUT interference float8,
							   OUT byte_addressable bool, OUT random_reads bool,
							   OUT asymmetric_cost bool, OUT read_write_interference bool,
							   OUT constrained_concurrency bool, OUT braid text,
							   OUT read_mb_per_s float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_device_summary'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION device_summary() IS
'per profiled device: lambda (write/read cost), best read and write threads, interference slowdown, and which BRAID properties hold';

-- Everyone may read the views and encode keys; profiling and resetting
-- statistics need a grant (see above).
GRANT USAGE ON SCHEMA @extschema@ TO PUBLIC;
