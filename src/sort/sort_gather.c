/*-------------------------------------------------------------------------
 *
 * sort_gather.c
 *	  GATHER: sorted refs become batches of whole rows.
 *
 * After a OnePass sort the IndexMap is compacted to its refs, and the
 * budget it frees becomes the gather's arena, or the refs go to the spill
 * device when that lets the whole budget hold tuples and saves passes over
 * the table (offload_refs).  After a MergePass the whole budget is the
 * gather's.  The sorted positions are cut into batches that fit the
 * arena: all at once when every ref is at hand (plan_memory_batches), or
 * one by one as a streaming merge produces them.  A batch is fetched from
 * the table in block order (tid_gather.c) and emitted in sorted order.
 *
 * Merge-ahead: while a batch is gathered with helper threads, an idle
 * helper takes the next batch's refs from the streaming merge
 * (merge_ahead_step), so the merge overlaps the gather.
 *
 * src/sort/sort_gather.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "guc.h"
#include "core/costmodel.h"
#include "io/device.h"
#include "io/devprofile.h"
#include "sort/sort_state.h"

static void size_batches(BraidSortState *st);

/*
 * braid_batches_begin
 *		Set the output up when the node's path is: the batches of a merge
 *		(an in-memory sort sets its own after compacting) and, in heap TID
 *		form, the gather of refetched tuples ("strip": the tuples' header
 *		fields the node's expressions do not read may be left out).
 */
void
braid_batches_begin(BraidSortState *st, bool strip)
{
	BraidOutput *out = &st->path->out;

	out->batch_bytes = Max(Min((size_t) braid_gather_batch * 1024, st->cfg.budget),
						   BRAID_MIN_ARENA);
	out->row_bytes = 0;
	out->released_unsized = 0;
	out->batch_cap = 64;
	out->batch_start = palloc(sizeof(int64) * out->batch_cap);
	if (st->cfg.value_log)
		return;
	braid_gather_begin(&out->gather, st->rel, st->gathercxt);
	braid_gather_set_threads(&out->gather, st->cfg.threads);
	braid_gather_set_strip(&out->gather, strip);
}

/*
 * braid_batches_clear
 *		Forget the batch loaded (the sort is built anew).
 */
void
braid_batches_clear(BraidSortState *st)
{
	braid_gather_reset(&st->path->out.gather);
}

/*
 * braid_batches_end
 *		The node ends: the gather's access strategy goes.
 */
void
braid_batches_end(BraidSortState *st)
{
	braid_gather_end(&st->path->out.gather);
}

/*
 * gather_arena
 *		The tuple bytes a gather batch may hold out of mem bytes of the
 *		budget: less the gather's bookkeeping per page of the table, shared
 *		with each row's (braid_cost_batch_arena), at most gather_batch and at
 *		least BRAID_MIN_ARENA.
 */
static size_t
gather_arena(const BraidSortState *st, double mem, double row_bytes,
			 BraidRefsAt refs_at)
{
	size_t		arena;

	arena = (size_t) braid_cost_gather_arena(mem, (double) st->path->out.gather.nblocks,
											 row_bytes, refs_at);
	arena = Min(arena, (size_t) braid_gather_batch * 1024);
	return Max(arena, (size_t) BRAID_MIN_ARENA);
}

/*
 * offload_refs
 *		After a OnePass sort, write the sorted refs to the spill device when
 *		that lets the whole budget hold gathered tuples and so saves gather
 *		passes over the table (braid_cost_offload_refs, a pass priced as
 *		the planner prices one of a table in shared buffers or not, in the
 *		table's order: the correlation is not known here, and a random
 *		order would only make offloading pay more); the IndexMap's
 *		memory then becomes the gather's arena.  False, changing nothing, if
 *		it does not pay or the device cannot take the refs (no room,
 *		temp_file_limit): the refs then simply stay in memory.
 */
static bool
offload_refs(BraidSortState *st, size_t arena_bytes, size_t block)
{
	size_t		n = (size_t) st->path->out.nrows;
	double		passes;
	size_t		arena;
	BraidSpillFile *file;
	Relation	rel = st->path->out.gather.rel;

	if (n == 0 || rel == NULL ||
		!braid_cost_offload_refs((double) n, (double) arena_bytes, (double) st->cfg.budget,
								 (double) braid_gather_batch * 1024.0,
								 (double) st->path->out.gather.nblocks,
								 st->path->out.gather.strategy == NULL ?
								 BRAID_NS_PER_PAGE_REVISIT : BRAID_NS_PER_PAGE_REREAD,
								 braid_sched_spill_ns_per_byte(braid_spill_tablespace_guess()),
								 &passes))
		return false;

	file = braid_spill_try_create(n * sizeof(uint64), &st->instr.device);
	if (file == NULL)
		return false;
	braid_spill_write(file, st->path->out.refs, n * sizeof(uint64));
	braid_spill_finish(file);

	st->path->out.refs_run = MemoryContextAllocZero(st->sortcxt, sizeof(BraidRun));
	st->path->out.refs_run->file = file;
	st->path->out.refs_run->nrecords = n;
	st->path->out.refs_run->bytes = n * sizeof(uint64);
	st->path->out.refs = (uint64 *) file->base;
	st->path->out.refs_offloaded = true;

	arena = gather_arena(st, (double) st->cfg.budget, (double) arena_bytes / n,
						 BRAID_REFS_ON_DEVICE);
	/* the IndexMap's memory, if large enough, else the gather's own */
	if (block >= arena)
		braid_gather_set_arena(&st->path->out.gather, (char *) st->path->map.entries, arena);
	else
		braid_map_free(st);
	st->path->out.batch_bytes = arena - BRAID_GATHER_HEADROOM;
	return true;
}

/*
 * braid_batches_after_onepass
 *		After a OnePass sort (the IndexMap sorted in memory) only the refs
 *		are needed (for the gather, rewinds, backward scans and
 *		mark/restore): the IndexMap packs them at its front and drops the
 *		full keys (sort_map.c).  Then either the refs go to the device and
 *		the whole IndexMap becomes the gather's arena (offload_refs), or the
 *		freed tail of the IndexMap is lent to the gather as its arena.
 *		Either way the gather's memory comes out of the same budget.
 */
void
braid_batches_after_onepass(BraidSortState *st)
{
	size_t		n = st->path->map.nentries;
	size_t		block;
	uint64	   *refs;
	size_t		used;
	size_t		want;
	size_t		tail;
	size_t		arena_bytes = 0;

	st->path->out.nrows = (int64) n;
	refs = braid_map_take_refs(st, &block);
	if (refs == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		arena_bytes += braid_gather_row_bytes(&st->path->out.gather, braid_ref_len(refs[i]));
	st->path->out.refs = refs;

	if (st->cfg.value_log)
		return;					/* rows are read in place: no gather arena */

	if (offload_refs(st, arena_bytes, block))
		return;

	/* arena: what the budget leaves beside the refs */
	used = MAXALIGN(n * sizeof(uint64));
	want = gather_arena(st, (double) st->cfg.budget - (double) used,
						n > 0 ? (double) arena_bytes / n : 1.0, BRAID_REFS_IN_MEMORY);
	tail = block - used;
	if (tail >= want)
		braid_gather_set_arena(&st->path->out.gather, (char *) refs + used, want);
	st->path->out.batch_bytes = want - BRAID_GATHER_HEADROOM;
}

/*
 * merge_streams_ahead
 *		Whether a helper can take the next batch from the streaming merge
 *		while this one is gathered: when the keys compare by memcmp (a
 *		collation's comparator calls the server), no run of the merge is
 *		made on demand inside it (a selection pass runs the executor), and
 *		the rows are gathered from the table with helpers, chunk by chunk
 *		(not streamed through a window, see tid_gather_copy.c).
 */
static bool
merge_streams_ahead(BraidSortState *st)
{
	if (st->cfg.collated || st->cfg.value_log || st->path->out.gather.rel == NULL ||
		st->path->out.gather.threads <= 1 || st->path->out.gather.win_size != 0)
		return false;
	for (int i = 0; i < st->path->merge.nruns; i++)
		if (st->path->merge.runs[i]->refill != NULL)
			return false;
	return true;
}

/*
 * braid_batches_after_merge
 *		After a MergePass: the merged refs written out (random access), or
 *		the merge streaming into the gather batch by batch, with a helper
 *		taking the next batch meanwhile where it can (merge_streams_ahead).
 *		The budget is then the gather's, less what a write-limited sort
 *		holds (its memory run, its candidates' room): its batches of tuples
 *		and their bookkeeping (each row's place, copy instruction and ref,
 *		and per page of the table its block lists), as the cost model
 *		reckons (braid_cost_gather_passes).
 */
void
braid_batches_after_merge(BraidSortState *st)
{
	double		row_bytes;

	st->path->out.refs_run = braid_merge_take_refs(st);
	st->path->out.nrows = st->path->merge.nrows;
	if (st->path->out.refs_run)
	{
		st->path->out.refs = (uint64 *) st->path->out.refs_run->file->base;
		st->path->out.ahead_on = false;
	}
	else
	{
		st->path->out.ahead_on = merge_streams_ahead(st);
		if (st->path->out.ahead_on)
		{
			braid_merger_defer_reads(st->path->merge.merger, true);
			memset(&st->path->out.ahead, 0, sizeof(st->path->out.ahead));
		}
	}

	if (st->cfg.value_log || st->path->build.rows_built == 0 || st->path->out.gather.rel == NULL)
		return;
	/* the average tuple, with half an alignment's padding */
	row_bytes = (double) st->path->build.tuple_bytes / st->path->build.rows_built - st->path->out.gather.strip +
		MAXIMUM_ALIGNOF / 2.0;
	st->path->out.row_bytes = row_bytes;
	size_batches(st);
}

/*
 * size_batches
 *		A MergePass's batch size: what the budget leaves beside what the
 *		strategy's runs hold (at least a quarter of it).
 */
static void
size_batches(BraidSortState *st)
{
	double		mem = Max((double) st->cfg.budget - (double) st->path->merge.held_bytes,
						  (double) st->cfg.budget / 4);

	st->path->out.batch_bytes = gather_arena(st, mem, st->path->out.row_bytes,
											 st->path->out.ahead_on ? BRAID_REFS_MERGED_AHEAD :
											 BRAID_REFS_ON_DEVICE) -
		BRAID_GATHER_HEADROOM;
}

/*
 * release_merged
 *		Before a streaming merge's next batch: the memory its runs kept in
 *		memory no longer need (what the merge has read of them) goes, and
 *		the batches grow by as much (a hybrid sort's memory run held all of
 *		its memory to the end, halving the gather's batches at beta 2).
 *		Between loads, so no helper is merging ahead.  A gather by TID's
 *		only: a value log's streaming merge (sort_vlog.c) sizes no batches
 *		by it and keeps its memory run to the end.
 */
static void
release_merged(BraidSortState *st)
{
	size_t		freed;

	if (st->path->merge.merger == NULL || st->path->merge.held_bytes == 0)
		return;
	freed = braid_merger_release_read(st->path->merge.merger);
	st->path->merge.held_bytes -= Min(freed, st->path->merge.held_bytes);
	st->path->out.released_unsized += freed;

	/*
	 * The batches grow in steps of a sixteenth of the budget at least: the
	 * gather's arena is made again for a larger batch, and growing it at
	 * every batch would fault tens of MB in again each time.
	 */
	if (st->path->out.row_bytes > 0 &&
		(st->path->out.released_unsized >= st->cfg.budget / 16 ||
		 st->path->merge.held_bytes == 0) && st->path->out.released_unsized > 0)
	{
		size_batches(st);
		st->path->out.released_unsized = 0;
	}
}

/*
 * braid_batches_start
 *		The sorted rows are to be returned from the first: no batch known
 *		yet but the first one's start.
 */
void
braid_batches_start(BraidSortState *st)
{
	st->path->out.nbatches = 0;
	st->path->out.batches_complete = false;
	st->path->out.batch_start[0] = 0;
}

/* add_batch_end: record the end of batch nbatches. */
static void
add_batch_end(BraidSortState *st, int64 end)
{
	if (st->path->out.nbatches + 2 > st->path->out.batch_cap)
	{
		st->path->out.batch_cap *= 2;
		st->path->out.batch_start = repalloc(st->path->out.batch_start, sizeof(int64) * st->path->out.batch_cap);
	}
	st->path->out.batch_start[++st->path->out.nbatches] = end;
}

/* refs of the merged refs file read at a time (64 kB) by plan_memory_batches */
#define REFS_READ_BLOCK 8192

/*
 * plan_memory_batches
 *		When all refs are at hand (in memory, or in the merged refs file)
 *		every batch boundary is known up front: close a batch before a row
 *		that would overflow the arena.
 */
static void
plan_memory_batches(BraidSortState *st)
{
	size_t		bytes = 0;
	int64		first = 0;
	int64		loaded = 0;

	for (int64 i = 0; i < st->path->out.nrows; i++)
	{
		size_t		len;

		/* refs in the merged refs file: read a block of them at a time */
		if (i == loaded)
		{
			loaded = Min(i + REFS_READ_BLOCK, st->path->out.nrows);
			if (st->path->out.refs_run)
				braid_spill_note_read(st->path->out.refs_run->file, i * sizeof(uint64),
									  loaded * sizeof(uint64));
			CHECK_FOR_INTERRUPTS();
		}
		len = braid_gather_row_bytes(&st->path->out.gather, braid_ref_len(st->path->out.refs[i]));

		/* close the batch before a row that would not fit in the arena */
		if (i > first &&
			(bytes + len > st->path->out.batch_bytes || i - first >= BRAID_MAX_BATCH_ROWS))
		{
			add_batch_end(st, i);
			first = i;
			bytes = 0;
		}
		bytes += len;
	}
	if (first < st->path->out.nrows)
		add_batch_end(st, st->path->out.nrows);
	st->path->out.batches_complete = true;
}

/*
 * grow_stream_refs
 *		Room for at least n refs in the in-memory batch of refs.
 */
static void
grow_stream_refs(BraidSortState *st, int n)
{
	int			cap;

	if (n <= st->path->out.stream_refs_cap)
		return;
	cap = Max(Max(st->path->out.stream_refs_cap * 2, 1024), n);
	st->path->out.stream_refs = st->path->out.stream_refs ?
		repalloc_huge(st->path->out.stream_refs, sizeof(uint64) * cap) :
		MemoryContextAllocHuge(st->sortcxt, sizeof(uint64) * cap);
	st->path->out.stream_refs_cap = cap;
}

/*
 * next_stream_batch
 *		Take the next batch of refs from the streaming merge, closing it at
 *		the batch byte limit; records its end, or marks the batch list
 *		complete when the merge is exhausted.
 */
static void
next_stream_batch(BraidSortState *st)
{
	int64		first = st->path->out.batch_start[st->path->out.nbatches];
	size_t		bytes = 0;
	int			n = 0;
	const uint8 *key;
	uint32		keylen;
	uint64		ref;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	release_merged(st);
	if (st->path->out.ahead_on && (st->path->out.ahead.n > 0 || st->path->out.ahead.closed))
	{
		/* a helper began the batch while the last one was gathered */
		uint64	   *refs = st->path->out.stream_refs;
		int			cap = st->path->out.stream_refs_cap;

		st->path->out.stream_refs = st->path->out.ahead.refs;
		st->path->out.stream_refs_cap = st->path->out.ahead.cap;
		n = st->path->out.ahead.n;
		bytes = st->path->out.ahead.bytes;
		st->instr.rows_merged_ahead += n;
		st->path->out.ahead.refs = refs;
		st->path->out.ahead.cap = cap;
		st->path->out.ahead.n = 0;
		st->path->out.ahead.bytes = 0;
		st->path->out.ahead.closed = false;
	}

	/*
	 * The helper's reads were paid for after the last batch's load
	 * (load_merging_ahead); the backend reads each block under a grant before
	 * it merges there, and defers again for the helper.
	 */
	if (st->path->out.ahead_on)
	{
		braid_merger_account(st->path->merge.merger);
		braid_merger_defer_reads(st->path->merge.merger, false);
	}
	while (bytes < st->path->out.batch_bytes && n < BRAID_MAX_BATCH_ROWS &&
		   braid_merger_next(st->path->merge.merger, &key, &keylen, &ref))
	{
		if (n == st->path->out.stream_refs_cap)
			grow_stream_refs(st, n + 1);
		st->path->out.stream_refs[n++] = ref;
		bytes += braid_gather_row_bytes(&st->path->out.gather, braid_ref_len(ref));
	}
	if (st->path->out.ahead_on)
		braid_merger_defer_reads(st->path->merge.merger, true);
	/* the final merge runs here, batch by batch: count it as merge time */
	st->instr.merge_stream_ms += braid_elapsed_ms(start);
	if (n == 0)
	{
		st->path->out.batches_complete = true;
		st->path->out.nrows = first;
		return;
	}
	add_batch_end(st, first + n);
}

/*
 * merge_ahead_step
 *		Idle work for a gather helper (BraidGatherIdleStep): take a few more
 *		refs of the next batch from the merge, stopping where
 *		next_stream_batch() would close the batch, when out of room, or
 *		when a key needs a larger buffer (the backend carries on from there).
 *		Pure memory work on the runs' mappings; of the node's state it reads
 *		only the merger, batch_bytes and the gather's strip, which do not
 *		change during a load, and writes only "ahead".
 */
static double
merge_ahead_step(void *arg)
{
	BraidSortState *st = (BraidSortState *) arg;
	BraidMergeAhead *a = &st->path->out.ahead;

	for (int i = 0; i < 256; i++)
	{
		uint64		ref;
		int			got;

		if (a->bytes >= st->path->out.batch_bytes || a->n >= BRAID_MAX_BATCH_ROWS)
		{
			a->closed = true;
			return 1.0;
		}
		if (a->n == a->cap)
			return 1.0;
		got = braid_merger_try_next(st->path->merge.merger, &ref);
		if (got < 0)
			return 1.0;
		if (got == 0)
		{
			a->closed = true;
			return 1.0;
		}
		a->refs[a->n++] = ref;
		a->bytes += braid_gather_row_bytes(&st->path->out.gather, braid_ref_len(ref));
	}
	/* the batch closes at about batch_bytes */
	return (double) a->bytes / st->path->out.batch_bytes;
}

/*
 * load_merging_ahead
 *		Load the batch just taken from the streaming merge, while a helper
 *		takes the next batch from it in the gather's idle moments.  A
 *		thread cannot wait for the device's gate: the helper's reads of the
 *		runs are accounted (and their emulated delay paid) after the load,
 *		each block under its own grant, and the load holds none.
 */
static void
load_merging_ahead(BraidSortState *st, int64 first, int n)
{
	BraidMergeAhead *a = &st->path->out.ahead;

	/* room for a batch like this one (the backend grows it if need be) */
	if (a->cap < st->path->out.stream_refs_cap)
	{
		a->refs = a->refs ?
			repalloc_huge(a->refs, sizeof(uint64) * st->path->out.stream_refs_cap) :
			MemoryContextAllocHuge(st->sortcxt, sizeof(uint64) * st->path->out.stream_refs_cap);
		a->cap = st->path->out.stream_refs_cap;
	}

	braid_gather_set_idle(&st->path->out.gather, merge_ahead_step, st);
	PG_TRY();
	{
		braid_gather_load(&st->path->out.gather, first, st->path->out.stream_refs, n);
	}
	PG_FINALLY();
	{
		braid_gather_set_idle(&st->path->out.gather, NULL, NULL);
	}
	PG_END_TRY();
	braid_merger_account(st->path->merge.merger);
}

/*
 * load_batch
 *		Make batch b the one in memory.  A streaming merge can only load the
 *		batch it has just taken (it never needs to go back).
 */
static void
load_batch(BraidSortState *st, int b, bool refs_ready)
{
	int64		first = st->path->out.batch_start[b];
	int			n = (int) (st->path->out.batch_start[b + 1] - first);

	if (st->path->out.refs != NULL && st->path->out.refs_run)
	{
		/*
		 * The batch's refs are copied out of the merged refs file under a
		 * read grant, so that the gather (heap I/O, and rows emitted one at a
		 * time) holds no grant on the spill device.
		 */
		grow_stream_refs(st, n);
		braid_spill_read_copy(st->path->out.refs_run->file, first * sizeof(uint64),
							  st->path->out.stream_refs, sizeof(uint64) * n);
		braid_gather_load(&st->path->out.gather, first, st->path->out.stream_refs, n);
	}
	else if (st->path->out.refs != NULL)
		braid_gather_load(&st->path->out.gather, first, st->path->out.refs + first, n);
	else
	{
		if (!refs_ready)
			elog(ERROR, "braidsort: a streaming merge cannot go back to row " INT64_FORMAT,
				 first);
		if (st->path->out.ahead_on && !st->path->out.ahead.closed)
			load_merging_ahead(st, first, n);
		else
			braid_gather_load(&st->path->out.gather, first, st->path->out.stream_refs, n);
	}
}

/*
 * braid_batches_position
 *		Load the batch holding sort position pos; false if pos is past the
 *		last row.
 */
bool
braid_batches_position(BraidSortState *st, int64 pos)
{
	BraidGather *g = &st->path->out.gather;
	instr_time	start;
	int			lo,
				hi;
	bool		fresh = false;
	const BraidProgress *prev;

	if (g->nrows > 0 && pos >= g->first && pos < g->first + g->nrows)
		return true;

	INSTR_TIME_SET_CURRENT(start);
	prev = braid_progress_enter(&st->mon.progress);
	if (!st->path->out.batches_complete && st->path->out.nbatches == 0 && st->path->merge.merger == NULL)
		plan_memory_batches(st);

	/* discover batches up to pos (streaming only: the others are planned) */
	while (pos >= st->path->out.batch_start[st->path->out.nbatches])
	{
		if (st->path->out.batches_complete)
		{
			braid_progress_leave(prev);
			st->instr.gather_ms += braid_elapsed_ms(start);
			return false;
		}
		next_stream_batch(st);
		fresh = true;
	}

	/* binary search: last b with batch_start[b] <= pos */
	lo = 0;
	hi = st->path->out.nbatches - 1;
	while (lo < hi)
	{
		int			mid = (lo + hi + 1) / 2;

		if (st->path->out.batch_start[mid] <= pos)
			lo = mid;
		else
			hi = mid - 1;
	}
	load_batch(st, lo, fresh && lo == st->path->out.nbatches - 1);
	braid_progress_set_batches(&st->mon.progress, st->path->out.gather.batches - st->mon.batches_before);
	braid_progress_leave(prev);
	st->instr.gather_ms += braid_elapsed_ms(start);
	return true;
}

/*
 * braid_batches_release
 *		Remove the file of sorted refs, merged or offloaded.
 */
void
braid_batches_release(BraidSortState *st)
{
	if (st->path->out.refs_run)
	{
		braid_run_close(st->path->out.refs_run);
		st->path->out.refs_run = NULL;
	}
	st->path->out.refs_offloaded = false;
}

/*
 * braid_batches_reset
 *		No refs, no batch of the merge taken (a rescan sorts again; their
 *		memory went with the sort's context).
 */
void
braid_batches_reset(BraidSortState *st)
{
	st->path->out.refs = NULL;
	st->path->out.stream_refs = NULL;
	st->path->out.stream_refs_cap = 0;
	st->path->out.ahead_on = false;
	memset(&st->path->out.ahead, 0, sizeof(st->path->out.ahead));
}
