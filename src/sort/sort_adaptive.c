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
 * "adaptively" (plan/sort_plan.c): the node runs PostgreSQL's tuplesort, with the
 * same keys and work_mem, and watches its memory.
 *
 * If the input ends within work_mem, the tuplesort sorts in memory and the
 * node returns its rows exactly as a Sort node would, with backward scans,
 * mark/restore and rewinds from the tuplesort (as nodeSort.c does).
 *
 * If the input outgrows work_mem -- where PostgreSQL's sort starts writing
 * runs of whole tuples -- the node may switch: the tuplesort sorts what it
 * holds and hands those rows to BUILD (braid_adaptive_carry), which makes
 * their entries before those of the rows after them, read from the child
 * as usual.  From then on the node is a BraidSort.  Before it switches, the
 * node asks the cost model whether braidsort's path, in the node's form,
 * beats PostgreSQL's external sort on an input this large (switch_pays): if
 * not, the node is PostgreSQL's external sort.  Over a value log the
 * tuplesort is PostgreSQL's own, with work_mem, and the question comes when
 * it writes its first run; in heap TID form it comes before that, since
 * the tuplesort's runs would not keep the rows' TIDs (braid_adaptive_sort).
 *
 * The node has the two forms of a BraidSort (plan/sort_plan.c).  Over a value log
 * the tuplesort sorts the child's rows, returned as they are when the
 * node's target list passes them through, else projected as rows read back
 * from the log are; carried rows go to the log.  Over a heap scan whose
 * keys are all plain columns (heap TID form) the scan hands over its heap
 * tuples, which the tuplesort sorts by the keys' table columns as minimal
 * tuples -- a copy, as PostgreSQL's sort makes -- each carrying its TID in
 * the minimal tuple's padding, which tuplesort copies along; the node
 * projects its target list from the sorted tuples, and a carried row
 * becomes an entry <key, TID and length> like any other, its tuple
 * refetched by TID at gather time like the rest.
 *
 * src/sort/sort_adaptive.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/parallel.h"
#include "access/htup_details.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "compat.h"
#include "guc.h"
#include "core/costmodel.h"
#include "io/device.h"
#include "io/devprofile.h"
#include "plan/keys.h"
#include "plan/plancost.h"
#include "core/pool.h"
#include "core/refs.h"

#include "sort/sort_state.h"
#include "monitor/stats.h"

/*
 * How often the tuplesort's memory is looked at, in rows read: the question
 * comes that many rows late at most, which the heap TID form's headroom
 * (work_mem) covers unless rows are larger than a sixteenth of it, when the
 * tuplesort spills on its own and the node stays PostgreSQL's external sort.
 * (A short query's sort of a hundred rows is that much cheaper.)
 */
#define BRAID_ADAPTIVE_CHECK_ROWS 16

/*
 * ... over a value log, where the question comes once the tuplesort has
 * written its first run: that many rows more go to its runs at most, which
 * BUILD reads back anyway.
 */
#define BRAID_ADAPTIVE_CHECK_ROWS_AT_SPILL 128

/*
 * passes_through
 *		Whether the node's target list is its input's columns in order (as
 *		a Sort's nearly always is): then a row of the tuplesort is the
 *		node's output as it is.  A constant the input already returns in the
 *		same column passes through too: the planner puts NULLs in the
 *		columns no one above reads (a count(*) over an ordered subquery),
 *		in the scan's target list and the Sort's alike, and projecting them
 *		again would copy every row once more on its way up.
 */
static bool
passes_through(PlanState *ps, PlanState *child)
{
	ListCell   *lc;
	int			n = 0;

	foreach(lc, ps->plan->targetlist)
	{
		Expr	   *expr = ((TargetEntry *) lfirst(lc))->expr;
		TargetEntry *input;

		n++;
		if (IsA(expr, Var) && ((Var *) expr)->varno == OUTER_VAR &&
			((Var *) expr)->varattno == n)
			continue;
		input = IsA(expr, Const) ? get_tle_by_resno(child->plan->targetlist, n) : NULL;
		if (input == NULL || !equal(expr, input->expr))
			return false;
	}
	return n == ExecGetResultType(child)->natts;
}

/*
 * braid_adaptive_begin
 *		Set up an adaptive node: the slot its tuplesort's rows are read
 *		into.  Nothing else is allocated until it runs.
 */
void
braid_adaptive_begin(BraidSortState *st, const BraidSortPlanData *data, EState *estate)
{
	PlanState  *ps = &st->css.ss.ps;
	bool		fixed;

	st->adapt.on = true;
	st->adapt.processes = data->processes;

	/*
	 * The node returns the tuplesort's rows or projected ones, or after a
	 * switch braidsort's: the plan above must not assume one slot type --
	 * unless every one is its input's row as a minimal tuple (the target list
	 * over it: sort_node.c, begin_value_log).
	 */
	if (((CustomScan *) ps->plan)->custom_scan_tlist == NIL)
		ps->resultopsfixed = false;
	if (st->cfg.value_log)
	{
		st->adapt.slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(st->child),
												&TTSOpsMinimalTuple);
		st->adapt.sortcols = st->cfg.keycols;
		/* (none to make where the target list is over the input's row) */
		st->adapt.passthrough = ((CustomScan *) ps->plan)->custom_scan_tlist != NIL ?
			ps->ps_ProjInfo == NULL : passes_through(ps, st->child);
		/* ExecInitCustomScan's projection, unless it saw none needed */
		if (!st->adapt.passthrough && ps->ps_ProjInfo == NULL)
			ExecAssignProjectionInfo(ps, NULL);
		return;
	}

	/*
	 * Heap TID form: the tuplesort sorts the scan's heap tuples, each with
	 * its TID in the padding of its minimal tuple, by the keys' table
	 * columns; the node's target list is projected from them.
	 */
	st->adapt.sortcols = st->cfg.keycols;
	st->adapt.put_slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(st->rel),
												&TTSOpsMinimalTuple);
	st->adapt.slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(st->rel),
											&TTSOpsMinimalTuple);
	fixed = ps->scanopsfixed;
	ps->scanopsfixed = false;
	st->adapt.proj = ExecBuildProjectionInfo(ps->plan->targetlist, ps->ps_ExprContext,
											 ps->ps_ResultTupleSlot, ps,
											 RelationGetDescr(st->rel));
	ps->scanopsfixed = fixed;

	/* no projection of refetched tuples: none of sorted ones either */
	st->adapt.passthrough = ps->ps_ProjInfo == NULL;
}

/*
 * heap_row
 *		Heap TID form: the heap tuple the child just returned, as a minimal
 *		tuple carrying its TID in its padding (which tuplesort copies with
 *		it), in the put slot.
 */
static TupleTableSlot *
heap_row(BraidSortState *st, TupleTableSlot *slot)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	TupleTableSlot *scanslot = ((ScanState *) st->child)->ss_ScanTupleSlot;
	MemoryContext old;
	MinimalTuple mtup;
	uint64		ref;
	uint32		tuple_len;

	(void) braid_input_heap_row(st, slot, false, &ref, &tuple_len);
	st->adapt.tuple_bytes += tuple_len;
	ResetExprContext(econtext);
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	mtup = braid_minimal_tuple_from_heap_tuple(((HeapTupleTableSlot *) scanslot)->tuple);
	MemoryContextSwitchTo(old);
	/* (the planner takes this form only where the padding has room) */
	Assert(sizeof(mtup->mt_padding) >= sizeof(ItemPointerData));
	memcpy(mtup->mt_padding, &scanslot->tts_tid, sizeof(ItemPointerData));
	return ExecStoreMinimalTuple(mtup, st->adapt.put_slot, false);
}

/*
 * carried_ref
 *		Heap TID form: the ref of a minimal tuple heap_row made.
 */
static uint64
carried_ref(TupleTableSlot *slot)
{
	MinimalTuple mtup = ((MinimalTupleTableSlot *) slot)->mintuple;
	ItemPointerData tid;

	memcpy(&tid, mtup->mt_padding, sizeof(ItemPointerData));
	return braid_make_ref(ItemPointerGetBlockNumber(&tid), ItemPointerGetOffsetNumber(&tid),
						  mtup->t_len + MINIMAL_TUPLE_OFFSET);
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
}

/*
 * begin_tuplesort
 *		PostgreSQL's tuplesort for the node's rows (the child's, or in heap
 *		TID form the output rows with their refs), with workMem kB.
 */
static Tuplesortstate *
begin_tuplesort(BraidSortState *st, int work_kb)
{
	BraidSortConfig *cfg = &st->cfg;

	return tuplesort_begin_heap(cfg->value_log ? ExecGetResultType(st->child) :
								RelationGetDescr(st->rel),
								cfg->nkeys, st->adapt.sortcols, cfg->sortops,
								cfg->collations, cfg->nullsfirst, work_kb, NULL,
								cfg->random_access ? TUPLESORT_RANDOMACCESS : TUPLESORT_NONE);
}

/*
 * key_bytes
 *		About the bytes of a row's encoded keys: a null mark each, and a
 *		fixed-width key's width or a variable-width key's decompressed
 *		length and a terminator.  The plan's widths are those of the values
 *		as stored, and a compressed or TOASTed key is encoded whole.
 */
static uint64
key_bytes(BraidSortState *st, TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	uint64		bytes = 0;

	for (int i = 0; i < st->cfg.nkeys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, st->adapt.sortcols[i] - 1);
		bool		isnull;
		Datum		value = slot_getattr(slot, st->adapt.sortcols[i], &isnull);

		bytes += 1;
		if (isnull)
			continue;
		if (att->attlen > 0)
			bytes += att->attlen;
		else if (att->attlen == -1)
			bytes += toast_raw_datum_size(value) - VARHDRSZ + 1;
		else
			bytes += strlen(DatumGetCString(value)) + 1;
	}
	return bytes;
}

/*
 * has_var_keys
 *		Whether a key of the sorted rows is of variable width (its bytes
 *		then worth measuring for switch_pays).
 */
static bool
has_var_keys(BraidSortState *st)
{
	TupleDesc	desc = st->cfg.value_log ? ExecGetResultType(st->child) :
		RelationGetDescr(st->rel);

	for (int i = 0; i < st->cfg.nkeys; i++)
		if (TupleDescAttr(desc, st->adapt.sortcols[i] - 1)->attlen < 0)
			return true;
	return false;
}

/*
 * put_row
 *		One row of the child into the tuplesort; its key bytes counted if
 *		"measure" (while switch_pays may still ask).  The caller counts it.
 */
static inline void
put_row(BraidSortState *st, TupleTableSlot *slot, bool measure)
{
	TupleTableSlot *put = st->cfg.value_log ? slot : heap_row(st, slot);

	if (measure)
		st->adapt.key_bytes += key_bytes(st, put);
	tuplesort_puttupleslot(st->adapt.ts, put);
}

/*
 * adaptive_decline_level
 *		The level at which to say that this node's switch was declined:
 *		braidsort.log_declines' the first time in the leader (or a serial
 *		plan), DEBUG1 in parallel workers and on later rescans, so that a
 *		sort rescanned in a loop or run by every process of a Gather is
 *		reported once.
 */
static int
adaptive_decline_level(BraidSortState *st)
{
	if (st->adapt.decline_said || IsParallelWorker())
		return DEBUG1;
	st->adapt.decline_said = true;
	return braid_decline_level();
}

/*
 * switch_pays
 *		Whether the cost model expects braidsort's path, in the node's form,
 *		to beat PostgreSQL's external sort on this input: its rows costed at
 *		twice those read (at least BRAID_MIN_ROWS), with what the run has
 *		shown of their size, the table and the spill device.  Says why at
 *		DEBUG1 when not.
 */
static bool
switch_pays(BraidSortState *st)
{
	BraidSortConfig *cfg = &st->cfg;
	PlanState  *ps = &st->css.ss.ps;
	BraidCostInput in;
	BraidCostEstimate est;
	double		width = Max(ps->plan->plan_width, 1);

	memset(&in, 0, sizeof(in));
	in.rows = Max(2.0 * (double) st->adapt.rows_read, BRAID_MIN_ROWS);
	in.sort_width = width;
	in.row_bytes = MAXALIGN(width + SizeofMinimalTupleHeader);
	in.heap_refetch = !cfg->value_log;
	in.only_from = cfg->value_log ? BRAID_FROM_VALUE_LOG : BRAID_FROM_HEAP_TID;
	in.tuple_bytes = cfg->value_log || st->adapt.rows_read == 0 ? in.row_bytes :
		(double) st->adapt.tuple_bytes / (double) st->adapt.rows_read;
	in.entry_bytes = cfg->stride;
	in.budget_bytes = (double) cfg->budget;
	in.sort_mem_bytes = (double) work_mem * 1024.0;
	if (!cfg->value_log)
	{
		in.table_pages = (double) RelationGetNumberOfBlocks(st->rel);
		in.table_cached = braid_table_cached(st->rel, in.table_pages);
		/* a table in the sort's order is reread in order, as planned */
		if (cfg->keycols != NULL)
			in.correlation = braid_table_correlation(st->rel, cfg->keycols[0]);
		if (st->child->plan->parallel_aware)
			in.table_pages /= Max(st->adapt.processes, 1);
	}
	in.spill_ns_per_byte = braid_sched_spill_ns_per_byte(braid_spill_tablespace_guess());
	for (int i = 0; i < cfg->nkeys; i++)
	{
		BraidKeyColumn col;
		char	   *why;

		if (!braid_key_column_for(cfg->sortops[i], cfg->collations[i], cfg->nullsfirst[i],
								  &col, &why))
			return false;

		/*
		 * a first collated key after others: how many rows tie on those is
		 * not looked up here, so the cost model weighs both extremes
		 * (braid_cost_estimate)
		 */
		if (BRAID_KEY_IS_COLLATED(col.kind) && !in.collated && i > 0)
			in.collated_group_rows = -1;
		in.collated |= BRAID_KEY_IS_COLLATED(col.kind);
		if (i == 0)
		{
			in.numeric_key = col.kind == BRAID_KEY_NUMERIC;
			in.abbreviated_key = BRAID_KEY_IS_ABBREVIATED(col.kind);
		}
	}

	/*
	 * The full keys kept beside the entries, as measured: every row's with a
	 * collated key, else about every row's when the average key outgrows the
	 * prefix (as the planner counts them).  (cfg->collated is set only once
	 * braidsort's path is: not yet.)
	 */
	if (st->adapt.rows_read > 0)
	{
		double		keys = (double) st->adapt.key_bytes / (double) st->adapt.rows_read;

		if (in.collated || keys > cfg->keylen)
			in.full_key_bytes = keys;
	}

	/*
	 * What the tuplesort that would stay does with ties on the first key: it
	 * holds whole table rows in heap TID form, the child's rows in value-log
	 * form (the statistics known where the child scans a table: its heap, or
	 * an index of it, whose columns an index-only scan outputs)
	 */
	if (cfg->nkeys > 1 && !cfg->value_log)
		braid_table_ties(st->rel, cfg->keycols, &in);
	else if (cfg->nkeys > 1 &&
			 (IsA(st->child, SeqScanState) || IsA(st->child, IndexScanState) ||
			  IsA(st->child, BitmapHeapScanState) || IsA(st->child, IndexOnlyScanState)))
	{
		Relation	scanned = ((ScanState *) st->child)->ss_currentRelation;

		if (scanned != NULL && (scanned->rd_rel->relkind == RELKIND_RELATION ||
								scanned->rd_rel->relkind == RELKIND_MATVIEW))
			braid_tlist_ties(cfg->keycols, st->child->plan->targetlist,
							 IsA(st->child, IndexOnlyScanState) ?
							 ((IndexOnlyScan *) st->child->plan)->indextlist : NIL,
							 RelationGetRelid(scanned), &in);
	}
	in.processes = st->adapt.processes;
	in.partial = st->child->plan->parallel_aware;
	in.cpus = braid_pool_cpus();
	in.sort_threads = cfg->threads > 0 ? cfg->threads :
		braid_sort_thread_count(st->adapt.processes);
	braid_cost_estimate(&in, &est);
	/* for EXPLAIN ANALYZE: why it switched or not */
	st->instr.switch_estimated = true;
	st->instr.switch_braid_ms = est.braid_ns / 1e6;
	st->instr.switch_pg_ms = est.pg_ns / 1e6;
	if (est.prefers)
	{
		char	   *why;

		/* as the planner asks: room on the spill device, for every process */
		if (braid_sort_has_room(&in, est.from, 0, &why))
			return true;
		st->instr.switch_declined_rows = st->adapt.rows_read;
		elog(adaptive_decline_level(st), "braidsort: adaptive sort left to PostgreSQL's external sort after " INT64_FORMAT " rows: %s",
			 st->adapt.rows_read, why);
		return false;
	}
	st->instr.switch_declined_rows = st->adapt.rows_read;
	elog(adaptive_decline_level(st), "braidsort: adaptive sort left to PostgreSQL's external sort after " INT64_FORMAT " rows: %s (braidsort %.2f ms, PostgreSQL %.2f ms estimated for %.0f rows%s%s)",
		 st->adapt.rows_read, est.why, est.braid_ns / 1e6, est.pg_ns / 1e6, in.rows,
		 in.processes > 1 ? psprintf(" in each of %d processes", in.processes) : "",
		 braid_cost_margin_text(&est));
	return false;
}

/*
 * hand_over
 *		Replace the tuplesort by PostgreSQL's own, limited to work_kb, which
 *		takes the rows held (sorted) and is then fed the rest of the input.
 */
static void
hand_over(BraidSortState *st, int work_kb)
{
	Tuplesortstate *pg = begin_tuplesort(st, work_kb);

	while (tuplesort_gettupleslot(st->adapt.ts, true, false, st->adapt.slot, NULL))
		tuplesort_puttupleslot(pg, st->adapt.slot);
	ExecClearTuple(st->adapt.slot);
	tuplesort_end(st->adapt.ts);
	st->adapt.ts = pg;
}

/*
 * braid_adaptive_sort
 *		Read the child into PostgreSQL's tuplesort.  True if it stayed
 *		there (sorted; the node returns its rows with braid_adaptive_next);
 *		false if the input outgrew work_mem, the rows read so far to be
 *		taken by the build (braid_adaptive_carry) before the child's next.
 *
 * When to ask whether to switch depends on the form.  Over a value log the
 * tuplesort is exactly PostgreSQL's (the child's rows, work_mem), and the
 * question comes when it writes its first run: declined, it simply goes
 * on as PostgreSQL's external sort, having cost nothing more; switched,
 * BUILD reads that run back with the rows still in memory.  In heap TID
 * form a row's TID rides in its minimal tuple's padding, which tuplesort
 * does not write to its tapes: the tuplesort is given twice work_mem, the
 * question comes when it holds work_mem (before it would spill), and
 * declined, PostgreSQL's own tuplesort with work_mem takes over its rows
 * (hand_over) and the rest of the input.
 */
bool
braid_adaptive_sort(BraidSortState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	ScanDirection dir = estate->es_direction;
	int			work_kb = work_mem;
	bool		at_spill = st->cfg.value_log;
	bool		switched = false;
	bool		spilled = false;
	bool		measure = has_var_keys(st);
	bool		plain;

	/* (both powers of two) */
	int64		check_mask = (at_spill ? BRAID_ADAPTIVE_CHECK_ROWS_AT_SPILL :
							  BRAID_ADAPTIVE_CHECK_ROWS) - 1;
	PlanState  *child = st->child;
	Tuplesortstate *ts;
	int64		rows = 0;

	Assert(st->adapt.ts == NULL);
	estate->es_direction = ForwardScanDirection;

	st->adapt.switch_bytes = (size_t) work_kb * 1024;
	st->adapt.ts = begin_tuplesort(st, at_spill ? work_kb :
								   (int) Min((int64) work_kb * 2, (int64) MAX_KILOBYTES));
	st->adapt.rows_read = 0;
	st->adapt.tuple_bytes = 0;
	st->adapt.key_bytes = 0;
	st->adapt.serving = false;
	st->adapt.carrying = false;
	st->instr.switch_declined_rows = 0;
	st->instr.switch_estimated = false;

	/*
	 * The child's rows as they are, with nothing to measure: the loop
	 * ExecSort runs (a short query's every row counts).
	 */
	ts = st->adapt.ts;
	plain = st->cfg.value_log && !measure;
	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(child);
		TuplesortInstrumentation stats;

		if (TupIsNull(slot))
			break;
		if (likely(plain))
			tuplesort_puttupleslot(ts, slot);
		else
			put_row(st, slot, measure && !spilled);
		if ((++rows & check_mask) != 0 || spilled)
			continue;
		st->adapt.rows_read = rows;

		/*
		 * Once the tuplesort has spilled and not switched, it is PostgreSQL's
		 * external sort and is not asked again (its figures are read once
		 * more at the end, when they have grown).  In heap TID form that
		 * happens only when the rows read between two looks at its memory are
		 * larger together than its headroom.
		 */
		tuplesort_get_stats(ts, &stats);
		if (stats.spaceType != SORT_SPACE_TYPE_MEMORY)
		{
			spilled = true;
			if (at_spill &&
				(braid_adaptive == BRAID_ADAPTIVE_ALWAYS || switch_pays(st)))
			{
				switched = true;
				break;
			}
		}
		else if (!at_spill && (size_t) stats.spaceUsed * 1024 > st->adapt.switch_bytes)
		{
			switched = true;
			break;
		}
	}

	st->adapt.rows_read = rows;

	/*
	 * Either way the rows held are sorted: to be returned, or handed to the
	 * build in order (what PostgreSQL's first run would have held, or over a
	 * value log that run and the rows after it).
	 */
	tuplesort_performsort(st->adapt.ts);

	/*
	 * In heap TID form, where the cost model expects braidsort's path to lose
	 * on this input (now that its size is known to be beyond work_mem),
	 * PostgreSQL's external sort takes over, with work_mem as its own limit:
	 * the rows held, then the rest of the input.
	 */
	if (switched && !at_spill && braid_adaptive != BRAID_ADAPTIVE_ALWAYS && !switch_pays(st))
	{
		hand_over(st, work_kb);
		for (;;)
		{
			TupleTableSlot *slot = ExecProcNode(st->child);

			if (TupIsNull(slot))
				break;
			put_row(st, slot, false);
			st->adapt.rows_read++;
		}
		tuplesort_performsort(st->adapt.ts);
		switched = false;
	}
	estate->es_direction = dir;
	st->instr.sorts++;
	braid_stats_count_adaptive(switched ? BRAID_ADAPTIVE_SWITCHED : BRAID_ADAPTIVE_TUPLESORT,
							   st->instr.switch_declined_rows > 0);
	if (!switched)
	{
		st->instr.rows_sorted += st->adapt.rows_read;
		record_tuplesort(st);
		st->adapt.serving = true;
		return true;
	}
	st->instr.adaptive = BRAID_ADAPTIVE_SWITCHED;
	st->instr.switched_at_rows = st->adapt.rows_read;

	st->instr.sorts--;			/* build_and_sort counts the sort */
	st->adapt.carrying = true;
	elog(DEBUG1, "braidsort: adaptive sort switched to braidsort after " INT64_FORMAT " rows: its input outgrew work_mem (%d kB)",
		 st->adapt.rows_read, work_kb);
	return false;
}

/*
 * braid_adaptive_carry
 *		The node switched: hand the rows the tuplesort held, sorted, to
 *		BUILD before the child's (sort_build.c), then release the
 *		tuplesort.  Over a value log they go to the log like the child's
 *		rows; in heap TID form each becomes an entry <key, TID and length>
 *		from its sort columns and the TID its minimal tuple carries, its
 *		tuple refetched at gather time like the others.
 */
void
braid_adaptive_carry(BraidSortState *st)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	TupleTableSlot *slot = st->adapt.slot;

	Assert(st->adapt.carrying);
	while (tuplesort_gettupleslot(st->adapt.ts, true, false, slot, NULL))
	{
		MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

		if (st->cfg.value_log)
			braid_build_log_row(st, slot);
		else
		{
			uint64		ref = carried_ref(slot);
			bool		keyed = braid_build_wants_key(st);
			size_t		len = 0;

			if (keyed)
				len = braid_input_cols_key(st, slot, st->adapt.sortcols);
			braid_build_row(st, ref, braid_ref_len(ref), keyed, len);
		}
		MemoryContextSwitchTo(old);
		ResetExprContext(econtext);
	}
	ExecClearTuple(slot);
	tuplesort_end(st->adapt.ts);
	st->adapt.ts = NULL;
	st->adapt.carrying = false;
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

	if (!tuplesort_gettupleslot(st->adapt.ts, ScanDirectionIsForward(dir), false,
								st->adapt.slot, NULL))
		return NULL;
	if (st->adapt.passthrough)
		return st->adapt.slot;
	ResetExprContext(econtext);
	if (st->cfg.value_log)
	{
		econtext->ecxt_outertuple = st->adapt.slot;
		return ExecProject(st->css.ss.ps.ps_ProjInfo);
	}
	/* heap TID form: the target list over the sorted heap tuple */
	econtext->ecxt_scantuple = st->adapt.slot;
	return ExecProject(st->adapt.proj);
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
	/* rows returned point into the tuplesort's memory */
	if (st->adapt.serving)
		ExecClearTuple(st->css.ss.ps.ps_ResultTupleSlot);
	if (st->adapt.ts != NULL)
		tuplesort_end(st->adapt.ts);
	st->adapt.ts = NULL;
	st->adapt.serving = false;
	st->adapt.carrying = false;
}
