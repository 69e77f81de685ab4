/* braidsort--0.6--0.7.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION braidsort UPDATE TO '0.7'" to load this file. \quit

-- 0.7 builds for PostgreSQL 15 to 18 and changes no SQL object: the update
-- only records the version the library reports (braidsort.version()).
