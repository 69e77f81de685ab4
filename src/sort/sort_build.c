/*-------------------------------------------------------------------------
 *
 * sort_build.c
 *	  BUILD: the child's rows become IndexMap entries.
 *
 * For each row of the child the build encodes the normalized key (keys.c),
 * makes the row's ref -- the heap TID and tuple length of the scan tuple,
 * or the place of the row appended to the value log -- and appends an
 * entry <key prefix, ref> (braid_ovf_put keeps keys longer than the prefix).
 * The IndexMap grows by doubling within the budget; when it cannot, the
 * RUNS stage writes it out as a run (braid_spill_run) or, once the pipe is
 * on, swaps halves (braid_pipe_swap).
 *
 * A plain sequential scan is read straight from the table access method
 * after its first row (braid_build_fast_seqscan), which is what
 * ExecSeqScan would return, without its per-row calls.
 *
 * src/sort/sort_build.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "plan/keys.h"
#include "core/pool.h"
#include "sort/sort_state.h"

/*
 * braid_build_map_bytes
 *		The IndexMap's share of the budget, its entries' and their full
 *		keys': all of it, or half beside a value log (which keeps its rows
 *		in the other half until it spills).
 */
size_t
braid_build_map_bytes(const BraidSortState *st)
{
	return st->cfg.value_log ? st->cfg.budget / 2 : st->cfg.budget;
}

/*
 * braid_build_note_peak
 *		EXPLAIN's IndexMap Memory: the entries' room and the full keys kept
 *		aside, at their largest.
 */
void
braid_build_note_peak(BraidSortState *st)
{
	st->instr.peak_map_bytes = Max(st->instr.peak_map_bytes,
								   st->build.capacity * st->cfg.stride +
								   braid_ovf_bytes(&st->build.ovf));
}

/*
 * braid_build_resize
 *		Give the IndexMap room for "cap" entries, keeping those it holds
 *		(no more than cap).
 */
void
braid_build_resize(BraidSortState *st, size_t cap)
{
	Assert(st->build.nentries <= cap);
	/* a helper may still be faulting the entries' pages in */
	braid_prefault_end();
	st->build.capacity = cap;
	st->build.entries = repalloc_huge(st->build.entries, cap * st->cfg.stride);
}

/*
 * braid_build_split_limit
 *		The key store's limit once the budget is split: what the entries'
 *		room leaves (no more than split_cap of them).  Again whenever that
 *		room changes: grown, or whole again after a pipe's halves.
 */
void
braid_build_split_limit(BraidSortState *st)
{
	st->build.ovf.limit = braid_build_map_bytes(st) -
		Min(st->build.capacity, st->build.split_cap) * st->cfg.stride;
}

/*
 * grow_entries
 *		Make room for more entries within the budget; false if none left.
 */
static bool
grow_entries(BraidSortState *st)
{
	size_t		used = braid_ovf_bytes(&st->build.ovf);
	size_t		map = braid_build_map_bytes(st);
	size_t		room = map > used ? map - used : 0;
	size_t		limit;
	size_t		newcap;

	/*
	 * Within the IndexMap's budget (map_bytes), full encodings of long keys
	 * take what the entries leave; once they would push the total over
	 * it, add_entry splits it from then on (split_cap entries at most, the
	 * keys the rest).
	 */
	limit = room / st->cfg.stride;
	if (st->build.keys_split)
		limit = Min(limit, st->build.split_cap);

	if (st->build.capacity == 0)
		newcap = (size_t) Max(Min(st->cfg.est_rows * 1.05, 1e12), 1024.0);
	else
		newcap = st->build.capacity * 2;
	newcap = Min(newcap, limit);
	if (newcap <= st->build.capacity)
		return false;

	if (st->build.entries == NULL)
	{
		st->build.entries = MemoryContextAllocHuge(st->sortcxt, newcap * st->cfg.stride);

		/*
		 * A helper faults the fresh pages in ahead of the scan, which then
		 * finds them mapped instead of taking a page fault every 4 kB.
		 */
		braid_prefault_start(st->build.entries, newcap * st->cfg.stride, st->cfg.threads);
	}
	else
		st->build.entries = repalloc_huge(st->build.entries, newcap * st->cfg.stride);
	st->build.capacity = newcap;
	if (st->build.keys_split)
		braid_build_split_limit(st);
	return true;
}

/*
 * braid_build_place_entry
 *		Put one entry <key prefix, ref> at the end of the IndexMap, which has
 *		room for it, keeping the full key aside when the prefix is not all
 *		of it; returns the entry.  "sortable" is the key's memcmp-ordered
 *		head (BraidKeyBuffer.sortable), used with a collated key.
 */
uint8 *
braid_build_place_entry(BraidSortState *st, const uint8 *key, size_t len,
						size_t sortable, uint64 ref)
{
	uint8	   *entry = st->build.entries + st->build.nentries * st->cfg.stride;

	Assert(st->build.nentries < st->build.capacity);
	if (len > st->build.longest_key)
		st->build.longest_key = (uint32) len;
	if (st->cfg.collated)
	{
		/*
		 * Only the memcmp-ordered part goes in the prefix (equal parts tie,
		 * and the tie-break compares strings); the full key is kept aside.
		 */
		size_t		head = Min(sortable, (size_t) st->cfg.radix_keylen);
		uint64		loc = braid_ovf_append(&st->build.ovf, key, len);

		memcpy(entry, key + BRAID_COLLATED_HEADER, head);
		memset(entry + head, 0, st->cfg.radix_keylen - head);
		/* the full key's place, read by every comparison (no lookup) */
		memcpy(entry + st->cfg.radix_keylen, &loc, sizeof(loc));
		ref |= BRAID_REF_TRUNCATED;
		st->build.any_truncated = true;
	}
	else if (len <= st->cfg.keylen)
	{
		memcpy(entry, key, len);
		memset(entry + len, 0, st->cfg.keylen - len);
	}
	else
	{
		memcpy(entry, key, st->cfg.keylen);
		ref |= BRAID_REF_TRUNCATED;
		st->build.any_truncated = true;
		braid_ovf_put(&st->build.ovf, ref, key, len);
	}
	braid_entry_set_ref(entry, st->cfg.keylen, ref);
	st->build.nentries++;
	return entry;
}

/*
 * split_budget
 *		The entries' share of the IndexMap's budget, now that full keys kept
 *		aside share it: at most split_cap (braid_split_entries), and no
 *		more than the entries already have room for (sized from the row
 *		estimate, or grown) while the keys can take the rest, which is the
 *		key store's limit.  At a run's start, with no entry held (and the
 *		IndexMap whole, not in a pipe's halves), the room grows to a larger
 *		split_cap (the first split, from few keys, may have been smaller)
 *		while more rows than it holds are expected.
 */
static void
split_budget(BraidSortState *st)
{
	double		left = st->cfg.est_rows - (double) st->build.rows_built;

	st->build.keys_split = true;
	st->build.split_cap = braid_split_entries(st, braid_build_map_bytes(st));
	if (st->build.nentries == 0 && st->build.entries != NULL && !st->runset.pipe.on &&
		st->build.split_cap > st->build.capacity && left * 1.05 > (double) st->build.capacity)
		braid_build_resize(st, Max((size_t) Min((double) st->build.split_cap,
												Max(left * 1.05, 1.0)),
								   st->build.capacity));
	braid_build_split_limit(st);
}

/*
 * add_entry
 *		Append one row's entry to the IndexMap, spilling a run first if the
 *		IndexMap is full (or, in the write-limited modes that keep the last
 *		budget-full in memory, when the rows left are expected to fill it).
 */
static void
add_entry(BraidSortState *st, const uint8 *key, size_t len, uint64 ref)
{
	bool		aside;

	if (st->wl.flush_at >= 0 && st->wl.entries_added++ == st->wl.flush_at &&
		st->build.nentries > 0)
		braid_wl_flush_for_memory_run(st);

	if (st->build.nentries == st->build.capacity)
	{
		if (st->runset.pipe.on)
			braid_pipe_swap(st);
		else if (!grow_entries(st))
		{
			if (st->build.nentries == 0)
				elog(ERROR, "braidsort: budget too small for a single IndexMap entry");
			braid_spill_run(st);
			/* the split's room for the next run, before it is halved */
			if (st->build.keys_split)
				split_budget(st);
			braid_pipe_begin(st);
		}
	}

	/* full keys kept aside: the whole IndexMap again, made serially */
	aside = st->cfg.collated || len > st->cfg.keylen;
	if (aside && st->runset.pipe.on)
		braid_pipe_end(st);

	/*
	 * Keeping this key aside would take the IndexMap and the full keys
	 * beyond their budget (the key store grows by doubling): from now on
	 * the entries keep to their share (split_budget: from the average key
	 * so far, again at each run's start), their full keys to the rest (the
	 * store's limit), and a run is written first if the entries held fill
	 * their share or the key does not fit the rest.  Only a key larger
	 * than the keys' share is kept beyond it (with the entries beside it).
	 */
	braid_note_entry_key(st, len, aside);
	if (st->build.keys_split && st->build.nentries == 0)
		split_budget(st);
	if (aside)
	{
		bool		with_slot = !st->cfg.collated;
		size_t		map = braid_build_map_bytes(st);
		size_t		after = braid_ovf_bytes_after(&st->build.ovf, len, with_slot);

		if (st->build.capacity * st->cfg.stride + after > map)
		{
			size_t		share;

			if (!st->build.keys_split)
			{
				split_budget(st);
				after = braid_ovf_bytes_after(&st->build.ovf, len, with_slot);
			}
			share = Min(st->build.capacity, st->build.split_cap);
			if (st->build.nentries > 0 &&
				(st->build.nentries >= share || share * st->cfg.stride + after > map))
			{
				braid_spill_run(st);
				split_budget(st);
				share = Min(st->build.capacity, st->build.split_cap);
			}
			if (st->build.capacity > share)
				braid_build_resize(st, share);
		}
	}

	(void) braid_build_place_entry(st, key, len, st->build.keybuf.sortable, ref);
}

/*
 * braid_build_fast_seqscan
 *		The child, if it is a plain sequential scan whose rows the build may
 *		take straight from the table access method once the scan has begun:
 *		no quals, no projection, not parallel, no EvalPlanQual, and not
 *		instrumented beyond a row count (which the build then adds up).
 *		That is exactly what ExecSeqScan would return, without its few calls
 *		a row; NULL otherwise.
 */
SeqScanState *
braid_build_fast_seqscan(BraidSortState *st)
{
	PlanState  *child = st->child;
	Instrumentation *instr = child->instrument;

	if (st->cfg.value_log || st->cfg.keycols == NULL || !IsA(child, SeqScanState) ||
		child->qual != NULL || child->ps_ProjInfo != NULL ||
		child->plan->parallel_aware || child->state->es_epq_active != NULL)
		return NULL;
	if (instr && (instr->need_timer || instr->need_bufusage || instr->need_walusage))
		return NULL;
	return (SeqScanState *) child;
}

/*
 * braid_build_next_slot
 *		The child's next row, or NULL at its end.  After the first row since
 *		the scan began ("started"), which ExecProcNode fetches (beginning the
 *		scan or rescanning it for changed parameters), a plain table scan's
 *		own next tuple (braid_build_fast_seqscan), counted in *fast_rows.
 *		An adaptive sort that switched hands over the rows it read before
 *		(braid_adaptive_carry) ahead of the child's.
 */
TupleTableSlot *
braid_build_next_slot(BraidSortState *st, SeqScanState *fast, bool started,
					  int64 *fast_rows)
{
	TupleTableSlot *slot;

	/* an adaptive sort that switched: first the rows it had sorted */
	if (st->adapt.carrying && (slot = braid_adaptive_carry(st)) != NULL)
		return slot;
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
 * braid_build_heap_row
 *		Heap TID mode: the ref of the heap tuple the child just returned
 *		(slot is the child's output) and, with want_key, its key encoded into
 *		the key buffer; returns the key's length (0 without want_key) and
 *		the tuple's length in *tuple_len.
 */
size_t
braid_build_heap_row(BraidSortState *st, TupleTableSlot *slot, bool want_key,
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
		for (int i = 0; i < st->cfg.nkeys; i++)
			st->build.keyvals[i] = slot_getattr(scanslot, st->cfg.keycols[i], &st->build.keynulls[i]);
		return braid_encode_key(st->cfg.keys, st->cfg.nkeys, st->build.keyvals,
								st->build.keynulls, &st->build.keybuf);
	}
	/* the narrowed scan outputs exactly the keys */
	slot_getallattrs(slot);
	return braid_encode_key(st->cfg.keys, st->cfg.nkeys, slot->tts_values,
							slot->tts_isnull, &st->build.keybuf);
}

/*
 * braid_build_slot_key
 *		Value log mode: encode the key columns of a whole input row into the
 *		key buffer; returns the key's length.
 */
size_t
braid_build_slot_key(BraidSortState *st, TupleTableSlot *slot)
{
	for (int i = 0; i < st->cfg.nkeys; i++)
		st->build.keyvals[i] = slot_getattr(slot, st->cfg.keycols[i], &st->build.keynulls[i]);
	return braid_encode_key(st->cfg.keys, st->cfg.nkeys, st->build.keyvals,
							st->build.keynulls, &st->build.keybuf);
}

/*
 * braid_build_rows
 *		Take every row of the child into the IndexMap (spilling runs as it
 *		fills); returns the rows taken straight from the table scan
 *		(braid_build_fast_seqscan), which its instrumentation has not counted.
 *		In the write-limited modes, rows at the head of the input left to
 *		selection passes (segment) make no entry, and a lazy sort's build is
 *		its first selection pass (sort_wlimit.c).
 */
int64
braid_build_rows(BraidSortState *st, SeqScanState *fast)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	int64		fast_rows = 0;

	for (;;)
	{
		TupleTableSlot *slot;
		MemoryContext old;
		size_t		len = 0;
		uint64		ref;
		bool		want_key = st->build.rows_built >= st->wl.head_rows;
		bool		carried = st->adapt.carrying;

		slot = braid_build_next_slot(st, fast, st->build.rows_built > 0, &fast_rows);
		if (slot == NULL)
			break;
		carried = carried && slot == st->adapt.slot;

		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		if (carried && !st->cfg.value_log)
		{
			uint32		tuple_len;

			/* a row an adaptive sort held: its output row and its ref */
			len = braid_adaptive_carried_row(st, slot, want_key, &ref, &tuple_len);
			st->build.tuple_bytes += tuple_len;
		}
		else if (st->cfg.value_log)
		{
			bool		should_free;
			MinimalTuple mtup = ExecFetchSlotMinimalTuple(slot, &should_free);

			/* keep the whole row in the value log, its keys in the IndexMap */
			ref = braid_vlog_append(&st->vlog, mtup);
			st->build.tuple_bytes += mtup->t_len;
			if (want_key)
				len = braid_build_slot_key(st, slot);
		}
		else
		{
			uint32		tuple_len;

			len = braid_build_heap_row(st, slot, want_key, &ref, &tuple_len);
			st->build.tuple_bytes += tuple_len;
		}
		if (!want_key)
			st->wl.seg_hash += braid_wl_ref_hash(ref);	/* left to selection passes */
		else if (st->wl.selecting)
		{
			st->wl.seg_hash += braid_wl_ref_hash(ref);
			braid_wl_offer(st, st->build.keybuf.data, len, st->build.keybuf.sortable, ref);
		}
		else
			add_entry(st, st->build.keybuf.data, len, ref);
		MemoryContextSwitchTo(old);
		st->build.rows_built++;
		ResetExprContext(econtext);

		/* show the rows, and move a run being made on a helper along */
		if ((st->build.rows_built & 4095) == 0)
		{
			braid_progress_set_rows(&st->mon.progress, st->build.rows_built);
			if (st->runset.pipe.stage != PIPE_IDLE)
				braid_pipe_step(st, false);
		}
	}
	braid_progress_set_rows(&st->mon.progress, st->build.rows_built);
	braid_pipe_end(st);
	return fast_rows;
}
