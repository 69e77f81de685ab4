/*-------------------------------------------------------------------------
 *
 * exec.c
 *	  The BraidSort custom scan: build, sort and gather.
 *
 * BUILD	pulls the child scan, which outputs its table's tuples as they
 *			are (keys that are plain columns are read from them) or only
 *			the sort keys (key expressions); for each row it encodes a normalized key and appends an IndexMap
 *			entry <key prefix, ref> where the ref packs the heap TID and the
 *			tuple length, read from the child's scan slot.  Keys longer than
 *			the entry's prefix keep their full encoding in an overflow store
 *			keyed by TID, used only to break ties between equal prefixes.
 * SORT		sorts the IndexMap in place (indexmap.c).
 * GATHER	emits rows in sorted order, refetching tuples by TID a batch at
 *			a time (gather.c) and evaluating the original scan's target list
 *			on each refetched tuple, so the output is exactly the replaced
 *			Sort's.
 *
 * MERGEPASS	if the IndexMap outgrows braidsort.work_mem, it is sorted and
 *			written to the spill device as a run of <key, ref> records
 *			(merge.c, device.c), and the build goes on; the runs are then
 *			merged k-way, with intermediate merges writing new runs when
 *			there are too many to merge at once.  The final merge either
 *			feeds the gather directly, or, when the node must support
 *			backward scans, mark/restore or rewinds, writes the merged refs
 *			(8 bytes a row) to a file the gather reads by position.
 *			Values are never written.
 *
 * VALUE LOG	when the input is not a heap scan (heap_tid_input in planner.c)
 *			the child is the node's outer plan, each input row is appended
 *			to a value log (valuelog.c) and the IndexMap points into it;
 *			rows are emitted straight from the log, projecting the Sort's
 *			target list.
 *
 * Positions follow tuplesort's conventions (current = index after the last
 * row returned, plus an eof flag), which gives backward scans, mark/restore
 * and rewinds for free: any position maps to a batch, which is reloaded if
 * it is not the one in memory.
 *
 * src/exec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/sysattr.h"
#include "access/tableam.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "braidsort.h"
#include "costmodel.h"
#include "device.h"
#include "explain.h"
#include "gather.h"
#include "indexmap.h"
#include "instr.h"
#include "keys.h"
#include "merge.h"
#include "pool.h"
#include "iosched.h"
#include "progress.h"
#include "valuelog.h"

/* Most rows in one gather batch (keeps batch arrays within 32-bit indexes). */
#define BRAID_MAX_BATCH_ROWS (1 << 22)

/* Smallest gather arena: room for a few of the largest heap tuples. */
#define BRAID_MIN_ARENA ((size_t) 4 * BLCKSZ)

/*
 * Budget charged per run being merged (what a read buffer per run would
 * cost): the budget divided by this is the merge fan-in.
 */
#define BRAID_MERGE_RUN_BYTES ((size_t) 256 * 1024)

/* Halves smaller than this are not worth a helper (pipe_begin). */
#define BRAID_PIPE_MIN_ENTRIES 1024
#define BRAID_MAX_FANIN 1024

/* Value log rows read back from the device per read grant. */
#define BRAID_LOG_WINDOW_ROWS 4096

/*
 * Full encodings of keys longer than the entry prefix, found by TID.
 * Open addressing; slot_tid 0 means empty (stored TIDs are offset by one).
 */
typedef struct BraidOverflow
{
	uint64	   *slot_tid;
	uint64	   *slot_off;
	uint32	   *slot_len;
	size_t		nslots;			/* power of two, or 0 */
	size_t		nused;
	uint8	   *arena;
	size_t		arena_used;
	size_t		arena_cap;
} BraidOverflow;

/*
 * The next batch of a streaming final merge, taken by a helper thread while
 * the current batch is gathered (merge_ahead_step): the batch's refs so far
 * and their arena bytes, closed at the same place as discover_stream_batch
 * would close it.
 */
typedef struct BraidMergeAhead
{
	uint64	   *refs;
	int			cap;
	int			n;
	size_t		bytes;
	bool		closed;			/* full, or the merge is exhausted */
} BraidMergeAhead;

/*
 * A run sorted and written by a helper thread while the build goes on: the
 * IndexMap's two halves take turns, one filling while the other's run is
 * made (pipe_swap).  The helper sorts the half and sizes its run, the
 * backend creates the run's file and takes the device's write grant, the
 * helper codes the run into the file, the backend finishes it.
 */
typedef enum BraidPipeStage
{
	PIPE_IDLE,
	PIPE_SORTING,				/* sorting and sizing, on the helper */
	PIPE_CODING					/* coding into the file, on the helper */
} BraidPipeStage;

typedef struct BraidPipe
{
	struct BraidSortState *st;
	bool		on;				/* the build fills halves */
	uint8	   *base;			/* the IndexMap's allocation */
	size_t		full;			/* its capacity in entries */
	BraidPipeStage stage;
	int			helpers;		/* helpers running the stage, 0 if none */
	uint8	   *entries;		/* the half being made into a run */
	size_t		n;
	size_t		bytes;			/* its coded size */
	BraidRun   *run;
	uint8	   *dst;			/* where in the file it is coded */
	bool		stop;			/* give up coding (an error) */
} BraidPipe;

typedef struct BraidSortState
{
	CustomScanState css;

	/* from the plan */
	bool		value_log;		/* BRAID_MODE_VALUE_LOG */
	AttrNumber *keycols;		/* input column of each key (value log), or
								 * table column (heap TID, unprojected
								 * scan), else NULL */
	int			nkeys;
	BraidKeyColumn *keys;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nullsfirst;
	uint32		keylen;
	uint32		stride;
	bool		may_truncate;	/* variable-width keys: full keys kept aside */
	bool		collated;		/* a key is compared by its collation */
	uint32		radix_keylen;	/* prefix bytes the radix sort orders by:
								 * keylen, or with a collated key keylen - 8,
								 * the last 8 bytes locating the full key */
	int			collated_key;	/* which one */
	double		est_rows;
	int			threads;		/* this process's sort threads: its share of
								 * the CPUs (braid_sort_thread_count) */
	bool		random_access;
	size_t		budget;
	size_t		batch_bytes;

	PlanState  *child;
	TupleTableSlot *log_slot;	/* value log: the row being emitted */
	BraidValueLog vlog;
	Datum	   *keyvals;		/* value log: key columns of one row */
	bool	   *keynulls;
	MemoryContext sortcxt;		/* IndexMap, overflow, runs: per sort */
	MemoryContext gathercxt;	/* gather buffers: per node */

	/* build and sort */
	bool		built;
	BraidKeyBuffer keybuf;
	uint8	   *entries;
	size_t		nentries;
	size_t		capacity;
	bool		any_truncated;
	uint64	   *refs;			/* after the sort: the entries' refs, in place */
	BraidOverflow ovf;
	bool		pipe_allowed;	/* runs may be made during the build */
	BraidPipe	pipe;
	int			half_runs;		/* runs of half the IndexMap (pipe) */

	/* MergePass: sorted runs on the spill device */
	List	   *runs;			/* BraidRun *, waiting to be merged */
	BraidRun   *refs_run;		/* merged refs, when positions must be random,
								 * or a OnePass sort's offloaded refs */
	bool		refs_offloaded; /* OnePass refs on the device (offload_refs) */
	BraidMerger *merger;		/* streaming final merge, otherwise */
	BraidRun  **merger_runs;
	int			merger_nruns;
	uint64	   *stream_refs;	/* the batch taken from the merger */
	int			stream_refs_cap;
	bool		merge_ahead;	/* a helper merges the next batch meanwhile */
	BraidMergeAhead ahead;

	/* output position, as in tuplesort */
	int64		rows_built;		/* rows taken from the child */
	int64		nrows;			/* rows sorted, -1 if not known yet */
	int64		current;
	bool		eof_reached;
	int64		mark_current;
	bool		mark_eof;

	/* batch b covers positions [batch_start[b], batch_start[b + 1]) */
	int64	   *batch_start;
	int			nbatches;		/* batches whose end is known */
	int			batch_cap;
	bool		batches_complete;
	BraidGather gather;

	/*
	 * instrumentation: the counters are kept in place, the rest is filled
	 * in by snapshot_instr
	 */
	BraidSortInstr instr;
	double		spill_ms;		/* sorting and writing runs during the build */
	bool		scan_slot_full; /* heap mode: a refetched tuple is in the slot */

	/* braidsort.progress */
	BraidProgress progress;
	BraidProgressPhase phase;	/* last shown */
	int64		batches_before; /* gather batches before this sort */

	/* value log mode: the window of rows read back from the device */
	int64		win_first;
	int			win_n;
	MinimalTuple *win_tuple;
	size_t	   *win_off;
	char	   *win_arena;
	size_t		win_cap;
	uint64		tuple_bytes;	/* bytes of the rows sorted (statistics) */
} BraidSortState;

static Node *braid_create_state(CustomScan *cscan);
static void braid_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *braid_exec(CustomScanState *node);
static void braid_end(CustomScanState *node);
static void braid_rescan(CustomScanState *node);
static void braid_mark(CustomScanState *node);
static void braid_restore(CustomScanState *node);
static void braid_explain_node(CustomScanState *node, List *ancestors, ExplainState *es);

CustomScanMethods braid_sort_scan_methods = {
	.CustomName = BRAID_SORT_NAME,
	.CreateCustomScanState = braid_create_state,
};

static CustomExecMethods braid_exec_methods = {
	.CustomName = BRAID_SORT_NAME,
	.BeginCustomScan = braid_begin,
	.ExecCustomScan = braid_exec,
	.EndCustomScan = braid_end,
	.ReScanCustomScan = braid_rescan,
	.MarkPosCustomScan = braid_mark,
	.RestrPosCustomScan = braid_restore,
	.ExplainCustomScan = braid_explain_node,
};

/*
 * braid_exec_init
 *		Register the custom scan so plans naming it can be copied, read back
 *		and sent to parallel workers.
 */
void
braid_exec_init(void)
{
	RegisterCustomScanMethods(&braid_sort_scan_methods);
}

/* elapsed_ms: milliseconds since "start". */
static double
elapsed_ms(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* set_phase: show the node in another phase (braidsort.progress). */
static void
set_phase(BraidSortState *st, BraidProgressPhase phase)
{
	if (st->phase == phase)
		return;
	st->phase = phase;
	braid_progress_set_phase(&st->progress, phase);
}

/* ---------------------------------------------------------------------
 * Overflow store
 * ---------------------------------------------------------------------
 */

/* tid_key: a TID as a nonzero 64-bit hash key. */
static inline uint64
tid_key(uint64 ref)
{
	return (ref >> 16) + 1;
}

/* ovf_slot: home slot of a key. */
static inline size_t
ovf_slot(const BraidOverflow *ovf, uint64 key)
{
	return (size_t) ((key * UINT64CONST(0x9E3779B97F4A7C15)) >> 16) & (ovf->nslots - 1);
}

/* ovf_bytes: memory held by the overflow store. */
static size_t
ovf_bytes(const BraidOverflow *ovf)
{
	return ovf->nslots * (sizeof(uint64) * 2 + sizeof(uint32)) + ovf->arena_cap;
}

/* ovf_insert_slot: place key/offset/len in the table (no growth). */
static void
ovf_insert_slot(BraidOverflow *ovf, uint64 key, uint64 off, uint32 len)
{
	size_t		i = ovf_slot(ovf, key);

	while (ovf->slot_tid[i] != 0 && ovf->slot_tid[i] != key)
		i = (i + 1) & (ovf->nslots - 1);
	if (ovf->slot_tid[i] == 0)
		ovf->nused++;
	ovf->slot_tid[i] = key;
	ovf->slot_off[i] = off;
	ovf->slot_len[i] = len;
}

/* ovf_reserve: room for "need" more bytes in the overflow arena. */
static void
ovf_reserve(BraidSortState *st, size_t need)
{
	BraidOverflow *ovf = &st->ovf;

	if (ovf->arena_used + need > ovf->arena_cap)
	{
		size_t		cap = Max(ovf->arena_cap * 2, ovf->arena_used + need);

		cap = Max(cap, (size_t) 4096);
		ovf->arena = ovf->arena ? repalloc_huge(ovf->arena, cap) :
			MemoryContextAllocHuge(st->sortcxt, cap);
		ovf->arena_cap = cap;
	}
}

/*
 * ovf_put
 *		Remember the full key of the entry with this ref.
 */
static void
ovf_put(BraidSortState *st, uint64 ref, const uint8 *key, size_t len)
{
	BraidOverflow *ovf = &st->ovf;

	ovf_reserve(st, len);
	if ((ovf->nused + 1) * 2 > ovf->nslots)
	{
		BraidOverflow old = *ovf;
		size_t		nslots = Max(old.nslots * 2, (size_t) 64);

		ovf->nslots = nslots;
		ovf->nused = 0;
		ovf->slot_tid = MemoryContextAllocHuge(st->sortcxt, sizeof(uint64) * nslots);
		ovf->slot_off = MemoryContextAllocHuge(st->sortcxt, sizeof(uint64) * nslots);
		ovf->slot_len = MemoryContextAllocHuge(st->sortcxt, sizeof(uint32) * nslots);
		memset(ovf->slot_tid, 0, sizeof(uint64) * nslots);
		for (size_t i = 0; i < old.nslots; i++)
			if (old.slot_tid[i] != 0)
				ovf_insert_slot(ovf, old.slot_tid[i], old.slot_off[i], old.slot_len[i]);
		if (old.nslots)
		{
			pfree(old.slot_tid);
			pfree(old.slot_off);
			pfree(old.slot_len);
		}
	}
	memcpy(ovf->arena + ovf->arena_used, key, len);
	ovf_insert_slot(ovf, tid_key(ref), ovf->arena_used, (uint32) len);
	ovf->arena_used += len;
}

/*
 * ovf_append
 *		Keep a full key in the overflow arena only, for an entry that
 *		records where it is (collated keys); returns that place, the
 *		offset << 24 | the length (0xFFFFFF: the length is in front).
 */
static uint64
ovf_append(BraidSortState *st, const uint8 *key, size_t len)
{
	BraidOverflow *ovf = &st->ovf;
	uint64		off;

	bool		long_key = (len >= 0xFFFFFF);
	size_t		need = len + (long_key ? sizeof(uint64) : 0);

	ovf_reserve(st, need);
	off = ovf->arena_used;
	if (long_key)
	{
		/* 16 MB or more: the length goes in front, the place says so */
		uint64		len64 = len;

		memcpy(ovf->arena + off, &len64, sizeof(len64));
		memcpy(ovf->arena + off + sizeof(len64), key, len);
		ovf->arena_used += need;
		return off << 24 | 0xFFFFFF;
	}
	memcpy(ovf->arena + off, key, len);
	ovf->arena_used += len;
	return off << 24 | (uint64) len;
}

/*
 * ovf_free
 *		Forget every full key (after they were written to a run, or once the
 *		IndexMap is sorted and only refs remain).
 */
static void
ovf_free(BraidOverflow *ovf)
{
	if (ovf->nslots)
	{
		pfree(ovf->slot_tid);
		pfree(ovf->slot_off);
		pfree(ovf->slot_len);
	}
	if (ovf->arena)
		pfree(ovf->arena);
	memset(ovf, 0, sizeof(*ovf));
}

/*
 * ovf_get
 *		The full key of a truncated entry.
 */
static const uint8 *
ovf_get(const BraidOverflow *ovf, uint64 ref, uint32 *len)
{
	uint64		key = tid_key(ref);
	size_t		i = ovf_slot(ovf, key);

	/* runs on sort threads: no errors here (every truncated entry has one) */
	while (ovf->slot_tid[i] != key)
	{
		if (ovf->slot_tid[i] == 0)
			return NULL;
		i = (i + 1) & (ovf->nslots - 1);
	}
	*len = ovf->slot_len[i];
	return ovf->arena + ovf->slot_off[i];
}

/*
 * entry_full_key
 *		An entry's key as a byte string that orders correctly against any
 *		other: the full key if truncated, else the zero-padded prefix (safe
 *		because encodings are prefix-free).
 */
static const uint8 *
entry_full_key(const BraidSortState *st, const uint8 *entry, uint32 *len)
{
	uint64		ref = braid_entry_ref(entry, st->keylen);

	if (st->collated)
	{
		uint64		loc;

		memcpy(&loc, entry + st->radix_keylen, sizeof(loc));
		if ((loc & 0xFFFFFF) == 0xFFFFFF)
		{
			uint64		len64;

			memcpy(&len64, st->ovf.arena + (loc >> 24), sizeof(len64));
			*len = (uint32) len64;
			return st->ovf.arena + (loc >> 24) + sizeof(len64);
		}
		*len = (uint32) (loc & 0xFFFFFF);
		return st->ovf.arena + (loc >> 24);
	}
	if (ref & BRAID_REF_TRUNCATED)
	{
		const uint8 *full = ovf_get(&st->ovf, ref, len);

		if (full != NULL)
			return full;
	}
	*len = st->keylen;
	return entry;
}

/*
 * braid_tiebreak
 *		IndexMap tie-break for entries with equal prefixes: compare full
 *		keys, memcmp then length.  Pure lookups, no PostgreSQL calls on the
 *		success path.
 */
static int
braid_tiebreak(const uint8 *a, const uint8 *b, void *arg)
{
	const BraidSortState *st = (const BraidSortState *) arg;
	uint32		la,
				lb;
	const uint8 *ka,
			   *kb;
	int			c;

	if (((braid_entry_ref(a, st->keylen) | braid_entry_ref(b, st->keylen)) &
		 BRAID_REF_TRUNCATED) == 0)
		return 0;
	ka = entry_full_key(st, a, &la);
	kb = entry_full_key(st, b, &lb);
	if (st->collated)
		return braid_compare_collated(ka, la, kb, lb, &st->keys[st->collated_key]);
	c = memcmp(ka, kb, Min(la, lb));
	if (c == 0)
		c = (la > lb) - (la < lb);
	return c;
}

/*
 * collated_compare
 *		The merge order of full keys whose last column is collated.
 */
static int
collated_compare(const uint8 *a, uint32 la, const uint8 *b, uint32 lb, void *arg)
{
	const BraidSortState *st = (const BraidSortState *) arg;

	return braid_compare_collated(a, la, b, lb, &st->keys[st->collated_key]);
}

/* ---------------------------------------------------------------------
 * Build
 * ---------------------------------------------------------------------
 */

/* check_interrupts: the radix sort's hook for query cancel. */
static void
check_interrupts(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * entry_key_of
 *		Full key and ref of an IndexMap entry, for the run writer.
 */
static const uint8 *
entry_key_of(const uint8 *entry, uint32 *len, uint64 *ref, void *arg)
{
	BraidSortState *st = (BraidSortState *) arg;
	const uint8 *key = entry_full_key(st, entry, len);

	*ref = braid_entry_ref(entry, st->keylen) & ~BRAID_REF_TRUNCATED;

	/*
	 * Runs store keys without trailing zero bytes (prefix padding and
	 * terminators).  For encodings that are prefix-free up to zero padding
	 * this keeps memcmp-then-length order: where two keys first differ, at
	 * most one of them can have run out into stripped zeros, and that one is
	 * the smaller either way.
	 */
	if (!st->collated)			/* (collated keys are parsed, not compared) */
		while (*len > 0 && key[*len - 1] == 0)
			(*len)--;
	return key;
}

/*
 * sort_entries
 *		Sort the IndexMap in place.
 */
static void
sort_entries(BraidSortState *st)
{
	BraidSortSpec spec;

	spec.keylen = st->radix_keylen;
	spec.stride = st->stride;
	spec.tiebreak = st->any_truncated ? braid_tiebreak : NULL;
	spec.tiebreak_arg = st;
	spec.interrupt_check = check_interrupts;
	spec.interrupt_arg = NULL;
	braid_indexmap_sort_parallel(st->entries, st->nentries, &spec, st->threads);
	st->instr.sort_threads = st->threads;
}

/*
 * spill_run
 *		The IndexMap is full: sort it, write it to the spill device as a run
 *		and empty it (its memory is reused for the next run).
 */
static void
spill_run(BraidSortState *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->sortcxt);
	BraidProgressPhase phase = st->phase;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	set_phase(st, BRAID_PROGRESS_WRITING_RUN);
	braid_prefault_end();
	st->instr.peak_map_bytes = Max(st->instr.peak_map_bytes,
								   st->capacity * st->stride + ovf_bytes(&st->ovf));
	sort_entries(st);
	st->runs = lappend(st->runs,
					   braid_run_write(st->entries, st->nentries, st->stride,
									   entry_key_of, st, st->threads,
									   &st->instr.device));
	st->instr.runs++;
	braid_progress_add_run(&st->progress);
	st->nentries = 0;
	st->any_truncated = false;
	ovf_free(&st->ovf);
	MemoryContextSwitchTo(old);
	set_phase(st, phase);
	st->spill_ms += elapsed_ms(start);
}

/*
 * grow_entries
 *		Make room for more entries within the budget; false if none left.
 */
static bool
grow_entries(BraidSortState *st)
{
	size_t		used = ovf_bytes(&st->ovf);
	size_t		room = (st->budget > used) ? st->budget - used : 0;
	size_t		limit;
	size_t		newcap;

	/*
	 * A value log keeps rows in the other half of the budget until it
	 * spills.  Full encodings of long keys take what the entries leave; if
	 * they push the total over the budget, add_entry spills and splits the
	 * budget evenly from then on.
	 */
	if (st->value_log)
		room = Min(room, st->budget / 2);
	limit = room / st->stride;

	if (st->capacity == 0)
		newcap = (size_t) Max(Min(st->est_rows * 1.05, 1e12), 1024.0);
	else
		newcap = st->capacity * 2;
	newcap = Min(newcap, limit);
	if (newcap <= st->capacity)
		return false;

	if (st->entries == NULL)
	{
		st->entries = MemoryContextAllocHuge(st->sortcxt, newcap * st->stride);

		/*
		 * A helper faults the fresh pages in ahead of the scan, which then
		 * finds them mapped instead of taking a page fault every 4 kB.
		 */
		braid_prefault_start(st->entries, newcap * st->stride, st->threads);
	}
	else
		st->entries = repalloc_huge(st->entries, newcap * st->stride);
	st->capacity = newcap;
	return true;
}

static void pipe_end(BraidSortState *st);

/* merge_fanin: how many runs one merge takes at once, within the budget. */
static int
merge_fanin(const BraidSortState *st)
{
	return (int) Min(Max(st->budget / BRAID_MERGE_RUN_BYTES, (size_t) 2),
					 (size_t) BRAID_MAX_FANIN);
}

/*
 * pipe_task
 *		The helper's part of a run made during the build: sort the half and
 *		size its run, or code it into its file.  Pure memory work: the half
 *		has no truncated keys, so neither the sort nor entry_key_of() looks
 *		anything up.
 */
static void
pipe_task(void *arg, int worker)
{
	BraidPipe  *p = (BraidPipe *) arg;
	BraidSortState *st = p->st;

	if (worker != 1)
		return;
	if (p->stage == PIPE_SORTING)
	{
		BraidSortSpec spec = {0};

		spec.keylen = st->radix_keylen;
		spec.stride = st->stride;
		braid_indexmap_sort(p->entries, p->n, &spec);
		p->bytes = braid_run_size(p->entries, p->n, st->stride, entry_key_of, st);
	}
	else
		braid_run_code(p->entries, p->n, st->stride, entry_key_of, st,
					   p->run->file, p->dst, &p->stop);
}

/* pipe_post: hand the current stage to a helper (or do it, if none). */
static void
pipe_post(BraidSortState *st)
{
	BraidPipe  *p = &st->pipe;

	p->helpers = braid_pool_start(2, pipe_task, p);
	if (p->helpers == 0)
		pipe_task(p, 1);
}

/*
 * pipe_step
 *		Move the run being made on as far as it can go without waiting (or,
 *		with "wait", until it is finished): between the helper's stages the
 *		backend creates the run's file and takes the write grant, and at the
 *		end it finishes the file and adds the run.
 */
static void
pipe_step(BraidSortState *st, bool wait)
{
	BraidPipe  *p = &st->pipe;
	BraidProgressPhase phase = st->phase;
	MemoryContext old;

	/* the build stops until the run is made */
	if (wait && p->stage != PIPE_IDLE)
		set_phase(st, BRAID_PROGRESS_WRITING_RUN);
	while (p->stage != PIPE_IDLE)
	{
		if (p->helpers > 0)
		{
			if (!wait && braid_pool_busy())
				return;
			braid_pool_finish(2, p->helpers, pipe_task, p, false);
			p->helpers = 0;
		}
		old = MemoryContextSwitchTo(st->sortcxt);
		if (p->stage == PIPE_SORTING)
		{
			int			threads = 1;

			p->run = palloc0(sizeof(BraidRun));
			p->run->file = braid_spill_create(p->bytes, &st->instr.device);
			p->dst = braid_spill_fill_begin(p->run->file, p->bytes, &threads);
			p->stage = PIPE_CODING;
			pipe_post(st);
		}
		else
		{
			braid_spill_fill_end(p->run->file, p->bytes);
			braid_spill_finish(p->run->file);
			p->run->nrecords = p->n;
			p->run->bytes = p->bytes;
			st->runs = lappend(st->runs, p->run);
			st->instr.runs++;
			braid_progress_add_run(&st->progress);
			st->half_runs++;
			p->run = NULL;
			p->stage = PIPE_IDLE;
		}
		MemoryContextSwitchTo(old);
	}
	set_phase(st, phase);
}

/*
 * pipe_stop
 *		On an error during the build: wait for a helper still at a run, so
 *		that it is done with the IndexMap and the run's mapping before they
 *		go.
 */
static void
pipe_stop(BraidSortState *st)
{
	BraidPipe  *p = &st->pipe;

	__atomic_store_n(&p->stop, true, __ATOMIC_RELAXED);
	if (p->helpers > 0)
		braid_pool_finish(2, p->helpers, pipe_task, p, false);
	p->helpers = 0;
	p->stage = PIPE_IDLE;
	p->on = false;
}

/*
 * pipe_pays
 *		Would halves, from here on, still leave no more runs than the final
 *		merge takes at once?  Twice the runs must not cost an intermediate
 *		merge pass (which would write every key again).  The rows still to
 *		come are the planner's estimate, with some room; past the estimate
 *		nobody knows, so whole runs again.  (Should more rows come than that
 *		room allows, merge_runs() lets the final merge take the half runs as
 *		the whole runs they stand for.)
 */
static bool
pipe_pays(BraidSortState *st, size_t half)
{
	int			fanin = merge_fanin(st);
	double		left = st->est_rows * 1.1 - (double) st->rows_built;
	double		runs;

	if (half < BRAID_PIPE_MIN_ENTRIES || (double) st->rows_built >= st->est_rows)
		return false;
	runs = (double) list_length(st->runs) + (st->pipe.stage != PIPE_IDLE ? 1 : 0) +
		1 + ceil(Max(left, 0.0) / (double) half);
	return runs <= fanin;
}

/*
 * pipe_begin
 *		After the first run, when the build may make runs on a helper (a
 *		plain table scan feeds it, keys compare by memcmp, more than one
 *		thread): fill the IndexMap half at a time from now on.  Twice the
 *		runs, each made while the next half fills instead of stopping the
 *		scan.
 */
static void
pipe_begin(BraidSortState *st)
{
	BraidPipe  *p = &st->pipe;

	if (!st->pipe_allowed || !pipe_pays(st, st->capacity / 2))
		return;
	p->st = st;
	p->on = true;
	p->base = st->entries;
	p->full = st->capacity;
	p->stage = PIPE_IDLE;
	p->helpers = 0;
	st->capacity = p->full / 2;
}

/*
 * pipe_swap
 *		The half being filled is full: once the other half's run is made,
 *		start making this one's and fill the other.
 */
static void
pipe_swap(BraidSortState *st)
{
	BraidPipe  *p = &st->pipe;
	instr_time	start;

	/* more rows than expected: whole runs again, before halves cost a pass */
	if (!pipe_pays(st, st->capacity))
	{
		pipe_end(st);
		return;
	}
	INSTR_TIME_SET_CURRENT(start);
	pipe_step(st, true);
	p->entries = st->entries;
	p->n = st->nentries;
	p->stage = PIPE_SORTING;
	pipe_post(st);
	st->entries = (st->entries == p->base) ? p->base + st->capacity * st->stride :
		p->base;
	st->nentries = 0;
	st->any_truncated = false;
	st->spill_ms += elapsed_ms(start);
}

/*
 * pipe_end
 *		Back to the whole IndexMap: wait for the run being made, and move
 *		the entries of the half being filled to its start.
 */
static void
pipe_end(BraidSortState *st)
{
	BraidPipe  *p = &st->pipe;
	instr_time	start;

	if (!p->on)
		return;
	INSTR_TIME_SET_CURRENT(start);
	pipe_step(st, true);
	if (st->entries != p->base)
		memmove(p->base, st->entries, st->nentries * st->stride);
	st->entries = p->base;
	st->capacity = p->full;
	p->on = false;
	st->spill_ms += elapsed_ms(start);
}

/*
 * add_entry
 *		Append one row's entry to the IndexMap, spilling a run first if the
 *		IndexMap is full.
 */
static void
add_entry(BraidSortState *st, const uint8 *key, size_t len, uint64 ref)
{
	uint8	   *entry;

	if (st->nentries == st->capacity)
	{
		if (st->pipe.on)
			pipe_swap(st);
		else if (!grow_entries(st))
		{
			if (st->nentries == 0)
				elog(ERROR, "braidsort: budget too small for a single IndexMap entry");
			spill_run(st);
			pipe_begin(st);
		}
	}

	entry = st->entries + st->nentries * st->stride;
	if (st->collated)
	{
		/*
		 * Only the memcmp-ordered part goes in the prefix (equal parts tie,
		 * and the tie-break compares strings); the full key is kept aside.
		 */
		size_t		head = Min(st->keybuf.sortable, (size_t) st->radix_keylen);
		uint64		loc = ovf_append(st, key, len);

		memcpy(entry, key + BRAID_COLLATED_HEADER, head);
		memset(entry + head, 0, st->radix_keylen - head);
		/* the full key's place, read by every comparison (no lookup) */
		memcpy(entry + st->radix_keylen, &loc, sizeof(loc));
		ref |= BRAID_REF_TRUNCATED;
		st->any_truncated = true;
	}
	else if (len <= st->keylen)
	{
		memcpy(entry, key, len);
		memset(entry + len, 0, st->keylen - len);
	}
	else
	{
		memcpy(entry, key, st->keylen);
		ref |= BRAID_REF_TRUNCATED;
		st->any_truncated = true;
		ovf_put(st, ref, key, len);
	}
	braid_entry_set_ref(entry, st->keylen, ref);
	st->nentries++;

	/* full keys kept aside: the whole IndexMap again, made serially */
	if (ref & BRAID_REF_TRUNCATED && st->pipe.on)
		pipe_end(st);
	if (ref & BRAID_REF_TRUNCATED &&
		st->capacity * st->stride + ovf_bytes(&st->ovf) > st->budget)
	{
		spill_run(st);

		/*
		 * Long keys filled the budget before the entries did: from now on
		 * split it evenly between entries and their full keys.
		 */
		if (st->capacity * st->stride > st->budget / 2)
		{
			st->capacity = Max(st->budget / 2 / st->stride, (size_t) 1);
			st->entries = repalloc_huge(st->entries, st->capacity * st->stride);
		}
	}
}

/*
 * gather_arena
 *		The tuple bytes a gather batch may hold out of mem bytes of the
 *		budget: less the gather's bookkeeping per page of the table, shared
 *		with each row's (braid_cost_batch_arena), at most gather_batch and at
 *		least BRAID_MIN_ARENA.
 */
static size_t
gather_arena(const BraidSortState *st, double mem, double row_bytes,
			 BraidRefsAt refs_at)
{
	size_t		arena;

	arena = (size_t) braid_cost_gather_arena(mem, (double) st->gather.nblocks,
											 row_bytes, refs_at);
	arena = Min(arena, (size_t) braid_gather_batch * 1024);
	return Max(arena, (size_t) BRAID_MIN_ARENA);
}

/*
 * offload_refs
 *		After a OnePass sort, write the sorted refs to the spill device when
 *		that lets the whole budget hold gathered tuples and so saves gather
 *		passes over the table (braid_cost_offload_refs); the IndexMap's
 *		memory then becomes the gather's arena.  False, changing nothing, if
 *		it does not pay or the device cannot take the refs (no room,
 *		temp_file_limit): the refs then simply stay in memory.
 */
static bool
offload_refs(BraidSortState *st, size_t arena_bytes)
{
	size_t		n = st->nentries;
	size_t		block = st->capacity * st->stride;
	double		passes;
	size_t		arena;
	BraidSpillFile *file;
	Relation	rel = st->gather.rel;

	if (n == 0 || rel == NULL ||
		!braid_cost_offload_refs((double) n, (double) arena_bytes, (double) st->budget,
								 (double) braid_gather_batch * 1024.0,
								 (double) st->gather.nblocks,
								 st->gather.strategy == NULL,
								 braid_sched_spill_ns_per_byte(braid_spill_tablespace_guess()),
								 &passes))
		return false;

	file = braid_spill_try_create(n * sizeof(uint64), &st->instr.device);
	if (file == NULL)
		return false;
	braid_spill_write(file, st->refs, n * sizeof(uint64));
	braid_spill_finish(file);

	st->refs_run = MemoryContextAllocZero(st->sortcxt, sizeof(BraidRun));
	st->refs_run->file = file;
	st->refs_run->nrecords = n;
	st->refs_run->bytes = n * sizeof(uint64);
	st->refs = (uint64 *) file->base;
	st->refs_offloaded = true;

	arena = gather_arena(st, (double) st->budget, (double) arena_bytes / n,
						 BRAID_REFS_ON_DEVICE);
	/* the IndexMap's memory, if large enough, else the gather's own */
	if (block >= arena)
		braid_gather_set_arena(&st->gather, (char *) st->entries, arena);
	else
	{
		pfree(st->entries);
		st->entries = NULL;
		st->capacity = 0;
	}
	st->batch_bytes = arena - BRAID_GATHER_HEADROOM;
	return true;
}

/*
 * compact_to_refs
 *		After the sort only the refs are needed (for the gather, rewinds,
 *		backward scans and mark/restore): pack them at the front of the
 *		IndexMap and drop the full keys.  Then either the refs go to the
 *		device and the whole IndexMap becomes the gather's arena
 *		(offload_refs), or the freed tail of the IndexMap is lent to the
 *		gather as its arena.  Either way the gather's memory comes out of
 *		the same budget.
 */
static void
compact_to_refs(BraidSortState *st)
{
	size_t		n = st->nentries;
	size_t		used;
	size_t		want;
	size_t		tail;
	size_t		arena_bytes = 0;

	if (st->entries == NULL)
		return;

	/* entry i starts at i * stride >= 8 * (i + 1) for i >= 1: no overlap */
	for (size_t i = 0; i < n; i++)
	{
		uint64		ref = braid_entry_ref(st->entries + i * st->stride, st->keylen);

		((uint64 *) st->entries)[i] = ref & ~BRAID_REF_TRUNCATED;
		arena_bytes += braid_gather_row_bytes(&st->gather, braid_ref_len(ref));
	}
	st->refs = (uint64 *) st->entries;

	ovf_free(&st->ovf);

	if (st->value_log)
		return;					/* rows are read in place: no gather arena */

	if (offload_refs(st, arena_bytes))
		return;

	/* arena: what the budget leaves beside the refs */
	used = MAXALIGN(n * sizeof(uint64));
	want = gather_arena(st, (double) st->budget - (double) used,
						n > 0 ? (double) arena_bytes / n : 1.0, BRAID_REFS_IN_MEMORY);
	tail = st->capacity * st->stride - used;
	if (tail >= want)
		braid_gather_set_arena(&st->gather, (char *) st->entries + used, want);
	st->batch_bytes = want - BRAID_GATHER_HEADROOM;
}

/*
 * sort_read_scope
 *		Begin a read grant on every device this sort reads back from: the
 *		runs being merged, the merged refs, the value log's segments.
 */
static void
sort_read_scope(BraidSortState *st, BraidReadScope *scope)
{
	scope->nslots = 0;
	for (int i = 0; i < st->merger_nruns; i++)
		braid_read_scope_add(scope, st->merger_runs[i]->file);
	if (st->refs_run)
		braid_read_scope_add(scope, st->refs_run->file);
	if (st->value_log)
		for (int i = 0; i < st->vlog.nsegs; i++)
			braid_read_scope_add(scope, st->vlog.segs[i]);
	braid_read_scope_begin(scope);
}

/*
 * merge_runs
 *		MergePass: merge the spilled runs, fan-in limited by the budget, with
 *		intermediate passes writing new runs while there are too many; then
 *		set up the final merge.  With random access it is written out as a
 *		file of refs the gather reads by position; otherwise it streams.
 */
static void
merge_runs(BraidSortState *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->sortcxt);
	int			fanin = merge_fanin(st);
	int			nruns;
	BraidRun  **runs;
	int64		n = 0;
	BraidReadScope scope;

	/*
	 * Runs made from half the IndexMap during the scan stand for half a run
	 * each: if the whole runs they replace would have been merged at once,
	 * so are they.  The merge's memory does not grow with its fan-in (runs
	 * are read in place), the limit is there to keep streams few.
	 */
	if (st->half_runs > 0)
	{
		int			whole = list_length(st->runs) - st->half_runs / 2;

		if (whole <= fanin)
			fanin = Min(Max(fanin, list_length(st->runs)), BRAID_MAX_FANIN);
	}

	set_phase(st, BRAID_PROGRESS_MERGING);
	while (list_length(st->runs) > fanin)
	{
		List	   *next = NIL;
		int			len = list_length(st->runs);

		braid_progress_add_merge_pass(&st->progress);
		runs = palloc(sizeof(BraidRun *) * fanin);
		for (int i = 0; i < len; i += fanin)
		{
			int			k = Min(fanin, len - i);

			for (int j = 0; j < k; j++)
				runs[j] = list_nth(st->runs, i + j);
			if (k == 1)
				next = lappend(next, runs[0]);
			else
				next = lappend(next, braid_merge_runs(runs, k, &st->instr.device,
													  st->collated ? collated_compare : NULL,
													  st));
			CHECK_FOR_INTERRUPTS();
		}
		pfree(runs);
		list_free(st->runs);
		st->runs = next;
		st->instr.merge_passes++;
	}
	st->instr.merge_passes++;	/* the final merge */
	braid_progress_add_merge_pass(&st->progress);

	nruns = list_length(st->runs);
	runs = palloc(sizeof(BraidRun *) * nruns);
	for (int i = 0; i < nruns; i++)
	{
		runs[i] = list_nth(st->runs, i);
		n += runs[i]->nrecords;
	}
	list_free(st->runs);
	st->runs = NIL;
	st->merger_runs = runs;
	st->merger_nruns = nruns;
	sort_read_scope(st, &scope);
	st->merger = braid_merger_begin(runs, nruns,
									st->collated ? collated_compare : NULL, st);
	braid_read_scope_end(&scope);

	if (st->random_access)
	{
		const uint8 *key;
		uint32		keylen;
		uint64		ref;

		st->refs_run = palloc0(sizeof(BraidRun));
		st->refs_run->file = braid_spill_create(n * sizeof(uint64), &st->instr.device);
		/* reads of the runs alternate with flushes of the refs (device.c) */
		sort_read_scope(st, &scope);
		while (braid_merger_next(st->merger, &key, &keylen, &ref))
			braid_spill_write(st->refs_run->file, &ref, sizeof(ref));
		braid_read_scope_end(&scope);
		braid_spill_finish(st->refs_run->file);
		st->refs_run->nrecords = n;
		st->refs_run->bytes = n * sizeof(uint64);
		braid_merger_end(st->merger);
		st->merger = NULL;
		for (int i = 0; i < nruns; i++)
			braid_run_close(runs[i]);
		st->merger_nruns = 0;
		st->refs = (uint64 *) st->refs_run->file->base;
		st->nrows = n;
	}
	else
	{
		st->nrows = n;

		/*
		 * The merge streams into the gather, batch by batch.  A helper can
		 * take the next batch while this one is gathered, when the keys
		 * compare by memcmp (a collation's comparator calls the server) and
		 * the rows are gathered from the table with helpers, chunk by chunk
		 * (not streamed through a window, see gather.c).
		 */
		st->merge_ahead = !st->collated && !st->value_log &&
			st->gather.rel != NULL && st->gather.threads > 1 &&
			st->gather.win_size == 0;
		if (st->merge_ahead)
		{
			braid_merger_defer_reads(st->merger);
			memset(&st->ahead, 0, sizeof(st->ahead));
		}
	}
	MemoryContextSwitchTo(old);
}

/*
 * mergepass_arena
 *		After a MergePass the budget is the gather's: its batches of tuples
 *		and their bookkeeping (each row's place, copy instruction and ref,
 *		and per page of the table its block lists), as the cost model
 *		reckons (braid_cost_gather_passes).
 */
static void
mergepass_arena(BraidSortState *st)
{
	double		row_bytes;

	if (st->value_log || st->rows_built == 0 || st->gather.rel == NULL)
		return;
	/* the average tuple, with half an alignment's padding */
	row_bytes = (double) st->tuple_bytes / st->rows_built - st->gather.strip +
		MAXIMUM_ALIGNOF / 2.0;
	st->batch_bytes = gather_arena(st, (double) st->budget, row_bytes,
								   st->merge_ahead ? BRAID_REFS_MERGED_AHEAD :
								   BRAID_REFS_ON_DEVICE) -
		BRAID_GATHER_HEADROOM;
}

/*
 * count_sort
 *		Add a finished sort to braidsort.stats, with an estimate of the
 *		value bytes a tuple-carrying external sort with the same memory
 *		would have written: every row once per merge pass, when its rows
 *		outgrow the memory (runs of about the memory's size, merged with
 *		PostgreSQL's fan-in of one 256 kB buffer per run).  braidsort's own
 *		value writes (a value log on the device) are taken off.
 */
static void
count_sort(BraidSortState *st)
{
	double		total = (double) st->tuple_bytes;
	double		mem = (double) Max(st->budget, (size_t) 65536);
	double		carried = 0;
	double		own = st->value_log && st->vlog.on_device ? (double) st->vlog.bytes : 0;

	if (total > mem)
	{
		double		runs = ceil(total / mem);
		double		fanin = Max(floor(mem / (256.0 * 1024)), 2.0);
		double		passes = Max(ceil(log(runs) / log(fanin)), 1.0);

		carried = total * passes;
	}
	braid_stats_count_sort((st->merger != NULL || st->refs_run != NULL) &&
						   !st->refs_offloaded ?
						   BRAID_METHOD_MERGEPASS : BRAID_METHOD_ONEPASS,
						   st->value_log, (uint64) st->rows_built,
						   (uint64) Max(carried - own, 0.0));
}

/*
 * fast_seqscan
 *		The child, if it is a plain sequential scan whose rows the build may
 *		take straight from the table access method once the scan has begun:
 *		no quals, no projection, not parallel, no EvalPlanQual, and not
 *		instrumented beyond a row count (which the build then adds up).
 *		That is exactly what ExecSeqScan would return, without its few calls
 *		a row; NULL otherwise.
 */
static SeqScanState *
fast_seqscan(BraidSortState *st)
{
	PlanState  *child = st->child;
	Instrumentation *instr = child->instrument;

	if (st->value_log || st->keycols == NULL || !IsA(child, SeqScanState) ||
		child->qual != NULL || child->ps_ProjInfo != NULL ||
		child->plan->parallel_aware || child->state->es_epq_active != NULL)
		return NULL;
	if (instr && (instr->need_timer || instr->need_bufusage || instr->need_walusage))
		return NULL;
	return (SeqScanState *) child;
}

/*
 * build_rows
 *		Take every row of the child into the IndexMap (spilling runs as it
 *		fills); returns the rows taken straight from the table scan
 *		(fast_seqscan), which its instrumentation has not counted.
 */
static int64
build_rows(BraidSortState *st, SeqScanState *fast)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	int64		fast_rows = 0;

	for (;;)
	{
		TupleTableSlot *slot;
		TupleTableSlot *scanslot;
		HeapTuple	htup;
		MemoryContext old;
		size_t		len;
		uint64		ref;

		/*
		 * After the first row, which ExecProcNode fetches (beginning the scan
		 * or rescanning it for changed parameters), the scan's own next tuple
		 * (fast_seqscan).
		 */
		if (fast != NULL && st->rows_built > 0 &&
			fast->ss.ss_currentScanDesc != NULL)
		{
			slot = fast->ss.ss_ScanTupleSlot;
			if (!table_scan_getnextslot(fast->ss.ss_currentScanDesc,
										ForwardScanDirection, slot))
				slot = NULL;
			else
				fast_rows++;
		}
		else
			slot = ExecProcNode(st->child);

		if (TupIsNull(slot))
			break;

		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		if (st->value_log)
		{
			bool		should_free;
			MinimalTuple mtup = ExecFetchSlotMinimalTuple(slot, &should_free);

			/* keep the whole row in the value log, its keys in the IndexMap */
			ref = braid_vlog_append(&st->vlog, mtup);
			st->tuple_bytes += mtup->t_len;
			for (int i = 0; i < st->nkeys; i++)
				st->keyvals[i] = slot_getattr(slot, st->keycols[i], &st->keynulls[i]);
			len = braid_encode_key(st->keys, st->nkeys, st->keyvals,
								   st->keynulls, &st->keybuf);
		}
		else
		{
			/* TID and length of the heap tuple the child just returned */
			scanslot = ((ScanState *) st->child)->ss_ScanTupleSlot;
			if (!TTS_IS_BUFFERTUPLE(scanslot) && !TTS_IS_HEAPTUPLE(scanslot))
				elog(ERROR, "braidsort: scan did not produce a heap tuple");
			htup = ((HeapTupleTableSlot *) scanslot)->tuple;
			if (htup == NULL || htup->t_len > BRAID_REF_LEN_MASK ||
				!ItemPointerIsValid(&scanslot->tts_tid))
				elog(ERROR, "braidsort: scan produced a tuple without a valid TID or length");
			st->tuple_bytes += htup->t_len;
			ref = braid_make_ref(ItemPointerGetBlockNumber(&scanslot->tts_tid),
								 ItemPointerGetOffsetNumber(&scanslot->tts_tid),
								 htup->t_len);

			if (st->keycols)
			{
				/* the scan hands over its tuple: read the key columns */
				for (int i = 0; i < st->nkeys; i++)
					st->keyvals[i] = slot_getattr(scanslot, st->keycols[i], &st->keynulls[i]);
				len = braid_encode_key(st->keys, st->nkeys, st->keyvals,
									   st->keynulls, &st->keybuf);
			}
			else
			{
				/* the narrowed scan outputs exactly the keys */
				slot_getallattrs(slot);
				len = braid_encode_key(st->keys, st->nkeys, slot->tts_values,
									   slot->tts_isnull, &st->keybuf);
			}
		}
		add_entry(st, st->keybuf.data, len, ref);
		MemoryContextSwitchTo(old);
		st->rows_built++;
		ResetExprContext(econtext);

		/* show the rows, and move a run being made on a helper along */
		if ((st->rows_built & 4095) == 0)
		{
			braid_progress_set_rows(&st->progress, st->rows_built);
			if (st->pipe.stage != PIPE_IDLE)
				pipe_step(st, false);
		}
	}
	braid_progress_set_rows(&st->progress, st->rows_built);
	pipe_end(st);
	return fast_rows;
}

/*
 * build_and_sort
 *		Consume the child, then sort.
 */
static void
build_and_sort(BraidSortState *st)
{
	instr_time	start;
	ScanDirection dir = st->css.ss.ps.state->es_direction;
	SeqScanState *fast = fast_seqscan(st);
	volatile int64 fast_rows = 0;

	/* the input is read forward, whatever direction we are asked for */
	st->css.ss.ps.state->es_direction = ForwardScanDirection;

	INSTR_TIME_SET_CURRENT(start);
	st->rows_built = 0;
	st->tuple_bytes = 0;
	st->spill_ms = 0;
	braid_progress_start(&st->progress, st->css.ss.ps.plan->plan_node_id, st->est_rows);
	st->phase = BRAID_PROGRESS_BUILDING;
	st->batches_before = st->gather.batches;

	/*
	 * Runs may be made on a helper while the build goes on (pipe_begin) when
	 * the build reads a plain table scan: the run's write grant is then held
	 * over nothing but the scan, and nothing else wants the thread pool.
	 */
	memset(&st->pipe, 0, sizeof(st->pipe));
	st->half_runs = 0;
	st->pipe_allowed = fast != NULL && !st->collated && st->threads > 1;
	PG_TRY();
	{
		fast_rows = build_rows(st, fast);
	}
	PG_CATCH();
	{
		pipe_stop(st);
		PG_RE_THROW();
	}
	PG_END_TRY();
	braid_prefault_end();
	if (fast_rows > 0 && st->child->instrument)
		st->child->instrument->tuplecount += fast_rows;
	braid_gather_reset(&st->gather);
	if (st->value_log)
		braid_vlog_finish(&st->vlog);
	if (st->runs != NIL)
	{
		/* MergePass: the rest becomes the last run, then merge */
		if (st->nentries > 0)
			spill_run(st);
		st->instr.build_ms += elapsed_ms(start) - st->spill_ms;
		st->instr.sort_ms += st->spill_ms;
		pfree(st->entries);
		st->entries = NULL;
		st->capacity = 0;
		INSTR_TIME_SET_CURRENT(start);
		merge_runs(st);
		st->instr.merge_ms += elapsed_ms(start);
		mergepass_arena(st);
	}
	else
	{
		st->instr.build_ms += elapsed_ms(start);
		INSTR_TIME_SET_CURRENT(start);
		set_phase(st, BRAID_PROGRESS_SORTING);
		sort_entries(st);
		st->nrows = (int64) st->nentries;
		st->instr.peak_map_bytes = Max(st->instr.peak_map_bytes,
									   st->capacity * st->stride + ovf_bytes(&st->ovf));
		compact_to_refs(st);
		st->instr.sort_ms += elapsed_ms(start);
	}

	st->css.ss.ps.state->es_direction = dir;
	st->built = true;
	st->instr.sorts++;
	st->current = 0;
	st->eof_reached = false;
	st->nbatches = 0;
	st->batches_complete = false;
	st->batch_start[0] = 0;
	st->win_first = 0;
	st->win_n = 0;
	set_phase(st, BRAID_PROGRESS_GATHERING);
	count_sort(st);
}

/*
 * release_spill
 *		Close the merger and remove every spill file of this sort.
 */
static void
release_spill(BraidSortState *st)
{
	ListCell   *lc;

	if (st->merger)
	{
		braid_merger_end(st->merger);
		st->merger = NULL;
	}
	for (int i = 0; i < st->merger_nruns; i++)
		braid_run_close(st->merger_runs[i]);
	st->merger_nruns = 0;
	foreach(lc, st->runs)
		braid_run_close((BraidRun *) lfirst(lc));
	st->runs = NIL;
	if (st->refs_run)
	{
		braid_run_close(st->refs_run);
		st->refs_run = NULL;
	}
	st->refs_offloaded = false;
}

/*
 * reset_sort
 *		Drop everything built, so the next fetch rebuilds from the child.
 */
static void
reset_sort(BraidSortState *st)
{
	release_spill(st);
	braid_gather_reset(&st->gather);
	if (st->value_log)
		braid_vlog_reset(&st->vlog);
	MemoryContextReset(st->sortcxt);
	st->entries = NULL;
	st->refs = NULL;
	st->nentries = st->capacity = 0;
	st->any_truncated = false;
	memset(&st->ovf, 0, sizeof(st->ovf));
	st->stream_refs = NULL;
	st->stream_refs_cap = 0;
	st->merge_ahead = false;
	memset(&st->ahead, 0, sizeof(st->ahead));
	memset(&st->pipe, 0, sizeof(st->pipe));
	st->merger_runs = NULL;
	st->built = false;
}

/* ---------------------------------------------------------------------
 * Batches
 * ---------------------------------------------------------------------
 */

/* add_batch_end: record the end of batch nbatches. */
static void
add_batch_end(BraidSortState *st, int64 end)
{
	if (st->nbatches + 2 > st->batch_cap)
	{
		st->batch_cap *= 2;
		st->batch_start = repalloc(st->batch_start, sizeof(int64) * st->batch_cap);
	}
	st->batch_start[++st->nbatches] = end;
}

/*
 * plan_memory_batches
 *		When all refs are at hand (in memory, or in the merged refs file)
 *		every batch boundary is known up front: close a batch before a row
 *		that would overflow the arena.
 */
static void
plan_memory_batches(BraidSortState *st)
{
	size_t		bytes = 0;
	int64		first = 0;
	BraidReadScope scope;

	sort_read_scope(st, &scope);
	if (st->refs_run && st->nrows > 0)
		braid_spill_note_read(st->refs_run->file, 0, st->nrows * sizeof(uint64));

	for (int64 i = 0; i < st->nrows; i++)
	{
		size_t		len = braid_gather_row_bytes(&st->gather, braid_ref_len(st->refs[i]));

		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();

		/* close the batch before a row that would not fit in the arena */
		if (i > first &&
			(bytes + len > st->batch_bytes || i - first >= BRAID_MAX_BATCH_ROWS))
		{
			add_batch_end(st, i);
			first = i;
			bytes = 0;
		}
		bytes += len;
	}
	if (first < st->nrows)
		add_batch_end(st, st->nrows);
	braid_read_scope_end(&scope);
	st->batches_complete = true;
}

/*
 * grow_stream_refs
 *		Room for at least n refs in the in-memory batch of refs.
 */
static void
grow_stream_refs(BraidSortState *st, int n)
{
	int			cap;

	if (n <= st->stream_refs_cap)
		return;
	cap = Max(Max(st->stream_refs_cap * 2, 1024), n);
	st->stream_refs = st->stream_refs ?
		repalloc_huge(st->stream_refs, sizeof(uint64) * cap) :
		MemoryContextAllocHuge(st->sortcxt, sizeof(uint64) * cap);
	st->stream_refs_cap = cap;
}

/*
 * discover_stream_batch
 *		Take the next batch of refs from the streaming merge, closing it at
 *		the batch byte limit; records its end, or marks the batch list
 *		complete when the merge is exhausted.
 */
static void
discover_stream_batch(BraidSortState *st)
{
	int64		first = st->batch_start[st->nbatches];
	size_t		bytes = 0;
	int			n = 0;
	const uint8 *key;
	uint32		keylen;
	uint64		ref;
	BraidReadScope scope;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	sort_read_scope(st, &scope);
	if (st->merge_ahead && (st->ahead.n > 0 || st->ahead.closed))
	{
		/* a helper began the batch while the last one was gathered */
		uint64	   *refs = st->stream_refs;
		int			cap = st->stream_refs_cap;

		st->stream_refs = st->ahead.refs;
		st->stream_refs_cap = st->ahead.cap;
		n = st->ahead.n;
		bytes = st->ahead.bytes;
		st->instr.rows_merged_ahead += n;
		st->ahead.refs = refs;
		st->ahead.cap = cap;
		st->ahead.n = 0;
		st->ahead.bytes = 0;
		st->ahead.closed = false;
	}
	while (bytes < st->batch_bytes && n < BRAID_MAX_BATCH_ROWS &&
		   braid_merger_next(st->merger, &key, &keylen, &ref))
	{
		if (n == st->stream_refs_cap)
			grow_stream_refs(st, n + 1);
		st->stream_refs[n++] = ref;
		bytes += braid_gather_row_bytes(&st->gather, braid_ref_len(ref));
	}
	if (st->merge_ahead)
		braid_merger_account(st->merger);
	braid_read_scope_end(&scope);
	/* the final merge runs here, batch by batch: count it as merge time */
	st->instr.merge_stream_ms += elapsed_ms(start);
	if (n == 0)
	{
		st->batches_complete = true;
		st->nrows = first;
		return;
	}
	add_batch_end(st, first + n);
}

/*
 * merge_ahead_step
 *		Idle work for a gather helper (BraidGatherIdleStep): take a few more
 *		refs of the next batch from the merge, stopping where
 *		discover_stream_batch() would close the batch, when out of room, or
 *		when a key needs a larger buffer (the backend carries on from there).
 *		Pure memory work on the runs' mappings; of the node's state it reads
 *		only the merger, batch_bytes and the gather's strip, which do not
 *		change during a load, and writes only "ahead".
 */
static double
merge_ahead_step(void *arg)
{
	BraidSortState *st = (BraidSortState *) arg;
	BraidMergeAhead *a = &st->ahead;

	for (int i = 0; i < 256; i++)
	{
		uint64		ref;
		int			got;

		if (a->bytes >= st->batch_bytes || a->n >= BRAID_MAX_BATCH_ROWS)
		{
			a->closed = true;
			return 1.0;
		}
		if (a->n == a->cap)
			return 1.0;
		got = braid_merger_try_next(st->merger, &ref);
		if (got < 0)
			return 1.0;
		if (got == 0)
		{
			a->closed = true;
			return 1.0;
		}
		a->refs[a->n++] = ref;
		a->bytes += braid_gather_row_bytes(&st->gather, braid_ref_len(ref));
	}
	/* the batch closes at about batch_bytes */
	return (double) a->bytes / st->batch_bytes;
}

/*
 * load_merging_ahead
 *		Load the batch just taken from the streaming merge, while a helper
 *		takes the next batch from it in the gather's idle moments.  The runs
 *		are read under a read grant for the whole load, and the helper's
 *		reads are accounted (and their emulated delay paid) after it.
 */
static void
load_merging_ahead(BraidSortState *st, int64 first, int n)
{
	BraidMergeAhead *a = &st->ahead;
	BraidReadScope scope;

	/* room for a batch like this one (the backend grows it if need be) */
	if (a->cap < st->stream_refs_cap)
	{
		a->refs = a->refs ?
			repalloc_huge(a->refs, sizeof(uint64) * st->stream_refs_cap) :
			MemoryContextAllocHuge(st->sortcxt, sizeof(uint64) * st->stream_refs_cap);
		a->cap = st->stream_refs_cap;
	}

	sort_read_scope(st, &scope);
	braid_gather_set_idle(&st->gather, merge_ahead_step, st);
	PG_TRY();
	{
		braid_gather_load(&st->gather, first, st->stream_refs, n);
	}
	PG_FINALLY();
	{
		braid_gather_set_idle(&st->gather, NULL, NULL);
	}
	PG_END_TRY();
	braid_merger_account(st->merger);
	braid_read_scope_end(&scope);
}

/*
 * load_batch
 *		Make batch b the one in memory.  A streaming merge can only load the
 *		batch it has just taken (it never needs to go back).
 */
static void
load_batch(BraidSortState *st, int b, bool refs_ready)
{
	int64		first = st->batch_start[b];
	int			n = (int) (st->batch_start[b + 1] - first);

	if (st->refs != NULL && st->refs_run)
	{
		BraidReadScope scope;

		/*
		 * The batch's refs are copied out of the merged refs file under a
		 * read grant, so that the gather (heap I/O, and rows emitted one at
		 * a time) holds no grant on the spill device.
		 */
		grow_stream_refs(st, n);
		sort_read_scope(st, &scope);
		braid_spill_note_read(st->refs_run->file, first * sizeof(uint64),
							  (first + n) * sizeof(uint64));
		memcpy(st->stream_refs, st->refs + first, sizeof(uint64) * n);
		braid_read_scope_end(&scope);
		braid_gather_load(&st->gather, first, st->stream_refs, n);
	}
	else if (st->refs != NULL)
		braid_gather_load(&st->gather, first, st->refs + first, n);
	else
	{
		if (!refs_ready)
			elog(ERROR, "braidsort: a streaming merge cannot go back to row " INT64_FORMAT,
				 first);
		if (st->merge_ahead && !st->ahead.closed)
			load_merging_ahead(st, first, n);
		else
			braid_gather_load(&st->gather, first, st->stream_refs, n);
	}
}

/*
 * position_batch
 *		Load the batch holding sort position pos; false if pos is past the
 *		last row.
 */
static bool
position_batch(BraidSortState *st, int64 pos)
{
	BraidGather *g = &st->gather;
	instr_time	start;
	int			lo,
				hi;
	bool		fresh = false;
	const BraidProgress *prev;

	if (g->nrows > 0 && pos >= g->first && pos < g->first + g->nrows)
		return true;

	INSTR_TIME_SET_CURRENT(start);
	prev = braid_progress_enter(&st->progress);
	if (!st->batches_complete && st->nbatches == 0 && st->merger == NULL)
		plan_memory_batches(st);

	/* discover batches up to pos (streaming only: the others are planned) */
	while (pos >= st->batch_start[st->nbatches])
	{
		if (st->batches_complete)
		{
			braid_progress_leave(prev);
			st->instr.gather_ms += elapsed_ms(start);
			return false;
		}
		discover_stream_batch(st);
		fresh = true;
	}

	/* binary search: last b with batch_start[b] <= pos */
	lo = 0;
	hi = st->nbatches - 1;
	while (lo < hi)
	{
		int			mid = (lo + hi + 1) / 2;

		if (st->batch_start[mid] <= pos)
			lo = mid;
		else
			hi = mid - 1;
	}
	load_batch(st, lo, fresh && lo == st->nbatches - 1);
	braid_progress_set_batches(&st->progress, st->gather.batches - st->batches_before);
	braid_progress_leave(prev);
	st->instr.gather_ms += elapsed_ms(start);
	return true;
}

/*
 * snapshot_instr
 *		The node's instrumentation as EXPLAIN shows it: the counters kept in
 *		place, and what the last sort looks like now.
 */
static void
snapshot_instr(BraidSortState *st, BraidSortInstr *out)
{
	*out = st->instr;
	out->rows_sorted = st->rows_built;
	out->gather_batches = st->gather.batches;
	out->peak_gather_bytes = st->gather.peak_arena;
	if (!st->value_log)
		out->gather_source = BRAID_SOURCE_HEAP_TID;
	else
		out->gather_source = st->vlog.on_device ? BRAID_SOURCE_VALUE_LOG :
			BRAID_SOURCE_MEMORY;
	if (st->value_log)
		out->sorted_refs = BRAID_SORTED_REFS_NONE;
	else
		out->sorted_refs = st->refs_run ? BRAID_SORTED_REFS_DEVICE :
			st->merger ? BRAID_SORTED_REFS_STREAM : BRAID_SORTED_REFS_MEMORY;
	out->merge_ahead = st->merge_ahead;
}

/* ---------------------------------------------------------------------
 * Custom scan callbacks
 * ---------------------------------------------------------------------
 */

/*
 * braid_create_state
 *		Allocate the node's state.
 */
static Node *
braid_create_state(CustomScan *cscan)
{
	BraidSortState *st = palloc0(sizeof(BraidSortState));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &braid_exec_methods;
	return (Node *) st;
}

/*
 * reads_tuple_header
 *		Whether the node's own expressions (its projection and quals, which
 *		are what reads the refetched tuples) read the header fields that the
 *		gather may leave out (see BRAID_GATHER_STRIP): the xmin, xmax, cmin
 *		or cmax system columns, or the whole row.
 */
static bool
reads_tuple_header(CustomScan *cscan)
{
	Bitmapset  *attrs = NULL;
	Index		varno = cscan->scan.scanrelid;
	bool		reads;

	pull_varattnos((Node *) cscan->scan.plan.targetlist, varno, &attrs);
	pull_varattnos((Node *) cscan->scan.plan.qual, varno, &attrs);
	reads = bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(MinTransactionIdAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(MaxTransactionIdAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(MinCommandIdAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(MaxCommandIdAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs);
	bms_free(attrs);
	return reads;
}

/*
 * braid_begin
 *		Initialize the child scan, the refetch slot and projection, and the
 *		memory the sort will use.
 */
static void
braid_begin(CustomScanState *node, EState *estate, int eflags)
{
	BraidSortState *st = (BraidSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *sortops = list_nth(cscan->custom_private, BRAID_PRIV_SORTOPS);
	List	   *collations = list_nth(cscan->custom_private, BRAID_PRIV_COLLATIONS);
	List	   *nullsfirst = list_nth(cscan->custom_private, BRAID_PRIV_NULLSFIRST);
	List	   *params = list_nth(cscan->custom_private, BRAID_PRIV_PARAMS);
	Relation	rel = node->ss.ss_currentRelation;
	int			i;

	st->nkeys = list_length(sortops);
	st->keys = palloc(sizeof(BraidKeyColumn) * st->nkeys);
	st->sortops = palloc(sizeof(Oid) * st->nkeys);
	st->collations = palloc(sizeof(Oid) * st->nkeys);
	st->nullsfirst = palloc(sizeof(bool) * st->nkeys);
	for (i = 0; i < st->nkeys; i++)
	{
		char	   *why;

		st->sortops[i] = list_nth_oid(sortops, i);
		st->collations[i] = list_nth_oid(collations, i);
		st->nullsfirst[i] = list_nth_int(nullsfirst, i) != 0;
		if (!braid_key_column_for(st->sortops[i], st->collations[i],
								  st->nullsfirst[i], &st->keys[i], &why))
			elog(ERROR, "braidsort: sort key %d is no longer supported: %s", i + 1, why);
		if (BRAID_KEY_IS_COLLATED(st->keys[i].kind))
		{
			if (st->collated)
				elog(ERROR, "braidsort: more than one collated sort key");
			st->collated = true;
			st->collated_key = i;
		}
	}
	st->keylen = (uint32) list_nth_int(params, BRAID_PARAM_KEYLEN);
	st->may_truncate = list_nth_int(params, BRAID_PARAM_TRUNCATES) != 0;
	st->radix_keylen = st->collated ? st->keylen - 8 : st->keylen;
	if (st->collated && st->keylen < 9)
		elog(ERROR, "braidsort: key prefix of %u bytes has no room for a collated key", st->keylen);
	st->stride = st->keylen + BRAID_REF_BYTES;
	st->est_rows = cscan->scan.plan.plan_rows;
	st->threads = braid_sort_thread_count(list_nth_int(params, BRAID_PARAM_PROCESSES));
	st->random_access = (eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
	st->budget = braid_budget_bytes();
	/* merged batches; an in-memory sort sets its own after compacting */
	st->batch_bytes = Max(Min((size_t) braid_gather_batch * 1024, st->budget),
						  BRAID_MIN_ARENA);

	st->value_log = list_nth_int(params, BRAID_PARAM_MODE) == BRAID_MODE_VALUE_LOG;
	st->progress.slot = -1;
	/* (ExecInitNode sets up the node's instrument after this returns) */
	if (estate->es_instrument != 0 && !IsParallelWorker())
		braid_instr_leader_begin(node->ss.ps.plan->plan_node_id);

	st->sortcxt = AllocSetContextCreate(CurrentMemoryContext, "BraidSort IndexMap",
										ALLOCSET_DEFAULT_SIZES);
	st->gathercxt = AllocSetContextCreate(CurrentMemoryContext, "BraidSort gather",
										  ALLOCSET_DEFAULT_SIZES);
	st->keybuf.cap = 256;
	st->keybuf.data = palloc(st->keybuf.cap);
	st->batch_cap = 64;
	st->batch_start = palloc(sizeof(int64) * st->batch_cap);

	/* the child is read once, forward; this node provides rewind etc. */
	eflags &= ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	if (st->value_log)
	{
		List	   *keycols = list_nth(cscan->custom_private, BRAID_PRIV_KEYCOLS);

		/*
		 * The child is the outer plan and the target list references its
		 * columns, which come from the value log: project from a minimal
		 * tuple slot in the outer position.
		 */
		st->child = ExecInitNode(outerPlan(cscan), estate, eflags);
		outerPlanState(node) = st->child;
		st->log_slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(st->child),
											  &TTSOpsMinimalTuple);
		node->ss.ps.outerops = &TTSOpsMinimalTuple;
		node->ss.ps.outeropsfixed = true;
		node->ss.ps.outeropsset = true;
		ExecAssignProjectionInfo(&node->ss.ps, NULL);

		st->keycols = palloc(sizeof(AttrNumber) * st->nkeys);
		for (i = 0; i < st->nkeys; i++)
			st->keycols[i] = (AttrNumber) list_nth_int(keycols, i);
		st->keyvals = palloc(sizeof(Datum) * st->nkeys);
		st->keynulls = palloc(sizeof(bool) * st->nkeys);
		braid_vlog_init(&st->vlog,
						AllocSetContextCreate(CurrentMemoryContext, "BraidSort value log",
											  ALLOCSET_DEFAULT_SIZES),
						st->budget / 2, &st->instr.device);
	}
	else
	{
		st->child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
		node->custom_ps = list_make1(st->child);

		/*
		 * Refetched tuples are stored as heap tuples; rebuild the projection
		 * for that slot type (ExecInitCustomScan assumed a virtual one).
		 */
		ExecInitScanTupleSlot(estate, &node->ss, RelationGetDescr(rel), &TTSOpsHeapTuple);
		ExecAssignScanProjectionInfoWithVarno(&node->ss, cscan->scan.scanrelid);
		braid_gather_begin(&st->gather, rel, st->gathercxt);
		braid_gather_set_threads(&st->gather, st->threads);
		braid_gather_set_strip(&st->gather, !reads_tuple_header(cscan));

		/* keys read from the unprojected scan tuple, by table column */
		if (list_length(cscan->custom_private) > BRAID_PRIV_KEYATTNOS)
		{
			List	   *attnos = list_nth(cscan->custom_private, BRAID_PRIV_KEYATTNOS);

			st->keycols = palloc(sizeof(AttrNumber) * st->nkeys);
			for (i = 0; i < st->nkeys; i++)
				st->keycols[i] = (AttrNumber) list_nth_int(attnos, i);
			st->keyvals = palloc(sizeof(Datum) * st->nkeys);
			st->keynulls = palloc(sizeof(bool) * st->nkeys);
		}

		/*
		 * This node is a sort, not a scan of the table: like a Sort, it must
		 * not be taken for the current row's scan by WHERE CURRENT OF.  The
		 * gather keeps the relation.
		 */
		node->ss.ss_currentRelation = NULL;
	}
}

/* The copy of a value log window by the reader threads. */
typedef struct LogCopyTask
{
	MinimalTuple *src;			/* rows in the log's mapping */
	size_t	   *off;			/* their places in the arena */
	char	   *arena;
	int			n;
	int			nthreads;
	int			read_ns;		/* emulated delay per line read */
} LogCopyTask;

/*
 * log_copy_task
 *		A reader thread: copy its share of the window's rows out of the
 *		mapped value log and pay their emulated read delay.  Pure C: it runs
 *		on a pool thread.
 */
static void
log_copy_task(void *arg, int worker)
{
	LogCopyTask *t = (LogCopyTask *) arg;
	int			from = (int) ((int64) t->n * worker / t->nthreads);
	int			to = (int) ((int64) t->n * (worker + 1) / t->nthreads);
	uint64		lines = 0;

	for (int i = from; i < to; i++)
	{
		uintptr_t	a = (uintptr_t) t->src[i];
		uint32		len;

		/* rows are scattered over the log: start fetching a few ahead */
		if (i + 8 < to)
			__builtin_prefetch(t->src[i + 8]);
		len = t->src[i]->t_len;

		memcpy(t->arena + t->off[i], t->src[i], len);
		lines += (a + len - 1) / 64 - a / 64 + 1;
	}
	braid_device_spin(lines, t->read_ns);
}

/*
 * load_log_window
 *		Value log mode, when rows come back through spill-device reads (a
 *		value log on the device, or merged runs): fetch the window of rows
 *		holding sort position pos.  Under one read grant of the device, the
 *		window's refs are taken and its rows copied out of the log, so that
 *		rows emitted one at a time -- and whatever the plan above does with
 *		them -- hold no grant.  A streaming merge only moves forward.
 */
static void
load_log_window(BraidSortState *st, int64 pos)
{
	BraidReadScope scope;
	int64		first;
	int			n = 0;
	size_t		used = 0;
	bool		copy = st->vlog.on_device;

	if (st->merger)
	{
		first = st->win_first + st->win_n;
		if (pos != first)
			elog(ERROR, "braidsort: a streaming merge cannot go back to row " INT64_FORMAT, pos);
	}
	else
		first = pos - pos % BRAID_LOG_WINDOW_ROWS;

	if (st->win_tuple == NULL)
	{
		st->win_tuple = MemoryContextAlloc(st->gathercxt,
										   sizeof(MinimalTuple) * BRAID_LOG_WINDOW_ROWS);
		st->win_off = MemoryContextAlloc(st->gathercxt,
										 sizeof(size_t) * BRAID_LOG_WINDOW_ROWS);
	}
	st->win_n = 0;

	sort_read_scope(st, &scope);
	while (n < BRAID_LOG_WINDOW_ROWS)
	{
		uint64		ref;
		MinimalTuple tuple;

		if (st->merger)
		{
			const uint8 *key;
			uint32		keylen;

			if (!braid_merger_next(st->merger, &key, &keylen, &ref))
				break;
		}
		else
		{
			if (first + n >= st->nrows)
				break;
			ref = st->refs[first + n];
		}
		if (copy)
		{
			BraidSpillFile *f;
			size_t		fpos;
			uint32		len;
			size_t		alen;

			/* where the row is; the reader threads copy it below */
			/* (no need to touch the row: its length is in the ref) */
			tuple = braid_vlog_locate(&st->vlog, ref & ~BRAID_REF_TRUNCATED, &f, &fpos);
			len = braid_vlog_ref_len(ref);
			if (len == 0)
				len = tuple->t_len;
			alen = MAXALIGN(len);
			braid_spill_count_read(f, fpos, fpos + len);
			if (used + alen > st->win_cap)
			{
				size_t		cap = Max(Max(st->win_cap * 2, used + alen), (size_t) 65536);

				st->win_arena = st->win_arena ?
					repalloc_huge(st->win_arena, cap) :
					MemoryContextAllocHuge(st->gathercxt, cap);
				st->win_cap = cap;
			}
			st->win_tuple[n] = tuple;	/* source, for now */
			st->win_off[n] = used;
			used += alen;
		}
		else
			st->win_tuple[n] = braid_vlog_get(&st->vlog, ref & ~BRAID_REF_TRUNCATED);
		n++;
	}
	if (copy && n > 0)
	{
		LogCopyTask task;
		int			threads;

		/* the copies, on the device's reader threads */
		task.src = st->win_tuple;
		task.off = st->win_off;
		task.arena = st->win_arena;
		task.n = n;
		task.read_ns = braid_device_read_line_ns(st->vlog.segs[0]);
		threads = braid_sched_read_thread_count_for(st->vlog.segs[0]->spcoid);
		/* threads pay for themselves on large windows, or a slow device */
		if (task.read_ns > 0)
			threads = Min(threads, n / 64);
		else
			threads = Min(threads, (int) (used / (256 * 1024)));
		task.nthreads = Max(threads, 1);
		braid_pool_run(task.nthreads, log_copy_task, &task);
	}
	if (st->refs_run && n > 0)
		braid_spill_note_read(st->refs_run->file, first * sizeof(uint64),
							  (first + n) * sizeof(uint64));
	braid_read_scope_end(&scope);

	if (copy)
		for (int i = 0; i < n; i++)
			st->win_tuple[i] = (MinimalTuple) (st->win_arena + st->win_off[i]);
	st->win_first = first;
	st->win_n = n;
	if (n == 0 || pos >= first + n)
		elog(ERROR, "braidsort: sorted row " INT64_FORMAT " is missing", pos);
}

/*
 * emit_from_log
 *		Value log mode: the row at sort position pos, projected.
 */
static TupleTableSlot *
emit_from_log(BraidSortState *st, int64 pos)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	MinimalTuple tuple;

	if (st->vlog.on_device || st->merger || st->refs_run)
	{
		if (pos < st->win_first || pos >= st->win_first + st->win_n)
		{
			const BraidProgress *prev = braid_progress_enter(&st->progress);

			load_log_window(st, pos);
			braid_progress_leave(prev);
		}
		tuple = st->win_tuple[pos - st->win_first];
	}
	else
		tuple = braid_vlog_get(&st->vlog, st->refs[pos] & ~BRAID_REF_TRUNCATED);

	ExecStoreMinimalTuple(tuple, st->log_slot, false);
	ResetExprContext(econtext);
	econtext->ecxt_outertuple = st->log_slot;
	return ExecProject(st->css.ss.ps.ps_ProjInfo);
}

/*
 * braid_exec
 *		Return the next row in the scan direction.
 */
static TupleTableSlot *
braid_exec(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *scanslot = node->ss.ss_ScanTupleSlot;
	int64		pos;

	if (!st->built)
	{
		const BraidProgress *prev = braid_progress_enter(&st->progress);

		build_and_sort(st);
		braid_progress_leave(prev);
	}
	/* (after a rewind or at the end, a backward scan returns rows again) */
	set_phase(st, BRAID_PROGRESS_GATHERING);

	/* nothing stays in the scan slot once there is no current row */
	if (st->scan_slot_full)
	{
		ExecClearTuple(scanslot);
		st->scan_slot_full = false;
	}

	if (ScanDirectionIsForward(node->ss.ps.state->es_direction))
	{
		if (st->current >= st->nrows)
		{
			st->eof_reached = true;
			set_phase(st, BRAID_PROGRESS_DONE);
			return NULL;
		}
		if (st->value_log)
			return emit_from_log(st, st->current++);
		if (!position_batch(st, st->current))
		{
			st->eof_reached = true;
			set_phase(st, BRAID_PROGRESS_DONE);
			return NULL;
		}
		pos = st->current++;
	}
	else
	{
		if (st->current <= 0)
			return NULL;
		if (st->eof_reached)
			st->eof_reached = false;
		else
		{
			st->current--;
			if (st->current <= 0)
				return NULL;
		}
		pos = st->current - 1;
		if (st->value_log)
			return emit_from_log(st, pos);
		if (!position_batch(st, pos))
			elog(ERROR, "braidsort: position " INT64_FORMAT " is past the end", pos);
	}

	ExecStoreHeapTuple(braid_gather_tuple(&st->gather, pos), scanslot, false);
	st->scan_slot_full = true;
	if (node->ss.ps.ps_ProjInfo == NULL)
		return scanslot;
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = scanslot;
	return ExecProject(node->ss.ps.ps_ProjInfo);
}

/*
 * braid_end
 *		Shut down the child and release the sort.
 */
static void
braid_end(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;
	int			plan_node = node->ss.ps.plan->plan_node_id;

	/*
	 * Instrumented: a parallel worker leaves what it did for its leader's
	 * EXPLAIN (instr.c), which the leader's node then frees.
	 */
	if (node->ss.ps.instrument != NULL)
	{
		if (IsParallelWorker())
		{
			if (st->instr.sorts > 0)
			{
				BraidSortInstr instr;

				snapshot_instr(st, &instr);
				braid_instr_report(plan_node, &instr);
			}
		}
		else
			braid_instr_leader_end(plan_node);
	}
	braid_progress_end(&st->progress);

	release_spill(st);
	if (st->value_log)
		braid_vlog_reset(&st->vlog);
	else
		braid_gather_end(&st->gather);
	ExecEndNode(st->child);
}

/*
 * braid_rescan
 *		Rewind over the sorted rows, or rebuild if the input changed.
 */
static void
braid_rescan(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;

	/* ExecReScan only passes changed parameters to lefttree/righttree */
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(st->child, node->ss.ps.chgParam);

	if (!st->built)
		return;

	/*
	 * As nodeSort.c: rewind only when the node was set up for it (rewind,
	 * backward or mark).  Otherwise the input is read again: it may differ
	 * even with unchanged parameters (volatile quals, nextval() ...), e.g.
	 * under a correlated subplan, which rescans without EXEC_FLAG_REWIND.
	 */
	if (st->child->chgParam != NULL || st->merger != NULL || !st->random_access)
	{
		reset_sort(st);
		/* a child with changed parameters is rescanned by ExecProcNode */
		if (st->child->chgParam == NULL)
			ExecReScan(st->child);
	}
	else
	{
		st->current = 0;
		st->eof_reached = false;
		st->mark_current = 0;
		st->mark_eof = false;
	}
}

/* braid_mark: remember the current position. */
static void
braid_mark(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;

	st->mark_current = st->current;
	st->mark_eof = st->eof_reached;
}

/* braid_restore: return to the marked position. */
static void
braid_restore(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;

	st->current = st->mark_current;
	st->eof_reached = st->mark_eof;
}

/*
 * braid_explain_node
 *		ExplainCustomScan: what this process's node did, with its parallel
 *		workers' figures (explain.c).
 */
static void
braid_explain_node(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BraidSortInstr instr;

	snapshot_instr((BraidSortState *) node, &instr);
	braid_explain(node, ancestors, &instr, es);
}
