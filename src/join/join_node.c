/*-------------------------------------------------------------------------
 *
 * join_node.c
 *	  The BraidJoin custom scan node: a hash join that partitions entries
 *	  <hash, ref> instead of tuples, in Viglas's write-limited modes.
 *
 * Design: docs/design.md, section 2b.  Each input row
 * becomes an entry of PostgreSQL's own hash value of its join keys (the
 * operators' hash functions combined as ExecHashGetHashValue does, so
 * cross-type operators hash alike) and a ref: the heap TID when the input
 * is a plain heap scan, else the row's place in a value log (written once,
 * as PostgreSQL would write it).  Entries are split by hash into k
 * partitions, k chosen so one partition's inner entries fit the in-memory
 * table (work_mem x hash_mem_multiplier, as for PostgreSQL's hash table);
 * by ranges of the first key instead when the inner table is stored in
 * about its order (join_plan.c's range_bounds), so that a round's inner
 * rows lie in a part of the table.
 *
 * FIRST PASS.  The inner input is read: partition 0's entries go to the
 * in-memory table (should they outgrow it, e.g. after a row misestimate,
 * partition 0 is written out like the others); partition p >= 1's are
 * written to its partition log (partlog.c) when the mode materializes it,
 * else dropped (a later rescan rebuilds them).  Then the outer input is
 * read: a row of partition 0 probes the table with the row in hand (over a
 * heap scan, 16 rows behind the scan, its pinned page kept, so that the
 * probes' cache misses overlap: join_pass.c's ring); the others' entries
 * are written or dropped the same way.  Under a Gather, in a Parallel
 * Hash's place, the processes may partition the inner input together
 * (join_shared.c): each writes its share's entries, partition 0's too,
 * and loads partition 0 and every round from every process's logs.
 *
 * ROUNDS.  Each later partition (in pieces by hash when its inner entries
 * would not fit) loads its inner entries into the table, from its log or
 * by rescanning the inner input, and is probed by its outer rows: from its
 * log (each row then fetched by its ref), or by rescanning the outer input
 * (the row in hand).  The mode (joinmodel.c) decides which partitions each
 * input writes; lazy decides before each round whether that round's
 * rescans write the remainder.
 *
 * MATCHING.  A probe looks through the row's bucket for entries of its hash
 * (the table groups a partition's inner entries by bucket); each
 * candidate's inner row is fetched by its ref and the hash clauses are
 * rechecked on the two rows (entries carry the hash, not the key, so that
 * equality is always the operator's), then the join qual; LEFT and ANTI
 * emit an unmatched row with a null inner side, SEMI and inner-unique joins
 * stop at the first match.  Rows with a NULL key never match (the hash
 * functions are strict): LEFT and ANTI emit them during the first pass.
 *
 * Output order is not defined (as for a hash join).  A rescan of the node
 * starts over.  Every partition log is a spill file tracked by resource
 * owner: errors and cancels remove them.
 *
 * src/join/join_node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "compat.h"
#include "join/join_node.h"
#include "monitor/explain_worker.h"
#include "monitor/instr.h"
#include "join/join_state.h"
#include "monitor/stats.h"

StaticAssertDecl(BRAID_JM_NMODES == BRAID_NUM_JOIN_MODES,
				 "braidsort.stats counts every join mode");

static Node *join_create_state(CustomScan *cscan);
static void join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *join_exec(CustomScanState *node);
static void join_end(CustomScanState *node);
static void join_rescan(CustomScanState *node);
static void join_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static void join_snapshot(const BraidJoinState *st, BraidJoinInstr *out);

static CustomScanMethods braid_join_scan_methods = {
	.CustomName = BRAID_JOIN_NAME,
	.CreateCustomScanState = join_create_state,
};

static CustomExecMethods join_exec_methods = {
	.CustomName = BRAID_JOIN_NAME,
	.BeginCustomScan = join_begin,
	.ExecCustomScan = join_exec,
	.EndCustomScan = join_end,
	.ReScanCustomScan = join_rescan,
	.ExplainCustomScan = join_explain,
	/* called only for a plan with shared_inner (parallel_aware) */
	.EstimateDSMCustomScan = braid_join_shared_estimate,
	.InitializeDSMCustomScan = braid_join_shared_init_dsm,
	.ReInitializeDSMCustomScan = braid_join_shared_reinit_dsm,
	.InitializeWorkerCustomScan = braid_join_shared_init_worker,
};

/*
 * braid_join_exec_init
 *		Register the custom scan so plans naming it can be copied, read back
 *		and sent to parallel workers.
 */
void
braid_join_exec_init(void)
{
	RegisterCustomScanMethods(&braid_join_scan_methods);
}

/* join_create_state: the node's state, zeroed. */
static Node *
join_create_state(CustomScan *cscan)
{
	BraidJoinState *st = (BraidJoinState *) newNode(sizeof(BraidJoinState), T_CustomScanState);

	st->css.methods = &join_exec_methods;
	return (Node *) st;
}

/* ------------------------------------------------------------------------
 * Execution
 * ------------------------------------------------------------------------
 */

/* elapsed_ms: milliseconds since st->instr.started, which it resets. */
static double
elapsed_ms(BraidJoinState *st)
{
	instr_time	now;
	double		ms;

	INSTR_TIME_SET_CURRENT(now);
	ms = INSTR_TIME_GET_MILLISEC(now) - INSTR_TIME_GET_MILLISEC(st->instr.started);
	st->instr.started = now;
	return ms;
}

/*
 * join_exec
 *		Return the next joined row.
 */
static TupleTableSlot *
join_exec(CustomScanState *node)
{
	BraidJoinState *st = (BraidJoinState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ExprState  *otherqual = node->ss.ps.qual;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	ResetExprContext(econtext);
	if (st->phase == JOIN_DONE)
		return NULL;
	if (st->phase == JOIN_START)
	{
		st->instr.executions++;
		join_pass_start(st);
		st->phase = JOIN_PROBING;
	}

	for (;;)
	{
		if (st->probe.cur != NULL)
		{
			econtext->ecxt_outertuple = st->probe.cur;
			while (st->probe.cand != JOIN_NO_ENTRY)
			{
				const BraidJoinEntry *e = &st->table.entries[st->probe.cand];

				st->probe.cand = join_table_next_match(&st->table, st->probe.cand, st->probe.cur_hash);
				if (st->cfg.exact_key)
				{
					/* the entry holds the key: no inner row to fetch */
					if (e->ref != (uint64) st->probe.cur_key)
						continue;
					econtext->ecxt_innertuple = st->cfg.nullinner;
				}
				else
				{
					econtext->ecxt_innertuple = join_row_fetch(st, &st->inner, e->ref, e->pos);
					if (!ExecQual(st->cfg.hashclauses, econtext))
					{
						ResetExprContext(econtext);
						continue;
					}
				}
				if (st->cfg.joinqual != NULL && !ExecQual(st->cfg.joinqual, econtext))
				{
					ResetExprContext(econtext);
					continue;
				}
				st->probe.matched = true;
				if (st->cfg.jointype == JOIN_ANTI)
				{
					st->probe.cand = JOIN_NO_ENTRY;
					break;
				}
				if (st->cfg.single_match)
					st->probe.cand = JOIN_NO_ENTRY;
				if (otherqual == NULL || ExecQual(otherqual, econtext))
					return ExecProject(proj);
				InstrCountFiltered1(node, 1);
				ResetExprContext(econtext);
			}
			/* every candidate seen */
			if (!st->probe.matched && (st->cfg.jointype == JOIN_LEFT || st->cfg.jointype == JOIN_ANTI))
			{
				st->probe.matched = true;
				econtext->ecxt_innertuple = st->cfg.nullinner;
				if (otherqual == NULL || ExecQual(otherqual, econtext))
				{
					st->probe.cur = NULL;
					return ExecProject(proj);
				}
				InstrCountFiltered1(node, 1);
			}
			st->probe.cur = NULL;
		}

		if (join_pass_next_outer(st, &st->probe))
			continue;
		/* this pass is over */
		if (st->pass.source == OUTER_FIRST_PASS)
			st->instr.first_ms += elapsed_ms(st);
		if (!join_pass_next_round(st))
		{
			st->instr.rounds_ms += elapsed_ms(st);
			st->phase = JOIN_DONE;
			join_table_reset(&st->table);
			/* the pinned pages go now, not when the portal does */
			join_row_release_fetch(&st->outer);
			join_row_release_fetch(&st->inner);
			braid_stats_count_join((int) st->cfg.mode, st->outer.instr.rows + st->inner.instr.rows);
			return NULL;
		}
	}
}

/* ------------------------------------------------------------------------
 * Set-up, end, rescan
 * ------------------------------------------------------------------------
 */

/*
 * begin_side
 *		One input: its child, hash keys and functions, and how its rows are
 *		found again.
 */
static void
begin_side(BraidJoinState *st, JoinSide *s, Plan *plan, List *keys, bool is_outer,
		   EState *estate, int eflags)
{
	ListCell   *lc;
	int			i = 0;

	s->is_outer = is_outer;
	s->name = is_outer ? "outer" : "inner";
	s->ps = ExecInitNode(plan, estate, eflags);
	s->by_tid = is_outer ? st->cfg.plan.outer_by_tid : st->cfg.plan.inner_by_tid;
	s->can_rescan = is_outer ? st->cfg.plan.outer_rescan : st->cfg.plan.inner_rescan;
	s->key_refs = !is_outer && st->cfg.plan.exact_key;
	if (st->cfg.plan.exact_key)
		s->keytype = exprType((Node *) linitial(keys));
	/* partitions by key range: the first key's type gives its form */
	s->rangetype = st->cfg.nbounds > 0 ? exprType((Node *) linitial(keys)) : InvalidOid;
	s->keycxt = CreateExprContext(estate);
	s->nkeys = list_length(keys);
	s->hashfns = palloc0(sizeof(FmgrInfo) * Max(s->nkeys, 1));
	s->collations = palloc0(sizeof(Oid) * Max(s->nkeys, 1));
	s->keys = NIL;
	foreach(lc, keys)
		s->keys = lappend(s->keys, ExecInitExpr((Expr *) lfirst(lc), &st->css.ss.ps));
	foreach(lc, st->cfg.plan.hashops)
	{
		RegProcedure left,
					right;

		if (!get_op_hash_functions(lfirst_oid(lc), &left, &right))
			elog(ERROR, "braidsort: no hash functions for operator %u", lfirst_oid(lc));
		fmgr_info(is_outer ? left : right, &s->hashfns[i]);
		s->collations[i] = list_nth_oid(st->cfg.plan.hashcolls, i);
		i++;
	}
	if (!s->key_refs)
		join_row_begin_fetch(s, estate);
}

/*
 * setup_passes
 *		Partitions, logs and value logs for one execution (first fetch, or
 *		after a rescan).
 */
static void
setup_passes(BraidJoinState *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->passcxt);

	join_parts_setup(st);
	join_row_setup(&st->outer, st->passcxt, st->cfg.budget / 4);
	join_row_setup(&st->inner, st->passcxt, st->cfg.budget / 4);
	join_pass_setup(st);
	MemoryContextSwitchTo(old);
	st->outer.instr.rows = st->inner.instr.rows = 0;
	st->probe.cur = NULL;
}

/*
 * unpack_bounds
 *		Partitions by key range: the plan's bounds (join_plan.c,
 *		range_bounds), one fewer than its partitions.
 */
static void
unpack_bounds(BraidJoinState *st)
{
	ListCell   *lc;
	int			j = 0;

	st->cfg.nbounds = list_length(st->cfg.plan.range_bounds);
	if (st->cfg.nbounds == 0)
		return;
	if (st->cfg.nbounds != Max(st->cfg.plan.partitions, 1) - 1)
		elog(ERROR, "braidsort: BraidJoin plan has %d key range bounds for %d partitions",
			 st->cfg.nbounds, st->cfg.plan.partitions);
	st->cfg.bounds = palloc(sizeof(int64) * st->cfg.nbounds);
	foreach(lc, st->cfg.plan.range_bounds)
		st->cfg.bounds[j++] = strtoi64(strVal(lfirst(lc)), NULL, 10);
}

/*
 * join_begin
 *		Initialize both children, the expressions (now that the children
 *		exist), and the memory.
 */
static void
join_begin(CustomScanState *node, EState *estate, int eflags)
{
	BraidJoinState *st = (BraidJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *ps = &node->ss.ps;

	braid_join_unpack(cscan->custom_private, &st->cfg.plan);
	st->cfg.jointype = (JoinType) st->cfg.plan.jointype;
	st->cfg.single_match = st->cfg.plan.single_match;
	st->cfg.exact_key = st->cfg.plan.exact_key;
	st->cfg.mode = (BraidJoinMode) st->cfg.plan.mode;
	st->cfg.write_intensity = st->cfg.plan.write_intensity;
	st->cfg.budget = Max(get_hash_memory_limit(), (size_t) 64 * 1024);
	if (st->cfg.plan.shared_inner && !st->cfg.plan.inner_by_tid && !st->cfg.plan.exact_key)
		elog(ERROR, "braidsort: BraidJoin plan shares an inner input that keeps a value log");
	braid_join_model_input(&st->cfg.plan, st->cfg.budget, &st->cfg.model);
	unpack_bounds(st);

	/*
	 * ExecInitCustomScan built the quals and projection before the children
	 * existed; rows come in slots of several kinds: build them again, and
	 * every expression, for any kind of slot.
	 */
	ps->outeropsset = true;
	ps->outeropsfixed = false;
	ps->inneropsset = true;
	ps->inneropsfixed = false;

	/* the children are read again by this node, never backwards */
	eflags &= ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	begin_side(st, &st->outer, outerPlan(cscan), (List *) linitial(cscan->custom_exprs),
			   true, estate, eflags);
	begin_side(st, &st->inner, innerPlan(cscan), (List *) lsecond(cscan->custom_exprs),
			   false, estate, eflags);
	outerPlanState(node) = st->outer.ps;
	innerPlanState(node) = st->inner.ps;

	ps->qual = ExecInitQual(cscan->scan.plan.qual, ps);
	ExecAssignProjectionInfo(ps, NULL);
	st->cfg.joinqual = ExecInitQual((List *) lthird(cscan->custom_exprs), ps);
	st->cfg.hashclauses = ExecInitQual((List *) lfourth(cscan->custom_exprs), ps);
	/* (exact keys: SEMI's matches have no inner row either) */
	if (st->cfg.jointype == JOIN_LEFT || st->cfg.jointype == JOIN_ANTI || st->cfg.exact_key)
		st->cfg.nullinner = ExecInitNullTupleSlot(estate, ExecGetResultType(st->inner.ps),
												  &TTSOpsVirtual);

	st->table.cxt = AllocSetContextCreate(CurrentMemoryContext, "BraidJoin table",
										  ALLOCSET_DEFAULT_SIZES);
	st->passcxt = AllocSetContextCreate(CurrentMemoryContext, "BraidJoin partitions",
										ALLOCSET_DEFAULT_SIZES);
	setup_passes(st);
	st->phase = JOIN_START;

	/* workers' EXPLAIN ANALYZE figures come to the leader (instr.c) */
	if (estate->es_instrument != 0 && !IsParallelWorker())
		braid_instr_leader_begin(cscan->scan.plan.plan_node_id);
}

/*
 * release_passes
 *		Remove every partition log and value log, drop the pins, free the
 *		table: after the join, at a rescan, at the end.
 */
static void
release_passes(BraidJoinState *st)
{
	join_ring_reset(st);
	join_row_release(&st->outer);
	join_row_release(&st->inner);
	join_parts_release(st);
	join_table_reset(&st->table);
	MemoryContextReset(st->passcxt);
	st->probe.cur = NULL;
}

/*
 * join_end
 *		Remove the spill files, shut down the children.  Instrumented, a
 *		parallel worker leaves what it did for its leader's EXPLAIN
 *		(instr.c), which the leader's node then frees.
 */
static void
join_end(CustomScanState *node)
{
	BraidJoinState *st = (BraidJoinState *) node;
	int			plan_node = node->ss.ps.plan->plan_node_id;

	if (node->ss.ps.instrument != NULL)
	{
		if (IsParallelWorker())
		{
			BraidJoinInstr instr;

			join_snapshot(st, &instr);
			if (instr.joined)
				braid_instr_report_join(plan_node, &instr);
		}
		else
			braid_instr_leader_end(plan_node);
	}
	release_passes(st);
	ExecEndNode(st->outer.ps);
	ExecEndNode(st->inner.ps);
}

/*
 * join_rescan
 *		Start over: the inputs are read again (their rows may differ).
 */
static void
join_rescan(CustomScanState *node)
{
	BraidJoinState *st = (BraidJoinState *) node;

	release_passes(st);
	setup_passes(st);
	st->phase = JOIN_START;
	st->instr.rounds = 0;
	st->outer.instr.rescans = st->inner.instr.rescans = 0;
	/* a child with changed parameters is rescanned by ExecProcNode */
	if (st->outer.ps->chgParam == NULL)
		ExecReScan(st->outer.ps);
	if (st->inner.ps->chgParam == NULL)
		ExecReScan(st->inner.ps);
}

/* ------------------------------------------------------------------------
 * EXPLAIN
 * ------------------------------------------------------------------------
 */

/* show_quals: a list of quals as EXPLAIN shows a node's conditions. */
static void
show_quals(const char *label, List *quals, CustomScanState *node, List *ancestors,
		   ExplainState *es)
{
	List	   *context;
	bool		useprefix;
	char	   *text;

	if (quals == NIL)
		return;
	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	useprefix = es->verbose || BRAID_EXPLAIN_RTABLE_SIZE(es) > 1;
	text = deparse_expression((Node *) make_ands_explicit(quals), context, useprefix, false);

	ExplainPropertyText(label, text, es);
}

/* join_type_name: as EXPLAIN names a join's type. */
static const char *
join_type_name(JoinType jointype)
{
	switch (jointype)
	{
		case JOIN_INNER:
			return "Inner";
		case JOIN_LEFT:
			return "Left";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "?";
	}
}

/* snapshot_side: join_snapshot, for one input. */
static void
snapshot_side(const BraidJoinState *st, const JoinSide *s, BraidJoinSideInstr *out)
{
	out->materialized = 0;
	if (s->parts.mat != NULL)
		for (int p = 0; p < st->parts.k; p++)
			if (s->parts.mat[p])
				out->materialized++;
	out->rescans = s->instr.rescans;
	out->pinned_peak = s->fetch.held_peak;
	out->device = s->instr.dev;
}

/*
 * join_snapshot
 *		What the node did in this process, as EXPLAIN ANALYZE shows it (and
 *		a parallel worker reports it).
 */
static void
join_snapshot(const BraidJoinState *st, BraidJoinInstr *out)
{
	memset(out, 0, sizeof(*out));
	out->joined = st->instr.executions > 0;
	out->partitions = st->parts.k;
	out->rounds = st->instr.rounds;
	out->evicted = st->instr.evicted;
	out->lazy_from = st->parts.lazy_fired ? st->parts.lazy_round + 1 : 0;
	out->peak_table_bytes = st->table.peak_bytes;
	snapshot_side(st, &st->outer, &out->outer);
	snapshot_side(st, &st->inner, &out->inner);
	out->first_ms = st->instr.first_ms;
	out->rounds_ms = st->instr.rounds_ms;
}

/* explain_side: what ANALYZE saw of one input. */
static void
explain_side(const JoinSide *s, const BraidJoinSideInstr *si, ExplainState *es)
{
	char		label[64];
	const char *side = s->is_outer ? "Outer" : "Inner";

	snprintf(label, sizeof(label), "%s Gather Source", side);
	ExplainPropertyText(label, s->key_refs ? "none (key in entries)" :
						s->by_tid ? "heap tid" : "value log", es);
	/* blocks kept pinned for the fetches (join_rows.c), within the limit */
	if (s->by_tid)
	{
		snprintf(label, sizeof(label), "%s Pinned Blocks", side);
		ExplainPropertyInteger(label, NULL, si->pinned_peak, es);
	}
	snprintf(label, sizeof(label), "%s Materialized Partitions", side);
	ExplainPropertyInteger(label, NULL, si->materialized, es);
	snprintf(label, sizeof(label), "%s Rescans", side);
	ExplainPropertyInteger(label, NULL, si->rescans, es);
	snprintf(label, sizeof(label), "%s Device Bytes Written", side);
	ExplainPropertyInteger(label, NULL, (int64) si->device.bytes_written, es);
	snprintf(label, sizeof(label), "%s Device Bytes Read", side);
	ExplainPropertyInteger(label, NULL, (int64) si->device.bytes_read, es);
	snprintf(label, sizeof(label), "%s Device Lines Written", side);
	ExplainPropertyInteger(label, NULL, (int64) si->device.lines_written, es);
	snprintf(label, sizeof(label), "%s Device Lines Read", side);
	ExplainPropertyInteger(label, NULL, (int64) si->device.lines_read, es);
}

/*
 * explain_figures
 *		What one process's join did (after Partitions): the node's own
 *		lines, or a worker's in the formats other than text.
 */
static void
explain_figures(const BraidJoinState *st, const BraidJoinInstr *w, ExplainState *es)
{
	ExplainPropertyInteger("Rounds", NULL, w->rounds, es);
	if (w->evicted)
		ExplainPropertyText("Partition 0", "written out (outgrew the memory)", es);
	if (w->lazy_from > 0)
		ExplainPropertyInteger("Lazy Materialized From Partition", NULL, w->lazy_from, es);
	ExplainPropertyInteger("Peak Table Memory", "kB",
						   (int64) (w->peak_table_bytes + 1023) / 1024, es);
	explain_side(&st->outer, &w->outer, es);
	explain_side(&st->inner, &w->inner, es);
	if (es->timing)
	{
		ExplainPropertyFloat("First Pass Time", "ms", w->first_ms, 3, es);
		ExplainPropertyFloat("Rounds Time", "ms", w->rounds_ms, 3, es);
	}
}

/*
 * explain_worker_text
 *		A worker's figures in text format, a few lines as a Sort's worker
 *		line: its partitions and rounds, each input's partitions written,
 *		rescans and device traffic, then with TIMING its times.  The other
 *		formats have every figure, under the node's names.
 */
static void
explain_worker_text(const BraidJoinInstr *w, ExplainState *es)
{
	const BraidJoinSideInstr *sides[2] = {&w->outer, &w->inner};

	braid_explain_indent_text(es);
	appendStringInfo(es->str, "Partitions: %d  Rounds: " INT64_FORMAT
					 "  Peak Table Memory: " INT64_FORMAT " kB\n",
					 w->partitions, w->rounds, (int64) (w->peak_table_bytes + 1023) / 1024);
	for (int j = 0; j < 2; j++)
	{
		const BraidJoinSideInstr *si = sides[j];

		braid_explain_indent_text(es);
		appendStringInfo(es->str, "%s: Materialized Partitions: " INT64_FORMAT
						 "  Rescans: " INT64_FORMAT
						 "  Device Bytes Written: " UINT64_FORMAT
						 "  Device Bytes Read: " UINT64_FORMAT "\n",
						 j == 0 ? "Outer" : "Inner", si->materialized, si->rescans,
						 si->device.bytes_written, si->device.bytes_read);
	}
	if (es->timing)
	{
		braid_explain_indent_text(es);
		appendStringInfo(es->str, "First Pass Time: %.3f ms  Rounds Time: %.3f ms\n",
						 w->first_ms, w->rounds_ms);
	}
}

/*
 * join_explain
 *		ExplainCustomScan: the join's conditions, mode and partitions, and
 *		with ANALYZE what each input wrote, read and was rescanned, in this
 *		process and in each parallel worker that ran the join (instr.c).
 *		The node's own lines are this process's: a leader that joined
 *		nothing (parallel_leader_participation = off) shows only the
 *		planned partitions, and its workers' figures follow.
 */
static void
join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BraidJoinState *st = (BraidJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	BraidJoinInstr mine;
	const BraidJoinInstr *shown = &mine;
	BraidWorkerInstr *workers = NULL;
	int			nworkers = 0;

	join_snapshot(st, &mine);
	if (es->analyze)
		workers = braid_instr_worker_reports(cscan->scan.plan.plan_node_id, BRAID_INSTR_JOIN,
											 &nworkers);

	/*
	 * No per-worker output (an invisible Gather, force_parallel_mode =
	 * regress, whose single worker ran the plan): as for a Hash Join, the
	 * worker's figures are shown as the node's.
	 */
	if (es->workers_state == NULL && nworkers > 0)
	{
		if (!mine.joined)
			shown = &workers[0].u.join;
		nworkers = 0;
	}

	ExplainPropertyText("Join Type", join_type_name(st->cfg.jointype), es);
	show_quals("Hash Cond", (List *) lfourth(cscan->custom_exprs), node, ancestors, es);
	show_quals("Join Filter", (List *) lthird(cscan->custom_exprs), node, ancestors, es);
	if (st->cfg.plan.exact_key)
		ExplainPropertyText("Entry Key", "exact (inner rows not fetched)", es);
	ExplainPropertyText("Join Mode", braid_jm_mode_name(st->cfg.mode), es);
	if (st->cfg.write_intensity >= 0)
		ExplainPropertyFloat("Write Intensity", NULL, st->cfg.write_intensity, 2, es);
	else
		ExplainPropertyText("Write Intensity", "cost-optimal", es);
	ExplainPropertyInteger("Partitions", NULL,
						   es->analyze && shown->joined ? shown->partitions : st->cfg.plan.partitions,
						   es);
	/* (not when the join found no inner rows and needed one partition) */
	if (st->cfg.nbounds > 0 && !(es->analyze && shown->joined && shown->partitions <= 1))
		ExplainPropertyText("Partitioned By", "key range", es);
	/* join_shared.c: the processes found in shared memory, once joined */
	if (st->cfg.plan.shared_inner)
		ExplainPropertyText("Shared Inner",
							es->analyze && st->shared_procs > 0 ?
							psprintf("partitioned by %d processes", st->shared_procs) :
							"partitioned by every process", es);
	if (es->analyze && shown->joined)
		explain_figures(st, shown, es);

	for (int i = 0; i < nworkers; i++)
	{
		const BraidJoinInstr *w = &workers[i].u.join;
		int			n = workers[i].worker;

		if (!w->joined || n < 0 || n >= es->workers_state->num_workers)
			continue;
		braid_explain_open_worker(n, es);
		if (es->format == EXPLAIN_FORMAT_TEXT)
			explain_worker_text(w, es);
		else
		{
			ExplainPropertyInteger("Partitions", NULL, w->partitions, es);
			explain_figures(st, w, es);
		}
		braid_explain_close_worker(n, es);
	}
}
