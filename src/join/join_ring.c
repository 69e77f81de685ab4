/*-------------------------------------------------------------------------
 *
 * join_ring.c
 *	  BraidJoin's first pass over a heap scan's outer rows: partition 0's
 *	  rows read a few rows ahead of their probes.
 *
 * A probe takes three cache misses one after another: the row's bucket,
 * its first entry, and that entry's inner tuple (about 200 ns each here).
 * So partition 0's outer rows wait in a ring of JOIN_RING, each in its
 * page (one pin of our own per run of rows on a page), while those three
 * are asked into the cache in stages, and the misses of several rows
 * overlap.  The other partitions' rows are written or dropped as the
 * first pass without the ring does (join_pass.c).
 *
 * src/join/join_ring.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

#include "join/join_state.h"

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
	JoinRingItem *it = &st->ring.items[(st->ring.head + st->ring.n) % JOIN_RING];
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
		if (it->buf != st->ring.last_buf)
		{
			IncrBufferRefCount(it->buf);
			st->ring.pins++;
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
	st->ring.last_buf = it->buf;
	st->ring.n++;
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
	JoinRingItem *it = &st->ring.cur;

	if (!st->ring.cur_on)
		return;
	st->ring.cur_on = false;
	if (!BufferIsValid(it->buf))
	{
		ExecClearTuple(st->outer.fetch.fetchslot);
		heap_freetuple(it->copy);
	}
	else if (st->ring.n == 0 || st->ring.items[st->ring.head].buf != it->buf)
	{
		ExecClearTuple(st->outer.fetch.fetchslot);
		ReleaseBuffer(it->buf);
		st->ring.pins--;
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
	while (!st->ring.done && st->ring.n < JOIN_RING && st->ring.pins < JOIN_RING_PINS)
	{
		TupleTableSlot *slot = ExecProcNode(s->ps);
		uint32		hash;
		int64		key = 0;
		int			p;

		if (TupIsNull(slot))
		{
			st->ring.done = true;
			break;
		}
		CHECK_FOR_INTERRUPTS();
		s->instr.rows++;
		if (!join_row_hash(s, slot, &hash, st->cfg.exact_key ? &key : NULL))
		{
			if (st->cfg.jointype == JOIN_LEFT || st->cfg.jointype == JOIN_ANTI)
				ring_push(st, true, 0, 0);
			continue;
		}
		p = partition_of(st, s, hash);
		s->parts.counts[p]++;
		if (p == 0)
		{
			join_table_prefetch(&st->table, hash, false);
			ring_push(st, false, hash, key);
		}
		else if (join_parts_round_needed(st, p) && s->parts.writing[p])
			join_parts_log(s, p, hash, join_row_heap_pos(s), join_row_heap_ref(s));
	}
}

/*
 * join_ring_next
 *		The next outer row of the first pass, from the ring (false when the
 *		child and the ring are done).  For the rows after it in the ring,
 *		their first entries, and then the inner tuples those point to (or
 *		their line pointers, then tuples, when the entry does not say where
 *		the tuple is), are asked into the cache.  A row of an inner or semi
 *		join without a candidate is passed over before it is projected.
 */
bool
join_ring_next(BraidJoinState *st, JoinProbe *probe)
{
	JoinSide   *s = &st->outer;
	JoinRingItem *it;

	for (;;)
	{
		ring_fill(st);
		ring_retire(st);
		if (st->ring.n == 0)
			return false;
		st->ring.cur = st->ring.items[st->ring.head];
		st->ring.cur_on = true;
		st->ring.head = (st->ring.head + 1) % JOIN_RING;
		st->ring.n--;

		if (st->ring.n > JOIN_RING / 2)
		{
			it = &st->ring.items[(st->ring.head + JOIN_RING / 2) % JOIN_RING];
			if (!it->null_key)
				join_table_prefetch(&st->table, it->hash, true);
		}
		if (st->ring.n > JOIN_RING / 4 && !st->cfg.exact_key)
		{
			it = &st->ring.items[(st->ring.head + JOIN_RING / 4) % JOIN_RING];
			if (!it->null_key)
				join_row_prefetch_match(&st->inner, &st->table, it->hash, false);
		}
		if (st->ring.n > JOIN_RING / 8 && !st->cfg.exact_key)
		{
			it = &st->ring.items[(st->ring.head + JOIN_RING / 8) % JOIN_RING];
			if (!it->null_key)
				join_row_prefetch_match(&st->inner, &st->table, it->hash, true);
		}

		it = &st->ring.cur;
		probe->matched = false;
		if (it->null_key)
			probe->cand = JOIN_NO_ENTRY;
		else
		{
			probe->cur_hash = it->hash;
			probe->cur_key = it->key;
			probe->cand = join_table_first_match(&st->table, it->hash);
			if (probe->cand == JOIN_NO_ENTRY &&
				(st->cfg.jointype == JOIN_INNER || st->cfg.jointype == JOIN_SEMI))
				continue;
		}
		probe->cur = join_row_from_tuple(s, &it->tuple);
		return true;
	}
}

/*
 * join_ring_reset
 *		Drop the ring's pins and rows (a rescan, the end): each run's pin,
 *		the current row's first.
 */
void
join_ring_reset(BraidJoinState *st)
{
	Buffer		prev = InvalidBuffer;

	if (st->ring.cur_on && BufferIsValid(st->ring.cur.buf))
		prev = st->ring.cur.buf;
	st->ring.cur_on = false;
	for (int i = 0; i < st->ring.n; i++)
	{
		Buffer		b = st->ring.items[(st->ring.head + i) % JOIN_RING].buf;

		if (BufferIsValid(prev) && b != prev)
			ReleaseBuffer(prev);
		prev = b;
	}
	if (BufferIsValid(prev))
		ReleaseBuffer(prev);
	st->ring.n = st->ring.head = st->ring.pins = 0;
	st->ring.done = false;
	st->ring.last_buf = InvalidBuffer;
}
