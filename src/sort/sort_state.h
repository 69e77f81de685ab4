/*-------------------------------------------------------------------------
 *
 * sort_state.h
 *	  The BraidSort node's state, one part per stage, and the stages'
 *	  interfaces.
 *
 * A sort runs through stages in the order its data flows, each in its own
 * file and owning one part of BraidSortState; a stage calls only the
 * stages after it, and the modules below them:
 *
 *	sort_node.c		the CustomScan callbacks (begin, exec, end, rescan,
 *					mark/restore); drives the stages; owns "cfg" and "pos"
 *	sort_adaptive.c	ADAPTIVE: a sort the planner expected to be small runs
 *					as PostgreSQL's tuplesort first, and hands its rows to
 *					BUILD if its input outgrows work_mem; owns "adapt"
 *	sort_build.c	BUILD: every row of the input becomes an entry, handed
 *					to the sort's strategy; owns "build"
 *	sort_wlimit.c	a STRATEGY: the write-limited modes (hybrid, segment,
 *					lazy), which keep the last budget-full in memory and
 *					leave rows to selection passes; owns "wl"
 *	sort_select.c	  their selection passes, which feed the final merge a
 *					  run never written; owns "sel"
 *	sort_runs.c		RUNS and the MergePass strategy: the IndexMap, when
 *					full, sorted and written as a run, or made into runs on
 *					a helper while the build goes on (the pipe); owns
 *					"runset"
 *	sort_merge.c	MERGE: fan-in, intermediate passes, the final merge
 *					(streamed batch by batch, or written as refs); owns
 *					"merge"
 *	sort_shared.c	SHARED: a sort every process of a Gather builds and
 *					one sorts or merges, between RUNS and MERGE; owns
 *					"shared" and "shared_entries"
 *	sort_gather.c	GATHER: the refs after a OnePass sort (compacted or
 *					offloaded), gather batches, merge-ahead; owns "out"
 *	sort_vlog.c		VALUE LOG: rows read back from the value log, a window
 *					at a time; owns "win"
 *	sort_explain.c	EXPLAIN of the node
 *
 * and below them, used by several stages:
 *
 *	sort_input.c	reading the child: rows, their refs, their keys encoded;
 *					owns "input"
 *	sort_map.c		the IndexMap in memory: its entries, the full keys kept
 *					aside (sort_overflow.c) and the budget they share, the
 *					in-place sort; owns "map"
 *	runfile.c		runs written: on the device, or kept in memory
 *	runmerge.c		runs read back, and their merge (a loser tree)
 *	tid_gather.c	rows refetched by TID, a batch at a time
 *
 * The strategy (BraidSortStrategy) is chosen when the node's path is set
 * up: BUILD hands it each entry, and the final merge takes the runs it adds
 * beside those on the device, as tuplesortvariants.c plugs into
 * tuplesort.c.  Configuration read from the plan ("cfg") is set once by
 * sort_node.c and read by every stage.  Instrumentation ("instr") and
 * progress ("mon") are counters every stage adds to.  docs/design.md
 * section 3 lists the hand-overs between parts.
 *
 * src/sort/sort_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SORT_STATE_H
#define BRAID_SORT_STATE_H

#include "postgres.h"

#include "access/parallel.h"
#include "nodes/execnodes.h"
#include "storage/shm_toc.h"
#include "portability/instr_time.h"
#include "utils/tuplesort.h"

#include "core/indexmap.h"
#include "core/wlimit.h"
#include "io/progress.h"
#include "io/valuelog.h"
#include "monitor/instr.h"
#include "plan/keys.h"
#include "plan/plandata.h"
#include "sort/runfile.h"
#include "sort/runmerge.h"
#include "sort/sort_overflow.h"
#include "sort/tid_gather.h"

/* Most rows in one gather batch (keeps batch arrays within 32-bit indexes). */
#define BRAID_MAX_BATCH_ROWS (1 << 22)

/* Smallest gather arena: room for a few of the largest heap tuples. */
#define BRAID_MIN_ARENA ((size_t) 4 * BLCKSZ)

/* Halves smaller than this are not worth a helper (braid_pipe_begin). */
#define BRAID_PIPE_MIN_ENTRIES 1024

/* Value log rows read back from the device per read grant. */
#define BRAID_LOG_WINDOW_ROWS 4096

typedef struct BraidSortState BraidSortState;
typedef struct BraidSortShared BraidSortShared; /* sort_shared.c */

/*
 * BraidSortStrategy
 *		What the build does with each row's entry, and what the final merge
 *		takes besides the runs on the device: MergePass (sort_runs.c) or a
 *		write-limited mode (sort_wlimit.c), chosen when the node's path is
 *		set up.
 */
typedef struct BraidSortStrategy
{
	/*
	 * Before the build (rows_carried: rows an adaptive sort that switched
	 * hands over first); returns how many rows at the input's head make no
	 * entry (their keys are not encoded; put gets NULL for them).
	 */
	int64		(*start_build) (BraidSortState *st, int64 rows_carried);

	/* one row's entry: its key (NULL for a row that makes none) and ref */
	void		(*put) (BraidSortState *st, const uint8 *key, size_t len,
						size_t sortable, uint64 ref);

	/*
	 * After the build (rows_built rows): true if the final merge runs
	 * (MERGE), false for a OnePass sort of the IndexMap as it is.  Sets
	 * instr.wl_mode to the mode that ran.
	 */
	bool		(*finish_build) (BraidSortState *st, int64 rows_built);

	/*
	 * The runs the final merge takes besides those on the device (at most
	 * BRAID_MAX_STRATEGY_RUNS, returned; the merge owns them from then on),
	 * with their rows and the memory they hold while the rows are gathered.
	 */
	int			(*final_runs) (BraidSortState *st, BraidRun **runs, int64 *rows,
							   size_t *held_bytes);

	/* free what it holds and remove its files */
	void		(*release) (BraidSortState *st);
} BraidSortStrategy;

#define BRAID_MAX_STRATEGY_RUNS 2

/*
 * A run sorted and written by a helper thread while the build goes on: the
 * IndexMap's two halves take turns, one filling while the other's run is
 * made (braid_pipe_swap).  The helper sorts the half and sizes its run,
 * the backend creates the run's file and takes the device's write grant,
 * the helper codes the run into the file, the backend finishes it.
 */
typedef enum BraidPipeStage
{
	PIPE_IDLE,
	PIPE_SORTING,				/* sorting and sizing, on the helper */
	PIPE_CODING					/* coding into the file, on the helper */
} BraidPipeStage;

typedef struct BraidPipe
{
	BraidSortState *st;
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

/* What the plan says, set up once at ExecInit (sort_node.c). */
typedef struct BraidSortConfig
{
	bool		value_log;		/* BRAID_MODE_VALUE_LOG */
	AttrNumber *keycols;		/* input column of each key (value log), or
								 * table column (heap TID, unprojected scan),
								 * else NULL */
	int			nkeys;
	BraidKeyColumn *keys;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nullsfirst;
	uint32		keylen;
	uint32		stride;
	bool		may_truncate;	/* full keys may be kept aside (variable-width
								 * or collated keys) */
	bool		collated;		/* a key is compared by its collation */
	uint32		radix_keylen;	/* prefix bytes the radix sort orders by:
								 * keylen, or with a collated key keylen - 8,
								 * the last 8 bytes locating the full key */
	int			collated_key;	/* the first one */
	double		est_rows;		/* the plan's, or after an adaptive node's
								 * switch twice the rows it read */
	int			threads;		/* this process's sort threads: its share of
								 * the CPUs (braid_sort_thread_count) */
	int			base_threads;	/* ... as set up: a shared sort's emitter
								 * takes every CPU's once the others have
								 * ended, and a rebuild starts again from
								 * these */
	bool		random_access;
	size_t		budget;
	double		segment_share;	/* segment: share of the input through runs */
	double		key_bytes;		/* the plan's estimate of a row's whole
								 * encoded key (0: none), for the size of a
								 * run record */
	double		key_memory;		/* the plan's bytes of full key kept aside per
								 * entry (the write-limited model's) */
	bool		rank_collated;	/* rank collated keys' strings where they fit
								 * (sort_map.c; the plan's cost model) */
	double		select_collated_ns; /* the plan's extra cost of a selection
									 * pass's candidate (lazy's rule) */
	int			sort_width;		/* the planner's bytes of a row PostgreSQL's
								 * Sort would hold (braidsort.stats) */
} BraidSortConfig;

/* The child's rows as the build and the passes read them (sort_input.c). */
typedef struct BraidSortInput
{
	BraidKeyBuffer keybuf;		/* the last row's key, encoded */
	Datum	   *keyvals;		/* key columns of one row (keycols) */
	bool	   *keynulls;
} BraidSortInput;

/*
 * The IndexMap being filled, with the full keys kept aside, within the
 * budget they share (sort_map.c).
 */
typedef struct BraidIndexMap
{
	uint8	   *entries;
	size_t		nentries;
	size_t		capacity;
	bool		any_truncated;
	uint32		longest_key;	/* bytes of the longest key (the merge's
								 * readers rebuild whole keys) */
	BraidOverflow ovf;
	bool		keys_split;		/* long keys came first: the entries keep to
								 * split_cap, their full keys the rest of the
								 * budget */
	size_t		split_cap;		/* ... entries: braid_map_split_entries */
	double		entries_seen;	/* entries made or offered so far ... */
	double		key_memory_seen;	/* ... and the memory of their full keys
									 * kept aside (the split's average) */
	double		recent_seen;	/* the same over the last entries only (both
								 * halved as they pass a window) ... */
	double		recent_key_memory;	/* ... which a change in the keys moves at
									 * once */
} BraidIndexMap;

/* BUILD: the rows taken into the sort (sort_build.c). */
typedef struct BraidBuild
{
	int64		rows_built;		/* rows taken from the input */
	int64		keyless_rows;	/* rows at its head that make no entry */
	uint64		tuple_bytes;	/* bytes of the rows sorted (statistics) */
} BraidBuild;

/* RUNS: the runs written so far (sort_runs.c). */
typedef struct BraidRunSet
{
	List	   *runs;			/* BraidRun *, waiting to be merged */
	bool		pipe_allowed;	/* runs may be made during the build */
	BraidPipe	pipe;
	int			half_runs;		/* runs of half the IndexMap (pipe) */
	int64		entries_put;	/* entries the build handed over */
	double		spill_ms;		/* sorting and writing runs during the build */
} BraidRunSet;

/* MERGE: the final merge (sort_merge.c). */
typedef struct BraidMergeStage
{
	BraidMerger *merger;		/* streaming final merge, or NULL */
	BraidRun  **runs;			/* its runs */
	int			nruns;
	int64		nrows;			/* rows the final merge returns */
	BraidRun   *refs_run;		/* the merged refs, written out (random
								 * access), until the gather takes them */
	size_t		held_bytes;		/* memory the strategy's runs hold */
} BraidMergeStage;

/*
 * The next batch of a streaming final merge, taken by a helper thread while
 * the current batch is gathered (sort_gather.c): the batch's refs so far
 * and their arena bytes, closed at the same place as
 * next_stream_batch (sort_gather.c) would close it.
 */
typedef struct BraidMergeAhead
{
	uint64	   *refs;
	int			cap;
	int			n;
	size_t		bytes;
	bool		closed;			/* full, or the merge is exhausted */
} BraidMergeAhead;

/* GATHER: the sorted refs and the batches of rows (sort_gather.c). */
typedef struct BraidOutput
{
	int64		nrows;			/* rows sorted, -1 if not known yet */
	uint64	   *refs;			/* after the sort: the entries' refs, in place */
	BraidRun   *refs_run;		/* merged refs, when positions must be random,
								 * or a OnePass sort's offloaded refs */
	bool		refs_offloaded; /* OnePass refs on the device */
	uint64	   *stream_refs;	/* the batch taken from the merger */
	int			stream_refs_cap;
	size_t		batch_bytes;	/* arena bytes of a batch */
	double		row_bytes;		/* a gathered row's, on average (a streaming
								 * merge's batches are sized again as its
								 * memory runs are read) */
	size_t		released_unsized;	/* memory run bytes given back since the
									 * batches were last sized */

	/* batch b covers positions [batch_start[b], batch_start[b + 1]) */
	int64	   *batch_start;
	int			nbatches;		/* batches whose end is known */
	int			batch_cap;
	bool		batches_complete;
	BraidGather gather;

	bool		ahead_on;		/* a helper merges the next batch meanwhile */
	BraidMergeAhead ahead;
} BraidOutput;

/* VALUE LOG: the window of rows read back from the device (sort_vlog.c). */
typedef struct BraidLogWindow
{
	TupleTableSlot *slot;		/* the row being emitted */
	int64		first;
	int			n;
	MinimalTuple *tuple;
	uint32	   *len;			/* while loading: t_len, and packed or not */
	size_t	   *off;
	char	   *arena;
	size_t		cap;
} BraidLogWindow;

/* The node's output position, as in tuplesort (sort_node.c). */
typedef struct BraidPosition
{
	bool		built;			/* the input has been sorted */
	int64		current;		/* index after the last row returned */
	bool		eof_reached;
	int64		mark_current;
	bool		mark_eof;
	bool		scan_slot_full; /* heap mode: a refetched tuple is in the slot */
} BraidPosition;

/* A file of entries written once by a lazy sort: one of its segments. */
typedef struct BraidEntryLog
{
	List	   *segs;			/* BraidSpillFile * */
	int64		entries;
} BraidEntryLog;

/*
 * WRITE-LIMITED: the strategy of a hybrid, segment or lazy sort
 * (sort_wlimit.c).
 */
typedef struct BraidWlimit
{
	BraidWlMode mode;			/* running (MERGEPASS: none of these) */
	double		intensity;		/* braidsort.write_intensity as planned */
	BraidWlInput model;			/* the cost model's input, for lazy's rule */

	/* hybrid, segment: the last budget-full stays in memory */
	int64		flush_at;		/* entries added before the flush, or -1 */
	int64		entries_added;
	double		entries_expected;	/* entries the estimate sends through runs
									 * (the rows after a segment's head) */
	double		overflow_share; /* of the IndexMap the next overflow past the
								 * estimate writes (0: none yet) */
	BraidRun   *memrun;			/* the last IndexMap, coded in memory */
	size_t		held_bytes;		/* memory the mode holds while gathering */

	/* segment, lazy: selection passes */
	int64		head_rows;		/* rows at the input's head left to passes */
	bool		selecting;		/* entries offered go to a selection */
	bool		reread_heap;	/* passes rescan the child (else value log) */
	BraidRun   *vrun;			/* the virtual run the passes feed */
} BraidWlimit;

/*
 * The selection passes of a segment or lazy sort (sort_select.c).  The
 * candidates of a pass live in the IndexMap ("map"), which the pass reuses.
 */
typedef struct BraidSelection
{
	uint8	   *scratch;		/* a candidate's prefix (stride bytes) */
	size_t		cap;			/* candidates a pass keeps at most */
	size_t		room;			/* bytes for them and their full keys */
	bool		keys_split;		/* long keys: candidates keep to split_cap */
	size_t		split_cap;		/* ... (braid_map_split_entries), their keys
								 * the rest */
	int64		seg_rows;		/* rows in the selection segment */
	uint64		seg_hash;		/* their refs, summed (braid_wl_ref_hash): a
								 * pass must see the same rows */
	int64		emitted;		/* of those, emitted so far */
	int			passes;			/* selection passes made */
	bool		has_bound;		/* entries up to bound were emitted */
	uint8	   *bound;			/* last emitted entry: prefix and ref */
	uint8	   *bound_key;		/* ... its full key, or NULL */
	uint32		bound_len;
	size_t		bound_cap;
	bool		has_cutoff;		/* candidates from cutoff on are not kept */
	uint8	   *cutoff;
	uint8	   *cutoff_key;
	uint32		cutoff_len;
	size_t		cutoff_cap;

	/* lazy: the remainder written once */
	bool		materializing;	/* the current pass writes the entry log */
	bool		materialized;	/* later passes read it */
	BraidEntryLog elog;
	BraidSpillFile *elog_cur;	/* segment being written */
} BraidSelection;

/*
 * ADAPTIVE: PostgreSQL's in-memory sort, tried first by a node the planner
 * took only because its row estimate was small (sort_adaptive.c).
 */
typedef struct BraidAdaptive
{
	bool		on;				/* the plan asked for it */
	Tuplesortstate *ts;			/* the tuplesort, while it lives */
	bool		serving;		/* the rows come from it: it stayed */
	bool		carrying;		/* switched: BUILD takes its rows first */
	TupleTableSlot *slot;		/* a row read back from it */
	int64		rows_read;		/* rows of the child it took */
	uint64		tuple_bytes;	/* heap TID form: their heap tuples' bytes */
	uint64		key_bytes;		/* their keys' bytes, decompressed (about
								 * their encodings) */
	size_t		switch_bytes;	/* its memory past which it switches */
	int			processes;		/* processes running the node (the plan's) */
	bool		decline_said;	/* a switch declined was reported at
								 * braidsort.log_declines' level: a rescan
								 * says it again only at DEBUG1 */

	AttrNumber *sortcols;		/* the keys' columns in the sorted rows */
	bool		passthrough;	/* a sorted row is the output row as it is */

	/*
	 * Heap TID form: the tuplesort sorts the scan's heap tuples, each with
	 * its TID in its minimal tuple's padding (so that a switch can make their
	 * IndexMap entries); the output is projected from them.
	 */
	ProjectionInfo *proj;		/* the node's target list over a sorted row */
	TupleTableSlot *put_slot;	/* a heap tuple with its TID, put into it */
} BraidAdaptive;

/* braidsort.progress, as every stage updates it. */
typedef struct BraidSortMonitor
{
	BraidProgress progress;
	BraidProgressPhase phase;	/* last shown */
	int64		batches_before; /* gather batches before this sort */
} BraidSortMonitor;

/*
 * BraidSortPath
 *		What braidsort's own path holds, stage by stage: allocated when the
 *		path is set up (begin_path), at the node's start or when an adaptive
 *		node switches -- which most, short queries' sorts of a few rows,
 *		never do, and which then allocate and clear none of it.
 */
typedef struct BraidSortPath
{
	BraidIndexMap map;
	BraidBuild	build;
	BraidRunSet runset;
	BraidWlimit wl;
	BraidSelection sel;
	BraidMergeStage merge;
	BraidOutput out;
	BraidValueLog vlog;
} BraidSortPath;

struct BraidSortState
{
	CustomScanState css;
	PlanState  *child;
	Relation	rel;			/* heap TID mode: the table refetched from */
	bool		path_ready;		/* braidsort's path is set up (begin_path):
								 * from the start, or once an adaptive node
								 * switches */
	MemoryContext sortcxt;		/* IndexMap, overflow, runs: per sort */
	MemoryContext gathercxt;	/* gather buffers: per node */
	const BraidSortStrategy *strategy;	/* MergePass or write-limited */

	BraidSortConfig cfg;
	BraidSortInput input;
	BraidSortPath *path;		/* braidsort's path, from begin_path; NULL
								 * before (an adaptive node that has not
								 * switched) */
	BraidLogWindow win;
	BraidPosition pos;
	BraidAdaptive adapt;

	/*
	 * instrumentation: the counters are kept in place, the rest is filled in
	 * by a snapshot for EXPLAIN
	 */
	BraidSortInstr instr;
	BraidSortMonitor mon;

	/*
	 * SHARED: a participant of a sort built by every process of a Gather
	 * (sort_shared.c), its dynamic shared memory; NULL for any other sort
	 */
	BraidSortShared *shared;
	BraidSpillFile *shared_entries; /* its IndexMap's entries, unsorted, for
									 * the emitter to sort with its own, until
									 * handed over (sort_shared.c) */
};

/* braid_elapsed_ms: milliseconds since "start". */
static inline double
braid_elapsed_ms(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* braid_sort_set_phase: show the node in another phase (braidsort.progress). */
static inline void
braid_sort_set_phase(BraidSortState *st, BraidProgressPhase phase)
{
	if (st->mon.phase == phase)
		return;
	st->mon.phase = phase;
	braid_progress_set_phase(&st->mon.progress, phase);
}

/* braid_wl_ref_hash: a ref mixed, for an order-independent sum of refs. */
static inline uint64
braid_wl_ref_hash(uint64 ref)
{
	ref = (ref & ~BRAID_REF_TRUNCATED) * UINT64CONST(0x9E3779B97F4A7C15);
	return ref ^ (ref >> 29);
}

/* sort_input.c */
extern void braid_input_begin(BraidSortState *st);
extern SeqScanState *braid_input_fast_seqscan(BraidSortState *st);
extern TupleTableSlot *braid_input_next(BraidSortState *st, SeqScanState *fast,
										bool started, int64 *fast_rows);
extern size_t braid_input_heap_row(BraidSortState *st, TupleTableSlot *slot, bool want_key,
								   uint64 *ref, uint32 *tuple_len);
extern size_t braid_input_slot_key(BraidSortState *st, TupleTableSlot *slot);
extern size_t braid_input_cols_key(BraidSortState *st, TupleTableSlot *slot,
								   const AttrNumber *cols);

/* sort_map.c */
extern void braid_map_reset(BraidSortState *st);
extern size_t braid_map_budget(const BraidSortState *st);
extern void braid_map_note_peak(BraidSortState *st);
extern void braid_map_note_key(BraidSortState *st, size_t len, bool aside);
extern size_t braid_map_split_entries(const BraidSortState *st, size_t room);
extern void braid_map_split_budget(BraidSortState *st, double left, bool whole);
extern void braid_map_set_key_limit(BraidSortState *st, size_t limit);
extern bool braid_map_grow(BraidSortState *st);
extern bool braid_map_reserve(BraidSortState *st, size_t want);
extern void braid_map_resize(BraidSortState *st, size_t cap);
extern void braid_map_alloc(BraidSortState *st, size_t cap);
extern size_t braid_map_key_bytes_after(const BraidSortState *st, size_t len);
extern uint8 *braid_map_place(BraidSortState *st, const uint8 *key, size_t len,
							  size_t sortable, uint64 ref);
extern void braid_map_sort(BraidSortState *st, bool rank);
extern void braid_map_clear(BraidSortState *st);
extern void braid_map_keep_first(BraidSortState *st, size_t n);
extern void braid_map_free(BraidSortState *st);
extern uint8 *braid_map_halve(BraidSortState *st, size_t *full);
extern void braid_map_next_half(BraidSortState *st, uint8 *half);
extern void braid_map_whole(BraidSortState *st, uint8 *base, size_t full);
extern uint64 *braid_map_take_refs(BraidSortState *st, size_t *bytes);
extern const uint8 *braid_map_full_key(const BraidSortState *st, const uint8 *entry,
									   uint32 *len);
extern int	braid_map_tiebreak(const uint8 *a, const uint8 *b, void *arg);
extern int	braid_map_collated_compare(const uint8 *a, uint32 la,
									   const uint8 *b, uint32 lb, void *arg,
									   void *memo);
extern const uint8 *braid_map_entry_key_of(const uint8 *entry, uint32 *len,
										   uint64 *ref, void *arg);

/* sort_runs.c */
extern const BraidSortStrategy braid_mergepass_strategy;
extern int	braid_runs_fanin(const BraidSortState *st);
extern void braid_runs_start(BraidSortState *st, bool pipe_allowed);
extern void braid_runs_put(BraidSortState *st, const uint8 *key, size_t len,
						   size_t sortable, uint64 ref);
extern bool braid_runs_finish(BraidSortState *st);
extern void braid_spill_run(BraidSortState *st);
extern bool braid_spill_run_part(BraidSortState *st, size_t n);
extern void braid_pipe_allow(BraidSortState *st, bool allowed);
extern void braid_pipe_end(BraidSortState *st);
extern void braid_pipe_stop(BraidSortState *st);
extern List *braid_runs_take(BraidSortState *st, int *half_runs);
extern void braid_runs_release(BraidSortState *st);
extern void braid_runs_reset(BraidSortState *st);

/* sort_select.c */
extern void braid_select_begin(BraidSortState *st);
extern void braid_select_start(BraidSortState *st, size_t cap, size_t room);
extern void braid_select_offer(BraidSortState *st, const uint8 *key, size_t len,
							   size_t sortable, uint64 ref);
extern void braid_select_note_row(BraidSortState *st, uint64 ref);
extern void braid_select_set_rows(BraidSortState *st, int64 rows);
extern void braid_select_end_first_pass(BraidSortState *st, BraidRun *run, size_t cap,
										size_t room);
extern bool braid_select_pass(BraidSortState *st, BraidRun *run, bool reread_heap,
							  bool materialize);
extern void braid_select_release(BraidSortState *st);

/* sort_wlimit.c */
extern const BraidSortStrategy *braid_wl_strategy(BraidSortState *st,
												  const BraidSortPlanData *data);

/* sort_build.c */
extern void braid_build_begin(BraidSortState *st, int64 rows_carried);
extern bool braid_build_wants_key(const BraidSortState *st);
extern void braid_build_row(BraidSortState *st, uint64 ref, uint32 tuple_len, bool keyed,
							size_t len);
extern void braid_build_log_row(BraidSortState *st, TupleTableSlot *slot);
extern int64 braid_build_child(BraidSortState *st, SeqScanState *fast);
extern void braid_build_end(BraidSortState *st);

/* sort_merge.c */
extern void braid_merge_runs_down(BraidSortState *st, int max_runs);
extern void braid_merge_all_runs(BraidSortState *st);
extern BraidRun *braid_merge_take_refs(BraidSortState *st);
extern void braid_merge_release(BraidSortState *st);
extern void braid_merge_reset(BraidSortState *st);

/* sort_gather.c */
extern void braid_batches_begin(BraidSortState *st, bool strip);
extern void braid_batches_clear(BraidSortState *st);
extern void braid_batches_end(BraidSortState *st);
extern void braid_batches_after_onepass(BraidSortState *st);
extern void braid_batches_after_merge(BraidSortState *st);
extern void braid_batches_start(BraidSortState *st);
extern bool braid_batches_position(BraidSortState *st, int64 pos);
extern void braid_batches_release(BraidSortState *st);
extern void braid_batches_reset(BraidSortState *st);

/* sort_vlog.c */
extern TupleTableSlot *braid_vlog_emit(BraidSortState *st, int64 pos);
extern void braid_vlog_window_reset(BraidSortState *st);

/* sort_shared.c */
extern Size braid_shared_estimate(CustomScanState *node, ParallelContext *pcxt);
extern void braid_shared_init_dsm(CustomScanState *node, ParallelContext *pcxt,
								  void *coordinate);
extern void braid_shared_reinit_dsm(CustomScanState *node, ParallelContext *pcxt,
									void *coordinate);
extern void braid_shared_init_worker(CustomScanState *node, shm_toc *toc,
									 void *coordinate);
extern bool braid_shared_attach(BraidSortState *st);
extern bool braid_shared_finish(BraidSortState *st, bool built, bool *spilled);
extern void braid_shared_release(BraidSortState *st);

/* sort_adaptive.c */
extern void braid_adaptive_begin(BraidSortState *st, const BraidSortPlanData *data,
								 EState *estate);
extern bool braid_adaptive_sort(BraidSortState *st);
extern void braid_adaptive_carry(BraidSortState *st);
extern TupleTableSlot *braid_adaptive_next(BraidSortState *st, ScanDirection dir);
extern void braid_adaptive_rescan(BraidSortState *st);
extern void braid_adaptive_mark(BraidSortState *st);
extern void braid_adaptive_restore(BraidSortState *st);
extern void braid_adaptive_end(BraidSortState *st);

#endif							/* BRAID_SORT_STATE_H */
