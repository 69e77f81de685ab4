/*-------------------------------------------------------------------------
 *
 * joindata.c
 *	  What the planner leaves a BraidJoin: its plan data packed into the
 *	  CustomScan's custom_private list and back, the exact forms of keys,
 *	  and the join cost model's input and choice of mode, which the
 *	  planner, braidsort.join_modes() and the node at run time share.
 *
 * src/plan/joindata.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "guc.h"
#include "plan/joindata.h"
#include "plan/plancost.h"

/* positions in the parameter list of custom_private */
#define JP_JOINTYPE		0
#define JP_SINGLE		1
#define JP_MODE			2
#define JP_INTENSITY	3		/* millionths, or -1000000 */
#define JP_PARTITIONS	4
#define JP_INNER_WIDTH	5
#define JP_OUTER_WIDTH	6
#define JP_PG_BATCHES	7
#define JP_FLAGS		8		/* bits: inner_by_tid, outer_by_tid,
								 * inner_rescan, outer_rescan, exact_key,
								 * shared_inner */
#define JP_PG_SHARERS	9

/*
 * pack_float
 *		A Float node for a count in the plan data.  Its text always has a
 *		decimal point: a plan sent to parallel workers is written out and
 *		read back (nodeToString, stringToNode), and the reader makes a
 *		token of digits alone an Integer, which floatVal() cannot read.
 */
static Node *
pack_float(double value)
{
	if (!isfinite(value))
		value = 0.0;
	return (Node *) makeFloat(psprintf("%.1f", value));
}

/*
 * braid_join_pack
 *		The custom_private list of a BraidJoin: the parameters (JP_*, the
 *		last the processes that would have shared PostgreSQL's table), the
 *		three row estimates and the outer table's uncached pages (as Float
 *		nodes, pack_float: they may exceed an int), the hash operators,
 *		their collations, and the key range bounds (NIL: by hash).
 */
List *
braid_join_pack(const BraidJoinPlanData *data)
{
	List	   *params = NIL;
	List	   *rows;
	int			flags = (data->inner_by_tid ? 1 : 0) | (data->outer_by_tid ? 2 : 0) |
		(data->inner_rescan ? 4 : 0) | (data->outer_rescan ? 8 : 0) |
		(data->exact_key ? 16 : 0) | (data->shared_inner ? 32 : 0);

	params = lappend_int(params, data->jointype);
	params = lappend_int(params, data->single_match ? 1 : 0);
	params = lappend_int(params, data->mode);
	params = lappend_int(params, (int) rint(data->write_intensity * 1e6));
	params = lappend_int(params, data->partitions);
	params = lappend_int(params, data->inner_width);
	params = lappend_int(params, data->outer_width);
	params = lappend_int(params, data->pg_batches);
	params = lappend_int(params, flags);
	params = lappend_int(params, data->pg_sharers);
	rows = list_make4(pack_float(data->inner_rows),
					  pack_float(data->outer_rows),
					  pack_float(data->join_rows),
					  pack_float(data->outer_uncached_pages));
	return list_make5(params, rows, data->hashops, data->hashcolls, data->range_bounds);
}

/*
 * braid_join_unpack
 *		The plan data of a BraidJoin from its custom_private list.
 */
void
braid_join_unpack(List *private, BraidJoinPlanData *data)
{
	List	   *params;
	List	   *rows;
	int			flags;

	if (list_length(private) != 5)
		elog(ERROR, "braidsort: BraidJoin plan data has %d parts, expected 5",
			 list_length(private));
	params = (List *) linitial(private);
	rows = (List *) lsecond(private);
	if (list_length(params) != JP_PG_SHARERS + 1 || list_length(rows) != 4)
		elog(ERROR, "braidsort: malformed BraidJoin plan data");
	data->jointype = list_nth_int(params, JP_JOINTYPE);
	data->single_match = list_nth_int(params, JP_SINGLE) != 0;
	data->mode = list_nth_int(params, JP_MODE);
	data->write_intensity = list_nth_int(params, JP_INTENSITY) / 1e6;
	data->partitions = list_nth_int(params, JP_PARTITIONS);
	data->inner_width = list_nth_int(params, JP_INNER_WIDTH);
	data->outer_width = list_nth_int(params, JP_OUTER_WIDTH);
	data->pg_batches = list_nth_int(params, JP_PG_BATCHES);
	flags = list_nth_int(params, JP_FLAGS);
	data->pg_sharers = list_nth_int(params, JP_PG_SHARERS);
	data->inner_by_tid = (flags & 1) != 0;
	data->outer_by_tid = (flags & 2) != 0;
	data->inner_rescan = (flags & 4) != 0;
	data->outer_rescan = (flags & 8) != 0;
	data->exact_key = (flags & 16) != 0;
	data->shared_inner = (flags & 32) != 0;
	data->inner_rows = floatVal(linitial(rows));
	data->outer_rows = floatVal(lsecond(rows));
	data->join_rows = floatVal(lthird(rows));
	data->outer_uncached_pages = floatVal(lfourth(rows));
	data->hashops = (List *) lthird(private);
	data->hashcolls = (List *) lfourth(private);
	data->range_bounds = (List *) list_nth(private, 4);
}

/*
 * braid_join_model_input
 *		The cost model's input for a join: the plan's estimates, the budget
 *		(bytes for the in-memory table), and the spill device's costs per
 *		line as the sorts get them (braid_plan_spill_line_ns).
 */
void
braid_join_model_input(const BraidJoinPlanData *data, size_t budget, BraidJmInput *in)
{
	braid_jm_input_defaults(in);
	in->inner_rows = data->inner_rows;
	in->outer_rows = data->outer_rows;
	/* inner rows fetched: every output pair, SEMI's matches, ANTI's misses */
	if (data->jointype == JOIN_INNER || data->jointype == JOIN_LEFT)
		in->match_rows = data->join_rows;
	else if (data->exact_key)
		in->match_rows = 0;
	else if (data->jointype == JOIN_SEMI)
		in->match_rows = data->join_rows;
	else
		in->match_rows = Max(data->outer_rows - data->join_rows, 0.0);
	in->budget_bytes = (double) budget;
	in->inner_rescan = data->inner_rescan;
	in->outer_rescan = data->outer_rescan;
	/* each process partitions its share of the inner input (join_shared.c) */
	in->inner_share = data->shared_inner && data->pg_sharers > 1 ? 1.0 / data->pg_sharers : 1.0;

	/*
	 * A side not read by heap TID writes its rows to the value log (an
	 * exact-key inner side keeps no value log: its entries hold the key).
	 */
	in->inner_log_width = data->inner_by_tid || data->exact_key ? 0 : data->inner_width;

	/*
	 * a match fetches its inner row by TID (not with an exact key), at a cost
	 * that grows with the bytes read from it (measured on heap fetches only:
	 * a value log's rows are costed as spilled tuples)
	 */
	in->match_width = data->inner_by_tid && !data->exact_key ? data->inner_width : 0;
	in->outer_log_width = data->outer_by_tid ? 0 : data->outer_width;
	in->outer_uncached_pages = data->outer_uncached_pages;

	/*
	 * partitions by key range: sized with room for the histogram's error
	 * (join_plan.c), and a match's inner row is fetched from a k-th of the
	 * inner table
	 */
	if (data->range_bounds != NIL)
	{
		in->budget_bytes *= JOIN_RANGE_BUDGET_SHARE;
		in->match_fetch_ns = BRAID_JM_RANGE_MATCH_NS;
	}
	braid_plan_spill_line_ns(&in->write_ns, &in->read_ns);
}

/*
 * braid_join_pg_ms
 *		PostgreSQL's batched hash join of the plan's inputs, per process:
 *		where it would have shared its hash table among pg_sharers
 *		processes (a Parallel Hash), each builds and spills its share of the
 *		inner rows (the outer rows are per process already).  The barriers
 *		of a shared table are not costed: the estimate errs toward
 *		PostgreSQL.
 */
double
braid_join_pg_ms(const BraidJoinPlanData *data, const BraidJmInput *in)
{
	BraidJmInput share = *in;

	if (data->pg_sharers > 1)
		share.inner_rows = in->inner_rows / data->pg_sharers;
	return braid_jm_pg_ms(&share, data->pg_batches, data->inner_width, data->outer_width);
}

/*
 * braid_join_choose
 *		Every mode's estimate, and the mode braidsort.join_mode asks for
 *		(auto: the cost model's fastest within braidsort.write_intensity).
 */
BraidJoinMode
braid_join_choose(const BraidJoinPlanData *data, const BraidJmInput *in,
				  BraidJmEstimate est[BRAID_JM_NMODES])
{
	BraidJoinMode best = braid_jm_choose(in, braid_write_intensity, est);

	if (braid_join_mode >= BRAID_JOIN_MODE_GRACE)
		return (BraidJoinMode) (braid_join_mode - BRAID_JOIN_MODE_GRACE);
	return best;
}

/*
 * braid_join_exact_key_type
 *		Is a key of this type equal to another of the exact-key types exactly
 *		when their values as int64 are (join_rows.c converts them)?  The
 *		integers (int2, int4, int8 compare across widths by value), date,
 *		timestamp and timestamptz (integers since an epoch), and oid.
 */
bool
braid_join_exact_key_type(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case OIDOID:
			return true;
		default:
			return false;
	}
}

/*
 * braid_join_exact_form
 *		A key of an exact-key type (braid_join_exact_key_type) as int64: two
 *		keys the join's operator says equal have the same form, and no
 *		others do; the forms of keys of one type, or of two integer types,
 *		are in the keys' order.
 */
int64
braid_join_exact_form(Oid type, Datum value)
{
	switch (type)
	{
		case INT2OID:
			return (int64) DatumGetInt16(value);
		case INT4OID:
		case DATEOID:
			return (int64) DatumGetInt32(value);
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return DatumGetInt64(value);
		case OIDOID:
			return (int64) DatumGetObjectId(value);
		default:
			elog(ERROR, "braidsort: type %u has no exact join key form", type);
			return 0;			/* keep compiler quiet */
	}
}
