/*-------------------------------------------------------------------------
 *
 * gather_plan.h
 *	  A Gather Merge replaced by one BraidSort (gather_plan.c).
 *
 * src/plan/gather_plan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_GATHER_PLAN_H
#define BRAID_GATHER_PLAN_H

#include "nodes/plannodes.h"

extern Plan *braid_try_gather_sort(PlannedStmt *stmt, GatherMerge *gm, int processes,
								   char **why);

#endif							/* BRAID_GATHER_PLAN_H */
