/*-------------------------------------------------------------------------
 *
 * sort_runs.c
 *	  RUNS, and the MergePass strategy: the IndexMap, when full, sorted and
 *	  written to the spill device as a run.
 *
 * The MergePass strategy (braid_mergepass_strategy) appends each entry the
 * build hands it to the IndexMap (braid_runs_put, sort_map.c keeping the
 * entries and their full keys within the budget).  When the IndexMap is
 * full, braid_spill_run sorts it (sort_map.c) and writes it as a run of
 * front-coded <key, ref> records (runfile.c), then empties it.  After the
 * first run, when the input is a plain table scan and keys compare by
 * memcmp, the pipe fills the IndexMap half at a time: a helper thread
 * sorts and codes one half while the scan fills the other, as long as
 * twice the runs still merge in one pass (pipe_pays).  At the end of the
 * input the rest becomes the last run and the final merge takes the runs
 * (sort_merge.c), or, if nothing was written, the IndexMap is sorted in
 * memory (OnePass).  The write-limited modes (sort_wlimit.c) send the
 * entries they write through here too.
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

#include "core/costmodel.h"
#include "core/pool.h"
#include "core/sync.h"
#include "io/device.h"
#include "sort/sort_state.h"

static void braid_pipe_begin(BraidSortState *st);
static void braid_pipe_swap(BraidSortState *st);
static void braid_pipe_step(BraidSortState *st, bool wait);

static int64 mergepass_start_build(BraidSortState *st, int64 rows_carried);
static bool mergepass_finish_build(BraidSortState *st, int64 rows_built);
static int	mergepass_final_runs(BraidSortState *st, BraidRun **runs, int64 *rows,
								 size_t *held_bytes);
static void mergepass_release(BraidSortState *st);

/* MergePass: every entry through the IndexMap, runs when it is full */
const BraidSortStrategy braid_mergepass_strategy = {
	.start_build = mergepass_start_build,
	.put = braid_runs_put,
	.finish_build = mergepass_finish_build,
	.final_runs = mergepass_final_runs,
	.release = mergepass_release,
};

/*
 * braid_runs_fanin
 *		How many runs one merge takes at once, within the budget, for the
 *		longest key built so far.
 */
int
braid_runs_fanin(const BraidSortState *st)
{
	return braid_cost_merge_fanin((double) st->cfg.budget, (double) st->path->map.longest_key);
}

/*
 * braid_runs_start
 *		Before a build: no run yet, and whether runs may be made on a helper
 *		while it goes on (the pipe: a plain table scan feeds the build, so
 *		that the run's write grant is held over nothing but the scan, and
 *		nothing else wants the thread pool).
 */
void
braid_runs_start(BraidSortState *st, bool pipe_allowed)
{
	memset(&st->path->runset.pipe, 0, sizeof(st->path->runset.pipe));
	st->path->runset.pipe_allowed = pipe_allowed;
	st->path->runset.half_runs = 0;
	st->path->runset.entries_put = 0;
	st->path->runset.spill_ms = 0;
}

/*
 * braid_runs_reset
 *		No run and no pipe (a rescan sorts again; the runs' files were
 *		removed, their memory went with the sort's context).
 */
void
braid_runs_reset(BraidSortState *st)
{
	memset(&st->path->runset.pipe, 0, sizeof(st->path->runset.pipe));
	st->path->runset.runs = NIL;
}

/*
 * braid_pipe_allow
 *		Whether runs may be made on a helper from now on (a write-limited
 *		mode's selection or memory run forbids it).
 */
void
braid_pipe_allow(BraidSortState *st, bool allowed)
{
	st->path->runset.pipe_allowed = allowed;
}

/*
 * split_budget
 *		Full keys kept aside share the budget: the entries' share from the
 *		keys seen so far, for the rows still expected (sort_map.c).
 */
static void
split_budget(BraidSortState *st)
{
	braid_map_split_budget(st, st->cfg.est_rows - (double) st->path->build.rows_built,
						   !st->path->runset.pipe.on);
}

/*
 * keys_share
 *		The entries' share of a split IndexMap once a key kept aside makes
 *		the store "after" bytes of the "map" the two share: split_cap, or
 *		fewer so that the store holds this key at least (its first arena
 *		and slots, a few kB, can be more than the split leaves the keys of
 *		a small budget with rare long keys).
 */
static size_t
keys_share(const BraidSortState *st, size_t after, size_t map)
{
	const BraidIndexMap *m = &st->path->map;
	size_t		share = Min(m->capacity, m->split_cap);

	if (share * st->cfg.stride + after > map && map >= after + 2 * st->cfg.stride)
		share = Min(share, (map - after) / st->cfg.stride);
	return share;
}

/*
 * braid_runs_put
 *		The MergePass strategy's entry (and that of the rows a write-limited
 *		sort sends through runs): append it to the IndexMap, writing the
 *		IndexMap out as a run first if it is full, and move a run being made
 *		on a helper along.  "sortable" is the key's memcmp-ordered head
 *		(BraidKeyBuffer.sortable).
 */
void
braid_runs_put(BraidSortState *st, const uint8 *key, size_t len, size_t sortable,
			   uint64 ref)
{
	BraidIndexMap *m = &st->path->map;
	bool		aside;

	if (m->nentries == m->capacity)
	{
		if (st->path->runset.pipe.on)
			braid_pipe_swap(st);
		else if (!braid_map_grow(st))
		{
			if (m->nentries == 0)
				elog(ERROR, "braidsort: budget too small for a single IndexMap entry");
			braid_spill_run(st);
			/* the split's room for the next run, before it is halved */
			if (m->keys_split)
				split_budget(st);
			braid_pipe_begin(st);
		}
	}

	/* full keys kept aside: the whole IndexMap again, made serially */
	aside = st->cfg.collated || len > st->cfg.keylen;
	if (aside && st->path->runset.pipe.on)
		braid_pipe_end(st);

	/*
	 * Keeping this key aside would take the IndexMap and the full keys beyond
	 * their budget (the key store grows by doubling): from now on the entries
	 * keep to their share (split_budget: from the average key so far, again
	 * at each run's start), their full keys to the rest (the store's limit),
	 * and a run is written first if the entries held fill their share or the
	 * key does not fit the rest.  Only a key larger than the keys' share is
	 * kept beyond it (with the entries beside it).
	 */
	braid_map_note_key(st, len, aside);
	if (m->keys_split && m->nentries == 0)
		split_budget(st);
	if (aside)
	{
		size_t		map = braid_map_budget(st);
		size_t		after = braid_map_key_bytes_after(st, len);

		if (m->capacity * st->cfg.stride + after > map)
		{
			size_t		share;

			if (!m->keys_split)
			{
				split_budget(st);
				after = braid_map_key_bytes_after(st, len);
			}
			share = keys_share(st, after, map);
			if (m->nentries > 0 &&
				(m->nentries >= share || share * st->cfg.stride + after > map))
			{
				braid_spill_run(st);
				split_budget(st);
				after = braid_map_key_bytes_after(st, len);
				share = keys_share(st, after, map);
			}
			if (m->capacity > share)
				braid_map_resize(st, share);
		}
	}

	(void) braid_map_place(st, key, len, sortable, ref);

	/* a run being made on a helper moves along */
	if ((++st->path->runset.entries_put & 4095) == 0 && st->path->runset.pipe.stage != PIPE_IDLE)
		braid_pipe_step(st, false);
}

/*
 * write_first_run
 *		Sort the IndexMap's first n entries and write them to the spill
 *		device as a run; the IndexMap then counts those n only (the caller
 *		empties it or keeps the rest).
 */
static void
write_first_run(BraidSortState *st, size_t n)
{
	MemoryContext old = MemoryContextSwitchTo(st->sortcxt);
	BraidProgressPhase phase = st->mon.phase;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	braid_sort_set_phase(st, BRAID_PROGRESS_WRITING_RUN);
	braid_prefault_end();
	braid_map_note_peak(st);
	st->path->map.nentries = n;
	braid_map_sort(st, true);
	st->path->runset.runs = lappend(st->path->runset.runs,
									braid_run_write(st->path->map.entries, n, st->cfg.stride,
													braid_map_entry_key_of, st, st->cfg.threads,
													&st->instr.device));
	st->instr.runs++;
	braid_progress_add_run(&st->mon.progress);
	MemoryContextSwitchTo(old);
	braid_sort_set_phase(st, phase);
	st->path->runset.spill_ms += braid_elapsed_ms(start);
}

/*
 * braid_spill_run
 *		The IndexMap is full: sort it, write it to the spill device as a run
 *		and empty it (its memory is reused for the next run).
 */
void
braid_spill_run(BraidSortState *st)
{
	write_first_run(st, st->path->map.nentries);
	braid_map_clear(st);
}

/*
 * braid_spill_run_part
 *		Write the IndexMap's first n entries (the oldest) as a run and keep
 *		the rest, moved to its start: a hybrid or segment sort whose input
 *		runs past the estimate keeps most of its memory run this way
 *		(sort_wlimit.c).  The full keys kept aside are copied into a fresh
 *		store, the kept entries' only (braid_map_keep_first): left in the
 *		old one, the written entries' keys would fill the keys' share and
 *		end the memory run with a whole run soon after.  Not while a run is
 *		being made on a helper, nor with a store larger than a sixteenth of
 *		the budget; false, having done nothing, then.
 */
bool
braid_spill_run_part(BraidSortState *st, size_t n)
{
	BraidIndexMap *m = &st->path->map;
	size_t		store = braid_ovf_bytes(&m->ovf);
	size_t		keep;

	/*
	 * The fresh store is made beside the old one: only while that costs no
	 * more than a sixteenth of the budget (rare long keys), else the whole
	 * IndexMap goes, which empties the store.
	 */
	if (n == 0 || n >= m->nentries || st->path->runset.pipe.on ||
		store > braid_map_budget(st) / 16)
		return false;
	keep = m->nentries - n;
	write_first_run(st, n);
	memmove(m->entries, m->entries + n * st->cfg.stride, keep * st->cfg.stride);
	braid_map_keep_first(st, keep);
	/* both stores were held at once */
	st->instr.peak_map_bytes = Max(st->instr.peak_map_bytes,
								   m->capacity * st->cfg.stride + store +
								   braid_ovf_bytes(&m->ovf));
	return true;
}

/*
 * pipe_task
 *		The helper's part of a run made during the build: sort the half and
 *		size its run, or code it into its file.  Pure memory work: the half
 *		has no truncated keys, so neither the sort nor
 *		braid_map_entry_key_of() looks anything up.
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
		p->bytes = braid_run_size(p->entries, p->n, st->cfg.stride, braid_map_entry_key_of, st);
	}
	else
		braid_run_code(p->entries, p->n, st->cfg.stride, braid_map_entry_key_of, st,
					   p->run->file, p->dst, &p->stop);
}

/* pipe_post: hand the current stage to a helper (or do it, if none). */
static void
pipe_post(BraidSortState *st)
{
	BraidPipe  *p = &st->path->runset.pipe;

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
static void
braid_pipe_step(BraidSortState *st, bool wait)
{
	BraidPipe  *p = &st->path->runset.pipe;
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
			st->path->runset.runs = lappend(st->path->runset.runs, p->run);
			st->instr.runs++;
			braid_progress_add_run(&st->mon.progress);
			st->path->runset.half_runs++;
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
	BraidPipe  *p = &st->path->runset.pipe;

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
 *		room allows, braid_merge_all_runs() lets the final merge take the half runs
 *		as the whole runs they stand for.)
 */
static bool
pipe_pays(BraidSortState *st, size_t half)
{
	int			fanin = braid_runs_fanin(st);
	double		left = st->cfg.est_rows * 1.1 - (double) st->path->build.rows_built;
	double		runs;

	if (half < BRAID_PIPE_MIN_ENTRIES || (double) st->path->build.rows_built >= st->cfg.est_rows)
		return false;
	runs = (double) list_length(st->path->runset.runs) + (st->path->runset.pipe.stage != PIPE_IDLE ? 1 : 0) +
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
static void
braid_pipe_begin(BraidSortState *st)
{
	BraidPipe  *p = &st->path->runset.pipe;

	if (!st->path->runset.pipe_allowed || !pipe_pays(st, st->path->map.capacity / 2))
		return;
	p->st = st;
	p->on = true;
	p->stage = PIPE_IDLE;
	p->helpers = 0;
	p->base = braid_map_halve(st, &p->full);
}

/*
 * braid_pipe_swap
 *		The half being filled is full: once the other half's run is made,
 *		start making this one's and fill the other.
 */
static void
braid_pipe_swap(BraidSortState *st)
{
	BraidPipe  *p = &st->path->runset.pipe;
	instr_time	start;

	/* more rows than expected: whole runs again, before halves cost a pass */
	if (!pipe_pays(st, st->path->map.capacity))
	{
		braid_pipe_end(st);
		return;
	}
	INSTR_TIME_SET_CURRENT(start);
	braid_pipe_step(st, true);
	p->entries = st->path->map.entries;
	p->n = st->path->map.nentries;
	p->stage = PIPE_SORTING;
	pipe_post(st);
	braid_map_next_half(st, st->path->map.entries == p->base ?
						p->base + st->path->map.capacity * st->cfg.stride : p->base);
	st->path->runset.spill_ms += braid_elapsed_ms(start);
}

/*
 * braid_pipe_end
 *		Back to the whole IndexMap: wait for the run being made, and move
 *		the entries of the half being filled to its start.
 */
void
braid_pipe_end(BraidSortState *st)
{
	BraidPipe  *p = &st->path->runset.pipe;
	instr_time	start;

	if (!p->on)
		return;
	INSTR_TIME_SET_CURRENT(start);
	braid_pipe_step(st, true);
	braid_map_whole(st, p->base, p->full);
	p->on = false;
	st->path->runset.spill_ms += braid_elapsed_ms(start);
}

/*
 * braid_runs_finish
 *		The end of the input: if runs were written, the rest of the IndexMap
 *		becomes the last run and the final merge runs (true); otherwise the
 *		IndexMap is sorted in memory (false: OnePass).
 */
bool
braid_runs_finish(BraidSortState *st)
{
	if (st->path->runset.runs == NIL)
		return false;
	if (st->path->map.nentries > 0)
		braid_spill_run(st);
	return true;
}

/*
 * braid_runs_take
 *		The runs written, for the final merge, which owns them from then on;
 *		*half_runs: how many of them the pipe made of half an IndexMap.
 */
List *
braid_runs_take(BraidSortState *st, int *half_runs)
{
	List	   *runs = st->path->runset.runs;

	*half_runs = st->path->runset.half_runs;
	st->path->runset.runs = NIL;
	return runs;
}

/*
 * braid_runs_release
 *		Remove the runs not yet merged.
 */
void
braid_runs_release(BraidSortState *st)
{
	ListCell   *lc;

	foreach(lc, st->path->runset.runs)
		braid_run_close((BraidRun *) lfirst(lc));
	st->path->runset.runs = NIL;
}

/* mergepass_start_build: every row makes an entry. */
static int64
mergepass_start_build(BraidSortState *st, int64 rows_carried)
{
	return 0;
}

/* mergepass_finish_build: the last run, if runs were written. */
static bool
mergepass_finish_build(BraidSortState *st, int64 rows_built)
{
	braid_pipe_end(st);
	st->instr.wl_mode = BRAID_WL_MERGEPASS;
	return braid_runs_finish(st);
}

/* mergepass_final_runs: the final merge reads the runs on the device only. */
static int
mergepass_final_runs(BraidSortState *st, BraidRun **runs, int64 *rows, size_t *held_bytes)
{
	*rows = 0;
	*held_bytes = 0;
	return 0;
}

/* mergepass_release: nothing of its own (the runs are RUNS'). */
static void
mergepass_release(BraidSortState *st)
{
}
