/*-------------------------------------------------------------------------
 *
 * join_rows.c
 *	  BraidJoin's rows: their hash, their refs, and fetching them back.
 *
 * A row's hash is PostgreSQL's (each operator's own hash function for its
 * side, combined as ExecHashGetHashValue does).  Its ref is its heap TID
 * when its input is a plain heap scan -- fetched back from a pinned page and
 * projected as the child would -- or its place in the side's value log
 * (valuelog.c), written once.  Inputs are read again by rescanning the
 * child or reading the value log from its start.
 *
 * src/join/join_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"

#include "compat.h"
#include "join/join_state.h"
#include "core/refs.h"
#include "io/shmem.h"

/*
 * Blocks this backend's joins keep pinned, counted in the server's total
 * (braid_shared->join_held_blocks).  A join gives its count back when it
 * lets its pins go, or, when its query fails (the resource owner then drops
 * the pins), when the query's memory goes (held_reset_callback); whatever
 * is left goes back at transaction end and at exit.
 */
static uint64 backend_held_blocks = 0;
static bool held_callbacks_registered = false;

/* give_back_held: return held blocks to the server's total. */
static void
give_back_held(uint64 n)
{
	/* a transaction's end may have given them back already */
	n = Min(n, backend_held_blocks);
	if (n == 0)
		return;
	pg_atomic_fetch_sub_u64(&braid_shared->join_held_blocks, n);
	backend_held_blocks -= n;
}

/* held_xact_callback: a transaction's end gives back whatever is left. */
static void
held_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
		give_back_held(backend_held_blocks);
}

/* held_exit_callback: so does the backend's exit. */
static void
held_exit_callback(int code, Datum arg)
{
	give_back_held(backend_held_blocks);
}

/*
 * held_reset_callback
 *		The query's memory goes: a side that still counts held blocks lost
 *		its pins with a failed query (in a subtransaction, too): give the
 *		count back.
 */
static void
held_reset_callback(void *arg)
{
	JoinSide   *s = (JoinSide *) arg;

	give_back_held(s->fetch.nheld_pinned);
	s->fetch.nheld_pinned = 0;
	s->fetch.nblocks = 0;
}

/*
 * take_held_block
 *		Count one more block kept pinned in the server's total: false if that
 *		would pass a quarter of shared buffers (the side's other blocks are
 *		then pinned only while fetched from, as for a table that does not
 *		fit), so that joins never starve other queries of buffers.
 */
static bool
take_held_block(JoinSide *s)
{
	uint64		limit = JOIN_MAX_HELD_BLOCKS;

	if (s->fetch.held_full)
		return false;
	if (!held_callbacks_registered)
	{
		RegisterXactCallback(held_xact_callback, NULL);
		before_shmem_exit(held_exit_callback, (Datum) 0);
		held_callbacks_registered = true;
	}
	/* once full, the side stops asking: no atomics on a shared line per row */
	if (pg_atomic_read_u64(&braid_shared->join_held_blocks) >= limit)
	{
		s->fetch.held_full = true;
		return false;
	}
	if (pg_atomic_fetch_add_u64(&braid_shared->join_held_blocks, 1) >= limit)
	{
		pg_atomic_fetch_sub_u64(&braid_shared->join_held_blocks, 1);
		s->fetch.held_full = true;
		return false;
	}
	backend_held_blocks++;
	return true;
}

/* keep_held: block blk, pinned in buf (and counted), stays for the join. */
static void
keep_held(JoinSide *s, BlockNumber blk, Buffer buf)
{
	s->fetch.held[blk] = buf;
	s->fetch.nheld_pinned++;
	s->fetch.held_peak = Max(s->fetch.held_peak, s->fetch.nheld_pinned);
}

/*
 * held_page
 *		The page of block blk when the side keeps it pinned (pinning it now
 *		if it may), else NULL.
 */
static inline Page
held_page(JoinSide *s, BlockNumber blk)
{
	Buffer		buf;

	if (blk >= s->fetch.nblocks)
		return NULL;
	buf = s->fetch.held[blk];
	if (!BufferIsValid(buf))
	{
		if (!take_held_block(s))
			return NULL;
		/* a failed read leaves its count to the transaction's end */
		buf = ReadBufferExtended(s->fetch.rel, MAIN_FORKNUM, blk, RBM_NORMAL, NULL);
		keep_held(s, blk, buf);
	}
	return BufferGetPage(buf);
}

/*
 * join_row_hash
 *		The hash of a row's join keys, combined as ExecHashGetHashValue
 *		does; false when a key is NULL (the row never matches).  With key
 *		(exact-key joins, one key) also the key's exact form; when the join's
 *		partitions are by key range, the first key's in s->fetch.range_key.
 */
bool
join_row_hash(JoinSide *s, TupleTableSlot *slot, uint32 *hash, int64 *key)
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
		ExprState  *keyexpr = (ExprState *) lfirst(lc);
		bool		isnull;
		Datum		val;

		h = pg_rotate_left32(h, 1);
		val = ExecEvalExpr(keyexpr, econtext, &isnull);
		if (isnull)
			return false;
		h ^= DatumGetUInt32(FunctionCall1Coll(&s->hashfns[i], s->collations[i], val));
		if (key != NULL)
			*key = braid_join_exact_form(s->keytype, val);
		/* partitions by key range: the first key's form places the row */
		if (i == 0 && OidIsValid(s->rangetype))
			s->fetch.range_key = braid_join_exact_form(s->rangetype, val);
		i++;
	}
	*hash = h;
	return true;
}

/* join_row_heap_ref: the TID ref of the row a heap scan child just returned. */
uint64
join_row_heap_ref(JoinSide *s)
{
	TupleTableSlot *scanslot = ((ScanState *) s->ps)->ss_ScanTupleSlot;
	ItemPointer tid = &scanslot->tts_tid;

	if (!ItemPointerIsValid(tid))
		elog(ERROR, "braidsort: %s input row has no TID", s->name);
	return braid_make_ref(ItemPointerGetBlockNumber(tid),
						  ItemPointerGetOffsetNumber(tid), 0);
}

/*
 * join_row_heap_pos
 *		Where the row a heap scan child just returned is in its page, as an
 *		entry's pos (JOIN_POS_*), when the side keeps its blocks pinned: a
 *		pin of our own is added to the scan's before the scan lets the page
 *		go, so the tuple cannot move (pruning and defragmenting need the
 *		only pin) and its fetch needs no line pointer.  0 when the block is
 *		not held; its buffer is then remembered as the hint of its fetch
 *		(and of its prefetches, which need it before the first fetch).
 */
uint32
join_row_heap_pos(JoinSide *s)
{
	TupleTableSlot *scanslot = ((ScanState *) s->ps)->ss_ScanTupleSlot;
	BufferHeapTupleTableSlot *bslot;
	HeapTuple	tuple;
	BlockNumber blk;
	char	   *page;
	char	   *data;

	if (s->fetch.nblocks == 0 || !TTS_IS_BUFFERTUPLE(scanslot))
		return 0;
	bslot = (BufferHeapTupleTableSlot *) scanslot;
	tuple = bslot->base.tuple;
	if (tuple == NULL || !BufferIsValid(bslot->buffer) || BufferIsLocal(bslot->buffer))
		return 0;
	blk = ItemPointerGetBlockNumber(&scanslot->tts_tid);
	if (blk >= s->fetch.nblocks)
		return 0;
	if (!BufferIsValid(s->fetch.held[blk]) && !take_held_block(s))
	{
		s->fetch.recent[blk] = bslot->buffer;
		return 0;
	}
	if (!BufferIsValid(s->fetch.held[blk]))
	{
		IncrBufferRefCount(bslot->buffer);
		keep_held(s, blk, bslot->buffer);
	}
	else if (s->fetch.held[blk] != bslot->buffer)
		return 0;
	page = (char *) BufferGetPage(bslot->buffer);
	data = (char *) tuple->t_data;
	if (data < page || data + tuple->t_len > page + BLCKSZ ||
		tuple->t_len > 0x7FFF)
		return 0;
	return JOIN_POS_VALID | ((uint32) (data - page) << 15) | tuple->t_len;
}

/* join_row_vlog_ref: append a row to the side's value log, returning its ref. */
uint64
join_row_vlog_ref(JoinSide *s, TupleTableSlot *slot)
{
	bool		should_free;
	MinimalTuple mt = ExecFetchSlotMinimalTuple(slot, &should_free);
	uint64		ref = braid_vlog_append(&s->fetch.vlog, mt);

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

/* row_buffer: make the side's row buffer (in cxt) hold len bytes. */
static void
row_buffer(MemoryContext cxt, JoinSide *s, uint32 len)
{
	if (len > s->fetch.rowbuf_cap)
	{
		size_t		cap = Max((size_t) len, s->fetch.rowbuf_cap * 2);

		if (s->fetch.rowbuf)
			pfree(s->fetch.rowbuf);
		s->fetch.rowbuf = MemoryContextAllocHuge(cxt, cap);
		s->fetch.rowbuf_cap = cap;
	}
}

/*
 * copy_row
 *		A value-log row copied into the side's buffer (grown in cxt), so that
 *		it can be used after the device's read grant is given back.
 */
static MinimalTuple
copy_row(MemoryContext cxt, JoinSide *s, MinimalTuple tuple)
{
	row_buffer(cxt, s, tuple->t_len);
	memcpy(s->fetch.rowbuf, tuple, tuple->t_len);
	return (MinimalTuple) s->fetch.rowbuf;
}

/*
 * copy_out
 *		A value-log row on the device, read under a grant and copied out
 *		(unpacked, if it is packed) into the side's row buffer.
 */
static MinimalTuple
copy_out(MemoryContext cxt, JoinSide *s, uint64 ref)
{
	BraidReadScope scope = {0};
	BraidVlogRow row;

	/* the grant first: locating a long row reads its length */
	braid_read_scope_add(&scope, braid_vlog_ref_file(&s->fetch.vlog, ref));
	braid_read_scope_begin(&scope);
	braid_vlog_locate(&s->fetch.vlog, ref, &row);
	braid_spill_note_read(row.file, row.pos, row.pos + row.stored);
	row_buffer(cxt, s, row.len);
	(void) braid_vlog_row_copy(row.src, row.packed, row.len, s->fetch.rowbuf);
	braid_read_scope_end(&scope);
	return (MinimalTuple) s->fetch.rowbuf;
}

/*
 * join_row_from_tuple
 *		The side's output row for a heap tuple of its table (in a page the
 *		caller keeps pinned, or a copy): projected as the child would.
 */
TupleTableSlot *
join_row_from_tuple(JoinSide *s, HeapTuple tuple)
{
	ExecStoreHeapTuple(tuple, s->fetch.fetchslot, false);
	return project_child(s, s->fetch.fetchslot);
}

/*
 * join_row_fetch
 *		The side's output row for a ref: refetched from the table by TID (and
 *		projected as the child would), or read from the value log.  pos,
 *		when valid, says where the tuple is in its held page.
 */
TupleTableSlot *
join_row_fetch(BraidJoinState *st, JoinSide *s, uint64 ref, uint32 pos)
{
	s->instr.fetches++;
	if (pos & JOIN_POS_VALID)
	{
		BlockNumber blk = braid_ref_block(ref);

		/* the pin taken with the entry is kept until the entry is gone */
		if (unlikely(blk >= s->fetch.nblocks || !BufferIsValid(s->fetch.held[blk])))
			elog(ERROR, "braidsort: %s row (%u,%u) of \"%s\" lost its pinned page",
				 s->name, blk, braid_ref_offset(ref), RelationGetRelationName(s->fetch.rel));
		s->fetch.fetched.t_data = (HeapTupleHeader)
			((char *) BufferGetPage(s->fetch.held[blk]) + JOIN_POS_OFFSET(pos));
		s->fetch.fetched.t_len = JOIN_POS_LEN(pos);
		s->fetch.fetched.t_tableOid = RelationGetRelid(s->fetch.rel);
		ItemPointerSet(&s->fetch.fetched.t_self, blk, braid_ref_offset(ref));
		return join_row_from_tuple(s, &s->fetch.fetched);
	}
	if (s->by_tid)
	{
		BlockNumber blk = braid_ref_block(ref);
		OffsetNumber off = braid_ref_offset(ref);
		int			slot = (int) (blk % s->fetch.npins);
		Page		page;
		ItemId		lp;

		/*
		 * A held block stays pinned for the join (held_page).  Otherwise a
		 * page stays pinned until another one takes its slot: inner rows are
		 * fetched in hash order, all over the table, and the pages a
		 * partition's matches revisit are then not looked up in the buffer
		 * mapping each time; outer rows come in block order.  The pin keeps
		 * the page from being pruned or defragmented, and a visible tuple's
		 * data never change: it is read without the content lock.
		 */
		page = held_page(s, blk);
		if (page == NULL && (!BufferIsValid(s->fetch.bufs[slot]) || s->fetch.blks[slot] != blk))
		{
			if (BufferIsValid(s->fetch.bufs[slot]))
				ReleaseBuffer(s->fetch.bufs[slot]);
			s->fetch.bufs[slot] = InvalidBuffer;

			/*
			 * The buffer that held the block last time is pinned without the
			 * buffer mapping lookup, a shared hash probe and lock per fetch
			 * otherwise (as the sort's gather does).
			 */
			if (blk < s->fetch.nblocks && BufferIsValid(s->fetch.recent[blk]) &&
				ReadRecentBuffer(BRAID_REL_FILE(s->fetch.rel), MAIN_FORKNUM, blk, s->fetch.recent[blk]))
				s->fetch.bufs[slot] = s->fetch.recent[blk];
			else
			{
				s->fetch.bufs[slot] = ReadBufferExtended(s->fetch.rel, MAIN_FORKNUM, blk,
														 RBM_NORMAL, s->fetch.strategy);
				if (blk < s->fetch.nblocks)
					s->fetch.recent[blk] = s->fetch.bufs[slot];
			}
			s->fetch.blks[slot] = blk;
		}
		if (page == NULL)
			page = BufferGetPage(s->fetch.bufs[slot]);
		if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page) ||
			!ItemIdIsNormal(lp = PageGetItemId(page, off)))
			elog(ERROR, "braidsort: %s row (%u,%u) of \"%s\" is gone",
				 s->name, blk, off, RelationGetRelationName(s->fetch.rel));
		s->fetch.fetched.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		s->fetch.fetched.t_len = ItemIdGetLength(lp);
		s->fetch.fetched.t_tableOid = RelationGetRelid(s->fetch.rel);
		ItemPointerSet(&s->fetch.fetched.t_self, blk, off);
		return join_row_from_tuple(s, &s->fetch.fetched);
	}
	else
	{
		MinimalTuple tuple;

		if (s->fetch.vlog.on_device)
		{
			tuple = copy_out(st->passcxt, s, ref);
		}
		else
			tuple = braid_vlog_get(&s->fetch.vlog, ref);
		return ExecStoreMinimalTuple(tuple, s->fetch.vslot, false);
	}
}

/*
 * join_row_prefetch
 *		Ask for a row soon fetched by TID to be brought into the cache, when
 *		its block's buffer is known (held, or the hint of ReadRecentBuffer):
 *		its line pointer, or (a later call, the line pointer cached by then)
 *		its tuple, so that the fetch does not wait for memory.  Only a hint:
 *		a buffer that is not held may hold another block by then, and then
 *		whatever its line pointer says is prefetched, harmlessly.  A row
 *		whose pos is known has its tuple prefetched at once.
 */
void
join_row_prefetch(JoinSide *s, uint64 ref, uint32 pos, bool tuple)
{
	BlockNumber blk;
	Buffer		buf;
	char	   *page;
	ItemId		lp;

	if (!s->by_tid)
		return;
	blk = braid_ref_block(ref);
	if (pos & JOIN_POS_VALID)
	{
		if (!tuple && blk < s->fetch.nblocks && BufferIsValid(buf = s->fetch.held[blk]))
		{
			page = (char *) BufferGetPage(buf) + JOIN_POS_OFFSET(pos);
			__builtin_prefetch(page);
			if (JOIN_POS_LEN(pos) > 64)
				__builtin_prefetch(page + 64);
		}
		return;
	}
	if (blk >= s->fetch.nblocks)
		return;
	buf = s->fetch.held[blk];
	/* a block not held (the limit was reached): its hint */
	if (!BufferIsValid(buf))
		buf = s->fetch.recent[blk];
	if (!BufferIsValid(buf) || BufferIsLocal(buf))
		return;
	if (braid_ref_offset(ref) < FirstOffsetNumber ||
		braid_ref_offset(ref) > MaxHeapTuplesPerPage)
		return;
	page = (char *) BufferGetPage(buf);
	lp = (ItemId) (page + offsetof(PageHeaderData, pd_linp)) + (braid_ref_offset(ref) - 1);
	if (!tuple)
		__builtin_prefetch(lp);
	else if (ItemIdIsNormal(lp) && ItemIdGetOffset(lp) < BLCKSZ)
		__builtin_prefetch(page + ItemIdGetOffset(lp));
}

/*
 * join_row_reread_next
 *		The next row of a pass over an input again: its child rescanned, or
 *		its value log read from the start; NULL at the end.  *ref is the
 *		row's ref.
 */
TupleTableSlot *
join_row_reread_next(BraidJoinState *st, JoinSide *s, BraidVlogScan *vscan, uint64 *ref)
{
	if (s->by_tid)
	{
		TupleTableSlot *slot = ExecProcNode(s->ps);

		if (TupIsNull(slot))
			return NULL;
		*ref = join_row_heap_ref(s);
		return slot;
	}
	else
	{
		MinimalTuple tuple;
		BraidReadScope scope = {0};
		bool		gated = s->fetch.vlog.on_device && s->fetch.vlog.nsegs > 0;

		if (gated)
		{
			for (int i = 0; i < s->fetch.vlog.nsegs; i++)
				braid_read_scope_add(&scope, s->fetch.vlog.segs[i]);
			braid_read_scope_begin(&scope);
		}
		tuple = braid_vlog_scan_next(&s->fetch.vlog, vscan, ref);
		/* a row read in place from the device: copied too */
		if (tuple != NULL && gated && !vscan->copied)
			tuple = copy_row(st->passcxt, s, tuple);
		else if (tuple == NULL)
			braid_vlog_scan_end(&s->fetch.vlog, vscan);
		if (gated)
			braid_read_scope_end(&scope);
		if (tuple == NULL)
			return NULL;
		return ExecStoreMinimalTuple(tuple, s->fetch.vslot, false);
	}
}

/* join_row_reread_begin: start a pass over an input again. */
void
join_row_reread_begin(JoinSide *s, BraidVlogScan *vscan)
{
	s->instr.rescans++;
	if (s->by_tid)
		ExecReScan(s->ps);
	else
		braid_vlog_scan_begin(&s->fetch.vlog, vscan);
}

/*
 * join_row_begin_fetch
 *		Set up a side's fetches: a slot for heap tuples and the pins of a
 *		heap-scan input, a slot for value-log rows otherwise.
 */
void
join_row_begin_fetch(JoinSide *s, EState *estate)
{
	if (s->by_tid)
	{
		ScanState  *ss = (ScanState *) s->ps;

		s->fetch.rel = ss->ss_currentRelation;
		if (s->fetch.rel == NULL)
			elog(ERROR, "braidsort: %s input is not a table scan", s->name);
		s->fetch.fetchslot = ExecInitExtraTupleSlot(estate, RelationGetDescr(s->fetch.rel),
													&TTSOpsHeapTuple);

		/*
		 * The outer rows of a sequential or bitmap scan are fetched in block
		 * order (a partition's entries are in scan order): those of blocks
		 * not held take one pin, given up before the next is taken, which
		 * stays in the backend's few fast pin-count slots instead of the hash
		 * table that holds the rest (PrivateRefCount in bufmgr.c).  An index
		 * scan's are not in block order.
		 */
		s->fetch.npins = s->is_outer && (IsA(s->ps, SeqScanState) ||
										 IsA(s->ps, BitmapHeapScanState)) ? 1 : JOIN_FETCH_PINS;

		/*
		 * A temporary table lives in the session's few local buffers (as few
		 * as 100): pin few of those, as the sort's gather does (two chunks of
		 * 8), or the scans and other nodes could find none left to read into.
		 */
		if (RelationUsesLocalBuffers(s->fetch.rel))
			s->fetch.npins = Min(s->fetch.npins, JOIN_FETCH_LOCAL_PINS);
		s->fetch.bufs = palloc(sizeof(Buffer) * s->fetch.npins);
		s->fetch.blks = palloc(sizeof(BlockNumber) * s->fetch.npins);
		for (int i = 0; i < s->fetch.npins; i++)
			s->fetch.bufs[i] = InvalidBuffer;

		/*
		 * A table that fits in shared buffers stays there while the join
		 * fetches from it: remember where each block is (the sort's gather
		 * does the same, sort/tid_gather.c).  Blocks added since are looked
		 * up.
		 */
		if (!RelationUsesLocalBuffers(s->fetch.rel))
		{
			BlockNumber nblocks = RelationGetNumberOfBlocks(s->fetch.rel);

			/*
			 * The inner rows are fetched all over the table, each block many
			 * times, and the outer rows of each written partition in a pass
			 * of their own over the table's blocks: when the table takes at
			 * most half of shared buffers, each block is pinned once, as a
			 * row of it is read, and kept (its pages are then read as the
			 * executor reads a scan's pinned page), saving a pin and unpin,
			 * the buffer header's spinlock and the line pointer per fetch.
			 * All joins together keep at most a quarter of shared buffers
			 * (take_held_block; the inner input, read first, before the
			 * outer): a larger table has its first blocks held, and the
			 * blocks past the limit are fetched as below.
			 */
			if (nblocks > 0 && nblocks <= (BlockNumber) (NBuffers / 2))
			{
				s->fetch.held = palloc0(sizeof(Buffer) * nblocks);
				s->fetch.recent = palloc0(sizeof(Buffer) * nblocks);
				s->fetch.nblocks = nblocks;
				s->fetch.held_cb.func = held_reset_callback;
				s->fetch.held_cb.arg = s;
				MemoryContextRegisterResetCallback(estate->es_query_cxt, &s->fetch.held_cb);
			}

			/*
			 * A larger outer table under a sequential scan is read again,
			 * block by block, in every round: through a ring of buffers, as
			 * the scan reads it, so that each round does not push everything
			 * else out of shared buffers (PostgreSQL's own batches never pass
			 * through them).  Not under a bitmap scan (PostgreSQL gives those
			 * no ring either: they may touch few of the pages).  Its memory
			 * goes with the query's context.
			 */
			else if (nblocks > 0 && s->is_outer && IsA(s->ps, SeqScanState))
				s->fetch.strategy = GetAccessStrategy(BAS_BULKREAD);
		}
	}
	else
		s->fetch.vslot = ExecInitExtraTupleSlot(estate, ExecGetResultType(s->ps),
												&TTSOpsMinimalTuple);
}

/*
 * join_row_hold_blocks
 *		Keep every block of the side's table pinned (those not held yet), in
 *		block order, within the server's limit (take_held_block); the number
 *		of leading blocks now held.  For processes partitioning the inner
 *		input together (join_shared.c): pinned while the process whose scan
 *		read a block still holds it, a block's tuples cannot have moved since
 *		that process noted their places in its entries (pos), so that the
 *		entries' places hold here too.
 */
BlockNumber
join_row_hold_blocks(JoinSide *s)
{
	BlockNumber b;

	for (b = 0; b < s->fetch.nblocks; b++)
	{
		if ((b & 255) == 0)
			CHECK_FOR_INTERRUPTS();
		if (held_page(s, b) == NULL)
			break;
	}
	return b;
}

/*
 * join_row_release_fetch
 *		Drop a side's pins and the rows its slots hold (after the join, at a
 *		rescan, at the end).
 */
void
join_row_release_fetch(JoinSide *s)
{
	if (s->fetch.fetchslot)
		ExecClearTuple(s->fetch.fetchslot);
	if (s->fetch.bufs)
		for (int i = 0; i < s->fetch.npins; i++)
		{
			if (BufferIsValid(s->fetch.bufs[i]))
				ReleaseBuffer(s->fetch.bufs[i]);
			s->fetch.bufs[i] = InvalidBuffer;
		}
	if (s->fetch.nheld_pinned > 0)
	{
		uint64		released = 0;

		for (BlockNumber b = 0; b < s->fetch.nblocks; b++)
			if (BufferIsValid(s->fetch.held[b]))
			{
				ReleaseBuffer(s->fetch.held[b]);
				s->fetch.held[b] = InvalidBuffer;
				released++;
			}
		Assert(released == s->fetch.nheld_pinned);
		s->fetch.nheld_pinned = 0;
		give_back_held(released);
	}
	s->fetch.held_full = false;
	if (s->fetch.vslot)
		ExecClearTuple(s->fetch.vslot);
}

/*
 * join_row_prefetch_match
 *		Ask for the inner row of a hash's first matching entry in table t
 *		(its bucket in the cache by now: the entries before it are passed
 *		over in the same line; the bucket's first entry is another hash's in
 *		many buckets, and its row the wrong one to prefetch) to be brought
 *		into the cache: its tuple when the entry says where it is, else its
 *		line pointer; then (second, a few rows later) the tuple of an entry
 *		that does not say.  s is the inner side.
 */
void
join_row_prefetch_match(JoinSide *s, const JoinTable *t, uint32 hash, bool second)
{
	uint32		i = join_table_first_match(t, hash);
	const BraidJoinEntry *e;

	if (i == JOIN_NO_ENTRY)
		return;
	e = &t->entries[i];
	if (!second)
		join_row_prefetch(s, e->ref, e->pos, false);
	else if (!(e->pos & JOIN_POS_VALID))
		join_row_prefetch(s, e->ref, 0, true);
}

/*
 * join_row_setup
 *		One execution's value log, for an input that keeps its rows in one
 *		(vlog_bytes of memory before it spills, in cxt).
 */
void
join_row_setup(JoinSide *s, MemoryContext cxt, size_t vlog_bytes)
{
	if (side_has_vlog(s))
		braid_vlog_init(&s->fetch.vlog, cxt, vlog_bytes, &s->instr.dev);
}

/*
 * join_row_release
 *		After an execution: its pins dropped, its value log removed.
 */
void
join_row_release(JoinSide *s)
{
	join_row_release_fetch(s);
	if (side_has_vlog(s))
		braid_vlog_reset(&s->fetch.vlog);
	s->fetch.rowbuf = NULL;
	s->fetch.rowbuf_cap = 0;
}
