/*-------------------------------------------------------------------------
 *
 * planner.c
 *	  planner_hook post-pass: replace eligible Sort nodes by BraidSort.
 *
 * PostgreSQL has no tuplesort hook, and create_upper_paths_hook only sees
 * the top-level ORDER BY, so braidsort lets the standard planner finish and
 * then walks the finished plan (main tree and every subplan), swapping each
 * eligible Sort for a CustomScan "BraidSort".  Because the swap happens
 * after set_plan_references, the new node is built directly in executable
 * form.
 *
 * A Sort is eligible when
 *	- the statement is a plain SELECT without row locks or data-modifying
 *	  CTEs (EvalPlanQual rechecks would otherwise see refetched, not
 *	  rechecked, tuples);
 *	- its child is a sequential, index or bitmap heap scan of a heap table,
 *	  so every row is a heap tuple that can be refetched by TID under the
 *	  query's snapshot;
 *	- the child's target list has no volatile functions or subplans (it is
 *	  evaluated again, on the refetched tuple, when rows are emitted);
 *	- every key has an exact encoder (keys.c);
 *	- it is not bounded: a Sort under a LIMIT with a row count stays with
 *	  PostgreSQL's top-N heapsort, which ExecSetTupleBound configures at run
 *	  time through Limit, Result, SubqueryScan, Append, MergeAppend, Gather
 *	  and Gather Merge.
 * and, unless braidsort.force is on, the cost model expects a win.
 *
 * src/planner.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "executor/tuptable.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "braidsort.h"
#include "costmodel.h"
#include "device.h"
#include "indexmap.h"
#include "iosched.h"
#include "keys.h"
#include "profkernel.h"

static planner_hook_type prev_planner_hook = NULL;

/* Largest key prefix kept in an IndexMap entry for variable-width keys. */
#define BRAID_MAX_VAR_PREFIX 48

static Plan *replace_sorts(PlannedStmt *stmt, Plan *plan, bool bounded);
static List *physical_scan_tlist(List *keys, Index scanrelid, Oid relid);

/*
 * estimate_value_bytes
 *		Estimated average encoded bytes of a variable-width key expression.
 */
static double
estimate_value_bytes(Expr *expr, Oid relid)
{
	int32		width = 0;

	if (IsA(expr, Var) && ((Var *) expr)->varattno > 0)
		width = get_attavgwidth(relid, ((Var *) expr)->varattno);
	if (width <= 0)
		width = get_typavgwidth(exprType((Node *) expr), exprTypmod((Node *) expr));
	/* drop the (short) varlena header, add the terminator */
	return Max(width - 1, 0) + 2;
}

/*
 * heap_tid_input
 *		Can the Sort's input be refetched by heap TID?  True for a sequential,
 *		index or bitmap heap scan of a heap table whose output has no volatile
 *		functions or subplans (it is evaluated again at gather time).  Sets
 *		*relid, *table_pages and *table_cached; otherwise *why says why not.
 */
static bool
heap_tid_input(PlannedStmt *stmt, Plan *child, Oid *relid, double *table_pages,
			   bool *table_cached, char **why)
{
	RangeTblEntry *rte;
	Relation	rel;
	bool		is_heap;

	if (!IsA(child, SeqScan) && !IsA(child, BitmapHeapScan) &&
		!(IsA(child, IndexScan) && ((IndexScan *) child)->indexorderby == NIL))
	{
		*why = "input is not a sequential, index or bitmap heap scan";
		return false;
	}
	rte = rt_fetch(((Scan *) child)->scanrelid, stmt->rtable);
	if (rte->rtekind != RTE_RELATION ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
	{
		*why = "input is not a plain table";
		return false;
	}
	if (contain_volatile_functions((Node *) child->targetlist))
	{
		*why = "output has volatile functions";
		return false;
	}
	if (contain_subplans((Node *) child->targetlist))
	{
		*why = "output has subplans";
		return false;
	}
	rel = table_open(rte->relid, NoLock);
	is_heap = (rel->rd_rel->relam == HEAP_TABLE_AM_OID);
	*table_pages = (double) RelationGetNumberOfBlocks(rel);
	*table_cached = RelationUsesLocalBuffers(rel) ||
		*table_pages <= (double) (NBuffers / 2);
	table_close(rel, NoLock);
	if (!is_heap)
	{
		*why = "table does not use the heap access method";
		return false;
	}
	*relid = rte->relid;
	return true;
}

/*
 * try_braid_sort
 *		Return a BraidSort CustomScan replacing "sort", or NULL to leave the
 *		Sort alone.  *why is set to the reason for declining.
 *
 * Two forms.  Over a heap scan (heap_tid_input), the scan only has to give
 * the sort keys -- the table's own tuples unprojected when every key is a
 * plain column, else a target list narrowed to the keys -- and the node
 * refetches whole rows by TID, evaluating the scan's original target list
 * on them (scanrelid is the table; the child is in custom_plans).  Over anything else, the node keeps each input row in a
 * value log and the IndexMap points into it: the child stays as the node's
 * outer plan and the node's target list is the Sort's, referencing it.
 */
static Plan *
try_braid_sort(PlannedStmt *stmt, Sort *sort, char **why, BraidDecline *kind)
{
	Plan	   *child = outerPlan(sort);
	Oid			relid = InvalidOid;
	double		table_pages = 0;
	bool		table_cached = true;
	bool		by_tid;
	char	   *tid_why = NULL;
	List	   *sortops = NIL,
			   *collations = NIL,
			   *nullsfirst = NIL,
			   *keyexprs = NIL,
			   *keycols = NIL,
			   *child_tlist = NIL,
			   *output_tlist = NIL;
	ListCell   *lc;
	int			fixed_bytes = 0;
	double		var_bytes = 0;
	bool		has_var = false;
	bool		seen_collated = false;
	int			keylen;
	double		tuple_width;
	BraidCostInput cost;
	CustomScan *cscan;

	*kind = BRAID_DECLINE_SHAPE;
	if (child == NULL)
	{
		*why = "no input plan";
		return NULL;
	}
	by_tid = heap_tid_input(stmt, child, &relid, &table_pages, &table_cached, &tid_why);
	if (!by_tid)
		elog(DEBUG1, "braidsort: rows go to a value log: %s", tid_why);

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
			output_tlist = lappend(output_tlist, flatCopyTargetEntry(stle));
			continue;
		}
		if (!IsA(ref, Var) || ref->varno != OUTER_VAR ||
			(ctle = get_tle_by_resno(child->targetlist, ref->varattno)) == NULL)
		{
			*why = "sort output is not a plain projection of its input";
			return NULL;
		}
		tle = flatCopyTargetEntry(stle);
		tle->expr = by_tid ? copyObject(ctle->expr) : copyObject(stle->expr);
		output_tlist = lappend(output_tlist, tle);
	}

	for (int i = 0; i < sort->numCols; i++)
	{
		TargetEntry *stle = get_tle_by_resno(sort->plan.targetlist, sort->sortColIdx[i]);
		TargetEntry *tle = get_tle_by_resno(child->targetlist, sort->sortColIdx[i]);
		BraidKeyColumn col;
		int			width;

		if (tle == NULL || stle == NULL)
			elog(ERROR, "braidsort: no target list entry for sort key %d", i + 1);
		if (!by_tid && (!IsA(stle->expr, Var) || ((Var *) stle->expr)->varno != OUTER_VAR))
		{
			*why = "sort key is not a column of the input";
			return NULL;
		}
		if (!braid_key_column_for(sort->sortOperators[i], sort->collations[i],
								  sort->nullsFirst[i], &col, why))
		{
			*kind = BRAID_DECLINE_KEY;
			return NULL;
		}
		if (BRAID_KEY_IS_COLLATED(col.kind) && seen_collated)
		{
			*why = "more than one text key under a libc collation other than C";
			*kind = BRAID_DECLINE_KEY;
			return NULL;
		}

		/*
		 * The prefix holds keys up to a collated key's null mark; the rest
		 * is compared from the full key.
		 */
		if (seen_collated)
			width = -2;
		else if (BRAID_KEY_IS_COLLATED(col.kind))
		{
			width = 0;
			seen_collated = true;
		}
		else
			width = braid_key_fixed_width(col.kind);
		if (width >= 0)
			fixed_bytes += 1 + width;
		else if (width == -1)
		{
			has_var = true;
			var_bytes += 1 + estimate_value_bytes(tle->expr, relid);
		}
		sortops = lappend_oid(sortops, sort->sortOperators[i]);
		collations = lappend_oid(collations, sort->collations[i]);
		nullsfirst = lappend_int(nullsfirst, sort->nullsFirst[i]);
		keycols = lappend_int(keycols, sort->sortColIdx[i]);
		keyexprs = lappend(keyexprs, copyObject(by_tid ? tle->expr : stle->expr));
		child_tlist = lappend(child_tlist,
							  makeTargetEntry(copyObject(tle->expr), i + 1, NULL, false));
	}

	/*
	 * Key prefix: exact for fixed-width keys; for variable-width keys room
	 * for the estimated average key, within a cap, with longer keys broken
	 * by tie-break on their full encoding.
	 */
	if (!has_var)
		keylen = fixed_bytes;
	else
		keylen = Min((int) (fixed_bytes + var_bytes + 0.5), BRAID_MAX_VAR_PREFIX);
	keylen = Max(keylen, 1);

	/*
	 * Pad entries to a multiple of 8 bytes, which the radix sort moves a
	 * word at a time, and give the padding to the key prefix: more exact
	 * bytes for variable-width keys, fewer tie-breaks.
	 */
	if (seen_collated)
		keylen += 8;			/* where the full key is (see exec.c) */
	keylen = TYPEALIGN(8, keylen + BRAID_REF_BYTES) - BRAID_REF_BYTES;
	if (keylen + BRAID_REF_BYTES > BRAID_MAX_STRIDE)
	{
		*why = "sort key is too wide";
		*kind = BRAID_DECLINE_KEY;
		return NULL;
	}

	if (by_tid)
		tuple_width = get_relation_data_width(relid, NULL) +
			MAXALIGN(SizeofHeapTupleHeader);
	else
		tuple_width = MAXALIGN(sort->plan.plan_width + SizeofMinimalTupleHeader);

	cost.rows = sort->plan.plan_rows;
	cost.sort_width = sort->plan.plan_width;
	cost.tuple_bytes = tuple_width;
	cost.entry_bytes = keylen + BRAID_REF_BYTES;
	cost.budget_bytes = (double) braid_budget_bytes();
	cost.sort_mem_bytes = (double) work_mem * 1024.0;
	cost.table_pages = table_pages;		/* 0 for a value log: no gather passes */
	cost.table_cached = table_cached;
	cost.spill_ns_per_byte = braid_sched_spill_ns_per_byte(braid_spill_tablespace_guess());
	cost.collated = seen_collated;
	cost.sort_threads = braid_sort_thread_count();
	if (!braid_force && !braid_cost_prefers(&cost, (const char **) why))
	{
		*kind = BRAID_DECLINE_COST;
		return NULL;
	}

	cscan = makeNode(CustomScan);
	cscan->scan.plan.startup_cost = sort->plan.startup_cost;
	cscan->scan.plan.total_cost = sort->plan.total_cost;
	cscan->scan.plan.plan_rows = sort->plan.plan_rows;
	cscan->scan.plan.plan_width = sort->plan.plan_width;
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
	cscan->methods = &braid_sort_scan_methods;
	cscan->custom_private = list_make5(sortops, collations, nullsfirst,
									   list_make5_int(keylen, has_var ? 1 : 0,
													  (int) Min(tuple_width, (double) INT_MAX),
													  braid_cost_is_onepass(&cost) ? 0 : 1,
													  by_tid ? BRAID_MODE_HEAP_TID : BRAID_MODE_VALUE_LOG),
									   keyexprs);
	cscan->custom_private = lappend(cscan->custom_private, keycols);
	if (by_tid)
	{
		List	   *physical = physical_scan_tlist(child_tlist,
													   ((Scan *) child)->scanrelid, relid);

		cscan->scan.scanrelid = ((Scan *) child)->scanrelid;
		cscan->custom_plans = list_make1(child);
		if (physical != NIL)
		{
			/*
			 * Keys that are plain columns are read straight from the scanned
			 * tuple: the scan outputs it as it is (no projection per row)
			 * and the node reads the key columns by number.
			 */
			List	   *attnos = NIL;

			foreach(lc, child_tlist)
				attnos = lappend_int(attnos, ((Var *) ((TargetEntry *) lfirst(lc))->expr)->varattno);
			child->targetlist = physical;
			cscan->custom_private = lappend(cscan->custom_private, attnos);
		}
		else
		{
			/* narrow the scan to the keys: the rest is refetched at gather time */
			child->targetlist = child_tlist;
		}
	}
	else
	{
		cscan->scan.scanrelid = 0;
		cscan->custom_plans = NIL;
		outerPlan(cscan) = child;
	}

	return (Plan *) cscan;
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
 * replace_sorts_in_list
 *		replace_sorts on every plan of a list, in place.
 */
static void
replace_sorts_in_list(PlannedStmt *stmt, List *plans, bool bounded)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = replace_sorts(stmt, (Plan *) lfirst(lc), bounded);
}

/*
 * replace_sorts
 *		Walk a plan tree, replacing eligible Sorts; returns the (possibly
 *		new) root.  "bounded" is true where a LIMIT above could hand a Sort
 *		a tuple bound at run time.
 */
static Plan *
replace_sorts(PlannedStmt *stmt, Plan *plan, bool bounded)
{
	bool		pass_bound = false;

	if (plan == NULL)
		return NULL;

	switch (nodeTag(plan))
	{
		case T_Limit:
			outerPlan(plan) = replace_sorts(stmt, outerPlan(plan),
											((Limit *) plan)->limitCount != NULL);
			return plan;
		case T_Result:
		case T_Gather:
		case T_GatherMerge:
			pass_bound = bounded;
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				replace_sorts(stmt, ((SubqueryScan *) plan)->subplan, bounded);
			break;
		case T_Append:
			replace_sorts_in_list(stmt, ((Append *) plan)->appendplans, bounded);
			break;
		case T_MergeAppend:
			replace_sorts_in_list(stmt, ((MergeAppend *) plan)->mergeplans, bounded);
			break;
		case T_CustomScan:
			replace_sorts_in_list(stmt, ((CustomScan *) plan)->custom_plans, false);
			break;
		default:
			break;
	}

	outerPlan(plan) = replace_sorts(stmt, outerPlan(plan), pass_bound);
	innerPlan(plan) = replace_sorts(stmt, innerPlan(plan), false);

	if (IsA(plan, Sort))
	{
		char	   *why = NULL;
		Plan	   *replacement;

		BraidDecline kind;

		if (bounded)
		{
			elog(DEBUG1, "braidsort: Sort left to PostgreSQL: it may be bounded by a LIMIT");
			braid_stats_count_decline(BRAID_DECLINE_BOUNDED);
			return plan;
		}
		replacement = try_braid_sort(stmt, (Sort *) plan, &why, &kind);
		if (replacement == NULL)
		{
			elog(DEBUG1, "braidsort: Sort left to PostgreSQL: %s", why);
			braid_stats_count_decline(kind);
			return plan;
		}
		return replacement;
	}
	return plan;
}

/*
 * count_sorts
 *		Sort nodes in a plan tree (for statements braidsort declines whole).
 */
static int
count_sorts(Plan *plan)
{
	int			n = 0;
	ListCell   *lc;

	if (plan == NULL)
		return 0;
	if (IsA(plan, Sort))
		n++;
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			n += count_sorts((Plan *) lfirst(lc));
	if (IsA(plan, MergeAppend))
		foreach(lc, ((MergeAppend *) plan)->mergeplans)
			n += count_sorts((Plan *) lfirst(lc));
	if (IsA(plan, SubqueryScan))
		n += count_sorts(((SubqueryScan *) plan)->subplan);
	return n + count_sorts(outerPlan(plan)) + count_sorts(innerPlan(plan));
}

/*
 * braid_planner
 *		planner_hook: plan normally, then replace eligible Sorts.
 */
static PlannedStmt *
braid_planner(Query *parse, const char *query_string, int cursorOptions,
			  ParamListInfo boundParams)
{
	PlannedStmt *stmt;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);

	if (braid_enable &&
		stmt->commandType == CMD_SELECT &&
		stmt->rowMarks == NIL &&
		!stmt->hasModifyingCTE)
	{
		stmt->planTree = replace_sorts(stmt, stmt->planTree, false);
		replace_sorts_in_list(stmt, stmt->subplans, false);
	}
	else if (braid_enable)
	{
		ListCell   *lc;
		int			n = count_sorts(stmt->planTree);

		foreach(lc, stmt->subplans)
			n += count_sorts((Plan *) lfirst(lc));
		while (n-- > 0)
			braid_stats_count_decline(BRAID_DECLINE_STATEMENT);
	}
	return stmt;
}

/*
 * braid_planner_init
 *		Install the planner hook (called from _PG_init).
 */
void
braid_planner_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = braid_planner;
}
