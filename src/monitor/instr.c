/*-------------------------------------------------------------------------
 *
 * instr.c
 *	  Parallel workers' EXPLAIN ANALYZE figures, passed to their leader.
 *
 * PostgreSQL 15 gives a CustomScan a share of the parallel query's DSM only
 * when the node is parallel_aware, and EXPLAIN calls such a node a
 * "Parallel Custom Scan", which a BraidSort under Gather Merge is not (each
 * process sorts what its own scan returns), nor a BraidJoin under a Gather
 * (each process joins its share of the outer rows to the whole inner
 * input).  So the workers' figures go through braidsort's own shared
 * memory instead: a small table of reports, a sort's or a join's, keyed by
 * (leader pid, plan node, worker number).  A worker's node writes
 * its report as it ends, when instrumentation is on; a Gather rescanned
 * launches new workers with the same numbers, whose reports add to the
 * earlier ones.  The leader's EXPLAIN reads its node's reports, and the
 * leader's node frees them as it begins and ends, with any others of the
 * leader's at transaction end and backend exit.  The table holds
 * 4 x max_worker_processes reports; a worker finding it full reports
 * nothing, and the leader then shows fewer workers.
 *
 * The reports are complete when the leader's EXPLAIN reads them:
 *
 *	- in a worker, ParallelQueryMain() (execParallel.c) runs ExecutorEnd,
 *	  hence the node's EndCustomScan and its report, before it returns to
 *	  ParallelWorkerMain() (parallel.c), which only then sends the leader
 *	  its 'X' (clean exit) message;
 *	- the leader's Gather or Gather Merge shutdown (ExecShutdownNode at the
 *	  end of ExecutePlan, or a rescan, which shuts the workers down before
 *	  relaunching them) runs ExecParallelFinish(), which waits in
 *	  WaitForParallelWorkersToFinish() for every launched worker's 'X' (or
 *	  its death);
 *	- EXPLAIN ANALYZE prints the plan after ExecutorRun and ExecutorFinish
 *	  and before ExecutorEnd (ExplainOnePlan), and auto_explain prints it in
 *	  its ExecutorEnd hook before the standard ExecutorEnd: the workers are
 *	  done, and the leader's node has not ended yet.
 *
 * A known limit: a query run while another of the same backend is still
 * open (say, from a function called by the outer query) may have a
 * BraidSort or BraidJoin node with the same plan node id under a Gather;
 * both then use the same key, and the outer EXPLAIN may show fewer or mixed
 * figures (never a join's as a sort's: each reads reports of its own kind
 * only).
 *
 * src/monitor/instr.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "monitor/instr.h"

/*
 * One worker's figures for one node of its leader's query: a sort's or a
 * join's (the node's kind).
 */
typedef struct BraidReport
{
	int			leader_pid;		/* 0: free */
	int			node;			/* plan_node_id */
	int			worker;			/* ParallelWorkerNumber */
	BraidInstrKind kind;
	BraidNodeInstr u;
} BraidReport;

typedef struct BraidReports
{
	LWLock	   *lock;
	int			capacity;
	BraidReport reports[FLEXIBLE_ARRAY_MEMBER];
} BraidReports;

static BraidReports *reports = NULL;

/* the leader may have reports to free at transaction end or exit */
static bool leader_armed = false;
static bool callbacks_registered = false;

/* report_capacity: reports the table holds. */
static int
report_capacity(void)
{
	return Max(4 * max_worker_processes, 16);
}

/* reports_size: bytes of the shared table. */
static Size
reports_size(void)
{
	return add_size(offsetof(BraidReports, reports),
					mul_size(report_capacity(), sizeof(BraidReport)));
}

/*
 * braid_instr_shmem_request
 *		Reserve the table and its lock (from the shmem_request_hook).
 */
void
braid_instr_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(reports_size()));
	RequestNamedLWLockTranche("braidsort reports", 1);
}

/*
 * braid_instr_shmem_init
 *		Create or attach to the table (from the shmem_startup_hook, with
 *		AddinShmemInitLock held).
 */
void
braid_instr_shmem_init(void)
{
	bool		found;

	reports = ShmemInitStruct("braidsort reports", reports_size(), &found);
	if (!found)
	{
		memset(reports, 0, reports_size());
		reports->lock = &(GetNamedLWLockTranche("braidsort reports"))->lock;
		reports->capacity = report_capacity();
	}
}

/* add_device: one device traffic count to another. */
static void
add_device(BraidDeviceStats *into, const BraidDeviceStats *from)
{
	into->bytes_written += from->bytes_written;
	into->bytes_read += from->bytes_read;
	into->lines_written += from->lines_written;
	into->lines_read += from->lines_read;
	into->files += from->files;
}

/*
 * accumulate
 *		Add a later loop's figures of the same worker, each field as the
 *		leader's node keeps it: counters add up, peaks take the larger, the
 *		last sort's figures the later.
 */
static void
accumulate(BraidSortInstr *into, const BraidSortInstr *from)
{
	into->sorts += from->sorts;
	into->rows_sorted += from->rows_sorted;
	into->runs += from->runs;
	into->merge_passes += from->merge_passes;
	add_device(&into->device, &from->device);
	into->gather_batches += from->gather_batches;
	into->rows_merged_ahead += from->rows_merged_ahead;
	into->build_ms += from->build_ms;
	into->sort_ms += from->sort_ms;
	into->merge_ms += from->merge_ms;
	into->merge_stream_ms += from->merge_stream_ms;
	into->gather_ms += from->gather_ms;
	into->selection_passes += from->selection_passes;
	into->memory_run_entries += from->memory_run_entries;
	into->select_ms += from->select_ms;
	into->peak_map_bytes = Max(into->peak_map_bytes, from->peak_map_bytes);
	into->peak_gather_bytes = Max(into->peak_gather_bytes, from->peak_gather_bytes);
	into->peak_rank_bytes = Max(into->peak_rank_bytes, from->peak_rank_bytes);
	into->ranked_keys = Max(into->ranked_keys, from->ranked_keys);
	into->rank_tried |= from->rank_tried;
	into->sort_threads = from->sort_threads;
	into->gather_source = from->gather_source;
	into->sorted_refs = from->sorted_refs;
	into->merge_ahead = from->merge_ahead;
	into->wl_mode = from->wl_mode;
	into->materialized = from->materialized;
	into->adaptive = from->adaptive;
	into->switched_at_rows = from->switched_at_rows;
	into->switch_declined_rows = from->switch_declined_rows;
	into->switch_estimated = from->switch_estimated;
	into->switch_braid_ms = from->switch_braid_ms;
	into->switch_pg_ms = from->switch_pg_ms;
	into->tuplesort_method = from->tuplesort_method;
	into->tuplesort_disk = from->tuplesort_disk;
	into->tuplesort_kb = from->tuplesort_kb;
}

/* accumulate_join_side: as accumulate_join, for one input. */
static void
accumulate_join_side(BraidJoinSideInstr *into, const BraidJoinSideInstr *from)
{
	into->materialized = from->materialized;
	into->rescans = from->rescans;
	into->pinned_peak = Max(into->pinned_peak, from->pinned_peak);
	add_device(&into->device, &from->device);
}

/*
 * accumulate_join
 *		As accumulate, for a join: the device traffic and times add up, the
 *		peaks take the larger, the last execution's figures the later;
 *		whether partition 0 was ever written out (the node never forgets
 *		it either).
 */
static void
accumulate_join(BraidJoinInstr *into, const BraidJoinInstr *from)
{
	into->joined |= from->joined;
	into->partitions = from->partitions;
	into->rounds = from->rounds;
	into->evicted |= from->evicted;
	into->lazy_from = from->lazy_from;
	into->peak_table_bytes = Max(into->peak_table_bytes, from->peak_table_bytes);
	accumulate_join_side(&into->outer, &from->outer);
	accumulate_join_side(&into->inner, &from->inner);
	into->first_ms += from->first_ms;
	into->rounds_ms += from->rounds_ms;
}

/*
 * report
 *		Leave a worker's figures of one node for its leader: added to its
 *		earlier report of the node, or in a free report.  The leader is
 *		this worker's lock group leader, set in our own PGPROC before the
 *		worker runs any plan (BecomeLockGroupMember in ParallelWorkerMain);
 *		its pid cannot change while we are in its group, since a leader
 *		waits for its workers before it exits.
 */
static void
report(int node, BraidInstrKind kind, const void *instr)
{
	PGPROC	   *leader = MyProc ? MyProc->lockGroupLeader : NULL;
	int			leader_pid;
	BraidReport *free_report = NULL;
	bool		done = false;

	if (reports == NULL || !IsParallelWorker() || leader == NULL || leader == MyProc)
		return;
	leader_pid = leader->pid;

	LWLockAcquire(reports->lock, LW_EXCLUSIVE);
	for (int i = 0; i < reports->capacity; i++)
	{
		BraidReport *r = &reports->reports[i];

		if (r->leader_pid == leader_pid && r->node == node &&
			r->worker == ParallelWorkerNumber && r->kind == kind)
		{
			if (kind == BRAID_INSTR_SORT)
				accumulate(&r->u.sort, (const BraidSortInstr *) instr);
			else
				accumulate_join(&r->u.join, (const BraidJoinInstr *) instr);
			done = true;
			break;
		}
		if (r->leader_pid == 0 && free_report == NULL)
			free_report = r;
	}
	if (!done && free_report != NULL)
	{
		free_report->leader_pid = leader_pid;
		free_report->node = node;
		free_report->worker = ParallelWorkerNumber;
		free_report->kind = kind;
		if (kind == BRAID_INSTR_SORT)
			free_report->u.sort = *(const BraidSortInstr *) instr;
		else
			free_report->u.join = *(const BraidJoinInstr *) instr;
		done = true;
	}
	LWLockRelease(reports->lock);
	if (!done)
		elog(DEBUG1, "braidsort: no room to report worker %d's figures to its leader",
			 ParallelWorkerNumber);
}

/* braid_instr_report: a worker's BraidSort node ends. */
void
braid_instr_report(int node, const BraidSortInstr *instr)
{
	report(node, BRAID_INSTR_SORT, instr);
}

/* braid_instr_report_join: a worker's BraidJoin node ends. */
void
braid_instr_report_join(int node, const BraidJoinInstr *instr)
{
	report(node, BRAID_INSTR_JOIN, instr);
}

/*
 * forget
 *		Free the reports to this backend, of one node or (node < 0) all.
 */
static void
forget(int node)
{
	LWLockAcquire(reports->lock, LW_EXCLUSIVE);
	for (int i = 0; i < reports->capacity; i++)
	{
		BraidReport *r = &reports->reports[i];

		if (r->leader_pid == MyProcPid && (node < 0 || r->node == node))
			r->leader_pid = 0;
	}
	LWLockRelease(reports->lock);
}

/* xact_callback: transaction end frees whatever the leader's nodes left. */
static void
xact_callback(XactEvent event, void *arg)
{
	if (!leader_armed)
		return;
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		forget(-1);
		leader_armed = false;
	}
}

/* exit_callback: so does backend exit. */
static void
exit_callback(int code, Datum arg)
{
	if (leader_armed)
		forget(-1);
	leader_armed = false;
}

/*
 * braid_instr_leader_begin
 *		An instrumented node begins outside a parallel worker: free any
 *		reports left under its key (its workers are not launched yet), and
 *		make sure the ones to come are freed by transaction end at the
 *		latest.
 */
void
braid_instr_leader_begin(int node)
{
	if (reports == NULL || IsParallelWorker())
		return;
	if (!callbacks_registered)
	{
		RegisterXactCallback(xact_callback, NULL);
		before_shmem_exit(exit_callback, (Datum) 0);
		callbacks_registered = true;
	}
	leader_armed = true;
	forget(node);
}

/* worker_cmp: reports in worker order. */
static int
worker_cmp(const void *a, const void *b)
{
	const BraidWorkerInstr *wa = (const BraidWorkerInstr *) a;
	const BraidWorkerInstr *wb = (const BraidWorkerInstr *) b;

	return (wa->worker > wb->worker) - (wa->worker < wb->worker);
}

/*
 * braid_instr_worker_reports
 *		The workers' reports of this kind for this backend's node, in worker
 *		order (palloc'd; NULL if none).
 */
BraidWorkerInstr *
braid_instr_worker_reports(int node, BraidInstrKind kind, int *nreports)
{
	BraidWorkerInstr *out;
	int			n = 0;

	*nreports = 0;
	if (reports == NULL || IsParallelWorker())
		return NULL;
	out = palloc(sizeof(BraidWorkerInstr) * reports->capacity);
	LWLockAcquire(reports->lock, LW_SHARED);
	for (int i = 0; i < reports->capacity; i++)
	{
		BraidReport *r = &reports->reports[i];

		if (r->leader_pid != MyProcPid || r->node != node || r->kind != kind)
			continue;
		out[n].worker = r->worker;
		out[n].kind = r->kind;
		out[n].u = r->u;
		n++;
	}
	LWLockRelease(reports->lock);
	if (n == 0)
	{
		pfree(out);
		return NULL;
	}
	qsort(out, n, sizeof(BraidWorkerInstr), worker_cmp);
	*nreports = n;
	return out;
}

/* braid_instr_leader_end: the leader's node ends; so do its reports. */
void
braid_instr_leader_end(int node)
{
	if (reports == NULL || IsParallelWorker() || !leader_armed)
		return;
	forget(node);
}
