/*-------------------------------------------------------------------------
 *
 * sort_runs.c
 *	  RUNS: the IndexMap sorted, and written to the spill device as a run.
 *
 * braid_sort_entries sorts the IndexMap in place with the sort threads
 * (indexmap.c).  When the IndexMap is full, braid_spill_run sorts it and
 * writes it as a run of front-coded <key, ref> records (merge.c), then
 * empties it.  After the first run, when the input is a plain table scan
 * and keys compare by memcmp, the pipe fills the IndexMap half at a time:
 * a helper thread sorts and codes one half while the scan fills the other,
 * as long as twice the runs still merge in one pass (pipe_pays).
 *
 * The helper only does memory work on the half (pipe_task); the backend
 * creates files, takes the device's write grant and records the run
 * (braid_pipe_step).
 *
 * src/sort/sort_runs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "io/device.h"
#include "core/pool.h"
#include "sort/sort_state.h"
#include "core/sync.h"

/* check_interrupts: the radix sort's hook for query cancel. */
static void
check_interrupts(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * braid_sort_entries
 *		Sort the IndexMap in place; with "rank", collated keys by their
 *		ranks first (braid_sort_rank_prefixes), when nothing compares the
 *		prefixes with others' after the sort: entries whose ranked prefixes
 *		hold their whole keys need no tie-break.
 */
void
braid_sort_entries(BraidSortState *st, bool rank)
{
	BraidSortSpec spec;
	bool		exact = rank && braid_sort_rank_prefixes(st);

	spec.keylen = st->cfg.radix_keylen;
	spec.stride = st->cfg.stride;
	spec.tiebreak = st->build.any_truncated && !exact ? braid_sort_tiebreak : NULL;
	spec.tiebreak_arg = st;
	spec.interrupt_check = check_interrupts;
	spec.interrupt_arg = NULL;
	braid_indexmap_sort_parallel(st->build.entries, st->build.nentries, &spec, st->cfg.threads);
	st->instr.sort_threads = st->cfg.threads;
}

/*
 * braid_spill_run
 *		The IndexMap is full: sort it, write it to the spill device as a run
 *		and empty it (its memory is reused for the next run).
 */
void
braid_spill_run(BraidSortState *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->sortcxt);
	BraidProgressPhase phase = st->mon.phase;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	braid_sort_set_phase(st, BRAID_PROGRESS_WRITING_RUN);
	braid_prefault_end();
	braid_build_note_peak(st);
	braid_sort_entries(st, true);
	st->runset.runs = lappend(st->runset.runs,
					   braid_run_write(st->build.entries, st->build.nentries, st->cfg.stride,
									   braid_sort_entry_key_of, st, st->cfg.threads,
									   &st->instr.device));
	st->instr.runs++;
	braid_progress_add_run(&st->mon.progress);
	st->build.nentries = 0;
	st->build.any_truncated = false;
	braid_ovf_free(&st->build.ovf);
	MemoryContextSwitchTo(old);
	braid_sort_set_phase(st, phase);
	st->runset.spill_ms += braid_elapsed_ms(start);
}

/*
 * pipe_task
 *		The helper's part of a run made during the build: sort the half and
 *		size its run, or code it into its file.  Pure memory work: the half
 *		has no truncated keys, so neither the sort nor braid_sort_entry_key_of() looks
 *		anything up.
 */
static void
pipe_task(void *arg, int worker)
{
	BraidPipe  *p = (BraidPipe *) arg;
	BraidSortState *st = p->st;

	if (worker != 1)
		return;
	if (p->stage == PIPE_SORTING)
	{
		BraidSortSpec spec = {0};

		spec.keylen = st->cfg.radix_keylen;
		spec.stride = st->cfg.stride;
		braid_indexmap_sort(p->entries, p->n, &spec);
		p->bytes = braid_run_size(p->entries, p->n, st->cfg.stride, braid_sort_entry_key_of, st);
	}
	else
		braid_run_code(p->entries, p->n, st->cfg.stride, braid_sort_entry_key_of, st,
					   p->run->file, p->dst, &p->stop);
}

/* pipe_post: hand the current stage to a helper (or do it, if none). */
static void
pipe_post(BraidSortState *st)
{
	BraidPipe  *p = &st->runset.pipe;

	p->helpers = braid_pool_start(2, pipe_task, p);
	if (p->helpers == 0)
		pipe_task(p, 1);
}

/*
 * braid_pipe_step
 *		Move the run being made on as far as it can go without waiting (or,
 *		with "wait", until it is finished): between the helper's stages the
 *		backend creates the run's file and takes the write grant, and at the
 *		end it finishes the file and adds the run.
 */
void
braid_pipe_step(BraidSortState *st, bool wait)
{
	BraidPipe  *p = &st->runset.pipe;
	BraidProgressPhase phase = st->mon.phase;
	MemoryContext old;

	/* the build stops until the run is made */
	if (wait && p->stage != PIPE_IDLE)
		braid_sort_set_phase(st, BRAID_PROGRESS_WRITING_RUN);
	while (p->stage != PIPE_IDLE)
	{
		if (p->helpers > 0)
		{
			if (!wait && braid_pool_busy())
				return;
			braid_pool_finish(2, p->helpers, pipe_task, p, false);
			p->helpers = 0;
		}
		old = MemoryContextSwitchTo(st->sortcxt);
		if (p->stage == PIPE_SORTING)
		{
			int			threads = 1;

			p->run = palloc0(sizeof(BraidRun));
			p->run->file = braid_spill_create(p->bytes, &st->instr.device);
			p->dst = braid_spill_fill_begin(p->run->file, p->bytes, &threads);
			p->stage = PIPE_CODING;
			pipe_post(st);
		}
		else
		{
			braid_spill_fill_end(p->run->file, p->bytes);
			braid_spill_finish(p->run->file);
			p->run->nrecords = p->n;
			p->run->bytes = p->bytes;
			st->runset.runs = lappend(st->runset.runs, p->run);
			st->instr.runs++;
			braid_progress_add_run(&st->mon.progress);
			st->runset.half_runs++;
			p->run = NULL;
			p->stage = PIPE_IDLE;
		}
		MemoryContextSwitchTo(old);
	}
	braid_sort_set_phase(st, phase);
}

/*
 * braid_pipe_stop
 *		On an error during the build: wait for a helper still at a run, so
 *		that it is done with the IndexMap and the run's mapping before they
 *		go.
 */
void
braid_pipe_stop(BraidSortState *st)
{
	BraidPipe  *p = &st->runset.pipe;

	braid_store_relaxed(&p->stop, true);
	if (p->helpers > 0)
		braid_pool_finish(2, p->helpers, pipe_task, p, false);
	p->helpers = 0;
	p->stage = PIPE_IDLE;
	p->on = false;
}

/*
 * pipe_pays
 *		Would halves, from here on, still leave no more runs than the final
 *		merge takes at once?  Twice the runs must not cost an intermediate
 *		merge pass (which would write every key again).  The rows still to
 *		come are the planner's estimate, with some room; past the estimate
 *		nobody knows, so whole runs again.  (Should more rows come than that
 *		room allows, braid_merge_all_runs() lets the final merge take the half runs as
 *		the whole runs they stand for.)
 */
static bool
pipe_pays(BraidSortState *st, size_t half)
{
	int			fanin = braid_merge_fanin(st);
	double		left = st->cfg.est_rows * 1.1 - (double) st->build.rows_built;
	double		runs;

	if (half < BRAID_PIPE_MIN_ENTRIES || (double) st->build.rows_built >= st->cfg.est_rows)
		return false;
	runs = (double) list_length(st->runset.runs) + (st->runset.pipe.stage != PIPE_IDLE ? 1 : 0) +
		1 + ceil(Max(left, 0.0) / (double) half);
	return runs <= fanin;
}

/*
 * braid_pipe_begin
 *		After the first run, when the build may make runs on a helper (a
 *		plain table scan feeds it, keys compare by memcmp, more than one
 *		thread): fill the IndexMap half at a time from now on.  Twice the
 *		runs, each made while the next half fills instead of stopping the
 *		scan.
 */
void
braid_pipe_begin(BraidSortState *st)
{
	BraidPipe  *p = &st->runset.pipe;

	if (!st->runset.pipe_allowed || !pipe_pays(st, st->build.capacity / 2))
		return;
	p->st = st;
	p->on = true;
	p->base = st->build.entries;
	p->full = st->build.capacity;
	p->stage = PIPE_IDLE;
	p->helpers = 0;
	st->build.capacity = p->full / 2;
}

/*
 * braid_pipe_swap
 *		The half being filled is full: once the other half's run is made,
 *		start making this one's and fill the other.
 */
void
braid_pipe_swap(BraidSortState *st)
{
	BraidPipe  *p = &st->runset.pipe;
	instr_time	start;

	/* more rows than expected: whole runs again, before halves cost a pass */
	if (!pipe_pays(st, st->build.capacity))
	{
		braid_pipe_end(st);
		return;
	}
	INSTR_TIME_SET_CURRENT(start);
	braid_pipe_step(st, true);
	p->entries = st->build.entries;
	p->n = st->build.nentries;
	p->stage = PIPE_SORTING;
	pipe_post(st);
	st->build.entries = (st->build.entries == p->base) ? p->base + st->build.capacity * st->cfg.stride :
		p->base;
	st->build.nentries = 0;
	st->build.any_truncated = false;
	st->runset.spill_ms += braid_elapsed_ms(start);
}

/*
 * braid_pipe_end
 *		Back to the whole IndexMap: wait for the run being made, and move
 *		the entries of the half being filled to its start.
 */
void
braid_pipe_end(BraidSortState *st)
{
	BraidPipe  *p = &st->runset.pipe;
	instr_time	start;

	if (!p->on)
		return;
	INSTR_TIME_SET_CURRENT(start);
	braid_pipe_step(st, true);
	if (st->build.entries != p->base)
		memmove(p->base, st->build.entries, st->build.nentries * st->cfg.stride);
	st->build.entries = p->base;
	st->build.capacity = p->full;
	p->on = false;
	/* the whole IndexMap again: the full keys' limit follows */
	if (st->build.keys_split)
		braid_build_split_limit(st);
	st->runset.spill_ms += braid_elapsed_ms(start);
}

/*
 * braid_runs_release
 *		Remove the runs not yet merged.
 */
void
braid_runs_release(BraidSortState *st)
{
	ListCell   *lc;

	foreach(lc, st->runset.runs)
		braid_run_close((BraidRun *) lfirst(lc));
	st->runset.runs = NIL;
}
