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
 * src/plan/plancost.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type_d.h"
#include "commands/tablespace.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "guc.h"
#include "io/device.h"
#include "io/devprofile.h"
#include "core/indexmap.h"
#include "plan/keys.h"
#include "plan/plancost.h"
#include "core/pool.h"

/*
 * ANALYZE leaves out of its value statistics every value wider than this
 * (WIDTH_THRESHOLD in commands/analyze.c), measured decompressed.
 */
#define BRAID_ANALYZE_WIDTH_THRESHOLD 1024

static HeapTuple column_stats(Oid relid, Expr *expr);
static HeapTuple attr_stats(Oid relid, AttrNumber attno);
static double attr_distinct(Oid relid, AttrNumber attno);

/*
 * sampled_rows
 *		About the rows ANALYZE sampled for column attnum of table relid:
 *		300 per unit of its statistics target, at most the table's.
 */
static double
sampled_rows(Oid relid, AttrNumber attnum)
{
	Relation	rel = table_open(relid, NoLock);
	int			target = braid_attstattarget(rel, attnum);
	double		rows = Max(rel->rd_rel->reltuples, 0);

	table_close(rel, NoLock);
	if (target < 0)
		target = default_statistics_target;
	return Min(rows, 300.0 * target);
}

/*
 * values_too_wide
 *		Whether ANALYZE found every sampled non-null value of a key
 *		expression of table relid wider than BRAID_ANALYZE_WIDTH_THRESHOLD
 *		bytes decompressed: the column has statistics and values, but no
 *		most common values, histogram or correlation, which ANALYZE leaves
 *		out only then (compute_scalar_stats).  Its average width is then
 *		that of the values as stored, compressed or out of line (a TOAST
 *		pointer is 18 bytes), not of the keys braidsort encodes.
 */
static bool
values_too_wide(Oid relid, Expr *expr)
{
	HeapTuple	tuple = column_stats(relid, expr);
	Form_pg_statistic stats;
	bool		too_wide = false;

	if (tuple == NULL)
		return false;
	stats = (Form_pg_statistic) GETSTRUCT(tuple);

	/*
	 * Two non-null values sampled at least: one alone gets none of those
	 * statistics either (ANALYZE samples 300 rows per unit of the column's
	 * statistics target).
	 */
	if (sampled_rows(relid, ((Var *) expr)->varattno) * (1.0 - stats->stanullfrac) >= 2.0)
	{
		too_wide = true;
		for (int i = 0; i < STATISTIC_NUM_SLOTS; i++)
		{
			int16		kind = (&stats->stakind1)[i];

			if (kind == STATISTIC_KIND_MCV || kind == STATISTIC_KIND_HISTOGRAM ||
				kind == STATISTIC_KIND_CORRELATION)
				too_wide = false;
		}
	}
	ReleaseSysCache(tuple);
	return too_wide;
}

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
 * braid_plan_value_bytes
 *		Estimated average encoded bytes of a variable-width key expression.
 *		A column's statistics give the width of its values as stored: where
 *		they say every value was too wide for ANALYZE, the key is counted
 *		at least that wide (values compressed in place show a tenth of
 *		their width, or less).  Values only some of which are compressed go
 *		uncounted.
 */
double
braid_plan_value_bytes(Expr *expr, Oid relid)
{
	int32		width = 0;

	/* a column under another collation, or relabelled, is the column */
	while (expr && (IsA(expr, CollateExpr) || IsA(expr, RelabelType)))
		expr = IsA(expr, CollateExpr) ? ((CollateExpr *) expr)->arg :
			((RelabelType *) expr)->arg;
	if (IsA(expr, Var) && ((Var *) expr)->varattno > 0)
	{
		width = get_attavgwidth(relid, ((Var *) expr)->varattno);
		if (width > 0 && width < BRAID_ANALYZE_WIDTH_THRESHOLD &&
			values_too_wide(relid, expr))
			width = BRAID_ANALYZE_WIDTH_THRESHOLD;
	}
	if (width <= 0)
		width = get_typavgwidth(exprType((Node *) expr), exprTypmod((Node *) expr));
	/* drop the (short) varlena header, add the terminator */
	return Max(width - 1, 0) + 2;
}

/*
 * attr_stats
 *		The pg_statistic row of column attno of table relid, if it has
 *		statistics (release it with ReleaseSysCache); else NULL.
 */
static HeapTuple
attr_stats(Oid relid, AttrNumber attno)
{
	HeapTuple	tuple;

	if (!OidIsValid(relid) || attno <= 0)
		return NULL;
	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
							Int16GetDatum(attno), BoolGetDatum(false));
	return HeapTupleIsValid(tuple) ? tuple : NULL;
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
	if (!IsA(expr, Var))
		return NULL;
	return attr_stats(relid, ((Var *) expr)->varattno);
}

/*
 * stats_correlation
 *		ANALYZE's correlation in pg_statistic row tuple (NULL: none), which
 *		it releases; 0 without one.
 */
static double
stats_correlation(HeapTuple tuple)
{
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
	return stats_correlation(column_stats(relid, expr));
}

/*
 * braid_table_correlation
 *		key_correlation for column attno of table rel: the first key of an
 *		adaptive sort in heap TID form, whose switch prices the gather's
 *		rereads (sort_adaptive.c).  Looked up then, as braid_table_ties is.
 */
double
braid_table_correlation(Relation rel, AttrNumber attno)
{
	return stats_correlation(attr_stats(RelationGetRelid(rel), attno));
}

/*
 * braid_plan_key_histogram
 *		For a plain column expr of table relid with statistics and a
 *		histogram: its correlation with the physical order (0 if ANALYZE
 *		gave none), the share of the rows its most common values take (the
 *		histogram leaves them out), and the histogram's bounds, copied
 *		(*nvalues values of the column's type, ascending).  False otherwise.
 */
bool
braid_plan_key_histogram(Oid relid, Expr *expr, double *correlation, double *mcv_share,
						 Datum **values, int *nvalues)
{
	HeapTuple	tuple = column_stats(relid, expr);
	AttStatsSlot sslot;
	bool		found = false;

	*correlation = 0;
	*mcv_share = 0;
	if (tuple == NULL)
		return false;
	if (get_attstatsslot(&sslot, tuple, STATISTIC_KIND_HISTOGRAM, InvalidOid,
						 ATTSTATSSLOT_VALUES))
	{
		int16		typlen;
		bool		typbyval;

		get_typlenbyval(sslot.valuetype, &typlen, &typbyval);
		*nvalues = sslot.nvalues;
		*values = palloc(sizeof(Datum) * Max(sslot.nvalues, 1));
		for (int i = 0; i < sslot.nvalues; i++)
			(*values)[i] = datumCopy(sslot.values[i], typbyval, typlen);
		found = sslot.nvalues >= 2;
		free_attstatsslot(&sslot);
	}
	if (get_attstatsslot(&sslot, tuple, STATISTIC_KIND_CORRELATION, InvalidOid,
						 ATTSTATSSLOT_NUMBERS))
	{
		if (sslot.nnumbers == 1)
			*correlation = sslot.numbers[0];
		free_attstatsslot(&sslot);
	}
	if (get_attstatsslot(&sslot, tuple, STATISTIC_KIND_MCV, InvalidOid,
						 ATTSTATSSLOT_NUMBERS))
	{
		for (int i = 0; i < sslot.nnumbers; i++)
			*mcv_share += sslot.numbers[i];
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(tuple);
	return found;
}

/*
 * braid_sort_input_expr
 *		What a Sort's target entry expr holds: the child's expression for an
 *		OUTER_VAR (a column of the child's output), else expr itself.
 */
Expr *
braid_sort_input_expr(Plan *child, Expr *expr)
{
	if (IsA(expr, Var) && ((Var *) expr)->varno == OUTER_VAR)
	{
		TargetEntry *ctle = get_tle_by_resno(child->targetlist, ((Var *) expr)->varattno);

		if (ctle != NULL)
			return ctle->expr;
	}
	return expr;
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
		Expr	   *expr = braid_sort_input_expr(child, ((TargetEntry *) lfirst(lc))->expr);

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
 *		relid, if it is a plain column with statistics (an index-only
 *		scan's output column, INDEX_VAR, is one of indextlist's); else 0.
 */
static double
key_distinct(Oid relid, Expr *expr, List *indextlist)
{
	if (IsA(expr, Var) && ((Var *) expr)->varno == INDEX_VAR)
	{
		AttrNumber	col = ((Var *) expr)->varattno;

		if (col < 1 || col > list_length(indextlist))
			return 0;
		expr = ((TargetEntry *) list_nth(indextlist, col - 1))->expr;
	}
	return IsA(expr, Var) ? attr_distinct(relid, ((Var *) expr)->varattno) : 0;
}

/*
 * attr_distinct
 *		ANALYZE's number of distinct values of column attno of table relid,
 *		if it has statistics; else 0.
 */
static double
attr_distinct(Oid relid, AttrNumber attno)
{
	HeapTuple	tuple = attr_stats(relid, attno);
	double		distinct;

	if (tuple == NULL)
		return 0;
	distinct = ((Form_pg_statistic) GETSTRUCT(tuple))->stadistinct;
	ReleaseSysCache(tuple);

	/*
	 * negative: a fraction of the rows, which are as many as the table has
	 * now (its density as last counted over its current pages, as the planner
	 * estimates a table's rows): after a bulk load a unique key stays unique
	 */
	if (distinct < 0)
	{
		Relation	rel = table_open(relid, NoLock);
		double		tuples = Max(rel->rd_rel->reltuples, 0);
		double		pages = rel->rd_rel->relpages;

		if (pages > 0 && tuples > 0)
			tuples = Max(tuples, tuples / pages * RelationGetNumberOfBlocks(rel));
		distinct = -distinct * tuples;
		table_close(rel, NoLock);
	}
	return distinct;
}

/*
 * set_ties
 *		The tie_* fields of cost: the first key's distinct values, the
 *		columns from the first variable-width one (first_varwidth, 0 if
 *		none comes before) to the second key's (second), and that key's type.
 */
static void
set_ties(BraidCostInput *cost, double distinct, int first_varwidth, AttrNumber second,
		 Oid second_type)
{
	cost->tie_distinct = distinct;
	cost->tie_walk_columns = first_varwidth > 0 ? second - first_varwidth : 0;
	cost->tie_numeric = getBaseType(second_type) == NUMERICOID;
}

/*
 * braid_tlist_ties
 *		What PostgreSQL's sort does with rows tied on the first of several
 *		keys (costmodel.c, PG_NS_PER_TIE): the first key's distinct values,
 *		and how it reads the second key from its tuples, which are laid out
 *		as tlist (a scan's of table relid, whose statistics are read; the
 *		keys are its columns keycols; indextlist is an index-only scan's,
 *		whose output columns are its index's, else NIL).  Past the first variable-width column
 *		a column has no fixed offset, and heap_getattr steps over each
 *		column from there to it.  Sets cost's tie_* fields.  For the
 *		planner, and for an adaptive sort's switch in value-log form (its
 *		tuplesort holds the child's rows).
 */
void
braid_tlist_ties(const AttrNumber *keycols, List *tlist, List *indextlist, Oid relid,
				 BraidCostInput *cost)
{
	AttrNumber	second = keycols[1];
	TargetEntry *first_tle = get_tle_by_resno(tlist, keycols[0]);
	TargetEntry *second_tle = get_tle_by_resno(tlist, second);
	int			first_varwidth = 0;
	ListCell   *lc;

	if (first_tle == NULL || second_tle == NULL)
		return;
	/* a plan's target list is in resno order */
	foreach(lc, tlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		if (tle->resno >= second)
			break;
		if (get_typlen(exprType((Node *) tle->expr)) < 0)
		{
			first_varwidth = tle->resno;
			break;
		}
	}
	set_ties(cost, key_distinct(relid, first_tle->expr, indextlist), first_varwidth, second,
			 exprType((Node *) second_tle->expr));
}

/*
 * braid_table_ties
 *		braid_tlist_ties for a sort of whole rows of table rel by its columns
 *		keyattnos (at least two): the tuplesort of an adaptive sort in heap
 *		TID form, when its switch weighs staying with PostgreSQL's external
 *		sort (sort_adaptive.c).  Run then, not at planning: most such sorts
 *		never reach a switch, and a small sort's planning looks nothing up.
 *		Past the table's first variable-width column, heap_getattr steps
 *		over every column (dropped ones too) to the second key's.
 */
void
braid_table_ties(Relation rel, const AttrNumber *keyattnos, BraidCostInput *cost)
{
	TupleDesc	desc = RelationGetDescr(rel);
	AttrNumber	second = keyattnos[1];
	int			first_varwidth = 0;

	if (second <= 0 || second > desc->natts)
	{
		cost->tie_distinct = attr_distinct(RelationGetRelid(rel), keyattnos[0]);
		return;
	}
	for (int i = 0; i + 1 < second; i++)
	{
		if (TupleDescAttr(desc, i)->attlen < 0)
		{
			first_varwidth = i + 1;
			break;
		}
	}
	set_ties(cost, attr_distinct(RelationGetRelid(rel), keyattnos[0]), first_varwidth, second,
			 TupleDescAttr(desc, second - 1)->atttypid);
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
	cost->full_key_bytes = keys->full_key_bytes;
	cost->budget_bytes = (double) braid_budget_bytes();
	cost->sort_mem_bytes = (double) work_mem * 1024.0;

	/*
	 * A parallel scan hands each process its own blocks: the rows one process
	 * sorts lie on its share of the table's pages.
	 */
	cost->table_pages = OidIsValid(relid) && child->parallel_aware ?
		table_pages / Max(processes, 1) : table_pages;
	cost->partial = child->parallel_aware;
	cost->table_cached = table_cached;
	if (OidIsValid(relid))
		cost->correlation = key_correlation(relid,
											get_tle_by_resno(child->targetlist,
															 sort->sortColIdx[0])->expr);
	cost->spill_ns_per_byte = braid_plan_spill_ns_per_byte();
	cost->collated = keys->collated;
	if (keys->collated)
	{
		/*
		 * Several collated keys: the strings compared are those of the
		 * combinations, about the product of each key's distinct values
		 * (collated_compares caps it at the rows); unknown if any is.  The
		 * first one's alone decide whether ranks fit (braid_cost_ranks).
		 */
		double		distinct = 1;

		for (int i = keys->collated_key; i < sort->numCols; i++)
		{
			BraidKeyColumn col;
			char	   *why;
			double		d;

			if (!braid_key_column_for(sort->sortOperators[i], sort->collations[i],
									  sort->nullsFirst[i], &col, &why) ||
				!BRAID_KEY_IS_COLLATED(col.kind))
				continue;
			d = OidIsValid(relid) ?
				key_distinct(relid, get_tle_by_resno(child->targetlist,
													 sort->sortColIdx[i])->expr, NIL) : 0;
			if (cost->collated_keys++ == 0)
				cost->collated_first_distinct = d;
			if (distinct > 0)
				distinct *= d;
		}
		if (OidIsValid(relid))
			cost->collated_distinct = distinct;
	}

	/*
	 * A collated key after others is compared only between rows tied on them:
	 * about rows / their distinct combinations at a time.  Without statistics
	 * for them (a value log's input, an expression), unknown: the cost model
	 * then weighs every row reaching the collation and none (a UNION ordered
	 * by a unique key), and counts the one less favourable to braidsort.
	 */
	if (keys->collated && keys->collated_key > 0)
	{
		double		prefix = 1;

		for (int i = 0; i < keys->collated_key && prefix > 0; i++)
			prefix *= OidIsValid(relid) ?
				key_distinct(relid, get_tle_by_resno(child->targetlist,
													 sort->sortColIdx[i])->expr, NIL) : 0;
		cost->collated_group_rows = prefix > 0 ? Max(cost->rows / prefix, 1.0) : -1.0;
	}
	cost->numeric_key = keys->numeric_first;
	cost->abbreviated_key = keys->abbreviated_first;
	if (sort->numCols > 1 && OidIsValid(relid))
		braid_tlist_ties(sort->sortColIdx, child->targetlist, NIL, relid, cost);
	else if (sort->numCols > 1 && IsA(child, IndexOnlyScan))
		braid_tlist_ties(sort->sortColIdx, child->targetlist,
						 ((IndexOnlyScan *) child)->indextlist,
						 IndexGetRelation(((IndexOnlyScan *) child)->indexid, false), cost);
	cost->processes = processes;
	cost->cpus = braid_pool_cpus();
	cost->sort_threads = braid_sort_thread_count(processes);
}

/*
 * The statement whose unused profile was last reported (see
 * note_unused_profile): each sort and join costed asks for the device's
 * costs, but the DEBUG1 message comes once per statement.
 */
static LocalTransactionId unused_profile_lxid = InvalidLocalTransactionId;
static TimestampTz unused_profile_stmt = 0;

/*
 * note_unused_profile
 *		Called where the planner found no profile it may use for tablespace
 *		spc: if one is stored but was taken under other emulation settings,
 *		say so at DEBUG1, once per statement.  A profile taken to try
 *		emulation, and kept after it was turned off, would otherwise
 *		silently stop counting.
 */
static void
note_unused_profile(Oid spc)
{
	BraidProfile p;

	if (!message_level_is_interesting(DEBUG1) ||
		(unused_profile_lxid == BRAID_MY_LXID &&
		 unused_profile_stmt == GetCurrentStatementStartTimestamp()) ||
		braid_sched_profile_status(spc, &p) != BRAID_PROFILE_OTHER_EMULATION)
		return;
	unused_profile_lxid = BRAID_MY_LXID;
	unused_profile_stmt = GetCurrentStatementStartTimestamp();
	ereport(DEBUG1,
			(errmsg("braidsort ignores the device profile of tablespace \"%s\": it was taken under other emulation settings",
					get_tablespace_name(spc)),
			 p.emulate_parallelism < 0 ?
			 errdetail("Profiled with emulate_read_ns %d, emulate_write_ns %d and unrecorded emulate_parallelism; now %d, %d and %d.",
					   p.emulate_read_ns, p.emulate_write_ns,
					   braid_emulate_read_ns, braid_emulate_write_ns,
					   braid_emulate_parallelism) :
			 errdetail("Profiled with emulate_read_ns %d, emulate_write_ns %d, emulate_interference_ns %d and emulate_parallelism %d; now %d, %d, %d and %d.",
					   p.emulate_read_ns, p.emulate_write_ns,
					   p.emulate_interference_ns, p.emulate_parallelism,
					   braid_emulate_read_ns, braid_emulate_write_ns,
					   braid_emulate_interference_ns, braid_emulate_parallelism),
			 errhint("Profile the device again with braidsort.profile_device(), or drop the profile with braidsort.forget_profile().")));
}

/*
 * braid_plan_spill_ns_per_byte
 *		What writing a byte to the spill device and reading it back costs,
 *		from its profile (braid_sched_spill_ns_per_byte); 0 without one
 *		this backend may use (note_unused_profile).
 */
double
braid_plan_spill_ns_per_byte(void)
{
	Oid			spc = braid_spill_tablespace_guess();
	double		ns = braid_sched_spill_ns_per_byte(spc);

	if (ns <= 0)
		note_unused_profile(spc);
	return ns;
}

/*
 * braid_plan_spill_line_ns
 *		What the spill device costs per 64-byte line written and read: from
 *		the stored profile of the spill tablespace when it was taken under
 *		the emulation in force now, else the emulation settings on top of
 *		*write_ns and *read_ns as given (the caller's model defaults), as if
 *		there were no profile (note_unused_profile).
 */
void
braid_plan_spill_line_ns(double *write_ns, double *read_ns)
{
	Oid			spc = braid_spill_tablespace_guess();
	double		w = 0,
				r = 0;

	if (braid_sched_spill_line_ns(spc, &w, &r))
	{
		*write_ns = w;
		*read_ns = r;
		return;
	}
	note_unused_profile(spc);
	*write_ns += braid_emulate_write_ns;
	*read_ns += braid_emulate_read_ns;
}

/*
 * braid_cost_margin_text
 *		For the message of a sort declined on cost, the margin the cost model
 *		applied ("braidsort 1075 ms, PostgreSQL 1247 ms" would read as a win
 *		declined): braidsort's estimate must be at most BRAID_COST_MARGIN of
 *		PostgreSQL's.  Empty for a sort declined for another reason.
 */
char *
braid_cost_margin_text(const BraidCostEstimate *est)
{
	if (est->prefers || est->small)
		return "";
	return psprintf("; braidsort takes a sort only if its estimate is at most %.0f%% of PostgreSQL's, %s ms",
					BRAID_COST_MARGIN * 100.0,
					braid_ms_text(est->pg_ns * BRAID_COST_MARGIN / 1e6));
}

/*
 * braid_ms_text
 *		An estimate in ms for a debug1 message: whole ms from 10 ms on, two
 *		decimals below, where "1 ms against 2 ms" would hide what was
 *		weighed.
 */
char *
braid_ms_text(double ms)
{
	return psprintf(ms >= 10.0 || ms <= -10.0 ? "%.0f" : "%.2f", ms);
}

/*
 * braid_plan_wl_input
 *		The write-limited sorts' cost model input (wlimit.h) for a sort of
 *		"rows" entries of "stride" bytes (a key prefix of keylen; the whole
 *		encoded key key_bytes, 0 if not estimated), each with
 *		key_memory bytes of full key kept aside (0: none), within "budget"
 *		bytes: what the device costs per line (braid_plan_spill_line_ns)
 *		and the CPU costs of the model's defaults.  Full keys share the
 *		budget with the entries, in a build's runs as in a selection pass's
 *		candidates (braid_runs_put, make_candidate_room).  select_collated_ns is
 *		what a selection pass's candidate costs more than a run's entry
 *		when collated keys are ranked in runs and compared by the collation
 *		in the passes (BraidSortPlanData.select_collated_ns).  Used by the
 *		planner and, for lazy's rule, at run time.
 */
void
braid_plan_wl_input(BraidWlInput *in, double rows, uint32 stride, uint32 keylen,
					double key_bytes, double key_memory, size_t budget, int fanin, bool can_reread,
					bool value_log, double select_collated_ns)
{
	double		map_bytes = value_log ? (double) budget / 2 : (double) budget;

	braid_wl_input_defaults(in);
	in->rows = Max(rows, 0.0);
	/* as the runtime's budget-full (sort/sort_wlimit.c, wl_start_build) */
	in->budget_entries = Max(braid_cost_budget_rows(in->rows, key_memory, map_bytes, stride),
							 1.0);

	/*
	 * A selection pass's candidates (after lazy's build, and segment's
	 * virtual run) have half the whole budget whether or not a value log has
	 * the IndexMap's other half (wl_start_build, wl_end_build): with one, as
	 * many as the IndexMap holds.
	 */
	in->pass_room_entries = Max(braid_cost_budget_rows(in->rows, key_memory,
													   (double) budget / 2, stride),
								1.0);
	/* a front-coded record: lengths, the unshared part of the key, the ref */
	in->run_entry_bytes = key_bytes > 0 ? braid_wl_run_entry_bytes(key_bytes) :
		1.0 + 0.75 * keylen + 5.0;	/* not estimated (collated keys) */
	/* lazy's entry log: two length varints, the ref, the whole key */
	in->mat_entry_bytes = 2.0 + sizeof(uint64) + (key_bytes > 0 ? key_bytes : keylen);
	in->fanin = Max(fanin, 2);
	in->can_reread = can_reread;
	in->select_cpu_ns += Max(select_collated_ns, 0.0);
	braid_plan_spill_line_ns(&in->write_ns, &in->read_ns);
}

/*
 * braid_plan_sort_mode
 *		The write-limited mode a sort of "rows" entries (key prefix keylen,
 *		whole encoded key key_bytes, key_memory bytes of full key kept aside
 *		each) would run should its IndexMap outgrow the budget: every mode's
 *		estimate at braidsort.write_intensity (est), and the mode
 *		braidsort.sort_mode asks for -- the cost model's fastest within the
 *		write intensity under auto (MergePass, where allowed, unless another
 *		is 5% faster: braid_wl_choose).  A mode that re-reads its input needs
 *		an input it can read again (can_reread), else hybrid runs.  *share
 *		is the share of the input a segment sort puts through runs: the
 *		model's choice, or half when that choice is all of it and the DBA
 *		asked for segment (all of it would be a hybrid sort), est[SEGMENT]
 *		then that half's estimate.  gather_bytes
 *		and gather_pass_ms describe the late gather by TID (0: none), whose
 *		batches lose the memory a mode holds during it; select_collated_ns
 *		the selection passes' unranked collated comparisons
 *		(braid_plan_wl_input).
 */
BraidWlMode
braid_plan_sort_mode(double rows, int keylen, double key_bytes, double key_memory,
					 bool value_log, bool can_reread,
					 double gather_bytes, double gather_pass_ms, double select_collated_ns,
					 BraidWlEstimate est[BRAID_WL_NMODES], double *share)
{
	size_t		budget = braid_budget_bytes();
	int			fanin = braid_cost_merge_fanin((double) budget, (double) keylen);
	uint32		stride = (uint32) keylen + BRAID_REF_BYTES;
	BraidWlInput in;
	BraidWlMode chosen;

	braid_plan_wl_input(&in, rows, stride, (uint32) keylen, key_bytes, key_memory, budget, fanin,
						can_reread, value_log, select_collated_ns);
	in.gather_bytes = gather_bytes;
	in.budget_bytes = (double) budget;
	in.gather_pass_ms = gather_pass_ms;
	chosen = braid_wl_choose(&in, braid_write_intensity, est);
	if (braid_sort_mode != BRAID_SORT_MODE_AUTO)
		chosen = (BraidWlMode) (braid_sort_mode - BRAID_SORT_MODE_MERGEPASS);
	if ((chosen == BRAID_WL_SEGMENT || chosen == BRAID_WL_LAZY) && !can_reread)
		chosen = BRAID_WL_HYBRID;
	*share = est[BRAID_WL_SEGMENT].segment_share;
	if (chosen == BRAID_WL_SEGMENT && braid_sort_mode == BRAID_SORT_MODE_SEGMENT &&
		braid_write_intensity < 0 && *share >= 0.99)
	{
		/* the estimate is of the share that runs (sort_modes() shows it) */
		*share = 0.5;
		braid_wl_estimate_segment(&in, *share, &est[BRAID_WL_SEGMENT]);
	}
	return chosen;
}

/*
 * braid_parallel_divisor
 *		The processes' shares of a parallel plan's rows together, in
 *		shares of one worker, as the planner divides them
 *		(get_parallel_divisor): each of num_workers, and the leader less 0.3
 *		for each worker it collects from, unless it only collects.
 */
double
braid_parallel_divisor(int num_workers)
{
	double		divisor = num_workers;

	if (parallel_leader_participation && 1.0 - 0.3 * num_workers > 0)
		divisor += 1.0 - 0.3 * num_workers;
	return Max(divisor, 1.0);
}

/*
 * braid_sort_has_room
 *		braid_spill_has_room for a sort gathering from "from": what its
 *		processes may hold on the device, each its own sort
 *		(braid_cost_device_bytes of in->rows: the whole input in each, or,
 *		where each sorts its share of a parallel scan, a worker's share,
 *		times the shares of all of them: the leader's is smaller), or, for
 *		a shared sort of shared_rows rows (0: not one), what all of them
 *		leave there (braid_cost_shared_device_bytes).  The planner gives each process
 *		of a parallel plan its rows over the parallel divisor, which counts
 *		the leader as a part of a process: a shared sort's processes hold
 *		the Gather's rows, not that times the processes.
 */
bool
braid_sort_has_room(const BraidCostInput *in, BraidGatherFrom from, double shared_rows,
					char **why)
{
	int			processes = Max(in->processes, 1);
	double		bytes;

	if (shared_rows > 0)
	{
		BraidCostInput share = *in;

		share.rows = shared_rows / processes;
		bytes = braid_cost_shared_device_bytes(&share, from, processes);
	}
	else
	{
		int			workers = parallel_leader_participation ? processes - 1 : processes;

		bytes = braid_cost_device_bytes(in, from) *
			(processes > 1 && in->partial ? braid_parallel_divisor(workers) : (double) processes);
	}
	return braid_spill_has_room(bytes, "sort", why);
}
