/*-------------------------------------------------------------------------
 *
 * sort_state.h
 *	  The BraidSort node's state, one part per stage, and the stages'
 *	  interfaces.
 *
 * A sort runs through stages in the order its data flows, each in its own
 * file and owning one part of BraidSortState:
 *
 *	sort_node.c		the CustomScan callbacks (begin, exec, end, rescan,
 *					mark/restore); drives the stages; owns "pos"
 *	sort_adaptive.c	ADAPTIVE: a sort the planner expected to be small runs
 *					as PostgreSQL's tuplesort first, and hands its rows to
 *					BUILD if its input outgrows work_mem; owns "adapt"
 *	sort_build.c	BUILD: scan the child, encode keys, add IndexMap
 *					entries, grow the IndexMap; owns "build"
 *	sort_keys.c		full keys kept aside (overflow store) and the
 *					comparisons that read them; part of "build"
 *	sort_runs.c		RUNS: sort the IndexMap, write it as a run, make runs on
 *					a helper while the build goes on (the pipe); owns "runset"
 *	sort_merge.c	MERGE: fan-in, intermediate passes, the final merge
 *					(streamed batch by batch, or written as refs); owns "merge"
 *	sort_wlimit.c	WRITE-LIMITED: the last budget-full kept in memory
 *					(hybrid, segment) and the selection passes (segment,
 *					lazy) that feed the final merge a run never written;
 *					owns "wl"
 *	sort_gather.c	GATHER: the refs after a OnePass sort (compacted or
 *					offloaded), gather batches, merge-ahead; owns "out"
 *	sort_vlog.c		VALUE LOG: rows read back from the value log, a window
 *					at a time; owns "win"
 *	explain.c		EXPLAIN of the node
 *
 * Configuration read from the plan ("cfg") is set once by sort_node.c and
 * read by every stage.  Instrumentation ("instr") and progress ("mon") are
 * shared counters every stage adds to.
 *
 * The write-limited sorts (sort_wlimit.c) sit between RUNS and MERGE: they
 * decide what the build writes, and hand the final merge runs that live in
 * memory or are made on demand (see docs/design.md).
 *
 * src/sort/sort_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SORT_STATE_H
#define BRAID_SORT_STATE_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "portability/instr_time.h"
#include "utils/tuplesort.h"

#include "sort/tid_gather.h"
#include "core/indexmap.h"
#include "monitor/instr.h"
#include "plan/keys.h"
#include "sort/runfile.h"
#include "plan/plandata.h"
#include "io/progress.h"
#include "io/valuelog.h"
#include "core/wlimit.h"

/* Most rows in one gather batch (keeps batch arrays within 32-bit indexes). */
#define BRAID_MAX_BATCH_ROWS (1 << 22)

/* Smallest gather arena: room for a few of the largest heap tuples. */
#define BRAID_MIN_ARENA ((size_t) 4 * BLCKSZ)

/* Halves smaller than this are not worth a helper (braid_pipe_begin). */
#define BRAID_PIPE_MIN_ENTRIES 1024

/* Value log rows read back from the device per read grant. */
#define BRAID_LOG_WINDOW_ROWS 4096

/*
 * Full encodings of keys longer than the entry prefix, found by TID
 * (sort_keys.c).  Open addressing; slot_tid 0 means empty (stored TIDs are
 * offset by one).
 */
typedef struct BraidOverflow
{
	MemoryContext cxt;			/* where it allocates (the sort's) */
	uint64	   *slot_tid;
	uint64	   *slot_off;
	uint32	   *slot_len;
	size_t		nslots;			/* power of two, or 0 */
	size_t		nused;
	uint8	   *arena;
	size_t		arena_used;
	size_t		arena_cap;
	size_t		limit;			/* bytes (slots and arena) its growth stops
								 * at while keys still fit, or 0: none */
} BraidOverflow;

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

/* What the plan says, set up once at ExecInit (sort_node.c). */
typedef struct BraidSortConfig
{
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
	int			collated_key;	/* the first one */
	double		est_rows;
	int			threads;		/* this process's sort threads: its share of
								 * the CPUs (braid_sort_thread_count) */
	bool		random_access;
	size_t		budget;
	double		segment_share;	/* segment: share of the input through runs */
	double		key_memory;		/* the plan's bytes of full key kept aside
								 * per entry (the write-limited model's) */
	bool		rank_collated;	/* rank collated keys' strings where they fit
								 * (sort_keys.c; the plan's cost model) */
	double		select_collated_ns; /* the plan's extra cost of a selection
									 * pass's candidate (lazy's rule) */
	int			sort_width;		/* the planner's bytes of a row PostgreSQL's
								 * Sort would hold (braidsort.stats) */
} BraidSortConfig;

/* BUILD: the IndexMap being filled (sort_build.c, sort_keys.c). */
typedef struct BraidBuild
{
	BraidKeyBuffer keybuf;
	Datum	   *keyvals;		/* key columns of one row (keycols) */
	bool	   *keynulls;
	uint8	   *entries;
	size_t		nentries;
	size_t		capacity;
	bool		any_truncated;
	uint32		longest_key;	/* bytes of the longest key (the merge's
								 * readers rebuild whole keys) */
	BraidOverflow ovf;
	bool		keys_split;		/* long keys came first: the entries keep
								 * to split_cap, their full keys the rest
								 * of the budget */
	size_t		split_cap;		/* ... entries: braid_split_entries */
	double		entries_seen;	/* entries made or offered so far ... */
	double		key_memory_seen;	/* ... and the memory of their full keys
									 * kept aside (the split's average) */
	int64		rows_built;		/* rows taken from the child */
	uint64		tuple_bytes;	/* bytes of the rows sorted (statistics) */
} BraidBuild;

/* RUNS: the runs written so far (sort_runs.c). */
typedef struct BraidRunSet
{
	List	   *runs;			/* BraidRun *, waiting to be merged */
	bool		pipe_allowed;	/* runs may be made during the build */
	BraidPipe	pipe;
	int			half_runs;		/* runs of half the IndexMap (pipe) */
	double		spill_ms;		/* sorting and writing runs during the build */
} BraidRunSet;

/* MERGE: the final merge, while it streams (sort_merge.c). */
typedef struct BraidMergeStage
{
	BraidMerger *merger;		/* streaming final merge, or NULL */
	BraidRun  **runs;			/* its runs */
	int			nruns;
	bool		ahead_on;		/* a helper merges the next batch meanwhile */
	BraidMergeAhead ahead;
} BraidMergeStage;

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

	/* batch b covers positions [batch_start[b], batch_start[b + 1]) */
	int64	   *batch_start;
	int			nbatches;		/* batches whose end is known */
	int			batch_cap;
	bool		batches_complete;
	BraidGather gather;
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
 * WRITE-LIMITED: the state of a hybrid, segment or lazy sort
 * (sort_wlimit.c).  The candidates of a selection pass live in "build"
 * (its IndexMap and overflow store), which the pass reuses.
 */
typedef struct BraidWlimit
{
	BraidWlMode mode;			/* running (MERGEPASS: none of these) */
	double		intensity;		/* braidsort.write_intensity as planned */
	BraidWlInput model;			/* the cost model's input, for lazy's rule */
	uint8	   *scratch;		/* a candidate's prefix (stride bytes) */

	/* hybrid, segment: the last budget-full stays in memory */
	int64		flush_at;		/* entries added before the flush, or -1 */
	int64		entries_added;
	BraidRun   *memrun;			/* the last IndexMap, coded in memory */
	size_t		held_bytes;		/* memory the mode holds while gathering */

	/* segment, lazy: selection passes */
	int64		head_rows;		/* rows at the input's head left to passes */
	bool		selecting;		/* entries offered go to a selection */
	bool		reread_heap;	/* passes rescan the child (else value log) */
	BraidRun   *vrun;			/* the virtual run the passes feed */
	size_t		cap;			/* candidates a pass keeps at most */
	size_t		room;			/* bytes for them and their full keys */
	bool		keys_split;		/* long keys: candidates keep to split_cap */
	size_t		split_cap;		/* ... (braid_split_entries), their keys
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
	int64		pass_rows;		/* rows the current pass has seen */

	/* lazy: the remainder written once */
	bool		materializing;	/* the current pass writes the entry log */
	bool		materialized;	/* later passes read it */
	BraidEntryLog elog;
	BraidSpillFile *elog_cur;	/* segment being written */
} BraidWlimit;

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

	AttrNumber *sortcols;		/* the keys' columns in the sorted rows */
	bool		passthrough;	/* a sorted row is the output row as it is */

	/*
	 * Heap TID form: the tuplesort sorts the scan's heap tuples, each with
	 * its TID in its minimal tuple's padding (so that a switch can make
	 * their IndexMap entries); the output is projected from them.
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

typedef struct BraidSortState
{
	CustomScanState css;
	PlanState  *child;
	Relation	rel;			/* heap TID mode: the table refetched from */
	bool		path_ready;		/* braidsort's path is set up (begin_path):
								 * from the start, or once an adaptive node
								 * switches */
	MemoryContext sortcxt;		/* IndexMap, overflow, runs: per sort */
	MemoryContext gathercxt;	/* gather buffers: per node */

	BraidSortConfig cfg;
	BraidBuild	build;
	BraidRunSet runset;
	BraidMergeStage merge;
	BraidWlimit wl;
	BraidOutput out;
	BraidValueLog vlog;
	BraidLogWindow win;
	BraidPosition pos;
	BraidAdaptive adapt;

	/*
	 * instrumentation: the counters are kept in place, the rest is filled
	 * in by a snapshot for EXPLAIN
	 */
	BraidSortInstr instr;
	BraidSortMonitor mon;
} BraidSortState;

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

/* sort_keys.c */
extern void braid_ovf_init(BraidOverflow *ovf, MemoryContext cxt);
extern size_t braid_ovf_bytes(const BraidOverflow *ovf);
extern size_t braid_ovf_bytes_after(const BraidOverflow *ovf, size_t len, bool with_slot);
extern void braid_ovf_put(BraidOverflow *ovf, uint64 ref, const uint8 *key, size_t len);
extern uint64 braid_ovf_append(BraidOverflow *ovf, const uint8 *key, size_t len);
extern void braid_ovf_free(BraidOverflow *ovf);
extern void braid_note_entry_key(BraidSortState *st, size_t len, bool aside);
extern size_t braid_split_entries(const BraidSortState *st, size_t room);
extern const uint8 *braid_sort_full_key(const BraidSortState *st, const uint8 *entry,
										 uint32 *len);
extern int	braid_sort_tiebreak(const uint8 *a, const uint8 *b, void *arg);
extern bool braid_sort_rank_prefixes(BraidSortState *st);
extern int	braid_sort_collated_compare(const uint8 *a, uint32 la,
										const uint8 *b, uint32 lb, void *arg);
extern const uint8 *braid_sort_entry_key_of(const uint8 *entry, uint32 *len,
											uint64 *ref, void *arg);

/* sort_build.c */
extern size_t braid_build_map_bytes(const BraidSortState *st);
extern void braid_build_note_peak(BraidSortState *st);
extern void braid_build_resize(BraidSortState *st, size_t cap);
extern void braid_build_split_limit(BraidSortState *st);
extern SeqScanState *braid_build_fast_seqscan(BraidSortState *st);
extern int64 braid_build_rows(BraidSortState *st, SeqScanState *fast);
extern uint8 *braid_build_place_entry(BraidSortState *st, const uint8 *key, size_t len,
									  size_t sortable, uint64 ref);
extern TupleTableSlot *braid_build_next_slot(BraidSortState *st, SeqScanState *fast,
											 bool started, int64 *fast_rows);
extern size_t braid_build_heap_row(BraidSortState *st, TupleTableSlot *slot, bool want_key,
								   uint64 *ref, uint32 *tuple_len);
extern size_t braid_build_slot_key(BraidSortState *st, TupleTableSlot *slot);

/* sort_runs.c */
extern void braid_sort_entries(BraidSortState *st, bool rank);
extern void braid_spill_run(BraidSortState *st);
extern void braid_pipe_begin(BraidSortState *st);
extern void braid_pipe_swap(BraidSortState *st);
extern void braid_pipe_step(BraidSortState *st, bool wait);
extern void braid_pipe_end(BraidSortState *st);
extern void braid_pipe_stop(BraidSortState *st);
extern void braid_runs_release(BraidSortState *st);

/* sort_merge.c */
extern int	braid_merge_fanin(const BraidSortState *st);
extern void braid_sort_read_scope(BraidSortState *st, BraidReadScope *scope);
extern void braid_merge_all_runs(BraidSortState *st);
extern void braid_merge_release(BraidSortState *st);

/* braid_wl_ref_hash: a ref mixed, for an order-independent sum of refs. */
static inline uint64
braid_wl_ref_hash(uint64 ref)
{
	ref = (ref & ~BRAID_REF_TRUNCATED) * UINT64CONST(0x9E3779B97F4A7C15);
	return ref ^ (ref >> 29);
}

/* sort_wlimit.c */
extern void braid_wl_begin(BraidSortState *st, const BraidSortPlanData *data);
extern void braid_wl_start_build(BraidSortState *st);
extern void braid_wl_flush_for_memory_run(BraidSortState *st);
extern void braid_wl_offer(BraidSortState *st, const uint8 *key, size_t len,
						   size_t sortable, uint64 ref);
extern bool braid_wl_after_build(BraidSortState *st);
extern void braid_wl_merge_runs(BraidSortState *st, BraidRun **memrun, BraidRun **vrun);
extern void braid_wl_release(BraidSortState *st);

/* sort_gather.c */
extern void braid_batches_compact_refs(BraidSortState *st);
extern void braid_batches_mergepass_arena(BraidSortState *st);
extern bool braid_batches_position(BraidSortState *st, int64 pos);
extern void braid_batches_release(BraidSortState *st);

/* sort_vlog.c */
extern TupleTableSlot *braid_vlog_emit(BraidSortState *st, int64 pos);

/* sort_adaptive.c */
extern void braid_adaptive_begin(BraidSortState *st, const BraidSortPlanData *data,
								 EState *estate);
extern bool braid_adaptive_sort(BraidSortState *st);
extern TupleTableSlot *braid_adaptive_carry(BraidSortState *st);
extern size_t braid_adaptive_carried_row(BraidSortState *st, TupleTableSlot *slot,
										 bool want_key, uint64 *ref, uint32 *tuple_len);
extern TupleTableSlot *braid_adaptive_next(BraidSortState *st, ScanDirection dir);
extern void braid_adaptive_rescan(BraidSortState *st);
extern void braid_adaptive_mark(BraidSortState *st);
extern void braid_adaptive_restore(BraidSortState *st);
extern void braid_adaptive_end(BraidSortState *st);

#endif							/* BRAID_SORT_STATE_H */
