/*-------------------------------------------------------------------------
 *
 * planner.c
 *	  planner_hook post-pass: replace eligible Sort nodes by BraidSort
 *	  (sort_plan.c) and Hash Joins by BraidJoin (join_plan.c).
 *
 * PostgreSQL has no tuplesort hook, and create_upper_paths_hook only sees
 * the top-level ORDER BY, so braidsort lets the standard planner finish and
 * then walks the finished plan (main tree and every subplan), offering
 * each Sort and Hash Join for replacement.  Because the swap happens after
 * set_plan_references, the new node is built directly in executable form.
 *
 * Only plain SELECT statements without row locks or data-modifying CTEs
 * are walked: EvalPlanQual rechecks would otherwise see refetched, not
 * rechecked, tuples.  A Sort that a LIMIT above may bound at run time stays
 * with PostgreSQL's top-N heapsort, which ExecSetTupleBound configures
 * through Limit, Result, SubqueryScan, Append, MergeAppend, Gather and
 * Gather Merge.
 *
 * Under a Gather or Gather Merge each process runs its own copy of the
 * plan below: the walk counts them, for the cost model and the threads.
 * A Gather Merge over each process's Sort of a Parallel Seq Scan may be
 * replaced whole by one BraidSort of the scan read in one process
 * (braid_try_gather_sort).
 *
 * src/plan/planner.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "utils/guc.h"

#include "guc.h"
#include "monitor/stats.h"
#include "plan/gather_plan.h"
#include "plan/join_plan.h"
#include "plan/permissions.h"
#include "plan/planner.h"
#include "plan/sort_plan.h"

static planner_hook_type prev_planner_hook = NULL;

/*
 * Where the walk is: the statement, whether a LIMIT above could hand a Sort
 * a tuple bound at run time, and how many processes run this part of the
 * plan at once (under a Gather or Gather Merge, its planned workers and the
 * leader, each running its own copy of every node below).
 */
typedef struct BraidWalk
{
	PlannedStmt *stmt;
	bool		bounded;
	int			processes;
	int		   *most_processes; /* the most processes of any Gather seen */
} BraidWalk;

/*
 * gather_processes
 *		How many processes run the plan below a Gather or Gather Merge: its
 *		planned workers, and the leader unless it only collects (a single
 *		copy, or parallel_leader_participation off).
 */
static int
gather_processes(int num_workers, bool single_copy)
{
	if (single_copy)
		return 1;
	return Max(num_workers + (parallel_leader_participation ? 1 : 0), 1);
}

static Plan *replace_sorts(BraidWalk w, Plan *plan);

/*
 * replace_sorts_in_list
 *		replace_sorts on every plan of a list, in place.
 */
static void
replace_sorts_in_list(BraidWalk w, List *plans)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = replace_sorts(w, (Plan *) lfirst(lc));
}

/*
 * replace_sorts
 *		Walk a plan tree, replacing eligible Sorts; returns the (possibly
 *		new) root.
 */
static Plan *
replace_sorts(BraidWalk w, Plan *plan)
{
	BraidWalk	outer = w;
	BraidWalk	inner = w;

	if (plan == NULL)
		return NULL;

	/* a bound reaches a Sort only through these nodes (ExecSetTupleBound) */
	outer.bounded = false;
	inner.bounded = false;
	switch (nodeTag(plan))
	{
		case T_Limit:
			outer.bounded = ((Limit *) plan)->limitCount != NULL;
			break;
		case T_Result:
			outer.bounded = w.bounded;
			break;
		case T_Gather:
			outer.bounded = w.bounded;
			outer.processes = gather_processes(((Gather *) plan)->num_workers,
											   ((Gather *) plan)->single_copy);
			*w.most_processes = Max(*w.most_processes, outer.processes);
			break;
		case T_GatherMerge:
			outer.bounded = w.bounded;
			outer.processes = gather_processes(((GatherMerge *) plan)->num_workers, false);

			/*
			 * each process's Sort of a parallel scan, merged: one sort of the
			 * whole scan in its place, if that is cheaper (and no LIMIT may
			 * make each process's sort a top-N heapsort)
			 */
			if (!w.bounded)
			{
				char	   *why = NULL;
				Plan	   *one = braid_try_gather_sort(w.stmt, (GatherMerge *) plan,
														outer.processes, &why);

				if (one != NULL)
					return one;
				BRAID_PLAN_DEBUG("braidsort: Gather Merge kept: %s", why);
			}
			*w.most_processes = Max(*w.most_processes, outer.processes);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				replace_sorts(w, ((SubqueryScan *) plan)->subplan);
			break;
		case T_Append:
			replace_sorts_in_list(w, ((Append *) plan)->appendplans);
			break;
		case T_MergeAppend:
			replace_sorts_in_list(w, ((MergeAppend *) plan)->mergeplans);
			break;
		case T_CustomScan:
			replace_sorts_in_list(inner, ((CustomScan *) plan)->custom_plans);
			break;
		case T_IncrementalSort:
			BRAID_PLAN_DEBUG("braidsort: Incremental Sort left to PostgreSQL: braidsort replaces only full sorts");
			break;
		default:
			break;
	}

	outerPlan(plan) = replace_sorts(outer, outerPlan(plan));
	innerPlan(plan) = replace_sorts(inner, innerPlan(plan));

	if (IsA(plan, HashJoin))
	{
		char	   *why = NULL;
		bool		fits = false;
		Plan	   *replacement;

		replacement = braid_try_join(w.stmt, (HashJoin *) plan, w.processes, &why, &fits);
		if (replacement == NULL && fits)
		{
			/* braidsort takes only hash joins that spill: no decline */
			BRAID_PLAN_DEBUG("braidsort: %s left to PostgreSQL: %s",
							 plan->parallel_aware ? "Parallel Hash Join" : "Hash Join", why);
			return plan;
		}
		if (replacement == NULL)
		{
			BRAID_PLAN_DECLINE("braidsort: %s left to PostgreSQL: %s",
							   plan->parallel_aware ? "Parallel Hash Join" : "Hash Join", why);
			return plan;
		}
		return replacement;
	}

	if (IsA(plan, Sort))
	{
		char	   *why = NULL;
		Plan	   *replacement;

		BraidDecline kind;

		if (w.bounded)
		{
			/* a top-N heapsort: not a decline worth reporting */
			BRAID_PLAN_DEBUG("braidsort: Sort left to PostgreSQL: it may be bounded by a LIMIT");
			braid_stats_count_decline(BRAID_DECLINE_BOUNDED);
			return plan;
		}
		replacement = braid_try_sort(w.stmt, (Sort *) plan, w.processes, &why, &kind);
		if (replacement == NULL)
		{
			BRAID_PLAN_DECLINE("braidsort: Sort left to PostgreSQL: %s", why);
			braid_stats_count_decline(kind);
			return plan;
		}
		return replacement;
	}
	return plan;
}

/*
 * count_nodes
 *		Nodes of a type in a plan tree (for statements braidsort declines
 *		whole).
 */
static int
count_nodes(Plan *plan, NodeTag tag)
{
	int			n = 0;
	ListCell   *lc;

	if (plan == NULL)
		return 0;
	if (nodeTag(plan) == tag)
		n++;
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			n += count_nodes((Plan *) lfirst(lc), tag);
	if (IsA(plan, MergeAppend))
		foreach(lc, ((MergeAppend *) plan)->mergeplans)
			n += count_nodes((Plan *) lfirst(lc), tag);
	if (IsA(plan, SubqueryScan))
		n += count_nodes(((SubqueryScan *) plan)->subplan, tag);
	return n + count_nodes(outerPlan(plan), tag) + count_nodes(innerPlan(plan), tag);
}

/*
 * statement_decline_reason
 *		Why braidsort leaves every Sort and Hash Join of this statement to
 *		PostgreSQL, or NULL.  Rows of a statement that locks or modifies
 *		them may be rechecked by EvalPlanQual, which would see refetched
 *		tuples instead of rechecked ones; braidsort keeps to plain SELECTs,
 *		where no such recheck happens (a conservative line: an INSERT's
 *		SELECT would be safe too, and may be taken later).
 */
#define BRAID_SELECT_ONLY "braidsort replaces sorts and hash joins of SELECT statements only"

static const char *
statement_decline_reason(PlannedStmt *stmt)
{
	switch (stmt->commandType)
	{
		case CMD_SELECT:
			break;
		case CMD_INSERT:
			return "the statement is an INSERT (" BRAID_SELECT_ONLY ")";
		case CMD_UPDATE:
			return "the statement is an UPDATE (" BRAID_SELECT_ONLY ")";
		case CMD_DELETE:
			return "the statement is a DELETE (" BRAID_SELECT_ONLY ")";
		case CMD_MERGE:
			return "the statement is a MERGE (" BRAID_SELECT_ONLY ")";
		default:
			return BRAID_SELECT_ONLY;
	}
	if (stmt->rowMarks != NIL)
		return "the statement locks rows (FOR UPDATE or FOR SHARE), which EvalPlanQual may recheck";
	if (stmt->hasModifyingCTE)
		return "the statement has a data-modifying WITH query";
	return NULL;
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
	const char *why;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);

	if (!braid_enable)
		return stmt;

	/*
	 * The executor checks the role's permissions only after planning: until
	 * then, say nothing about tables it may not read (permissions.c).  Set
	 * for every statement planned, before anything below plans another.
	 */
	braid_plan_messages_hidden = message_level_is_interesting(braid_decline_level()) &&
		!braid_stmt_permitted(stmt, false);
	why = statement_decline_reason(stmt);
	if (why == NULL)
	{
		int			most = 1;
		BraidWalk	w = {stmt, false, 1, &most};
		ListCell   *lc;

		stmt->planTree = replace_sorts(w, stmt->planTree);

		/*
		 * A parallel-safe subplan may be evaluated in every process of a
		 * parallel part of the plan (it is sent to the workers): size its
		 * sorts for the most processes any Gather runs.
		 */
		foreach(lc, stmt->subplans)
		{
			Plan	   *sub = (Plan *) lfirst(lc);

			w.processes = (sub != NULL && sub->parallel_safe) ? most : 1;
			lfirst(lc) = replace_sorts(w, sub);
		}
	}
	else
	{
		ListCell   *lc;
		int			n = count_nodes(stmt->planTree, T_Sort);
		int			joins = count_nodes(stmt->planTree, T_HashJoin);

		foreach(lc, stmt->subplans)
		{
			n += count_nodes((Plan *) lfirst(lc), T_Sort);
			joins += count_nodes((Plan *) lfirst(lc), T_HashJoin);
		}
		if (n > 0)
			BRAID_PLAN_DECLINE("braidsort: %d Sort%s left to PostgreSQL: %s",
							   n, n == 1 ? "" : "s", why);
		/* (whether they would spill is not asked: said at debug1 only) */
		if (joins > 0)
			BRAID_PLAN_DEBUG("braidsort: %d Hash Join%s left to PostgreSQL: %s",
							 joins, joins == 1 ? "" : "s", why);
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
