/*-------------------------------------------------------------------------
 *
 * sort_input.c
 *	  The child's rows as the build and the selection passes read them:
 *	  the next row, its ref and its key encoded.
 *
 * A row's ref is the heap TID and tuple length of the scan tuple (heap TID
 * form: the row is refetched at gather time) or, in value log form, the
 * row's place in the log (sort_build.c appends it).  Its key is encoded
 * into the input's key buffer (plan/keys.c's encoders), from the scan
 * tuple's table columns, the narrowed scan's output, or the value log
 * row's columns.  A plain sequential scan is read straight from the table
 * access method after its first row (braid_input_fast_seqscan), which is
 * what ExecSeqScan would return, without its per-row calls.
 *
 * src/sort/sort_input.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/executor.h"
#include "executor/tuptable.h"

#include "plan/keys.h"
#include "sort/sort_state.h"

/*
 * braid_input_begin
 *		The key buffer and one row's key columns.
 */
void
braid_input_begin(BraidSortState *st)
{
	BraidSortInput *in = &st->input;

	in->keyvals = palloc(sizeof(Datum) * st->cfg.nkeys);
	in->keynulls = palloc(sizeof(bool) * st->cfg.nkeys);
	in->keybuf.cap = 256;
	in->keybuf.data = palloc(in->keybuf.cap);
}

/*
 * braid_input_fast_seqscan
 *		The child, if it is a plain sequential scan whose rows the build may
 *		take straight from the table access method once the scan has begun:
 *		no quals, no projection, no EvalPlanQual, and not instrumented
 *		beyond a row count (which the build then adds up).  That is exactly
 *		what ExecSeqScan would return, without its few calls a row; NULL
 *		otherwise.  A Parallel Seq Scan's (a shared sort's participant)
 *		too: its scan descriptor, set up before the first row, hands out
 *		the blocks of the shared scan (heap_getnextslot), as ExecSeqScan's
 *		does.
 */
SeqScanState *
braid_input_fast_seqscan(BraidSortState *st)
{
	PlanState  *child = st->child;
	Instrumentation *instr = child->instrument;

	if (st->cfg.value_log || st->cfg.keycols == NULL || !IsA(child, SeqScanState) ||
		child->qual != NULL || child->ps_ProjInfo != NULL ||
		child->state->es_epq_active != NULL)
		return NULL;
	if (instr && (instr->need_timer || instr->need_bufusage || instr->need_walusage))
		return NULL;
	return (SeqScanState *) child;
}

/*
 * braid_input_next
 *		The child's next row, or NULL at its end.  After the first row since
 *		the scan began ("started"), which ExecProcNode fetches (beginning the
 *		scan or rescanning it for changed parameters), a plain table scan's
 *		own next tuple (braid_input_fast_seqscan), counted in *fast_rows.
 */
TupleTableSlot *
braid_input_next(BraidSortState *st, SeqScanState *fast, bool started, int64 *fast_rows)
{
	TupleTableSlot *slot;

	if (fast != NULL && started && fast->ss.ss_currentScanDesc != NULL)
	{
		slot = fast->ss.ss_ScanTupleSlot;
		if (!table_scan_getnextslot(fast->ss.ss_currentScanDesc,
									ForwardScanDirection, slot))
			return NULL;
		(*fast_rows)++;
		return slot;
	}
	slot = ExecProcNode(st->child);
	return TupIsNull(slot) ? NULL : slot;
}

/*
 * braid_input_heap_row
 *		Heap TID mode: the ref of the heap tuple the child just returned
 *		(slot is the child's output) and, with want_key, its key encoded into
 *		the key buffer; returns the key's length (0 without want_key) and
 *		the tuple's length in *tuple_len.
 */
size_t
braid_input_heap_row(BraidSortState *st, TupleTableSlot *slot, bool want_key,
					 uint64 *ref, uint32 *tuple_len)
{
	TupleTableSlot *scanslot = ((ScanState *) st->child)->ss_ScanTupleSlot;
	HeapTuple	htup;

	/* TID and length of the heap tuple the child just returned */
	if (!TTS_IS_BUFFERTUPLE(scanslot) && !TTS_IS_HEAPTUPLE(scanslot))
		elog(ERROR, "braidsort: scan did not produce a heap tuple");
	htup = ((HeapTupleTableSlot *) scanslot)->tuple;
	if (htup == NULL || htup->t_len > BRAID_REF_LEN_MASK ||
		!ItemPointerIsValid(&scanslot->tts_tid))
		elog(ERROR, "braidsort: scan produced a tuple without a valid TID or length");
	*tuple_len = htup->t_len;
	*ref = braid_make_ref(ItemPointerGetBlockNumber(&scanslot->tts_tid),
						  ItemPointerGetOffsetNumber(&scanslot->tts_tid),
						  htup->t_len);
	if (!want_key)
		return 0;
	if (st->cfg.keycols)
	{
		/* the scan hands over its tuple: read the key columns */
		return braid_input_cols_key(st, scanslot, st->cfg.keycols);
	}
	/* the narrowed scan outputs exactly the keys */
	slot_getallattrs(slot);
	return braid_encode_key(st->cfg.keys, st->cfg.nkeys, slot->tts_values,
							slot->tts_isnull, &st->input.keybuf);
}

/*
 * braid_input_slot_key
 *		Value log mode: encode the key columns of a whole input row into the
 *		key buffer; returns the key's length.
 */
size_t
braid_input_slot_key(BraidSortState *st, TupleTableSlot *slot)
{
	return braid_input_cols_key(st, slot, st->cfg.keycols);
}

/*
 * braid_input_cols_key
 *		Encode the key columns "cols" of a row into the key buffer (the
 *		input's, or a carried row's sort columns); returns the key's length.
 */
size_t
braid_input_cols_key(BraidSortState *st, TupleTableSlot *slot, const AttrNumber *cols)
{
	BraidSortInput *in = &st->input;

	for (int i = 0; i < st->cfg.nkeys; i++)
		in->keyvals[i] = slot_getattr(slot, cols[i], &in->keynulls[i]);
	return braid_encode_key(st->cfg.keys, st->cfg.nkeys, in->keyvals, in->keynulls,
							&in->keybuf);
}
