/* braidsort--0.3--0.3.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION braidsort UPDATE TO '0.3.1'" to load this file. \quit

-- The views are for every role, as the README says: their functions are
-- executable by PUBLIC, the views themselves need SELECT.
GRANT SELECT ON stats, scheduler, device_profiles TO PUBLIC;
