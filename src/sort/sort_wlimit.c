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
 * The selection passes themselves are sort_select.c's.  This strategy
 * hands the build's entries to RUNS (sort_runs.c), to a selection, or to
 * nothing (the head of a segment sort), and the final merge its memory run
 * and virtual run (wl_final_runs).
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

#include "plan/plancost.h"
#include "sort/sort_state.h"


/*
 * Share of a budget-full a hybrid or segment sort leaves room for when it
 * flushes the IndexMap for its memory run: the input may be up to that
 * many rows longer than estimated and the last budget-full still stays in
 * memory.
 */
#define BRAID_WL_MEMORY_RUN_MARGIN 0.02

/*
 * Row counts derived from the planner's estimate are clamped here before
 * they become int64 (an estimate may be as large as a double allows).
 */
#define BRAID_WL_MAX_ROWS	1e15

static int64 wl_start_build(BraidSortState *st, int64 rows_carried);
static void wl_put(BraidSortState *st, const uint8 *key, size_t len, size_t sortable,
				   uint64 ref);
static bool wl_finish_build(BraidSortState *st, int64 rows_built);
static int	wl_final_runs(BraidSortState *st, BraidRun **runs, int64 *rows,
						  size_t *held_bytes);
static void wl_release(BraidSortState *st);
static void spill_overflow(BraidSortState *st);
static bool wl_refill(BraidRun *run, void *arg);

/* hybrid, segment and lazy */
static const BraidSortStrategy wl_strategy = {
	.start_build = wl_start_build,
	.put = wl_put,
	.finish_build = wl_finish_build,
	.final_runs = wl_final_runs,
	.release = wl_release,
};

/*
 * braid_wl_strategy
 *		The node's strategy, from the plan's write-limited mode: MergePass
 *		(sort_runs.c), or this file's.  A mode that must re-read the input
 *		falls back to hybrid if, against the plan, the input cannot be read
 *		again.
 */
const BraidSortStrategy *
braid_wl_strategy(BraidSortState *st, const BraidSortPlanData *data)
{
	BraidWlimit *wl = &st->path->wl;
	BraidWlMode mode = (BraidWlMode) data->wl_mode;

	memset(wl, 0, sizeof(*wl));
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
	if (mode == BRAID_WL_MERGEPASS)
		return &braid_mergepass_strategy;
	braid_select_begin(st);
	return &wl_strategy;
}

/*
 * wl_start_build
 *		Before the build: where the IndexMap is flushed so that the last
 *		budget-full stays in memory, which rows are left to selection
 *		passes (returned: the head of a segment sort, whose rows make no
 *		entry now), and the cost model's input for lazy's rule.
 */
static int64
wl_start_build(BraidSortState *st, int64 rows_carried)
{
	BraidWlimit *wl = &st->path->wl;
	size_t		map_bytes = braid_map_budget(st);
	double		est = Max(st->cfg.est_rows, 0.0);

	/*
	 * The rows a budget-full holds, with the full keys they keep aside
	 * (braid_cost_budget_rows); at least 2, which a selection pass needs (its
	 * compaction keeps one).
	 */
	double		full = Max(braid_cost_budget_rows(est, st->cfg.key_memory, (double) map_bytes,
												  (double) st->cfg.stride),
						   2.0);
	double		tail = est;

	wl->flush_at = -1;
	wl->entries_added = 0;
	wl->overflow_share = 0;
	wl->head_rows = 0;
	wl->selecting = false;
	wl->held_bytes = 0;
	braid_select_start(st, Max(st->cfg.budget / 2 / st->cfg.stride, (size_t) 2),
					   st->cfg.budget / 2);

	switch (wl->mode)
	{
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
			if (wl->head_rows > 0 && rows_carried > 0)
				wl->head_rows = Max(wl->head_rows, rows_carried);
			tail = est - (double) wl->head_rows;
			/* FALLTHROUGH */
		case BRAID_WL_HYBRID:

			/*
			 * Flush where the rows left fill the IndexMap less a margin: with
			 * the estimate k rows short of the input, a flush at exactly
			 * "tail - full" would leave a budget-full and k rows, whose
			 * overflow would write the whole budget-full as a run and keep
			 * only k rows in memory (a few rows short of ANALYZE's estimate
			 * lost hybrid's saving).  The margin costs that share of it.
			 */
			if (tail > full)
				wl->flush_at = (int64) Min(tail - full * (1.0 - BRAID_WL_MEMORY_RUN_MARGIN),
										   BRAID_WL_MAX_ROWS);

			/*
			 * Rows expected to fit the IndexMap (segment at intensity 0 keys
			 * 0.98 of one): a flush at the start, with nothing to write, so
			 * that rows past the estimate overflow as after one
			 */
			else
				wl->flush_at = 0;
			break;
		case BRAID_WL_LAZY:
			wl->selecting = true;
			wl->head_rows = 0;
			/* the build is the first pass: no run is made meanwhile */
			braid_pipe_allow(st, false);

			/*
			 * The build, the first pass, has the IndexMap's room (as the
			 * build's first allocation, from the estimate): a sort that fits
			 * is the OnePass sort it would have been.
			 */
			braid_select_start(st, (size_t) Max(Min(est * 1.05, full), Min(1024.0, full)),
							   map_bytes);
			break;
		default:
			break;
	}
	wl->entries_expected = tail;
	elog(DEBUG1, "braidsort: %s build: estimate %.0f rows, a budget-full %.0f, flush at " INT64_FORMAT
		 ", head " INT64_FORMAT " rows, IndexMap budget %zu bytes, stride %zu",
		 braid_wl_mode_name(wl->mode), est, full, wl->flush_at, wl->head_rows, map_bytes,
		 (size_t) st->cfg.stride);
	braid_plan_wl_input(&wl->model, est, st->cfg.stride, st->cfg.keylen, st->cfg.key_bytes,
						st->cfg.key_memory,
						st->cfg.budget, braid_runs_fanin(st), true, st->cfg.value_log,
						st->cfg.select_collated_ns);
	return wl->head_rows;
}

/*
 * flush_for_memory_run
 *		The rows left (by the estimate) are the last budget-full: write what
 *		the IndexMap holds as a run now, and make whole runs from here on,
 *		so that the rest fills the IndexMap and stays in memory.
 */
static void
flush_for_memory_run(BraidSortState *st)
{
	elog(DEBUG1, "braidsort: flush for the memory run at entry " INT64_FORMAT
		 " (IndexMap %zu of %zu entries, pipe %s, %d runs, keys split %s, truncated %s)",
		 st->path->wl.flush_at, st->path->map.nentries, st->path->map.capacity,
		 st->path->runset.pipe.on ? "on" : "off", list_length(st->path->runset.runs),
		 st->path->map.keys_split ? "yes" : "no", st->path->map.any_truncated ? "yes" : "no");
	braid_pipe_allow(st, false);
	braid_pipe_end(st);
	if (st->path->map.nentries > 0)
		braid_spill_run(st);
}

/*
 * The share of the IndexMap the first overflow past the estimate writes,
 * doubling at each later one up to the most: a few small runs for an
 * estimate a little short, runs of a quarter of it for one far short.
 */
#define BRAID_WL_OVERFLOW_FIRST		(2 * BRAID_WL_MEMORY_RUN_MARGIN)
#define BRAID_WL_OVERFLOW_MOST		0.25

/*
 * spill_overflow
 *		More rows came after the flush than the IndexMap that was to stay in
 *		memory holds: it is full.  Write only a share of it (its oldest
 *		entries) as a run rather than the whole budget-full: ANALYZE's row
 *		count runs a percent or two short of a table's (the flush's margin
 *		covers 2% of a budget-full), and writing it all then cost hybrid its
 *		saving (all of MergePass's lines at beta 4, with a count 1% short of
 *		5M rows).  The rows past the estimate are written once, to within
 *		the last share, in a few runs more, while the final merge can take
 *		them in one pass (it takes the memory run and the passes' virtual
 *		run beside its fan-in); else, or where the IndexMap cannot be split
 *		(braid_spill_run_part), the whole IndexMap goes, as before.  Where
 *		the estimate still expects rows, the IndexMap holds fewer than
 *		planned (long keys kept aside took some of its room): the run then
 *		frees room for all of them at once, and a margin, not a share that
 *		would overflow again.
 */
static void
spill_overflow(BraidSortState *st)
{
	BraidWlimit *wl = &st->path->wl;
	double		left = wl->entries_expected - (double) wl->entries_added;
	size_t		n;

	wl->overflow_share = wl->overflow_share > 0 ?
		Min(wl->overflow_share * 2, BRAID_WL_OVERFLOW_MOST) : BRAID_WL_OVERFLOW_FIRST;
	n = (size_t) ceil(Max(st->path->map.nentries * wl->overflow_share,
						  left + st->path->map.capacity * BRAID_WL_MEMORY_RUN_MARGIN));
	elog(DEBUG1, "braidsort: IndexMap full past the estimate at entry " INT64_FORMAT
		 " (%zu entries, %d runs, share %.2f, truncated %s)",
		 wl->entries_added, st->path->map.nentries, list_length(st->path->runset.runs),
		 wl->overflow_share, st->path->map.any_truncated ? "yes" : "no");
	if (list_length(st->path->runset.runs) + 1 <= braid_runs_fanin(st) &&
		braid_spill_run_part(st, n))
		return;
	braid_spill_run(st);
}

/*
 * wl_put
 *		One row's entry: nothing but its ref's count for a row of a segment
 *		sort's head (key NULL), an offer to the selection of a lazy sort's
 *		build (its first pass), else through RUNS, the IndexMap flushed
 *		first where the rest is expected to fill it (hybrid, segment).
 */
static void
wl_put(BraidSortState *st, const uint8 *key, size_t len, size_t sortable, uint64 ref)
{
	BraidWlimit *wl = &st->path->wl;

	if (key == NULL)
	{
		/* left to selection passes */
		braid_select_note_row(st, ref);
		return;
	}
	if (wl->selecting)
	{
		braid_select_note_row(st, ref);
		braid_select_offer(st, key, len, sortable, ref);
		return;
	}
	if (wl->flush_at >= 0 && wl->entries_added++ == wl->flush_at)
		flush_for_memory_run(st);
	else if (wl->flush_at >= 0 && wl->entries_added > wl->flush_at &&
			 st->path->map.nentries > 0 &&
			 st->path->map.nentries == st->path->map.capacity && !braid_map_grow(st))
		spill_overflow(st);
	braid_runs_put(st, key, len, sortable, ref);
}

/*
 * wl_refill
 *		The final merge has taken the virtual run's chunk: make the next one
 *		by a selection pass (deciding first, in a lazy sort, whether this
 *		pass writes the remainder once: Viglas's read-over-write rule).
 *		Runs on the backend, inside the merge.
 */
static bool
wl_refill(BraidRun *run, void *arg)
{
	BraidSortState *st = (BraidSortState *) arg;
	BraidWlimit *wl = &st->path->wl;
	const BraidSelection *sel = &st->path->sel;
	BraidProgressPhase phase = st->mon.phase;
	instr_time	start;
	bool		materialize;
	bool		more;

	if (sel->emitted >= sel->seg_rows)
		return false;
	INSTR_TIME_SET_CURRENT(start);
	braid_sort_set_phase(st, BRAID_PROGRESS_SELECTING);
	materialize = wl->mode == BRAID_WL_LAZY && !sel->materialized &&
		braid_wl_lazy_materialize(&wl->model, wl->intensity, (double) sel->passes,
								  (double) (sel->seg_rows - sel->emitted));
	more = braid_select_pass(st, run, wl->reread_heap, materialize);
	braid_sort_set_phase(st, phase);
	st->instr.select_ms += braid_elapsed_ms(start);
	return more;
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
 * after_build
 *		After the build: set the final merge's extra runs up -- the last
 *		IndexMap in memory (hybrid, segment), the virtual run of selection
 *		passes (segment, lazy).  False when the sort is an ordinary one
 *		after all (nothing spilled and nothing left to selection passes: a
 *		OnePass sort of the IndexMap as it is).
 */
static bool
after_build(BraidSortState *st, int64 rows_built)
{
	BraidWlimit *wl = &st->path->wl;
	MemoryContext old;
	int64		seg_rows;

	switch (wl->mode)
	{
		case BRAID_WL_HYBRID:
		case BRAID_WL_SEGMENT:
			seg_rows = wl->mode == BRAID_WL_SEGMENT ? Min(wl->head_rows, rows_built) : 0;
			braid_select_set_rows(st, seg_rows);
			if (st->path->runset.runs == NIL && seg_rows == 0)
				return false;
			if (st->path->map.nentries > 0)
			{
				braid_map_sort(st, true);
				old = MemoryContextSwitchTo(st->sortcxt);
				wl->memrun = braid_run_in_memory(st->path->map.entries, st->path->map.nentries,
												 st->cfg.stride, braid_map_entry_key_of, st);
				MemoryContextSwitchTo(old);
				wl->held_bytes += wl->memrun->bytes;
				st->instr.memory_run_entries += (int64) st->path->map.nentries;
			}
			/* the IndexMap's memory goes (its entries are coded elsewhere) */
			braid_map_note_peak(st);
			braid_map_free(st);
			if (seg_rows > 0)
			{
				/* empty: the merge's first read of it makes the first chunk */
				wl->vrun = new_virtual_run(st);
				wl->held_bytes += st->path->sel.cap * st->cfg.stride;
			}
			return true;
		case BRAID_WL_LAZY:
			braid_select_set_rows(st, rows_built);
			wl->selecting = false;
			/* every row fitted the first pass: an ordinary OnePass sort */
			if (!st->path->sel.has_cutoff)
				return false;
			/* the build was the first pass; later ones have half the budget */
			wl->vrun = new_virtual_run(st);
			braid_select_end_first_pass(st, wl->vrun,
										Max(st->cfg.budget / 2 / st->cfg.stride, (size_t) 2),
										st->cfg.budget / 2);
			wl->held_bytes += st->path->sel.cap * st->cfg.stride;
			return true;
		default:
			return false;
	}
}

/*
 * wl_finish_build
 *		After the build: the mode's memory run and virtual run (true: the
 *		final merge runs), or, when it is an ordinary sort after all, the
 *		MergePass end (runs written, or a OnePass sort).
 */
static bool
wl_finish_build(BraidSortState *st, int64 rows_built)
{
	bool		wlimited;

	braid_pipe_end(st);
	wlimited = after_build(st, rows_built);
	st->instr.wl_mode = wlimited ? st->path->wl.mode : BRAID_WL_MERGEPASS;
	if (wlimited)
		return true;
	return braid_runs_finish(st);
}

/*
 * wl_final_runs
 *		The runs this mode adds to the final merge, after those on the
 *		device: the memory run, the virtual run (as many as it has), with
 *		their rows and the memory the mode holds while the rows are
 *		gathered.  The merge owns them from here on (braid_merge_release
 *		closes them).
 */
static int
wl_final_runs(BraidSortState *st, BraidRun **runs, int64 *rows, size_t *held_bytes)
{
	BraidWlimit *wl = &st->path->wl;
	int			n = 0;

	*rows = 0;
	if (wl->memrun)
	{
		runs[n++] = wl->memrun;
		*rows += wl->memrun->nrecords;
	}
	if (wl->vrun)
	{
		runs[n++] = wl->vrun;
		*rows += st->path->sel.seg_rows;
	}
	*held_bytes = wl->held_bytes;
	wl->memrun = NULL;
	wl->vrun = NULL;
	return n;
}

/*
 * wl_release
 *		Free what the mode holds and remove the entry log's files.
 */
static void
wl_release(BraidSortState *st)
{
	BraidWlimit *wl = &st->path->wl;

	braid_select_release(st);
	braid_run_close(wl->memrun);
	braid_run_close(wl->vrun);
	wl->memrun = NULL;
	wl->vrun = NULL;
	wl->selecting = false;
	wl->held_bytes = 0;
}
