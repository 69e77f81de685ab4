/* braidsort--0.7--0.7.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION braidsort UPDATE TO '0.7.1'" to load this file. \quit

-- The stored profiles say what they were taken under and whether this
-- session uses them: the emulation's interference delay and lanes, whether
-- the device is persistent memory (NULL for profiles taken by 0.7 and earlier),
-- and in_use (a profile is used only under the emulation it was taken
-- with).  The function gains four columns, so a new one takes its place
-- under the same name and the view is replaced in place, its new columns
-- at the end: views built on it are kept, and so are its privileges.
CREATE FUNCTION device_profiles_0_7_1(OUT tablespace text, OUT device text,
									OUT taken_at timestamptz, OUT operation text,
									OUT access_size int, OUT threads int,
									OUT mb_per_s float8, OUT ns_per_access float8,
									OUT emulate_read_ns int, OUT emulate_write_ns int,
									OUT emulate_interference_ns int,
									OUT emulate_parallelism int,
									OUT persistent_memory bool, OUT in_use bool)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_device_profiles'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE OR REPLACE VIEW device_profiles AS
	SELECT * FROM device_profiles_0_7_1() AS device_profiles;
DROP FUNCTION device_profiles();
ALTER FUNCTION device_profiles_0_7_1() RENAME TO device_profiles;
COMMENT ON VIEW device_profiles IS
'the stored measurements of the last profile of each tablespace (they survive restarts), the emulation they were taken under, whether the device is persistent memory, and whether this session uses the profile (only under the same emulation)';

-- Drop a stored profile: pool sizes and the cost model go back to their
-- defaults for the device.  Like profile_device(), it changes what every
-- session uses, so it is revoked from PUBLIC.
CREATE FUNCTION forget_profile(tablespace name) RETURNS boolean
AS 'MODULE_PATHNAME', 'braidsort_forget_profile'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION forget_profile(name) FROM PUBLIC;
COMMENT ON FUNCTION forget_profile(name) IS
'drop the stored device profile of a tablespace (true if there was one): pool sizes and costs go back to their defaults for its device';

-- Where this session's spill files go, and why not where
-- braidsort.spill_tablespace says.
CREATE FUNCTION spill_location(OUT setting text, OUT tablespace text,
							   OUT setting_unusable text, OUT directory text,
							   OUT device text, OUT free_mb bigint,
							   OUT profile text, OUT persistent_memory bool)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_spill_location'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
CREATE VIEW spill_location AS SELECT * FROM spill_location();
GRANT SELECT ON spill_location TO PUBLIC;
COMMENT ON VIEW spill_location IS
'where this session''s spill files go: braidsort.spill_tablespace as set, the tablespace used and why not the one set, its temporary directory, the device and its free space, and whether the device''s stored profile is used in this session (in use, other emulation, none) and found persistent memory';

-- sort_modes() shows PostgreSQL's estimate beside the modes, as
-- join_modes() does: postgresql_ms, and compared_ms, each mode's estimate
-- of the whole sort as weighed against it (a sort is taken when MergePass's
-- is below 0.85 of it).  Its result type changes, so it is made again.
DROP FUNCTION sort_modes(text);
CREATE FUNCTION sort_modes(query text,
						   OUT node int, OUT sort_key text, OUT mode text,
						   OUT write_intensity float8, OUT lines_written float8,
						   OUT lines_read float8, OUT input_passes float8,
						   OUT selection_passes float8, OUT est_ms float8,
						   OUT postgresql_ms float8, OUT compared_ms float8,
						   OUT feasible boolean, OUT chosen boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'braidsort_sort_modes'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION sort_modes(text) IS
'plans a query and estimates, for every sort braidsort would take, each write-limited mode (mergepass, hybrid, segment, lazy) at braidsort.write_intensity: lines written and read, input passes, ms, the whole sort''s estimate against PostgreSQL''s, and which one would run';
