/*-------------------------------------------------------------------------
 *
 * planner.c
 *	  planner_hook post-pass: replace eligible Sort nodes by BraidSort (and
 *	  Hash Joins by BraidJoin, join_plan.c).
 *
 * PostgreSQL has no tuplesort hook, and create_upper_paths_hook only sees
 * the top-level ORDER BY, so braidsort lets the standard planner finish and
 * then walks the finished plan (main tree and every subplan), swapping each
 * eligible Sort for a CustomScan "BraidSort".  Because the swap happens
 * after set_plan_references, the new node is built directly in executable
 * form.
 *
 * A Sort is eligible when
 *	- the statement is a plain SELECT without row locks or data-modifying
 *	  CTEs (EvalPlanQual rechecks would otherwise see refetched, not
 *	  rechecked, tuples);
 *	- its target list is a plain projection of its input;
 *	- every key has an exact encoder (keys.c);
 *	- it is not bounded: a Sort under a LIMIT with a row count stays with
 *	  PostgreSQL's top-N heapsort, which ExecSetTupleBound configures at run
 *	  time through Limit, Result, SubqueryScan, Append, MergeAppend, Gather
 *	  and Gather Merge;
 * and, unless braidsort.force is on, the cost model expects a win
 * (costmodel.c).  Rows are refetched by TID when the input is a
 * sequential, index or bitmap heap scan of a heap table whose output calls
 * only immutable functions and has no subplans (it is evaluated again on the
 * refetched tuple) and the cost model finds that cheaper than a value log;
 * otherwise every input row goes to a value log.
 *
 * Under a Gather or Gather Merge each process runs its own copy of the
 * plan below: the walk counts them, for the cost model and the threads.
 *
 * src/plan/planner.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "executor/tuptable.h"
#include "catalog/catalog.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "braidsort.h"
#include "core/costmodel.h"
#include "io/device.h"
#include "core/indexmap.h"
#include "io/iosched.h"
#include "plan/keys.h"
#include "plan/plancost.h"
#include "plan/plandata.h"
#include "core/pool.h"
#include "core/profkernel.h"
#include "monitor/stats.h"

static planner_hook_type prev_planner_hook = NULL;

/* the statement being planned has tables the role may not read */
bool		braid_plan_messages_hidden = false;

/* Largest key prefix kept in an IndexMap entry for variable-width keys. */
#define BRAID_MAX_VAR_PREFIX 48

/* Largest bounded variable-width key given room for its longest encoding. */
#define BRAID_MAX_BOUNDED_KEY 32

static List *physical_scan_tlist(List *keys, Index scanrelid, Oid relid);
static void set_tid_child(CustomScan *cscan, Plan *child, List *child_tlist, List *physical,
						  BraidSortPlanData *data);
static void start_plan_data(BraidSortPlanData *data, Sort *sort, const BraidKeys *keys,
							List *keyexprs, bool by_tid, int processes);
static Plan *finish_braid_scan(CustomScan *cscan, Plan *child, List *child_tlist,
							   List *physical, BraidSortPlanData *data);

/*
 * braid_table_cached
 *		Do a table's table_pages stay in the buffers that hold it while a
 *		gather or a join revisits them?  At most half of them: shared
 *		buffers, or for a temporary table the session's local buffers
 *		(temp_buffers); else its pages come back from the kernel at each
 *		revisit.
 */
bool
braid_table_cached(Relation rel, double table_pages)
{
	int			buffers = RelationUsesLocalBuffers(rel) ? num_temp_buffers : NBuffers;

	return table_pages <= (double) (buffers / 2);
}

/*
 * braid_spill_has_room
 *		Has the spill device room for the bytes a sort or a join ("what")
 *		expects to hold on it at once?  Its free space as the planner sees
 *		it (concurrent queries may take some by the time this one runs);
 *		true when nothing is to be written or the file system cannot tell,
 *		otherwise false with *why.
 */
bool
braid_spill_has_room(double bytes, const char *what, char **why)
{
	double		free_bytes;

	if (bytes <= 0 || !braid_spill_free_bytes(&free_bytes) || bytes <= free_bytes)
		return true;
	*why = psprintf("the spill device has %.0f MB free, and the %s may write %.0f MB to it",
					free_bytes / (1024 * 1024), what, bytes / (1024 * 1024));
	return false;
}

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

	if (!IsA(child, SeqScan) && !IsA(child, BitmapHeapScan) &&
		!(IsA(child, IndexScan) && ((IndexScan *) child)->indexorderby == NIL))
	{
		*why = "input is not a sequential, index or bitmap heap scan";
		return false;
	}
	rte = rt_fetch(((Scan *) child)->scanrelid, stmt->rtable);
	if (rte->rtekind != RTE_RELATION ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
	{
		*why = "input is not a plain table";
		return false;
	}
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
	if (old_snapshot_threshold >= 0)
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
 * sort_keys
 *		Check that every key of the Sort has an exact encoder and work out
 *		the IndexMap's key prefix; false (with *why and *kind) to decline.
 *		Widths of variable-width keys are estimated from the child's key
 *		expressions over table relid (InvalidOid: from the type alone).
 */
static bool
sort_keys(Sort *sort, Plan *child, Oid relid, BraidKeys *k, char **why,
		  BraidDecline *kind)
{
	int			fixed_bytes = 0;
	double		var_bytes = 0;
	double		whole_bytes = 0;	/* the whole encoded key */

	memset(k, 0, sizeof(*k));
	for (int i = 0; i < sort->numCols; i++)
	{
		TargetEntry *tle = get_tle_by_resno(child->targetlist, sort->sortColIdx[i]);
		BraidKeyColumn col;
		int			width;
		double		value_bytes;	/* its encoding's, estimated */

		if (tle == NULL)
			elog(ERROR, "braidsort: no target list entry for sort key %d", i + 1);
		if (!braid_key_column_for(sort->sortOperators[i], sort->collations[i],
								  sort->nullsFirst[i], &col, why))
		{
			*kind = BRAID_DECLINE_KEY;
			return false;
		}
		if (i == 0)
			k->numeric_first = (col.kind == BRAID_KEY_NUMERIC);
		value_bytes = braid_key_fixed_width(col.kind) >= 0 ?
			braid_key_fixed_width(col.kind) : braid_plan_value_bytes(tle->expr, relid);
		whole_bytes += 1 + value_bytes;

		/*
		 * The prefix holds keys up to the first collated key's null mark;
		 * the rest is compared from the full key.
		 */
		if (k->collated)
			width = -2;
		else if (BRAID_KEY_IS_COLLATED(col.kind))
		{
			width = 0;
			k->collated = true;
			k->collated_key = i;
		}
		else
		{
			width = braid_key_fixed_width(col.kind);

			/*
			 * A variable-width key with a small bound (numeric(p, s)) gets
			 * room for its longest encoding: never truncated, never a
			 * tie-break through the overflow store.
			 */
			if (width == -1)
			{
				int			max = braid_key_max_width(col.kind, exprTypmod((Node *) tle->expr));

				if (max >= 0 && max <= BRAID_MAX_BOUNDED_KEY)
					width = max;
			}
		}
		if (width >= 0)
			fixed_bytes += 1 + width;
		else if (width == -1)
		{
			k->has_var = true;
			var_bytes += 1 + value_bytes;
		}
	}

	/*
	 * Key prefix: exact for fixed-width keys; for variable-width keys room
	 * for the estimated average key, within a cap, with longer keys broken
	 * by tie-break on their full encoding.
	 */
	if (!k->has_var)
		k->keylen = fixed_bytes;
	else
		k->keylen = Min((int) (fixed_bytes + var_bytes + 0.5), BRAID_MAX_VAR_PREFIX);
	k->keylen = Max(k->keylen, 1);

	/*
	 * Pad entries to a multiple of 8 bytes, which the radix sort moves a
	 * word at a time, and give the padding to the key prefix: more exact
	 * bytes for variable-width keys, fewer tie-breaks.
	 */
	if (k->collated)
		k->keylen += 8;			/* where the full key is (sort_keys.c) */
	k->keylen = TYPEALIGN(8, k->keylen + BRAID_REF_BYTES) - BRAID_REF_BYTES;

	/*
	 * The full keys kept beside the entries: every row's with a collated
	 * key, and about every row's when the average key outgrows the prefix
	 * (rows with shorter keys than the average are not counted off).
	 */
	if (k->collated || whole_bytes > k->keylen)
		k->full_key_bytes = whole_bytes;
	if (k->keylen + BRAID_REF_BYTES > BRAID_MAX_STRIDE)
	{
		*why = "sort key is too wide";
		*kind = BRAID_DECLINE_KEY;
		return false;
	}
	return true;
}

/*
 * node_tlists
 *		The node's target list, its key expressions (for EXPLAIN) and the
 *		key target list a narrowed scan would output; false (with *why) if
 *		the Sort's output is not a plain projection of its input.
 */
static bool
node_tlists(Sort *sort, Plan *child, bool by_tid, List **output_tlist,
			List **keyexprs, List **child_tlist, char **why)
{
	ListCell   *lc;

	*output_tlist = NIL;
	*keyexprs = NIL;
	*child_tlist = NIL;

	/*
	 * The node's output is the Sort's target list (references to the child's
	 * outputs, with the Sort's resjunk markings); refetching by TID, each
	 * reference is replaced by the child's expression over the table.
	 */
	foreach(lc, sort->plan.targetlist)
	{
		TargetEntry *stle = lfirst_node(TargetEntry, lc);
		Var		   *ref = (Var *) stle->expr;
		TargetEntry *ctle;
		TargetEntry *tle;

		/* set_dummy_tlist_references leaves constants in place */
		if (IsA(ref, Const))
		{
			*output_tlist = lappend(*output_tlist, flatCopyTargetEntry(stle));
			continue;
		}
		if (!IsA(ref, Var) || ref->varno != OUTER_VAR ||
			(ctle = get_tle_by_resno(child->targetlist, ref->varattno)) == NULL)
		{
			*why = "sort output is not a plain projection of its input";
			return false;
		}
		tle = flatCopyTargetEntry(stle);
		tle->expr = by_tid ? copyObject(ctle->expr) : copyObject(stle->expr);
		*output_tlist = lappend(*output_tlist, tle);
	}

	for (int i = 0; i < sort->numCols; i++)
	{
		TargetEntry *stle = get_tle_by_resno(sort->plan.targetlist, sort->sortColIdx[i]);
		TargetEntry *tle = get_tle_by_resno(child->targetlist, sort->sortColIdx[i]);

		if (tle == NULL || stle == NULL)
			elog(ERROR, "braidsort: no target list entry for sort key %d", i + 1);
		if (!by_tid && (!IsA(stle->expr, Var) || ((Var *) stle->expr)->varno != OUTER_VAR))
		{
			*why = "sort key is not a column of the input";
			return false;
		}
		*keyexprs = lappend(*keyexprs, copyObject(by_tid ? tle->expr : stle->expr));
		*child_tlist = lappend(*child_tlist,
							  makeTargetEntry(copyObject(tle->expr), i + 1, NULL, false));
	}
	return true;
}

/*
 * make_braid_scan
 *		A CustomScan in the Sort's place: its rows, width, parameters and
 *		init plans, PostgreSQL's Sort cost with the sort's own part
 *		(own_cost) braidsort's, and the given target list.
 */
static CustomScan *
make_braid_scan(Sort *sort, Plan *child, double own_cost, List *output_tlist)
{
	CustomScan *cscan;

	cscan = makeNode(CustomScan);
	cscan->scan.plan.startup_cost = child->total_cost + own_cost;
	cscan->scan.plan.total_cost = cscan->scan.plan.startup_cost +
		(sort->plan.total_cost - sort->plan.startup_cost);
	cscan->scan.plan.plan_rows = sort->plan.plan_rows;
	cscan->scan.plan.plan_width = sort->plan.plan_width;
	cscan->scan.plan.parallel_aware = false;
	cscan->scan.plan.parallel_safe = sort->plan.parallel_safe;
	cscan->scan.plan.async_capable = false;
	cscan->scan.plan.plan_node_id = sort->plan.plan_node_id;
	cscan->scan.plan.targetlist = output_tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.plan.initPlan = sort->plan.initPlan;
	cscan->scan.plan.extParam = bms_copy(sort->plan.extParam);
	cscan->scan.plan.allParam = bms_copy(sort->plan.allParam);
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_exprs = NIL;
	cscan->custom_scan_tlist = NIL;
	cscan->custom_relids = NULL;
	cscan->methods = &braid_sort_scan_methods;
	return cscan;
}

/* ns_to_ms: nanoseconds as milliseconds, for messages. */
static double
ns_to_ms(double ns)
{
	return ns / 1e6;
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
 * How much wider than the Sort's rows a table's may be for an adaptive sort
 * to hold them whole (heap TID form).
 */
#define BRAID_ADAPTIVE_MAX_WIDER 1.25

/*
 * sort_width_used
 *		The Sort's width less the NULL constants PostgreSQL puts for unused
 *		columns (count(*) over an ordered subquery), which plan_width counts
 *		at their type's average width; no statistics looked up.
 */
static double
sort_width_used(Sort *sort, Plan *child)
{
	double		width = sort->plan.plan_width;
	ListCell   *lc;

	foreach(lc, sort->plan.targetlist)
	{
		Expr	   *expr = braid_sort_input_expr(child, ((TargetEntry *) lfirst(lc))->expr);

		if (IsA(expr, Const) && ((Const *) expr)->constisnull)
			width -= get_typavgwidth(((Const *) expr)->consttype,
									 ((Const *) expr)->consttypmod);
	}
	return Max(width, 0);
}

/*
 * whole_rows_wider
 *		Whether the rows of table relid are more than BRAID_ADAPTIVE_MAX_WIDER
 *		times as large as those of the Sort over it (child), as tuples: the
 *		table's from its pages and rows as last counted (dead space and all;
 *		its columns' statistics if it has never been counted), the Sort's
 *		from its width less the NULL constants PostgreSQL puts for unused
 *		columns (count(*) over an ordered subquery), which plan_width counts
 *		at their type's average width.  No statistics are looked up on the
 *		way: the planner takes many small sorts this way.
 */
static bool
whole_rows_wider(Sort *sort, Plan *child, Oid relid)
{
	Relation	rel = table_open(relid, NoLock);
	double		pages = rel->rd_rel->relpages;
	double		tuples = rel->rd_rel->reltuples;
	double		overhead = MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData);
	double		table_row;
	double		sort_width = sort_width_used(sort, child);

	table_close(rel, NoLock);
	table_row = pages > 0 && tuples > 0 ? pages * BLCKSZ / tuples :
		get_relation_data_width(relid, NULL) + overhead;
	return table_row > BRAID_ADAPTIVE_MAX_WIDER * (sort_width + overhead);
}

/*
 * take_adaptively
 *		A BraidSort that takes "sort" adaptively (sort_adaptive.c): the cost
 *		model declines it only because of its row estimate (small_why), so
 *		it runs as PostgreSQL's in-memory sort and switches to braidsort's
 *		path if its input outgrows work_mem: refetching rows by TID over a
 *		heap scan (braid_heap_tid_input), else from a value log.  Its cost
 *		is the Sort's.  NULL (with *why) if it cannot be: the Sort's output
 *		is not a plain projection of its input.
 *
 * Should it switch, the write-limited mode is the one braidsort.sort_mode
 * names, else MergePass: an estimate that proved wrong cannot choose one.
 */
static Plan *
take_adaptively(PlannedStmt *stmt, Sort *sort, Plan *child, int processes,
				const BraidKeys *keys, const char *small_why, char **why,
				BraidDecline *kind)
{
	List	   *keyexprs,
			   *child_tlist,
			   *output_tlist;
	CustomScan *cscan;
	BraidSortPlanData data;
	Oid			relid = InvalidOid;
	char	   *tid_why;
	bool		by_tid;
	List	   *physical = NIL;

	/*
	 * Over a heap scan, the switched sort refetches rows by TID.  Its
	 * tuplesort then sorts the node's output rows by the Sort's key column
	 * numbers, which are those of its input: the Sort's target list must
	 * pass its input through column for column (as setrefs.c makes it).
	 */
	by_tid = braid_gather_source != BRAID_GATHER_VALUE_LOG &&
		braid_heap_tid_input(stmt, child, &relid, NULL, NULL, &tid_why);
	for (int i = 0; by_tid && i < sort->numCols; i++)
	{
		TargetEntry *stle = get_tle_by_resno(sort->plan.targetlist, sort->sortColIdx[i]);

		by_tid = stle != NULL && IsA(stle->expr, Var) &&
			((Var *) stle->expr)->varno == OUTER_VAR &&
			((Var *) stle->expr)->varattno == sort->sortColIdx[i];
	}
	if (by_tid && !node_tlists(sort, child, true, &output_tlist, &keyexprs, &child_tlist, why))
		by_tid = false;

	/*
	 * ... and only where the table's rows are not much wider than the
	 * Sort's: that tuplesort holds whole table rows, which reach work_mem
	 * (and, handed back to PostgreSQL's sort, spill) where PostgreSQL's
	 * narrower rows would fit (two columns of a 340-byte row, at the
	 * default work_mem: 2.5x slower).  The value log form's tuplesort holds
	 * the rows PostgreSQL's would.
	 */
	if (by_tid && whole_rows_wider(sort, child, relid))
		by_tid = false;

	/*
	 * ... and its tuplesort sorts the scan's heap tuples by the keys' table
	 * columns, projecting its target list from them: every key must be a
	 * plain column (the scan then hands over its tuples), no system column
	 * may be read (a sorted tuple no longer has its header), and the TID
	 * travels in the minimal tuple's padding, which needs MAXALIGN 8.
	 */
	if (by_tid && sizeof(((MinimalTupleData *) 0)->mt_padding) < sizeof(ItemPointerData))
		by_tid = false;			/* no room for the TID (MAXALIGN below 8) */
	if (by_tid)
	{
		Bitmapset  *attrs = NULL;
		int			attr = -1;

		physical = physical_scan_tlist(child_tlist, ((Scan *) child)->scanrelid, relid);
		pull_varattnos((Node *) output_tlist, ((Scan *) child)->scanrelid, &attrs);
		while (physical != NIL && (attr = bms_next_member(attrs, attr)) >= 0)
			if (attr + FirstLowInvalidHeapAttributeNumber < 0)
				physical = NIL;
		by_tid = physical != NIL;
	}
	if (!by_tid && !node_tlists(sort, child, false, &output_tlist, &keyexprs, &child_tlist, why))
	{
		*kind = BRAID_DECLINE_COST;
		*why = psprintf("%s (%.0f rows estimated), and it cannot be taken adaptively: %s",
						small_why, sort->plan.plan_rows, *why);
		return NULL;
	}
	BRAID_PLAN_DEBUG("braidsort: Sort taken adaptively: %s (%.0f rows estimated%s); it runs as PostgreSQL's sort unless its input outgrows work_mem",
					 small_why, sort->plan.plan_rows,
					 processes > 1 ? psprintf(" in each of %d processes", processes) : "");

	cscan = make_braid_scan(sort, child, Max(sort->plan.startup_cost - child->total_cost, 0.0),
							output_tlist);
	start_plan_data(&data, sort, keys, keyexprs, by_tid, processes);
	data.tuple_width = sort->plan.plan_width;
	data.sort_width = (int) sort_width_used(sort, child);
	data.wl_mode = braid_sort_mode == BRAID_SORT_MODE_AUTO ? BRAID_WL_MERGEPASS :
		(int) (braid_sort_mode - BRAID_SORT_MODE_MERGEPASS);
	data.segment_share = 0.5;
	data.can_reread = !by_tid || braid_heap_rescannable(child);
	data.adaptive = true;
	data.key_memory = (int) Min(braid_cost_split_key_memory(keys->full_key_bytes, keys->collated),
								(double) INT_MAX);
	return finish_braid_scan(cscan, child, child_tlist, by_tid ? physical : NIL, &data);
}

/*
 * try_braid_sort
 *		Return a BraidSort CustomScan replacing "sort", or NULL to leave the
 *		Sort alone.  *why is set to the reason for declining.  "processes"
 *		is how many processes run this Sort at once (a parallel plan's
 *		workers and leader), each with its own copy.
 *
 * Two forms.  Over a heap scan (braid_heap_tid_input) whose rows are cheaper to
 * refetch than to keep (the cost model weighs the gather's visits of the
 * table against a value log's copies), the scan only has to give the sort
 * keys -- the table's own tuples unprojected when every key is a plain
 * column, else a target list narrowed to the keys -- and the node
 * refetches whole rows by TID, evaluating the scan's original target list
 * on them (scanrelid is the table; the child is in custom_plans).
 * Otherwise the node keeps each input row in a value log and the IndexMap
 * points into it: the child stays as the node's outer plan and the node's
 * target list is the Sort's, referencing it.
 *
 * The node's cost is PostgreSQL's Sort's, with the sort's own part scaled
 * by braidsort's estimate over PostgreSQL's: what EXPLAIN shows, and what
 * the plan above would have weighed.
 */
static Plan *
try_braid_sort(PlannedStmt *stmt, Sort *sort, int processes, char **why,
			   BraidDecline *kind)
{
	Plan	   *child = outerPlan(sort);
	Oid			relid = InvalidOid;
	double		table_pages = 0;
	bool		table_cached = true;
	bool		heap_ok;
	bool		by_tid;
	char	   *tid_why = NULL;
	BraidKeys	keys;
	List	   *keyexprs,
			   *child_tlist,
			   *output_tlist;
	BraidCostInput cost;
	BraidCostEstimate est;
	double		own_cost;
	CustomScan *cscan;
	BraidSortPlanData data;
	bool		can_reread;
	double		gather_bytes;
	double		gather_pass_ms;
	double		rank_saving_ns;
	BraidWlMode wl_mode;
	BraidWlEstimate wl_est[BRAID_WL_NMODES];

	*kind = BRAID_DECLINE_SHAPE;
	if (child == NULL)
	{
		*why = "no input plan";
		return NULL;
	}

	/*
	 * Too few rows expected for the cost model to be worth asking: taken
	 * adaptively without looking anything up but the keys and the table
	 * (its access method and size, from the relation cache; the planner
	 * plans many such sorts, each of which this must not slow down).
	 */
	if (!braid_force && braid_adaptive != BRAID_ADAPTIVE_OFF &&
		sort->plan.plan_rows < BRAID_MIN_ROWS)
	{
		if (!sort_keys(sort, child, InvalidOid, &keys, why, kind))
			return NULL;
		return take_adaptively(stmt, sort, child, processes, &keys,
							   "too few rows to be worth it", why, kind);
	}

	heap_ok = braid_heap_tid_input(stmt, child, &relid, &table_pages, &table_cached, &tid_why);
	if (!sort_keys(sort, child, relid, &keys, why, kind))
		return NULL;

	braid_plan_cost_input(sort, child, heap_ok ? relid : InvalidOid, table_pages,
						  table_cached, &keys, processes, &cost);
	braid_cost_estimate(&cost, &est);
	if (!braid_force && !est.prefers && est.small && braid_adaptive != BRAID_ADAPTIVE_OFF)
		return take_adaptively(stmt, sort, child, processes, &keys, est.why, why, kind);
	if (!braid_force && !est.prefers)
	{
		*kind = BRAID_DECLINE_COST;
		*why = psprintf("%s (braidsort %s ms, PostgreSQL %s ms estimated for %.0f rows%s)",
						est.why, braid_ms_text(ns_to_ms(est.braid_ns)),
						braid_ms_text(ns_to_ms(est.pg_ns)), cost.rows,
						processes > 1 ? psprintf(" in each of %d processes", processes) : "");
		return NULL;
	}

	/*
	 * A sort the spill device has no room for would fail where PostgreSQL's
	 * sort, whose files may go elsewhere, would not (under a Gather, every
	 * process writes its own files).
	 */
	if (!braid_force && !braid_sort_has_room(&cost, est.from, why))
	{
		*kind = BRAID_DECLINE_COST;
		return NULL;
	}

	/* over a heap scan, gather by TID unless a value log is cheaper */
	by_tid = est.from == BRAID_FROM_HEAP_TID;
	if (!by_tid)
		BRAID_PLAN_DEBUG("braidsort: rows go to a value log: %s",
						 !heap_ok ? tid_why :
						 braid_gather_source == BRAID_GATHER_VALUE_LOG ? "braidsort.gather_source is value_log" :
						 psprintf("cheaper than refetching them (%s ms against %s ms estimated)",
								  braid_ms_text(ns_to_ms(est.vlog_ns)),
								  braid_ms_text(ns_to_ms(est.tid_ns))));

	if (!node_tlists(sort, child, by_tid, &output_tlist, &keyexprs, &child_tlist, why))
		return NULL;
	start_plan_data(&data, sort, &keys, keyexprs, by_tid, processes);

	/*
	 * Should the IndexMap outgrow the budget: the write-limited mode.  A
	 * heap scan is read again by rescanning it, which gives the same rows
	 * only for a plain, serial scan calling only immutable functions,
	 * without subplans (braid_heap_rescannable); a value log
	 * can always be read again.
	 */
	can_reread = !by_tid || braid_heap_rescannable(child);
	/* the late gather by TID, whose batches a mode's held memory shrinks */
	gather_bytes = by_tid ? cost.rows * cost.tuple_bytes : 0;
	gather_pass_ms = by_tid ? braid_cost_gather_pass_ns(&cost) / 1e6 : 0;
	data.gather_kb = (int) Min(gather_bytes / 1024, (double) INT_MAX);
	data.gather_pass_us = (int) Min(gather_pass_ms * 1000, (double) INT_MAX);
	data.key_memory = (int) Min(braid_cost_split_key_memory(cost.full_key_bytes, cost.collated),
								(double) INT_MAX);
	/* ranked in runs, compared by the collation in selection passes */
	data.rank_collated = braid_cost_ranks(&cost, est.from, &rank_saving_ns);
	data.select_collated_ns = cost.rows > 0 ?
		(int) Min(rint(rank_saving_ns / cost.rows), (double) INT_MAX) : 0;
	wl_mode = braid_plan_sort_mode(cost.rows, keys.keylen, data.key_memory, !by_tid, can_reread,
								   data.gather_kb * 1024.0, data.gather_pass_us / 1000.0,
								   data.select_collated_ns, wl_est, &data.segment_share);
	if (braid_cost_spills(&cost, est.from))
		est.braid_ns = Max(est.braid_ns + (wl_est[wl_mode].ms - wl_est[BRAID_WL_MERGEPASS].ms) * 1e6,
						   0.0);

	BRAID_PLAN_DEBUG("braidsort: Sort replaced%s: braidsort %s ms (%s), PostgreSQL %s ms estimated for %.0f rows%s",
					 braid_force && !est.prefers ? " (forced)" : "",
					 braid_ms_text(ns_to_ms(est.braid_ns)), by_tid ? "heap tid" : "value log",
					 braid_ms_text(ns_to_ms(est.pg_ns)),
					 cost.rows, processes > 1 ? psprintf(" in each of %d processes", processes) : "");

	/*
	 * The sort's own cost (beyond reading its input), scaled by braidsort's
	 * estimate over PostgreSQL's.
	 */
	own_cost = Max(sort->plan.startup_cost - child->total_cost, 0.0) *
		(est.pg_ns > 0 ? est.braid_ns / est.pg_ns : 1.0);

	cscan = make_braid_scan(sort, child, own_cost, output_tlist);
	data.tuple_width = (int) Min(cost.tuple_bytes, (double) INT_MAX);
	data.sort_width = (int) Min(cost.sort_width, (double) INT_MAX);
	data.expect_spill = braid_cost_spills(&cost, est.from);
	data.wl_mode = (int) wl_mode;
	data.can_reread = can_reread;
	return finish_braid_scan(cscan, child, child_tlist,
							 by_tid ? physical_scan_tlist(child_tlist, ((Scan *) child)->scanrelid,
														  relid) : NIL,
							 &data);
}

/*
 * start_plan_data
 *		The plan data of every BraidSort: the Sort's keys and their prefix,
 *		the form (by_tid: heap TID, else value log) and the processes; the
 *		rest zero, for the caller to fill in.
 */
static void
start_plan_data(BraidSortPlanData *data, Sort *sort, const BraidKeys *keys, List *keyexprs,
				bool by_tid, int processes)
{
	memset(data, 0, sizeof(*data));
	data->nkeys = sort->numCols;
	data->sortops = sort->sortOperators;
	data->collations = sort->collations;
	data->nullsfirst = sort->nullsFirst;
	data->keyexprs = keyexprs;
	data->keycols = sort->sortColIdx;
	data->keylen = keys->keylen;
	data->truncates = keys->has_var;
	data->mode = by_tid ? BRAID_MODE_HEAP_TID : BRAID_MODE_VALUE_LOG;
	data->processes = processes;
	data->write_intensity = braid_write_intensity;
	data->rank_collated = true;
}

/*
 * finish_braid_scan
 *		Attach the child -- in heap TID form in custom_plans (set_tid_child;
 *		"physical" its physical target list or NIL), else as the outer plan
 *		-- and pack the plan data into the node, which is returned.
 */
static Plan *
finish_braid_scan(CustomScan *cscan, Plan *child, List *child_tlist, List *physical,
				  BraidSortPlanData *data)
{
	if (data->mode == BRAID_MODE_HEAP_TID)
		set_tid_child(cscan, child, child_tlist, physical, data);
	else
	{
		cscan->scan.scanrelid = 0;
		cscan->custom_plans = NIL;
		outerPlan(cscan) = child;
	}
	cscan->custom_private = braid_plan_pack(data);
	return (Plan *) cscan;
}

/*
 * set_tid_child
 *		Heap TID form: the node scans the child's table (whose rows it
 *		refetches), with its child scan in custom_plans, made to output
 *		only what the build reads: the table's own tuples (physical, from
 *		physical_scan_tlist) if every key is a plain column, else the keys
 *		(child_tlist).
 */
static void
set_tid_child(CustomScan *cscan, Plan *child, List *child_tlist, List *physical,
			  BraidSortPlanData *data)
{
	ListCell   *lc;

	cscan->scan.scanrelid = ((Scan *) child)->scanrelid;
	cscan->custom_plans = list_make1(child);
	if (physical != NIL)
	{
		/*
		 * Keys that are plain columns are read straight from the scanned
		 * tuple: the scan outputs it as it is (no projection per row) and
		 * the node reads the key columns by number.
		 */
		int			i = 0;

		data->keyattnos = palloc(sizeof(AttrNumber) * data->nkeys);
		foreach(lc, child_tlist)
			data->keyattnos[i++] = ((Var *) ((TargetEntry *) lfirst(lc))->expr)->varattno;
		child->targetlist = physical;
	}
	else
	{
		/* narrow the scan to the keys: the rest is refetched at gather time */
		child->targetlist = child_tlist;
	}
}

/*
 * physical_scan_tlist
 *		If every sort key is a plain column of the scanned table, the scan's
 *		physical target list (each column, in order; NULL for dropped ones),
 *		which lets the scan hand over its tuples without projecting them;
 *		else NIL.  "keys" is the key target list the scan would otherwise
 *		output.
 */
static List *
physical_scan_tlist(List *keys, Index scanrelid, Oid relid)
{
	List	   *tlist = NIL;
	ListCell   *lc;
	Relation	rel;
	TupleDesc	desc;

	foreach(lc, keys)
	{
		Var		   *var = (Var *) ((TargetEntry *) lfirst(lc))->expr;

		if (!IsA(var, Var) || var->varno != scanrelid || var->varattno <= 0 ||
			var->varlevelsup != 0)
			return NIL;
	}

	rel = table_open(relid, NoLock);
	desc = RelationGetDescr(rel);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Expr	   *expr;

		if (att->attisdropped)
			expr = (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
									  (Datum) 0, true, true);
		else
			expr = (Expr *) makeVar(scanrelid, att->attnum, att->atttypid,
									att->atttypmod, att->attcollation, 0);
		tlist = lappend(tlist, makeTargetEntry(expr, att->attnum, NULL, false));
	}
	table_close(rel, NoLock);
	return tlist;
}

/*
 * Where the walk is: the statement, whether a LIMIT above could hand a Sort
 * a tuple bound at run time, and how many processes run this part of the
 * plan at once (under a Gather or Gather Merge, its planned workers and the
 * leader, each running its own copy of every node below).
 */
typedef struct BraidWalk
{
	PlannedStmt *stmt;
	bool		bounded;
	int			processes;
	int		   *most_processes; /* the most processes of any Gather seen */
} BraidWalk;

/*
 * gather_processes
 *		How many processes run the plan below a Gather or Gather Merge: its
 *		planned workers, and the leader unless it only collects (a single
 *		copy, or parallel_leader_participation off).
 */
static int
gather_processes(int num_workers, bool single_copy)
{
	if (single_copy)
		return 1;
	return Max(num_workers + (parallel_leader_participation ? 1 : 0), 1);
}

static Plan *replace_sorts(BraidWalk w, Plan *plan);

/*
 * replace_sorts_in_list
 *		replace_sorts on every plan of a list, in place.
 */
static void
replace_sorts_in_list(BraidWalk w, List *plans)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = replace_sorts(w, (Plan *) lfirst(lc));
}

/*
 * replace_sorts
 *		Walk a plan tree, replacing eligible Sorts; returns the (possibly
 *		new) root.
 */
static Plan *
replace_sorts(BraidWalk w, Plan *plan)
{
	BraidWalk	outer = w;
	BraidWalk	inner = w;

	if (plan == NULL)
		return NULL;

	/* a bound reaches a Sort only through these nodes (ExecSetTupleBound) */
	outer.bounded = false;
	inner.bounded = false;
	switch (nodeTag(plan))
	{
		case T_Limit:
			outer.bounded = ((Limit *) plan)->limitCount != NULL;
			break;
		case T_Result:
			outer.bounded = w.bounded;
			break;
		case T_Gather:
			outer.bounded = w.bounded;
			outer.processes = gather_processes(((Gather *) plan)->num_workers,
											   ((Gather *) plan)->single_copy);
			*w.most_processes = Max(*w.most_processes, outer.processes);
			break;
		case T_GatherMerge:
			outer.bounded = w.bounded;
			outer.processes = gather_processes(((GatherMerge *) plan)->num_workers, false);
			*w.most_processes = Max(*w.most_processes, outer.processes);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				replace_sorts(w, ((SubqueryScan *) plan)->subplan);
			break;
		case T_Append:
			replace_sorts_in_list(w, ((Append *) plan)->appendplans);
			break;
		case T_MergeAppend:
			replace_sorts_in_list(w, ((MergeAppend *) plan)->mergeplans);
			break;
		case T_CustomScan:
			replace_sorts_in_list(inner, ((CustomScan *) plan)->custom_plans);
			break;
		case T_IncrementalSort:
			BRAID_PLAN_DEBUG("braidsort: Incremental Sort left to PostgreSQL: braidsort replaces only full sorts");
			break;
		default:
			break;
	}

	outerPlan(plan) = replace_sorts(outer, outerPlan(plan));
	innerPlan(plan) = replace_sorts(inner, innerPlan(plan));

	if (IsA(plan, HashJoin))
	{
		char	   *why = NULL;
		Plan	   *replacement;

		replacement = braid_try_join(w.stmt, (HashJoin *) plan, w.processes, &why);
		if (replacement == NULL)
		{
			BRAID_PLAN_DEBUG("braidsort: %s left to PostgreSQL: %s",
							 plan->parallel_aware ? "Parallel Hash Join" : "Hash Join", why);
			return plan;
		}
		return replacement;
	}

	if (IsA(plan, Sort))
	{
		char	   *why = NULL;
		Plan	   *replacement;

		BraidDecline kind;

		if (w.bounded)
		{
			BRAID_PLAN_DEBUG("braidsort: Sort left to PostgreSQL: it may be bounded by a LIMIT");
			braid_stats_count_decline(BRAID_DECLINE_BOUNDED);
			return plan;
		}
		replacement = try_braid_sort(w.stmt, (Sort *) plan, w.processes, &why, &kind);
		if (replacement == NULL)
		{
			BRAID_PLAN_DEBUG("braidsort: Sort left to PostgreSQL: %s", why);
			braid_stats_count_decline(kind);
			return plan;
		}
		return replacement;
	}
	return plan;
}

/*
 * count_nodes
 *		Nodes of a type in a plan tree (for statements braidsort declines
 *		whole).
 */
static int
count_nodes(Plan *plan, NodeTag tag)
{
	int			n = 0;
	ListCell   *lc;

	if (plan == NULL)
		return 0;
	if (nodeTag(plan) == tag)
		n++;
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			n += count_nodes((Plan *) lfirst(lc), tag);
	if (IsA(plan, MergeAppend))
		foreach(lc, ((MergeAppend *) plan)->mergeplans)
			n += count_nodes((Plan *) lfirst(lc), tag);
	if (IsA(plan, SubqueryScan))
		n += count_nodes(((SubqueryScan *) plan)->subplan, tag);
	return n + count_nodes(outerPlan(plan), tag) + count_nodes(innerPlan(plan), tag);
}

/*
 * statement_decline_reason
 *		Why braidsort leaves every Sort and Hash Join of this statement to
 *		PostgreSQL, or NULL.  Rows of a statement that locks or modifies
 *		them may be rechecked by EvalPlanQual, which would see refetched
 *		tuples instead of rechecked ones; braidsort keeps to plain SELECTs,
 *		where no such recheck happens (a conservative line: an INSERT's
 *		SELECT would be safe too, and may be taken later).
 */
#define BRAID_SELECT_ONLY "braidsort replaces sorts and hash joins of SELECT statements only"

static const char *
statement_decline_reason(PlannedStmt *stmt)
{
	switch (stmt->commandType)
	{
		case CMD_SELECT:
			break;
		case CMD_INSERT:
			return "the statement is an INSERT (" BRAID_SELECT_ONLY ")";
		case CMD_UPDATE:
			return "the statement is an UPDATE (" BRAID_SELECT_ONLY ")";
		case CMD_DELETE:
			return "the statement is a DELETE (" BRAID_SELECT_ONLY ")";
		case CMD_MERGE:
			return "the statement is a MERGE (" BRAID_SELECT_ONLY ")";
		default:
			return BRAID_SELECT_ONLY;
	}
	if (stmt->rowMarks != NIL)
		return "the statement locks rows (FOR UPDATE or FOR SHARE), which EvalPlanQual may recheck";
	if (stmt->hasModifyingCTE)
		return "the statement has a data-modifying WITH query";
	return NULL;
}

/*
 * braid_planner
 *		planner_hook: plan normally, then replace eligible Sorts.
 */
static PlannedStmt *
braid_planner(Query *parse, const char *query_string, int cursorOptions,
			  ParamListInfo boundParams)
{
	PlannedStmt *stmt;
	const char *why;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);

	if (!braid_enable)
		return stmt;

	/*
	 * The executor checks the role's permissions only after planning: until
	 * then, say nothing about tables it may not read (permissions.c).  Set
	 * for every statement planned, before anything below plans another.
	 */
	braid_plan_messages_hidden = message_level_is_interesting(DEBUG1) &&
		!braid_rtable_permitted(stmt->rtable, false);
	why = statement_decline_reason(stmt);
	if (why == NULL)
	{
		int			most = 1;
		BraidWalk	w = {stmt, false, 1, &most};
		ListCell   *lc;

		stmt->planTree = replace_sorts(w, stmt->planTree);

		/*
		 * A parallel-safe subplan may be evaluated in every process of a
		 * parallel part of the plan (it is sent to the workers): size its
		 * sorts for the most processes any Gather runs.
		 */
		foreach(lc, stmt->subplans)
		{
			Plan	   *sub = (Plan *) lfirst(lc);

			w.processes = (sub != NULL && sub->parallel_safe) ? most : 1;
			lfirst(lc) = replace_sorts(w, sub);
		}
	}
	else
	{
		ListCell   *lc;
		int			n = count_nodes(stmt->planTree, T_Sort);
		int			joins = count_nodes(stmt->planTree, T_HashJoin);

		foreach(lc, stmt->subplans)
		{
			n += count_nodes((Plan *) lfirst(lc), T_Sort);
			joins += count_nodes((Plan *) lfirst(lc), T_HashJoin);
		}
		if (n > 0)
			BRAID_PLAN_DEBUG("braidsort: %d Sort%s left to PostgreSQL: %s",
							 n, n == 1 ? "" : "s", why);
		if (joins > 0)
			BRAID_PLAN_DEBUG("braidsort: %d Hash Join%s left to PostgreSQL: %s",
							 joins, joins == 1 ? "" : "s", why);
		while (n-- > 0)
			braid_stats_count_decline(BRAID_DECLINE_STATEMENT);
	}
	return stmt;
}

/*
 * braid_planner_init
 *		Install the planner hook (called from _PG_init).
 */
void
braid_planner_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = braid_planner;
}
