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
 * (execMain.c) alone: relation privileges, then column privileges for
 * SELECT, INSERT and UPDATE.
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
 * rte_permitted
 *		Whether the role may do what the statement asks of a range table
 *		entry: every privilege it requires, each from the relation's
 *		privileges or else its columns'.
 */
static bool
rte_permitted(RangeTblEntry *rte)
{
	AclMode		remaining;
	Oid			userid;

	if (rte->rtekind != RTE_RELATION || rte->requiredPerms == 0)
		return true;
	userid = OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
	remaining = rte->requiredPerms &
		~pg_class_aclmask(rte->relid, userid, rte->requiredPerms, ACLMASK_ALL);
	if (remaining == 0)
		return true;
	/* privileges that exist only on relations */
	if (remaining & ~(ACL_SELECT | ACL_INSERT | ACL_UPDATE))
		return false;
	if ((remaining & ACL_SELECT) &&
		!columns_permitted(rte->relid, userid, rte->selectedCols, ACL_SELECT))
		return false;
	if ((remaining & ACL_INSERT) &&
		!columns_permitted(rte->relid, userid, rte->insertedCols, ACL_INSERT))
		return false;
	if ((remaining & ACL_UPDATE) &&
		!columns_permitted(rte->relid, userid, rte->updatedCols, ACL_UPDATE))
		return false;
	return true;
}

/*
 * braid_rtable_permitted
 *		Whether the current role may run a statement over this range table,
 *		as the executor will check it (less ExecutorCheckPerms_hook: see the
 *		file header).  With ereport_on_violation, a refusal is the
 *		executor's error instead of false.
 */
bool
braid_rtable_permitted(List *rtable, bool ereport_on_violation)
{
	ListCell   *lc;

	foreach(lc, rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte_permitted(rte))
			continue;
		if (ereport_on_violation)
			aclcheck_error(ACLCHECK_NO_PRIV,
						   get_relkind_objtype(get_rel_relkind(rte->relid)),
						   get_rel_name(rte->relid));
		return false;
	}
	return true;
}
