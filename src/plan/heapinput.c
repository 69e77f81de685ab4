/*-------------------------------------------------------------------------
 *
 * heapinput.c
 *	  Inputs braidsort may read again: rows refetched by heap TID at gather
 *	  time (braid_heap_tid_input), or a scan rescanned for the same rows
 *	  (braid_heap_rescannable); and a parallel scan read whole.
 *
 * A refetch must find the row the scan read, with the same values: the
 * scan's output is evaluated again on the refetched tuple, so it may call
 * only immutable functions and read no header field that later lockers
 * and updaters overwrite in place.  A rescan must pass the same rows: a
 * plain, serial sequential scan with the same snapshot and start block.
 * The sort (plan/sort_plan.c) and BraidJoin (plan/join_plan.c) both ask.
 * Both also read a Parallel Seq Scan whole in one process
 * (braid_serial_seqscan): a Parallel Hash's inner input, and a Gather
 * Merge's sorted input replaced by one sort.
 *
 * src/plan/heapinput.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/catalog.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/spccache.h"

#include "compat.h"
#include "plan/heapinput.h"
#include "plan/plancost.h"

/*
 * changing_system_column_walker
 *		Does an expression read a system column that a row version's later
 *		lockers and updaters overwrite in place (xmax, cmin, cmax)?  Read
 *		again at gather time, it would show their values, not the scan's.
 */
static bool
changing_system_column_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		AttrNumber	attno = ((Var *) node)->varattno;

		return attno == MaxTransactionIdAttributeNumber ||
			attno == MinCommandIdAttributeNumber ||
			attno == MaxCommandIdAttributeNumber;
	}
	return expression_tree_walker(node, changing_system_column_walker, context);
}

/*
 * braid_reads_changing_header
 *		Does an expression (a target list, a qual) read xmax, cmin or cmax,
 *		which may differ when it is evaluated again on the same row?
 */
bool
braid_reads_changing_header(Node *node)
{
	return changing_system_column_walker(node, NULL);
}

/*
 * braid_scanned_table
 *		The table a sequential, index (without ORDER BY operators) or bitmap
 *		heap scan reads, if it is a plain table or a materialized view; else
 *		InvalidOid, and *why says why.  The first, cheap questions of
 *		braid_heap_tid_input().
 */
Oid
braid_scanned_table(PlannedStmt *stmt, Plan *child, char **why)
{
	RangeTblEntry *rte;

	if (!IsA(child, SeqScan) && !IsA(child, BitmapHeapScan) &&
		!(IsA(child, IndexScan) && ((IndexScan *) child)->indexorderby == NIL))
	{
		*why = "input is not a sequential, index or bitmap heap scan";
		return InvalidOid;
	}
	rte = rt_fetch(((Scan *) child)->scanrelid, stmt->rtable);
	if (rte->rtekind != RTE_RELATION ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
	{
		*why = "input is not a plain table";
		return InvalidOid;
	}
	return rte->relid;
}

/*
 * braid_heap_tid_input
 *		Can the Sort's input be refetched by heap TID?  True for a sequential,
 *		index or bitmap heap scan of a heap table whose output calls only
 *		immutable functions and has no subplans (it is evaluated again at
 *		gather time: a stable function's value may have changed since the
 *		scan, in a cursor after set_config() or SET ROLE), reads
 *		no system column that changes in place, and that is not a system
 *		catalog (VACUUM, ANALYZE and CREATE INDEX overwrite catalog rows in
 *		place, heap_inplace_update: the row refetched would not be the row
 *		scanned, out of order by its new values).  Sets
 *		*relid, and unless table_pages is NULL *table_pages and
 *		*table_cached (the table takes at most half of shared buffers, or
 *		for a temporary table of temp_buffers); otherwise *why says why
 *		not.
 */
bool
braid_heap_tid_input(PlannedStmt *stmt, Plan *child, Oid *relid, double *table_pages,
					 bool *table_cached, char **why)
{
	RangeTblEntry *rte;
	Relation	rel;
	bool		is_heap;

	if (!OidIsValid(braid_scanned_table(stmt, child, why)))
		return false;
	rte = rt_fetch(((Scan *) child)->scanrelid, stmt->rtable);
	if (contain_mutable_functions((Node *) child->targetlist))
	{
		*why = "output calls functions that are not immutable";
		return false;
	}
	if (contain_subplans((Node *) child->targetlist))
	{
		*why = "output has subplans";
		return false;
	}
	if (braid_reads_changing_header((Node *) child->targetlist))
	{
		*why = "output reads xmax, cmin or cmax, which later lockers and updaters overwrite";
		return false;
	}
	if (BRAID_OLD_SNAPSHOT_THRESHOLD_SET)
	{
		/* early pruning may free a line pointer the snapshot still sees */
		*why = "old_snapshot_threshold is set";
		return false;
	}
	if (IsCatalogRelationOid(rte->relid))
	{
		*why = "input is a system catalog, whose rows are overwritten in place";
		return false;
	}
	rel = table_open(rte->relid, NoLock);
	is_heap = (rel->rd_rel->relam == HEAP_TABLE_AM_OID);
	if (table_pages != NULL)
	{
		*table_pages = (double) RelationGetNumberOfBlocks(rel);
		*table_cached = braid_table_cached(rel, *table_pages);
	}
	table_close(rel, NoLock);
	if (!is_heap)
	{
		*why = "table does not use the heap access method";
		return false;
	}
	*relid = rte->relid;
	return true;
}

/*
 * braid_heap_rescannable
 *		Whether rescanning a heap scan gives the same rows again: a plain,
 *		serial scan calling only immutable functions (a stable one's value
 *		may change between the passes: current_setting() after set_config()
 *		in a cursor, current_user in a row security policy after SET ROLE)
 *		without subplans (whose volatility this cannot see), whose filter
 *		reads no xmax, cmin or cmax (a locker between the passes would
 *		change what it passes).
 */
bool
braid_heap_rescannable(Plan *child)
{
	return IsA(child, SeqScan) && !child->parallel_aware &&
		!braid_reads_changing_header((Node *) child->qual) &&
		!contain_mutable_functions((Node *) child->qual) &&
		!contain_mutable_functions((Node *) child->targetlist) &&
		!contain_subplans((Node *) child->qual) &&
		!contain_subplans((Node *) child->targetlist);
}

/*
 * braid_serial_seqscan
 *		A Parallel Seq Scan made whole: a Seq Scan of the same table, its
 *		filter and its target list, expected to return whole_rows (all the
 *		processes' rows together: the parallel scan's own estimate is one
 *		process's share).  Every process of a parallel scan sees the same
 *		snapshot, so the whole scan returns the rows the shares did
 *		together.  NULL for any other input (a scan with init plans or
 *		children).
 *
 *		Its cost is the whole scan's: cost_seqscan divides a parallel scan's
 *		CPU part by the processes' share, as its rows, but not its disk part
 *		(every page is read once in all), so the CPU part is scaled back by
 *		the rows' ratio (whole_rows is the share's rows, rounded, times the
 *		divisor: the ratio is the divisor) and the disk part kept (the
 *		table's blocks now: the planner's figure may differ for a table
 *		never vacuumed nor analyzed).  *cpu_cost, if given, is set to the
 *		whole scan's CPU part, in the planner's cost units.
 */
Plan *
braid_serial_seqscan(PlannedStmt *stmt, Plan *parallel_scan, double whole_rows,
					 double *cpu_cost)
{
	SeqScan    *scan;
	RangeTblEntry *rte;
	Relation	rel;
	double		disk_cost;
	double		share_cpu;
	double		spc_seq_page_cost;

	if (!IsA(parallel_scan, SeqScan) || !parallel_scan->parallel_aware ||
		parallel_scan->lefttree != NULL || parallel_scan->righttree != NULL ||
		parallel_scan->initPlan != NIL)
		return NULL;
	scan = makeNode(SeqScan);
	memcpy(scan, parallel_scan, sizeof(SeqScan));
	scan->scan.plan.parallel_aware = false;
	whole_rows = Max(whole_rows, parallel_scan->plan_rows);
	scan->scan.plan.plan_rows = clamp_row_est(whole_rows);

	rte = rt_fetch(scan->scan.scanrelid, stmt->rtable);
	rel = table_open(rte->relid, NoLock);
	get_tablespace_page_costs(rel->rd_rel->reltablespace, NULL, &spc_seq_page_cost);
	disk_cost = spc_seq_page_cost * (double) RelationGetNumberOfBlocks(rel);
	table_close(rel, NoLock);
	share_cpu = Max(parallel_scan->total_cost - parallel_scan->startup_cost - disk_cost, 0.0);
	share_cpu *= whole_rows / Max(parallel_scan->plan_rows, 1.0);
	scan->scan.plan.total_cost = parallel_scan->startup_cost + disk_cost + share_cpu;
	if (cpu_cost != NULL)
		*cpu_cost = share_cpu;
	return (Plan *) scan;
}
