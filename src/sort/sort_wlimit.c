/*-------------------------------------------------------------------------
 *
 * sort_wlimit.c
 *	  WRITE-LIMITED: Viglas's write-limited sorts on IndexMap entries
 *	  (hybrid, segment, lazy), between the build and the final merge.
 *
 * MergePass writes every entry to the spill device once per pass.  On a
 * device where a write costs several reads, these modes write less:
 *
 *	hybrid	The last budget-full of entries is never written: the build
 *			flushes the IndexMap early (flush_at, from the planner's row
 *			estimate) so that the rows left fill it exactly, and that last
 *			IndexMap is kept in memory, coded as a run (memrun), which the
 *			final merge reads beside the runs on the device.
 *
 *	segment	The rows at the head of the input (1 - x of it, in input order)
 *			make no entry during the build; the rest is built as hybrid
 *			does.  The head becomes a virtual run (vrun) of the final merge:
 *			whenever the merge has taken its records, a selection pass
 *			re-reads the head and keeps the next budget-full of smallest
 *			entries above the last one emitted.  Nothing of the head is
 *			written.
 *
 *	lazy	Every row is in the selection segment and the build is the first
 *			selection pass.  Before each later pass, Viglas's read-over-write
 *			rule (braid_wl_lazy_materialize) decides whether to write the
 *			remaining entries once (the entry log): that pass writes every
 *			entry above the bound, and later passes read the entry log
 *			instead of the input.
 *
 * Selection order is total: key, then ref (refs are unique within a sort:
 * heap TIDs or value-log places, the same in every pass).  A pass keeps its
 * candidates in the IndexMap ("build"); when it is full it is sorted, its
 * larger half dropped, and from then on only candidates below the largest
 * kept one (the cutoff) are admitted.  At the end of the pass every
 * candidate kept is smaller than everything not kept, so all of them are
 * emitted: a chunk of between half and all of the candidate room (fewer
 * with long keys, whose full keys share the room: make_candidate_room).
 *
 * A pass re-reads the input by rescanning the child when it is a plain,
 * non-parallel heap scan (same snapshot and start block: the same rows in
 * the same order; the node checks the row count), else from the value log.
 * No other child is ever run twice.
 *
 * src/sort/sort_wlimit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "io/device.h"
#include "io/iosched.h"
#include "plan/plancost.h"
#include "sort/sort_state.h"
#include "core/varint.h"

/*
 * Row counts derived from the planner's estimate are clamped here before
 * they become int64 (an estimate may be as large as a double allows).
 */
#define BRAID_WL_MAX_ROWS	1e15

/* Entry log segments: at least this size (the last may be larger). */
#define ENTRY_LOG_SEGMENT ((size_t) 16 * 1024 * 1024)

/* Reads of an entry log are counted this much at a time. */
#define ENTRY_LOG_READ_CHUNK ((size_t) 65536)

static bool wl_refill(BraidRun *run, void *arg);

/*
 * braid_wl_begin
 *		Set the node's write-limited mode up from the plan.  A mode that
 *		must re-read the input falls back to hybrid if, against the plan,
 *		the input cannot be read again.
 */
void
braid_wl_begin(BraidSortState *st, const BraidSortPlanData *data)
{
	BraidWlimit *wl = &st->wl;
	BraidWlMode mode = (BraidWlMode) data->wl_mode;

	memset(wl, 0, sizeof(*wl));
	wl->scratch = palloc0(st->cfg.stride);
	wl->flush_at = -1;
	wl->intensity = data->write_intensity;
	if (mode < BRAID_WL_MERGEPASS || mode >= BRAID_WL_NMODES)
		mode = BRAID_WL_MERGEPASS;

	/* a heap scan is re-read by rescanning it: a plain, serial one only */
	wl->reread_heap = !st->cfg.value_log;
	if ((mode == BRAID_WL_SEGMENT || mode == BRAID_WL_LAZY) &&
		(!data->can_reread ||
		 (!st->cfg.value_log &&
		  (!IsA(st->child, SeqScanState) || st->child->plan->parallel_aware))))
	{
		elog(DEBUG1, "braidsort: %s sort needs an input it can read again; hybrid instead",
			 braid_wl_mode_name(mode));
		mode = BRAID_WL_HYBRID;
	}
	wl->mode = mode;
}

/*
 * braid_wl_start_build
 *		Before the build: where the IndexMap is flushed so that the last
 *		budget-full stays in memory, which rows are left to selection
 *		passes, and the cost model's input for lazy's rule.
 */
void
braid_wl_start_build(BraidSortState *st)
{
	BraidWlimit *wl = &st->wl;
	size_t		map_bytes = braid_build_map_bytes(st);
	double		est = Max(st->cfg.est_rows, 0.0);

	/*
	 * The rows a budget-full holds, with the full keys they keep aside
	 * (braid_cost_budget_rows); at least 2, which a selection pass needs
	 * (its compaction keeps one).
	 */
	double		full = Max(braid_cost_budget_rows(est, st->cfg.key_memory, (double) map_bytes,
												  (double) st->cfg.stride),
						   2.0);
	double		tail = est;

	wl->flush_at = -1;
	wl->entries_added = 0;
	wl->head_rows = 0;
	wl->selecting = false;
	wl->seg_rows = 0;
	wl->seg_hash = 0;
	wl->emitted = 0;
	wl->passes = 0;
	wl->has_bound = false;
	wl->has_cutoff = false;
	wl->materializing = false;
	wl->materialized = false;
	wl->held_bytes = 0;
	wl->cap = Max(st->cfg.budget / 2 / st->cfg.stride, (size_t) 2);
	wl->room = st->cfg.budget / 2;
	wl->keys_split = false;

	switch (wl->mode)
	{
		case BRAID_WL_MERGEPASS:
			return;
		case BRAID_WL_SEGMENT:
			/* an input expected to fit is the OnePass sort it would be */
			if (est > full)
				wl->head_rows = (int64) rint(Min((1.0 - st->cfg.segment_share) * est,
												 BRAID_WL_MAX_ROWS));

			/*
			 * An adaptive sort that switched hands over the head of its input
			 * sorted: the rows left to passes (which rescan the input from
			 * its start) must then include every row it carries.
			 */
			if (wl->head_rows > 0 && st->adapt.carrying)
				wl->head_rows = Max(wl->head_rows, st->adapt.rows_read);
			tail = est - (double) wl->head_rows;
			/* FALLTHROUGH */
		case BRAID_WL_HYBRID:
			if (tail > full)
				wl->flush_at = (int64) Min(tail - full, BRAID_WL_MAX_ROWS);
			break;
		case BRAID_WL_LAZY:
			wl->selecting = true;
			wl->head_rows = 0;

			/*
			 * The build, the first pass, has the IndexMap's room (as the
			 * build's first allocation, from the estimate): a sort that fits
			 * is the OnePass sort it would have been.
			 */
			wl->cap = (size_t) Max(Min(est * 1.05, full), Min(1024.0, full));
			wl->room = map_bytes;
			break;
		default:
			break;
	}
	braid_plan_wl_input(&wl->model, est, st->cfg.stride, st->cfg.keylen, st->cfg.key_memory,
						st->cfg.budget, braid_merge_fanin(st), true, st->cfg.value_log,
						st->cfg.select_collated_ns);
}

/*
 * braid_wl_flush_for_memory_run
 *		The rows left (by the estimate) are the last budget-full: write what
 *		the IndexMap holds as a run now, and make whole runs from here on,
 *		so that the rest fills the IndexMap and stays in memory.
 */
void
braid_wl_flush_for_memory_run(BraidSortState *st)
{
	st->runset.pipe_allowed = false;
	braid_pipe_end(st);
	if (st->build.nentries > 0)
		braid_spill_run(st);
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
			c = braid_compare_collated(ka, la, kb, lb, st->cfg.keys, st->cfg.nkeys);
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
	return braid_sort_full_key(st, entry, len);
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
	uint8	   *e = st->build.entries;
	size_t		n = st->build.nentries;
	uint32		stride = st->cfg.stride;
	size_t		i = 0;

	/* the candidates' prefixes are compared with offers' later: not ranked */
	braid_sort_entries(st, false);
	while (i < n)
	{
		size_t		j = i + 1;

		while (j < n &&
			   memcmp(e + (j - 1) * stride, e + j * stride, st->cfg.radix_keylen) == 0 &&
			   braid_sort_tiebreak(e + (j - 1) * stride, e + j * stride, st) == 0)
			j++;
		if (j - i > 1)
			qsort_arg(e + i * stride, j - i, stride, ref_cmp, &st->cfg.keylen);
		i = j;
	}
}

/*
 * keep_first
 *		Keep only the first n candidates (sorted), with a fresh overflow
 *		store holding just their full keys (what the dropped ones and the
 *		rejected candidates left there goes).
 */
static void
keep_first(BraidSortState *st, size_t n)
{
	BraidOverflow fresh;
	uint8	   *e = st->build.entries;
	uint32		stride = st->cfg.stride;
	bool		any = false;

	st->build.nentries = n;
	if (!st->build.any_truncated)
		return;
	braid_ovf_init(&fresh, st->sortcxt);
	fresh.limit = st->build.ovf.limit;
	for (size_t i = 0; i < n; i++)
	{
		uint8	   *entry = e + i * stride;
		uint64		ref = braid_entry_ref(entry, st->cfg.keylen);
		uint32		len;
		const uint8 *full;

		if ((ref & BRAID_REF_TRUNCATED) == 0)
			continue;
		/* from the old store, which the entry still points into */
		full = braid_sort_full_key(st, entry, &len);
		if (st->cfg.collated)
		{
			uint64		loc = braid_ovf_append(&fresh, full, len);

			memcpy(entry + st->cfg.radix_keylen, &loc, sizeof(loc));
		}
		else
			braid_ovf_put(&fresh, ref, full, len);
		any = true;
	}
	braid_ovf_free(&st->build.ovf);
	st->build.ovf = fresh;
	st->build.any_truncated = any;
}

/*
 * compact
 *		The candidates fill their room: keep the smaller half, and admit
 *		only candidates below the largest kept from now on.
 */
static void
compact(BraidSortState *st)
{
	BraidWlimit *wl = &st->wl;
	size_t		keep = Max(st->build.nentries / 2, (size_t) 1);

	braid_build_note_peak(st);
	sort_total(st);
	keep_first(st, keep);
	copy_entry(st, st->build.entries + (keep - 1) * st->cfg.stride,
			   &wl->cutoff, &wl->cutoff_key, &wl->cutoff_len, &wl->cutoff_cap);
	wl->has_cutoff = true;
}

/* pass_room: the bytes a pass's candidates and their full keys keep to. */
static size_t
pass_room(const BraidSortState *st)
{
	return Max(st->wl.room, st->wl.cap * st->cfg.stride);
}

/*
 * split_room
 *		The candidates' share of the pass's room, now that full keys kept
 *		aside share it (braid_split_entries), and the rest as the key
 *		store's limit.
 */
static void
split_room(BraidSortState *st)
{
	BraidWlimit *wl = &st->wl;
	size_t		room = pass_room(st);

	wl->keys_split = true;
	wl->split_cap = Min(braid_split_entries(st, room), wl->cap);
	st->build.ovf.limit = room - wl->split_cap * st->cfg.stride;
}

/*
 * candidate_room
 *		Make sure the candidates' IndexMap is allocated: room for wl->cap
 *		entries (half the budget; the gather's arena has the other half), or
 *		for wl->split_cap once full keys kept aside share the pass's room
 *		(make_candidate_room).
 */
static void
candidate_room(BraidSortState *st)
{
	size_t		cap;

	/* candidates held stay where they are */
	if (st->build.entries != NULL && st->build.nentries > 0)
		return;
	/* at a pass's start: the split from the averages so far */
	if (st->wl.keys_split)
		split_room(st);
	cap = st->wl.keys_split ? st->wl.split_cap : st->wl.cap;
	if (st->build.entries != NULL && st->build.capacity == cap)
		return;
	if (st->build.entries != NULL)
		pfree(st->build.entries);
	st->build.entries = MemoryContextAllocHuge(st->sortcxt, cap * st->cfg.stride);
	st->build.capacity = cap;
	st->build.nentries = 0;
	/* EXPLAIN's IndexMap Memory: the candidates' room is the IndexMap */
	st->instr.peak_map_bytes = Max(st->instr.peak_map_bytes, cap * st->cfg.stride);
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
	BraidWlimit *wl = &st->wl;

	return copy_compare(st, prefix, full, (uint32) len, ref,
						wl->cutoff, wl->cutoff_key, wl->cutoff_len) < 0;
}

/*
 * make_candidate_room
 *		Room for one more candidate (its prefix, and its full key of "len"
 *		bytes when kept aside: "full" not NULL); false if candidates had to
 *		be dropped and the new one is not below the new cutoff either.  The
 *		candidates and their full keys keep within the pass's room
 *		(wl->room bytes), as a build's entries and keys keep within the
 *		budget (add_entry), checked before the key store grows (it grows by
 *		doubling): once the keys would pass it the candidates keep to
 *		wl->split_cap (split_room: from the average key offered so far in
 *		the sort, again at each pass's start), their keys to the rest (the
 *		store's limit), and the larger half of the candidates is dropped
 *		(compact) as often as it takes.  Only the keys of one or two
 *		candidates (one held and the new one) may take it beyond the room.
 */
static bool
make_candidate_room(BraidSortState *st, const uint8 *prefix, const uint8 *full,
					size_t len, uint64 ref)
{
	BraidWlimit *wl = &st->wl;
	size_t		stride = st->cfg.stride;
	size_t		room = pass_room(st);

	if (st->build.nentries >= st->build.capacity)
	{
		compact(st);
		if (!below_cutoff(st, prefix, full, len, ref))
			return false;
	}
	while (full != NULL)
	{
		bool		with_slot = !st->cfg.collated;
		size_t		after = braid_ovf_bytes_after(&st->build.ovf, len, with_slot);

		if (st->build.capacity * stride + after <= room)
			break;
		if (!wl->keys_split)
		{
			bool		dropped = false;

			split_room(st);
			if (st->build.capacity > wl->split_cap)
			{
				/*
				 * Room for the new one among fewer, the IndexMap shrunk before
				 * anything returns (candidate_room would drop it whole).
				 */
				while (st->build.nentries >= wl->split_cap)
				{
					compact(st);
					dropped = true;
				}
				braid_build_note_peak(st);
				braid_build_resize(st, wl->split_cap);
				if (dropped && !below_cutoff(st, prefix, full, len, ref))
					return false;
			}
			continue;
		}
		if (st->build.nentries <= 1)
			break;
		compact(st);
		if (!below_cutoff(st, prefix, full, len, ref))
			return false;
	}
	/* never reached (capacity is at least 2): never written past, either */
	if (st->build.nentries >= st->build.capacity)
		elog(ERROR, "braidsort: no room for a selection candidate (%zu of %zu)",
			 st->build.nentries, st->build.capacity);
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
	BraidWlimit *wl = &st->wl;
	uint8		head[32];
	size_t		h = 0;

	/* (keys are varlena-sized: far below 4 GB) */
	h += braid_varint_put(head + h, (uint32) len);
	h += braid_varint_put(head + h, (uint32) sortable);
	memcpy(head + h, &ref, sizeof(ref));
	h += sizeof(ref);

	if (wl->elog_cur == NULL ||
		wl->elog_cur->written + wl->elog_cur->staged + h + len > wl->elog_cur->size)
	{
		MemoryContext old = MemoryContextSwitchTo(st->sortcxt);

		if (wl->elog_cur)
			braid_spill_finish(wl->elog_cur);
		wl->elog_cur = braid_spill_create(Max(ENTRY_LOG_SEGMENT, h + len), &st->instr.device);
		wl->elog.segs = lappend(wl->elog.segs, wl->elog_cur);
		MemoryContextSwitchTo(old);
	}
	braid_spill_write(wl->elog_cur, head, h);
	braid_spill_write(wl->elog_cur, key, len);
	wl->elog.entries++;
}

/*
 * braid_wl_offer
 *		A row's key and ref, to the selection under way: dropped unless it
 *		comes after the bound (and before the cutoff), else kept among the
 *		candidates.
 */
void
braid_wl_offer(BraidSortState *st, const uint8 *key, size_t len, size_t sortable,
			   uint64 ref)
{
	BraidWlimit *wl = &st->wl;
	uint8	   *prefix = wl->scratch;
	const uint8 *full = NULL;

	/* the prefix the entry would have (braid_build_place_entry) */
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
	braid_note_entry_key(st, len, full != NULL);

	if (wl->has_bound &&
		copy_compare(st, prefix, full, (uint32) len, ref,
					 wl->bound, wl->bound_key, wl->bound_len) <= 0)
		return;
	if (wl->materializing)
		entry_log_append(st, key, len, sortable, ref);
	if (wl->has_cutoff &&
		copy_compare(st, prefix, full, (uint32) len, ref,
					 wl->cutoff, wl->cutoff_key, wl->cutoff_len) >= 0)
		return;

	candidate_room(st);
	if (!make_candidate_room(st, prefix, full, len, ref))
		return;
	(void) braid_build_place_entry(st, key, len, sortable, ref);
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
	BraidWlimit *wl = &st->wl;
	size_t		n = st->build.nentries;
	MemoryContext old;

	wl->passes++;
	st->instr.selection_passes++;
	braid_build_note_peak(st);
	if (n == 0)
	{
		run->nrecords = 0;
		if (wl->emitted < wl->seg_rows)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("braidsort selection pass found no rows after %lld of %lld",
							(long long) wl->emitted, (long long) wl->seg_rows),
					 errdetail("The input read again differs from the input first read.")));
		return;
	}
	sort_total(st);
	old = MemoryContextSwitchTo(st->sortcxt);
	braid_run_set_memory(run, st->build.entries, n, st->cfg.stride,
						 braid_sort_entry_key_of, st);
	MemoryContextSwitchTo(old);
	copy_entry(st, st->build.entries + (n - 1) * st->cfg.stride,
			   &wl->bound, &wl->bound_key, &wl->bound_len, &wl->bound_cap);
	wl->has_bound = true;
	wl->has_cutoff = false;
	wl->emitted += n;
	st->build.nentries = 0;
	st->build.any_truncated = false;
	braid_ovf_free(&st->build.ovf);
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
	if (seen != st->wl.seg_rows || hash != st->wl.seg_hash)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("braidsort selection pass read %lld rows where the sort read %lld%s",
						(long long) seen, (long long) st->wl.seg_rows,
						seen == st->wl.seg_rows ? ", but not the same rows" : ""),
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
	fast = braid_build_fast_seqscan(st);
	while (seen < st->wl.seg_rows)
	{
		TupleTableSlot *slot = braid_build_next_slot(st, fast, seen > 0, &fast_rows);
		MemoryContext old;
		uint64		ref;
		uint32		tuple_len;
		size_t		len;

		if (slot == NULL)
			break;
		old = MemoryContextSwitchTo(rowcxt);
		len = braid_build_heap_row(st, slot, true, &ref, &tuple_len);
		hash += braid_wl_ref_hash(ref);
		braid_wl_offer(st, st->build.keybuf.data, len, st->build.keybuf.sortable, ref);
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
	BraidReadScope scope = {0};
	int64		seen = 0;
	uint64		hash = 0;
	TupleTableSlot *slot = st->win.slot;

	for (int i = 0; i < st->vlog.nsegs; i++)
		braid_read_scope_add(&scope, st->vlog.segs[i]);
	braid_read_scope_begin(&scope);
	braid_vlog_scan_begin(&st->vlog, &scan);
	while (seen < st->wl.seg_rows)
	{
		uint64		ref;
		MinimalTuple tuple = braid_vlog_scan_next(&st->vlog, &scan, &ref);
		MemoryContext old;
		size_t		len;

		if (tuple == NULL)
			break;
		old = MemoryContextSwitchTo(rowcxt);
		ExecStoreMinimalTuple(tuple, slot, false);
		len = braid_build_slot_key(st, slot);
		hash += braid_wl_ref_hash(ref);
		braid_wl_offer(st, st->build.keybuf.data, len, st->build.keybuf.sortable, ref);
		ExecClearTuple(slot);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
		if ((++seen & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	braid_vlog_scan_end(&st->vlog, &scan);
	braid_read_scope_end(&scope);
	check_pass_rows(st, seen, hash);
}

/*
 * pass_entry_log
 *		A lazy sort's selection pass after it materialized: read the entry
 *		log instead of the input.
 */
static void
pass_entry_log(BraidSortState *st)
{
	BraidReadScope scope = {0};
	ListCell   *lc;
	int64		seen = 0;

	foreach(lc, st->wl.elog.segs)
		braid_read_scope_add(&scope, (BraidSpillFile *) lfirst(lc));
	braid_read_scope_begin(&scope);
	foreach(lc, st->wl.elog.segs)
	{
		BraidSpillFile *f = (BraidSpillFile *) lfirst(lc);
		const uint8 *base = (const uint8 *) f->base;
		size_t		pos = 0;
		size_t		accounted = 0;

		while (pos < f->written)
		{
			uint32		len,
						sortable;
			uint64		ref;

			pos += braid_varint_get(base + pos, &len);
			pos += braid_varint_get(base + pos, &sortable);
			memcpy(&ref, base + pos, sizeof(ref));
			pos += sizeof(ref);
			braid_wl_offer(st, base + pos, (size_t) len, (size_t) sortable, ref);
			pos += len;
			if (pos - accounted >= ENTRY_LOG_READ_CHUNK)
			{
				braid_spill_note_read(f, accounted, Min(pos, f->written));
				accounted = Min(pos, f->written);
			}
			if ((++seen & 4095) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		if (f->written > accounted)
			braid_spill_note_read(f, accounted, f->written);
	}
	braid_read_scope_end(&scope);
	if (seen != st->wl.elog.entries)
		elog(ERROR, "braidsort: entry log holds %lld entries, read %lld",
			 (long long) st->wl.elog.entries, (long long) seen);
}

/*
 * wl_refill
 *		The final merge has taken the virtual run's chunk: make the next one
 *		by a selection pass (deciding first, in a lazy sort, whether this
 *		pass writes the remainder once).  Runs on the backend, inside the
 *		merge.
 */
static bool
wl_refill(BraidRun *run, void *arg)
{
	BraidSortState *st = (BraidSortState *) arg;
	BraidWlimit *wl = &st->wl;
	MemoryContext rowcxt;
	MemoryContext old;
	BraidProgressPhase phase = st->mon.phase;
	instr_time	start;

	if (wl->emitted >= wl->seg_rows)
		return false;
	INSTR_TIME_SET_CURRENT(start);
	braid_sort_set_phase(st, BRAID_PROGRESS_SELECTING);
	if (wl->mode == BRAID_WL_LAZY && !wl->materialized &&
		braid_wl_lazy_materialize(&wl->model, wl->intensity, (double) wl->passes,
								  (double) (wl->seg_rows - wl->emitted)))
		wl->materializing = true;

	old = MemoryContextSwitchTo(st->sortcxt);
	candidate_room(st);
	rowcxt = AllocSetContextCreate(st->sortcxt, "BraidSort selection row",
								   ALLOCSET_SMALL_SIZES);

	/*
	 * The merge that asked for the chunk holds read grants; the pass may run
	 * the executor (a rescan, user functions in its quals), which no grant
	 * may span.  The pass takes its own grants for what it reads.
	 */
	braid_sched_read_suspend();
	if (wl->materialized)
		pass_entry_log(st);
	else if (wl->reread_heap)
		pass_heap(st, rowcxt);
	else
		pass_value_log(st, rowcxt);
	braid_sched_read_resume();
	MemoryContextDelete(rowcxt);
	if (wl->materializing)
	{
		if (wl->elog_cur)
			braid_spill_finish(wl->elog_cur);
		wl->elog_cur = NULL;
		wl->materializing = false;
		wl->materialized = true;
		st->instr.materialized = true;
	}
	end_pass(st, run);
	MemoryContextSwitchTo(old);
	braid_sort_set_phase(st, phase);
	st->instr.select_ms += braid_elapsed_ms(start);
	return run->nrecords > 0;
}

/*
 * drop_entries
 *		The IndexMap's memory goes (its entries are coded elsewhere).
 */
static void
drop_entries(BraidSortState *st)
{
	braid_build_note_peak(st);
	st->build.nentries = 0;
	st->build.any_truncated = false;
	braid_ovf_free(&st->build.ovf);
	if (st->build.entries)
		pfree(st->build.entries);
	st->build.entries = NULL;
	st->build.capacity = 0;
}

/* new_virtual_run: a run whose chunks selection passes make (wl_refill). */
static BraidRun *
new_virtual_run(BraidSortState *st)
{
	BraidRun   *run = MemoryContextAllocZero(st->sortcxt, sizeof(BraidRun));

	run->refill = wl_refill;
	run->refill_arg = st;
	return run;
}

/*
 * braid_wl_after_build
 *		After the build: set the final merge's extra runs up -- the last
 *		IndexMap in memory (hybrid, segment), the virtual run of selection
 *		passes (segment, lazy).  False when the sort is an ordinary one
 *		after all (nothing spilled and nothing left to selection passes: a
 *		OnePass sort of the IndexMap as it is).
 */
bool
braid_wl_after_build(BraidSortState *st)
{
	BraidWlimit *wl = &st->wl;
	MemoryContext old;

	switch (wl->mode)
	{
		case BRAID_WL_MERGEPASS:
			return false;
		case BRAID_WL_HYBRID:
		case BRAID_WL_SEGMENT:
			wl->seg_rows = wl->mode == BRAID_WL_SEGMENT ?
				Min(wl->head_rows, st->build.rows_built) : 0;
			if (st->runset.runs == NIL && wl->seg_rows == 0)
				return false;
			if (st->build.nentries > 0)
			{
				braid_sort_entries(st, true);
				old = MemoryContextSwitchTo(st->sortcxt);
				wl->memrun = braid_run_in_memory(st->build.entries, st->build.nentries,
												 st->cfg.stride, braid_sort_entry_key_of, st);
				MemoryContextSwitchTo(old);
				wl->held_bytes += wl->memrun->bytes;
				st->instr.memory_run_entries += (int64) st->build.nentries;
			}
			drop_entries(st);
			if (wl->seg_rows > 0)
			{
				/* empty: the merge's first read of it makes the first chunk */
				wl->vrun = new_virtual_run(st);
				wl->held_bytes += wl->cap * st->cfg.stride;
			}
			return true;
		case BRAID_WL_LAZY:
			wl->seg_rows = st->build.rows_built;
			wl->selecting = false;
			/* every row fitted the first pass: an ordinary OnePass sort */
			if (!wl->has_cutoff)
				return false;
			/* the build was the first pass; later ones have half the budget */
			wl->vrun = new_virtual_run(st);
			end_pass(st, wl->vrun);
			wl->cap = Max(st->cfg.budget / 2 / st->cfg.stride, (size_t) 2);
			wl->room = st->cfg.budget / 2;
			wl->held_bytes += wl->cap * st->cfg.stride;
			/* the split of the build's room does not fit this one */
			wl->keys_split = false;
			st->build.ovf.limit = 0;
			return true;
		default:
			return false;
	}
}

/*
 * braid_wl_merge_runs
 *		The runs this mode adds to the final merge, after those on the
 *		device: the memory run, the virtual run (NULL when absent).  The
 *		merge owns them from here on (braid_merge_release closes them).
 */
void
braid_wl_merge_runs(BraidSortState *st, BraidRun **memrun, BraidRun **vrun)
{
	*memrun = st->wl.memrun;
	*vrun = st->wl.vrun;
	st->wl.memrun = NULL;
	st->wl.vrun = NULL;
}

/*
 * braid_wl_release
 *		Free what the mode holds and remove the entry log's files.
 */
void
braid_wl_release(BraidSortState *st)
{
	BraidWlimit *wl = &st->wl;
	ListCell   *lc;

	foreach(lc, wl->elog.segs)
		braid_spill_close((BraidSpillFile *) lfirst(lc));
	wl->elog.segs = NIL;
	wl->elog.entries = 0;
	wl->elog_cur = NULL;
	braid_run_close(wl->memrun);
	braid_run_close(wl->vrun);
	wl->memrun = NULL;
	wl->vrun = NULL;
	wl->bound = wl->bound_key = NULL;
	wl->cutoff = wl->cutoff_key = NULL;
	wl->bound_cap = wl->cutoff_cap = 0;
	wl->has_bound = wl->has_cutoff = false;
	wl->materializing = wl->materialized = false;
	wl->selecting = false;
	wl->held_bytes = 0;
}
