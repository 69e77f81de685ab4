/*-------------------------------------------------------------------------
 *
 * sort_plan.c
 *	  A Sort replaced by a BraidSort: eligibility, the node's form, its cost
 *	  and its plan data.
 *
 * The planner hook (planner.c) hands this every Sort it may replace.  A
 * Sort is eligible when
 *	- its target list is a plain projection of its input;
 *	- every key has an exact encoder (keys.c);
 *	- it is not bounded (the walk checks: a Sort under a LIMIT with a row
 *	  count stays with PostgreSQL's top-N heapsort);
 * and, unless braidsort.force is on, the cost model expects a win
 * (core/costmodel.c, with inputs from the statistics: plancost.c).  Rows
 * are refetched by TID when the input is a sequential, index or bitmap
 * heap scan whose rows can be refetched (heapinput.c) and the cost model
 * finds that cheaper than a value log; otherwise every input row goes to a
 * value log.  A Sort declined only for its row estimate is taken
 * adaptively (it starts as PostgreSQL's tuplesort: sort/sort_adaptive.c).
 *
 * The node is a CustomScan in the Sort's place, in executable form (the
 * swap happens after set_plan_references), whose private data is a
 * BraidSortPlanData (plandata.c).
 *
 * src/plan/sort_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type_d.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "compat.h"
#include "core/costmodel.h"
#include "core/indexmap.h"
#include "guc.h"
#include "plan/heapinput.h"
#include "plan/keys.h"
#include "plan/permissions.h"
#include "plan/plancost.h"
#include "plan/plandata.h"
#include "plan/sort_plan.h"

/* Largest key prefix kept in an IndexMap entry for variable-width keys. */
#define BRAID_MAX_VAR_PREFIX 48

/* Largest bounded variable-width key given room for its longest encoding. */
#define BRAID_MAX_BOUNDED_KEY 32

/* try_sort's "shared": not a shared sort, or one taken as each process's, or weighed */
#define SHARED_NO			0
#define SHARED_AS_EACH		1
#define SHARED_WEIGHED		2

static Plan *try_sort(PlannedStmt *stmt, Sort *sort, int processes, const BraidOneSortInput *one,
					  int shared, double shared_rows,
					  char **why, BraidDecline *kind);
static bool weigh_one_sort(const BraidOneSortInput *one, BraidCostEstimate *est, char **why);
static List *physical_scan_tlist(List *keys, Index scanrelid, Oid relid);
static void set_row_scan_tlist(CustomScan *cscan, Plan *child);
static void set_tid_child(CustomScan *cscan, Plan *child, List *child_tlist, List *physical,
						  BraidSortPlanData *data);
static void start_plan_data(BraidSortPlanData *data, Sort *sort, const BraidKeys *keys,
							List *keyexprs, bool by_tid, int processes);
static Plan *finish_braid_scan(CustomScan *cscan, Plan *child, List *child_tlist,
							   List *physical, BraidSortPlanData *data);

/*
 * sort_keys
 *		Check that every key of the Sort has an exact encoder and work out
 *		the IndexMap's key prefix; false (with *why and *kind) to decline.
 *		Widths of variable-width keys are estimated from the child's key
 *		expressions over table relid (InvalidOid: from the type alone).
 */
static bool
sort_keys(Sort *sort, Plan *child, Oid relid, BraidKeys *k, char **why,
		  BraidDecline *kind)
{
	int			fixed_bytes = 0;
	double		var_bytes = 0;
	double		whole_bytes = 0;	/* the whole encoded key */

	memset(k, 0, sizeof(*k));
	for (int i = 0; i < sort->numCols; i++)
	{
		TargetEntry *tle = get_tle_by_resno(child->targetlist, sort->sortColIdx[i]);
		BraidKeyColumn col;
		int			width;
		double		value_bytes;	/* its encoding's, estimated */

		if (tle == NULL)
			elog(ERROR, "braidsort: no target list entry for sort key %d", i + 1);
		if (!braid_key_column_for(sort->sortOperators[i], sort->collations[i],
								  sort->nullsFirst[i], &col, why))
		{
			*kind = BRAID_DECLINE_KEY;
			return false;
		}
		if (i == 0)
		{
			k->numeric_first = (col.kind == BRAID_KEY_NUMERIC);
			k->abbreviated_first = BRAID_KEY_IS_ABBREVIATED(col.kind);
		}
		value_bytes = braid_key_fixed_width(col.kind) >= 0 ?
			braid_key_fixed_width(col.kind) : braid_plan_value_bytes(tle->expr, relid);
		whole_bytes += 1 + value_bytes;

		/*
		 * The prefix holds keys up to the first collated key's null mark; the
		 * rest is compared from the full key.
		 */
		if (k->collated)
			width = -2;
		else if (BRAID_KEY_IS_COLLATED(col.kind))
		{
			width = 0;
			k->collated = true;
			k->collated_key = i;
		}
		else
		{
			width = braid_key_fixed_width(col.kind);

			/*
			 * A variable-width key with a small bound (numeric(p, s)) gets
			 * room for its longest encoding: never truncated, never a
			 * tie-break through the overflow store.
			 */
			if (width == -1)
			{
				int			max = braid_key_max_width(col.kind, exprTypmod((Node *) tle->expr));

				if (max >= 0 && max <= BRAID_MAX_BOUNDED_KEY)
					width = max;
			}
		}
		if (width >= 0)
			fixed_bytes += 1 + width;
		else if (width == -1)
		{
			k->has_var = true;
			var_bytes += 1 + value_bytes;
		}
	}

	/*
	 * Key prefix: exact for fixed-width keys; for variable-width keys room
	 * for the estimated average key, within a cap, with longer keys broken by
	 * tie-break on their full encoding.
	 */
	if (!k->has_var)
		k->keylen = fixed_bytes;
	else
		k->keylen = Min((int) (fixed_bytes + var_bytes + 0.5), BRAID_MAX_VAR_PREFIX);
	k->keylen = Max(k->keylen, 1);

	/*
	 * Pad entries to a multiple of 8 bytes, which the radix sort moves a word
	 * at a time, and give the padding to the key prefix: more exact bytes for
	 * variable-width keys, fewer tie-breaks.
	 */
	if (k->collated)
		k->keylen += 8;			/* where the full key is (sort/sort_map.c) */
	k->keylen = TYPEALIGN(8, k->keylen + BRAID_REF_BYTES) - BRAID_REF_BYTES;

	/*
	 * The full keys kept beside the entries: every row's with a collated key,
	 * and about every row's when the average key outgrows the prefix (rows
	 * with shorter keys than the average are not counted off).
	 */
	k->encoded_bytes = whole_bytes;
	if (k->collated || whole_bytes > k->keylen)
		k->full_key_bytes = whole_bytes;
	if (k->keylen + BRAID_REF_BYTES > BRAID_MAX_STRIDE)
	{
		*why = "sort key is too wide";
		*kind = BRAID_DECLINE_KEY;
		return false;
	}
	return true;
}

/*
 * node_tlists
 *		The node's target list, its key expressions (for EXPLAIN) and, by
 *		TID, the key target list a narrowed scan would output; false (with
 *		*why) if the Sort's output is not a plain projection of its input.
 *		Over a value log the node's target list is the Sort's own list (the
 *		Sort is dropped for the node): copying it would cost a short query's
 *		plan more than anything else braidsort does to it.
 */
static bool
node_tlists(Sort *sort, Plan *child, bool by_tid, List **output_tlist,
			List **keyexprs, List **child_tlist, char **why)
{
	ListCell   *lc;

	*output_tlist = NIL;
	*keyexprs = NIL;
	*child_tlist = NIL;

	/*
	 * The node's output is the Sort's target list (references to the child's
	 * outputs, with the Sort's resjunk markings); refetching by TID, each
	 * reference is replaced by the child's expression over the table.
	 */
	foreach(lc, sort->plan.targetlist)
	{
		TargetEntry *stle = lfirst_node(TargetEntry, lc);
		Var		   *ref = (Var *) stle->expr;
		TargetEntry *ctle;
		TargetEntry *tle;

		/* set_dummy_tlist_references leaves constants in place */
		if (IsA(ref, Const))
		{
			if (by_tid)
				*output_tlist = lappend(*output_tlist, flatCopyTargetEntry(stle));
			continue;
		}
		if (!IsA(ref, Var) || ref->varno != OUTER_VAR ||
			(ctle = get_tle_by_resno(child->targetlist, ref->varattno)) == NULL)
		{
			*why = "sort output is not a plain projection of its input";
			return false;
		}
		if (!by_tid)
			continue;
		tle = flatCopyTargetEntry(stle);
		tle->expr = copyObject(ctle->expr);
		*output_tlist = lappend(*output_tlist, tle);
	}
	if (!by_tid)
		*output_tlist = sort->plan.targetlist;

	for (int i = 0; i < sort->numCols; i++)
	{
		TargetEntry *stle = get_tle_by_resno(sort->plan.targetlist, sort->sortColIdx[i]);
		TargetEntry *tle = get_tle_by_resno(child->targetlist, sort->sortColIdx[i]);

		if (tle == NULL || stle == NULL)
			elog(ERROR, "braidsort: no target list entry for sort key %d", i + 1);
		if (!by_tid && (!IsA(stle->expr, Var) || ((Var *) stle->expr)->varno != OUTER_VAR))
		{
			*why = "sort key is not a column of the input";
			return false;
		}
		/* (the Sort's own Var over a value log: the Sort is discarded) */
		*keyexprs = lappend(*keyexprs, by_tid ? copyObject(tle->expr) : stle->expr);
		if (by_tid)
			*child_tlist = lappend(*child_tlist,
								   makeTargetEntry(copyObject(tle->expr), i + 1, NULL, false));
	}
	return true;
}

/* BraidSort's executor methods, once looked up (make_braid_scan) */
static const CustomScanMethods *sort_scan_methods = NULL;

/*
 * make_braid_scan
 *		A CustomScan in the Sort's place: its rows, width, parameters and
 *		init plans, PostgreSQL's Sort cost with the sort's own part
 *		(own_cost) braidsort's, and the given target list.
 */
static CustomScan *
make_braid_scan(Sort *sort, Plan *child, double own_cost, List *output_tlist)
{
	CustomScan *cscan;

	cscan = makeNode(CustomScan);
	cscan->scan.plan.startup_cost = child->total_cost + own_cost;
	cscan->scan.plan.total_cost = cscan->scan.plan.startup_cost +
		(sort->plan.total_cost - sort->plan.startup_cost);
	cscan->scan.plan.plan_rows = sort->plan.plan_rows;
	cscan->scan.plan.plan_width = sort->plan.plan_width;
	BRAID_COPY_DISABLED_NODES(&cscan->scan.plan, &sort->plan);
	cscan->scan.plan.parallel_aware = false;
	cscan->scan.plan.parallel_safe = sort->plan.parallel_safe;
	cscan->scan.plan.async_capable = false;
	cscan->scan.plan.plan_node_id = sort->plan.plan_node_id;
	cscan->scan.plan.targetlist = output_tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.plan.initPlan = sort->plan.initPlan;
	cscan->scan.plan.extParam = bms_copy(sort->plan.extParam);
	cscan->scan.plan.allParam = bms_copy(sort->plan.allParam);
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_exprs = NIL;
	cscan->custom_scan_tlist = NIL;
	cscan->custom_relids = NULL;

	/*
	 * by name: the executor node registers it (sort/sort_node.c), for the
	 * backend's life (looked up once: a hash lookup every Sort planned)
	 */
	if (sort_scan_methods == NULL)
		sort_scan_methods = GetCustomScanMethods(BRAID_SORT_NAME, false);
	cscan->methods = sort_scan_methods;
	return cscan;
}

/* ns_to_ms: nanoseconds as milliseconds, for messages. */
static double
ns_to_ms(double ns)
{
	return ns / 1e6;
}

/*
 * How much wider than the Sort's rows a table's may be for an adaptive sort
 * to hold them whole (heap TID form).
 */
#define BRAID_ADAPTIVE_MAX_WIDER 1.25

/*
 * sort_width_used
 *		The Sort's width less the NULL constants PostgreSQL puts for unused
 *		columns (count(*) over an ordered subquery), which plan_width counts
 *		at their type's average width; no statistics looked up.
 */
static double
sort_width_used(Sort *sort, Plan *child)
{
	double		width = sort->plan.plan_width;
	ListCell   *lc;

	foreach(lc, sort->plan.targetlist)
	{
		Expr	   *expr = braid_sort_input_expr(child, ((TargetEntry *) lfirst(lc))->expr);

		if (IsA(expr, Const) && ((Const *) expr)->constisnull)
			width -= get_typavgwidth(((Const *) expr)->consttype,
									 ((Const *) expr)->consttypmod);
	}
	return Max(width, 0);
}

/*
 * whole_rows_wider
 *		Whether the rows of table relid are more than BRAID_ADAPTIVE_MAX_WIDER
 *		times as large as those of a Sort over it (sort_width_used), as tuples: the
 *		table's from its pages and rows as last counted (dead space and all;
 *		its columns' statistics if it has never been counted), the Sort's
 *		from its width less the NULL constants PostgreSQL puts for unused
 *		columns (count(*) over an ordered subquery), which plan_width counts
 *		at their type's average width.  No statistics are looked up on the
 *		way: the planner takes many small sorts this way.
 */
static bool
whole_rows_wider(double sort_width, Oid relid)
{
	/* (the relation cache's entry: the planner holds the table's lock) */
	Relation	rel = RelationIdGetRelation(relid);
	double		pages,
				tuples;
	double		overhead = MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData);
	double		table_row;

	if (!RelationIsValid(rel))
		elog(ERROR, "braidsort: could not open relation with OID %u", relid);
	pages = rel->rd_rel->relpages;
	tuples = rel->rd_rel->reltuples;
	RelationClose(rel);
	table_row = pages > 0 && tuples > 0 ? pages * BLCKSZ / tuples :
		get_relation_data_width(relid, NULL) + overhead;
	return table_row > BRAID_ADAPTIVE_MAX_WIDER * (sort_width + overhead);
}

/*
 * take_adaptively
 *		A BraidSort that takes "sort" adaptively (sort_adaptive.c): the cost
 *		model declines it only because of its row estimate (small_why), so
 *		it runs as PostgreSQL's in-memory sort and switches to braidsort's
 *		path if its input outgrows work_mem: refetching rows by TID over a
 *		heap scan (braid_heap_tid_input), else from a value log.  Its cost
 *		is the Sort's.  NULL (with *why) if it cannot be: the Sort's output
 *		is not a plain projection of its input.
 *
 * Should it switch, the write-limited mode is the one braidsort.sort_mode
 * names, else MergePass: an estimate that proved wrong cannot choose one.
 */
static Plan *
take_adaptively(PlannedStmt *stmt, Sort *sort, Plan *child, int processes,
				const BraidKeys *keys, const char *small_why, char **why,
				BraidDecline *kind)
{
	List	   *keyexprs,
			   *child_tlist,
			   *output_tlist;
	CustomScan *cscan;
	BraidSortPlanData data;
	Oid			relid = InvalidOid;
	char	   *tid_why;
	bool		by_tid;
	List	   *physical = NIL;
	double		sort_width = sort_width_used(sort, child);

	/*
	 * Over a heap scan, the switched sort refetches rows by TID -- but only
	 * where the table's rows are not much wider than the Sort's: that
	 * tuplesort holds whole table rows, which reach work_mem (and, handed
	 * back to PostgreSQL's sort, spill) where PostgreSQL's narrower rows
	 * would fit (two columns of a 340-byte row, at the default work_mem: 2.5x
	 * slower).  The value log form's tuplesort holds the rows PostgreSQL's
	 * would.  (Widths first: they are the cheaper question, and the usual
	 * answer for a short query's sort of a few columns.)
	 */
	relid = braid_scanned_table(stmt, child, &tid_why);
	by_tid = braid_gather_source != BRAID_GATHER_VALUE_LOG && OidIsValid(relid) &&
		!whole_rows_wider(sort_width, relid) &&
		braid_heap_tid_input(stmt, child, &relid, NULL, NULL, &tid_why);

	/*
	 * Its tuplesort then sorts the node's output rows by the Sort's key
	 * column numbers, which are those of its input: the Sort's target list
	 * must pass its input through column for column (as setrefs.c makes it).
	 */
	for (int i = 0; by_tid && i < sort->numCols; i++)
	{
		TargetEntry *stle = get_tle_by_resno(sort->plan.targetlist, sort->sortColIdx[i]);

		by_tid = stle != NULL && IsA(stle->expr, Var) &&
			((Var *) stle->expr)->varno == OUTER_VAR &&
			((Var *) stle->expr)->varattno == sort->sortColIdx[i];
	}
	if (by_tid && !node_tlists(sort, child, true, &output_tlist, &keyexprs, &child_tlist, why))
		by_tid = false;

	/*
	 * ... and its tuplesort sorts the scan's heap tuples by the keys' table
	 * columns, projecting its target list from them: every key must be a
	 * plain column (the scan then hands over its tuples), no system column
	 * may be read (a sorted tuple no longer has its header), and the TID
	 * travels in the minimal tuple's padding, which needs MAXALIGN 8.
	 */
	if (by_tid && sizeof(((MinimalTupleData *) 0)->mt_padding) < sizeof(ItemPointerData))
		by_tid = false;			/* no room for the TID (MAXALIGN below 8) */
	if (by_tid)
	{
		Bitmapset  *attrs = NULL;
		int			attr = -1;

		physical = physical_scan_tlist(child_tlist, ((Scan *) child)->scanrelid, relid);
		pull_varattnos((Node *) output_tlist, ((Scan *) child)->scanrelid, &attrs);
		while (physical != NIL && (attr = bms_next_member(attrs, attr)) >= 0)
			if (attr + FirstLowInvalidHeapAttributeNumber < 0)
				physical = NIL;
		by_tid = physical != NIL;
	}
	if (!by_tid && !node_tlists(sort, child, false, &output_tlist, &keyexprs, &child_tlist, why))
	{
		*kind = BRAID_DECLINE_COST;
		*why = psprintf("%s (%.0f rows estimated), and it cannot be taken adaptively: %s",
						small_why, sort->plan.plan_rows, *why);
		return NULL;
	}
	BRAID_PLAN_DEBUG("braidsort: Sort taken adaptively: %s (%.0f rows estimated%s); it runs as PostgreSQL's sort unless its input outgrows work_mem",
					 small_why, sort->plan.plan_rows,
					 processes > 1 ? psprintf(" in each of %d processes", processes) : "");

	cscan = make_braid_scan(sort, child, Max(sort->plan.startup_cost - child->total_cost, 0.0),
							output_tlist);
	start_plan_data(&data, sort, keys, keyexprs, by_tid, processes);
	data.tuple_width = sort->plan.plan_width;
	data.sort_width = (int) sort_width;
	data.wl_mode = braid_sort_mode == BRAID_SORT_MODE_AUTO ? BRAID_WL_MERGEPASS :
		(int) (braid_sort_mode - BRAID_SORT_MODE_MERGEPASS);
	data.segment_share = 0.5;
	data.can_reread = !by_tid || braid_heap_rescannable(child);
	data.adaptive = true;
	data.key_memory = (int) Min(braid_cost_split_key_memory(keys->full_key_bytes, keys->collated),
								(double) INT_MAX);
	data.est_braid_tenth_ms = data.est_pg_tenth_ms = -1;
	return finish_braid_scan(cscan, child, child_tlist, by_tid ? physical : NIL, &data);
}

/*
 * braid_try_sort
 *		Return a BraidSort CustomScan replacing "sort", or NULL to leave the
 *		Sort alone.  *why is set to the reason for declining.  "processes"
 *		is how many processes run this Sort at once (a parallel plan's
 *		workers and leader), each with its own copy.
 *
 * Two forms.  Over a heap scan (braid_heap_tid_input) whose rows are cheaper to
 * refetch than to keep (the cost model weighs the gather's visits of the
 * table against a value log's copies), the scan only has to give the sort
 * keys -- the table's own tuples unprojected when every key is a plain
 * column, else a target list narrowed to the keys -- and the node
 * refetches whole rows by TID, evaluating the scan's original target list
 * on them (scanrelid is the table; the child is in custom_plans).
 * Otherwise the node keeps each input row in a value log and the IndexMap
 * points into it: the child stays as the node's outer plan and the node's
 * target list is the Sort's, referencing it.
 *
 * The node's cost is PostgreSQL's Sort's, with the sort's own part scaled
 * by braidsort's estimate over PostgreSQL's: what EXPLAIN shows, and what
 * the plan above would have weighed.
 */
Plan *
braid_try_sort(PlannedStmt *stmt, Sort *sort, int processes, char **why,
			   BraidDecline *kind)
{
	return try_sort(stmt, sort, processes, NULL, SHARED_NO, 0, why, kind);
}

/*
 * try_sort
 *		braid_try_sort, or with "one" the single sort that would replace a
 *		Gather Merge (braid_try_gather_sort), weighed against the parallel
 *		plan instead of a Sort in one process; with "shared", each process's
 *		Sort under a Gather Merge made the parallel-aware BraidSort all of
 *		them build and one merges (sort/sort_shared.c), taken where
 *		braidsort would take each process's Sort; shared_rows are then the
 *		rows of all of them (the Gather Merge's), else 0.
 */
static Plan *
try_sort(PlannedStmt *stmt, Sort *sort, int processes, const BraidOneSortInput *one,
		 int shared, double shared_rows, char **why, BraidDecline *kind)
{
	Plan	   *plan;
	Plan	   *child = outerPlan(sort);
	Oid			relid = InvalidOid;
	double		table_pages = 0;
	bool		table_cached = true;
	bool		heap_ok;
	bool		by_tid;
	char	   *tid_why = NULL;
	BraidKeys	keys;
	List	   *keyexprs,
			   *child_tlist,
			   *output_tlist;
	BraidCostInput cost;
	BraidCostEstimate est;
	double		own_cost;
	CustomScan *cscan;
	BraidSortPlanData data;
	bool		can_reread;
	double		gather_bytes;
	double		gather_pass_ms;
	double		rank_saving_ns;
	BraidWlMode wl_mode;
	BraidWlEstimate wl_est[BRAID_WL_NMODES];

	*kind = BRAID_DECLINE_SHAPE;
	if (child == NULL)
	{
		*why = "no input plan";
		return NULL;
	}

	/*
	 * Too few rows expected for the cost model to be worth asking: taken
	 * adaptively without looking anything up but the keys and the table (its
	 * access method and size, from the relation cache; the planner plans many
	 * such sorts, each of which this must not slow down).
	 */
	if (!braid_force && braid_adaptive != BRAID_ADAPTIVE_OFF && one == NULL && !shared &&
		sort->plan.plan_rows < BRAID_MIN_ROWS)
	{
		if (!sort_keys(sort, child, InvalidOid, &keys, why, kind))
			return NULL;
		return take_adaptively(stmt, sort, child, processes, &keys,
							   "too few rows to be worth it", why, kind);
	}

	heap_ok = braid_heap_tid_input(stmt, child, &relid, &table_pages, &table_cached, &tid_why);
	if (!sort_keys(sort, child, relid, &keys, why, kind))
		return NULL;

	braid_plan_cost_input(sort, child, heap_ok ? relid : InvalidOid, table_pages,
						  table_cached, &keys, processes, &cost);
	braid_cost_estimate(&cost, &est);
	if (one != NULL && !weigh_one_sort(one, &est, why))
	{
		*kind = BRAID_DECLINE_COST;
		return NULL;
	}
	if (!braid_force && !est.prefers && est.small && braid_adaptive != BRAID_ADAPTIVE_OFF &&
		!shared)
		return take_adaptively(stmt, sort, child, processes, &keys, est.why, why, kind);
	/* (a shared sort weighed against the parallel plans is taken) */
	if (shared == SHARED_WEIGHED)
		est.prefers = true;
	if (!braid_force && !est.prefers)
	{
		*kind = BRAID_DECLINE_COST;
		*why = psprintf("%s (braidsort %s ms, PostgreSQL %s ms estimated for %.0f rows%s%s)",
						est.why, braid_ms_text(ns_to_ms(est.braid_ns)),
						braid_ms_text(ns_to_ms(est.pg_ns)), cost.rows,
						processes > 1 ? psprintf(" in each of %d processes", processes) : "",
						braid_cost_margin_text(&est));
		return NULL;
	}

	/*
	 * A sort the spill device has no room for would fail where PostgreSQL's
	 * sort, whose files may go elsewhere, would not (under a Gather, every
	 * process writes its own files).
	 */
	if (!braid_force && !braid_sort_has_room(&cost, est.from, shared_rows, why))
	{
		*kind = BRAID_DECLINE_COST;
		return NULL;
	}

	/* over a heap scan, gather by TID unless a value log is cheaper */
	by_tid = est.from == BRAID_FROM_HEAP_TID;
	if (!by_tid)
		BRAID_PLAN_DEBUG("braidsort: rows go to a value log: %s",
						 !heap_ok ? tid_why :
						 braid_gather_source == BRAID_GATHER_VALUE_LOG ? "braidsort.gather_source is value_log" :
						 psprintf("cheaper than refetching them (%s ms against %s ms estimated)",
								  braid_ms_text(ns_to_ms(est.vlog_ns)),
								  braid_ms_text(ns_to_ms(est.tid_ns))));

	if (!node_tlists(sort, child, by_tid, &output_tlist, &keyexprs, &child_tlist, why))
		return NULL;
	start_plan_data(&data, sort, &keys, keyexprs, by_tid, processes);
	data.replaced_workers = one != NULL ? one->workers : 0;

	/*
	 * Should the IndexMap outgrow the budget: the write-limited mode.  A heap
	 * scan is read again by rescanning it, which gives the same rows only for
	 * a plain, serial scan calling only immutable functions, without subplans
	 * (braid_heap_rescannable); a value log can always be read again.
	 */
	can_reread = !by_tid || braid_heap_rescannable(child);
	/* the late gather by TID, whose batches a mode's held memory shrinks */
	gather_bytes = by_tid ? cost.rows * cost.tuple_bytes : 0;
	gather_pass_ms = by_tid ? braid_cost_gather_pass_ns(&cost) / 1e6 : 0;
	data.gather_kb = (int) Min(gather_bytes / 1024, (double) INT_MAX);
	data.gather_pass_us = (int) Min(gather_pass_ms * 1000, (double) INT_MAX);
	data.key_memory = (int) Min(braid_cost_split_key_memory(cost.full_key_bytes, cost.collated),
								(double) INT_MAX);
	/* ranked in runs, compared by the collation in selection passes */
	data.rank_collated = braid_cost_ranks(&cost, est.from, &rank_saving_ns);
	data.select_collated_ns = cost.rows > 0 ?
		(int) Min(rint(rank_saving_ns / cost.rows), (double) INT_MAX) : 0;
	wl_mode = braid_plan_sort_mode(cost.rows, keys.keylen, data.key_tenths / 10.0,
								   data.key_memory, !by_tid, can_reread,
								   data.gather_kb * 1024.0, data.gather_pass_us / 1000.0,
								   data.select_collated_ns, wl_est, &data.segment_share);
	/* a shared sort's participants hand over runs on the device */
	if (shared)
		wl_mode = BRAID_WL_MERGEPASS;
	data.est_braid_tenth_ms = (int) Min(rint(est.braid_ns / 1e5), (double) INT_MAX);
	data.est_pg_tenth_ms = (int) Min(rint(est.pg_ns / 1e5), (double) INT_MAX);
	if (braid_cost_spills(&cost, est.from))
		est.braid_ns = Max(est.braid_ns + (wl_est[wl_mode].ms - wl_est[BRAID_WL_MERGEPASS].ms) * 1e6,
						   0.0);

	BRAID_PLAN_DEBUG("braidsort: %s replaced%s%s: braidsort %s ms (%s), PostgreSQL %s ms estimated for %.0f rows%s",
					 one != NULL ? "Gather Merge" : shared ? "Gather Merge's Sorts" : "Sort",
					 shared ? " by one shared sort" : "",
					 braid_force && !est.prefers ? " (forced)" : "",
					 braid_ms_text(ns_to_ms(est.braid_ns)), by_tid ? "heap tid" : "value log",
					 braid_ms_text(ns_to_ms(est.pg_ns)),
					 cost.rows, processes > 1 ? psprintf(" in each of %d processes", processes) : "");

	/*
	 * The sort's own cost (beyond reading its input), scaled by braidsort's
	 * estimate over PostgreSQL's.
	 */
	own_cost = Max(sort->plan.startup_cost - child->total_cost, 0.0) *
		(est.pg_ns > 0 ? est.braid_ns / est.pg_ns : 1.0);

	cscan = make_braid_scan(sort, child, own_cost, output_tlist);
	data.tuple_width = (int) Min(cost.tuple_bytes, (double) INT_MAX);
	data.sort_width = (int) Min(cost.sort_width, (double) INT_MAX);
	/* (a shared sort's leader takes every entry: it merges where all spill) */
	data.expect_spill = braid_cost_spills(&cost, est.from) ||
		(shared && shared_rows > 0 && braid_cost_spills_rows(&cost, est.from, shared_rows));
	data.wl_mode = (int) wl_mode;
	data.can_reread = can_reread;
	data.shared = shared;
	plan = finish_braid_scan(cscan, child, child_tlist,
							 by_tid ? physical_scan_tlist(child_tlist, ((Scan *) child)->scanrelid,
														  relid) : NIL,
							 &data);
	/* (the executor sets up its shared memory: sort_shared.c) */
	plan->parallel_aware = shared;
	return plan;
}

/*
 * start_plan_data
 *		The plan data of every BraidSort: the Sort's keys and their prefix,
 *		the form (by_tid: heap TID, else value log) and the processes; the
 *		rest zero, for the caller to fill in.
 */
static void
start_plan_data(BraidSortPlanData *data, Sort *sort, const BraidKeys *keys, List *keyexprs,
				bool by_tid, int processes)
{
	memset(data, 0, sizeof(*data));
	data->nkeys = sort->numCols;
	data->sortops = sort->sortOperators;
	data->collations = sort->collations;
	data->nullsfirst = sort->nullsFirst;
	data->keyexprs = keyexprs;
	data->keycols = sort->sortColIdx;
	data->keylen = keys->keylen;
	/* collated keys are coded as their ranks or in full: not estimated */
	data->key_tenths = keys->collated ? 0 :
		(int) Min(rint(keys->encoded_bytes * 10), (double) INT_MAX);
	data->truncates = keys->has_var || keys->collated;
	data->mode = by_tid ? BRAID_MODE_HEAP_TID : BRAID_MODE_VALUE_LOG;
	data->processes = processes;
	data->write_intensity = braid_write_intensity;
	data->rank_collated = true;
}

/*
 * finish_braid_scan
 *		Attach the child -- in heap TID form in custom_plans (set_tid_child;
 *		"physical" its physical target list or NIL), else as the outer plan
 *		-- and pack the plan data into the node, which is returned.
 */
static Plan *
finish_braid_scan(CustomScan *cscan, Plan *child, List *child_tlist, List *physical,
				  BraidSortPlanData *data)
{
	if (data->mode == BRAID_MODE_HEAP_TID)
		set_tid_child(cscan, child, child_tlist, physical, data);
	else
	{
		cscan->scan.scanrelid = 0;
		cscan->custom_plans = NIL;
		outerPlan(cscan) = child;
		set_row_scan_tlist(cscan, child);
	}
	cscan->custom_private = braid_plan_pack(data);
	return (Plan *) cscan;
}

/*
 * set_row_scan_tlist
 *		Value log form whose output is its input's row, column for column
 *		(as a Sort's nearly always is): describe that row as the node's scan
 *		tuple (custom_scan_tlist: the Sort's target list) and make
 *		the target list its columns in order (INDEX_VAR), so that the
 *		executor sees no projection to make (ExecInitCustomScan builds none)
 *		and the node returns the rows it reads back, or its tuplesort's, as
 *		they are (a value log sort of millions of rows made a projection of
 *		each).  EXPLAIN shows the same columns (through the scan target
 *		list).  A target list with constants is left as it is: EXPLAIN would
 *		show them parenthesized.
 */
static void
set_row_scan_tlist(CustomScan *cscan, Plan *child)
{
	List	   *tlist = NIL;
	ListCell   *lc;
	AttrNumber	n = 0;

	if (list_length(cscan->scan.plan.targetlist) != list_length(child->targetlist))
		return;
	foreach(lc, cscan->scan.plan.targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *ref = (Var *) tle->expr;

		n++;
		if (!IsA(ref, Var) || ref->varno != OUTER_VAR || ref->varattno != n ||
			ref->varlevelsup != 0)
			return;
	}
	n = 0;
	foreach(lc, cscan->scan.plan.targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *ref = (Var *) tle->expr;
		TargetEntry *out = flatCopyTargetEntry(tle);

		out->expr = (Expr *) makeVar(INDEX_VAR, ++n, ref->vartype, ref->vartypmod,
									 ref->varcollid, 0);
		tlist = lappend(tlist, out);
	}
	/* (the Sort's own list: the Sort is discarded) */
	cscan->custom_scan_tlist = cscan->scan.plan.targetlist;
	cscan->scan.plan.targetlist = tlist;
}

/*
 * set_tid_child
 *		Heap TID form: the node scans the child's table (whose rows it
 *		refetches), with its child scan in custom_plans, made to output
 *		only what the build reads: the table's own tuples (physical, from
 *		physical_scan_tlist) if every key is a plain column, else the keys
 *		(child_tlist).
 */
static void
set_tid_child(CustomScan *cscan, Plan *child, List *child_tlist, List *physical,
			  BraidSortPlanData *data)
{
	ListCell   *lc;

	cscan->scan.scanrelid = ((Scan *) child)->scanrelid;
	cscan->custom_plans = list_make1(child);
	if (physical != NIL)
	{
		/*
		 * Keys that are plain columns are read straight from the scanned
		 * tuple: the scan outputs it as it is (no projection per row) and the
		 * node reads the key columns by number.
		 */
		int			i = 0;

		data->keyattnos = palloc(sizeof(AttrNumber) * data->nkeys);
		foreach(lc, child_tlist)
			data->keyattnos[i++] = ((Var *) ((TargetEntry *) lfirst(lc))->expr)->varattno;
		child->targetlist = physical;
	}
	else
	{
		/* narrow the scan to the keys: the rest is refetched at gather time */
		child->targetlist = child_tlist;
	}
}

/*
 * physical_scan_tlist
 *		If every sort key is a plain column of the scanned table, the scan's
 *		physical target list (each column, in order; NULL for dropped ones),
 *		which lets the scan hand over its tuples without projecting them;
 *		else NIL.  "keys" is the key target list the scan would otherwise
 *		output.
 */
static List *
physical_scan_tlist(List *keys, Index scanrelid, Oid relid)
{
	List	   *tlist = NIL;
	ListCell   *lc;
	Relation	rel;
	TupleDesc	desc;

	foreach(lc, keys)
	{
		Var		   *var = (Var *) ((TargetEntry *) lfirst(lc))->expr;

		if (!IsA(var, Var) || var->varno != scanrelid || var->varattno <= 0 ||
			var->varlevelsup != 0)
			return NIL;
	}

	rel = table_open(relid, NoLock);
	desc = RelationGetDescr(rel);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Expr	   *expr;

		if (att->attisdropped)
			expr = (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
									  (Datum) 0, true, true);
		else
			expr = (Expr *) makeVar(scanrelid, att->attnum, att->atttypid,
									att->atttypmod, att->attcollation, 0);
		tlist = lappend(tlist, makeTargetEntry(expr, att->attnum, NULL, false));
	}
	table_close(rel, NoLock);
	return tlist;
}

/*
 * weigh_one_sort
 *		For the single sort replacing a Gather Merge (est its cost model's
 *		estimate over every row): whether to take it, against PostgreSQL's
 *		parallel plan and a BraidSort in each process (braid_cost_one_sort).
 *		On true, est is restated as the whole plan's (one sort and the scan
 *		in one process, against PostgreSQL's parallel plan), for the node's
 *		cost and braidsort.sort_modes(); on false, *why says why not.
 *		braidsort.force takes the single sort where it is expected to be
 *		faster than a forced BraidSort in each process and a shared sort
 *		the cost model would take, and braidsort.parallel_sort = one
 *		wherever braidsort would take it.
 */
static bool
weigh_one_sort(const BraidOneSortInput *one, BraidCostEstimate *est, char **why)
{
	BraidOneSortEstimate w;
	bool		take;
	bool		model_takes;	/* taken on the cost model's word */
	const char *reason;

	braid_cost_one_sort(&one->each, &one->each_est, one->each_taken, est, one->total_rows,
						one->scan_ns, one->shared_ns, &w);
	if (braid_parallel_sort == BRAID_PARALLEL_SORT_ONE)
	{
		model_takes = w.prefers ||
			(!one->each_est.small && w.one_ns <= w.pg_ns * BRAID_COST_MARGIN);
		take = braid_force || model_takes;
		reason = one->each_est.small ? one->each_est.why :
			"one sort is not expected to be enough faster than PostgreSQL's parallel plan";
	}
	else
	{
		model_takes = w.prefers;
		take = model_takes || (braid_force && w.one_ns <= Min(w.each_ns, w.shared_ns));
		reason = w.why;
	}
	if (!take)
	{
		*why = psprintf("%s (one braidsort %s ms, PostgreSQL's parallel plan %s ms, %s estimated for %.0f rows)",
						reason, braid_ms_text(w.one_ns / 1e6), braid_ms_text(w.pg_ns / 1e6),
						w.each_ns < HUGE_VAL ?
						psprintf("a BraidSort in each process %s ms", braid_ms_text(w.each_ns / 1e6)) :
						"no BraidSort in each process",
						one->total_rows);
		return false;
	}
	est->pg_ns = w.pg_ns;
	est->braid_ns = w.one_ns;
	est->prefers = model_takes; /* else taken only as braidsort.force says */
	est->small = false;
	est->why = model_takes ? NULL : reason;
	return true;
}

/*
 * braid_sort_each_estimate
 *		The cost model's estimate of one process's Sort of its share of a
 *		parallel plan ("processes" of them), as the walk would cost it, into
 *		one->each and one->each_est, and whether braidsort would take it;
 *		false (with *why) when a key has no exact encoder.
 */
bool
braid_sort_each_estimate(PlannedStmt *stmt, Sort *sort, int processes, BraidOneSortInput *one,
						 char **why)
{
	Plan	   *scan = outerPlan(sort);
	Oid			relid = InvalidOid;
	double		table_pages = 0;
	bool		table_cached = true;
	bool		heap_ok;
	char	   *tid_why = NULL;
	BraidKeys	keys;
	BraidDecline kind;

	heap_ok = braid_heap_tid_input(stmt, scan, &relid, &table_pages, &table_cached, &tid_why);
	if (!sort_keys(sort, scan, relid, &keys, why, &kind))
		return false;
	braid_plan_cost_input(sort, scan, heap_ok ? relid : InvalidOid, table_pages,
						  table_cached, &keys, processes, &one->each);
	braid_cost_estimate(&one->each, &one->each_est);
	one->each_taken = braid_force || one->each_est.prefers;
	return true;
}

/*
 * braid_try_one_sort
 *		A BraidSort for "whole", the sort of every row a Gather Merge
 *		collects, weighed against the parallel plan as "one" describes it
 *		(weigh_one_sort), or NULL with *why.
 */
Plan *
braid_try_one_sort(PlannedStmt *stmt, Sort *whole, const BraidOneSortInput *one, char **why)
{
	BraidDecline kind;

	return try_sort(stmt, whole, 1, one, SHARED_NO, 0, why, &kind);
}

/*
 * braid_try_shared_sort
 *		The parallel-aware BraidSort that every process under a Gather Merge
 *		builds and one merges (sort/sort_shared.c), in place of each
 *		process's Sort ("processes" of them), or NULL with *why: in
 *		MergePass form, taken where the caller has weighed it against the
 *		parallel plans (weighed: braid_cost_shared_sort), else where
 *		braidsort would take each process's Sort.  The caller puts a Gather
 *		over it in the Gather Merge's place.
 */
Plan *
braid_try_shared_sort(PlannedStmt *stmt, Sort *sort, int processes, bool weighed,
					  double total_rows, char **why)
{
	BraidDecline kind;

	if (!braid_force && braid_sort_mode != BRAID_SORT_MODE_AUTO &&
		braid_sort_mode != BRAID_SORT_MODE_MERGEPASS)
	{
		*why = "braidsort.sort_mode names a write-limited mode, which a shared sort does not run";
		return NULL;
	}
	return try_sort(stmt, sort, processes, NULL, weighed ? SHARED_WEIGHED : SHARED_AS_EACH,
					total_rows, why, &kind);
}
