/*-------------------------------------------------------------------------
 *
 * permissions.c
 *	  Whether the current role may run a planned statement: the executor's
 *	  permission check on its range table, without the executor's hook.
 *
 * The planner's DEBUG1 messages carry estimates from tables' statistics,
 * which a role that may not read a table must not see (pg_stats hides
 * them), and braidsort.sort_modes() and join_modes() plan a query without
 * running it, as EXPLAIN does.  Both must know, before any executor
 * starts, what ExecutorStart would decide.  ExecCheckRTPerms() would also
 * call ExecutorCheckPerms_hook, whose owners (pgaudit, sepgsql) expect to
 * be inside an executor they started: pgaudit writes through the state
 * its ExecutorStart hook pushes, which does not exist while a top-level
 * statement is planned.  So this is ExecCheckRTEPerms() of PostgreSQL 15
 * (ExecCheckOneRelPerms() since 16, execMain.c) alone: relation
 * privileges, then column privileges for SELECT, INSERT and UPDATE.
 *
 * src/plan/permissions.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "catalog/objectaddress.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "nodes/parsenodes.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "plan/permissions.h"

/* the statement being planned has tables the role may not read */
bool		braid_plan_messages_hidden = false;

/*
 * columns_permitted
 *		The column-level check of one privilege over the columns a statement
 *		names (as ExecCheckRTEPerms and ExecCheckRTEPermsModified): with no
 *		column named, the privilege on any column; a whole-row reference
 *		needs it on every column.
 */
static bool
columns_permitted(Oid relid, Oid userid, Bitmapset *cols, AclMode mode)
{
	int			col = -1;

	if (bms_is_empty(cols))
		return pg_attribute_aclcheck_all(relid, userid, mode, ACLMASK_ANY) == ACLCHECK_OK;
	while ((col = bms_next_member(cols, col)) >= 0)
	{
		/* bit numbers are offset by FirstLowInvalidHeapAttributeNumber */
		AttrNumber	attno = col + FirstLowInvalidHeapAttributeNumber;

		if (attno == InvalidAttrNumber)
		{
			if (pg_attribute_aclcheck_all(relid, userid, mode, ACLMASK_ALL) != ACLCHECK_OK)
				return false;
		}
		else if (pg_attribute_aclcheck(relid, attno, userid, mode) != ACLCHECK_OK)
			return false;
	}
	return true;
}

/*
 * relation_permitted
 *		Whether the role may do what the statement asks of a relation it
 *		names: every privilege required, each from the relation's
 *		privileges or else its columns' (checkAsUser: the role to check,
 *		or InvalidOid for the current one).
 */
static bool
relation_permitted(Oid relid, AclMode required, Oid checkAsUser, Bitmapset *selected,
				   Bitmapset *inserted, Bitmapset *updated)
{
	AclMode		remaining;
	Oid			userid;

	if (required == 0)
		return true;
	userid = OidIsValid(checkAsUser) ? checkAsUser : GetUserId();
	remaining = required & ~pg_class_aclmask(relid, userid, required, ACLMASK_ALL);
	if (remaining == 0)
		return true;
	/* privileges that exist only on relations */
	if (remaining & ~(ACL_SELECT | ACL_INSERT | ACL_UPDATE))
		return false;
	if ((remaining & ACL_SELECT) && !columns_permitted(relid, userid, selected, ACL_SELECT))
		return false;
	if ((remaining & ACL_INSERT) && !columns_permitted(relid, userid, inserted, ACL_INSERT))
		return false;
	if ((remaining & ACL_UPDATE) && !columns_permitted(relid, userid, updated, ACL_UPDATE))
		return false;
	return true;
}

/* refuse: the executor's error for relation relid, or false. */
static bool
refuse(Oid relid, bool ereport_on_violation)
{
	if (ereport_on_violation)
		aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));
	return false;
}

/*
 * braid_stmt_permitted
 *		Whether the current role may run a planned statement, as the
 *		executor will check it (less ExecutorCheckPerms_hook: see the file
 *		header): the permissions of each relation the statement names, in
 *		its RTEPermissionInfo list since PostgreSQL 16, in its range table
 *		before.  With ereport_on_violation, a refusal is the executor's
 *		error instead of false.
 */
bool
braid_stmt_permitted(PlannedStmt *stmt, bool ereport_on_violation)
{
	ListCell   *lc;

#if PG_VERSION_NUM >= 160000
	foreach(lc, stmt->permInfos)
	{
		RTEPermissionInfo *perm = lfirst_node(RTEPermissionInfo, lc);

		if (!relation_permitted(perm->relid, perm->requiredPerms, perm->checkAsUser,
								perm->selectedCols, perm->insertedCols, perm->updatedCols))
			return refuse(perm->relid, ereport_on_violation);
	}
#else
	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind == RTE_RELATION &&
			!relation_permitted(rte->relid, rte->requiredPerms, rte->checkAsUser,
								rte->selectedCols, rte->insertedCols, rte->updatedCols))
			return refuse(rte->relid, ereport_on_violation);
	}
#endif
	return true;
}
