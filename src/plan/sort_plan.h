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

#include "monitor/stats.h"

extern Plan *braid_try_sort(PlannedStmt *stmt, Sort *sort, int processes, char **why,
							BraidDecline *kind);
extern Plan *braid_try_gather_sort(PlannedStmt *stmt, GatherMerge *gm, int processes,
								   char **why);

#endif							/* BRAID_SORT_PLAN_H */
