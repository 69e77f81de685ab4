/*-------------------------------------------------------------------------
 *
 * plancost.c
 *	  What the planner's statistics say about a Sort, for the cost model.
 *
 * The cost model (costmodel.c) is pure arithmetic; this file fills its
 * input from the plan and the catalogs: the widths the Sort really
 * carries, its keys' encoded widths, the correlation of the first key with
 * the table's physical order (which decides how many pages a gather batch
 * visits), the distinct values of a collated key (which decide how many
 * comparisons fall through to strcoll), and the spill device's profile.
 *
 * src/plancost.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_statistic.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/plancat.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "braidsort.h"
#include "device.h"
#include "indexmap.h"
#include "iosched.h"
#include "plancost.h"
#include "pool.h"

/*
 * braid_plan_value_bytes
 *		Estimated average encoded bytes of a variable-width key expression.
 */
double
braid_plan_value_bytes(Expr *expr, Oid relid)
{
	int32		width = 0;

	if (IsA(expr, Var) && ((Var *) expr)->varattno > 0)
		width = get_attavgwidth(relid, ((Var *) expr)->varattno);
	if (width <= 0)
		width = get_typavgwidth(exprType((Node *) expr), exprTypmod((Node *) expr));
	/* drop the (short) varlena header, add the terminator */
	return Max(width - 1, 0) + 2;
}

/*
 * column_stats
 *		The pg_statistic row of a key expression of table relid, if it is a
 *		plain column with statistics (release it with ReleaseSysCache);
 *		else NULL.
 */
static HeapTuple
column_stats(Oid relid, Expr *expr)
{
	Var		   *var = (Var *) expr;
	HeapTuple	tuple;

	if (!OidIsValid(relid) || !IsA(expr, Var) || var->varattno <= 0)
		return NULL;
	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
							Int16GetDatum(var->varattno), BoolGetDatum(false));
	return HeapTupleIsValid(tuple) ? tuple : NULL;
}

/*
 * key_correlation
 *		ANALYZE's correlation between table relid's physical order and the
 *		order of a key expression, if it is a plain column with statistics;
 *		else 0.  (The gather visits few pages per batch when the sort order
 *		follows the physical order, e.g. timestamps of rows inserted in time
 *		order; only its square matters, so DESC is no matter.)
 */
static double
key_correlation(Oid relid, Expr *expr)
{
	HeapTuple	tuple = column_stats(relid, expr);
	AttStatsSlot sslot;
	double		correlation = 0;

	if (tuple == NULL)
		return 0;
	if (get_attstatsslot(&sslot, tuple, STATISTIC_KIND_CORRELATION, InvalidOid,
						 ATTSTATSSLOT_NUMBERS))
	{
		if (sslot.nnumbers == 1)
			correlation = sslot.numbers[0];
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(tuple);
	return correlation;
}

/*
 * sort_row_width
 *		Bytes of the rows the Sort carries, from what its target list really
 *		holds: a column's average width (the table's statistics for plain
 *		columns of relid), a constant's own size.  The planner's plan_width
 *		counts a NULL constant at its type's average width, and PostgreSQL
 *		replaces the unused outputs of a subquery with NULL constants: under
 *		count(*) of an ordered subquery the Sort sorts a few bytes a row, not
 *		the table's width.
 */
static double
sort_row_width(Sort *sort, Plan *child, Oid relid)
{
	double		width = 0;
	ListCell   *lc;

	foreach(lc, sort->plan.targetlist)
	{
		Expr	   *expr = ((TargetEntry *) lfirst(lc))->expr;

		if (IsA(expr, Var) && ((Var *) expr)->varno == OUTER_VAR)
		{
			TargetEntry *ctle = get_tle_by_resno(child->targetlist,
												 ((Var *) expr)->varattno);

			if (ctle != NULL)
				expr = ctle->expr;
		}
		if (IsA(expr, Const))
		{
			Const	   *c = (Const *) expr;

			if (!c->constisnull)
				width += datumGetSize(c->constvalue, c->constbyval, c->constlen);
			continue;
		}
		if (IsA(expr, Var) && OidIsValid(relid) && ((Var *) expr)->varattno > 0)
		{
			int32		w = get_attavgwidth(relid, ((Var *) expr)->varattno);

			if (w > 0)
			{
				width += w;
				continue;
			}
		}
		width += get_typavgwidth(exprType((Node *) expr), exprTypmod((Node *) expr));
	}
	return Min(width, (double) sort->plan.plan_width);
}

/*
 * key_distinct
 *		ANALYZE's number of distinct values of a key expression of table
 *		relid, if it is a plain column with statistics; else 0.
 */
static double
key_distinct(Oid relid, Expr *expr)
{
	HeapTuple	tuple = column_stats(relid, expr);
	double		distinct;

	if (tuple == NULL)
		return 0;
	distinct = ((Form_pg_statistic) GETSTRUCT(tuple))->stadistinct;
	ReleaseSysCache(tuple);
	/* negative: a fraction of the rows */
	if (distinct < 0)
	{
		Relation	rel = table_open(relid, NoLock);

		distinct = -distinct * Max(rel->rd_rel->reltuples, 0);
		table_close(rel, NoLock);
	}
	return distinct;
}

/*
 * braid_plan_cost_input
 *		What the cost model needs to know about a Sort (costmodel.c): its
 *		rows and their widths, its keys, the table its rows can be
 *		refetched from (relid, or InvalidOid when they cannot), the spill
 *		device, and how many processes and CPUs share the work.
 */
void
braid_plan_cost_input(Sort *sort, Plan *child, Oid relid, double table_pages,
					  bool table_cached, const BraidKeys *keys, int processes,
					  BraidCostInput *cost)
{
	memset(cost, 0, sizeof(*cost));
	cost->rows = sort->plan.plan_rows;
	cost->sort_width = sort_row_width(sort, child, relid);
	cost->heap_refetch = OidIsValid(relid);
	cost->only_from = braid_gather_source == BRAID_GATHER_HEAP_TID ? BRAID_FROM_HEAP_TID :
		braid_gather_source == BRAID_GATHER_VALUE_LOG ? BRAID_FROM_VALUE_LOG : BRAID_FROM_ANY;
	cost->tuple_bytes = OidIsValid(relid) ?
		get_relation_data_width(relid, NULL) + MAXALIGN(SizeofHeapTupleHeader) :
		MAXALIGN(cost->sort_width + SizeofMinimalTupleHeader);
	cost->row_bytes = MAXALIGN(cost->sort_width + SizeofMinimalTupleHeader);
	cost->entry_bytes = keys->keylen + BRAID_REF_BYTES;
	cost->budget_bytes = (double) braid_budget_bytes();
	cost->sort_mem_bytes = (double) work_mem * 1024.0;

	/*
	 * A parallel scan hands each process its own blocks: the rows one
	 * process sorts lie on its share of the table's pages.
	 */
	cost->table_pages = OidIsValid(relid) && child->parallel_aware ?
		table_pages / Max(processes, 1) : table_pages;
	cost->table_cached = table_cached;
	if (OidIsValid(relid))
		cost->correlation = key_correlation(relid,
										   get_tle_by_resno(child->targetlist,
															sort->sortColIdx[0])->expr);
	cost->spill_ns_per_byte = braid_sched_spill_ns_per_byte(braid_spill_tablespace_guess());
	cost->collated = keys->collated;
	if (keys->collated && OidIsValid(relid))
		cost->collated_distinct =
			key_distinct(relid, get_tle_by_resno(child->targetlist,
												 sort->sortColIdx[keys->collated_key])->expr);
	cost->numeric_key = keys->numeric_first;
	cost->processes = processes;
	cost->cpus = braid_pool_cpus();
	cost->sort_threads = braid_sort_thread_count(processes);
}
