/*-------------------------------------------------------------------------
 *
 * sort_plan.h
 *	  A Sort replaced by a BraidSort (sort_plan.c).
 *
 * src/plan/sort_plan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SORT_PLAN_H
#define BRAID_SORT_PLAN_H

#include "nodes/plannodes.h"

#include "core/costmodel.h"
#include "monitor/stats.h"

/*
 * What the single sort replacing a Gather Merge is weighed against: one
 * process's sort of its share, as the walk would cost it, whether braidsort
 * would take that, what reading the whole scan costs one process, and the
 * Gather Merge's planned workers.
 */
typedef struct BraidOneSortInput
{
	BraidCostInput each;
	BraidCostEstimate each_est;
	bool		each_taken;
	double		total_rows;
	double		scan_ns;
	double		shared_ns;		/* a shared sort's estimate where braidsort
								 * would take it, else HUGE_VAL */
	int			workers;
} BraidOneSortInput;

extern Plan *braid_try_sort(PlannedStmt *stmt, Sort *sort, int processes, char **why,
							BraidDecline *kind);
extern bool braid_sort_each_estimate(PlannedStmt *stmt, Sort *sort, int processes,
									 BraidOneSortInput *one, char **why);
extern Plan *braid_try_one_sort(PlannedStmt *stmt, Sort *whole, const BraidOneSortInput *one,
								char **why);
extern Plan *braid_try_shared_sort(PlannedStmt *stmt, Sort *sort, int processes, bool weighed,
								   double total_rows, char **why);

#endif							/* BRAID_SORT_PLAN_H */
