/*-------------------------------------------------------------------------
 *
 * sort_select.c
 *	  The selection passes of the segment and lazy sorts: each pass reads
 *	  the rows left to it again and keeps the next budget-full of smallest
 *	  entries, the next chunk of a run the final merge reads but nothing
 *	  writes.
 *
 * Selection order is total: key, then ref (refs are unique within a sort:
 * heap TIDs or value-log places, the same in every pass).  A pass keeps its
 * candidates in the IndexMap (sort_map.c), which it reuses; when it is full
 * it is sorted, its larger half dropped, and from then on only candidates
 * below the largest kept one (the cutoff) are admitted.  At the end of the
 * pass every candidate kept is smaller than everything not kept, so all of
 * them are emitted: a chunk of between half and all of the candidate room
 * (fewer with long keys, whose full keys share the room:
 * make_candidate_room).  The last one emitted is the bound below which the
 * next pass drops everything.
 *
 * A pass re-reads the input by rescanning the child when it is a plain,
 * non-parallel heap scan (same snapshot and start block: the same rows in
 * the same order; the pass checks the rows' count and refs), else from the
 * value log, or, once a lazy sort has written the entries left (the entry
 * log, written during one pass), from there.  No other child is ever run
 * twice.  The strategy that runs the passes, and decides when lazy writes
 * its entry log, is sort_wlimit.c's.
 *
 * src/sort/sort_select.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "core/varint.h"
#include "io/device.h"
#include "io/iosched.h"
#include "plan/keys.h"
#include "sort/sort_state.h"

/* Entry log segments: at least this size (the last may be larger). */
#define ENTRY_LOG_SEGMENT ((size_t) 16 * 1024 * 1024)

/* An entry log is read this much at a time, ahead of the pass. */
#define ENTRY_LOG_READ_CHUNK ((size_t) 65536)

/*
 * braid_select_begin
 *		Set the selection up when the node's path is: a candidate's scratch
 *		prefix.
 */
void
braid_select_begin(BraidSortState *st)
{
	memset(&st->path->sel, 0, sizeof(st->path->sel));
	st->path->sel.scratch = palloc0(st->cfg.stride);
}

/*
 * braid_select_start
 *		Before a build: no pass made, nothing emitted, and the room of a
 *		pass's candidates: at most "cap" of them, within "room" bytes with
 *		their full keys.
 */
void
braid_select_start(BraidSortState *st, size_t cap, size_t room)
{
	BraidSelection *sel = &st->path->sel;

	sel->seg_rows = 0;
	sel->seg_hash = 0;
	sel->emitted = 0;
	sel->passes = 0;
	sel->has_bound = false;
	sel->has_cutoff = false;
	sel->materializing = false;
	sel->materialized = false;
	sel->cap = cap;
	sel->room = room;
	sel->keys_split = false;
}

/*
 * braid_select_note_row
 *		A row of the segment that made no entry now (the head of a segment
 *		sort), or was offered: its ref counts towards the check that every
 *		pass reads the same rows.
 */
void
braid_select_note_row(BraidSortState *st, uint64 ref)
{
	st->path->sel.seg_hash += braid_wl_ref_hash(ref);
}

/*
 * braid_select_set_rows
 *		The rows of the selection segment, once the build has counted them.
 */
void
braid_select_set_rows(BraidSortState *st, int64 rows)
{
	st->path->sel.seg_rows = rows;
}

/*
 * key_compare
 *		Selection order of two keys given as their prefix (radix_keylen
 *		bytes), their full key (NULL when the keylen-byte prefix is all of
 *		it) and their ref: key order as the IndexMap sort and the merge
 *		have it, then ref.
 */
static int
key_compare(const BraidSortState *st,
			const uint8 *pa, const uint8 *fa, uint32 la, uint64 ra,
			const uint8 *pb, const uint8 *fb, uint32 lb, uint64 rb)
{
	int			c = memcmp(pa, pb, st->cfg.radix_keylen);

	if (c != 0)
		return c;
	if (fa != NULL || fb != NULL)
	{
		const uint8 *ka = fa ? fa : pa;
		const uint8 *kb = fb ? fb : pb;

		if (fa == NULL)
			la = st->cfg.keylen;
		if (fb == NULL)
			lb = st->cfg.keylen;
		if (st->cfg.collated)
			c = braid_compare_collated(ka, la, kb, lb, st->cfg.keys, st->cfg.nkeys, NULL);
		else
		{
			c = memcmp(ka, kb, Min(la, lb));
			if (c == 0)
				c = (la > lb) - (la < lb);
		}
		if (c != 0)
			return c;
	}
	return (ra > rb) - (ra < rb);
}

/* entry_view: an IndexMap entry's full key (or NULL) and its bare ref. */
static const uint8 *
entry_view(const BraidSortState *st, const uint8 *entry, uint32 *len, uint64 *ref)
{
	uint64		r = braid_entry_ref(entry, st->cfg.keylen);

	*ref = r & ~BRAID_REF_TRUNCATED;
	if (!st->cfg.collated && (r & BRAID_REF_TRUNCATED) == 0)
	{
		*len = 0;
		return NULL;
	}
	return braid_map_full_key(st, entry, len);
}

/*
 * copy_entry
 *		Keep a copy of an entry and its full key (the bound, the cutoff),
 *		independent of the IndexMap and its overflow store.
 */
static void
copy_entry(BraidSortState *st, const uint8 *entry, uint8 **dst, uint8 **key,
		   uint32 *len, size_t *cap)
{
	uint64		ref;
	uint32		klen;
	const uint8 *full = entry_view(st, entry, &klen, &ref);

	if (*dst == NULL)
		*dst = MemoryContextAlloc(st->sortcxt, st->cfg.stride);
	memcpy(*dst, entry, st->cfg.stride);
	if (full == NULL)
	{
		*len = 0;
		return;
	}
	if (*key == NULL || *cap < klen)
	{
		if (*key)
			pfree(*key);
		*cap = Max((size_t) klen, (size_t) 64);
		*key = MemoryContextAllocHuge(st->sortcxt, *cap);
	}
	memcpy(*key, full, klen);
	*len = klen;
}

/* copy_compare: a candidate against a kept copy (bound or cutoff). */
static int
copy_compare(const BraidSortState *st, const uint8 *prefix, const uint8 *full,
			 uint32 len, uint64 ref, const uint8 *copy, const uint8 *copy_key,
			 uint32 copy_len)
{
	uint64		cref = braid_entry_ref(copy, st->cfg.keylen);
	bool		cfull = st->cfg.collated || (cref & BRAID_REF_TRUNCATED);

	return key_compare(st, prefix, full, len, ref,
					   copy, cfull ? copy_key : NULL, copy_len, cref & ~BRAID_REF_TRUNCATED);
}

/*
 * ref_cmp
 *		qsort_arg order of entries with equal keys: by ref (the stride's
 *		last 8 bytes; "arg" is the key length).
 */
static int
ref_cmp(const void *a, const void *b, void *arg)
{
	uint32		keylen = *(const uint32 *) arg;
	uint64		ra = braid_entry_ref(a, keylen) & ~BRAID_REF_TRUNCATED;
	uint64		rb = braid_entry_ref(b, keylen) & ~BRAID_REF_TRUNCATED;

	return (ra > rb) - (ra < rb);
}

/*
 * sort_total
 *		Sort the candidates in selection order: the IndexMap's sort (key
 *		order), then each stretch of equal keys by ref.
 */
static void
sort_total(BraidSortState *st)
{
	uint8	   *e = st->path->map.entries;
	size_t		n = st->path->map.nentries;
	uint32		stride = st->cfg.stride;
	size_t		i = 0;

	/* the candidates' prefixes are compared with offers' later: not ranked */
	braid_map_sort(st, false);
	while (i < n)
	{
		size_t		j = i + 1;

		while (j < n &&
			   memcmp(e + (j - 1) * stride, e + j * stride, st->cfg.radix_keylen) == 0 &&
			   braid_map_tiebreak(e + (j - 1) * stride, e + j * stride, st) == 0)
			j++;
		if (j - i > 1)
			qsort_arg(e + i * stride, j - i, stride, ref_cmp, &st->cfg.keylen);
		i = j;
	}
}

/*
 * compact
 *		The candidates fill their room: keep the smaller half, and admit
 *		only candidates below the largest kept from now on.
 */
static void
compact(BraidSortState *st)
{
	BraidSelection *sel = &st->path->sel;
	size_t		keep = Max(st->path->map.nentries / 2, (size_t) 1);

	braid_map_note_peak(st);
	sort_total(st);
	braid_map_keep_first(st, keep);
	copy_entry(st, st->path->map.entries + (keep - 1) * st->cfg.stride,
			   &sel->cutoff, &sel->cutoff_key, &sel->cutoff_len, &sel->cutoff_cap);
	sel->has_cutoff = true;
}

/* pass_room: the bytes a pass's candidates and their full keys keep to. */
static size_t
pass_room(const BraidSortState *st)
{
	return Max(st->path->sel.room, st->path->sel.cap * st->cfg.stride);
}

/*
 * split_room
 *		The candidates' share of the pass's room, now that full keys kept
 *		aside share it (braid_map_split_entries), and the rest as the key
 *		store's limit.
 */
static void
split_room(BraidSortState *st)
{
	BraidSelection *sel = &st->path->sel;
	size_t		room = pass_room(st);

	sel->keys_split = true;
	sel->split_cap = Min(braid_map_split_entries(st, room), sel->cap);
	braid_map_set_key_limit(st, room - sel->split_cap * st->cfg.stride);
}

/*
 * candidate_room
 *		Make sure the candidates' IndexMap is allocated: room for sel->cap
 *		entries (half the budget; the gather's arena has the other half), or
 *		for sel->split_cap once full keys kept aside share the pass's room
 *		(make_candidate_room).
 */
static void
candidate_room(BraidSortState *st)
{
	size_t		cap;

	/* candidates held stay where they are */
	if (st->path->map.entries != NULL && st->path->map.nentries > 0)
		return;
	/* at a pass's start: the split from the averages so far */
	if (st->path->sel.keys_split)
		split_room(st);
	cap = st->path->sel.keys_split ? st->path->sel.split_cap : st->path->sel.cap;
	if (st->path->map.entries != NULL && st->path->map.capacity == cap)
		return;
	braid_map_alloc(st, cap);
}

/*
 * below_cutoff
 *		Does the candidate (its prefix, full key or NULL, ref) come before
 *		the cutoff the last compact set?
 */
static bool
below_cutoff(BraidSortState *st, const uint8 *prefix, const uint8 *full, size_t len,
			 uint64 ref)
{
	BraidSelection *sel = &st->path->sel;

	return copy_compare(st, prefix, full, (uint32) len, ref,
						sel->cutoff, sel->cutoff_key, sel->cutoff_len) < 0;
}

/*
 * make_candidate_room
 *		Room for one more candidate (its prefix, and its full key of "len"
 *		bytes when kept aside: "full" not NULL); false if candidates had to
 *		be dropped and the new one is not below the new cutoff either.  The
 *		candidates and their full keys keep within the pass's room
 *		(sel->room bytes), as a build's entries and keys keep within the
 *		budget (braid_runs_put), checked before the key store grows (it grows by
 *		doubling): once the keys would pass it the candidates keep to
 *		sel->split_cap (split_room: from the average key offered so far in
 *		the sort, again at each pass's start), their keys to the rest (the
 *		store's limit), and the larger half of the candidates is dropped
 *		(compact) as often as it takes.  Only the keys of one or two
 *		candidates (one held and the new one) may take it beyond the room.
 */
static bool
make_candidate_room(BraidSortState *st, const uint8 *prefix, const uint8 *full,
					size_t len, uint64 ref)
{
	BraidSelection *sel = &st->path->sel;
	size_t		stride = st->cfg.stride;
	size_t		room = pass_room(st);

	if (st->path->map.nentries >= st->path->map.capacity)
	{
		compact(st);
		if (!below_cutoff(st, prefix, full, len, ref))
			return false;
	}
	while (full != NULL)
	{
		size_t		after = braid_map_key_bytes_after(st, len);

		if (st->path->map.capacity * stride + after <= room)
			break;
		if (!sel->keys_split)
		{
			bool		dropped = false;

			split_room(st);
			if (st->path->map.capacity > sel->split_cap)
			{
				/*
				 * Room for the new one among fewer, the IndexMap shrunk
				 * before anything returns (candidate_room would drop it
				 * whole).
				 */
				while (st->path->map.nentries >= sel->split_cap)
				{
					compact(st);
					dropped = true;
				}
				braid_map_note_peak(st);
				braid_map_resize(st, sel->split_cap);
				if (dropped && !below_cutoff(st, prefix, full, len, ref))
					return false;
			}
			continue;
		}
		if (st->path->map.nentries <= 1)
			break;
		compact(st);
		if (!below_cutoff(st, prefix, full, len, ref))
			return false;
	}
	/* never reached (capacity is at least 2): never written past, either */
	if (st->path->map.nentries >= st->path->map.capacity)
		elog(ERROR, "braidsort: no room for a selection candidate (%zu of %zu)",
			 st->path->map.nentries, st->path->map.capacity);
	return true;
}

/*
 * entry_log_append
 *		Lazy, in the pass that materializes: write a candidate above the
 *		bound to the entry log, as [len][sortable] varints, the ref (8
 *		bytes), the key.
 */
static void
entry_log_append(BraidSortState *st, const uint8 *key, size_t len, size_t sortable,
				 uint64 ref)
{
	BraidSelection *sel = &st->path->sel;
	uint8		head[32];
	size_t		h = 0;

	/* (keys are varlena-sized: far below 4 GB) */
	h += braid_varint_put(head + h, (uint32) len);
	h += braid_varint_put(head + h, (uint32) sortable);
	memcpy(head + h, &ref, sizeof(ref));
	h += sizeof(ref);

	if (sel->elog_cur == NULL ||
		sel->elog_cur->written + sel->elog_cur->staged + h + len > sel->elog_cur->size)
	{
		MemoryContext old = MemoryContextSwitchTo(st->sortcxt);

		if (sel->elog_cur)
			braid_spill_finish(sel->elog_cur);
		sel->elog_cur = braid_spill_create(Max(ENTRY_LOG_SEGMENT, h + len), &st->instr.device);
		sel->elog.segs = lappend(sel->elog.segs, sel->elog_cur);
		MemoryContextSwitchTo(old);
	}
	braid_spill_write(sel->elog_cur, head, h);
	braid_spill_write(sel->elog_cur, key, len);
	sel->elog.entries++;
}

/*
 * braid_select_offer
 *		A row's key and ref, to the selection under way: dropped unless it
 *		comes after the bound (and before the cutoff), else kept among the
 *		candidates.
 */
void
braid_select_offer(BraidSortState *st, const uint8 *key, size_t len, size_t sortable,
				   uint64 ref)
{
	BraidSelection *sel = &st->path->sel;
	uint8	   *prefix = sel->scratch;
	const uint8 *full = NULL;

	/* the prefix the entry would have (braid_map_place) */
	if (st->cfg.collated)
	{
		size_t		head = Min(sortable, (size_t) st->cfg.radix_keylen);

		memcpy(prefix, key + BRAID_COLLATED_HEADER, head);
		memset(prefix + head, 0, st->cfg.radix_keylen - head);
		full = key;
	}
	else if (len <= st->cfg.keylen)
	{
		memcpy(prefix, key, len);
		memset(prefix + len, 0, st->cfg.keylen - len);
	}
	else
	{
		memcpy(prefix, key, st->cfg.keylen);
		full = key;
	}
	ref &= ~BRAID_REF_TRUNCATED;
	braid_map_note_key(st, len, full != NULL);

	if (sel->has_bound &&
		copy_compare(st, prefix, full, (uint32) len, ref,
					 sel->bound, sel->bound_key, sel->bound_len) <= 0)
		return;
	if (sel->materializing)
		entry_log_append(st, key, len, sortable, ref);
	if (sel->has_cutoff &&
		copy_compare(st, prefix, full, (uint32) len, ref,
					 sel->cutoff, sel->cutoff_key, sel->cutoff_len) >= 0)
		return;

	candidate_room(st);
	if (!make_candidate_room(st, prefix, full, len, ref))
		return;
	(void) braid_map_place(st, key, len, sortable, ref);
}

/*
 * end_pass
 *		The pass has seen every row: its candidates, sorted, are the next
 *		chunk of the virtual run (coded into "run"); the last of them is the
 *		new bound.
 */
static void
end_pass(BraidSortState *st, BraidRun *run)
{
	BraidSelection *sel = &st->path->sel;
	size_t		n = st->path->map.nentries;
	MemoryContext old;

	sel->passes++;
	st->instr.selection_passes++;
	braid_map_note_peak(st);
	if (n == 0)
	{
		run->nrecords = 0;
		if (sel->emitted < sel->seg_rows)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("braidsort selection pass found no rows after %lld of %lld",
							(long long) sel->emitted, (long long) sel->seg_rows),
					 errdetail("The input read again differs from the input first read.")));
		return;
	}
	sort_total(st);
	old = MemoryContextSwitchTo(st->sortcxt);
	braid_run_set_memory(run, st->path->map.entries, n, st->cfg.stride,
						 braid_map_entry_key_of, st);
	MemoryContextSwitchTo(old);
	copy_entry(st, st->path->map.entries + (n - 1) * st->cfg.stride,
			   &sel->bound, &sel->bound_key, &sel->bound_len, &sel->bound_cap);
	sel->has_bound = true;
	sel->has_cutoff = false;
	sel->emitted += n;
	braid_map_clear(st);
}

/*
 * check_pass_rows
 *		A pass over the input must see exactly the rows the build saw: the
 *		same snapshot gives the same rows; anything else is an error, never
 *		a wrong order.
 */
static void
check_pass_rows(BraidSortState *st, int64 seen, uint64 hash)
{
	if (seen != st->path->sel.seg_rows || hash != st->path->sel.seg_hash)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("braidsort selection pass read %lld rows where the sort read %lld%s",
						(long long) seen, (long long) st->path->sel.seg_rows,
						seen == st->path->sel.seg_rows ? ", but not the same rows" : ""),
				 errdetail("The input read again differs from the input first read.")));
}

/*
 * pass_heap
 *		A selection pass over the head of the input by rescanning the child
 *		(a plain heap scan: same snapshot, same start block, same rows).
 */
static void
pass_heap(BraidSortState *st, MemoryContext rowcxt)
{
	SeqScanState *fast;
	int64		seen = 0;
	uint64		hash = 0;
	int64		fast_rows = 0;
	ScanDirection dir = st->css.ss.ps.state->es_direction;

	st->css.ss.ps.state->es_direction = ForwardScanDirection;
	ExecReScan(st->child);
	fast = braid_input_fast_seqscan(st);
	while (seen < st->path->sel.seg_rows)
	{
		TupleTableSlot *slot = braid_input_next(st, fast, seen > 0, &fast_rows);
		MemoryContext old;
		uint64		ref;
		uint32		tuple_len;
		size_t		len;

		if (slot == NULL)
			break;
		old = MemoryContextSwitchTo(rowcxt);
		len = braid_input_heap_row(st, slot, true, &ref, &tuple_len);
		hash += braid_wl_ref_hash(ref);
		braid_select_offer(st, st->input.keybuf.data, len, st->input.keybuf.sortable, ref);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
		if ((++seen & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (fast_rows > 0 && st->child->instrument)
		st->child->instrument->tuplecount += fast_rows;
	st->css.ss.ps.state->es_direction = dir;
	check_pass_rows(st, seen, hash);
}

/*
 * pass_value_log
 *		A selection pass over the head of the input from the value log.
 */
static void
pass_value_log(BraidSortState *st, MemoryContext rowcxt)
{
	BraidVlogScan scan;
	int64		seen = 0;
	uint64		hash = 0;
	TupleTableSlot *slot = st->win.slot;

	/* the scan reads the log in blocks, each under a grant of its own */
	braid_vlog_scan_begin(&st->path->vlog, &scan);
	while (seen < st->path->sel.seg_rows)
	{
		uint64		ref;
		MinimalTuple tuple = braid_vlog_scan_next(&st->path->vlog, &scan, &ref);
		MemoryContext old;
		size_t		len;

		if (tuple == NULL)
			break;
		old = MemoryContextSwitchTo(rowcxt);
		ExecStoreMinimalTuple(tuple, slot, false);
		len = braid_input_slot_key(st, slot);
		hash += braid_wl_ref_hash(ref);
		braid_select_offer(st, st->input.keybuf.data, len, st->input.keybuf.sortable, ref);
		ExecClearTuple(slot);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
		if ((++seen & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	braid_vlog_scan_end(&st->path->vlog, &scan);
	check_pass_rows(st, seen, hash);
}

/*
 * entry_log_load
 *		Read an entry log segment, loaded up to "loaded", up to at least
 *		byte "need" (in whole chunks, up to its end) before the pass reads
 *		there, each block under a short read grant of the device; returns
 *		how far it is loaded now.
 */
static size_t
entry_log_load(BraidSpillFile *f, size_t loaded, size_t need)
{
	size_t		upto;

	if (need <= loaded)
		return loaded;
	upto = Min((size_t) TYPEALIGN(ENTRY_LOG_READ_CHUNK, need), f->written);
	if (upto > loaded)
		braid_spill_note_read(f, loaded, upto);
	return Max(upto, loaded);
}

/*
 * pass_entry_log
 *		A lazy sort's selection pass after it materialized: read the entry
 *		log instead of the input.
 */
static void
pass_entry_log(BraidSortState *st)
{
	ListCell   *lc;
	int64		seen = 0;

	foreach(lc, st->path->sel.elog.segs)
	{
		BraidSpillFile *f = (BraidSpillFile *) lfirst(lc);
		const uint8 *base = (const uint8 *) f->base;
		size_t		pos = 0;
		size_t		loaded = 0;

		while (pos < f->written)
		{
			uint32		len,
						sortable;
			uint64		ref;

			/* two varints and the ref, then the key */
			loaded = entry_log_load(f, loaded, pos + 2 * 5 + sizeof(ref));
			pos += braid_varint_get(base + pos, &len);
			pos += braid_varint_get(base + pos, &sortable);
			memcpy(&ref, base + pos, sizeof(ref));
			pos += sizeof(ref);
			loaded = entry_log_load(f, loaded, pos + len);
			braid_select_offer(st, base + pos, (size_t) len, (size_t) sortable, ref);
			pos += len;
			if ((++seen & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}
	if (seen != st->path->sel.elog.entries)
		elog(ERROR, "braidsort: entry log holds %lld entries, read %lld",
			 (long long) st->path->sel.elog.entries, (long long) seen);
}

/*
 * braid_select_end_first_pass
 *		A lazy sort's build was its first pass: its candidates become the
 *		virtual run's first chunk, and later passes have "cap" candidates in
 *		"room" bytes, the full keys' split of the build's room forgotten.
 */
void
braid_select_end_first_pass(BraidSortState *st, BraidRun *run, size_t cap, size_t room)
{
	BraidSelection *sel = &st->path->sel;

	end_pass(st, run);
	sel->cap = cap;
	sel->room = room;
	/* the split of the build's room does not fit this one */
	sel->keys_split = false;
	braid_map_set_key_limit(st, 0);
}

/*
 * braid_select_pass
 *		A selection pass, for the final merge that took the virtual run's
 *		chunk: read the rows left again (the entry log once written, else by
 *		rescanning the heap or reading the value log), and code the next
 *		chunk into "run"; with "materialize", this pass writes every entry
 *		above the bound to the entry log, which later passes read instead.
 *		False when there was nothing left.  Runs on the backend, inside the
 *		merge.
 */
bool
braid_select_pass(BraidSortState *st, BraidRun *run, bool reread_heap, bool materialize)
{
	BraidSelection *sel = &st->path->sel;
	MemoryContext rowcxt;
	MemoryContext old;

	sel->materializing = materialize && !sel->materialized;
	old = MemoryContextSwitchTo(st->sortcxt);
	candidate_room(st);
	rowcxt = AllocSetContextCreate(st->sortcxt, "BraidSort selection row",
								   ALLOCSET_SMALL_SIZES);

	/*
	 * The merge that asked for the chunk holds no read grant (it takes one
	 * per block it reads), so the pass may run the executor (a rescan, user
	 * functions in its quals), which no grant may span; it takes grants of
	 * its own for the blocks it reads.
	 */
	Assert(!braid_sched_holds_any_read());
	if (sel->materialized)
		pass_entry_log(st);
	else if (reread_heap)
		pass_heap(st, rowcxt);
	else
		pass_value_log(st, rowcxt);
	MemoryContextDelete(rowcxt);
	if (sel->materializing)
	{
		if (sel->elog_cur)
			braid_spill_finish(sel->elog_cur);
		sel->elog_cur = NULL;
		sel->materializing = false;
		sel->materialized = true;
		st->instr.materialized = true;
	}
	end_pass(st, run);
	MemoryContextSwitchTo(old);
	return run->nrecords > 0;
}

/*
 * braid_select_release
 *		Free what the passes hold and remove the entry log's files.
 */
void
braid_select_release(BraidSortState *st)
{
	BraidSelection *sel = &st->path->sel;
	ListCell   *lc;

	foreach(lc, sel->elog.segs)
		braid_spill_close((BraidSpillFile *) lfirst(lc));
	sel->elog.segs = NIL;
	sel->elog.entries = 0;
	sel->elog_cur = NULL;
	sel->bound = sel->bound_key = NULL;
	sel->cutoff = sel->cutoff_key = NULL;
	sel->bound_cap = sel->cutoff_cap = 0;
	sel->has_bound = sel->has_cutoff = false;
	sel->materializing = sel->materialized = false;
}
