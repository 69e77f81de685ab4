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

#include "core/costmodel.h"
#include "io/device.h"
#include "sort/sort_state.h"

/*
 * braid_merge_fanin
 *		How many runs one merge takes at once, within the budget, for the
 *		longest key built so far.
 */
int
braid_merge_fanin(const BraidSortState *st)
{
	return braid_cost_merge_fanin((double) st->cfg.budget, (double) st->build.longest_key);
}

/*
 * braid_sort_read_scope
 *		Begin a read grant on every device this sort reads back from: the
 *		runs being merged, the merged refs, the value log's segments.
 */
void
braid_sort_read_scope(BraidSortState *st, BraidReadScope *scope)
{
	scope->nslots = 0;
	for (int i = 0; i < st->merge.nruns; i++)
		if (st->merge.runs[i]->file)	/* (not a run in memory) */
			braid_read_scope_add(scope, st->merge.runs[i]->file);
	if (st->out.refs_run)
		braid_read_scope_add(scope, st->out.refs_run->file);
	if (st->cfg.value_log)
		for (int i = 0; i < st->vlog.nsegs; i++)
			braid_read_scope_add(scope, st->vlog.segs[i]);
	braid_read_scope_begin(scope);
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
	int			fanin = braid_merge_fanin(st);
	int			nruns;
	BraidRun  **runs;
	int64		n = 0;
	BraidReadScope scope;
	BraidRun   *memrun;
	BraidRun   *vrun;

	/*
	 * Runs made from half the IndexMap during the scan stand for half a run
	 * each: if the whole runs they replace would have been merged at once,
	 * so are they.  (Runs are read in place: the merge's memory is its
	 * readers' cursors and keys, which the fan-in keeps within a quarter
	 * of the budget.)
	 */
	if (st->runset.half_runs > 0)
	{
		int			whole = list_length(st->runset.runs) - st->runset.half_runs / 2;

		if (whole <= fanin)
			fanin = Min(Max(fanin, list_length(st->runset.runs)),
						braid_cost_merge_readers((double) st->cfg.budget,
												 (double) st->build.longest_key));
	}

	braid_sort_set_phase(st, BRAID_PROGRESS_MERGING);
	while (list_length(st->runset.runs) > fanin)
	{
		List	   *next = NIL;
		int			len = list_length(st->runset.runs);

		braid_progress_add_merge_pass(&st->mon.progress);
		runs = palloc(sizeof(BraidRun *) * fanin);
		for (int i = 0; i < len; i += fanin)
		{
			int			k = Min(fanin, len - i);

			for (int j = 0; j < k; j++)
				runs[j] = list_nth(st->runset.runs, i + j);
			if (k == 1)
				next = lappend(next, runs[0]);
			else
				next = lappend(next, braid_merge_runs(runs, k, &st->instr.device,
													  st->cfg.collated ? braid_sort_collated_compare : NULL,
													  st));
			CHECK_FOR_INTERRUPTS();
		}
		pfree(runs);
		list_free(st->runset.runs);
		st->runset.runs = next;
		st->instr.merge_passes++;
	}
	st->instr.merge_passes++;	/* the final merge */
	braid_progress_add_merge_pass(&st->mon.progress);

	/*
	 * A write-limited sort adds the runs it never wrote: the last IndexMap in
	 * memory, the virtual run its selection passes make during the merge.
	 * They only ever join the final merge (an intermediate pass would write
	 * them), which takes them beyond the fan-in: they cost no stream.
	 */
	braid_wl_merge_runs(st, &memrun, &vrun);
	nruns = list_length(st->runset.runs);
	runs = palloc(sizeof(BraidRun *) * (nruns + 2));
	for (int i = 0; i < nruns; i++)
	{
		runs[i] = list_nth(st->runset.runs, i);
		n += runs[i]->nrecords;
	}
	if (memrun)
	{
		runs[nruns++] = memrun;
		n += memrun->nrecords;
	}
	if (vrun)
	{
		runs[nruns++] = vrun;
		n += st->wl.seg_rows;
	}
	list_free(st->runset.runs);
	st->runset.runs = NIL;
	st->merge.runs = runs;
	st->merge.nruns = nruns;
	braid_sort_read_scope(st, &scope);
	st->merge.merger = braid_merger_begin(runs, nruns,
									st->cfg.collated ? braid_sort_collated_compare : NULL, st);
	braid_read_scope_end(&scope);

	if (st->cfg.random_access)
	{
		const uint8 *key;
		uint32		keylen;
		uint64		ref;

		st->out.refs_run = palloc0(sizeof(BraidRun));
		st->out.refs_run->file = braid_spill_create(n * sizeof(uint64), &st->instr.device);
		/* reads of the runs alternate with flushes of the refs (device.c) */
		braid_sort_read_scope(st, &scope);
		while (braid_merger_next(st->merge.merger, &key, &keylen, &ref))
			braid_spill_write(st->out.refs_run->file, &ref, sizeof(ref));
		braid_read_scope_end(&scope);
		braid_spill_finish(st->out.refs_run->file);
		st->out.refs_run->nrecords = n;
		st->out.refs_run->bytes = n * sizeof(uint64);
		braid_merger_end(st->merge.merger);
		st->merge.merger = NULL;
		for (int i = 0; i < nruns; i++)
			braid_run_close(runs[i]);
		st->merge.nruns = 0;
		st->out.refs = (uint64 *) st->out.refs_run->file->base;
		st->out.nrows = n;
	}
	else
	{
		st->out.nrows = n;

		/*
		 * The merge streams into the gather, batch by batch.  A helper can
		 * take the next batch while this one is gathered, when the keys
		 * compare by memcmp (a collation's comparator calls the server),
		 * no selection pass runs inside the merge, and the rows are
		 * gathered from the table with helpers, chunk by chunk (not
		 * streamed through a window, see gather_copy.c).
		 */
		st->merge.ahead_on = !st->cfg.collated && !st->cfg.value_log && vrun == NULL &&
			st->out.gather.rel != NULL && st->out.gather.threads > 1 &&
			st->out.gather.win_size == 0;
		if (st->merge.ahead_on)
		{
			braid_merger_defer_reads(st->merge.merger);
			memset(&st->merge.ahead, 0, sizeof(st->merge.ahead));
		}
	}
	MemoryContextSwitchTo(old);
}

/*
 * braid_merge_release
 *		Close the final merge and the runs it reads (their files go).
 */
void
braid_merge_release(BraidSortState *st)
{
	if (st->merge.merger)
	{
		braid_merger_end(st->merge.merger);
		st->merge.merger = NULL;
	}
	for (int i = 0; i < st->merge.nruns; i++)
		braid_run_close(st->merge.runs[i]);
	st->merge.nruns = 0;
}
