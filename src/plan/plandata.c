/*-------------------------------------------------------------------------
 *
 * plandata.c
 *	  Packing BraidSortPlanData into a CustomScan's custom_private list and
 *	  back, and its sort keys as EXPLAIN and braidsort.sort_modes() show
 *	  them.
 *
 * The list holds two items: a blob (a bytea Const: copyable, printable and
 * read back by a parallel worker like any constant) with the scalar
 * parameters and the keys' operators, collations, columns and NULLS FIRST
 * flags, and the key expressions (for EXPLAIN).
 *
 * src/plan/plandata.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"

#include "compat.h"
#include "plan/plandata.h"

/*
 * The blob: a bytea whose header is the scalar parameters (in the order of
 * the PARAM_* numbers), followed by the keys' arrays.  A list of a dozen
 * integer lists cost a short query's planning about as much as the rest of
 * braidsort's decision, and its executor start as much again to read back.
 */
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
#define PARAM_REPLACED_WORKERS 20
#define PARAM_SHARED		21
#define PARAM_COUNT			22

typedef struct PackedSortPlan
{
	int32		vl_len_;		/* varlena header (do not touch directly) */
	int32		nkeys;
	int32		has_keyattnos;	/* keyattnos[] holds the keys' table columns */
	int32		params[PARAM_COUNT];

	/*
	 * sortops[nkeys], collations[nkeys] (Oid), keycols[nkeys],
	 * keyattnos[nkeys] (AttrNumber), nullsfirst[nkeys] (bool): each array
	 * aligned for its type as long as the blob is (palloc'd, as a Const's
	 * value always is)
	 */
	char		keys[FLEXIBLE_ARRAY_MEMBER];
} PackedSortPlan;

/* packed_size: bytes of the blob of a plan with n keys. */
static Size
packed_size(int n)
{
	return offsetof(PackedSortPlan, keys) +
		(Size) n * (2 * sizeof(Oid) + 2 * sizeof(AttrNumber) + sizeof(bool));
}

/*
 * braid_plan_pack
 *		The custom_private list for a BraidSort CustomScan: the blob (a
 *		bytea Const) and the key expressions.
 */
List *
braid_plan_pack(const BraidSortPlanData *data)
{
	int			n = data->nkeys;
	Size		size = packed_size(n);
	PackedSortPlan *p = palloc0(size);
	char	   *at = p->keys;

	SET_VARSIZE(p, size);
	p->nkeys = n;
	p->has_keyattnos = data->keyattnos != NULL;
	p->params[PARAM_KEYLEN] = data->keylen;
	p->params[PARAM_TRUNCATES] = data->truncates ? 1 : 0;
	p->params[PARAM_TUPLE_WIDTH] = data->tuple_width;
	p->params[PARAM_EXPECT_SPILL] = data->expect_spill ? 1 : 0;
	p->params[PARAM_MODE] = data->mode;
	p->params[PARAM_PROCESSES] = data->processes;
	p->params[PARAM_WL_MODE] = data->wl_mode;
	p->params[PARAM_WL_INTENSITY] = (int32) rint(data->write_intensity * 1e6);
	p->params[PARAM_WL_SHARE] = (int32) rint(data->segment_share * 1e6);
	p->params[PARAM_CAN_REREAD] = data->can_reread ? 1 : 0;
	p->params[PARAM_GATHER_KB] = data->gather_kb;
	p->params[PARAM_GATHER_PASS_US] = data->gather_pass_us;
	p->params[PARAM_ADAPTIVE] = data->adaptive ? 1 : 0;
	p->params[PARAM_SORT_WIDTH] = data->sort_width;
	p->params[PARAM_KEY_MEMORY] = data->key_memory;
	p->params[PARAM_RANK_COLLATED] = data->rank_collated ? 1 : 0;
	p->params[PARAM_SELECT_COLLATED_NS] = data->select_collated_ns;
	p->params[PARAM_EST_BRAID] = data->est_braid_tenth_ms;
	p->params[PARAM_EST_PG] = data->est_pg_tenth_ms;
	p->params[PARAM_KEY_TENTHS] = data->key_tenths;
	p->params[PARAM_REPLACED_WORKERS] = data->replaced_workers;
	p->params[PARAM_SHARED] = data->shared ? 1 : 0;

	memcpy(at, data->sortops, n * sizeof(Oid));
	at += n * sizeof(Oid);
	memcpy(at, data->collations, n * sizeof(Oid));
	at += n * sizeof(Oid);
	memcpy(at, data->keycols, n * sizeof(AttrNumber));
	at += n * sizeof(AttrNumber);
	if (data->keyattnos != NULL)
		memcpy(at, data->keyattnos, n * sizeof(AttrNumber));
	at += n * sizeof(AttrNumber);
	memcpy(at, data->nullsfirst, n * sizeof(bool));

	return list_make2(makeConst(BYTEAOID, -1, InvalidOid, -1, PointerGetDatum(p),
								false, false),
					  data->keyexprs);
}

/*
 * braid_plan_unpack
 *		Read back what braid_plan_pack() packed.  The key arrays point into
 *		the plan, which they must not outlive, and are not to be written.
 */
void
braid_plan_unpack(List *private, BraidSortPlanData *data)
{
	Const	   *blob = linitial_node(Const, private);
	PackedSortPlan *p = (PackedSortPlan *) DatumGetPointer(blob->constvalue);
	const int32 *params = p->params;
	char	   *at = p->keys;
	int			n;

	if (blob->consttype != BYTEAOID || blob->constisnull || VARATT_IS_EXTENDED(p) ||
		p->nkeys < 0 || VARSIZE(p) != packed_size(p->nkeys) ||
		(uintptr_t) p % MAXIMUM_ALIGNOF != 0)
		elog(ERROR, "braidsort: plan data is not in this version's form");
	n = p->nkeys;
	data->nkeys = n;
	data->sortops = (Oid *) at;
	at += n * sizeof(Oid);
	data->collations = (Oid *) at;
	at += n * sizeof(Oid);
	data->keycols = (AttrNumber *) at;
	at += n * sizeof(AttrNumber);
	data->keyattnos = p->has_keyattnos ? (AttrNumber *) at : NULL;
	at += n * sizeof(AttrNumber);
	data->nullsfirst = (bool *) at;
	data->keyexprs = (List *) lsecond(private);

	data->keylen = params[PARAM_KEYLEN];
	data->truncates = params[PARAM_TRUNCATES] != 0;
	data->tuple_width = params[PARAM_TUPLE_WIDTH];
	data->expect_spill = params[PARAM_EXPECT_SPILL] != 0;
	data->mode = params[PARAM_MODE];
	data->processes = params[PARAM_PROCESSES];
	data->wl_mode = params[PARAM_WL_MODE];
	data->write_intensity = params[PARAM_WL_INTENSITY] / 1e6;
	data->segment_share = params[PARAM_WL_SHARE] / 1e6;
	data->can_reread = params[PARAM_CAN_REREAD] != 0;
	data->gather_kb = params[PARAM_GATHER_KB];
	data->gather_pass_us = params[PARAM_GATHER_PASS_US];
	data->adaptive = params[PARAM_ADAPTIVE] != 0;
	data->sort_width = params[PARAM_SORT_WIDTH];
	data->key_memory = params[PARAM_KEY_MEMORY];
	data->rank_collated = params[PARAM_RANK_COLLATED] != 0;
	data->select_collated_ns = params[PARAM_SELECT_COLLATED_NS];
	data->est_braid_tenth_ms = params[PARAM_EST_BRAID];
	data->est_pg_tenth_ms = params[PARAM_EST_PG];
	data->key_tenths = params[PARAM_KEY_TENTHS];
	data->replaced_workers = params[PARAM_REPLACED_WORKERS];
	data->shared = params[PARAM_SHARED] != 0;
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
