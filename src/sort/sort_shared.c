/*-------------------------------------------------------------------------
 *
 * sort_shared.c
 *	  SHARED: one sort built by every process of a Gather, sorted by one.
 *
 * A BraidSort planned as shared (gather_plan.c) runs under a Gather over a
 * Parallel Seq Scan, in place of a Gather Merge over each process's Sort.
 * Every participant -- the workers and, when it takes part, the leader --
 * builds its share of the scan as any BraidSort does (BUILD, RUNS: an
 * IndexMap, runs on the spill device, a value log moved to the device
 * whole), then publishes its runs and its log's segments, by name, in the
 * node's dynamic shared memory.  One participant, the emitter, waits for
 * every other to publish, maps their files, and sorts every row: it merges
 * every run in one final merge (MERGE) and emits every row, in order
 * (GATHER or VALUE LOG): the Gather above passes on its rows, and no
 * Gather Merge compares rows the processes send through their tuple
 * queues.  The others emit nothing and end as soon as they have published.
 *
 * A participant whose IndexMap did not fill (no run written) does not sort
 * it: it hands its entries over as they are, in one file, and the emitter
 * -- the leader, which keeps its own IndexMap -- takes them into its own
 * as if it had built them (its strategy's put: runs written if they
 * outgrow its budget).  Where they all fit, the emitter sorts every
 * process's entries once with every CPU's threads and gathers them
 * (OnePass), as one BraidSort of the whole scan would, but with the scan
 * and the keys' encoding shared by every process.  Only entries whose
 * keys are whole in their prefixes are handed over (a full key kept aside,
 * or a collated key's, is in the participant's memory): else the
 * participant writes its IndexMap as a run, as a participant that spilled
 * does.  When the leader does not run the plan, every participant writes
 * runs.
 *
 * The emitter is the leader when it runs the plan (parallel_leader_
 * participation, as the Gather reads it when it starts), so that its rows
 * reach the plan above through no tuple queue; else whichever worker
 * arrives last (the leader then runs the plan only if no worker started,
 * and is alone).  The build barrier (Barrier "build") has every participant
 * attach before it reads the scan, so a participant still holding blocks
 * of the scan is always waited for; one that attaches once the barrier
 * has moved on finds the scan exhausted and builds nothing.
 *
 * A participant's value log refs name its own segments: the emitter adds
 * the other participants' segments after its own log's
 * (braid_vlog_add_foreign) and each of their runs adds the number its
 * segments start at to the segment of every ref read (BraidRun.ref_add).
 * Heap TIDs need nothing: the processes scan one table with one snapshot.
 *
 * The files a participant publishes are left to the leader: named for the
 * leader's pid (which the background worker's clean-up of files whose
 * process is gone then keeps), the participant disowns them (they outlive
 * its exit), and the leader removes
 * every published file when the Gather's shared memory goes (its
 * on_dsm_detach callback, after the workers have ended: at the query's
 * end, on an error, a cancel or backend exit) or is set up again for a
 * rescan; handed entries it removes as soon as it has taken them.  The
 * names carry the Gather's shared memory segment's handle and the plan
 * node's id too, so that two shared sorts of one query, or of two queries
 * the leader runs at once (a function above a Gather running a parallel
 * query of its own), keep apart.  A crash of any process restarts
 * the server, whose start-up removes temporary files.
 *
 * src/sort/sort_shared.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/parallel.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/barrier.h"
#include "storage/dsm.h"
#include "storage/fd.h"
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "guc.h"
#include "io/device.h"
#include "sort/sort_state.h"

/* Most runs a participant publishes (it merges its own down to them). */
#define BRAID_SHARED_MAX_RUNS	256

/*
 * Most value log segments a participant publishes: with segments doubling
 * to 64 MB (vlogrow.h), 32 GB of rows a participant.
 */
#define BRAID_SHARED_MAX_SEGS	512

/* A spill file's name in its tablespace's temporary directory. */
#define BRAID_SHARED_NAME_LEN	64

/* The number in the name of a participant's file of entries handed over. */
#define BRAID_SHARED_ENTRIES_FILE	(BRAID_SHARED_MAX_RUNS + BRAID_SHARED_MAX_SEGS)

/*
 * Entries taken from another participant's file, and written to one's own
 * (in spans the device's writer threads share), between interrupt checks.
 */
#define BRAID_SHARED_TAKE_BYTES	(256 * 1024)
#define BRAID_SHARED_HAND_BYTES	(4 * 1024 * 1024)

/* One published file: a run, or a value log segment. */
typedef struct BraidSharedFile
{
	Oid			spc;
	char		name[BRAID_SHARED_NAME_LEN];
	uint64		written;
	uint64		nrecords;		/* a run's records (0: a segment) */
	uint64		bytes;			/* a run's coded bytes */
} BraidSharedFile;

/* What one participant built, once it has published. */
typedef struct BraidSharedPart
{
	bool		published;
	int			nruns;
	int			half_runs;		/* of them, made of half an IndexMap during
								 * the scan (sort_runs.c's pipe) */
	int			nsegs;
	uint32		longest_key;
	int64		rows;
	bool		has_entries;	/* it handed its entries over unsorted */
	BraidSharedFile entries;	/* ... in this file (nrecords: how many) */
	BraidSharedFile runs[BRAID_SHARED_MAX_RUNS];
	BraidSharedFile segs[BRAID_SHARED_MAX_SEGS];
} BraidSharedPart;

/* The node's dynamic shared memory. */
struct BraidSortShared
{
	Barrier		build;			/* phase 0: participants building */
	slock_t		mutex;
	bool		closed;			/* the leader has removed what was published:
								 * nothing more may be */
	bool		leader_emits;	/* the leader runs the plan: it emits */
	int			leader_pid;		/* whose pid published files are named for */
	uint32		query;			/* ... and the Gather's segment's handle */
	int			nparts;			/* planned workers + the leader */
	BraidSharedPart parts[FLEXIBLE_ARRAY_MEMBER];
};

/*
 * shared_size
 *		The shared memory of a node with nworkers planned workers.
 */
static Size
shared_size(int nworkers)
{
	return add_size(offsetof(BraidSortShared, parts),
					mul_size(sizeof(BraidSharedPart), (Size) nworkers + 1));
}

/*
 * my_part
 *		This process's participant number: the leader 0, worker w w + 1.
 */
static int
my_part(void)
{
	return IsParallelWorker() ? ParallelWorkerNumber + 1 : 0;
}

/*
 * remove_shared_file
 *		Remove a file a participant published.  A file already gone is no
 *		error.
 */
static void
remove_shared_file(const BraidSharedFile *f)
{
	char		dir[MAXPGPATH];
	char		path[MAXPGPATH];

	TempTablespacePath(dir, f->spc);
	snprintf(path, sizeof(path), "%s/%s", dir, f->name);
	if (unlink(path) != 0 && errno != ENOENT)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not remove braidsort spill file \"%s\": %m", path)));
}

/*
 * remove_published
 *		Remove every file the participants published (the leader, when the
 *		files are no longer read: see the file header).
 */
static void
remove_published(BraidSortShared *sh)
{
	for (int p = 0; p < sh->nparts; p++)
	{
		BraidSharedPart *part = &sh->parts[p];

		if (!part->published)
			continue;
		for (int i = 0; i < part->nruns + part->nsegs; i++)
			remove_shared_file(i < part->nruns ? &part->runs[i] : &part->segs[i - part->nruns]);
		if (part->has_entries)
			remove_shared_file(&part->entries);
		part->published = false;
		part->nruns = part->nsegs = 0;
		part->has_entries = false;
	}
}

/*
 * shared_detach_callback
 *		The leader's shared memory goes (the query ends, fails or is
 *		cancelled, after its workers have ended): the participants'
 *		published files go with it.
 */
static void
shared_detach_callback(dsm_segment *seg, Datum arg)
{
	BraidSortShared *sh = (BraidSortShared *) DatumGetPointer(arg);

	/*
	 * On an error the workers may still be running (DestroyParallelContext
	 * detaches before it waits for them): one that has not published keeps
	 * its files, which its exit removes.
	 */
	SpinLockAcquire(&sh->mutex);
	sh->closed = true;
	SpinLockRelease(&sh->mutex);
	remove_published(sh);
}

/*
 * shared_reset
 *		Nothing built yet: every participant to build its share.
 */
static void
shared_reset(BraidSortShared *sh)
{
	BarrierInit(&sh->build, 0);
	sh->closed = false;
	sh->leader_emits = parallel_leader_participation;
	for (int p = 0; p < sh->nparts; p++)
	{
		sh->parts[p].published = false;
		sh->parts[p].nruns = 0;
		sh->parts[p].half_runs = 0;
		sh->parts[p].nsegs = 0;
		sh->parts[p].rows = 0;
		sh->parts[p].longest_key = 0;
		sh->parts[p].has_entries = false;
	}
}

/*
 * braid_shared_estimate
 *		EstimateDSMCustomScan: the shared memory of a shared sort.
 */
Size
braid_shared_estimate(CustomScanState *node, ParallelContext *pcxt)
{
	return shared_size(pcxt->nworkers);
}

/*
 * braid_shared_init_dsm
 *		InitializeDSMCustomScan, in the leader before the workers start:
 *		the shared state, and the removal of what the participants publish
 *		when it goes.
 */
void
braid_shared_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	BraidSortState *st = (BraidSortState *) node;
	BraidSortShared *sh = (BraidSortShared *) coordinate;

	memset(sh, 0, offsetof(BraidSortShared, parts));
	SpinLockInit(&sh->mutex);
	sh->leader_pid = MyProcPid;
	sh->query = pcxt->seg != NULL ? (uint32) dsm_segment_handle(pcxt->seg) : 0;
	sh->nparts = pcxt->nworkers + 1;
	shared_reset(sh);
	if (pcxt->seg != NULL)
		on_dsm_detach(pcxt->seg, shared_detach_callback, PointerGetDatum(sh));
	st->shared = sh;
}

/*
 * braid_shared_reinit_dsm
 *		ReInitializeDSMCustomScan, in the leader before a rescan's workers
 *		start (the last ones have ended): the last build's files go, and
 *		every participant builds again.
 */
void
braid_shared_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	BraidSortShared *sh = (BraidSortShared *) coordinate;

	remove_published(sh);
	shared_reset(sh);
}

/*
 * braid_shared_init_worker
 *		InitializeWorkerCustomScan: a worker finds the shared state.
 */
void
braid_shared_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	((BraidSortState *) node)->shared = (BraidSortShared *) coordinate;
}

/*
 * braid_shared_attach
 *		Before this participant reads the scan: true if it is to build its
 *		share, false if the build is over (every block of the scan has been
 *		handed out, and everyone who took one has published).
 */
bool
braid_shared_attach(BraidSortState *st)
{
	int			phase = BarrierAttach(&st->shared->build);

	if (phase == 0)
		return true;
	BarrierDetach(&st->shared->build);
	return false;
}

/*
 * set_shared_file
 *		Describe a spill file in shared memory.
 */
static void
set_shared_file(BraidSharedFile *out, const BraidSpillFile *f)
{
	const char *name = braid_spill_name(f);

	if (strlen(name) >= BRAID_SHARED_NAME_LEN)
		elog(ERROR, "braidsort: spill file name \"%s\" is too long to share", name);
	out->spc = f->spcoid;
	strlcpy(out->name, name, BRAID_SHARED_NAME_LEN);
	out->written = f->written;
	out->nrecords = 0;
	out->bytes = 0;
}

/*
 * hand_entries
 *		A participant whose IndexMap did not fill hands its entries over as
 *		they are, unsorted, in one file (see the file header), if their keys
 *		are whole in their prefixes; true if it did.  A block at a time, so
 *		that a cancel gets through.
 */
static bool
hand_entries(BraidSortState *st)
{
	BraidIndexMap *m = &st->path->map;
	size_t		bytes = m->nentries * st->cfg.stride;
	size_t		block = Max(BRAID_SHARED_HAND_BYTES / st->cfg.stride, 1) * st->cfg.stride;

	if (st->cfg.collated || m->any_truncated)
		return false;
	braid_map_note_peak(st);
	st->shared_entries = braid_spill_create(bytes, &st->instr.device);
	for (size_t from = 0; from < bytes; from += block)
	{
		braid_spill_write_direct(st->shared_entries, m->entries + from, Min(block, bytes - from));
		CHECK_FOR_INTERRUPTS();
	}
	braid_spill_finish(st->shared_entries);
	m->nentries = 0;
	return true;
}

/*
 * publish
 *		Put this participant's runs and value log segments in shared memory
 *		(its runs merged down to BRAID_SHARED_MAX_RUNS first), renamed for
 *		the leader's pid and the Gather's segment (braid_spill_hand_over);
 *		false if the
 *		leader has closed the shared state (an error ended the query), when
 *		the files stay this process's, for its exit to remove.
 */
static bool
publish(BraidSortState *st)
{
	int			me = my_part();
	int			leader = st->shared->leader_pid;
	uint32		query = st->shared->query;
	BraidSharedPart *part = &st->shared->parts[me];
	BraidValueLog *log = &st->path->vlog;
	int			node = st->css.ss.ps.plan->plan_node_id;
	ListCell   *lc;
	int			i = 0;

	braid_merge_runs_down(st, BRAID_SHARED_MAX_RUNS);
	part->half_runs = st->path->runset.half_runs;
	if (st->cfg.value_log && log->nsegs > BRAID_SHARED_MAX_SEGS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("braidsort value log of a parallel worker has too many segments"),
				 errdetail("A parallel sort's participant may keep %d segments, up to %d MB of rows.",
						   BRAID_SHARED_MAX_SEGS,
						   (int) (BRAID_SHARED_MAX_SEGS * (BRAID_VLOG_SEGMENT >> 20))),
				 errhint("Set braidsort.parallel_sort to \"each\" for this query.")));

	foreach(lc, st->path->runset.runs)
	{
		BraidRun   *run = (BraidRun *) lfirst(lc);

		braid_spill_hand_over(run->file, leader, query, me, node, (uint32) i);
		set_shared_file(&part->runs[i], run->file);
		part->runs[i].nrecords = run->nrecords;
		part->runs[i].bytes = run->bytes;
		i++;
	}
	part->nruns = i;
	part->has_entries = st->shared_entries != NULL;
	if (part->has_entries)
	{
		braid_spill_hand_over(st->shared_entries, leader, query, me, node,
							  BRAID_SHARED_ENTRIES_FILE);
		set_shared_file(&part->entries, st->shared_entries);
		part->entries.nrecords = st->shared_entries->written / st->cfg.stride;
	}
	part->nsegs = 0;
	if (st->cfg.value_log)
	{
		for (int s = 0; s < log->nsegs; s++)
		{
			braid_spill_hand_over(log->segs[s], leader, query, me, node,
								  (uint32) (BRAID_SHARED_MAX_RUNS + s));
			set_shared_file(&part->segs[s], log->segs[s]);
		}
		part->nsegs = log->nsegs;
	}
	part->rows = st->path->build.rows_built;
	part->longest_key = st->path->map.longest_key;
	SpinLockAcquire(&st->shared->mutex);
	part->published = !st->shared->closed;
	SpinLockRelease(&st->shared->mutex);
	return part->published;
}

/*
 * disown
 *		This participant's published files are the leader's to remove: let
 *		them outlive this process (their mappings go).
 */
static void
disown(BraidSortState *st)
{
	List	   *runs;
	int			half_runs;
	ListCell   *lc;

	runs = braid_runs_take(st, &half_runs);
	foreach(lc, runs)
	{
		BraidRun   *run = (BraidRun *) lfirst(lc);

		braid_spill_disown(run->file);
		run->file = NULL;
	}
	braid_spill_disown(st->shared_entries);
	st->shared_entries = NULL;
	if (st->cfg.value_log)
	{
		BraidValueLog *log = &st->path->vlog;

		for (int s = 0; s < log->nsegs; s++)
		{
			braid_spill_disown(log->segs[s]);
			log->segs[s] = NULL;
		}
	}
}

/*
 * take_entries
 *		The emitter: another participant's entries, handed over unsorted,
 *		into this one's IndexMap as if built here (the strategy's put; its
 *		refs' segments moved by ref_add), read a block at a time under read
 *		grants of the device.
 */
static void
take_entries(BraidSortState *st, const BraidSharedFile *entries, uint64 ref_add)
{
	BraidSpillFile *f = braid_spill_open_foreign(entries->spc, entries->name, entries->written,
												 &st->instr.device);
	size_t		stride = st->cfg.stride;
	size_t		keylen = st->cfg.keylen;
	size_t		bytes = entries->nrecords * stride;
	size_t		block = Max(BRAID_SHARED_TAKE_BYTES / stride, 1) * stride;
	BraidIndexMap *m = &st->path->map;

	for (size_t from = 0; from < bytes; from += block)
	{
		size_t		to = Min(from + block, bytes);
		size_t		n = (to - from) / stride;

		braid_spill_note_read(f, from, to);
		if (m->capacity - m->nentries >= n && !m->keys_split)
		{
			/* room for the block: copied whole, the refs moved in place */
			uint8	   *dst = m->entries + m->nentries * stride;

			memcpy(dst, f->base + from, to - from);
			if (ref_add != 0)
			{
				for (size_t i = 0; i < n; i++)
				{
					uint8	   *entry = dst + i * stride;

					braid_entry_set_ref(entry, keylen, braid_entry_ref(entry, keylen) + ref_add);
				}
			}
			m->nentries += n;
			st->path->runset.entries_put += n;
		}
		else
		{
			/*
			 * else entry by entry, as the build puts them (runs written; the
			 * whole prefix is the key, its true length the participant's
			 * longest_key, which the caller takes)
			 */
			for (size_t at = from; at < to; at += stride)
			{
				const uint8 *entry = (const uint8 *) f->base + at;

				st->strategy->put(st, entry, keylen, keylen,
								  braid_entry_ref(entry, keylen) + ref_add);
			}
		}
		CHECK_FOR_INTERRUPTS();
	}
	braid_spill_close(f);

	/*
	 * taken: gone from the device at once (the entries that did not fit are
	 * in runs now; the device's room was counted for one copy of every share,
	 * which this keeps the excess to one share at a time)
	 */
	remove_shared_file(entries);
}

/*
 * collect
 *		The emitter: every other participant's runs join this one's, their
 *		value log segments this one's log, and the entries they handed over
 *		unsorted this one's IndexMap.
 */
static void
collect(BraidSortState *st)
{
	BraidSortShared *sh = st->shared;
	int			me = my_part();
	MemoryContext old = MemoryContextSwitchTo(st->sortcxt);
	size_t		handed = st->path->map.nentries;

	/*
	 * Runs are made here by the backend alone, no helper taking part, with
	 * every CPU's threads: the others have ended.
	 */
	braid_pipe_end(st);
	st->path->runset.pipe_allowed = false;
	st->cfg.threads = braid_sort_thread_count(1);

	/* room at once for every entry handed over (as the budget allows) */
	for (int p = 0; p < sh->nparts; p++)
	{
		if (p != me && sh->parts[p].published && sh->parts[p].has_entries)
			handed += sh->parts[p].entries.nrecords;
	}
	if (handed > st->path->map.nentries)
		(void) braid_map_reserve(st, handed);

	for (int p = 0; p < sh->nparts; p++)
	{
		BraidSharedPart *part = &sh->parts[p];
		uint64		ref_add = 0;
		bool		published;

		SpinLockAcquire(&sh->mutex);
		published = part->published;
		SpinLockRelease(&sh->mutex);
		if (p == me || !published)
			continue;
		if (st->cfg.value_log)
		{
			Oid		   *spcs = palloc(sizeof(Oid) * Max(part->nsegs, 1));
			const char **names = palloc(sizeof(char *) * Max(part->nsegs, 1));
			uint64	   *written = palloc(sizeof(uint64) * Max(part->nsegs, 1));
			int			first;

			for (int s = 0; s < part->nsegs; s++)
			{
				spcs[s] = part->segs[s].spc;
				names[s] = part->segs[s].name;
				written[s] = part->segs[s].written;
			}
			first = braid_vlog_add_foreign(&st->path->vlog, part->nsegs, spcs, names, written);
			ref_add = (uint64) first << 48;
		}
		for (int i = 0; i < part->nruns; i++)
		{
			BraidRun   *run = palloc0(sizeof(BraidRun));

			run->file = braid_spill_open_foreign(part->runs[i].spc, part->runs[i].name,
												 part->runs[i].written, &st->instr.device);
			run->nrecords = part->runs[i].nrecords;
			run->bytes = part->runs[i].bytes;
			run->ref_add = ref_add;
			st->path->runset.runs = lappend(st->path->runset.runs, run);
		}
		st->instr.shared_runs += part->nruns;
		/* its half runs count as such in the final merge's fan-in */
		st->path->runset.half_runs += part->half_runs;
		if (part->has_entries)
			take_entries(st, &part->entries, ref_add);
		st->path->map.longest_key = Max(st->path->map.longest_key, part->longest_key);
		st->instr.shared_parts++;
		st->instr.shared_rows += part->rows;
	}
	MemoryContextSwitchTo(old);
}

/*
 * braid_shared_finish
 *		After this participant's build (built: it built its share; *spilled:
 *		its strategy wrote runs), or after it found the build over: publish
 *		or wait for the others.  True for the emitter, which then holds every
 *		participant's runs and entries (*spilled: runs to merge, else its
 *		IndexMap to sort); false for the others, which emit nothing.
 */
bool
braid_shared_finish(BraidSortState *st, bool built, bool *spilled)
{
	BraidSortShared *sh = st->shared;
	bool		leader = !IsParallelWorker();
	bool		keeps_map = sh->leader_emits && leader;
	bool		emits;

	if (built)
	{
		/*
		 * Everything the others may read, on the device.  The leader that
		 * emits keeps its IndexMap, to take the others' entries into; the
		 * others hand theirs over unsorted where they can.
		 */
		if (!keeps_map)
		{
			if (!*spilled && st->path->map.nentries > 0 &&
				(!sh->leader_emits || !hand_entries(st)))
				braid_spill_run(st);
			braid_map_free(st);
		}
		if (st->cfg.value_log)
			braid_vlog_to_device(&st->path->vlog);
	}
	if (sh->leader_emits)
	{
		if (!leader)
		{
			if (built)
			{
				if (publish(st))
					disown(st);
				BarrierArriveAndDetach(&sh->build);
			}
			return false;
		}
		if (built)
		{
			(void) BarrierArriveAndWait(&sh->build, PG_WAIT_EXTENSION);
			BarrierDetach(&sh->build);
		}
		emits = true;
	}
	else if (leader)
	{
		/*
		 * the leader runs the plan only when no worker was started: it is
		 * alone, and emits what it built
		 */
		if (built)
		{
			(void) BarrierArriveAndWait(&sh->build, PG_WAIT_EXTENSION);
			BarrierDetach(&sh->build);
		}
		emits = true;
	}
	else
	{
		/* whoever arrives last emits: everyone publishes first */
		if (!built)
			return false;
		if (!publish(st))
		{
			BarrierArriveAndDetach(&sh->build);
			return false;
		}
		emits = BarrierArriveAndWait(&sh->build, PG_WAIT_EXTENSION);
		BarrierDetach(&sh->build);
		if (!emits)
		{
			disown(st);
			return false;
		}
		/* its own files stay its own */
		SpinLockAcquire(&sh->mutex);
		sh->parts[my_part()].published = false;
		SpinLockRelease(&sh->mutex);
	}
	st->instr.shared_parts = 1;
	st->instr.shared_rows = st->path->build.rows_built;
	st->instr.shared_runs = 0;
	collect(st);

	/*
	 * Runs to merge (its own or others'): what its IndexMap holds becomes the
	 * last; else every entry is in it, to be sorted in memory.  (MergePass's
	 * finish, run again: a shared sort is always a MergePass, sort_plan.c.)
	 */
	Assert(st->strategy == &braid_mergepass_strategy);
	*spilled = st->strategy->finish_build(st, st->path->build.rows_built);
	return emits;
}

/*
 * braid_shared_release
 *		The entries this participant wrote to hand over and did not (an
 *		error, a rescan): removed.
 */
void
braid_shared_release(BraidSortState *st)
{
	braid_spill_close(st->shared_entries);
	st->shared_entries = NULL;
}
