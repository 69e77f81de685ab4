/*-------------------------------------------------------------------------
 *
 * permissions.h
 *	  What the current role may see of a planned statement (permissions.c).
 *
 * src/plan/permissions.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PERMISSIONS_H
#define BRAID_PERMISSIONS_H

#include "nodes/plannodes.h"

extern bool braid_stmt_permitted(PlannedStmt *stmt, bool ereport_on_violation);

/* the statement being planned has tables the role may not read */
extern bool braid_plan_messages_hidden;

/*
 * BRAID_PLAN_DEBUG
 *		The planner's DEBUG1 account of what it did with a Sort or a Hash
 *		Join.  Its estimates come from the tables' statistics, which a role
 *		may not read (pg_stats hides them): for a statement with a table the
 *		role may not read, which the executor refuses only after planning,
 *		nothing is said (braid_plan_messages_hidden, set by the planner hook).
 */
#define BRAID_PLAN_DEBUG(...) \
	do { \
		if (!braid_plan_messages_hidden) \
			elog(DEBUG1, __VA_ARGS__); \
	} while (0)

/*
 * BRAID_PLAN_DECLINE
 *		The same for a Sort or a Hash Join left to PostgreSQL, at the level
 *		braidsort.log_declines asks for (braid_decline_level: DEBUG1,
 *		NOTICE or LOG), under the same rule.
 */
#define BRAID_PLAN_DECLINE(...) \
	do { \
		if (!braid_plan_messages_hidden) \
			elog(braid_decline_level(), __VA_ARGS__); \
	} while (0)

#endif							/* BRAID_PERMISSIONS_H */
