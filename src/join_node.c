/*-------------------------------------------------------------------------
 *
 * join_node.c
 *	  The BraidJoin custom scan node: a hash join that partitions entries
 *	  <hash, ref> instead of tuples, in Viglas's write-limited modes.
 *
 * Design (DESIGN.md §7, docs/design.md "BraidJoin").  Each input row
 * becomes an entry of PostgreSQL's own hash value of its join keys (the
 * operators' hash functions combined as ExecHashGetHashValue does, so
 * cross-type operators hash alike) and a ref: the heap TID when the input
 * is a plain heap scan, else the row's place in a value log (written once,
 * as PostgreSQL would write it).  Entries are split by hash into k
 * partitions, k chosen so one partition's inner entries fit the in-memory
 * table (work_mem x hash_mem_multiplier, as for PostgreSQL's hash table).
 *
 * FIRST PASS.  The inner input is read: partition 0's entries go to the
 * in-memory table (should they outgrow it, e.g. after a row misestimate,
 * partition 0 is written out like the others); partition p >= 1's are
 * written to its partition log (partlog.c) when the mode materializes it,
 * else dropped (a later rescan rebuilds them).  Then the outer input is
 * read: a row of partition 0 probes the table with the row in hand; the
 * others' entries are written or dropped the same way.
 *
 * ROUNDS.  Each later partition (in pieces by hash when its inner entries
 * would not fit) loads its inner entries into the table, from its log or
 * by rescanning the inner input, and is probed by its outer rows: from its
 * log (each row then fetched by its ref), or by rescanning the outer input
 * (the row in hand).  The mode (joinmodel.c) decides which partitions each
 * input writes; lazy decides before each round whether that round's
 * rescans write the remainder.
 *
 * MATCHING.  A probe follows the table's chain for the row's hash; each
 * candidate's inner row is fetched by its ref and the hash clauses are
 * rechecked on the two rows (entries carry the hash, not the key, so that
 * equality is always the operator's), then the join qual; LEFT and ANTI
 * emit an unmatched row with a null inner side, SEMI and inner-unique joins
 * stop at the first match.  Rows with a NULL key never match (the hash
 * functions are strict): LEFT and ANTI emit them during the first pass.
 *
 * Output order is not defined (as for a hash join).  A rescan of the node
 * starts over.  Every partition log is a spill file tracked by resource
 * owner: errors and cancels remove them.
 *
 * src/join_node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/relscan.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "port/pg_bitutils.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "braidsort.h"
#include "join_plan.h"
#include "joinmodel.h"
#include "partlog.h"
#include "refs.h"
#include "stats.h"
#include "valuelog.h"

StaticAssertDecl(BRAID_JM_NMODES == BRAID_NUM_JOIN_MODES,
				 "braidsort.stats counts every join mode");

/* An entry: the row's hash and its ref. */
typedef struct BraidJoinEntry
{
	uint32		hash;
	uint32		unused;
	uint64		ref;
} BraidJoinEntry;

/* bytes an inner entry takes in the table: entry, chain link, bucket */
#define JOIN_TABLE_ENTRY_BYTES	(sizeof(BraidJoinEntry) + 2 * sizeof(uint32))
#define JOIN_NO_ENTRY			PG_UINT32_MAX
#define JOIN_READ_CHUNK			4096
/* pinned pages a side keeps for its fetches by TID */
#define JOIN_FETCH_PINS			256

/* One input of the join. */
typedef struct JoinSide
{
	const char *name;			/* "outer", "inner" */
	PlanState  *ps;				/* the child */
	bool		by_tid;			/* refs are heap TIDs, else value log offsets */
	bool		can_rescan;
	bool		is_outer;
	List	   *keys;			/* ExprStates of the hash keys */
	FmgrInfo   *hashfns;
	Oid		   *collations;
	int			nkeys;
	ExprContext *keycxt;		/* where the keys are evaluated */

	/* heap TID refs: the relation, a slot for fetched tuples */
	Relation	rel;
	TupleTableSlot *fetchslot;
	HeapTupleData fetched;
	Buffer	   *bufs;			/* pinned blocks of recent fetches, by
								 * block number modulo JOIN_FETCH_PINS */
	BlockNumber *blks;
	Buffer	   *recent;			/* the buffer that last held each block (a
								 * hint for ReadRecentBuffer), or NULL */
	BlockNumber nrecent;

	/* value log refs */
	BraidValueLog vlog;
	TupleTableSlot *vslot;
	char	   *rowbuf;			/* a row copied out of the device */
	size_t		rowbuf_cap;

	/* partitions */
	BraidPartLog *logs;			/* one per partition */
	bool	   *mat;			/* partition p's entries are in logs[p] */
	bool	   *writing;		/* this pass writes partition p's entries */
	uint64	   *counts;			/* entries of each partition (first pass) */
	BraidDeviceStats dev;		/* its device traffic */
	int			rescans;
	uint64		rows;			/* rows read in the first pass */
	uint64		fetches;
} JoinSide;

/* The in-memory table of one partition's inner entries. */
typedef struct JoinTable
{
	MemoryContext cxt;
	BraidJoinEntry *entries;
	uint32	   *next;
	uint32	   *buckets;
	uint32		n;
	uint32		cap;
	uint32		mask;
	bool		built;
	size_t		peak_bytes;
} JoinTable;

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

typedef struct BraidJoinState
{
	CustomScanState css;
	BraidJoinPlanData plan;
	JoinType	jointype;
	bool		single_match;
	ExprState  *hashclauses;	/* rechecked on both rows */
	ExprState  *joinqual;
	TupleTableSlot *nullinner;	/* LEFT and ANTI */
	JoinSide	outer;
	JoinSide	inner;
	BraidJmInput model;
	BraidJoinMode mode;
	double		write_intensity;
	size_t		budget;
	int			k;				/* partitions */
	bool		resident;		/* partition 0 stayed in memory */
	JoinTable	table;
	MemoryContext passcxt;		/* partition logs, value logs */
	JoinPhase	phase;

	/* the current pass */
	OuterSource source;
	int			round;			/* partition of this round (first pass: 0) */
	int			piece;			/* piece of it, of npieces */
	int			npieces;
	bool		lazy_fired;
	int			lazy_round;		/* partition before whose round lazy wrote */
	BraidPartScan scan;			/* OUTER_LOG */
	BraidVlogScan vscan;		/* OUTER_VLOG */
	BraidJoinEntry *chunk;		/* OUTER_LOG: entries read */
	int			chunk_n;
	int			chunk_pos;

	/* the current outer row */
	TupleTableSlot *cur;		/* NULL: none */
	uint32		cur_hash;
	uint32		cand;			/* next candidate in the table's chain */
	bool		matched;

	/* for EXPLAIN ANALYZE */
	int			rounds;
	bool		evicted;
	double		first_ms;
	double		rounds_ms;
	instr_time	started;
} BraidJoinState;

static Node *join_create_state(CustomScan *cscan);
static void join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *join_exec(CustomScanState *node);
static void join_end(CustomScanState *node);
static void join_rescan(CustomScanState *node);
static void join_explain(CustomScanState *node, List *ancestors, ExplainState *es);

CustomScanMethods braid_join_scan_methods = {
	.CustomName = BRAID_JOIN_NAME,
	.CreateCustomScanState = join_create_state,
};

static CustomExecMethods join_exec_methods = {
	.CustomName = BRAID_JOIN_NAME,
	.BeginCustomScan = join_begin,
	.ExecCustomScan = join_exec,
	.EndCustomScan = join_end,
	.ReScanCustomScan = join_rescan,
	.ExplainCustomScan = join_explain,
};

/*
 * braid_join_exec_init
 *		Register the custom scan so plans naming it can be copied, read back
 *		and sent to parallel workers.
 */
void
braid_join_exec_init(void)
{
	RegisterCustomScanMethods(&braid_join_scan_methods);
}

/* join_create_state: the node's state, zeroed. */
static Node *
join_create_state(CustomScan *cscan)
{
	BraidJoinState *st = (BraidJoinState *) newNode(sizeof(BraidJoinState), T_CustomScanState);

	st->css.methods = &join_exec_methods;
	return (Node *) st;
}

/* ------------------------------------------------------------------------
 * Partitions and the table
 * ------------------------------------------------------------------------
 */

/* partition_of: the partition of a hash value, by its high bits. */
static inline int
partition_of(const BraidJoinState *st, uint32 hash)
{
	return (int) (((uint64) hash * (uint64) st->k) >> 32);
}

/* piece_of: the piece of its partition a hash value falls in. */
static inline int
piece_of(const BraidJoinState *st, uint32 hash)
{
	return st->npieces <= 1 ? 0 : (int) (hash % (uint32) st->npieces);
}

/* table_bytes: memory the table takes with n entries. */
static size_t
table_bytes(uint32 n)
{
	return (size_t) n * JOIN_TABLE_ENTRY_BYTES;
}

/* table_reset: empty the table and free its memory. */
static void
table_reset(JoinTable *t)
{
	MemoryContextReset(t->cxt);
	t->entries = NULL;
	t->next = NULL;
	t->buckets = NULL;
	t->n = t->cap = t->mask = 0;
	t->built = false;
}

/* table_add: add an entry (before the table is built). */
static void
table_add(JoinTable *t, const BraidJoinEntry *e)
{
	Assert(!t->built);
	if (t->n == t->cap)
	{
		uint32		cap = Max(t->cap * 2, 1024);

		if (t->n >= PG_UINT32_MAX / 2 - 1)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("braidsort join partition has too many rows")));
		t->entries = t->entries ?
			repalloc_huge(t->entries, sizeof(BraidJoinEntry) * (size_t) cap) :
			MemoryContextAllocHuge(t->cxt, sizeof(BraidJoinEntry) * (size_t) cap);
		t->cap = cap;
	}
	t->entries[t->n++] = *e;
}

/* table_build: chain the entries by hash into buckets. */
static void
table_build(JoinTable *t)
{
	uint32		nbuckets = pg_nextpower2_32(Max(t->n, 1));

	t->next = MemoryContextAllocHuge(t->cxt, sizeof(uint32) * (size_t) Max(t->n, 1));
	t->buckets = MemoryContextAllocHuge(t->cxt, sizeof(uint32) * (size_t) nbuckets);
	memset(t->buckets, 0xFF, sizeof(uint32) * (size_t) nbuckets);
	t->mask = nbuckets - 1;
	for (uint32 i = 0; i < t->n; i++)
	{
		uint32		b = t->entries[i].hash & t->mask;

		t->next[i] = t->buckets[b];
		t->buckets[b] = i;
	}
	t->built = true;
	t->peak_bytes = Max(t->peak_bytes, sizeof(BraidJoinEntry) * (size_t) t->cap +
						sizeof(uint32) * ((size_t) t->n + nbuckets));
}

/* table_first: the first entry of a hash's chain, or JOIN_NO_ENTRY. */
static inline uint32
table_first(const JoinTable *t, uint32 hash)
{
	if (!t->built || t->n == 0)
		return JOIN_NO_ENTRY;
	return t->buckets[hash & t->mask];
}

/* table_next_match: the next entry of the chain from i with this hash. */
static inline uint32
table_next_match(const JoinTable *t, uint32 i, uint32 hash)
{
	while (i != JOIN_NO_ENTRY && t->entries[i].hash != hash)
		i = t->next[i];
	return i;
}

/* ------------------------------------------------------------------------
 * Rows: hashes, refs, fetches
 * ------------------------------------------------------------------------
 */

/*
 * row_hash
 *		The hash of a row's join keys, combined as ExecHashGetHashValue
 *		does; false when a key is NULL (the row never matches).
 */
static bool
row_hash(JoinSide *s, TupleTableSlot *slot, uint32 *hash)
{
	ExprContext *econtext = s->keycxt;
	uint32		h = 0;
	int			i = 0;
	ListCell   *lc;

	ResetExprContext(econtext);
	if (s->is_outer)
		econtext->ecxt_outertuple = slot;
	else
		econtext->ecxt_innertuple = slot;
	foreach(lc, s->keys)
	{
		ExprState  *key = (ExprState *) lfirst(lc);
		bool		isnull;
		Datum		val;

		h = pg_rotate_left32(h, 1);
		val = ExecEvalExpr(key, econtext, &isnull);
		if (isnull)
			return false;
		h ^= DatumGetUInt32(FunctionCall1Coll(&s->hashfns[i], s->collations[i], val));
		i++;
	}
	*hash = h;
	return true;
}

/* heap_ref: the TID ref of the row a heap scan child just returned. */
static uint64
heap_ref(JoinSide *s)
{
	TupleTableSlot *scanslot = ((ScanState *) s->ps)->ss_ScanTupleSlot;
	ItemPointer tid = &scanslot->tts_tid;

	if (!ItemPointerIsValid(tid))
		elog(ERROR, "braidsort: %s input row has no TID", s->name);
	return braid_make_ref(ItemPointerGetBlockNumber(tid),
						  ItemPointerGetOffsetNumber(tid), 0);
}

/* vlog_ref: append a row to the side's value log, returning its ref. */
static uint64
vlog_ref(JoinSide *s, TupleTableSlot *slot)
{
	bool		should_free;
	MinimalTuple mt = ExecFetchSlotMinimalTuple(slot, &should_free);
	uint64		ref = braid_vlog_append(&s->vlog, mt);

	if (should_free)
		pfree(mt);
	return ref;
}

/*
 * project_child
 *		The child's output row for a tuple in its scan slot position: its
 *		own projection evaluated on it, or the tuple itself.
 */
static TupleTableSlot *
project_child(JoinSide *s, TupleTableSlot *scantuple)
{
	PlanState  *ps = s->ps;
	ExprContext *econtext;

	if (ps->ps_ProjInfo == NULL)
		return scantuple;
	econtext = ps->ps_ExprContext;
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = scantuple;
	return ExecProject(ps->ps_ProjInfo);
}

/*
 * copy_row
 *		A value-log row copied into the side's buffer (grown in cxt), so that
 *		it can be used after the device's read grant is given back.
 */
static MinimalTuple
copy_row(MemoryContext cxt, JoinSide *s, MinimalTuple tuple)
{
	uint32		len = tuple->t_len;

	if (len > s->rowbuf_cap)
	{
		size_t		cap = Max((size_t) len, s->rowbuf_cap * 2);

		if (s->rowbuf)
			pfree(s->rowbuf);
		s->rowbuf = MemoryContextAlloc(cxt, cap);
		s->rowbuf_cap = cap;
	}
	memcpy(s->rowbuf, tuple, len);
	return (MinimalTuple) s->rowbuf;
}

/* copy_out: a value-log row on the device, read under a grant and copied. */
static MinimalTuple
copy_out(MemoryContext cxt, JoinSide *s, MinimalTuple tuple, BraidSpillFile *f, size_t pos)
{
	BraidReadScope scope = {0};

	braid_read_scope_add(&scope, f);
	braid_read_scope_begin(&scope);
	braid_spill_note_read(f, pos, pos + tuple->t_len);
	tuple = copy_row(cxt, s, tuple);
	braid_read_scope_end(&scope);
	return tuple;
}

/*
 * fetch_row
 *		The side's output row for a ref: refetched from the table by TID (and
 *		projected as the child would), or read from the value log.
 */
static TupleTableSlot *
fetch_row(BraidJoinState *st, JoinSide *s, uint64 ref)
{
	s->fetches++;
	if (s->by_tid)
	{
		BlockNumber blk = braid_ref_block(ref);
		OffsetNumber off = braid_ref_offset(ref);
		int			slot = (int) (blk % JOIN_FETCH_PINS);
		Page		page;
		ItemId		lp;

		/*
		 * Inner rows are fetched in hash order, all over the table: a page
		 * stays pinned until another one takes its place, so that the pages
		 * a partition's matches revisit are not looked up in the buffer
		 * mapping each time.  The pin keeps the page from being pruned or
		 * defragmented, and a visible tuple's data never change: it is
		 * read without the content lock.
		 */
		if (!BufferIsValid(s->bufs[slot]) || s->blks[slot] != blk)
		{
			if (BufferIsValid(s->bufs[slot]))
				ReleaseBuffer(s->bufs[slot]);
			s->bufs[slot] = InvalidBuffer;

			/*
			 * The buffer that held the block last time is pinned without
			 * the buffer mapping lookup, a shared hash probe and lock per
			 * fetch otherwise (as the sort's gather does).
			 */
			if (blk < s->nrecent && BufferIsValid(s->recent[blk]) &&
				ReadRecentBuffer(s->rel->rd_node, MAIN_FORKNUM, blk, s->recent[blk]))
				s->bufs[slot] = s->recent[blk];
			else
			{
				s->bufs[slot] = ReadBufferExtended(s->rel, MAIN_FORKNUM, blk,
												   RBM_NORMAL, NULL);
				if (blk < s->nrecent)
					s->recent[blk] = s->bufs[slot];
			}
			s->blks[slot] = blk;
		}
		page = BufferGetPage(s->bufs[slot]);
		if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page) ||
			!ItemIdIsNormal(lp = PageGetItemId(page, off)))
			elog(ERROR, "braidsort: %s row (%u,%u) of \"%s\" is gone",
				 s->name, blk, off, RelationGetRelationName(s->rel));
		s->fetched.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		s->fetched.t_len = ItemIdGetLength(lp);
		s->fetched.t_tableOid = RelationGetRelid(s->rel);
		ItemPointerSet(&s->fetched.t_self, blk, off);
		ExecStoreHeapTuple(&s->fetched, s->fetchslot, false);
		return project_child(s, s->fetchslot);
	}
	else
	{
		MinimalTuple tuple;

		if (s->vlog.on_device)
		{
			BraidSpillFile *f;
			size_t		pos;

			tuple = braid_vlog_locate(&s->vlog, ref, &f, &pos);
			tuple = copy_out(st->passcxt, s, tuple, f, pos);
		}
		else
			tuple = braid_vlog_get(&s->vlog, ref);
		return ExecStoreMinimalTuple(tuple, s->vslot, false);
	}
}

/*
 * reread_next
 *		The next row of a pass over an input again: its child rescanned, or
 *		its value log read from the start; NULL at the end.  *ref is the
 *		row's ref.
 */
static TupleTableSlot *
reread_next(BraidJoinState *st, JoinSide *s, BraidVlogScan *vscan, uint64 *ref)
{
	if (s->by_tid)
	{
		TupleTableSlot *slot = ExecProcNode(s->ps);

		if (TupIsNull(slot))
			return NULL;
		*ref = heap_ref(s);
		return slot;
	}
	else
	{
		MinimalTuple tuple;
		BraidReadScope scope = {0};
		bool		gated = s->vlog.on_device && s->vlog.nsegs > 0;

		if (gated)
		{
			for (int i = 0; i < s->vlog.nsegs; i++)
				braid_read_scope_add(&scope, s->vlog.segs[i]);
			braid_read_scope_begin(&scope);
		}
		tuple = braid_vlog_scan_next(&s->vlog, vscan, ref);
		if (tuple != NULL && gated)
			tuple = copy_row(st->passcxt, s, tuple);
		else if (tuple == NULL)
			braid_vlog_scan_end(&s->vlog, vscan);
		if (gated)
			braid_read_scope_end(&scope);
		if (tuple == NULL)
			return NULL;
		return ExecStoreMinimalTuple(tuple, s->vslot, false);
	}
}

/* reread_begin: start a pass over an input again. */
static void
reread_begin(JoinSide *s, BraidVlogScan *vscan)
{
	s->rescans++;
	if (s->by_tid)
		ExecReScan(s->ps);
	else
		braid_vlog_scan_begin(&s->vlog, vscan);
}

/* ------------------------------------------------------------------------
 * Passes
 * ------------------------------------------------------------------------
 */

/* log_entry: append an entry to partition p's log of a side. */
static void
log_entry(JoinSide *s, int p, uint32 hash, uint64 ref)
{
	BraidJoinEntry e;

	e.hash = hash;
	e.unused = 0;
	e.ref = ref;
	braid_partlog_append(&s->logs[p], &e);
}

/* finish_writing: close the logs a pass wrote; they now hold their partitions. */
static void
finish_writing(BraidJoinState *st, JoinSide *s)
{
	for (int p = 0; p < st->k; p++)
		if (s->writing[p])
		{
			braid_partlog_finish(&s->logs[p]);
			s->mat[p] = true;
			s->writing[p] = false;
		}
}

/*
 * evict_resident
 *		Partition 0's inner entries outgrew the table during the first pass:
 *		write them out and treat partition 0 as any other.
 */
static void
evict_resident(BraidJoinState *st)
{
	JoinTable  *t = &st->table;

	for (uint32 i = 0; i < t->n; i++)
		braid_partlog_append(&st->inner.logs[0], &t->entries[i]);
	table_reset(t);
	st->resident = false;
	st->evicted = true;
	st->inner.writing[0] = true;
	/* its outer rows: written when the outer input cannot be read again */
	st->outer.writing[0] = !st->outer.can_rescan || st->mode == BRAID_JM_GRACE ||
		(st->k > 1 && st->outer.writing[1]);
	elog(DEBUG1, "braidsort: BraidJoin partition 0 outgrew %zu kB: written out",
		 st->budget / 1024);
}

/*
 * first_inner_pass
 *		Read the inner input once: partition 0 into the table, the others'
 *		entries into the logs the mode writes.
 */
static void
first_inner_pass(BraidJoinState *st)
{
	JoinSide   *s = &st->inner;

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(s->ps);
		uint32		hash;
		uint64		ref;
		int			p;

		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		s->rows++;
		if (!row_hash(s, slot, &hash))
			continue;
		p = partition_of(st, hash);
		s->counts[p]++;
		if (!(p == 0 && st->resident) && !s->writing[p] && s->by_tid)
			continue;
		ref = s->by_tid ? heap_ref(s) : vlog_ref(s, slot);
		if (p == 0 && st->resident)
		{
			BraidJoinEntry e = {hash, 0, ref};

			table_add(&st->table, &e);
			if (table_bytes(st->table.n) > st->budget)
				evict_resident(st);
		}
		else if (s->writing[p])
			log_entry(s, p, hash, ref);
	}
	if (!s->by_tid)
		braid_vlog_finish(&s->vlog);
	finish_writing(st, s);

	/*
	 * No inner rows: every outer row is unmatched, no partition needed
	 * (nothing was written: partition 0, resident, is all there is).
	 */
	if (st->resident)
	{
		uint64		total = 0;

		for (int p = 0; p < st->k; p++)
			total += s->counts[p];
		if (total == 0)
			st->k = 1;
	}
	if (st->resident)
		table_build(&st->table);
}

/*
 * round_needed
 *		Does partition p need a round?  Not when it has no inner rows and
 *		unmatched outer rows produce nothing (INNER, SEMI).
 */
static bool
round_needed(BraidJoinState *st, int p)
{
	if (p == 0 && st->resident)
		return false;
	if (st->inner.counts[p] == 0 &&
		(st->jointype == JOIN_INNER || st->jointype == JOIN_SEMI))
		return false;
	return true;
}

/*
 * lazy_decide
 *		Lazy, before partition p's round: should its rescans write the rest?
 *		Marks the partitions after p each side rescans as being written.
 */
static void
lazy_decide(BraidJoinState *st, int p)
{
	int			round = st->resident ? p : p + 1;
	bool		any = false;

	if (st->mode != BRAID_JM_LAZY || st->lazy_fired)
		return;
	for (int q = p + 1; q < st->k; q++)
		if (round_needed(st, q) && (!st->inner.mat[q] || !st->outer.mat[q]))
			any = true;
	if (!any || !braid_jm_lazy_materialize(&st->model, st->k, round, st->write_intensity))
		return;
	st->lazy_fired = true;
	st->lazy_round = p;
	for (int q = p + 1; q < st->k; q++)
	{
		if (!round_needed(st, q))
			continue;
		if (!st->inner.mat[p] && !st->inner.mat[q])
			st->inner.writing[q] = true;
		if (!st->outer.mat[p] && !st->outer.mat[q])
			st->outer.writing[q] = true;
	}
}

/*
 * load_round
 *		Fill the table with this round's inner entries (partition st->round,
 *		piece st->piece): from the partition's log, or by reading the inner
 *		input again (then also writing what lazy decided).
 */
static void
load_round(BraidJoinState *st)
{
	JoinSide   *s = &st->inner;
	int			p = st->round;

	table_reset(&st->table);
	if (s->mat[p])
	{
		BraidPartScan scan;
		int			n;

		braid_partlog_scan_begin(&s->logs[p], &scan);
		while ((n = braid_partlog_read(&s->logs[p], &scan, (char *) st->chunk,
									   JOIN_READ_CHUNK)) > 0)
		{
			CHECK_FOR_INTERRUPTS();
			for (int i = 0; i < n; i++)
				if (piece_of(st, st->chunk[i].hash) == st->piece)
					table_add(&st->table, &st->chunk[i]);
		}
	}
	else
	{
		BraidVlogScan vscan;
		TupleTableSlot *slot;
		uint64		ref;

		reread_begin(s, &vscan);
		while ((slot = reread_next(st, s, &vscan, &ref)) != NULL)
		{
			uint32		hash;
			int			q;

			CHECK_FOR_INTERRUPTS();
			if (!row_hash(s, slot, &hash))
				continue;
			q = partition_of(st, hash);
			if (q == p)
			{
				if (piece_of(st, hash) == st->piece)
				{
					BraidJoinEntry e = {hash, 0, ref};

					table_add(&st->table, &e);
				}
			}
			else if (s->writing[q])
				log_entry(s, q, hash, ref);
		}
		finish_writing(st, s);
	}
	table_build(&st->table);
}

/*
 * next_round
 *		Set up the next round (or piece of one): load its inner entries and
 *		start its outer rows.  False when every partition is done.
 */
static bool
next_round(BraidJoinState *st)
{
	JoinSide   *o = &st->outer;
	bool		first = st->source == OUTER_FIRST_PASS;
	int			p;

	/* the pass that ended may have written partitions for lazy */
	finish_writing(st, o);
	/* after the first pass, the outer value log is read back */
	if (first && !o->by_tid)
		braid_vlog_finish(&o->vlog);

	if (!first && st->piece + 1 < st->npieces)
		st->piece++;
	else
	{
		/* the next partition that needs a round (0 if it left memory) */
		p = first && !st->resident ? 0 : st->round + 1;
		while (p < st->k && !round_needed(st, p))
			p++;
		if (p >= st->k)
			return false;
		st->round = p;
		st->piece = 0;
		st->npieces = (int) Min(Max(ceil((double) st->inner.counts[p] *
										 JOIN_TABLE_ENTRY_BYTES / (double) st->budget),
									1.0),
								65536.0);
		lazy_decide(st, p);
	}
	p = st->round;
	st->rounds++;
	load_round(st);

	/* the outer rows of the round */
	if (o->mat[p])
	{
		st->source = OUTER_LOG;
		braid_partlog_scan_begin(&o->logs[p], &st->scan);
		st->chunk_n = st->chunk_pos = 0;
	}
	else
	{
		st->source = o->by_tid ? OUTER_CHILD : OUTER_VLOG;
		reread_begin(o, &st->vscan);
	}
	return true;
}

/*
 * next_outer
 *		The next outer row to probe with (set as st->cur with its hash and
 *		first candidate); false when the current pass has no more.  The
 *		first pass also writes the other partitions' entries, and emits
 *		nothing for rows with NULL keys but sets them up as unmatched rows
 *		for LEFT and ANTI.
 */
static bool
next_outer(BraidJoinState *st)
{
	JoinSide   *s = &st->outer;

	for (;;)
	{
		TupleTableSlot *slot;
		uint64		ref = 0;
		uint32		hash;
		int			p;

		CHECK_FOR_INTERRUPTS();
		if (st->source == OUTER_LOG)
		{
			BraidJoinEntry *e;
			uint32		first;

			if (st->chunk_pos >= st->chunk_n)
			{
				st->chunk_n = braid_partlog_read(&s->logs[st->round], &st->scan,
												 (char *) st->chunk, JOIN_READ_CHUNK);
				st->chunk_pos = 0;
				if (st->chunk_n == 0)
					return false;
			}
			e = &st->chunk[st->chunk_pos++];
			if (piece_of(st, e->hash) != st->piece)
				continue;
			first = table_next_match(&st->table, table_first(&st->table, e->hash), e->hash);
			/* an inner or semi join needs the row only if its hash matches */
			if (first == JOIN_NO_ENTRY &&
				(st->jointype == JOIN_INNER || st->jointype == JOIN_SEMI))
				continue;
			st->cur = fetch_row(st, s, e->ref);
			st->cur_hash = e->hash;
			st->cand = first;
			st->matched = false;
			return true;
		}

		if (st->source == OUTER_FIRST_PASS)
		{
			slot = ExecProcNode(s->ps);
			if (TupIsNull(slot))
				return false;
			s->rows++;
			if (!row_hash(s, slot, &hash))
			{
				if (st->jointype == JOIN_LEFT || st->jointype == JOIN_ANTI)
				{
					st->cur = slot;
					st->cand = JOIN_NO_ENTRY;
					st->matched = false;
					return true;
				}
				continue;
			}
			p = partition_of(st, hash);
			s->counts[p]++;
			if (p == 0 && st->resident)
			{
				st->cur = slot;
				st->cur_hash = hash;
				st->cand = table_next_match(&st->table, table_first(&st->table, hash), hash);
				st->matched = false;
				return true;
			}
			if (!round_needed(st, p))
				continue;
			/* a value log keeps every row a later pass may read again */
			if (!s->by_tid)
				ref = vlog_ref(s, slot);
			if (s->writing[p])
				log_entry(s, p, hash, s->by_tid ? heap_ref(s) : ref);
			continue;
		}

		/* a rescan of the outer input, or a read of its value log */
		slot = reread_next(st, s, &st->vscan, &ref);
		if (slot == NULL)
			return false;
		if (!row_hash(s, slot, &hash))
			continue;			/* emitted by the first pass */
		p = partition_of(st, hash);
		if (p != st->round)
		{
			if (s->writing[p])
				log_entry(s, p, hash, ref);
			continue;
		}
		if (piece_of(st, hash) != st->piece)
			continue;
		st->cur = slot;
		st->cur_hash = hash;
		st->cand = table_next_match(&st->table, table_first(&st->table, hash), hash);
		st->matched = false;
		return true;
	}
}

/*
 * start_join
 *		The first fetch: read the inner input, then start the outer one.
 */
static void
start_join(BraidJoinState *st)
{
	INSTR_TIME_SET_CURRENT(st->started);
	first_inner_pass(st);
	st->source = OUTER_FIRST_PASS;
	st->round = 0;
	st->piece = 0;
	st->npieces = 1;
	st->phase = JOIN_PROBING;
}

/* elapsed_ms: milliseconds since st->started, which it resets. */
static double
elapsed_ms(BraidJoinState *st)
{
	instr_time	now;
	double		ms;

	INSTR_TIME_SET_CURRENT(now);
	ms = INSTR_TIME_GET_MILLISEC(now) - INSTR_TIME_GET_MILLISEC(st->started);
	st->started = now;
	return ms;
}

/*
 * join_exec
 *		Return the next joined row.
 */
static TupleTableSlot *
join_exec(CustomScanState *node)
{
	BraidJoinState *st = (BraidJoinState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ExprState  *otherqual = node->ss.ps.qual;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	ResetExprContext(econtext);
	if (st->phase == JOIN_DONE)
		return NULL;
	if (st->phase == JOIN_START)
		start_join(st);

	for (;;)
	{
		if (st->cur != NULL)
		{
			econtext->ecxt_outertuple = st->cur;
			while (st->cand != JOIN_NO_ENTRY)
			{
				const BraidJoinEntry *e = &st->table.entries[st->cand];

				st->cand = table_next_match(&st->table, st->table.next[st->cand], st->cur_hash);
				econtext->ecxt_innertuple = fetch_row(st, &st->inner, e->ref);
				if (!ExecQual(st->hashclauses, econtext))
				{
					ResetExprContext(econtext);
					continue;
				}
				if (st->joinqual != NULL && !ExecQual(st->joinqual, econtext))
				{
					ResetExprContext(econtext);
					continue;
				}
				st->matched = true;
				if (st->jointype == JOIN_ANTI)
				{
					st->cand = JOIN_NO_ENTRY;
					break;
				}
				if (st->single_match)
					st->cand = JOIN_NO_ENTRY;
				if (otherqual == NULL || ExecQual(otherqual, econtext))
					return ExecProject(proj);
				InstrCountFiltered1(node, 1);
				ResetExprContext(econtext);
			}
			/* every candidate seen */
			if (!st->matched && (st->jointype == JOIN_LEFT || st->jointype == JOIN_ANTI))
			{
				st->matched = true;
				econtext->ecxt_innertuple = st->nullinner;
				if (otherqual == NULL || ExecQual(otherqual, econtext))
				{
					st->cur = NULL;
					return ExecProject(proj);
				}
				InstrCountFiltered1(node, 1);
			}
			st->cur = NULL;
		}

		if (next_outer(st))
			continue;
		/* this pass is over */
		if (st->source == OUTER_FIRST_PASS)
			st->first_ms += elapsed_ms(st);
		if (!next_round(st))
		{
			st->rounds_ms += elapsed_ms(st);
			st->phase = JOIN_DONE;
			table_reset(&st->table);
			braid_stats_count_join((int) st->mode, st->outer.rows + st->inner.rows);
			return NULL;
		}
	}
}

/* ------------------------------------------------------------------------
 * Set-up, end, rescan
 * ------------------------------------------------------------------------
 */

/*
 * begin_side
 *		One input: its child, hash keys and functions, and how its rows are
 *		found again.
 */
static void
begin_side(BraidJoinState *st, JoinSide *s, Plan *plan, List *keys, bool is_outer,
		   EState *estate, int eflags)
{
	ListCell   *lc;
	int			i = 0;

	s->is_outer = is_outer;
	s->name = is_outer ? "outer" : "inner";
	s->ps = ExecInitNode(plan, estate, eflags);
	s->by_tid = is_outer ? st->plan.outer_by_tid : st->plan.inner_by_tid;
	s->can_rescan = is_outer ? st->plan.outer_rescan : st->plan.inner_rescan;
	s->keycxt = CreateExprContext(estate);
	s->nkeys = list_length(keys);
	s->hashfns = palloc0(sizeof(FmgrInfo) * Max(s->nkeys, 1));
	s->collations = palloc0(sizeof(Oid) * Max(s->nkeys, 1));
	s->keys = NIL;
	foreach(lc, keys)
		s->keys = lappend(s->keys, ExecInitExpr((Expr *) lfirst(lc), &st->css.ss.ps));
	foreach(lc, st->plan.hashops)
	{
		RegProcedure left,
					right;

		if (!get_op_hash_functions(lfirst_oid(lc), &left, &right))
			elog(ERROR, "braidsort: no hash functions for operator %u", lfirst_oid(lc));
		fmgr_info(is_outer ? left : right, &s->hashfns[i]);
		s->collations[i] = list_nth_oid(st->plan.hashcolls, i);
		i++;
	}
	if (s->by_tid)
	{
		ScanState  *ss = (ScanState *) s->ps;

		s->rel = ss->ss_currentRelation;
		if (s->rel == NULL)
			elog(ERROR, "braidsort: %s input is not a table scan", s->name);
		s->fetchslot = ExecInitExtraTupleSlot(estate, RelationGetDescr(s->rel),
											  &TTSOpsHeapTuple);
		s->bufs = palloc(sizeof(Buffer) * JOIN_FETCH_PINS);
		s->blks = palloc(sizeof(BlockNumber) * JOIN_FETCH_PINS);
		for (int i = 0; i < JOIN_FETCH_PINS; i++)
			s->bufs[i] = InvalidBuffer;

		/*
		 * A table that fits in shared buffers stays there while the join
		 * fetches from it: remember where each block is (the sort's gather
		 * does the same, gather.c).  Blocks added since are looked up.
		 */
		if (!RelationUsesLocalBuffers(s->rel))
		{
			BlockNumber nblocks = RelationGetNumberOfBlocks(s->rel);

			if (nblocks > 0 && nblocks <= (BlockNumber) (NBuffers / 2))
			{
				s->recent = palloc0(sizeof(Buffer) * nblocks);
				s->nrecent = nblocks;
			}
		}
	}
	else
		s->vslot = ExecInitExtraTupleSlot(estate, ExecGetResultType(s->ps),
										  &TTSOpsMinimalTuple);
}

/*
 * setup_passes
 *		Partitions, logs and value logs for one execution (first fetch, or
 *		after a rescan): the mode's plan at the planned partition count.
 */
static void
setup_passes(BraidJoinState *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->passcxt);
	int			mi,
				mo;
	JoinSide   *sides[2] = {&st->outer, &st->inner};

	st->k = Max(st->plan.partitions, 1);
	st->resident = true;
	braid_jm_plan_sides(&st->model, st->mode, st->write_intensity, st->k, &mi, &mo);
	for (int j = 0; j < 2; j++)
	{
		JoinSide   *s = sides[j];
		double		rows = s->is_outer ? st->plan.outer_rows : st->plan.inner_rows;
		int			m = s->is_outer ? mo : mi;

		s->logs = palloc0(sizeof(BraidPartLog) * st->k);
		s->mat = palloc0(sizeof(bool) * st->k);
		s->writing = palloc0(sizeof(bool) * st->k);
		s->counts = palloc0(sizeof(uint64) * st->k);
		for (int p = 0; p < st->k; p++)
			braid_partlog_init(&s->logs[p], st->passcxt, sizeof(BraidJoinEntry),
							   (size_t) (rows / st->k * sizeof(BraidJoinEntry)), &s->dev);
		/* partitions 1..m are written by the first pass */
		for (int p = 1; p <= m && p < st->k; p++)
			s->writing[p] = true;
		if (!s->by_tid)
			braid_vlog_init(&s->vlog, st->passcxt, st->budget / 4, &s->dev);
		s->rows = 0;
	}
	st->chunk = palloc(sizeof(BraidJoinEntry) * JOIN_READ_CHUNK);
	MemoryContextSwitchTo(old);
	st->lazy_fired = false;
	st->lazy_round = -1;
	st->cur = NULL;
}

/*
 * join_begin
 *		Initialize both children, the expressions (now that the children
 *		exist), and the memory.
 */
static void
join_begin(CustomScanState *node, EState *estate, int eflags)
{
	BraidJoinState *st = (BraidJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *ps = &node->ss.ps;

	braid_join_unpack(cscan->custom_private, &st->plan);
	st->jointype = (JoinType) st->plan.jointype;
	st->single_match = st->plan.single_match;
	st->mode = (BraidJoinMode) st->plan.mode;
	st->write_intensity = st->plan.write_intensity;
	st->budget = Max(get_hash_memory_limit(), (size_t) 64 * 1024);
	braid_join_model_input(&st->plan, st->budget, &st->model);

	/*
	 * ExecInitCustomScan built the quals and projection before the children
	 * existed; rows come in slots of several kinds: build them again, and
	 * every expression, for any kind of slot.
	 */
	ps->outeropsset = true;
	ps->outeropsfixed = false;
	ps->inneropsset = true;
	ps->inneropsfixed = false;

	/* the children are read again by this node, never backwards */
	eflags &= ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	begin_side(st, &st->outer, outerPlan(cscan), (List *) linitial(cscan->custom_exprs),
			   true, estate, eflags);
	begin_side(st, &st->inner, innerPlan(cscan), (List *) lsecond(cscan->custom_exprs),
			   false, estate, eflags);
	outerPlanState(node) = st->outer.ps;
	innerPlanState(node) = st->inner.ps;

	ps->qual = ExecInitQual(cscan->scan.plan.qual, ps);
	ExecAssignProjectionInfo(ps, NULL);
	st->joinqual = ExecInitQual((List *) lthird(cscan->custom_exprs), ps);
	st->hashclauses = ExecInitQual((List *) lfourth(cscan->custom_exprs), ps);
	if (st->jointype == JOIN_LEFT || st->jointype == JOIN_ANTI)
		st->nullinner = ExecInitNullTupleSlot(estate, ExecGetResultType(st->inner.ps),
											  &TTSOpsVirtual);

	st->table.cxt = AllocSetContextCreate(CurrentMemoryContext, "BraidJoin table",
										  ALLOCSET_DEFAULT_SIZES);
	st->passcxt = AllocSetContextCreate(CurrentMemoryContext, "BraidJoin partitions",
										ALLOCSET_DEFAULT_SIZES);
	setup_passes(st);
	st->phase = JOIN_START;
}

/*
 * release_passes
 *		Remove every partition log and value log, drop the pins, free the
 *		table: after the join, at a rescan, at the end.
 */
static void
release_passes(BraidJoinState *st)
{
	JoinSide   *sides[2] = {&st->outer, &st->inner};

	for (int j = 0; j < 2; j++)
	{
		JoinSide   *s = sides[j];

		if (s->fetchslot)
			ExecClearTuple(s->fetchslot);
		if (s->bufs)
			for (int i = 0; i < JOIN_FETCH_PINS; i++)
			{
				if (BufferIsValid(s->bufs[i]))
					ReleaseBuffer(s->bufs[i]);
				s->bufs[i] = InvalidBuffer;
			}
		if (s->vslot)
			ExecClearTuple(s->vslot);
		if (s->logs)
			for (int p = 0; p < st->k; p++)
				braid_partlog_reset(&s->logs[p]);
		if (!s->by_tid)
			braid_vlog_reset(&s->vlog);
		s->logs = NULL;
		s->rowbuf = NULL;
		s->rowbuf_cap = 0;
	}
	table_reset(&st->table);
	MemoryContextReset(st->passcxt);
	st->cur = NULL;
}

/*
 * join_end
 *		Remove the spill files, shut down the children.
 */
static void
join_end(CustomScanState *node)
{
	BraidJoinState *st = (BraidJoinState *) node;

	release_passes(st);
	ExecEndNode(st->outer.ps);
	ExecEndNode(st->inner.ps);
}

/*
 * join_rescan
 *		Start over: the inputs are read again (their rows may differ).
 */
static void
join_rescan(CustomScanState *node)
{
	BraidJoinState *st = (BraidJoinState *) node;

	release_passes(st);
	setup_passes(st);
	st->phase = JOIN_START;
	st->rounds = 0;
	st->outer.rescans = st->inner.rescans = 0;
	/* a child with changed parameters is rescanned by ExecProcNode */
	if (st->outer.ps->chgParam == NULL)
		ExecReScan(st->outer.ps);
	if (st->inner.ps->chgParam == NULL)
		ExecReScan(st->inner.ps);
}

/* ------------------------------------------------------------------------
 * EXPLAIN
 * ------------------------------------------------------------------------
 */

/* show_quals: a list of quals as EXPLAIN shows a node's conditions. */
static void
show_quals(const char *label, List *quals, CustomScanState *node, List *ancestors,
		   ExplainState *es)
{
	List	   *context;
	bool		useprefix;
	char	   *text;

	if (quals == NIL)
		return;
	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	useprefix = es->verbose || list_length(es->rtable_names) > 1;
	text = deparse_expression((Node *) make_ands_explicit(quals), context, useprefix, false);
	ExplainPropertyText(label, text, es);
}

/* join_type_name: as EXPLAIN names a join's type. */
static const char *
join_type_name(JoinType jointype)
{
	switch (jointype)
	{
		case JOIN_INNER:
			return "Inner";
		case JOIN_LEFT:
			return "Left";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "?";
	}
}

/* explain_side: what ANALYZE saw of one input. */
static void
explain_side(BraidJoinState *st, JoinSide *s, ExplainState *es)
{
	int			mat = 0;
	char		label[64];
	const char *side = s->is_outer ? "Outer" : "Inner";

	if (s->mat != NULL)
		for (int p = 0; p < st->k; p++)
			if (s->mat[p])
				mat++;
	snprintf(label, sizeof(label), "%s Gather Source", side);
	ExplainPropertyText(label, s->by_tid ? "heap tid" : "value log", es);
	snprintf(label, sizeof(label), "%s Materialized Partitions", side);
	ExplainPropertyInteger(label, NULL, mat, es);
	snprintf(label, sizeof(label), "%s Rescans", side);
	ExplainPropertyInteger(label, NULL, s->rescans, es);
	snprintf(label, sizeof(label), "%s Device Bytes Written", side);
	ExplainPropertyInteger(label, NULL, (int64) s->dev.bytes_written, es);
	snprintf(label, sizeof(label), "%s Device Bytes Read", side);
	ExplainPropertyInteger(label, NULL, (int64) s->dev.bytes_read, es);
	snprintf(label, sizeof(label), "%s Device Lines Written", side);
	ExplainPropertyInteger(label, NULL, (int64) s->dev.lines_written, es);
	snprintf(label, sizeof(label), "%s Device Lines Read", side);
	ExplainPropertyInteger(label, NULL, (int64) s->dev.lines_read, es);
}

/*
 * join_explain
 *		ExplainCustomScan: the join's conditions, mode and partitions, and
 *		with ANALYZE what each input wrote, read and was rescanned.
 */
static void
join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BraidJoinState *st = (BraidJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	ExplainPropertyText("Join Type", join_type_name(st->jointype), es);
	show_quals("Hash Cond", (List *) lfourth(cscan->custom_exprs), node, ancestors, es);
	show_quals("Join Filter", (List *) lthird(cscan->custom_exprs), node, ancestors, es);
	ExplainPropertyText("Join Mode", braid_jm_mode_name(st->mode), es);
	if (st->write_intensity >= 0)
		ExplainPropertyFloat("Write Intensity", NULL, st->write_intensity, 2, es);
	else
		ExplainPropertyText("Write Intensity", "cost-optimal", es);
	ExplainPropertyInteger("Partitions", NULL,
						   es->analyze && st->phase != JOIN_START ? st->k : st->plan.partitions,
						   es);
	if (!es->analyze || st->phase == JOIN_START)
		return;
	ExplainPropertyInteger("Rounds", NULL, st->rounds, es);
	if (st->evicted)
		ExplainPropertyText("Partition 0", "written out (outgrew the memory)", es);
	if (st->lazy_fired)
		ExplainPropertyInteger("Lazy Materialized From Partition", NULL, st->lazy_round + 1, es);
	ExplainPropertyInteger("Peak Table Memory", "kB",
						   (int64) (st->table.peak_bytes + 1023) / 1024, es);
	explain_side(st, &st->outer, es);
	explain_side(st, &st->inner, es);
	if (es->timing)
	{
		ExplainPropertyFloat("First Pass Time", "ms", st->first_ms, 3, es);
		ExplainPropertyFloat("Rounds Time", "ms", st->rounds_ms, 3, es);
	}
}
