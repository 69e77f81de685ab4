/* braidsort--0.1.sql */

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
