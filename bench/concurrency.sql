-- bench/concurrency.sql: the pgbench script of `bench/run.sh --concurrency`
-- (bench/braidbench/workloads/concurrency_run.py).
--
-- Every client runs these sorts, one transaction per pass over the script.
-- The session settings come from PGOPTIONS (braidsort forced, a small
-- braidsort.work_mem so that each sort spills to tablespace dax,
-- device emulation on); the workload creates the tables and bench_check(),
-- and EXPLAIN ANALYZEs each statement once before the runs (for
-- bench_check(NAME): the checksum query of NAME), so keep one statement per
-- line.
--
-- 1. heap-TID MergePass over sortbench (rows fetched back by TID)
SELECT count(*) FROM (SELECT * FROM sortbench ORDER BY k OFFSET 0) s;
-- 2. value-log sort over a UNION ALL of two tables (rows kept in the value log)
SELECT count(*) FROM (SELECT * FROM (SELECT k, v FROM sortbench UNION ALL SELECT k, v FROM sortbench2) u ORDER BY k OFFSET 0) s;
-- 3. checked: heap-TID sort of sortbench2; row count, content and order
--    checksums must equal those computed with braidsort.enable = off, else
--    bench_check() raises and pgbench reports the client as aborted
SELECT bench_check('tid_small');
-- 4. checked: value-log sort over sortbench2 UNION ALL 1/8 of sortbench
SELECT bench_check('vlog_small');
