/*-------------------------------------------------------------------------
 *
 * sort_build.c
 *	  BUILD: every row of the input becomes an entry, handed to the sort's
 *	  strategy.
 *
 * For each row of the child (sort_input.c reads it) the build makes the
 * row's ref -- the heap TID and tuple length of the scan tuple, or the
 * place of the row appended to the value log -- and encodes its normalized
 * key, then hands the entry <key, ref> to the strategy chosen when the
 * node's path was set up (sort_state.h's BraidSortStrategy): MergePass
 * fills the IndexMap and writes runs (sort_runs.c), a write-limited mode
 * may keep the last budget-full in memory or offer the entry to a
 * selection (sort_wlimit.c).  The strategy says, when the build starts, how
 * many rows at the input's head make no entry (a segment sort leaves them
 * to selection passes): their keys are not encoded.  The build names no
 * strategy: the same loop serves them all.
 *
 * An adaptive sort that switched hands its rows over first
 * (sort_adaptive.c calls braid_build_row and braid_build_log_row for each
 * of them), then the build reads the child's.
 *
 * src/sort/sort_build.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "executor/tuptable.h"

#include "core/pool.h"
#include "sort/sort_state.h"

/*
 * braid_build_begin
 *		Before the first row: nothing taken yet, and the strategy told the
 *		build starts (rows_carried: rows an adaptive sort that switched
 *		hands over before the child's).
 */
void
braid_build_begin(BraidSortState *st, int64 rows_carried)
{
	st->path->build.rows_built = 0;
	st->path->build.tuple_bytes = 0;
	st->path->build.keyless_rows = st->strategy->start_build(st, rows_carried);
}

/*
 * braid_build_wants_key
 *		Whether the next row makes an entry, so that its key is wanted (a
 *		segment sort's head makes none).
 */
bool
braid_build_wants_key(const BraidSortState *st)
{
	return st->path->build.rows_built >= st->path->build.keyless_rows;
}

/*
 * count_row
 *		One more row taken: show the count now and then.
 */
static inline void
count_row(BraidSortState *st)
{
	if ((++st->path->build.rows_built & 4095) == 0)
		braid_progress_set_rows(&st->mon.progress, st->path->build.rows_built);
}

/*
 * braid_build_row
 *		A row whose ref is known (its tuple tuple_len bytes), with its key in
 *		the input's key buffer (len bytes) when "keyed" (else it makes no
 *		entry), to the strategy.
 */
void
braid_build_row(BraidSortState *st, uint64 ref, uint32 tuple_len, bool keyed, size_t len)
{
	const BraidKeyBuffer *kb = &st->input.keybuf;

	st->path->build.tuple_bytes += tuple_len;
	st->strategy->put(st, keyed ? kb->data : NULL, len, kb->sortable, ref);
	count_row(st);
}

/*
 * braid_build_log_row
 *		Value log form: keep the whole row (slot) in the value log, its key
 *		in an entry pointing to it.
 */
void
braid_build_log_row(BraidSortState *st, TupleTableSlot *slot)
{
	bool		keyed = braid_build_wants_key(st);
	uint64		ref;
	uint32		tuple_len;
	size_t		len = 0;

	if (TTS_IS_BUFFERTUPLE(slot) || TTS_IS_HEAPTUPLE(slot))
	{
		/*
		 * a table's row: to the log from its page, not through a copy (the
		 * slot's own tuple: nothing to free)
		 */
		HeapTuple	htup = ExecFetchSlotHeapTuple(slot, false, NULL);

		ref = braid_vlog_append_heap(&st->path->vlog, htup);
		tuple_len = htup->t_len - MINIMAL_TUPLE_OFFSET;
	}
	else if (TTS_IS_VIRTUAL(slot))
	{
		/* a projection's columns: formed straight into the log */
		slot_getallattrs(slot);
		ref = braid_vlog_append_values(&st->path->vlog, slot->tts_tupleDescriptor,
									   slot->tts_values, slot->tts_isnull, &tuple_len);
	}
	else
	{
		/* made in the per-tuple memory, reset after the row */
		MinimalTuple mtup = ExecFetchSlotMinimalTuple(slot, NULL);

		ref = braid_vlog_append(&st->path->vlog, mtup);
		tuple_len = mtup->t_len;
	}
	if (keyed)
		len = braid_input_slot_key(st, slot);
	braid_build_row(st, ref, tuple_len, keyed, len);
}

/*
 * braid_build_child
 *		Take every row of the child; returns the rows taken straight from
 *		the table scan (braid_input_fast_seqscan: "fast" if the node may),
 *		which its instrumentation has not counted.
 */
int64
braid_build_child(BraidSortState *st, SeqScanState *fast)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	int64		fast_rows = 0;

	for (;;)
	{
		TupleTableSlot *slot;
		MemoryContext old;

		slot = braid_input_next(st, fast, st->path->build.rows_built > 0, &fast_rows);
		if (slot == NULL)
			break;
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		if (st->cfg.value_log)
			braid_build_log_row(st, slot);
		else
		{
			bool		keyed = braid_build_wants_key(st);
			uint64		ref;
			uint32		tuple_len;
			size_t		len;

			len = braid_input_heap_row(st, slot, keyed, &ref, &tuple_len);
			braid_build_row(st, ref, tuple_len, keyed, len);
		}
		MemoryContextSwitchTo(old);
		ResetExprContext(econtext);
	}
	return fast_rows;
}

/*
 * braid_build_end
 *		After the last row: the count shown, no page faulted in ahead any
 *		more, the value log's last rows written.
 */
void
braid_build_end(BraidSortState *st)
{
	braid_progress_set_rows(&st->mon.progress, st->path->build.rows_built);
	braid_prefault_end();
	if (st->cfg.value_log)
		braid_vlog_finish(&st->path->vlog);
}
