/*-------------------------------------------------------------------------
 *
 * sort_merge.c
 *	  MERGE: the runs merged, in passes if need be, then the final merge.
 *
 * The fan-in is the budget over BRAID_MERGE_RUN_BYTES: runs are read in
 * place from their mappings, and a reader holds only its cursor and its
 * current key (at most 1024 runs at once, to keep streams few).  While there
 * are more runs than that, intermediate passes merge groups of runs into
 * new runs (writing keys and refs again, never values).  The final merge
 * then either streams into the gather, which takes it batch by batch
 * (sort_gather.c), or -- when the node must support backward
 * scans, mark/restore or rewinds -- writes the merged refs, 8 bytes a row,
 * to a file the gather reads by position.
 *
 * src/sort/sort_merge.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "core/collmemo.h"
#include "core/costmodel.h"
#include "io/device.h"
#include "sort/sort_state.h"

/*
 * merge_memo_bytes
 *		A loser-tree node's memo for keys with collated columns: the last two
 *		strings it ordered by the collation (core/collmemo.h), which the
 *		node's next matches often ask about again.  None for other keys.
 */
static size_t
merge_memo_bytes(const BraidSortState *st)
{
	return st->cfg.collated ? sizeof(BraidCollMemo) : 0;
}

/*
 * merge_passes
 *		Intermediate passes, fanin runs into one at a time, while more than
 *		"most" runs are pending; returns the runs left.
 */
static List *
merge_passes(BraidSortState *st, List *pending, int fanin, int most)
{
	BraidRun  **runs;

	fanin = Max(fanin, 2);
	while (list_length(pending) > most)
	{
		List	   *next = NIL;
		int			len = list_length(pending);

		braid_progress_add_merge_pass(&st->mon.progress);
		runs = palloc(sizeof(BraidRun *) * fanin);
		for (int i = 0; i < len; i += fanin)
		{
			int			k = Min(fanin, len - i);

			for (int j = 0; j < k; j++)
				runs[j] = list_nth(pending, i + j);
			if (k == 1)
				next = lappend(next, runs[0]);
			else
				next = lappend(next, braid_merge_runs(runs, k, &st->instr.device,
													  st->cfg.collated ? braid_map_collated_compare : NULL,
													  st, merge_memo_bytes(st)));
			CHECK_FOR_INTERRUPTS();
		}
		pfree(runs);
		list_free(pending);
		pending = next;
		st->instr.merge_passes++;
	}
	return pending;
}

/*
 * braid_merge_runs_down
 *		Merge the runs written so far in passes until at most max_runs are
 *		left (a shared sort's participant, whose runs another process's
 *		final merge takes: sort_shared.c).
 */
void
braid_merge_runs_down(BraidSortState *st, int max_runs)
{
	MemoryContext old;
	int			half_runs;
	List	   *pending;

	if (list_length(st->path->runset.runs) <= max_runs)
		return;
	old = MemoryContextSwitchTo(st->sortcxt);
	pending = braid_runs_take(st, &half_runs);
	braid_sort_set_phase(st, BRAID_PROGRESS_MERGING);
	st->path->runset.runs = merge_passes(st, pending, braid_runs_fanin(st), max_runs);
	/* (the runs merged down are whole ones) */
	st->path->runset.half_runs = 0;
	MemoryContextSwitchTo(old);
}

/*
 * braid_merge_all_runs
 *		MergePass: merge the spilled runs, fan-in limited by the budget, with
 *		intermediate passes writing new runs while there are too many; then
 *		set up the final merge.  With random access it is written out as a
 *		file of refs the gather reads by position; otherwise it streams.
 */
void
braid_merge_all_runs(BraidSortState *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->sortcxt);
	int			fanin = braid_runs_fanin(st);
	int			half_runs;
	List	   *pending = braid_runs_take(st, &half_runs);
	int			nruns;
	BraidRun  **runs;
	int64		n = 0;
	int64		strategy_rows;
	int			nstrategy;

	/*
	 * Runs made from half the IndexMap during the scan stand for half a run
	 * each: if the whole runs they replace would have been merged at once, so
	 * are they.  (Runs are read in place: the merge's memory is its readers'
	 * cursors and keys, which the fan-in keeps within a quarter of the
	 * budget.)
	 */
	if (half_runs > 0)
	{
		int			whole = list_length(pending) - half_runs / 2;

		if (whole <= fanin)
			fanin = Min(Max(fanin, list_length(pending)),
						braid_cost_merge_readers((double) st->cfg.budget,
												 (double) st->path->map.longest_key));
	}

	braid_sort_set_phase(st, BRAID_PROGRESS_MERGING);
	pending = merge_passes(st, pending, fanin, fanin);
	st->instr.merge_passes++;	/* the final merge */
	braid_progress_add_merge_pass(&st->mon.progress);

	/*
	 * The strategy adds the runs it never wrote (a write-limited sort: the
	 * last IndexMap in memory, the virtual run its selection passes make
	 * during the merge).  They only ever join the final merge (an
	 * intermediate pass would write them), which takes them beyond the
	 * fan-in: they cost no stream.
	 */
	nruns = list_length(pending);
	runs = palloc(sizeof(BraidRun *) * (nruns + BRAID_MAX_STRATEGY_RUNS));
	for (int i = 0; i < nruns; i++)
	{
		runs[i] = list_nth(pending, i);
		n += runs[i]->nrecords;
	}
	list_free(pending);
	nstrategy = st->strategy->final_runs(st, runs + nruns, &strategy_rows,
										 &st->path->merge.held_bytes);
	Assert(nstrategy <= BRAID_MAX_STRATEGY_RUNS);
	nruns += nstrategy;
	n += strategy_rows;
	st->path->merge.runs = runs;
	st->path->merge.nruns = nruns;
	st->path->merge.nrows = n;
	st->path->merge.merger = braid_merger_begin(runs, nruns,
												st->cfg.collated ? braid_map_collated_compare : NULL,
												st, merge_memo_bytes(st));

	if (st->cfg.random_access)
	{
		const uint8 *key;
		uint32		keylen;
		uint64		ref;
		BraidRun   *refs = palloc0(sizeof(BraidRun));

		refs->file = braid_spill_create(n * sizeof(uint64), &st->instr.device);
		st->path->merge.refs_run = refs;
		/* block reads of the runs alternate with flushes of the refs */
		while (braid_merger_next(st->path->merge.merger, &key, &keylen, &ref))
			braid_spill_write(refs->file, &ref, sizeof(ref));
		braid_spill_finish(refs->file);
		refs->nrecords = n;
		refs->bytes = n * sizeof(uint64);
		braid_merger_end(st->path->merge.merger);
		st->path->merge.merger = NULL;
		for (int i = 0; i < nruns; i++)
		{
			/* a run kept in memory no longer holds it during the gather */
			if (runs[i]->mem != NULL && runs[i]->refill == NULL)
				st->path->merge.held_bytes -= Min(runs[i]->bytes - runs[i]->given_back,
												  st->path->merge.held_bytes);
			braid_run_close(runs[i]);
		}
		st->path->merge.nruns = 0;
	}
	MemoryContextSwitchTo(old);
}

/*
 * braid_merge_take_refs
 *		The merged refs written out (random access), for the gather, which
 *		owns them from then on; NULL when the merge streams.
 */
BraidRun *
braid_merge_take_refs(BraidSortState *st)
{
	BraidRun   *refs = st->path->merge.refs_run;

	st->path->merge.refs_run = NULL;
	return refs;
}

/*
 * braid_merge_release
 *		Close the final merge and the runs it reads (their files go).
 */
void
braid_merge_release(BraidSortState *st)
{
	if (st->path->merge.merger)
	{
		braid_merger_end(st->path->merge.merger);
		st->path->merge.merger = NULL;
	}
	for (int i = 0; i < st->path->merge.nruns; i++)
		braid_run_close(st->path->merge.runs[i]);
	st->path->merge.nruns = 0;
	braid_run_close(st->path->merge.refs_run);
	st->path->merge.refs_run = NULL;
}

/*
 * braid_merge_reset
 *		No merge yet (a rescan sorts again; the runs' memory went with the
 *		sort's context).
 */
void
braid_merge_reset(BraidSortState *st)
{
	st->path->merge.merger = NULL;
	st->path->merge.runs = NULL;
	st->path->merge.nruns = 0;
	st->path->merge.nrows = 0;
	st->path->merge.refs_run = NULL;
	st->path->merge.held_bytes = 0;
}
