/*-------------------------------------------------------------------------
 *
 * sort_adaptive.c
 *	  ADAPTIVE: PostgreSQL's own sort first, braidsort's past work_mem.
 *
 * The planner leaves a Sort to PostgreSQL when it expects few rows, or rows
 * that fit in work_mem: there PostgreSQL's in-memory quicksort is as good
 * as anything.  But row estimates are often wrong by orders of magnitude
 * (correlated predicates, functions, joins of skewed data), and a sort
 * estimated at a hundred rows then spills gigabytes to temporary files.
 * A sort braidsort declines only for its estimate is therefore taken
 * "adaptively" (planner.c): the node runs PostgreSQL's tuplesort, with the
 * same keys and work_mem, and watches its memory.
 *
 * If the input ends within work_mem, the tuplesort sorts in memory and the
 * node returns its rows exactly as a Sort node would, with backward scans,
 * mark/restore and rewinds from the tuplesort (as nodeSort.c does).
 *
 * If the input outgrows work_mem -- where PostgreSQL's sort would start
 * writing runs of whole tuples -- the node switches: the tuplesort sorts
 * what it holds in memory (as PostgreSQL's first run would be) and hands
 * those rows to BUILD (braid_adaptive_carry), which makes their entries
 * before those of the rows after them, read from the child as usual.  From
 * then on the node is a BraidSort.  The tuplesort is given twice work_mem
 * so that the switch, checked after every row, comes before it would
 * spill; a single row larger than that makes the tuplesort spill on its
 * own, and the node then stays PostgreSQL's external sort.
 *
 * The node has the two forms of a BraidSort (planner.c).  Over a value log
 * the tuplesort sorts the child's rows, and the node projects them as it
 * projects rows read back from the log; carried rows go to the log.  Over
 * a heap scan (heap TID form) the child outputs only keys, so the node
 * projects each scan tuple into its output row itself and the tuplesort
 * sorts those rows, each with the tuple's ref (TID and length) in an extra
 * last column: the rows it returns are the node's output as they are, and
 * a carried row becomes an entry <key, ref> like any other, its tuple
 * refetched by TID at gather time like the rest.
 *
 * src/sort_adaptive.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "keys.h"
#include "refs.h"

#include "sort_state.h"
#include "stats.h"

/*
 * braid_adaptive_begin
 *		Set up an adaptive node: the slot its tuplesort's rows are read
 *		into.  Nothing else is allocated until it runs.
 */
void
braid_adaptive_begin(BraidSortState *st, const BraidSortPlanData *data, EState *estate)
{
	PlanState  *ps = &st->css.ss.ps;
	TupleDesc	outdesc;
	TupleDesc	sortdesc;
	bool		fixed;

	st->adapt.on = true;
	if (st->cfg.value_log)
	{
		st->adapt.slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(st->child),
												&TTSOpsMinimalTuple);
		st->adapt.sortcols = st->cfg.keycols;
		return;
	}

	/* heap TID form: the output row, then the ref */
	outdesc = ExecGetResultType(ps);
	st->adapt.nout = outdesc->natts;
	st->adapt.sortcols = data->keycols;
	sortdesc = CreateTemplateTupleDesc(outdesc->natts + 1);
	for (int i = 0; i < outdesc->natts; i++)
		TupleDescCopyEntry(sortdesc, i + 1, outdesc, i + 1);
	TupleDescInitEntry(sortdesc, outdesc->natts + 1, "braid_ref", INT8OID, -1, 0);
	st->adapt.put_slot = ExecInitExtraTupleSlot(estate, sortdesc, &TTSOpsVirtual);
	st->adapt.slot = ExecInitExtraTupleSlot(estate, sortdesc, &TTSOpsMinimalTuple);

	/*
	 * The node's target list over the child's scan tuple (a buffer heap
	 * tuple, where the node's own projection reads refetched heap tuples):
	 * built without assuming the scan slot's kind.
	 */
	fixed = ps->scanopsfixed;
	ps->scanopsfixed = false;
	st->adapt.proj = ExecBuildProjectionInfo(ps->plan->targetlist, ps->ps_ExprContext,
											 ExecInitExtraTupleSlot(estate, outdesc,
																	&TTSOpsVirtual),
											 ps, RelationGetDescr(st->rel));
	ps->scanopsfixed = fixed;
}

/*
 * tid_row
 *		Heap TID form: the row the child just returned (its scan tuple) as
 *		the node outputs it, with its ref after it.
 */
static TupleTableSlot *
tid_row(BraidSortState *st, TupleTableSlot *slot)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	TupleTableSlot *put = st->adapt.put_slot;
	TupleTableSlot *row;
	uint64		ref;
	uint32		tuple_len;
	int			n = st->adapt.nout;

	(void) braid_build_heap_row(st, slot, false, &ref, &tuple_len);
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = ((ScanState *) st->child)->ss_ScanTupleSlot;
	row = ExecProject(st->adapt.proj);
	slot_getallattrs(row);
	ExecClearTuple(put);
	memcpy(put->tts_values, row->tts_values, sizeof(Datum) * n);
	memcpy(put->tts_isnull, row->tts_isnull, sizeof(bool) * n);
	put->tts_values[n] = Int64GetDatum((int64) ref);
	put->tts_isnull[n] = false;
	return ExecStoreVirtualTuple(put);
}

/*
 * record_tuplesort
 *		What the tuplesort that stayed did, for EXPLAIN: its method and
 *		space as PostgreSQL's Sort would show them.
 */
static void
record_tuplesort(BraidSortState *st)
{
	TuplesortInstrumentation stats;

	tuplesort_get_stats(st->adapt.ts, &stats);
	st->instr.adaptive = BRAID_ADAPTIVE_TUPLESORT;
	st->instr.tuplesort_disk = stats.spaceType == SORT_SPACE_TYPE_DISK;
	/* the in-memory sort's status was last seen while loading */
	st->instr.tuplesort_method = st->instr.tuplesort_disk ? (int) stats.sortMethod :
		(int) SORT_TYPE_QUICKSORT;
	st->instr.tuplesort_kb = stats.spaceUsed;
	st->instr.rows_sorted = st->adapt.rows_read;
}

/*
 * braid_adaptive_sort
 *		Read the child into PostgreSQL's tuplesort.  True if it stayed
 *		there (sorted; the node returns its rows with braid_adaptive_next);
 *		false if the input outgrew work_mem, the rows read so far to be
 *		taken by the build (braid_adaptive_carry) before the child's next.
 */
bool
braid_adaptive_sort(BraidSortState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	ScanDirection dir = estate->es_direction;
	BraidSortConfig *cfg = &st->cfg;
	int			work_kb = work_mem;
	bool		switched = false;
	bool		spilled = false;

	Assert(st->adapt.ts == NULL);
	estate->es_direction = ForwardScanDirection;

	/* twice work_mem: the switch comes before the tuplesort would spill */
	st->adapt.switch_bytes = (size_t) work_kb * 1024;
	st->adapt.ts = tuplesort_begin_heap(cfg->value_log ? ExecGetResultType(st->child) :
										st->adapt.put_slot->tts_tupleDescriptor,
										cfg->nkeys, st->adapt.sortcols, cfg->sortops,
										cfg->collations, cfg->nullsfirst,
										(int) Min((int64) work_kb * 2, (int64) MAX_KILOBYTES),
										NULL,
										cfg->random_access ? TUPLESORT_RANDOMACCESS : TUPLESORT_NONE);
	st->adapt.rows_read = 0;
	st->adapt.serving = false;
	st->adapt.carrying = false;

	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(st->child);
		TuplesortInstrumentation stats;

		if (TupIsNull(slot))
			break;
		tuplesort_puttupleslot(st->adapt.ts, cfg->value_log ? slot : tid_row(st, slot));
		st->adapt.rows_read++;
		if (spilled)
			continue;

		/*
		 * Past work_mem PostgreSQL's sort would write whole tuples: switch,
		 * unless the tuplesort has already spilled on its own (one row
		 * larger than its headroom), when it simply goes on as PostgreSQL's
		 * external sort (and is not asked again: its figures are read once
		 * more at the end, when they have grown).
		 */
		tuplesort_get_stats(st->adapt.ts, &stats);
		if (stats.spaceType != SORT_SPACE_TYPE_MEMORY)
			spilled = true;
		else if ((size_t) stats.spaceUsed * 1024 > st->adapt.switch_bytes)
		{
			switched = true;
			break;
		}
	}

	/*
	 * Either way the rows held are sorted: to be returned, or handed to the
	 * build in order (what PostgreSQL's first run would have held).
	 */
	tuplesort_performsort(st->adapt.ts);
	estate->es_direction = dir;
	st->instr.sorts++;
	braid_stats_count_adaptive(switched);
	if (!switched)
	{
		record_tuplesort(st);
		st->adapt.serving = true;
		st->pos.built = true;
		return true;
	}
	st->instr.adaptive = BRAID_ADAPTIVE_SWITCHED;
	st->instr.switched_at_rows = st->adapt.rows_read;

	/*
	 * The estimate proved wrong: size the build (its first IndexMap, the
	 * write-limited modes' plans) for at least twice the rows read so far.
	 */
	st->cfg.est_rows = Max(st->cfg.est_rows, 2.0 * (double) st->adapt.rows_read);
	st->instr.sorts--;			/* build_and_sort counts the sort */
	st->adapt.carrying = true;
	elog(DEBUG1, "braidsort: adaptive sort switched to braidsort after " INT64_FORMAT " rows: its input outgrew work_mem (%d kB)",
		 st->adapt.rows_read, work_kb);
	return false;
}

/*
 * braid_adaptive_carry
 *		The next row the tuplesort held when the node switched, for BUILD;
 *		NULL once they are all taken (the tuplesort is then released).
 */
TupleTableSlot *
braid_adaptive_carry(BraidSortState *st)
{
	Assert(st->adapt.carrying);
	if (tuplesort_gettupleslot(st->adapt.ts, true, false, st->adapt.slot, NULL))
		return st->adapt.slot;
	ExecClearTuple(st->adapt.slot);
	tuplesort_end(st->adapt.ts);
	st->adapt.ts = NULL;
	st->adapt.carrying = false;
	return NULL;
}

/*
 * braid_adaptive_carried_row
 *		Heap TID form: the ref of a carried row (slot, from
 *		braid_adaptive_carry) and, with want_key, its key encoded into the
 *		key buffer from its sort columns; returns the key's length (0
 *		without want_key) and the tuple's length in *tuple_len.
 */
size_t
braid_adaptive_carried_row(BraidSortState *st, TupleTableSlot *slot, bool want_key,
						   uint64 *ref, uint32 *tuple_len)
{
	bool		isnull;

	*ref = (uint64) DatumGetInt64(slot_getattr(slot, st->adapt.nout + 1, &isnull));
	*tuple_len = braid_ref_len(*ref);
	if (!want_key)
		return 0;
	for (int i = 0; i < st->cfg.nkeys; i++)
		st->build.keyvals[i] = slot_getattr(slot, st->adapt.sortcols[i], &st->build.keynulls[i]);
	return braid_encode_key(st->cfg.keys, st->cfg.nkeys, st->build.keyvals,
							st->build.keynulls, &st->build.keybuf);
}

/*
 * braid_adaptive_next
 *		The next row in direction dir of a tuplesort that stayed, as the
 *		node's output; NULL past either end.
 */
TupleTableSlot *
braid_adaptive_next(BraidSortState *st, ScanDirection dir)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	TupleTableSlot *out;
	int			n = st->adapt.nout;

	if (!tuplesort_gettupleslot(st->adapt.ts, ScanDirectionIsForward(dir), false,
								st->adapt.slot, NULL))
		return NULL;
	if (st->cfg.value_log)
	{
		ResetExprContext(econtext);
		econtext->ecxt_outertuple = st->adapt.slot;
		return ExecProject(st->css.ss.ps.ps_ProjInfo);
	}

	/* heap TID form: the row is the output, but for its ref */
	out = st->css.ss.ps.ps_ResultTupleSlot;
	slot_getallattrs(st->adapt.slot);
	ExecClearTuple(out);
	memcpy(out->tts_values, st->adapt.slot->tts_values, sizeof(Datum) * n);
	memcpy(out->tts_isnull, st->adapt.slot->tts_isnull, sizeof(bool) * n);
	return ExecStoreVirtualTuple(out);
}

/*
 * braid_adaptive_rescan
 *		Rewind a tuplesort that stayed, or drop it so that the next fetch
 *		reads the child again, as ExecReScanSort decides: rewind only when
 *		the node was set up for random access and its input is unchanged.
 *		The child is rescanned by the caller.
 */
void
braid_adaptive_rescan(BraidSortState *st)
{
	if (st->adapt.ts == NULL)
		return;
	if (st->adapt.serving && st->child->chgParam == NULL && st->cfg.random_access)
	{
		tuplesort_rescan(st->adapt.ts);
		return;
	}
	braid_adaptive_end(st);
}

/* braid_adaptive_mark: remember the tuplesort's position. */
void
braid_adaptive_mark(BraidSortState *st)
{
	tuplesort_markpos(st->adapt.ts);
}

/* braid_adaptive_restore: return to the tuplesort's marked position. */
void
braid_adaptive_restore(BraidSortState *st)
{
	tuplesort_restorepos(st->adapt.ts);
}

/*
 * braid_adaptive_end
 *		Release the tuplesort, if any (its memory, and its temporary files
 *		if it spilled on its own).
 */
void
braid_adaptive_end(BraidSortState *st)
{
	if (st->adapt.slot != NULL)
		ExecClearTuple(st->adapt.slot);
	/* the heap TID form's rows point into the tuplesort's memory */
	if (st->adapt.serving && !st->cfg.value_log)
		ExecClearTuple(st->css.ss.ps.ps_ResultTupleSlot);
	if (st->adapt.ts != NULL)
		tuplesort_end(st->adapt.ts);
	st->adapt.ts = NULL;
	st->adapt.serving = false;
	st->adapt.carrying = false;
}
