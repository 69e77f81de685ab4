/*-------------------------------------------------------------------------
 *
 * gather_plan.c
 *	  A Gather Merge over each process's Sort of a Parallel Seq Scan
 *	  replaced by one BraidSort of the whole scan read in one process.
 *
 * Before the walk (planner.c) goes below a Gather Merge no LIMIT may bound,
 * it offers it here.  Where the shape allows (gather_passes_sort, no init
 * plans), the scan is made whole (braid_serial_seqscan), the Sort becomes
 * the sort of every row (whole_sort), and sort_plan.c takes or declines
 * that Sort as any other, weighed against the parallel plan: PostgreSQL's,
 * and a BraidSort in each process (braid_sort_each_estimate).  See
 * docs/design.md, "A Gather Merge replaced by one sort".
 *
 * src/plan/gather_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"

#include "compat.h"
#include "core/costmodel.h"
#include "guc.h"
#include "plan/gather_plan.h"
#include "plan/heapinput.h"
#include "plan/permissions.h"
#include "plan/plancost.h"
#include "plan/sort_plan.h"

/*
 * A planner cost unit of CPU, in ns: cpu_tuple_cost (0.01) stands for a
 * tuple of a sequential scan, ~50 ns measured on a cached table (the
 * sortbenchmark's 5M rows of 110 bytes), ~85 ns in the cost model's units
 * (1.6-2.0x the measured, see "The model's scale" in core/costmodel.c),
 * beside whose estimates it is weighed.  Used only to weigh a scan read
 * whole in one process against the same scan in parallel
 * (braid_try_gather_sort).
 */
#define BRAID_NS_PER_CPU_COST_UNIT 8500.0

/*
 * gather_passes_sort
 *		Does the Gather Merge return its Sort's rows as they are, in the
 *		Sort's order?  (Its target list is the Sort's, column for column, and
 *		its keys are the Sort's.)  A column may be the Sort's own constant:
 *		a column the query above does not read (count(*) over an ordered
 *		subquery) is a typed NULL in the scan's target list, and both the
 *		Sort (set_dummy_tlist_references) and the Gather Merge keep such a
 *		Const as a Const, not a Var pointing at it.  Then one sort in its place
 *		returns what it did.
 */
static bool
gather_passes_sort(GatherMerge *gm, Sort *sort)
{
	ListCell   *lc;

	if (list_length(gm->plan.targetlist) != list_length(sort->plan.targetlist) ||
		gm->plan.qual != NIL || gm->numCols != sort->numCols)
		return false;
	foreach(lc, gm->plan.targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;

		if (IsA(tle->expr, Const))
		{
			TargetEntry *below = get_tle_by_resno(sort->plan.targetlist, tle->resno);

			if (below == NULL || !equal(below->expr, tle->expr))
				return false;
			continue;
		}
		if (!IsA(var, Var) || var->varno != OUTER_VAR || var->varattno != tle->resno)
			return false;
	}
	for (int i = 0; i < sort->numCols; i++)
		if (gm->sortColIdx[i] != sort->sortColIdx[i] ||
			gm->sortOperators[i] != sort->sortOperators[i] ||
			gm->collations[i] != sort->collations[i] ||
			gm->nullsFirst[i] != sort->nullsFirst[i])
			return false;
	return true;
}

/*
 * without_param
 *		A copy of a parameter set without the Gather Merge's rescan
 *		parameter (-1: none), which every parallel-aware scan below it
 *		lists and nothing sets once the Gather Merge is gone.
 */
static Bitmapset *
without_param(Bitmapset *params, int param)
{
	params = bms_copy(params);
	return param >= 0 ? bms_del_member(params, param) : params;
}

/*
 * gather_total_rows
 *		The rows all of a Gather Merge's processes return together: one
 *		process's share (its Sort's estimate) times the parallel divisor,
 *		as the planner divided them (get_parallel_divisor: each worker, and
 *		the leader less 0.3 for each worker it collects from).  The Gather
 *		Merge's own estimate is that only from PostgreSQL 18 on: before, it
 *		counts the workers' shares alone.
 */
static double
gather_total_rows(GatherMerge *gm, Sort *sort)
{
	return clamp_row_est(Max(sort->plan.plan_rows * braid_parallel_divisor(gm->num_workers),
							 gm->plan.plan_rows));
}

/*
 * whole_sort
 *		The Sort of one process's share made the sort of every row the
 *		Gather Merge collects, over the scan read whole ("serial"): its
 *		rows the Gather Merge's, its own cost scaled from the share's by n
 *		log n, and its target list labelled as the Gather Merge's.  Only the
 *		top node of a query level has its columns' names and resjunk marks
 *		(apply_tlist_labeling), and a whole-row reference to a subquery's
 *		row leaves out the columns its top node marks resjunk (an ORDER BY
 *		column not selected): the sort in the Gather Merge's place takes
 *		over its labels.
 */
static Sort *
whole_sort(Sort *sort, Plan *serial, GatherMerge *gm, double total_rows)
{
	Sort	   *whole = makeNode(Sort);
	double		n = Max(sort->plan.plan_rows, 2.0);
	double		all = Max(total_rows, n);
	double		own = Max(sort->plan.startup_cost - outerPlan(sort)->total_cost, 0.0);
	List	   *tlist = NIL;
	ListCell   *lc,
			   *glc;

	forboth(lc, sort->plan.targetlist, glc, gm->plan.targetlist)
	{
		TargetEntry *tle = flatCopyTargetEntry(lfirst_node(TargetEntry, lc));
		TargetEntry *label = lfirst_node(TargetEntry, glc);

		tle->resname = label->resname;
		tle->ressortgroupref = label->ressortgroupref;
		tle->resorigtbl = label->resorigtbl;
		tle->resorigcol = label->resorigcol;
		tle->resjunk = label->resjunk;
		tlist = lappend(tlist, tle);
	}

	memcpy(whole, sort, sizeof(Sort));
	whole->plan.targetlist = tlist;
	whole->plan.lefttree = serial;
	whole->plan.plan_rows = serial->plan_rows;
	whole->plan.parallel_aware = false;
	/* (what is above a Gather Merge is not sent to workers, nor is it) */
	whole->plan.parallel_safe = gm->plan.parallel_safe;
	whole->plan.extParam = without_param(sort->plan.extParam, gm->rescan_param);
	whole->plan.allParam = without_param(sort->plan.allParam, gm->rescan_param);
	whole->plan.startup_cost = serial->total_cost + own * (all * log2(all)) / (n * log2(n));
	whole->plan.total_cost = whole->plan.startup_cost +
		(sort->plan.total_cost - sort->plan.startup_cost) * all / n;
	return whole;
}

/*
 * shared_gather
 *		A Gather in the Gather Merge's place over "braid", the shared sort
 *		every process builds and one merges (sort/sort_shared.c): the same
 *		workers, target list, parameters and node id, and every process's
 *		rows (total_rows).  Its rows come from that one process alone, in
 *		order.
 */
static Plan *
shared_gather(GatherMerge *gm, Plan *braid, double total_rows)
{
	Gather	   *g = makeNode(Gather);

	g->plan.startup_cost = braid->startup_cost;
	g->plan.total_cost = Max(gm->plan.total_cost, braid->total_cost);
	g->plan.plan_rows = total_rows;
	g->plan.plan_width = gm->plan.plan_width;
	BRAID_COPY_DISABLED_NODES(&g->plan, &gm->plan);
	g->plan.parallel_aware = false;
	g->plan.parallel_safe = false;
	g->plan.async_capable = false;
	g->plan.plan_node_id = gm->plan.plan_node_id;
	g->plan.targetlist = gm->plan.targetlist;
	g->plan.qual = NIL;
	g->plan.initPlan = NIL;
	g->plan.extParam = bms_copy(gm->plan.extParam);
	g->plan.allParam = bms_copy(gm->plan.allParam);
	g->plan.lefttree = braid;
	g->num_workers = gm->num_workers;
	g->rescan_param = gm->rescan_param;
	g->single_copy = false;
	g->invisible = false;
	g->initParam = NULL;
	return (Plan *) g;
}

/*
 * braid_try_gather_sort
 *		Return one BraidSort replacing a Gather Merge over each process's
 *		Sort of a Parallel Seq Scan, or NULL (with *why) to leave it: the
 *		walk then offers each process's Sort as usual.  "processes" is how
 *		many processes run the Gather Merge's plan.
 *
 *		Under a Gather Merge each process sorts its share on its share of
 *		the CPUs, and the leader merges their outputs a row at a time
 *		through tuple queues: measured on the sortbenchmark, that merge took
 *		more time than braidsort's whole sort.  One BraidSort sorts the
 *		IndexMap of every row once with all the CPUs' threads and gathers
 *		in order, with no merge; what it gives up is the scan read in
 *		parallel.  The scan is the same table's, filter and target list
 *		(braid_serial_seqscan), and the sort the same keys, so it returns
 *		the same rows in the same order; it is then taken or declined as
 *		any Sort (its form, its keys, the device's room), weighed against
 *		the parallel plan (weigh_one_sort).
 */
Plan *
braid_try_gather_sort(PlannedStmt *stmt, GatherMerge *gm, int processes, char **why)
{
	Sort	   *sort = (Sort *) outerPlan(gm);
	Plan	   *scan;
	Plan	   *serial;
	BraidOneSortInput one;
	double		scan_cpu = 0;
	bool		shared;
	double		shared_ns = 0;
	double		pg_ns = 0;
	Sort	   *whole_plan;
	Plan	   *whole;
	Plan	   *braid;
	char	   *shared_why = NULL;

	if (braid_parallel_sort == BRAID_PARALLEL_SORT_EACH)
	{
		*why = "braidsort.parallel_sort is each";
		return NULL;
	}
	if (sort == NULL || !IsA(sort, Sort))
	{
		*why = "its input is not a Sort";
		return NULL;
	}
	scan = outerPlan(sort);
	if (scan == NULL || !IsA(scan, SeqScan) || !scan->parallel_aware)
	{
		*why = "its Sort's input is not a Parallel Seq Scan";
		return NULL;
	}
	if (gm->plan.initPlan != NIL || sort->plan.initPlan != NIL ||
		!bms_is_empty(gm->initParam))
	{
		*why = "it evaluates init plans";
		return NULL;
	}
	if (!gather_passes_sort(gm, sort))
	{
		*why = "its output is not its Sort's";
		return NULL;
	}
	one.total_rows = gather_total_rows(gm, sort);
	serial = braid_serial_seqscan(stmt, scan, one.total_rows, &scan_cpu);
	if (serial == NULL)
	{
		*why = "its Sort's input is not a plain Parallel Seq Scan";
		return NULL;
	}
	serial->extParam = without_param(serial->extParam, gm->rescan_param);
	serial->allParam = without_param(serial->allParam, gm->rescan_param);

	/*
	 * braidsort.parallel_sort = shared: each process builds its share of one
	 * sort, which one of them merges, where braidsort would take each
	 * process's Sort
	 */
	if (braid_parallel_sort == BRAID_PARALLEL_SORT_SHARED)
	{
		braid = braid_try_shared_sort(stmt, sort, processes, false, one.total_rows, why);
		return braid != NULL ? shared_gather(gm, braid, one.total_rows) : NULL;
	}

	/* each process's sort of its share, as the walk would cost it */
	if (!braid_sort_each_estimate(stmt, sort, processes, &one, why))
		return NULL;
	one.scan_ns = scan_cpu * BRAID_NS_PER_CPU_COST_UNIT;
	one.workers = gm->num_workers;

	/*
	 * A shared sort, where braidsort would take it (a MergePass: not under a
	 * sort_mode naming a write-limited mode)
	 */
	shared = braid_parallel_sort == BRAID_PARALLEL_SORT_AUTO &&
		(braid_sort_mode == BRAID_SORT_MODE_AUTO || braid_sort_mode == BRAID_SORT_MODE_MERGEPASS) &&
		braid_cost_shared_sort(&one.each, &one.each_est, one.each_taken, one.total_rows,
							   &shared_ns, &pg_ns);
	one.shared_ns = shared ? shared_ns : HUGE_VAL;

	/* one sort, if it beats the parallel plans */
	whole_plan = whole_sort(sort, serial, gm, one.total_rows);
	whole = braid_try_one_sort(stmt, whole_plan, &one, why);
	if (whole != NULL || !shared)
		return whole;

	/* else the shared sort */
	braid = braid_try_shared_sort(stmt, sort, processes, true, one.total_rows, &shared_why);
	if (braid != NULL)
	{
		BRAID_PLAN_DEBUG("braidsort: Gather Merge replaced by a Gather over a shared sort: braidsort %s ms, PostgreSQL's parallel plan %s ms estimated for %.0f rows",
						 braid_ms_text(shared_ns / 1e6), braid_ms_text(pg_ns / 1e6),
						 one.total_rows);
		return shared_gather(gm, braid, one.total_rows);
	}

	/* which it could not be (the device's room): one sort, weighed without it */
	BRAID_PLAN_DEBUG("braidsort: no shared sort: %s", shared_why);
	one.shared_ns = HUGE_VAL;
	return braid_try_one_sort(stmt, whole_plan, &one, why);
}
