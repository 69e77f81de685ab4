/*-------------------------------------------------------------------------
 *
 * plandata.c
 *	  Packing BraidSortPlanData into a CustomScan's custom_private list and
 *	  back, and its sort keys as EXPLAIN and braidsort.sort_modes() show
 *	  them.
 *
 * The list holds, in order: the sort operators (OID list), collations (OID
 * list), NULLS FIRST flags (int list), the scalar parameters (int list, in
 * the order of the PARAM_* numbers below), the key expressions, the value
 * log's key columns (int list) and, in heap TID mode when keys are read
 * from the unprojected scan tuple, their table columns (int list).
 *
 * src/plan/plandata.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/stratnum.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"

#include "compat.h"
#include "plan/plandata.h"

/* positions in custom_private */
#define PRIV_SORTOPS		0
#define PRIV_COLLATIONS		1
#define PRIV_NULLSFIRST		2
#define PRIV_PARAMS			3
#define PRIV_KEYEXPRS		4
#define PRIV_KEYCOLS		5
#define PRIV_KEYATTNOS		6	/* optional */

/* positions in the parameter list */
#define PARAM_KEYLEN		0
#define PARAM_TRUNCATES		1
#define PARAM_TUPLE_WIDTH	2
#define PARAM_EXPECT_SPILL	3
#define PARAM_MODE			4
#define PARAM_PROCESSES		5
#define PARAM_WL_MODE		6
#define PARAM_WL_INTENSITY	7	/* millionths, or -1000000 */
#define PARAM_WL_SHARE		8	/* millionths */
#define PARAM_CAN_REREAD	9
#define PARAM_GATHER_KB		10
#define PARAM_GATHER_PASS_US 11
#define PARAM_ADAPTIVE		12
#define PARAM_SORT_WIDTH	13
#define PARAM_KEY_MEMORY	14
#define PARAM_RANK_COLLATED	15
#define PARAM_SELECT_COLLATED_NS 16
#define PARAM_EST_BRAID		17	/* tenths of ms; -1: not estimated */
#define PARAM_EST_PG		18
#define PARAM_KEY_TENTHS	19

/* attnos_to_list: an int list of n column numbers. */
static List *
attnos_to_list(const AttrNumber *attnos, int n)
{
	List	   *list = NIL;

	for (int i = 0; i < n; i++)
		list = lappend_int(list, attnos[i]);
	return list;
}

/* list_to_attnos: n column numbers from an int list. */
static AttrNumber *
list_to_attnos(List *list, int n)
{
	AttrNumber *attnos = palloc(sizeof(AttrNumber) * n);

	if (list_length(list) != n)
		elog(ERROR, "braidsort: plan has %d key columns for %d keys",
			 list_length(list), n);
	for (int i = 0; i < n; i++)
		attnos[i] = (AttrNumber) list_nth_int(list, i);
	return attnos;
}

/*
 * braid_plan_pack
 *		The custom_private list for a BraidSort CustomScan.
 */
List *
braid_plan_pack(const BraidSortPlanData *data)
{
	List	   *sortops = NIL;
	List	   *collations = NIL;
	List	   *nullsfirst = NIL;
	List	   *params;
	List	   *private;

	for (int i = 0; i < data->nkeys; i++)
	{
		sortops = lappend_oid(sortops, data->sortops[i]);
		collations = lappend_oid(collations, data->collations[i]);
		nullsfirst = lappend_int(nullsfirst, data->nullsfirst[i] ? 1 : 0);
	}
	params = list_make5_int(data->keylen, data->truncates ? 1 : 0,
							data->tuple_width, data->expect_spill ? 1 : 0,
							data->mode);
	params = lappend_int(params, data->processes);
	params = lappend_int(params, data->wl_mode);
	params = lappend_int(params, (int) rint(data->write_intensity * 1e6));
	params = lappend_int(params, (int) rint(data->segment_share * 1e6));
	params = lappend_int(params, data->can_reread ? 1 : 0);
	params = lappend_int(params, data->gather_kb);
	params = lappend_int(params, data->gather_pass_us);
	params = lappend_int(params, data->adaptive ? 1 : 0);
	params = lappend_int(params, data->sort_width);
	params = lappend_int(params, data->key_memory);
	params = lappend_int(params, data->rank_collated ? 1 : 0);
	params = lappend_int(params, data->select_collated_ns);
	params = lappend_int(params, data->est_braid_tenth_ms);
	params = lappend_int(params, data->est_pg_tenth_ms);
	params = lappend_int(params, data->key_tenths);

	private = list_make5(sortops, collations, nullsfirst, params, data->keyexprs);
	private = lappend(private, attnos_to_list(data->keycols, data->nkeys));
	if (data->keyattnos != NULL)
		private = lappend(private, attnos_to_list(data->keyattnos, data->nkeys));
	return private;
}

/*
 * braid_plan_unpack
 *		Read back what braid_plan_pack() packed (arrays in the current
 *		memory context).
 */
void
braid_plan_unpack(List *private, BraidSortPlanData *data)
{
	List	   *sortops = list_nth(private, PRIV_SORTOPS);
	List	   *collations = list_nth(private, PRIV_COLLATIONS);
	List	   *nullsfirst = list_nth(private, PRIV_NULLSFIRST);
	List	   *params = list_nth(private, PRIV_PARAMS);
	int			n = list_length(sortops);

	data->nkeys = n;
	data->sortops = palloc(sizeof(Oid) * n);
	data->collations = palloc(sizeof(Oid) * n);
	data->nullsfirst = palloc(sizeof(bool) * n);
	for (int i = 0; i < n; i++)
	{
		data->sortops[i] = list_nth_oid(sortops, i);
		data->collations[i] = list_nth_oid(collations, i);
		data->nullsfirst[i] = list_nth_int(nullsfirst, i) != 0;
	}
	data->keyexprs = list_nth(private, PRIV_KEYEXPRS);
	data->keycols = list_to_attnos(list_nth(private, PRIV_KEYCOLS), n);
	data->keyattnos = list_length(private) > PRIV_KEYATTNOS ?
		list_to_attnos(list_nth(private, PRIV_KEYATTNOS), n) : NULL;
	data->keylen = list_nth_int(params, PARAM_KEYLEN);
	data->truncates = list_nth_int(params, PARAM_TRUNCATES) != 0;
	data->tuple_width = list_nth_int(params, PARAM_TUPLE_WIDTH);
	data->expect_spill = list_nth_int(params, PARAM_EXPECT_SPILL) != 0;
	data->mode = list_nth_int(params, PARAM_MODE);
	data->processes = list_nth_int(params, PARAM_PROCESSES);
	data->wl_mode = list_nth_int(params, PARAM_WL_MODE);
	data->write_intensity = list_nth_int(params, PARAM_WL_INTENSITY) / 1e6;
	data->segment_share = list_nth_int(params, PARAM_WL_SHARE) / 1e6;
	data->can_reread = list_nth_int(params, PARAM_CAN_REREAD) != 0;
	data->gather_kb = list_nth_int(params, PARAM_GATHER_KB);
	data->gather_pass_us = list_nth_int(params, PARAM_GATHER_PASS_US);
	data->adaptive = list_nth_int(params, PARAM_ADAPTIVE) != 0;
	data->sort_width = list_nth_int(params, PARAM_SORT_WIDTH);
	data->key_memory = list_nth_int(params, PARAM_KEY_MEMORY);
	data->rank_collated = list_nth_int(params, PARAM_RANK_COLLATED) != 0;
	data->select_collated_ns = list_nth_int(params, PARAM_SELECT_COLLATED_NS);
	data->est_braid_tenth_ms = list_nth_int(params, PARAM_EST_BRAID);
	data->est_pg_tenth_ms = list_nth_int(params, PARAM_EST_PG);
	data->key_tenths = list_nth_int(params, PARAM_KEY_TENTHS);
}

/*
 * sort_key_text
 *		One "Sort Key" item as EXPLAIN shows it for a Sort.
 */
static char *
sort_key_text(Node *expr, Oid sortop, Oid collation, bool nullsfirst,
			  List *context, bool useprefix)
{
	Oid			type = exprType(expr);
	TypeCacheEntry *typentry = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	StringInfoData buf;
	Oid			opfamily;
	Oid			opcintype;
	BraidOrderDirection strategy;
	bool		reverse;

	/* descending as the key's encoder has it (braid_key_column_for) */
	reverse = get_ordering_op_properties(sortop, &opfamily, &opcintype, &strategy) &&
		strategy == BRAID_ORDER_GREATER;

	/*
	 * A Sort's key is a reference to its input's output, which ruleutils
	 * parenthesizes when that is not a plain column; a node that reads the
	 * table itself has the expression: parenthesized the same.
	 */
	initStringInfo(&buf);
	if (IsA(expr, Var))
		appendStringInfoString(&buf, deparse_expression(expr, context, useprefix, true));
	else
		appendStringInfo(&buf, "(%s)", deparse_expression(expr, context, useprefix, true));
	if (OidIsValid(collation) && collation != get_typcollation(type))
		appendStringInfo(&buf, " COLLATE %s",
						 quote_identifier(get_collation_name(collation)));
	if (sortop == typentry->gt_opr)
		appendStringInfoString(&buf, " DESC");
	else if (sortop != typentry->lt_opr)
		appendStringInfo(&buf, " USING %s", get_opname(sortop));
	if (nullsfirst && !reverse)
		appendStringInfoString(&buf, " NULLS FIRST");
	else if (!nullsfirst && reverse)
		appendStringInfoString(&buf, " NULLS LAST");
	return buf.data;
}

/*
 * braid_plan_key_list
 *		The node's sort keys as EXPLAIN lists them (context: a deparse
 *		context set to the node), one string each.
 */
List *
braid_plan_key_list(const BraidSortPlanData *data, List *context, bool useprefix)
{
	List	   *keys = NIL;

	for (int i = 0; i < data->nkeys; i++)
		keys = lappend(keys, sort_key_text(list_nth(data->keyexprs, i),
										   data->sortops[i], data->collations[i],
										   data->nullsfirst[i], context, useprefix));
	return keys;
}
