/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  One source tree for PostgreSQL 15 to 18: what changed between the
 *	  majors, behind PG_VERSION_NUM guards, as citus's
 *	  pg_version_compat.h and hypopg do.
 *
 * Each guard names the major that changed the interface; code that uses
 * these reads as written for the newest major where it can.  Majors after
 * 15 that Debian ships (17, 18) are built and tested; 16, which no Debian
 * release ships, takes the guards 17 and 18 take, and is neither built nor
 * tested here (docs/design.md).
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_COMPAT_H
#define BRAID_COMPAT_H

#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_tablespace_d.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

#if PG_VERSION_NUM >= 160000
#include "common/file_utils.h"	/* PG_TEMP_FILE_PREFIX, PG_TEMP_FILES_DIR */
#include "parser/parse_relation.h"
#else
#include "storage/fd.h"
#endif

#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#endif

#if PG_VERSION_NUM >= 180000
#include "access/cmptype.h"
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#else
#include "access/stratnum.h"
#include "commands/explain.h"
#endif

/*
 * 16: pg_tablespace_aclcheck() became object_aclcheck() on the tablespace
 * catalog.
 */
static inline AclResult
braid_tablespace_aclcheck(Oid spcoid, Oid roleid, AclMode mode)
{
#if PG_VERSION_NUM >= 160000
	return object_aclcheck(TableSpaceRelationId, spcoid, roleid, mode);
#else
	return pg_tablespace_aclcheck(spcoid, roleid, mode);
#endif
}

/*
 * 16: a relation's physical identity is its RelFileLocator (rd_locator),
 * which ReadRecentBuffer() takes.
 */
#if PG_VERSION_NUM >= 160000
#define BRAID_REL_FILE(rel)		((rel)->rd_locator)
#else
#define BRAID_REL_FILE(rel)		((rel)->rd_node)
#endif

/*
 * 16: cumulative statistics count changes since the last ANALYZE as
 * mod_since_analyze.
 */
#if PG_VERSION_NUM >= 160000
#define BRAID_TAB_CHANGES(tabentry)	((tabentry)->mod_since_analyze)
#else
#define BRAID_TAB_CHANGES(tabentry)	((tabentry)->changes_since_analyze)
#endif

/*
 * 17: backends are numbered from 0 by ProcNumber (MyProcNumber); before,
 * from 1 by BackendId (MyBackendId).  braid_backend_index() is this
 * backend's number from 0, or -1 when it has none below MaxBackends.
 */
static inline int
braid_backend_index(void)
{
#if PG_VERSION_NUM >= 170000
	if (MyProcNumber == INVALID_PROC_NUMBER || MyProcNumber < 0 ||
		MyProcNumber >= MaxBackends)
		return -1;
	return (int) MyProcNumber;
#else
	if (MyBackendId == InvalidBackendId || MyBackendId < 1 || MyBackendId > MaxBackends)
		return -1;
	return (int) MyBackendId - 1;
#endif
}

/*
 * 18: lc_collate_is_c() is gone: whether a collation sorts by memcmp() is
 * its pg_locale_t's collate_is_c.
 */
static inline bool
braid_collation_is_c(Oid collation)
{
#if PG_VERSION_NUM >= 180000
	return pg_newlocale_from_collation(collation)->collate_is_c;
#else
	return lc_collate_is_c(collation);
#endif
}

/*
 * 18: icu_to_uchar() is no longer exported: an ICU key of a database whose
 * encoding is not UTF-8 (converted to UTF-16 first) has no encoder there.
 */
#if PG_VERSION_NUM >= 180000
#define BRAID_ICU_ANY_ENCODING	false
#else
#define BRAID_ICU_ANY_ENCODING	true
#endif

/* 17: a backend's local transaction id is in its PGPROC's vxid. */
#if PG_VERSION_NUM >= 170000
#define BRAID_MY_LXID	(MyProc->vxid.lxid)
#else
#define BRAID_MY_LXID	(MyProc->lxid)
#endif

/* 17: old_snapshot_threshold (and early pruning) is gone. */
#if PG_VERSION_NUM >= 170000
#define BRAID_OLD_SNAPSHOT_THRESHOLD_SET	false
#else
#define BRAID_OLD_SNAPSHOT_THRESHOLD_SET	(old_snapshot_threshold >= 0)
#endif

/*
 * 17: a column's statistics target is a nullable catalog column, no longer
 * in the tuple descriptor's fixed part.  -1 (or NULL): the default.
 */
static inline int
braid_attstattarget(Relation rel, AttrNumber attnum)
{
#if PG_VERSION_NUM >= 170000
	HeapTuple	tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(RelationGetRelid(rel)),
									  Int16GetDatum(attnum));
	int			target = -1;

	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = SysCacheGetAttr(ATTNUM, tup, Anum_pg_attribute_attstattarget,
										&isnull);

		if (!isnull)
			target = DatumGetInt16(d);
		ReleaseSysCache(tup);
	}
	return target;
#else
	return TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attstattarget;
#endif
}

/*
 * 18: an ordering operator's direction is a CompareType (COMPARE_GT for
 * ">"), no longer a btree strategy number.
 */
#if PG_VERSION_NUM >= 180000
typedef CompareType BraidOrderDirection;
#define BRAID_ORDER_GREATER		COMPARE_GT
#else
typedef int16 BraidOrderDirection;
#define BRAID_ORDER_GREATER		BTGreaterStrategyNumber
#endif

/* 18: a minimal tuple may be made with extra room after it (none here). */
#if PG_VERSION_NUM >= 180000
#define braid_minimal_tuple_from_heap_tuple(htup) minimal_tuple_from_heap_tuple(htup, 0)
#else
#define braid_minimal_tuple_from_heap_tuple(htup) minimal_tuple_from_heap_tuple(htup)
#endif

/*
 * 16: a range table entry's permissions are in the statement's
 * RTEPermissionInfo list.  braid_rte_perm_user() is the role whose
 * privileges a scan of the relation entry rte is checked with.
 */
static inline Oid
braid_rte_perm_user(PlannedStmt *stmt, RangeTblEntry *rte)
{
#if PG_VERSION_NUM >= 160000
	RTEPermissionInfo *perm;

	if (rte->perminfoindex == 0)
		return GetUserId();
	perm = getRTEPermissionInfo(stmt->permInfos, rte);
	return OidIsValid(perm->checkAsUser) ? perm->checkAsUser : GetUserId();
#else
	return OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
#endif
}

/*
 * 18: EXPLAIN qualifies column names when the range table has more than
 * one entry not counting the GROUP BY entry 18 added (rtable_size).
 */
#if PG_VERSION_NUM >= 180000
#define BRAID_EXPLAIN_RTABLE_SIZE(es)	((es)->rtable_size)
#else
#define BRAID_EXPLAIN_RTABLE_SIZE(es)	list_length((es)->rtable)
#endif

/*
 * 18: a plan node counts the disabled nodes in its subtree, itself
 * included (enable_sort = off and the like); a node put in another's place
 * takes its count over, so that EXPLAIN and the planner above see it.
 */
#if PG_VERSION_NUM >= 180000
#define BRAID_COPY_DISABLED_NODES(dst, src) \
	((dst)->disabled_nodes = (src)->disabled_nodes)
#else
#define BRAID_COPY_DISABLED_NODES(dst, src) ((void) 0)
#endif

/*
 * 17: an extension's waits can have names of their own, which
 * pg_stat_activity.wait_event shows (type Extension).  The name is
 * registered in shared memory the first time a process asks for it and
 * kept in *cache; before 17 every wait is just "Extension".
 */
static inline uint32
braid_wait_event(const char *name, uint32 *cache)
{
#if PG_VERSION_NUM >= 170000
	if (*cache == 0)
		*cache = WaitEventExtensionNew(name);
	return *cache;
#else
	(void) name;
	(void) cache;
	return PG_WAIT_EXTENSION;
#endif
}

#endif							/* BRAID_COMPAT_H */
