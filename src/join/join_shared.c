/*-------------------------------------------------------------------------
 *
 * join_shared.c
 *	  A parallel BraidJoin whose processes partition the inner input
 *	  together.
 *
 * Where a BraidJoin replaces a Parallel Hash (join_plan.c), its inner input
 * is a Parallel Seq Scan.  Planned as shared (plan data shared_inner), each
 * process of the Gather -- the workers and, when it takes part, the leader
 * -- reads its share of that scan and writes every one of its entries to
 * the partition logs, partition 0's too (first_inner_pass, join_pass.c);
 * then it publishes its logs' segments, by name, in the node's dynamic
 * shared memory, with its count of each partition's entries, and waits at
 * the build barrier for every process that took part.  Each process then
 * joins its share of the outer input against every process's inner
 * entries: partition 0 loaded into its table from every process's log (or
 * written out with its outer rows when the sum outgrows the memory), the
 * other partitions in their rounds, as a BraidJoin alone does.  So the
 * inner table is read, hashed and partitioned once, not once a process;
 * the price is that partition 0's inner entries are written too, and that
 * every process reads every process's entries back.
 *
 * Entries are <hash, TID> or <hash, key>: refs valid in every process (one
 * table, one snapshot).  An entry's place in its page (pos) is good only
 * while the page stays pinned, as its writer keeps it.  So the build has a
 * second phase (JOIN_SHARED_HOLDING): once every process has published,
 * each pins the inner table's blocks itself (braid_join_shared_hold)
 * before any leaves the build; another process's entry of a block this
 * process holds keeps its pos, elsewhere its row is found through the line
 * pointer.  A worker that fails in between (its pins go with it) says so
 * in the shared memory before its pins go (pins_xact_callback), and then
 * no process trusts another's pos.
 *
 * The build barrier ("build") has every process attach before it reads the
 * scan, so a process still holding blocks of the scan is always waited
 * for; one that attaches once every process has published builds nothing
 * (and still holds the blocks, if they are being held), one that attaches
 * later only joins what the others published.  No process emits a row
 * before the barrier, so no process waits there for one that is blocked
 * on a full tuple queue.
 *
 * Files: as a shared sort's (sort_shared.c), a process renames the files
 * it publishes for the leader's pid, the Gather's shared memory segment,
 * the plan node and the file's place (braid_spill_hand_over) and disowns
 * them (they outlive its exit, as the other processes read them until they
 * end); the leader removes every published file when the Gather's shared
 * memory goes (its on_dsm_detach callback: at the query's end, after the
 * workers have ended; on an error, a cancel or backend exit, perhaps
 * before they have, when a process that publishes after it finds the
 * shared state closed and keeps its files) or is set up again for a
 * rescan.  A process that fails before it publishes keeps its files, which
 * its resource owner removes.
 *
 * src/join/join_shared.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "storage/barrier.h"
#include "storage/dsm.h"
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/wait_event.h"

#include "io/device.h"
#include "join/join_state.h"

/*
 * Most segments of one partition a process publishes: its log's segments
 * start at about the expected size and double to 64 MB (partlog.c), so 32
 * cover at least 1.6 GB of one partition's entries in one process (100
 * million entries).
 */
#define JOIN_SHARED_MAX_SEGS	32

/* A spill file's name in its tablespace's temporary directory. */
#define JOIN_SHARED_NAME_LEN	64

/* One published segment. */
typedef struct JoinSharedFile
{
	Oid			spc;
	char		name[JOIN_SHARED_NAME_LEN];
	uint64		written;
} JoinSharedFile;

/* One process's entries of one partition. */
typedef struct JoinSharedPartition
{
	uint64		count;			/* entries */
	int			nsegs;
	JoinSharedFile segs[JOIN_SHARED_MAX_SEGS];
} JoinSharedPartition;

/* One process, once it has published. */
typedef struct JoinSharedProc
{
	bool		published;
	uint64		rows;			/* inner rows it read */
} JoinSharedProc;

/*
 * The node's dynamic shared memory: the header, a JoinSharedProc a process,
 * then nprocs x k JoinSharedPartitions (process-major, partitions_of).
 */
struct BraidJoinShared
{
	Barrier		build;			/* JOIN_SHARED_BUILDING, JOIN_SHARED_HOLDING */
	slock_t		mutex;
	bool		closed;			/* the leader has removed what was published:
								 * nothing more may be */
	bool		pins_lost;		/* a worker failed in the build: its pins
								 * went, perhaps before another process took
								 * its own (pins_xact_callback) */
	int			leader_pid;		/* whose pid published files are named for */
	uint32		query;			/* ... and the Gather's segment's handle */
	int			nprocs;			/* planned workers + the leader */
	int			k;				/* partitions */
	JoinSharedProc procs[FLEXIBLE_ARRAY_MEMBER];
};

/*
 * The shared state of the build this worker is in, while its pins may be
 * what keeps another process's entries' places good (pins_xact_callback),
 * else NULL.
 */
static BraidJoinShared *pins_watched = NULL;
static bool pins_callback_registered = false;

/* partitions_offset: where the partitions start in the shared memory. */
static Size
partitions_offset(int nprocs)
{
	return MAXALIGN(add_size(offsetof(BraidJoinShared, procs),
							 mul_size(sizeof(JoinSharedProc), (Size) nprocs)));
}

/* shared_size: the shared memory of nprocs processes and k partitions. */
static Size
shared_size(int nprocs, int k)
{
	return add_size(partitions_offset(nprocs),
					mul_size(sizeof(JoinSharedPartition), mul_size((Size) nprocs, (Size) k)));
}

/* partitions_of: process proc's k partitions. */
static JoinSharedPartition *
partitions_of(BraidJoinShared *sh, int proc)
{
	return (JoinSharedPartition *) ((char *) sh + partitions_offset(sh->nprocs)) +
		(Size) proc * sh->k;
}

/* my_proc: this process's number: the leader 0, worker w w + 1. */
static int
my_proc(void)
{
	return IsParallelWorker() ? ParallelWorkerNumber + 1 : 0;
}

/* plan_partitions: the partitions the plan gives the shared memory. */
static int
plan_partitions(const BraidJoinState *st)
{
	return Min(Max(st->cfg.plan.partitions, 1), BRAID_JOIN_SHARED_MAX_PARTITIONS);
}

/*
 * remove_published
 *		Remove every file the processes published (the leader, when no
 *		process reads them any more: see the file header).  A file already
 *		gone is no error.
 */
static void
remove_published(BraidJoinShared *sh)
{
	for (int proc = 0; proc < sh->nprocs; proc++)
	{
		JoinSharedPartition *parts = partitions_of(sh, proc);

		if (!sh->procs[proc].published)
			continue;
		for (int p = 0; p < sh->k; p++)
		{
			for (int i = 0; i < parts[p].nsegs; i++)
			{
				char		dir[MAXPGPATH];
				char		path[MAXPGPATH];

				TempTablespacePath(dir, parts[p].segs[i].spc);
				snprintf(path, sizeof(path), "%s/%s", dir, parts[p].segs[i].name);
				if (unlink(path) != 0 && errno != ENOENT)
					ereport(WARNING,
							(errcode_for_file_access(),
							 errmsg("could not remove braidsort spill file \"%s\": %m", path)));
			}
			parts[p].nsegs = 0;
		}
		sh->procs[proc].published = false;
	}
}

/*
 * shared_detach_callback
 *		The leader's shared memory goes (the query ends, fails or is
 *		cancelled, after its workers have ended): the published files go
 *		with it.
 */
static void
shared_detach_callback(dsm_segment *seg, Datum arg)
{
	BraidJoinShared *sh = (BraidJoinShared *) DatumGetPointer(arg);

	SpinLockAcquire(&sh->mutex);
	sh->closed = true;
	SpinLockRelease(&sh->mutex);
	remove_published(sh);
}

/*
 * pins_xact_callback
 *		A worker's transaction aborts (an error, a cancel, a termination)
 *		while its pins may keep another process's entries' places good:
 *		say so in the shared memory before its pins go (a transaction's
 *		callbacks run before its resource owner lets its buffers go, and a
 *		worker's shared memory is detached after both), so that a process
 *		that pins the blocks after them trusts no other process's pos.  The
 *		leader needs no such word: its parallel context ends, its workers
 *		with it, before its own pins go.
 */
static void
pins_xact_callback(XactEvent event, void *arg)
{
	BraidJoinShared *sh = pins_watched;

	pins_watched = NULL;
	if (sh != NULL && event == XACT_EVENT_PARALLEL_ABORT)
	{
		SpinLockAcquire(&sh->mutex);
		sh->pins_lost = true;
		SpinLockRelease(&sh->mutex);
	}
}

/* shared_reset: nothing partitioned yet. */
static void
shared_reset(BraidJoinShared *sh)
{
	BarrierInit(&sh->build, 0);
	sh->closed = false;
	sh->pins_lost = false;
	for (int proc = 0; proc < sh->nprocs; proc++)
	{
		JoinSharedPartition *parts = partitions_of(sh, proc);

		sh->procs[proc].published = false;
		sh->procs[proc].rows = 0;
		for (int p = 0; p < sh->k; p++)
		{
			parts[p].count = 0;
			parts[p].nsegs = 0;
		}
	}
}

/*
 * braid_join_shared_estimate
 *		EstimateDSMCustomScan: the shared memory of a shared BraidJoin.
 */
Size
braid_join_shared_estimate(CustomScanState *node, ParallelContext *pcxt)
{
	return shared_size(pcxt->nworkers + 1, plan_partitions((BraidJoinState *) node));
}

/*
 * braid_join_shared_init_dsm
 *		InitializeDSMCustomScan, in the leader before the workers start: the
 *		shared state, and the removal of what the processes publish when it
 *		goes.
 */
void
braid_join_shared_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	BraidJoinState *st = (BraidJoinState *) node;
	BraidJoinShared *sh = (BraidJoinShared *) coordinate;

	/* a Gather run again may set up its shared memory anew */
	st->shared = NULL;
	memset(sh, 0, offsetof(BraidJoinShared, procs));
	SpinLockInit(&sh->mutex);
	sh->leader_pid = MyProcPid;
	sh->query = pcxt->seg != NULL ? (uint32) dsm_segment_handle(pcxt->seg) : 0;
	sh->nprocs = pcxt->nworkers + 1;
	sh->k = plan_partitions(st);
	shared_reset(sh);

	/*
	 * No segment (PostgreSQL's limit of segments reached): no worker starts,
	 * and nothing would remove published files; the leader runs the join
	 * alone (its scan covers the whole table).
	 */
	if (pcxt->seg == NULL)
		return;
	on_dsm_detach(pcxt->seg, shared_detach_callback, PointerGetDatum(sh));
	st->shared = sh;
}

/*
 * braid_join_shared_reinit_dsm
 *		ReInitializeDSMCustomScan, in the leader before a rescan's workers
 *		start (the last ones have ended): the last execution's files go.
 */
void
braid_join_shared_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	BraidJoinShared *sh = (BraidJoinShared *) coordinate;

	remove_published(sh);
	shared_reset(sh);
}

/*
 * braid_join_shared_init_worker
 *		InitializeWorkerCustomScan: a worker finds the shared state.
 */
void
braid_join_shared_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	((BraidJoinState *) node)->shared = (BraidJoinShared *) coordinate;
}

/*
 * braid_join_shared_attach
 *		Before this process reads the inner scan: the build's phase.
 *		JOIN_SHARED_BUILDING: it is to partition its share (then publish and
 *		hold); JOIN_SHARED_HOLDING: that is over (every block of the scan has
 *		been handed out, and everyone who took one has published), but it
 *		may still hold the table's blocks; later, it is detached and only
 *		joins.
 */
int
braid_join_shared_attach(BraidJoinState *st)
{
	int			phase;

	if (st->shared->k != st->parts.k)
		elog(ERROR, "braidsort: parallel BraidJoin has %d partitions, its shared memory %d",
			 st->parts.k, st->shared->k);
	phase = BarrierAttach(&st->shared->build);
	if (phase > JOIN_SHARED_HOLDING)
		BarrierDetach(&st->shared->build);
	else if (IsParallelWorker())
	{
		if (!pins_callback_registered)
		{
			RegisterXactCallback(pins_xact_callback, NULL);
			pins_callback_registered = true;
		}
		pins_watched = st->shared;
	}
	return phase;
}

/*
 * braid_join_shared_publish
 *		Put this process's inner partitions (every log finished on the
 *		device) in shared memory, renamed for the leader's pid and the
 *		Gather's segment (braid_spill_hand_over), and wait for every other
 *		process that partitions.  The logs are disowned (the
 *		leader removes them) and emptied: the rounds read every process's
 *		entries through braid_join_shared_open.
 */
void
braid_join_shared_publish(BraidJoinState *st)
{
	BraidJoinShared *sh = st->shared;
	int			me = my_proc();
	JoinSharedPartition *parts = partitions_of(sh, me);
	JoinSide   *s = &st->inner;
	int			node = st->css.ss.ps.plan->plan_node_id;
	bool		published;

	for (int p = 0; p < st->parts.k; p++)
	{
		BraidPartLog *log = &s->parts.logs[p];

		braid_partlog_finish_on_device(log);
		if (log->nsegs > JOIN_SHARED_MAX_SEGS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("braidsort join partition of a parallel process has too many segments"),
					 errdetail("A process may publish %d segments of each of the join's %d partitions; partition %d has %d.",
							   JOIN_SHARED_MAX_SEGS, st->parts.k, p, log->nsegs),
					 errhint("Set braidsort.parallel_join to \"each\" for this query.")));
		for (int i = 0; i < log->nsegs; i++)
		{
			const char *name;

			braid_spill_hand_over(log->segs[i], sh->leader_pid, sh->query, me, node,
								  (uint32) (p * JOIN_SHARED_MAX_SEGS + i));
			name = braid_spill_name(log->segs[i]);
			if (strlen(name) >= JOIN_SHARED_NAME_LEN)
				elog(ERROR, "braidsort: spill file name \"%s\" is too long to share", name);
			parts[p].segs[i].spc = log->segs[i]->spcoid;
			strlcpy(parts[p].segs[i].name, name, JOIN_SHARED_NAME_LEN);
			parts[p].segs[i].written = log->segs[i]->written;
		}
		parts[p].nsegs = log->nsegs;
		parts[p].count = log->count;
	}
	sh->procs[me].rows = s->instr.rows;
	SpinLockAcquire(&sh->mutex);
	published = sh->procs[me].published = !sh->closed;
	SpinLockRelease(&sh->mutex);
	if (!published)
	{
		/* the query is ending: the files stay this process's to remove */
		BarrierArriveAndDetach(&sh->build);
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("braidsort parallel join ended before this process published its partitions")));
	}
	for (int p = 0; p < st->parts.k; p++)
		braid_partlog_disown(&s->parts.logs[p]);
	/* to JOIN_SHARED_HOLDING */
	(void) BarrierArriveAndWait(&sh->build, PG_WAIT_EXTENSION);
}

/*
 * braid_join_shared_hold
 *		Once every process has published (JOIN_SHARED_HOLDING), before any
 *		leaves the build: keep the inner table's blocks pinned here, while
 *		the processes whose scans read them still hold theirs
 *		(join_row_hold_blocks), so that their entries' places in the pages
 *		(pos) hold in this process too; then wait for the others to have
 *		done the same, and detach.  A fetch by an entry's pos saves the line
 *		pointer's lookup: without it, on 1M x 10M rows at 1 MB, a BraidJoin
 *		ran 0.66x PostgreSQL's Parallel Hash instead of 0.90x.
 */
void
braid_join_shared_hold(BraidJoinState *st)
{
	BraidJoinShared *sh = st->shared;
	bool		lost;

	st->shared_pos_blocks = st->inner.by_tid && !st->inner.key_refs ?
		join_row_hold_blocks(&st->inner) : 0;
	(void) BarrierArriveAndWait(&sh->build, PG_WAIT_EXTENSION);

	/*
	 * every process has its pins now; a worker that failed before this
	 * process took all of its own may have let a page go in between
	 */
	pins_watched = NULL;
	SpinLockAcquire(&sh->mutex);
	lost = sh->pins_lost;
	SpinLockRelease(&sh->mutex);
	if (lost)
		st->shared_pos_blocks = 0;
	BarrierDetach(&sh->build);
}

/*
 * braid_join_shared_collect
 *		After the build: every process's count of each partition's inner
 *		entries, summed into the inner side's counts; every partition is on
 *		the device (read through braid_join_shared_open).
 */
void
braid_join_shared_collect(BraidJoinState *st)
{
	BraidJoinShared *sh = st->shared;
	JoinSide   *s = &st->inner;

	st->shared_procs = 0;
	for (int p = 0; p < st->parts.k; p++)
	{
		s->parts.counts[p] = 0;
		s->parts.mat[p] = true;
		s->parts.writing[p] = false;
	}
	for (int proc = 0; proc < sh->nprocs; proc++)
	{
		JoinSharedPartition *parts = partitions_of(sh, proc);

		if (!sh->procs[proc].published)
			continue;
		st->shared_procs++;
		for (int p = 0; p < st->parts.k; p++)
			s->parts.counts[p] += parts[p].count;
	}
}

/*
 * braid_join_shared_open
 *		Process proc's log of inner partition p, to read (its segments
 *		mapped here; braid_partlog_reset unmaps them), in the node's pass
 *		memory; false when it published no entry of p.  *own: the log is
 *		this process's (its entries' pos is good; another's only below
 *		st->shared_pos_blocks, braid_join_shared_hold).
 */
bool
braid_join_shared_open(BraidJoinState *st, int proc, int p, BraidPartLog *log, bool *own)
{
	BraidJoinShared *sh = st->shared;
	JoinSharedPartition *part;
	BraidSpillFile *segs[JOIN_SHARED_MAX_SEGS];
	MemoryContext old;

	if (proc >= sh->nprocs || !sh->procs[proc].published)
		return false;
	part = &partitions_of(sh, proc)[p];
	if (part->nsegs == 0)
		return false;
	old = MemoryContextSwitchTo(st->passcxt);
	for (int i = 0; i < part->nsegs; i++)
		segs[i] = braid_spill_open_foreign(part->segs[i].spc, part->segs[i].name,
										   part->segs[i].written, &st->inner.instr.dev);
	braid_partlog_adopt(log, st->passcxt, sizeof(BraidJoinEntry), segs, part->nsegs,
						&st->inner.instr.dev);
	MemoryContextSwitchTo(old);
	*own = proc == my_proc();
	return true;
}

/* braid_join_shared_nprocs: the processes braid_join_shared_open reads. */
int
braid_join_shared_nprocs(const BraidJoinState *st)
{
	return st->shared->nprocs;
}
