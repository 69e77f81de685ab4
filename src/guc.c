/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  braidsort.* configuration parameters.
 *
 * Most parameters are user-settable, so a session (or a test) can force,
 * disable or resize braidsort without a restart.  The I/O policy and the
 * writer cap are server-wide (they arbitrate between sessions), and the
 * device emulation delays are superuser-only: a session slowing its own
 * spill I/O would hold the shared device's gate for everyone.  All are
 * defined at preload so that postgresql.conf values are validated at server
 * start.
 *
 * src/guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/guc.h"

#include "guc.h"
#include "io/hugepages.h"
#include "io/device.h"
#include "io/iosched.h"
#include "core/pool.h"

bool		braid_enable = true;
bool		braid_force = false;
int			braid_adaptive = BRAID_ADAPTIVE_ON;
int			braid_work_mem = -1;
int			braid_gather_batch = 1024 * 1024;
int			braid_sort_threads = 0;
int			braid_gather_source = BRAID_GATHER_AUTO;
int			braid_parallel_sort = BRAID_PARALLEL_SORT_AUTO;
int			braid_parallel_join = BRAID_PARALLEL_JOIN_SHARED;
int			braid_sort_mode = BRAID_SORT_MODE_AUTO;
double		braid_write_intensity = -1.0;
int			braid_join_mode = BRAID_JOIN_MODE_AUTO;
bool		braid_join_read_ahead = true;
bool		braid_gather_read_stream = false;
bool		braid_join_range_partitions = true;
int			braid_log_declines = BRAID_LOG_DECLINES_OFF;

static const struct config_enum_entry adaptive_options[] = {
	{"off", BRAID_ADAPTIVE_OFF, false},
	{"on", BRAID_ADAPTIVE_ON, false},
	{"always", BRAID_ADAPTIVE_ALWAYS, false},
	{"false", BRAID_ADAPTIVE_OFF, true},
	{"true", BRAID_ADAPTIVE_ON, true},
	{"no", BRAID_ADAPTIVE_OFF, true},
	{"yes", BRAID_ADAPTIVE_ON, true},
	{"0", BRAID_ADAPTIVE_OFF, true},
	{"1", BRAID_ADAPTIVE_ON, true},
	{NULL, 0, false}
};

static const struct config_enum_entry gather_source_options[] = {
	{"auto", BRAID_GATHER_AUTO, false},
	{"heap_tid", BRAID_GATHER_HEAP_TID, false},
	{"value_log", BRAID_GATHER_VALUE_LOG, false},
	{NULL, 0, false}
};

static const struct config_enum_entry parallel_sort_options[] = {
	{"auto", BRAID_PARALLEL_SORT_AUTO, false},
	{"each", BRAID_PARALLEL_SORT_EACH, false},
	{"one", BRAID_PARALLEL_SORT_ONE, false},
	{"shared", BRAID_PARALLEL_SORT_SHARED, false},
	{NULL, 0, false}
};

static const struct config_enum_entry parallel_join_options[] = {
	{"shared", BRAID_PARALLEL_JOIN_SHARED, false},
	{"each", BRAID_PARALLEL_JOIN_EACH, false},
	{NULL, 0, false}
};

static const struct config_enum_entry sort_mode_options[] = {
	{"auto", BRAID_SORT_MODE_AUTO, false},
	{"mergepass", BRAID_SORT_MODE_MERGEPASS, false},
	{"hybrid", BRAID_SORT_MODE_HYBRID, false},
	{"segment", BRAID_SORT_MODE_SEGMENT, false},
	{"lazy", BRAID_SORT_MODE_LAZY, false},
	{NULL, 0, false}
};

static const struct config_enum_entry join_mode_options[] = {
	{"off", BRAID_JOIN_MODE_OFF, false},
	{"auto", BRAID_JOIN_MODE_AUTO, false},
	{"grace", BRAID_JOIN_MODE_GRACE, false},
	{"hybrid", BRAID_JOIN_MODE_HYBRID, false},
	{"segmented", BRAID_JOIN_MODE_SEGMENTED, false},
	{"lazy", BRAID_JOIN_MODE_LAZY, false},
	{NULL, 0, false}
};

static const struct config_enum_entry log_declines_options[] = {
	{"off", BRAID_LOG_DECLINES_OFF, false},
	{"notice", BRAID_LOG_DECLINES_NOTICE, false},
	{"log", BRAID_LOG_DECLINES_LOG, false},
	{NULL, 0, false}
};

static const struct config_enum_entry io_policy_options[] = {
	{"interference_aware", BRAID_IO_INTERFERENCE_AWARE, false},
	{"overlap", BRAID_IO_OVERLAP, false},
	{NULL, 0, false}
};

/*
 * check_write_intensity
 *		-1 means "cost-optimal"; otherwise a share, 0 to 1.
 */
static bool
check_write_intensity(double *newval, void **extra, GucSource source)
{
	if (*newval == -1.0 || (*newval >= 0.0 && *newval <= 1.0))
		return true;
	GUC_check_errdetail("braidsort.write_intensity must be -1 (cost-optimal) or between 0 and 1.");
	return false;
}

/*
 * check_braid_work_mem
 *		-1 means "use work_mem"; otherwise at least 64kB, like work_mem.
 */
static bool
check_braid_work_mem(int *newval, void **extra, GucSource source)
{
	if (*newval == -1 || *newval >= 64)
		return true;
	GUC_check_errdetail("%d kB is below the minimum of 64 kB for parameter \"braidsort.work_mem\" (-1 uses work_mem).",
						*newval);
	return false;
}

/*
 * check_log_declines
 *		"log" writes to the server log, which only superusers may flood, as
 *		with log_min_messages (or roles granted SET on the parameter, GRANT
 *		SET ON PARAMETER): another role may not ask for it in
 *		its session, its connection's options, or its or its database's
 *		defaults (checked when they are set: ALTER ROLE/DATABASE ... SET).
 *		Values from postgresql.conf, ALTER SYSTEM, or defaults a superuser
 *		set apply to every session.  A parallel worker takes its leader's.
 */
static bool
check_log_declines(int *newval, void **extra, GucSource source)
{
	if (*newval == BRAID_LOG_DECLINES_LOG && source >= PGC_S_CLIENT &&
		source != PGC_S_OVERRIDE && !InitializingParallelWorker &&
		IsTransactionState() && !superuser() &&
		pg_parameter_aclcheck("braidsort.log_declines", GetUserId(),
							  ACL_SET) != ACLCHECK_OK)
	{
		GUC_check_errcode(ERRCODE_INSUFFICIENT_PRIVILEGE);
		GUC_check_errmsg("permission denied to set parameter \"braidsort.log_declines\" to \"log\"");
		GUC_check_errhint("Only superusers and roles granted SET on the parameter may send braidsort's declines to the server log; \"notice\" sends them to the client.");
		return false;
	}
	return true;
}

/*
 * braid_decline_level
 *		The level of the messages that say why braidsort left a Sort or a
 *		Hash Join to PostgreSQL: DEBUG1, unless braidsort.log_declines asks
 *		for NOTICE (the client) or LOG (the server log).
 */
int
braid_decline_level(void)
{
	switch (braid_log_declines)
	{
		case BRAID_LOG_DECLINES_NOTICE:
			return NOTICE;
		case BRAID_LOG_DECLINES_LOG:
			return LOG;
		default:
			return DEBUG1;
	}
}

/*
 * braid_define_gucs
 *		Define every braidsort.* parameter and reserve the prefix.
 */
void
braid_define_gucs(void)
{
	DefineCustomBoolVariable("braidsort.enable",
							 "Enables braidsort's replacement of Sort and Hash Join nodes.",
							 "When off, every Sort and every Hash Join is left to PostgreSQL.",
							 &braid_enable,
							 true,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("braidsort.force",
							 "Replaces every eligible Sort and Hash Join, whatever the cost model says.",
							 "Intended for testing; ineligible ones are still left alone.",
							 &braid_force,
							 false,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("braidsort.adaptive",
							 "Takes Sorts expected to be small, switching to braidsort if they are not.",
							 "A Sort left to PostgreSQL only because of its row estimate starts as "
							 "PostgreSQL's in-memory sort; when its input outgrows work_mem it switches "
							 "to braidsort if the cost model expects a gain (on), or always (always, "
							 "for testing).",
							 &braid_adaptive,
							 BRAID_ADAPTIVE_ON,
							 adaptive_options,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("braidsort.work_mem",
							"Memory budget for one braidsort IndexMap.",
							"-1 uses work_mem. When the IndexMap outgrows it, sorted runs "
							"of keys and refs spill to braidsort.spill_tablespace and are merged.",
							&braid_work_mem,
							-1,
							-1,
							MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB | GUC_EXPLAIN,
							check_braid_work_mem, NULL, NULL);

	DefineCustomIntVariable("braidsort.gather_batch",
							"Largest amount of tuple data fetched per gather batch.",
							"Sorted rows are fetched back from the table in batches, each "
							"visiting its heap pages once, in block order. A batch is also "
							"limited by what the memory budget leaves after the sort.",
							&braid_gather_batch,
							1024 * 1024,
							64,
							1024 * 1024,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("braidsort.sort_threads",
							"Threads that sort one IndexMap.",
							"0 uses one per CPU, shared among the processes of a parallel "
							"plan. The threads only sort memory: they never call into the server.",
							&braid_sort_threads,
							0,
							0,
							64,
							PGC_USERSET,
							GUC_EXPLAIN,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("braidsort.sort_mode",
							 "How a sort whose IndexMap outgrows the budget limits its writes.",
							 "auto lets the cost model choose from the spill device's profile; "
							 "mergepass writes every entry once per merge pass; hybrid keeps the "
							 "last budget-full in memory; segment sorts part of the input by "
							 "selection passes that write nothing; lazy sorts by selection "
							 "passes and writes the remainder once when re-reading costs more.",
							 &braid_sort_mode,
							 BRAID_SORT_MODE_AUTO,
							 sort_mode_options,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("braidsort.join_mode",
							 "Whether and how BraidJoin replaces hash joins that spill.",
							 "off leaves every hash join to PostgreSQL; auto lets the cost model "
							 "choose among the modes from the spill device's profile; grace writes "
							 "every partition's entries of both inputs; hybrid writes a share of "
							 "each input's partitions, the inner input's first; segmented writes "
							 "some whole partitions and rebuilds the rest by rescanning; lazy "
							 "writes nothing until rescanning costs more than writing the rest.",
							 &braid_join_mode,
							 BRAID_JOIN_MODE_AUTO,
							 join_mode_options,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("braidsort.join_read_ahead",
							 "Reads a BraidJoin's outer rows a few rows ahead of their probes.",
							 "When off, the first pass probes each row of the in-memory "
							 "partition as it is read.  Intended for measurements.",
							 &braid_join_read_ahead,
							 true,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("braidsort.gather_read_stream",
							 "Reads the blocks of a late gather from a table larger than "
							 "half of shared buffers through a read stream.",
							 "PostgreSQL 17 and later: the stream reads ahead of the gather "
							 "and combines adjacent blocks into one read (asynchronously "
							 "with PostgreSQL 18's io_method).  When off, or before 17, "
							 "blocks are read one at a time.  Off by default: on tables "
							 "in memory it was slower.",
							 &braid_gather_read_stream,
							 false,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("braidsort.join_range_partitions",
							 "Partitions a BraidJoin by key range when its inner table is in key order.",
							 "When the inner table's physical order follows the join key "
							 "(ANALYZE's correlation), each partition's inner rows then lie in "
							 "a part of the table.  When off, partitions are always by hash "
							 "value.  Intended for measurements.",
							 &braid_join_range_partitions,
							 true,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE | GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("braidsort.log_declines",
							 "Reports each Sort and Hash Join braidsort leaves to PostgreSQL, and why.",
							 "off says it only at debug1; notice sends it to the client; log "
							 "writes it to the server log (superusers only).",
							 &braid_log_declines,
							 BRAID_LOG_DECLINES_OFF,
							 log_declines_options,
							 PGC_USERSET,
							 0,
							 check_log_declines, NULL, NULL);

	DefineCustomRealVariable("braidsort.write_intensity",
							 "Share of MergePass's device writes a write-limited sort may spend.",
							 "-1 lets the cost model choose the fastest; 0 to 1 picks the fastest "
							 "sort mode that writes at most that share of what MergePass would.",
							 &braid_write_intensity,
							 -1.0, -1.0, 1.0,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 check_write_intensity, NULL, NULL);

	DefineCustomEnumVariable("braidsort.gather_source",
							 "Where a sort over a table scan gets whole rows back from.",
							 "auto lets the cost model choose: heap_tid refetches rows from the "
							 "table by TID after sorting keys, value_log keeps each row as it "
							 "is read (in memory, or on the spill device beyond half of the "
							 "budget). Sorts over anything but a plain table scan always use "
							 "a value log.",
							 &braid_gather_source,
							 BRAID_GATHER_AUTO,
							 gather_source_options,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("braidsort.parallel_sort",
							 "How braidsort sorts the rows of a parallel sequential scan that a Gather Merge collects.",
							 "auto lets the cost model choose between PostgreSQL's plan, a "
							 "BraidSort in each process and one BraidSort over the whole scan "
							 "in place of the Gather Merge; each keeps the Gather Merge and "
							 "sorts each process's share; one replaces the Gather Merge "
							 "wherever that is expected to beat PostgreSQL's parallel plan "
							 "(with braidsort.force, wherever it can); shared replaces it by "
							 "a Gather over one BraidSort that every process builds and one "
							 "merges, wherever braidsort would sort each process's share.",
							 &braid_parallel_sort,
							 BRAID_PARALLEL_SORT_AUTO,
							 parallel_sort_options,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("braidsort.parallel_join",
							 "How the processes of a parallel BraidJoin partition its inner input.",
							 "shared has every process partition its share of the inner "
							 "table's parallel scan, and each join every process's "
							 "partitions; each has every process read and partition the "
							 "whole inner table.",
							 &braid_parallel_join,
							 BRAID_PARALLEL_JOIN_SHARED,
							 parallel_join_options,
							 PGC_USERSET,
							 GUC_EXPLAIN,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("braidsort.spill_tablespace",
							   "Tablespace where braidsort spills IndexMap runs.",
							   "Point it at a tablespace on a DAX-mounted filesystem. Empty "
							   "uses temp_tablespaces, else the database's default tablespace; "
							   "so does a tablespace the role may not create in, as for "
							   "temp_tablespaces.",
							   &braid_spill_tablespace,
							   "",
							   PGC_USERSET,
							   GUC_EXPLAIN,
							   braid_check_spill_tablespace, NULL, NULL);

	DefineCustomIntVariable("braidsort.emulate_read_ns",
							"Delay added per 64-byte line read from the spill device.",
							"Emulates a slower device on DRAM-backed storage; 0 adds nothing.",
							&braid_emulate_read_ns,
							0,
							0,
							1000000,
							PGC_SUSET,
							GUC_EXPLAIN,
							NULL, NULL, NULL);

	DefineCustomIntVariable("braidsort.emulate_write_ns",
							"Delay added per 64-byte line written to the spill device.",
							"Emulates a slower (or write-asymmetric) device on DRAM-backed "
							"storage; 0 adds nothing.",
							&braid_emulate_write_ns,
							0,
							0,
							1000000,
							PGC_SUSET,
							GUC_EXPLAIN,
							NULL, NULL, NULL);

	DefineCustomIntVariable("braidsort.emulate_interference_ns",
							"Delay added per 64-byte line read from the spill device while it is being written.",
							"Emulates read/write interference (BRAID's I), which DRAM-backed "
							"storage does not have; 0 adds nothing.",
							&braid_emulate_interference_ns,
							0,
							0,
							1000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("braidsort.emulate_parallelism",
							"Accesses an emulated spill device serves at once.",
							"Emulated delays are reserved on a clock per device, shared by "
							"all sessions: this many accesses overlap, further ones queue.",
							&braid_emulate_parallelism,
							4,
							1,
							BRAID_CLOCK_MAX_LANES,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("braidsort.io_policy",
							 "How spill reads and writes of all sessions share a device.",
							 "overlap lets them run at will; interference_aware never lets "
							 "reads and writes to one device overlap, and caps concurrent "
							 "writer threads at the device's profiled optimum.",
							 &braid_io_policy,
							 BRAID_IO_OVERLAP,
							 io_policy_options,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("braidsort.read_threads",
							"Threads that read from the spill device at once.",
							"0 takes the device profile's best read thread count "
							"(one per CPU, up to 8, without a profile).",
							&braid_read_threads,
							0,
							0,
							64,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("braidsort.write_threads",
							"Threads that write to the spill device at once, across all sessions.",
							"0 takes the device profile's best write thread count "
							"(2 without a profile). Under interference_aware this also caps "
							"the writer threads of all sessions on one device.",
							&braid_write_threads,
							0,
							0,
							64,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("braidsort.max_backend_threads",
							"The most threads one backend runs braidsort's work on at once, its own included.",
							"A server-wide cap on braidsort.sort_threads, read_threads and "
							"write_threads as one backend runs them: a task asking for more "
							"shares the threads there are.",
							&braid_pool_max_threads,
							BRAID_POOL_DEFAULT_MAX_THREADS,
							1,
							64,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("braidsort.advise_huge_pages",
							 "Advises the kernel to back shared buffers with transparent huge pages.",
							 "Has an effect only where the kernel's "
							 "transparent_hugepage/shmem_enabled setting is \"advise\", and "
							 "shared memory is not in explicit huge pages (huge_pages). "
							 "BraidJoin's reads of rows by TID run faster in huge pages.",
							 &braid_advise_huge_pages_on,
							 true,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("braidsort");
}

/*
 * braid_sort_thread_count
 *		Threads one braidsort node sorts and gathers with: the setting, or
 *		the CPUs its process may count on.  Under a Gather, "processes"
 *		(the planned workers and the leader) run the node at once, each
 *		with its own threads: more threads than CPUs would only take turns
 *		on them, so each process gets its share of the CPUs (at least one).
 *		Never more than braidsort.max_backend_threads.
 */
int
braid_sort_thread_count(int processes)
{
	if (braid_sort_threads > 0)
		return Min(braid_sort_threads, braid_pool_max_threads);
	return Max(1, Min(Min(braid_pool_cpus() / Max(processes, 1), 8), braid_pool_max_threads));
}

/*
 * braid_budget_bytes
 *		The IndexMap memory budget in bytes.
 */
size_t
braid_budget_bytes(void)
{
	int			kb = (braid_work_mem == -1) ? work_mem : braid_work_mem;

	return (size_t) kb * 1024;
}
