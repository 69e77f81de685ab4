/*-------------------------------------------------------------------------
 *
 * join_plan.h
 *	  A Hash Join replaced by a BraidJoin (join_plan.c).
 *
 * src/plan/join_plan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_JOIN_PLAN_H
#define BRAID_JOIN_PLAN_H

#include "postgres.h"

#include "nodes/plannodes.h"

extern Plan *braid_try_join(PlannedStmt *stmt, HashJoin *hj, int processes, char **why,
							bool *fits);

#endif							/* BRAID_JOIN_PLAN_H */
