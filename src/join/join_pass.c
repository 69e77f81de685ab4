/*-------------------------------------------------------------------------
 *
 * join_pass.c
 *	  BraidJoin's passes: the first pass over both inputs, and the rounds
 *	  that join the partitions left.
 *
 * See join_node.c for the design.  The first pass reads the inner input
 * (partition 0 into the table, the other partitions' entries written or
 * dropped as the mode says), then the outer input, probing partition 0 with
 * the row in hand (over a heap scan, a few rows behind the scan: the ring,
 * so that the probes' cache misses overlap).  Each round loads one partition's (piece's) inner
 * entries, from its log or by a rescan, and gives its outer rows, from its
 * log or by a rescan; lazy decides before each round whether its rescans
 * write the rest.
 *
 * src/join/join_pass.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

#include "guc.h"
#include "join/join_state.h"

/* budget_entries: the entries the table takes within the budget, and one. */
static uint32
budget_entries(const BraidJoinState *st)
{
	return (uint32) Min(st->budget / JOIN_TABLE_ENTRY_BYTES + 1, (size_t) PG_UINT32_MAX / 4);
}

/* log_entry: append an entry to partition p's log of a side. */
static void
log_entry(JoinSide *s, int p, uint32 hash, uint32 pos, uint64 ref)
{
	BraidJoinEntry e;

	e.hash = hash;
	e.pos = pos;
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
	join_table_reset(t);
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

	/* partition 0's entries go no further than the budget (evict_resident) */
	st->table.grow_limit = budget_entries(st);
	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(s->ps);
		uint32		hash;
		int64		key = 0;
		uint64		ref;
		uint32		pos = 0;
		int			p;

		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		s->rows++;
		if (!join_row_hash(s, slot, &hash, s->key_refs ? &key : NULL))
			continue;
		p = partition_of(st, s, hash);
		s->counts[p]++;
		/* a value log keeps every row (a later pass may read it again) */
		if (!(p == 0 && st->resident) && !s->writing[p] && !side_has_vlog(s))
			continue;
		if (s->key_refs)
			ref = (uint64) key;
		else if (s->by_tid)
		{
			ref = join_row_heap_ref(s);
			pos = join_row_heap_pos(s);
		}
		else
			ref = join_row_vlog_ref(s, slot);
		if (p == 0 && st->resident)
		{
			BraidJoinEntry e = {hash, pos, ref};

			join_table_add(&st->table, &e);
			if (join_table_bytes(st->table.n) > st->budget)
				evict_resident(st);
		}
		else if (s->writing[p])
			log_entry(s, p, hash, pos, ref);
	}
	if (side_has_vlog(s))
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
		join_table_build(&st->table);
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

	join_table_reset(&st->table);
	/*
	 * A whole partition's count is known: no room wasted by doubling.  A
	 * piece's is only about its share: its array doubles, but no further
	 * than the budget in its last step (past it, a skewed piece, it doubles
	 * again).
	 */
	st->table.grow_limit = budget_entries(st);
	if (st->npieces == 1)
		join_table_reserve(&st->table, (uint32) Min(s->counts[p], (uint64) PG_UINT32_MAX / 4));
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
					join_table_add(&st->table, &st->chunk[i]);
		}
	}
	else
	{
		BraidVlogScan vscan;
		TupleTableSlot *slot;
		uint64		ref;

		join_row_reread_begin(s, &vscan);
		while ((slot = join_row_reread_next(st, s, &vscan, &ref)) != NULL)
		{
			uint32		hash;
			uint32		pos = 0;
			int64		key = 0;
			int			q;

			CHECK_FOR_INTERRUPTS();
			if (!join_row_hash(s, slot, &hash, s->key_refs ? &key : NULL))
				continue;
			if (s->key_refs)
				ref = (uint64) key;
			q = partition_of(st, s, hash);
			if (q == p)
			{
				if (piece_of(st, hash) == st->piece)
				{
					BraidJoinEntry e;

					if (s->by_tid && !s->key_refs)
						pos = join_row_heap_pos(s);
					e.hash = hash;
					e.pos = pos;
					e.ref = ref;
					join_table_add(&st->table, &e);
				}
			}
			else if (s->writing[q])
			{
				if (s->by_tid && !s->key_refs)
					pos = join_row_heap_pos(s);
				log_entry(s, q, hash, pos, ref);
			}
		}
		finish_writing(st, s);
	}
	join_table_build(&st->table);
}

/*
 * join_pass_next_round
 *		Set up the next round (or piece of one): load its inner entries and
 *		start its outer rows.  False when every partition is done.
 */
bool
join_pass_next_round(BraidJoinState *st)
{
	JoinSide   *o = &st->outer;
	bool		first = st->source == OUTER_FIRST_PASS;
	int			p;

	/* the pass that ended may have written partitions for lazy */
	finish_writing(st, o);
	/* after the first pass, the outer value log is read back */
	if (first && side_has_vlog(o))
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
		join_row_reread_begin(o, &st->vscan);
	}
	return true;
}

/*
 * prefetch_inner
 *		Ask for the inner row of a hash's first matching entry (its bucket
 *		in the cache by now: the entries before it are passed over in the
 *		same line; the bucket's first entry is another hash's in many buckets,
 *		and its row the wrong one to prefetch) to be brought into the
 *		cache: its tuple when the entry says where it is, else its line
 *		pointer; then (second, a few rows later) the tuple of an entry that
 *		does not say.
 */
static void
prefetch_inner(BraidJoinState *st, uint32 hash, bool second)
{
	uint32		i = join_table_first_match(&st->table, hash);
	const BraidJoinEntry *e;

	if (i == JOIN_NO_ENTRY)
		return;
	e = &st->table.entries[i];
	if (!second)
		join_row_prefetch(&st->inner, e->ref, e->pos, false);
	else if (!(e->pos & JOIN_POS_VALID))
		join_row_prefetch(&st->inner, e->ref, 0, true);
}

/*
 * prefetch_ahead
 *		A round reading its outer entries: bring what the rows a few entries
 *		ahead will need into the cache while this one is joined (each a
 *		cache miss otherwise, the outer rows in block order, the inner ones
 *		anywhere).  Each stage needs what the one before brought in: the
 *		bucket and the outer row's line pointer, then the bucket's first
 *		entry and the outer tuple, then the inner tuple (or its line
 *		pointer, and then its tuple, when the entry does not say where it
 *		is).  Entries of the round's other pieces are skipped: they are not
 *		joined in this one.
 */
static void
prefetch_ahead(BraidJoinState *st)
{
	JoinSide   *o = &st->outer;
	const BraidJoinEntry *ahead;
	int			at = st->chunk_pos;

	if (at + JOIN_PREFETCH_AHEAD < st->chunk_n &&
		in_piece(st, (ahead = &st->chunk[at + JOIN_PREFETCH_AHEAD])->hash))
	{
		join_table_prefetch(&st->table, ahead->hash, false);
		join_row_prefetch(o, ahead->ref, ahead->pos, false);
	}
	if (at + JOIN_PREFETCH_AHEAD / 2 < st->chunk_n &&
		in_piece(st, (ahead = &st->chunk[at + JOIN_PREFETCH_AHEAD / 2])->hash))
	{
		join_table_prefetch(&st->table, ahead->hash, true);
		join_row_prefetch(o, ahead->ref, ahead->pos, true);
	}
	if (st->exact_key)
		return;
	if (at + JOIN_PREFETCH_AHEAD / 4 < st->chunk_n &&
		in_piece(st, st->chunk[at + JOIN_PREFETCH_AHEAD / 4].hash))
		prefetch_inner(st, st->chunk[at + JOIN_PREFETCH_AHEAD / 4].hash, false);
	if (at + JOIN_PREFETCH_AHEAD / 8 < st->chunk_n &&
		in_piece(st, st->chunk[at + JOIN_PREFETCH_AHEAD / 8].hash))
		prefetch_inner(st, st->chunk[at + JOIN_PREFETCH_AHEAD / 8].hash, true);
}

/* ------------------------------------------------------------------------
 * The first pass's ring: partition 0's outer rows read ahead of their probes
 * ------------------------------------------------------------------------
 */

/*
 * ring_push
 *		Put the outer child's current row into the ring, in its page: a pin
 *		of our own is taken for each run of rows on one page (the scan moves
 *		on before the row is probed), a copy made where the row is not in a
 *		buffer.
 */
static void
ring_push(BraidJoinState *st, bool null_key, uint32 hash, int64 key)
{
	JoinSide   *s = &st->outer;
	TupleTableSlot *scanslot = ((ScanState *) s->ps)->ss_ScanTupleSlot;
	JoinRingItem *it = &st->ring[(st->ring_head + st->ring_n) % JOIN_RING];
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) scanslot;

	it->null_key = null_key;
	it->hash = hash;
	it->key = key;
	if (TTS_IS_BUFFERTUPLE(scanslot) && BufferIsValid(bslot->buffer) &&
		bslot->base.tuple != NULL)
	{
		it->tuple = *bslot->base.tuple;
		it->buf = bslot->buffer;
		it->copy = NULL;
		if (it->buf != st->ring_last_buf)
		{
			IncrBufferRefCount(it->buf);
			st->ring_pins++;
		}
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(st->passcxt);
		HeapTuple	copy = ExecCopySlotHeapTuple(scanslot);

		MemoryContextSwitchTo(old);
		it->tuple = *copy;
		it->buf = InvalidBuffer;
		it->copy = copy;
	}
	st->ring_last_buf = it->buf;
	st->ring_n++;
}

/*
 * ring_retire
 *		The current row is done with: its page's pin goes when it was the
 *		last row of its run (the next one in the ring is on another page, or
 *		none will come), a copy is freed.
 */
static void
ring_retire(BraidJoinState *st)
{
	JoinRingItem *it = &st->ring_cur;

	if (!st->ring_cur_on)
		return;
	st->ring_cur_on = false;
	if (!BufferIsValid(it->buf))
	{
		ExecClearTuple(st->outer.fetchslot);
		heap_freetuple(it->copy);
	}
	else if (st->ring_n == 0 || st->ring[st->ring_head].buf != it->buf)
	{
		ExecClearTuple(st->outer.fetchslot);
		ReleaseBuffer(it->buf);
		st->ring_pins--;
	}
}

/*
 * ring_fill
 *		Read the outer child until the ring is full (or holds JOIN_RING_PINS
 *		pages pinned; the current row's is one of them, so an empty ring
 *		can always take a row): partition 0's rows (and
 *		rows with NULL keys that LEFT and ANTI emit unmatched) go into it,
 *		their buckets asked into the cache; the other partitions' entries
 *		are written or dropped as in the first pass without the ring.
 */
static void
ring_fill(BraidJoinState *st)
{
	JoinSide   *s = &st->outer;

	/* a few pages at most: rows of partition 0 may be on as many pages */
	while (!st->ring_done && st->ring_n < JOIN_RING && st->ring_pins < JOIN_RING_PINS)
	{
		TupleTableSlot *slot = ExecProcNode(s->ps);
		uint32		hash;
		int64		key = 0;
		int			p;

		if (TupIsNull(slot))
		{
			st->ring_done = true;
			break;
		}
		CHECK_FOR_INTERRUPTS();
		s->rows++;
		if (!join_row_hash(s, slot, &hash, st->exact_key ? &key : NULL))
		{
			if (st->jointype == JOIN_LEFT || st->jointype == JOIN_ANTI)
				ring_push(st, true, 0, 0);
			continue;
		}
		p = partition_of(st, s, hash);
		s->counts[p]++;
		if (p == 0)
		{
			join_table_prefetch(&st->table, hash, false);
			ring_push(st, false, hash, key);
		}
		else if (round_needed(st, p) && s->writing[p])
			log_entry(s, p, hash, join_row_heap_pos(s), join_row_heap_ref(s));
	}
}

/*
 * ring_next
 *		The next outer row of the first pass, from the ring (false when the
 *		child and the ring are done).  For the rows after it in the ring,
 *		their first entries, and then the inner tuples those point to (or
 *		their line pointers, then tuples, when the entry does not say where
 *		the tuple is), are asked into the cache.  A row of an inner or semi
 *		join without a candidate is passed over before it is projected.
 */
static bool
ring_next(BraidJoinState *st)
{
	JoinSide   *s = &st->outer;
	JoinRingItem *it;

	for (;;)
	{
		ring_fill(st);
		ring_retire(st);
		if (st->ring_n == 0)
			return false;
		st->ring_cur = st->ring[st->ring_head];
		st->ring_cur_on = true;
		st->ring_head = (st->ring_head + 1) % JOIN_RING;
		st->ring_n--;

		if (st->ring_n > JOIN_RING / 2)
		{
			it = &st->ring[(st->ring_head + JOIN_RING / 2) % JOIN_RING];
			if (!it->null_key)
				join_table_prefetch(&st->table, it->hash, true);
		}
		if (st->ring_n > JOIN_RING / 4 && !st->exact_key)
		{
			it = &st->ring[(st->ring_head + JOIN_RING / 4) % JOIN_RING];
			if (!it->null_key)
				prefetch_inner(st, it->hash, false);
		}
		if (st->ring_n > JOIN_RING / 8 && !st->exact_key)
		{
			it = &st->ring[(st->ring_head + JOIN_RING / 8) % JOIN_RING];
			if (!it->null_key)
				prefetch_inner(st, it->hash, true);
		}

		it = &st->ring_cur;
		st->matched = false;
		if (it->null_key)
			st->cand = JOIN_NO_ENTRY;
		else
		{
			st->cur_hash = it->hash;
			st->cur_key = it->key;
			st->cand = join_table_first_match(&st->table, it->hash);
			if (st->cand == JOIN_NO_ENTRY &&
				(st->jointype == JOIN_INNER || st->jointype == JOIN_SEMI))
				continue;
		}
		st->cur = join_row_from_tuple(s, &it->tuple);
		return true;
	}
}

/*
 * join_pass_ring_reset
 *		Drop the ring's pins and rows (a rescan, the end): each run's pin,
 *		the current row's first.
 */
void
join_pass_ring_reset(BraidJoinState *st)
{
	Buffer		prev = InvalidBuffer;

	if (st->ring_cur_on && BufferIsValid(st->ring_cur.buf))
		prev = st->ring_cur.buf;
	st->ring_cur_on = false;
	for (int i = 0; i < st->ring_n; i++)
	{
		Buffer		b = st->ring[(st->ring_head + i) % JOIN_RING].buf;

		if (BufferIsValid(prev) && b != prev)
			ReleaseBuffer(prev);
		prev = b;
	}
	if (BufferIsValid(prev))
		ReleaseBuffer(prev);
	st->ring_n = st->ring_head = st->ring_pins = 0;
	st->ring_done = false;
	st->ring_last_buf = InvalidBuffer;
}

/*
 * join_pass_next_outer
 *		The next outer row to probe with (set as st->cur with its hash and
 *		first candidate); false when the current pass has no more.  The
 *		first pass also writes the other partitions' entries, and emits
 *		nothing for rows with NULL keys but sets them up as unmatched rows
 *		for LEFT and ANTI.
 */
bool
join_pass_next_outer(BraidJoinState *st)
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

			prefetch_ahead(st);
			if (!in_piece(st, e->hash))
				continue;
			first = join_table_first_match(&st->table, e->hash);
			/* an inner or semi join needs the row only if its hash matches */
			if (first == JOIN_NO_ENTRY &&
				(st->jointype == JOIN_INNER || st->jointype == JOIN_SEMI))
				continue;
			st->cur = join_row_fetch(st, s, e->ref, e->pos);
			/* exact keys: the row's key, compared with the inner entries' */
			if (st->exact_key && !join_row_hash(s, st->cur, &hash, &st->cur_key))
				elog(ERROR, "braidsort: outer row of a written partition has a NULL key");
			st->cur_hash = e->hash;
			st->cand = first;
			st->matched = false;
			return true;
		}

		if (st->source == OUTER_FIRST_PASS && st->ring_on)
			return ring_next(st);
		if (st->source == OUTER_FIRST_PASS)
		{
			slot = ExecProcNode(s->ps);
			if (TupIsNull(slot))
				return false;
			s->rows++;
			if (!join_row_hash(s, slot, &hash, st->exact_key ? &st->cur_key : NULL))
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
			p = partition_of(st, s, hash);
			s->counts[p]++;
			if (p == 0 && st->resident)
			{
				st->cur = slot;
				st->cur_hash = hash;
				st->cand = join_table_first_match(&st->table, hash);
				st->matched = false;
				return true;
			}
			if (!round_needed(st, p))
				continue;
			/* a value log keeps every row a later pass may read again */
			if (side_has_vlog(s))
				ref = join_row_vlog_ref(s, slot);
			if (s->writing[p])
				log_entry(s, p, hash, s->by_tid ? join_row_heap_pos(s) : 0,
						  s->by_tid ? join_row_heap_ref(s) : ref);
			continue;
		}

		/* a rescan of the outer input, or a read of its value log */
		slot = join_row_reread_next(st, s, &st->vscan, &ref);
		if (slot == NULL)
			return false;
		if (!join_row_hash(s, slot, &hash, st->exact_key ? &st->cur_key : NULL))
			continue;			/* emitted by the first pass */
		p = partition_of(st, s, hash);
		if (p != st->round)
		{
			if (s->writing[p])
				log_entry(s, p, hash, s->by_tid ? join_row_heap_pos(s) : 0, ref);
			continue;
		}
		if (!in_piece(st, hash))
			continue;
		st->cur = slot;
		st->cur_hash = hash;
		st->cand = join_table_first_match(&st->table, hash);
		st->matched = false;
		return true;
	}
}

/*
 * join_pass_start
 *		The first fetch: read the inner input, then start the outer one.
 */
void
join_pass_start(BraidJoinState *st)
{
	INSTR_TIME_SET_CURRENT(st->started);
	first_inner_pass(st);
	st->source = OUTER_FIRST_PASS;

	/*
	 * Partition 0's outer rows of a heap scan are probed a few rows behind
	 * the scan (the ring), so that their cache misses overlap.
	 */
	join_pass_ring_reset(st);
	st->ring_on = st->outer.by_tid && st->resident && braid_join_read_ahead;
	st->round = 0;
	st->piece = 0;
	st->npieces = 1;
	st->phase = JOIN_PROBING;
}
