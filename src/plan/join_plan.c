/*-------------------------------------------------------------------------
 *
 * join_plan.c
 *	  Planner post-pass for joins: replace a Hash Join that PostgreSQL
 *	  expects to split into batches by a CustomScan "BraidJoin".
 *
 * PostgreSQL has already chosen the hash join (so no plan regresses, and
 * join-method hints keep working); braidsort only swaps the node, after
 * set_plan_references, building it in executable form:
 *
 *	- lefttree is the Hash Join's outer input, righttree the Hash node's
 *	  input (the Hash node goes: its target list is its input's, so INNER_VAR
 *	  column i stays column i).  EXPLAIN VERBOSE decodes OUTER_VAR and
 *	  INNER_VAR through exactly these two, and ExecReScan hands changed
 *	  parameters to them;
 *	- the target list and the other quals are the Hash Join's;
 *	- custom_exprs holds the outer hash keys, the inner hash keys
 *	  (rewritten from the Hash node's OUTER_VAR to INNER_VAR), the join qual
 *	  and the hash clauses; custom_private the plan data (joindata.c).
 *
 * Eligible: INNER, LEFT, SEMI and ANTI joins whose hash functions are
 * strict, of a plain SELECT (planner.c declines the others whole), and
 * PostgreSQL's own sizing (ExecChooseHashTableSize) expecting more than
 * one batch.  A Parallel Hash is taken only over a plain Parallel Seq
 * Scan, whose shares the processes partition together (plan data
 * shared_inner, join/join_shared.c; braidsort.parallel_join = shared) or
 * which each process reads whole (unshared_inner); under a
 * Gather, a join whose processes could not all hold the inner table's
 * blocks is declined unless forced.  Then, unless
 * braidsort.force is on, the cost model must expect a win, and the join
 * must be of the kind its comparison with PostgreSQL was fitted on: an
 * inner table read by TID that shared buffers can hold (not a temporary
 * table, whose local buffers the fetches cannot hold pinned), and written
 * partitions' outer rows fetched back in block order (not an index
 * scan's) from a table within effective_cache_size (one that shared
 * buffers do not hold has each page a round reads back costed, and is
 * declined in parallel workers), in rounds that visit its pages at most 2M
 * times in all (JOIN_MAX_OUTER_PAGE_ROUNDS; beyond_fit).  RIGHT and FULL
 * joins, and the right anti (16+) and right semi (18+) joins that hash the
 * outer side of an anti or semi join, need a match flag per inner row and
 * are left to PostgreSQL.
 *
 * src/plan/join_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/extensible.h"

#include <math.h>

#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/nodeHash.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/spccache.h"

#include "compat.h"
#include "guc.h"
#include "io/device.h"
#include "plan/heapinput.h"
#include "plan/permissions.h"
#include "plan/join_plan.h"
#include "plan/joindata.h"
#include "plan/plancost.h"
#include "core/vlogrow.h"

/*
 * Each round fetching a written partition's outer rows back by TID visits
 * about every page of the outer table (the partition's rows are all over
 * it), or at most one page a row.  bench --join and by hand (plain
 * queries), BraidJoin won clearly with up to 1.8M such page visits in all
 * (45 rounds over 40k pages, 1.32x), narrowly with 2.5M (19 rounds over
 * 133k pages, 1.05x), and lost with 5.1M (38 rounds, 0.89x); the
 * comparison with PostgreSQL was fitted up to 1.2M.  Beyond 2M, without
 * braidsort.force, the join is left to PostgreSQL.
 */
#define JOIN_MAX_OUTER_PAGE_ROUNDS	2.0e6

/*
 * Partitions by key range (range_bounds): an inner table whose key follows
 * its physical order at least this closely (ANALYZE's correlation, either
 * sign); most common values taking at most this share of its rows (the
 * histogram that sizes the partitions leaves them out); partition 0 this
 * share of an equal share, so that a histogram a little off does not make
 * it outgrow the memory during the first pass (it would be written out).
 */
#define JOIN_RANGE_MIN_CORRELATION	0.9
#define JOIN_RANGE_MAX_MCV_SHARE	0.1
#define JOIN_RANGE_FIRST_SHARE		0.9
/*
 * ... and the rows changed since ANALYZE (appended rows all go past the
 * last bound) may fill at most this share of one partition, else
 * partitions are by hash (the partitions' share of the memory is
 * JOIN_RANGE_BUDGET_SHARE, joindata.h).
 */
#define JOIN_RANGE_MAX_CHANGED_SHARE 0.5

/*
 * exact_form_key
 *		Is the join's first key compared by one of the integer equality
 *		operators below, whose two inputs have exact int64 forms of the same
 *		scale: integers with integers, dates with dates, timestamps with
 *		timestamps (timestamptz too), oids with oids?
 */
static bool
exact_form_key(HashJoin *hj, Hash *hash)
{
	Oid			outer_type,
				inner_type;

	if (hj->hashoperators == NIL || hj->hashkeys == NIL || hash->hashkeys == NIL)
		return false;
	switch (get_opcode(linitial_oid(hj->hashoperators)))
	{
		case F_INT2EQ:
		case F_INT4EQ:
		case F_INT8EQ:
		case F_INT24EQ:
		case F_INT42EQ:
		case F_INT28EQ:
		case F_INT82EQ:
		case F_INT48EQ:
		case F_INT84EQ:
		case F_DATE_EQ:
		case F_TIMESTAMP_EQ:
		case F_TIMESTAMPTZ_EQ:
		case F_OIDEQ:
			break;
		default:
			return false;
	}
	outer_type = exprType((Node *) linitial(hj->hashkeys));
	inner_type = exprType((Node *) linitial(hash->hashkeys));
	return braid_join_exact_key_type(outer_type) && braid_join_exact_key_type(inner_type);
}

/*
 * exact_key
 *		Can the join's entries carry its key instead of the inner row's ref?
 *		Only SEMI and ANTI joins (they output no inner column) without a join
 *		qual (nothing else needs the inner row), on one key with an exact
 *		form (exact_form_key).
 */
static bool
exact_key(HashJoin *hj, Hash *hash)
{
	if ((hj->join.jointype != JOIN_SEMI && hj->join.jointype != JOIN_ANTI) ||
		hj->join.joinqual != NIL || list_length(hj->hashoperators) != 1 ||
		list_length(hj->hashkeys) != 1 || list_length(hash->hashkeys) != 1)
		return false;
	return exact_form_key(hj, hash);
}

/*
 * range_bounds
 *		Partitions by key range for a join whose inner table is stored in
 *		about the order of its key (a serial primary key, rows inserted in
 *		time order): each round's inner rows, fetched by TID, then lie in a
 *		k-th of the table instead of all over it, so the fetches stay within
 *		the caches and the TLB's reach (docs/design.md, "Partitions by key
 *		range").  The k - 1 bounds (String nodes of int64 forms) when
 *		  - the first key has an exact form (exact_form_key) and is a column
 *			of the inner table, read whole by a sequential scan without
 *			conditions (the histogram then describes the rows read: a filter
 *			on a column stored in the same order would leave them all in one
 *			partition);
 *		  - the user may read the column and the table has no row-level
 *			security (the bounds, values of the column, are in the plan);
 *		  - ANALYZE's correlation of the column with the physical order is at
 *			least JOIN_RANGE_MIN_CORRELATION (either sign), its most common
 *			values (outside the histogram) take at most
 *			JOIN_RANGE_MAX_MCV_SHARE of the rows, and the rows changed since
 *			would fill at most JOIN_RANGE_MAX_CHANGED_SHARE of a partition;
 *		else NIL (partitions by hash).  Wrong statistics cost time, never
 *		rows: both inputs' rows go by the same bounds, and a partition over
 *		the memory is joined in pieces, each reading its entries again (the
 *		caller keeps the bounds only for a mode that rescans no input: there
 *		each piece would rescan the inputs).  The privileges checked are the
 *		table's own: a child of a partitioned or inherited table scanned
 *		through its parent by a user without them is partitioned by hash.
 */
static List *
range_bounds(PlannedStmt *stmt, HashJoin *hj, Hash *hash, Plan *inner, int k)
{
	Expr	   *expr;
	Var		   *var;
	RangeTblEntry *rte;
	Oid			userid;
	PgStat_StatTabEntry *tabstats;
	double		correlation,
				mcv_share;
	Datum	   *values;
	int			nvalues;
	int64	   *hist;
	int64	   *bounds;
	List	   *result = NIL;

	if (k < 2 || !exact_form_key(hj, hash) || !IsA(inner, SeqScan) || inner->qual != NIL)
		return NIL;
	expr = braid_sort_input_expr(inner, (Expr *) linitial(hash->hashkeys));
	if (!IsA(expr, Var))
		return NIL;
	var = (Var *) expr;
	if (var->varno != ((Scan *) inner)->scanrelid || var->varattno <= 0 || var->varlevelsup != 0)
		return NIL;
	rte = rt_fetch(var->varno, stmt->rtable);
	userid = braid_rte_perm_user(stmt, rte);
	if (check_enable_rls(rte->relid, userid, true) == RLS_ENABLED ||
		(pg_class_aclcheck(rte->relid, userid, ACL_SELECT) != ACLCHECK_OK &&
		 pg_attribute_aclcheck(rte->relid, var->varattno, userid, ACL_SELECT) != ACLCHECK_OK))
		return NIL;
	tabstats = pgstat_fetch_stat_tabentry(rte->relid);
	if (tabstats != NULL &&
		BRAID_TAB_CHANGES(tabstats) > JOIN_RANGE_MAX_CHANGED_SHARE * inner->plan_rows / k)
		return NIL;
	if (!braid_plan_key_histogram(rte->relid, expr, &correlation, &mcv_share, &values, &nvalues) ||
		fabs(correlation) < JOIN_RANGE_MIN_CORRELATION || mcv_share > JOIN_RANGE_MAX_MCV_SHARE)
		return NIL;
	hist = palloc(sizeof(int64) * nvalues);
	for (int i = 0; i < nvalues; i++)
		hist[i] = braid_join_exact_form(var->vartype, values[i]);
	bounds = palloc(sizeof(int64) * (k - 1));
	if (!braid_jm_range_bounds(hist, nvalues, k, JOIN_RANGE_FIRST_SHARE, bounds))
		return NIL;
	for (int j = 0; j < k - 1; j++)
		result = lappend(result, makeString(psprintf(INT64_FORMAT, bounds[j])));
	return result;
}

/* to_inner_var: the Hash node's keys, OUTER_VAR made INNER_VAR. */
static Node *
to_inner_var(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == OUTER_VAR)
	{
		Var		   *var = (Var *) copyObject(node);

		var->varno = INNER_VAR;
		return (Node *) var;
	}
	return expression_tree_mutator(node, to_inner_var, context);
}

/*
 * side_can_rescan
 *		Can this input be read again within one execution of the join?  A
 *		value log always can; a heap scan only as a sort's input can
 *		(braid_heap_rescannable: a plain, serial sequential scan calling
 *		only immutable functions; the same rows again, same snapshot, same
 *		start block), and outside a parallel plan.
 */
static bool
side_can_rescan(Plan *child, bool by_tid, int processes)
{
	if (!by_tid)
		return true;
	return processes == 1 && braid_heap_rescannable(child);
}

/*
 * beyond_fit
 *		Why a join is not of the kind the comparison with PostgreSQL was
 *		fitted on (tables that shared buffers hold, or an outer table the
 *		kernel's cache holds, read by sequential scans in one process, with
 *		up to 1.2M outer page visits in the rounds; no temporary inner
 *		table read by TID), or NULL: every match fetches an inner row by
 *		TID (a join carrying its key has no such matches: match_rows 0),
 *		and a written partition's outer rows are fetched back by TID: a
 *		read of each page in every round where shared buffers do not hold
 *		the table (costed), perhaps from disk where it is larger than
 *		effective_cache_size, a random read where an index scan gave the
 *		rows' order, and a walk over the outer table's pages in every
 *		round; under a Gather, every process holds the inner table's
 *		blocks (JOIN_MAX_HELD_BLOCKS for all).
 */
static char *
beyond_fit(const BraidJoinPlanData *data, const BraidJmEstimate *est, double match_rows,
		   bool outer_index_scan, bool inner_cached, bool inner_temp, double inner_pages,
		   bool outer_cached, double outer_pages, int processes)
{
	bool		fetch_back = est->mat_outer > 0 && data->outer_by_tid;
	double		visits;

	/*
	 * A temporary table's blocks are the session's local buffers, which the
	 * fetches cannot hold pinned nor prefetch: 300k x 3M rows, the inner
	 * table temporary and all of it in temp_buffers, by hand, 1.5x slower
	 * than PostgreSQL's join (the outer table temporary instead: even, and
	 * costed as any other)
	 */
	if (data->inner_by_tid && inner_temp && match_rows > 0)
		return "its inner table is temporary, and every match would fetch an inner row by TID from the session's local buffers";
	if (data->inner_by_tid && !inner_cached && match_rows > 0)
		return "its inner table is larger than half of shared buffers, and every match would fetch an inner row by TID";
	if (fetch_back)
	{
		if (!outer_cached && outer_pages > (double) effective_cache_size)
			return "its outer table is larger than effective_cache_size, and the outer rows of written partitions would be fetched back by TID";
		if (!outer_cached && processes > 1)
			return "its outer table is larger than half of shared buffers, and the outer rows of written partitions would be fetched back by TID in parallel workers (not measured)";
		if (outer_index_scan)
			return "the outer rows of written partitions would be fetched back by TID in index order";
		visits = braid_jm_outer_page_visits(data->outer_rows, outer_pages, est);
		if (visits > JOIN_MAX_OUTER_PAGE_ROUNDS)
			return psprintf("its %d written outer partitions would be fetched back in rounds visiting about %.0f pages of the outer table in all, more than the %.0f measured",
							est->mat_outer, visits, JOIN_MAX_OUTER_PAGE_ROUNDS);
	}

	/*
	 * Under a Gather each process reads the inner table whole and holds its
	 * blocks pinned for the fetches: beyond the server's limit, the processes
	 * left over would fetch through the buffer mapping.
	 */
	if (data->inner_by_tid && match_rows > 0 && processes > 1 &&
		inner_pages * processes > (double) JOIN_MAX_HELD_BLOCKS)
		return psprintf("each of its %d processes would hold the inner table's %.0f blocks, more than a quarter of shared buffers together",
						processes, inner_pages);
	return NULL;
}

/*
 * unshared_inner
 *		The inner input of a Parallel Hash, to be read whole by each process
 *		instead of a share of it into one table: a Parallel Seq Scan becomes
 *		a Seq Scan of the same table (braid_serial_seqscan), with the Hash's
 *		estimate of all the processes' rows together (rows_total: the
 *		scan's own estimate is one process's share).  The shares together
 *		were the table's rows; each process's whole scan sees the same rows
 *		(the same snapshot), so each outer row still meets every inner row
 *		once.  NULL for any other input.
 */
static Plan *
unshared_inner(PlannedStmt *stmt, Hash *hash)
{
	Plan	   *inner = outerPlan(hash);

	return braid_serial_seqscan(stmt, inner, Max(hash->rows_total, inner->plan_rows), NULL);
}

/*
 * join_shape_why
 *		Why the Hash Join cannot be a BraidJoin at all, or NULL: its mode
 *		setting, its type, its shape, a Parallel Hash over anything but a
 *		plain Parallel Seq Scan, init plans, hash functions that are not
 *		strict.  Sets *inner (a Parallel Seq Scan made whole), *pg_sharers
 *		and *pg_workers (the processes that would share PostgreSQL's hash
 *		table, and its workers, for a Parallel Hash).
 */
static char *
join_shape_why(PlannedStmt *stmt, HashJoin *hj, int processes, Plan **inner,
			   int *pg_sharers, int *pg_workers)
{
	Hash	   *hash = (Hash *) innerPlan(hj);
	ListCell   *lc;

	*pg_sharers = 1;
	*pg_workers = 0;
	if (braid_join_mode == BRAID_JOIN_MODE_OFF)
		return "braidsort.join_mode is off";
	switch (hj->join.jointype)
	{
		case JOIN_INNER:
		case JOIN_LEFT:
		case JOIN_SEMI:
		case JOIN_ANTI:
			break;
		case JOIN_RIGHT:
			return "a right join needs a match flag per inner row";
		case JOIN_FULL:
			return "a full join needs a match flag per inner row";
#if PG_VERSION_NUM >= 160000
		case JOIN_RIGHT_ANTI:
			return "a right anti join needs a match flag per inner row";
#endif
#if PG_VERSION_NUM >= 180000
		case JOIN_RIGHT_SEMI:
			return "a right semi join needs a match flag per inner row";
#endif
		default:
			return "join type not supported";
	}
	if (outerPlan(hj) == NULL || hash == NULL || !IsA(hash, Hash) || outerPlan(hash) == NULL)
		return "unexpected plan shape";
	*inner = outerPlan(hash);
	if (hj->join.plan.parallel_aware || hash->plan.parallel_aware)
	{
		/*
		 * A Parallel Hash: each process would build its share of one table.
		 * BraidJoin's tables are its own, so each process reads the inner
		 * input whole instead, as PostgreSQL's hash join without Parallel
		 * Hash does under a Gather; only a plain Parallel Seq Scan can be
		 * made whole.
		 */
		*inner = unshared_inner(stmt, hash);
		if (*inner == NULL)
			return "its inner input is not a plain Parallel Seq Scan, which each process could read whole";
		*pg_sharers = processes;

		/*
		 * PostgreSQL's shared table: one batch if the inner rows fit the
		 * processes' combined memory, else batched as without Parallel Hash
		 */
		*pg_workers = parallel_leader_participation ? processes - 1 : processes;
	}
	if (hash->plan.initPlan != NIL)
		return "the Hash node has init plans";
	foreach(lc, hj->hashoperators)
	{
		RegProcedure left,
					right;

		if (!get_op_hash_functions(lfirst_oid(lc), &left, &right))
			return psprintf("no hash functions for operator %u", lfirst_oid(lc));
		if (!func_strict(left) || !func_strict(right))
			return "a hash function is not strict";
	}
	return NULL;
}

/* What the planner found out about the two inputs' tables. */
typedef struct JoinTables
{
	double		inner_pages;
	bool		inner_cached;
	bool		inner_temp;
	double		outer_pages;
	bool		outer_cached;
} JoinTables;

/*
 * start_join_data
 *		The plan data of the join's inputs: estimates, how each input's rows
 *		are found again (by TID, or a value log) and read again, exact keys;
 *		*tables what the planner found of their tables.
 */
static void
start_join_data(PlannedStmt *stmt, HashJoin *hj, Plan *inner, int processes, int nbatch,
				int pg_sharers, BraidJoinPlanData *data, JoinTables *tables)
{
	Plan	   *outer = outerPlan(hj);
	Hash	   *hash = (Hash *) innerPlan(hj);
	Oid			relid;
	char	   *tid_why;

	memset(data, 0, sizeof(*data));
	memset(tables, 0, sizeof(*tables));
	data->jointype = hj->join.jointype;
	data->single_match = hj->join.inner_unique || hj->join.jointype == JOIN_SEMI;
	data->inner_rows = Max(inner->plan_rows, 1.0);
	data->outer_rows = Max(outer->plan_rows, 1.0);
	data->join_rows = Max(hj->join.plan.plan_rows, 0.0);
	data->inner_width = inner->plan_width;
	data->outer_width = outer->plan_width;
	data->pg_batches = nbatch;
	data->pg_sharers = pg_sharers;
	data->inner_by_tid = braid_heap_tid_input(stmt, inner, &relid, &tables->inner_pages,
											  &tables->inner_cached, &tid_why);
	tables->inner_temp = data->inner_by_tid &&
		get_rel_persistence(relid) == RELPERSISTENCE_TEMP;
	data->outer_by_tid = braid_heap_tid_input(stmt, outer, &relid, &tables->outer_pages,
											  &tables->outer_cached, &tid_why);
	data->inner_rescan = side_can_rescan(inner, data->inner_by_tid, processes);
	data->outer_rescan = side_can_rescan(outer, data->outer_by_tid, processes);
	data->exact_key = exact_key(hj, hash);
	/* rounds would read its pages back through the buffer manager */
	if (data->outer_by_tid && !tables->outer_cached)
		data->outer_uncached_pages = tables->outer_pages;
	/* exact keys: an inner input that is not a heap scan keeps no value log */
	if (data->exact_key && !data->inner_by_tid)
		data->inner_rescan = false;
	data->write_intensity = braid_write_intensity;
	data->hashops = list_copy(hj->hashoperators);
	data->hashcolls = list_copy(hj->hashcollations);
}

/*
 * choose_join_mode
 *		The mode to run (braid_join_choose), its partitions, and where they
 *		may be cut by ranges of the key, the bounds (range_bounds); *in and
 *		est are the cost model's input and estimates as chosen.
 */
static BraidJoinMode
choose_join_mode(PlannedStmt *stmt, HashJoin *hj, Plan *inner, BraidJoinPlanData *data,
				 BraidJmInput *in, BraidJmEstimate est[BRAID_JM_NMODES])
{
	Hash	   *hash = (Hash *) innerPlan(hj);
	BraidJoinMode mode;

	braid_join_model_input(data, get_hash_memory_limit(), in);

	/*
	 * partitions by key range, sized for JOIN_RANGE_BUDGET_SHARE of the
	 * memory
	 */
	if (braid_join_range_partitions && !data->exact_key && data->inner_by_tid)
	{
		BraidJmInput ranged = *in;

		ranged.budget_bytes *= JOIN_RANGE_BUDGET_SHARE;
		data->range_bounds = range_bounds(stmt, hj, hash, inner, braid_jm_partitions(&ranged));
		if (data->range_bounds != NIL)
			braid_join_model_input(data, get_hash_memory_limit(), in);
	}
	mode = braid_join_choose(data, in, est);

	/*
	 * Key ranges only for a mode that reads no input again: should the
	 * statistics be off (a reload not yet counted as changes), a partition
	 * that outgrows the memory is joined in pieces, and each piece of a
	 * partition not written rescans the inputs (by hand, a forced lazy join
	 * 3.5x slower than by hash).
	 */
	if (data->range_bounds != NIL && est[mode].rescans > 0)
	{
		data->range_bounds = NIL;
		braid_join_model_input(data, get_hash_memory_limit(), in);
		mode = braid_join_choose(data, in, est);
	}
	data->mode = (int) mode;
	data->partitions = est[mode].partitions;
	Assert(data->range_bounds == NIL || list_length(data->range_bounds) == data->partitions - 1);
	return mode;
}

/*
 * make_join_scan
 *		The CustomScan in the Hash Join's place: its outer input and the
 *		Hash node's input as its children, the Hash Join's target list and
 *		quals, its expressions and plan data, PostgreSQL's cost with the
 *		join's own part scaled by braidsort's estimate over PostgreSQL's.
 */
static Plan *
make_join_scan(HashJoin *hj, Plan *inner, const BraidJoinPlanData *data, double own_ms,
			   double pg_ms)
{
	Hash	   *hash = (Hash *) innerPlan(hj);
	List	   *inner_keys = (List *) to_inner_var((Node *) hash->hashkeys, NULL);
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.startup_cost = hj->join.plan.startup_cost;
	cscan->scan.plan.total_cost = hj->join.plan.startup_cost +
		(hj->join.plan.total_cost - hj->join.plan.startup_cost) *
		(pg_ms > 0 ? Min(own_ms / pg_ms, 1.0) : 1.0);
	cscan->scan.plan.plan_rows = hj->join.plan.plan_rows;
	cscan->scan.plan.plan_width = hj->join.plan.plan_width;
	BRAID_COPY_DISABLED_NODES(&cscan->scan.plan, &hj->join.plan);
	/* shared: the processes' shared memory (join_shared.c) */
	cscan->scan.plan.parallel_aware = data->shared_inner;
	cscan->scan.plan.parallel_safe = hj->join.plan.parallel_safe;
	cscan->scan.plan.async_capable = false;
	cscan->scan.plan.plan_node_id = hj->join.plan.plan_node_id;
	cscan->scan.plan.targetlist = hj->join.plan.targetlist;
	cscan->scan.plan.qual = hj->join.plan.qual;
	cscan->scan.plan.initPlan = hj->join.plan.initPlan;
	cscan->scan.plan.extParam = bms_copy(hj->join.plan.extParam);
	cscan->scan.plan.allParam = bms_copy(hj->join.plan.allParam);
	outerPlan(cscan) = outerPlan(hj);
	innerPlan(cscan) = inner;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_plans = NIL;
	cscan->custom_scan_tlist = NIL;
	cscan->custom_relids = NULL;
	cscan->custom_exprs = list_make4(hj->hashkeys, inner_keys, hj->join.joinqual,
									 hj->hashclauses);
	cscan->custom_private = braid_join_pack(data);
	/* by name: the executor node registers it (join/join_node.c) */
	cscan->methods = GetCustomScanMethods(BRAID_JOIN_NAME, false);
	return (Plan *) cscan;
}

/*
 * braid_try_join
 *		A BraidJoin replacing the Hash Join, or NULL (with *why) to leave it.
 *		"processes" is how many processes run it at once (under a Gather).
 *		*fits is set when PostgreSQL's hash table is expected to fit in
 *		memory, or braidsort.join_mode is off: a join braidsort would not
 *		take anyway, whose decline is not reported (braidsort.log_declines).
 */
Plan *
braid_try_join(PlannedStmt *stmt, HashJoin *hj, int processes, char **why,
			   bool *fits)
{
	Plan	   *inner = NULL;
	size_t		space_allowed;
	int			nbuckets,
				nbatch,
				nskew;
	BraidJoinPlanData data;
	JoinTables	tables;
	BraidJmInput in;
	BraidJmEstimate est[BRAID_JM_NMODES];
	BraidJoinMode mode;
	double		pg_ms,
				own_ms;
	char	   *unmeasured;
	int			pg_sharers;
	int			pg_workers;

	*fits = false;
	*why = join_shape_why(stmt, hj, processes, &inner, &pg_sharers, &pg_workers);
	if (*why != NULL)
	{
		/*
		 * Reported as a decline only for a join that would spill: with the
		 * mode off, or a hash table that fits in memory even without Parallel
		 * Hash's shared memory, braidsort would not have taken it.
		 */
		Hash	   *hash = (Hash *) innerPlan(hj);
		Plan	   *hashed = hash ? outerPlan(hash) : NULL;

		if (braid_join_mode == BRAID_JOIN_MODE_OFF)
			*fits = true;
		else if (hashed != NULL && IsA(hash, Hash))
		{
			/* a Parallel Hash's input plan_rows are one process's share */
			double		rows = hash->plan.parallel_aware ?
				Max(hash->rows_total, hashed->plan_rows) : hashed->plan_rows;

			ExecChooseHashTableSize(rows, hashed->plan_width, false, false, 0,
									&space_allowed, &nbuckets, &nbatch, &nskew);
			*fits = nbatch <= 1;
		}
		return NULL;
	}

	/* PostgreSQL's own sizing: does its hash table split into batches? */
	ExecChooseHashTableSize(inner->plan_rows, inner->plan_width,
							OidIsValid(((Hash *) innerPlan(hj))->skewTable), pg_workers > 0,
							pg_workers, &space_allowed, &nbuckets, &nbatch, &nskew);
	if (nbatch <= 1)
	{
		*why = psprintf("PostgreSQL's hash table fits in memory (%.0f inner rows, one batch)",
						inner->plan_rows);
		*fits = true;
		return NULL;
	}

	start_join_data(stmt, hj, inner, processes, nbatch, pg_sharers, &data, &tables);

	/*
	 * A Parallel Hash replaced: the processes partition their shares of its
	 * parallel scan together (join_shared.c), where every inner entry is a
	 * TID or the key (not a row in one process's value log) and the
	 * partitions are at least two (one would write what stays in memory) and
	 * few enough for the shared memory.
	 */
	data.shared_inner = pg_sharers > 1 && braid_parallel_join == BRAID_PARALLEL_JOIN_SHARED &&
		(data.inner_by_tid || data.exact_key);
	mode = choose_join_mode(stmt, hj, inner, &data, &in, est);
	if (data.shared_inner &&
		(data.partitions < 2 || data.partitions > BRAID_JOIN_SHARED_MAX_PARTITIONS))
	{
		data.shared_inner = false;
		mode = choose_join_mode(stmt, hj, inner, &data, &in, est);
	}
	pg_ms = braid_join_pg_ms(&data, &in);
	own_ms = braid_jm_against_pg_ms(&in, &est[mode]);
	if (!braid_force && own_ms >= pg_ms * BRAID_JM_TAKE_MARGIN)
	{
		*why = psprintf("the cost model expects no gain, or less than %.0f%% (braidsort %s ms, PostgreSQL %s ms estimated for %.0f x %.0f rows in %d batches)",
						(1.0 - BRAID_JM_TAKE_MARGIN) * 100.0,
						braid_ms_text(own_ms), braid_ms_text(pg_ms), data.inner_rows,
						data.outer_rows, nbatch);
		return NULL;
	}

	/*
	 * Its partitions (written whole before the first is joined, as grace
	 * does) and its inputs' value logs (the space their segments reserve), in
	 * every process.
	 */
	if (!braid_force &&
		!braid_spill_has_room((est[mode].lines_written * 64.0 +
							   braid_vlog_reserved_bytes(in.inner_rows * in.inner_log_width) +
							   braid_vlog_reserved_bytes(in.outer_rows * in.outer_log_width)) *
							  Max(processes, 1),
							  "join", why))
		return NULL;

	unmeasured = beyond_fit(&data, &est[mode], in.match_rows, IsA(outerPlan(hj), IndexScan),
							tables.inner_cached, tables.inner_temp, tables.inner_pages,
							tables.outer_cached, tables.outer_pages, processes);
	if (!braid_force && unmeasured != NULL)
	{
		*why = unmeasured;
		return NULL;
	}
	BRAID_PLAN_DEBUG("braidsort: %s replaced%s: BraidJoin %s in %d partitions, %s ms, PostgreSQL %s ms in %d batches estimated%s",
					 pg_sharers > 1 ? "Parallel Hash Join" : "Hash Join",
					 braid_force && (own_ms >= pg_ms * BRAID_JM_TAKE_MARGIN || unmeasured != NULL) ?
					 " (forced)" : "",
					 braid_jm_mode_name(mode), data.partitions, braid_ms_text(own_ms),
					 braid_ms_text(pg_ms), nbatch,
					 !(pg_sharers > 1) ? "" :
					 data.shared_inner ?
					 psprintf(", per process (%d partition the inner input together)", pg_sharers) :
					 psprintf(", per process (each of %d reads the inner input whole)", pg_sharers));
	/* shared: the Parallel Seq Scan stays, each process reading its share */
	return make_join_scan(hj, data.shared_inner ? outerPlan(innerPlan(hj)) : inner, &data,
						  own_ms, pg_ms);
}
