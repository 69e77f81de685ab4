/*-------------------------------------------------------------------------
 *
 * join_state.h
 *	  BraidJoin's executor state, shared by its stages: the in-memory table
 *	  (join_table.c), rows, refs and fetches (join_rows.c), the first pass
 *	  and the rounds (join_pass.c), and the node (join_node.c).
 *
 * The design is described at the top of join_node.c.
 *
 * src/join/join_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_JOIN_STATE_H
#define BRAID_JOIN_STATE_H

#include "postgres.h"

#include "access/parallel.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "portability/instr_time.h"
#include "storage/buf.h"
#include "storage/shm_toc.h"
#include "utils/rel.h"

#include "plan/joindata.h"
#include "core/joinbucket.h"
#include "core/joinmodel.h"
#include "io/partlog.h"
#include "io/valuelog.h"

/* an entry's pos (BraidJoinEntry, joinbucket.h) */
#define JOIN_POS_VALID			((uint32) 0x80000000)
#define JOIN_POS_OFFSET(pos)	(((pos) >> 15) & 0x7FFF)
#define JOIN_POS_LEN(pos)		((pos) & 0x7FFF)

/*
 * bytes an inner entry takes in the table at most: the entry and its
 * bucket's offset (a bucket for one to two entries); joinmodel.c's
 * JM_DEFAULT_TABLE_BYTES is the same figure
 */
#define JOIN_TABLE_ENTRY_BYTES	(sizeof(BraidJoinEntry) + sizeof(uint32))
#define JOIN_NO_ENTRY			PG_UINT32_MAX
#define JOIN_READ_CHUNK			4096
/* pinned pages a side keeps for its fetches by TID */
#define JOIN_FETCH_PINS			256
/* ... of a temporary table (local buffers) */
#define JOIN_FETCH_LOCAL_PINS	8
/* outer entries of a round looked ahead of for prefetches */
#define JOIN_PREFETCH_AHEAD		16

/*
 * How one input's rows are found again (join_rows.c): by heap TID, from
 * pages the side keeps pinned, or in its value log.
 */
typedef struct JoinFetch
{
	int64		range_key;		/* partitions by key range: the first key's
								 * exact form in the row last hashed */

	/* heap TID refs: the relation, a slot for fetched tuples */
	Relation	rel;
	TupleTableSlot *fetchslot;
	HeapTupleData fetched;
	int			npins;			/* JOIN_FETCH_PINS, 1 for an outer sequential
								 * or bitmap scan (block order), at most
								 * JOIN_FETCH_LOCAL_PINS for a temporary table */
	Buffer	   *bufs;			/* pinned blocks of recent fetches, by block
								 * number modulo npins */
	BlockNumber *blks;
	BufferAccessStrategy strategy;	/* a ring for the outer table's blocks
									 * when shared buffers cannot hold it
									 * (read back in block order), else NULL */
	/* a table of at most half of shared buffers, by block number: */
	BlockNumber nblocks;		/* blocks the two arrays cover (0: none) */
	Buffer	   *recent;			/* the buffer that last held each block (a
								 * hint for ReadRecentBuffer) */
	Buffer	   *held;			/* each block pinned as a row of it is read
								 * (or at its first fetch), within the
								 * server's limit, and kept until the join
								 * releases its fetches */
	BlockNumber nheld_pinned;	/* held blocks pinned now */
	BlockNumber held_peak;		/* ... at most (EXPLAIN ANALYZE) */
	bool		held_full;		/* the server's limit was reached */
	MemoryContextCallback held_cb;	/* gives the count back if the query fails */

	/* value log refs */
	BraidValueLog vlog;
	TupleTableSlot *vslot;
	char	   *rowbuf;			/* a row copied out of the device */
	size_t		rowbuf_cap;
} JoinFetch;

/* One input's partitions (join_parts.c). */
typedef struct JoinSideParts
{
	BraidPartLog *logs;			/* one per partition */
	bool	   *mat;			/* partition p's entries are in logs[p] */
	bool	   *writing;		/* this pass writes partition p's entries */
	uint64	   *counts;			/* entries of each partition (first pass) */
} JoinSideParts;

/* What one input did, for EXPLAIN ANALYZE and braidsort.stats. */
typedef struct JoinSideInstr
{
	BraidDeviceStats dev;		/* its device traffic */
	int			rescans;
	uint64		rows;			/* rows read in the first pass */
	uint64		fetches;
} JoinSideInstr;

/*
 * One input of the join: what it is (set once by join_node.c), how its
 * rows are found again, its partitions, and what it did.
 */
typedef struct JoinSide
{
	const char *name;			/* "outer", "inner" */
	PlanState  *ps;				/* the child */
	bool		by_tid;			/* refs are heap TIDs, else value log offsets */
	bool		can_rescan;
	bool		is_outer;
	bool		key_refs;		/* refs are the row's exact key (the inner
								 * input of an exact-key join): its rows are
								 * never fetched nor written to a value log */
	Oid			keytype;		/* exact-key joins: the type of the key */
	Oid			rangetype;		/* partitions by key range: the type of the
								 * first key (else InvalidOid) */
	List	   *keys;			/* ExprStates of the hash keys */
	FmgrInfo   *hashfns;
	Oid		   *collations;
	int			nkeys;
	ExprContext *keycxt;		/* where the keys are evaluated */

	JoinFetch	fetch;
	JoinSideParts parts;
	JoinSideInstr instr;
} JoinSide;

/* The in-memory table of one partition's inner entries. */
typedef struct JoinTable
{
	MemoryContext cxt;
	BraidJoinEntry *entries;	/* grouped by bucket once built */
	uint32	   *offsets;		/* bucket b: entries[offsets[b]] to
								 * entries[offsets[b + 1]] */
	uint32		n;
	uint32		cap;
	uint32		grow_limit;		/* entries the array grows to at most in one
								 * step (0: no limit) */
	uint32		mask;
	bool		built;
	size_t		peak_bytes;
} JoinTable;

/*
 * The first pass reads partition 0's outer rows of a heap scan a few rows
 * ahead of their probes (join_ring.c): each waits in the ring, in its
 * pinned page, while its bucket, its first entry and that entry's inner
 * tuple are brought into the cache.
 */
#define JOIN_RING				16
#define JOIN_RING_PINS			8	/* pages the ring keeps pinned at most */

typedef struct JoinRingItem
{
	HeapTupleData tuple;		/* the scan's tuple, in its page or copied */
	Buffer		buf;			/* its page, pinned once for each run of items
								 * on it (InvalidBuffer: a copy) */
	HeapTuple	copy;			/* the copy, if not in a page */
	uint32		hash;
	bool		null_key;		/* a NULL key: an unmatched row (LEFT, ANTI) */
	int64		key;			/* exact-key joins: the row's key */
} JoinRingItem;

/* The ring of the first pass's outer rows (join_ring.c). */
typedef struct JoinRing
{
	bool		on;				/* a heap scan's partition 0 */
	bool		done;			/* the child has no more rows */
	JoinRingItem items[JOIN_RING];
	int			head;
	int			n;
	Buffer		last_buf;		/* the page of the last item pushed */
	int			pins;			/* pins the ring and cur hold */
	JoinRingItem cur;			/* the item now probed, if cur_on */
	bool		cur_on;
} JoinRing;

/* Where the current pass's outer rows come from. */
typedef enum OuterSource
{
	OUTER_FIRST_PASS,			/* the child, for the first time */
	OUTER_CHILD,				/* a rescan of the child */
	OUTER_VLOG,					/* the outer value log, read again */
	OUTER_LOG					/* the partition's log of entries */
} OuterSource;

typedef enum JoinPhase
{
	JOIN_START,
	JOIN_PROBING,
	JOIN_DONE
} JoinPhase;

/* What the plan says, set up once at ExecInit (join_node.c). */
typedef struct JoinConfig
{
	BraidJoinPlanData plan;
	JoinType	jointype;
	bool		single_match;
	bool		exact_key;		/* SEMI, ANTI joins whose inner entries carry
								 * the key */
	ExprState  *hashclauses;	/* rechecked on both rows */
	ExprState  *joinqual;
	TupleTableSlot *nullinner;	/* LEFT and ANTI */
	BraidJmInput model;
	BraidJoinMode mode;
	double		write_intensity;
	size_t		budget;
	int64	   *bounds;			/* partitions by key range (k - 1 bounds, when
								 * nbounds is k - 1), else by hash */
	int			nbounds;
} JoinConfig;

/* The partitions of this execution (join_parts.c). */
typedef struct JoinParts
{
	int			k;				/* partitions */
	bool		resident;		/* partition 0 stayed in memory */
	bool		lazy_fired;
	int			lazy_round;		/* partition before whose round lazy wrote */
} JoinParts;

/* The pass under way: the first, or a round (join_pass.c). */
typedef struct JoinPass
{
	OuterSource source;
	int			round;			/* partition of this round (first pass: 0) */
	int			piece;			/* piece of it, of npieces */
	int			npieces;
	BraidPartScan scan;			/* OUTER_LOG */
	BraidVlogScan vscan;		/* OUTER_VLOG */
	BraidJoinEntry *chunk;		/* OUTER_LOG: entries read */
	int			chunk_n;
	int			chunk_pos;
} JoinPass;

/*
 * The current outer row and its candidates (join_node.c; join_pass.c's
 * join_pass_next_outer fills it with the next row).
 */
typedef struct JoinProbe
{
	TupleTableSlot *cur;		/* NULL: none */
	uint32		cur_hash;
	int64		cur_key;		/* exact-key joins: the row's key */
	uint32		cand;			/* next candidate in the row's bucket */
	bool		matched;
} JoinProbe;

/* What the node did, for EXPLAIN ANALYZE (every stage adds). */
typedef struct JoinInstr
{
	int64		executions;		/* times the join began (its loops) */
	int			rounds;
	bool		evicted;
	double		first_ms;
	double		rounds_ms;
	instr_time	started;
} JoinInstr;

/* The shared memory of processes partitioning together (join_shared.c). */
typedef struct BraidJoinShared BraidJoinShared;

typedef struct BraidJoinState
{
	CustomScanState css;
	JoinConfig	cfg;
	BraidJoinShared *shared;	/* the processes partition the inner input
								 * together (join_shared.c), else NULL */
	int			shared_procs;	/* ... processes whose entries it joins */
	BlockNumber shared_pos_blocks;	/* ... another process's entry of a block
									 * below this keeps its place in the page
									 * (join_row_hold_blocks), else is read by
									 * line pointer */
	JoinPhase	phase;			/* join_node.c */
	MemoryContext passcxt;		/* partition logs, value logs (join_node.c) */
	JoinSide	outer;
	JoinSide	inner;
	JoinParts	parts;
	JoinTable	table;
	JoinPass	pass;
	JoinRing	ring;
	JoinProbe	probe;
	JoinInstr	instr;
} BraidJoinState;

/* by_range: are the partitions by key range (else by hash)? */
static inline bool
by_range(const BraidJoinState *st)
{
	return st->cfg.nbounds > 0 && st->cfg.nbounds == st->parts.k - 1;
}

/*
 * partition_of
 *		The partition of the row of side s just hashed: by the first key's
 *		range when the plan gave bounds (the number of bounds at or below the
 *		key), else by the hash value's high bits.
 */
static inline int
partition_of(const BraidJoinState *st, const JoinSide *s, uint32 hash)
{
	if (by_range(st))
	{
		int			lo = 0,
					hi = st->cfg.nbounds;

		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (st->cfg.bounds[mid] <= s->fetch.range_key)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo;
	}
	return (int) (((uint64) hash * (uint64) st->parts.k) >> 32);
}

/*
 * piece_of
 *		The piece of its partition a hash value falls in: by the bits just
 *		below the partition's (the fraction partition_of leaves), or by its
 *		high bits when partitions are by key range, so that a piece's
 *		entries still spread over every bucket of the table, which takes the
 *		low bits.
 */
static inline int
piece_of(const BraidJoinState *st, uint32 hash)
{
	uint32		below = by_range(st) ? hash : (uint32) ((uint64) hash * (uint64) st->parts.k);

	return st->pass.npieces <= 1 ? 0 : (int) (((uint64) below * (uint64) st->pass.npieces) >> 32);
}

/* in_piece: whether a hash value falls in the piece being joined. */
static inline bool
in_piece(const BraidJoinState *st, uint32 hash)
{
	return st->pass.npieces <= 1 || piece_of(st, hash) == st->pass.piece;
}

/* join_table_bytes: memory the table takes with n entries. */
static inline size_t
join_table_bytes(uint32 n)
{
	return (size_t) n * JOIN_TABLE_ENTRY_BYTES;
}

/*
 * join_table_first
 *		The first entry of a hash's bucket (a match or not: for prefetches),
 *		or JOIN_NO_ENTRY.
 */
static inline uint32
join_table_first(const JoinTable *t, uint32 hash)
{
	uint32		b;

	if (!t->built || t->n == 0)
		return JOIN_NO_ENTRY;
	b = hash & t->mask;
	return t->offsets[b] < t->offsets[b + 1] ? t->offsets[b] : JOIN_NO_ENTRY;
}

/*
 * join_table_next_match
 *		The first entry with this hash after entry i of its bucket
 *		(JOIN_NO_ENTRY for i: from the bucket's start), or JOIN_NO_ENTRY.
 */
static inline uint32
join_table_next_match(const JoinTable *t, uint32 i, uint32 hash)
{
	uint32		b;
	uint32		end;

	if (!t->built || t->n == 0)
		return JOIN_NO_ENTRY;
	b = hash & t->mask;
	end = t->offsets[b + 1];
	i = i == JOIN_NO_ENTRY ? t->offsets[b] : i + 1;
	for (; i < end; i++)
		if (t->entries[i].hash == hash)
			return i;
	return JOIN_NO_ENTRY;
}

/* join_table_first_match: the first entry with this hash, or JOIN_NO_ENTRY. */
static inline uint32
join_table_first_match(const JoinTable *t, uint32 hash)
{
	return join_table_next_match(t, JOIN_NO_ENTRY, hash);
}

/*
 * join_prefetch
 *		A prefetch the compiler keeps: built with GCC 12 at -O2, the
 *		__builtin_prefetch calls of join_table_prefetch below (inlined from
 *		this header) were not emitted at all, while those of
 *		join_row_prefetch (an extern function) were; an asm statement is.
 */
#if defined(__GNUC__) && (defined(__x86_64__) || (defined(__i386__) && defined(__SSE__)))
#define join_prefetch(p) \
	__asm__ __volatile__("prefetcht0 %0" : : "m" (*(const char *) (p)))
#elif defined(__GNUC__)
#define join_prefetch(p) __builtin_prefetch(p)
#else
#define join_prefetch(p) ((void) 0)
#endif

/*
 * join_table_prefetch
 *		Ask for the bucket of a hash (its offsets) to be brought into the
 *		cache (a probe a few rows ahead), or, when it already is, for its
 *		first entry.
 */
static inline void
join_table_prefetch(const JoinTable *t, uint32 hash, bool entry)
{
	if (!t->built || t->n == 0)
		return;
	if (!entry)
		join_prefetch(&t->offsets[hash & t->mask]);
	else
	{
		uint32		i = join_table_first(t, hash);

		if (i != JOIN_NO_ENTRY)
			join_prefetch(&t->entries[i]);
	}
}

/* side_has_vlog: does this input keep its rows in a value log? */
static inline bool
side_has_vlog(const JoinSide *s)
{
	return !s->by_tid && !s->key_refs;
}

/* join_table.c */
extern void join_table_reset(JoinTable *t);
extern void join_table_reserve(JoinTable *t, uint32 n);
extern void join_table_add(JoinTable *t, const BraidJoinEntry *e);
extern void join_table_build(JoinTable *t);

/* join_rows.c */
extern bool join_row_hash(JoinSide *s, TupleTableSlot *slot, uint32 *hash, int64 *key);
extern uint64 join_row_heap_ref(JoinSide *s);
extern uint32 join_row_heap_pos(JoinSide *s);
extern uint64 join_row_vlog_ref(JoinSide *s, TupleTableSlot *slot);
extern TupleTableSlot *join_row_from_tuple(JoinSide *s, HeapTuple tuple);
extern TupleTableSlot *join_row_fetch(BraidJoinState *st, JoinSide *s, uint64 ref,
									  uint32 pos);
extern TupleTableSlot *join_row_reread_next(BraidJoinState *st, JoinSide *s,
											BraidVlogScan *vscan, uint64 *ref);
extern void join_row_reread_begin(JoinSide *s, BraidVlogScan *vscan);
extern void join_row_prefetch(JoinSide *s, uint64 ref, uint32 pos, bool tuple);
extern void join_row_prefetch_match(JoinSide *s, const JoinTable *t, uint32 hash,
									bool second);
extern void join_row_begin_fetch(JoinSide *s, EState *estate);
extern void join_row_release_fetch(JoinSide *s);
extern BlockNumber join_row_hold_blocks(JoinSide *s);
extern void join_row_setup(JoinSide *s, MemoryContext cxt, size_t vlog_bytes);
extern void join_row_release(JoinSide *s);

/* join_parts.c */
extern void join_parts_setup(BraidJoinState *st);
extern void join_parts_release(BraidJoinState *st);
extern void join_parts_log(JoinSide *s, int p, uint32 hash, uint32 pos, uint64 ref);
extern void join_parts_finish_writing(BraidJoinState *st, JoinSide *s);
extern void join_parts_evict_resident(BraidJoinState *st);
extern bool join_parts_round_needed(BraidJoinState *st, int p);
extern void join_parts_lazy_decide(BraidJoinState *st, int p);

/* join_ring.c */
extern bool join_ring_next(BraidJoinState *st, JoinProbe *probe);
extern void join_ring_reset(BraidJoinState *st);

/*
 * join_shared.c.  The build barrier's phases: the processes partition their
 * shares and publish; then each holds the inner table's blocks
 * (braid_join_shared_hold) before any leaves the build, and so before any
 * ends its join and drops its pins.
 */
#define JOIN_SHARED_BUILDING	0
#define JOIN_SHARED_HOLDING		1

extern Size braid_join_shared_estimate(CustomScanState *node, ParallelContext *pcxt);
extern void braid_join_shared_init_dsm(CustomScanState *node, ParallelContext *pcxt,
									   void *coordinate);
extern void braid_join_shared_reinit_dsm(CustomScanState *node, ParallelContext *pcxt,
										 void *coordinate);
extern void braid_join_shared_init_worker(CustomScanState *node, shm_toc *toc,
										  void *coordinate);
extern int	braid_join_shared_attach(BraidJoinState *st);
extern void braid_join_shared_publish(BraidJoinState *st);
extern void braid_join_shared_hold(BraidJoinState *st);
extern void braid_join_shared_collect(BraidJoinState *st);
extern bool braid_join_shared_open(BraidJoinState *st, int proc, int p, BraidPartLog *log,
								   bool *own);
extern int	braid_join_shared_nprocs(const BraidJoinState *st);

/* join_pass.c */
extern void join_pass_setup(BraidJoinState *st);
extern void join_pass_start(BraidJoinState *st);
extern bool join_pass_next_outer(BraidJoinState *st, JoinProbe *probe);
extern bool join_pass_next_round(BraidJoinState *st);

#endif							/* BRAID_JOIN_STATE_H */
