/*-------------------------------------------------------------------------
 *
 * sort_node.c
 *	  The BraidSort custom scan node: callbacks, and the stages in order.
 *
 * braid_begin sets the node up from the plan (plandata.c); the first
 * fetch runs the stages (build_and_sort): BUILD (sort_build.c) takes every
 * row of the child into the IndexMap, spilling RUNS (sort_runs.c) when it
 * outgrows braidsort.work_mem; then either the IndexMap is sorted in
 * memory (OnePass) or the runs are merged (MergePass, sort_merge.c).
 * Fetches then return rows from the GATHER (sort_gather.c), or from the
 * VALUE LOG (sort_vlog.c) when the input was not a heap scan.
 *
 * A node the planner took only because its row estimate was small
 * (adaptive) first runs PostgreSQL's tuplesort (sort_adaptive.c), and runs
 * the stages only if its input outgrows work_mem.
 *
 * Positions follow tuplesort's conventions (current = index after the
 * last row returned, plus an eof flag), which gives backward scans,
 * mark/restore and rewinds for free: any position maps to a batch, which
 * is reloaded if it is not the one in memory.  A streaming final merge
 * only moves forward, so it is used only when the node was not asked for
 * those.
 *
 * src/sort/sort_node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/sysattr.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "optimizer/optimizer.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "guc.h"
#include "sort/sort_node.h"
#include "sort/sort_explain.h"
#include "plan/keys.h"
#include "plan/plandata.h"
#include "core/pool.h"
#include "sort/sort_state.h"
#include "monitor/stats.h"

static Node *braid_create_state(CustomScan *cscan);
static void braid_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *braid_exec(CustomScanState *node);
static TupleTableSlot *braid_exec_adaptive(PlanState *ps);
static void braid_end(CustomScanState *node);
static void braid_rescan(CustomScanState *node);
static void braid_mark(CustomScanState *node);
static void braid_restore(CustomScanState *node);
static void braid_explain_node(CustomScanState *node, List *ancestors, ExplainState *es);

static CustomScanMethods braid_sort_scan_methods = {
	.CustomName = BRAID_SORT_NAME,
	.CreateCustomScanState = braid_create_state,
};

static CustomExecMethods braid_exec_methods = {
	.CustomName = BRAID_SORT_NAME,
	.BeginCustomScan = braid_begin,
	.ExecCustomScan = braid_exec,
	.EndCustomScan = braid_end,
	.ReScanCustomScan = braid_rescan,
	.MarkPosCustomScan = braid_mark,
	.RestrPosCustomScan = braid_restore,
	.ExplainCustomScan = braid_explain_node,
	/* (called only for a shared sort, the one parallel-aware BraidSort) */
	.EstimateDSMCustomScan = braid_shared_estimate,
	.InitializeDSMCustomScan = braid_shared_init_dsm,
	.ReInitializeDSMCustomScan = braid_shared_reinit_dsm,
	.InitializeWorkerCustomScan = braid_shared_init_worker,
};

/*
 * braid_sort_exec_init
 *		Register the custom scan so plans naming it can be copied, read back
 *		and sent to parallel workers.
 */
void
braid_sort_exec_init(void)
{
	RegisterCustomScanMethods(&braid_sort_scan_methods);
}

/*
 * PostgreSQL's external sort (tuplesort.c): a tuple on tape is its minimal
 * tuple less 10 header bytes plus a 4-byte length; in memory, its minimal
 * tuple in a chunk of the next power of two, a 24-byte SortTuple and a
 * 16-byte chunk header; its merge order is the memory over a 256 kB
 * buffer and two blocks a run (tuplesort_merge_order), 6 to 500.
 */
#define PG_TAPE_ROW_OVERHEAD	(4 - (double) MINIMAL_TUPLE_DATA_OFFSET)
#define PG_MEMORY_ROW_OVERHEAD	(24.0 + 16.0)
#define PG_MERGE_RUN_BYTES		(32.0 * BLCKSZ + 2 * BLCKSZ)
#define PG_MIN_MERGE_ORDER		6
#define PG_MAX_MERGE_ORDER		500

/*
 * count_sort
 *		Add a finished sort to braidsort.stats, with an estimate of the
 *		value bytes PostgreSQL's external sort with the same memory would
 *		have written: the rows it sorts (the Sort's input: the rows a value
 *		log keeps, as they were; the planner's width of them over a heap
 *		scan, whose whole heap tuples braidsort refetches), once per pass,
 *		when they outgrow the memory (runs of about the memory's size,
 *		merged with PostgreSQL's merge order).  braidsort's own value writes
 *		(a value log on the device) are taken off.
 */
static void
count_sort(BraidSortState *st)
{
	/* (a shared sort's emitter counts the rows of every participant) */
	double		rows = (double) (st->instr.shared_parts > 0 ? st->instr.shared_rows :
								 st->path->build.rows_built);
	double		mem = (double) Max(st->cfg.budget, (size_t) 65536);
	double		carried = 0;
	double		own = st->cfg.value_log && st->path->vlog.on_device ? (double) st->path->vlog.bytes : 0;
	double		tuple;
	double		in_memory;
	BraidMethod method;

	/* a sorted row's minimal tuple */
	if (st->cfg.value_log && st->path->build.rows_built > 0)
		tuple = (double) st->path->build.tuple_bytes / (double) st->path->build.rows_built;
	else
		tuple = (double) st->cfg.sort_width + SizeofMinimalTupleHeader;
	in_memory = pg_nextpower2_32((uint32) Max(MAXALIGN(tuple), 8)) + PG_MEMORY_ROW_OVERHEAD;
	if (rows * in_memory > mem)
	{
		double		runs = ceil(rows * in_memory / mem);
		double		order = floor(mem / PG_MERGE_RUN_BYTES);
		double		passes;

		order = Min(Max(order, PG_MIN_MERGE_ORDER), PG_MAX_MERGE_ORDER);
		passes = Max(ceil(log(runs) / log(order)), 1.0);
		carried = rows * (tuple + PG_TAPE_ROW_OVERHEAD) * passes;
	}
	if (st->instr.wl_mode != BRAID_WL_MERGEPASS)
		method = BRAID_METHOD_HYBRID + (st->instr.wl_mode - BRAID_WL_HYBRID);
	else if ((st->path->merge.merger != NULL || st->path->out.refs_run != NULL) && !st->path->out.refs_offloaded)
		method = BRAID_METHOD_MERGEPASS;
	else
		method = BRAID_METHOD_ONEPASS;
	braid_stats_count_sort(method, st->cfg.value_log, (uint64) rows,
						   (uint64) Max(carried - own, 0.0));
}

/*
 * build_and_sort
 *		Consume the input (an adaptive node's carried rows first, then the
 *		child's) into the strategy, then sort: merge the runs (MergePass) or
 *		sort the IndexMap in memory (OnePass).
 */
static void
build_and_sort(BraidSortState *st)
{
	instr_time	start;
	ScanDirection dir = st->css.ss.ps.state->es_direction;
	SeqScanState *fast = braid_input_fast_seqscan(st);
	volatile int64 fast_rows = 0;
	bool		built;
	bool		spilled;

	/* the input is read forward, whatever direction we are asked for */
	st->css.ss.ps.state->es_direction = ForwardScanDirection;

	INSTR_TIME_SET_CURRENT(start);
	braid_progress_start(&st->mon.progress, st->css.ss.ps.plan->plan_node_id, st->cfg.est_rows);
	st->mon.phase = BRAID_PROGRESS_BUILDING;
	st->mon.batches_before = st->path->out.gather.batches;

	/*
	 * Runs may be made on a helper while the build goes on (sort_runs.c's
	 * pipe) when the build reads a plain table scan: the run's write grant is
	 * then held over nothing but the scan, and nothing else wants the thread
	 * pool.
	 */
	braid_runs_start(st, fast != NULL && !st->cfg.collated && st->cfg.threads > 1);
	braid_build_begin(st, st->adapt.carrying ? st->adapt.rows_read : 0);

	/*
	 * A shared sort's participant builds its share of the scan unless the
	 * build is over (sort_shared.c)
	 */
	built = st->shared == NULL || braid_shared_attach(st);
	if (built)
	{
		PG_TRY();
		{
			if (st->adapt.carrying)
				braid_adaptive_carry(st);
			fast_rows = braid_build_child(st, fast);
			/* a run still being made on a helper is finished within the try */
			braid_pipe_end(st);
		}
		PG_CATCH();
		{
			braid_pipe_stop(st);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	braid_build_end(st);
	if (fast_rows > 0 && st->child->instrument)
		st->child->instrument->tuplecount += fast_rows;
	braid_batches_clear(st);
	spilled = built && st->strategy->finish_build(st, st->path->build.rows_built);

	/*
	 * A shared sort: one participant sorts or merges every participant's
	 * entries and emits every row, its threads now on every CPU (the others
	 * have ended); the others emit nothing.
	 */
	if (st->shared != NULL)
	{
		if (braid_shared_finish(st, built, &spilled))
		{
			/* (its sort threads raised to every CPU's when it collected) */
			braid_gather_set_threads(&st->path->out.gather, st->cfg.threads);
		}
		else
		{
			st->instr.build_ms += braid_elapsed_ms(start);
			/* (one that found the build over did nothing to show) */
			if (built)
			{
				st->instr.sorts++;
				st->instr.rows_sorted += st->path->build.rows_built;
			}
			st->css.ss.ps.state->es_direction = dir;
			st->pos.built = true;
			st->path->out.nrows = 0;
			st->pos.current = 0;
			st->pos.eof_reached = false;
			braid_sort_set_phase(st, BRAID_PROGRESS_DONE);
			return;
		}
	}
	if (spilled)
	{
		/*
		 * MergePass: the runs, with the rest of the IndexMap as the last one
		 * (or a write-limited sort's memory run and virtual run), merged.
		 */
		st->instr.build_ms += braid_elapsed_ms(start) - st->path->runset.spill_ms;
		st->instr.sort_ms += st->path->runset.spill_ms;
		braid_map_free(st);
		INSTR_TIME_SET_CURRENT(start);
		braid_merge_all_runs(st);
		st->instr.merge_ms += braid_elapsed_ms(start);
		braid_batches_after_merge(st);
	}
	else
	{
		st->instr.build_ms += braid_elapsed_ms(start);
		INSTR_TIME_SET_CURRENT(start);
		braid_sort_set_phase(st, BRAID_PROGRESS_SORTING);
		braid_map_sort(st, true);
		braid_map_note_peak(st);
		braid_batches_after_onepass(st);
		st->instr.sort_ms += braid_elapsed_ms(start);
	}

	st->css.ss.ps.state->es_direction = dir;
	st->pos.built = true;
	st->instr.sorts++;
	st->instr.rows_sorted += st->path->build.rows_built;
	st->pos.current = 0;
	st->pos.eof_reached = false;
	braid_batches_start(st);
	braid_vlog_window_reset(st);
	braid_sort_set_phase(st, BRAID_PROGRESS_GATHERING);
	count_sort(st);
}

/*
 * release_spill
 *		Close the merger and remove every spill file of this sort.
 */
static void
release_spill(BraidSortState *st)
{
	braid_merge_release(st);
	st->strategy->release(st);
	braid_runs_release(st);
	braid_shared_release(st);
	braid_batches_release(st);
}

/*
 * reset_sort
 *		Drop everything built, so the next fetch rebuilds from the child.
 */
static void
reset_sort(BraidSortState *st)
{
	release_spill(st);
	braid_batches_clear(st);
	if (st->cfg.value_log)
		braid_vlog_reset(&st->path->vlog);
	MemoryContextReset(st->sortcxt);
	braid_map_reset(st);
	braid_runs_reset(st);
	braid_merge_reset(st);
	braid_batches_reset(st);
	st->pos.built = false;
	/* a shared sort's participants build again, each on its share of CPUs */
	if (st->shared != NULL && st->cfg.threads != st->cfg.base_threads)
	{
		st->cfg.threads = st->cfg.base_threads;
		braid_gather_set_threads(&st->path->out.gather, st->cfg.threads);
	}
}

/*
 * snapshot_instr
 *		The node's instrumentation as EXPLAIN shows it: the counters kept in
 *		place, and what the last sort looks like now.
 */
static void
snapshot_instr(BraidSortState *st, BraidSortInstr *out)
{
	static const BraidSortPath no_path;

	/* (an adaptive node whose tuplesort stayed has no path: nothing of it) */
	const BraidSortPath *path = st->path != NULL ? st->path : &no_path;

	*out = st->instr;
	out->gather_batches = path->out.gather.batches;
	out->peak_gather_bytes = path->out.gather.peak_arena;
	if (!st->cfg.value_log)
		out->gather_source = BRAID_SOURCE_HEAP_TID;
	else
		out->gather_source = path->vlog.on_device ? BRAID_SOURCE_VALUE_LOG :
			BRAID_SOURCE_MEMORY;
	if (st->cfg.value_log)
		out->sorted_refs = BRAID_SORTED_REFS_NONE;
	else
		out->sorted_refs = path->out.refs_run ? BRAID_SORTED_REFS_DEVICE :
			path->merge.merger ? BRAID_SORTED_REFS_STREAM : BRAID_SORTED_REFS_MEMORY;
	out->merge_ahead = path->out.ahead_on;
}

/*
 * braid_create_state
 *		Allocate the node's state.
 */
static Node *
braid_create_state(CustomScan *cscan)
{
	BraidSortState *st = palloc0(sizeof(BraidSortState));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &braid_exec_methods;
	return (Node *) st;
}

/*
 * reads_tuple_header
 *		Whether the node's own expressions (its projection and quals, which
 *		are what reads the refetched tuples) read the header fields that the
 *		gather may leave out (see BRAID_GATHER_STRIP): the xmin, xmax, cmin
 *		or cmax system columns, or the whole row.
 */
static bool
reads_tuple_header(CustomScan *cscan)
{
	Bitmapset  *attrs = NULL;
	Index		varno = cscan->scan.scanrelid;
	bool		reads;

	pull_varattnos((Node *) cscan->scan.plan.targetlist, varno, &attrs);
	pull_varattnos((Node *) cscan->scan.plan.qual, varno, &attrs);
	reads = bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(MinTransactionIdAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(MaxTransactionIdAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(MinCommandIdAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(MaxCommandIdAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs);
	bms_free(attrs);
	return reads;
}

/*
 * begin_config
 *		The node's configuration, from the plan: the keys, the threads and
 *		the budget.  Their encoders and the entry layout are set up with the
 *		braid path (begin_path).
 */
static void
begin_config(BraidSortState *st, const BraidSortPlanData *data, int eflags)
{
	BraidSortConfig *cfg = &st->cfg;

	cfg->nkeys = data->nkeys;
	cfg->sortops = data->sortops;
	cfg->collations = data->collations;
	cfg->nullsfirst = data->nullsfirst;
	cfg->keylen = (uint32) data->keylen;
	cfg->sort_width = data->sort_width;
	cfg->may_truncate = data->truncates;
	cfg->stride = cfg->keylen + BRAID_REF_BYTES;
	cfg->est_rows = st->css.ss.ps.plan->plan_rows;
	/* (an adaptive node's when it switches: begin_path) */
	cfg->threads = data->adaptive ? 0 : braid_sort_thread_count(data->processes);
	cfg->base_threads = cfg->threads;

	/*
	 * (a shared sort builds again when its Gather is rescanned: the Gather
	 * starts its workers again, and they build again)
	 */
	cfg->random_access = !data->shared &&
		(eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
	cfg->budget = braid_budget_bytes();
	cfg->value_log = data->mode == BRAID_MODE_VALUE_LOG;
	cfg->segment_share = Min(Max(data->segment_share, 0.0), 1.0);
	cfg->key_memory = data->key_memory;
	cfg->key_bytes = data->key_tenths / 10.0;
	cfg->rank_collated = data->rank_collated;
	cfg->select_collated_ns = data->select_collated_ns;
}

/*
 * begin_keys
 *		Each key's encoder, and where a collated key puts the prefix.
 */
static void
begin_keys(BraidSortState *st)
{
	BraidSortConfig *cfg = &st->cfg;

	cfg->keys = palloc(sizeof(BraidKeyColumn) * cfg->nkeys);
	for (int i = 0; i < cfg->nkeys; i++)
	{
		char	   *why;

		if (!braid_key_column_for(cfg->sortops[i], cfg->collations[i],
								  cfg->nullsfirst[i], &cfg->keys[i], &why))
			elog(ERROR, "braidsort: sort key %d is no longer supported: %s", i + 1, why);
		if (BRAID_KEY_IS_COLLATED(cfg->keys[i].kind) && !cfg->collated)
		{
			cfg->collated = true;
			cfg->collated_key = i;
		}
	}
	cfg->radix_keylen = cfg->collated ? cfg->keylen - 8 : cfg->keylen;
	if (cfg->collated && cfg->keylen < 9)
		elog(ERROR, "braidsort: key prefix of %u bytes has no room for a collated key", cfg->keylen);
}

/*
 * begin_value_log
 *		Value log mode: the child is the outer plan and the target list
 *		references its columns, which come from the value log: project from
 *		a minimal tuple slot in the outer position.
 */
static void
begin_value_log(BraidSortState *st, const BraidSortPlanData *data,
				EState *estate, int eflags)
{
	CustomScanState *node = &st->css;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	st->child = ExecInitNode(outerPlan(cscan), estate, eflags);
	outerPlanState(node) = st->child;
	node->ss.ps.outerops = &TTSOpsMinimalTuple;
	node->ss.ps.outeropsfixed = true;
	node->ss.ps.outeropsset = true;

	/*
	 * A node returning its input's rows as they are (set_row_scan_tlist) has
	 * no projection (ExecInitCustomScan saw the target list over the scan
	 * tuple) and returns minimal tuples, which the plan above may rely on.
	 */
	if (cscan->custom_scan_tlist != NIL)
	{
		if (node->ss.ps.ps_ProjInfo != NULL)
			elog(ERROR, "braidsort: a sort returning its input's rows has a projection");
		node->ss.ps.resultops = &TTSOpsMinimalTuple;
		node->ss.ps.resultopsfixed = true;
		node->ss.ps.resultopsset = true;
	}
	/* (the rows' slot and projection: begin_path) */
	st->cfg.keycols = data->keycols;
}

/*
 * begin_heap
 *		Heap TID mode: the child scans the table, whose rows are refetched
 *		by TID into a heap tuple slot (the gather: sort_gather.c).
 */
static void
begin_heap(BraidSortState *st, const BraidSortPlanData *data,
		   EState *estate, int eflags)
{
	CustomScanState *node = &st->css;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	st->child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(st->child);

	/*
	 * Refetched tuples are stored as heap tuples; rebuild the projection for
	 * that slot type (ExecInitCustomScan assumed a virtual one).  This is
	 * done here, not with the gather, because it can change the node's result
	 * slot type, which the plan above reads as it starts.
	 */
	ExecInitScanTupleSlot(estate, &node->ss, RelationGetDescr(node->ss.ss_currentRelation),
						  &TTSOpsHeapTuple);
	ExecAssignScanProjectionInfoWithVarno(&node->ss, cscan->scan.scanrelid);

	/* keys read from the unprojected scan tuple, by table column */
	st->cfg.keycols = data->keyattnos;

	/*
	 * This node is a sort, not a scan of the table: like a Sort, it must not
	 * be taken for the current row's scan by WHERE CURRENT OF.  The gather
	 * keeps the relation.
	 */
	st->rel = node->ss.ss_currentRelation;
	node->ss.ss_currentRelation = NULL;
}

/*
 * begin_path
 *		What braidsort's own path needs (keys, memory, gather or value log,
 *		write-limited mode): at the node's start, or for an adaptive node
 *		when it switches, which most never do (sort_adaptive.c).
 */
static void
begin_path(BraidSortState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	BraidSortPlanData data;
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

	braid_plan_unpack(cscan->custom_private, &data);
	st->path = palloc0(sizeof(BraidSortPath));
	if (st->cfg.threads == 0)
		st->cfg.threads = braid_sort_thread_count(data.processes);
	if (st->input.keybuf.data == NULL)
		braid_input_begin(st);
	begin_keys(st);

	/*
	 * Rows read back from the value log are minimal tuples in the outer
	 * position: their slot, and the projection for that slot type (unless the
	 * node returns them as they are), which an adaptive node left to
	 * ExecInitCustomScan's generic one until now.
	 */
	if (st->cfg.value_log)
	{
		st->win.slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(st->child),
											  &TTSOpsMinimalTuple);
		if (cscan->custom_scan_tlist == NIL)
			ExecAssignProjectionInfo(&st->css.ss.ps, NULL);
	}

	st->sortcxt = AllocSetContextCreate(estate->es_query_cxt, "BraidSort IndexMap",
										ALLOCSET_DEFAULT_SIZES);
	st->gathercxt = AllocSetContextCreate(estate->es_query_cxt, "BraidSort gather",
										  ALLOCSET_DEFAULT_SIZES);
	braid_map_reset(st);
	braid_batches_begin(st, !reads_tuple_header(cscan));
	if (st->cfg.value_log)
		braid_vlog_init(&st->path->vlog,
						AllocSetContextCreate(estate->es_query_cxt, "BraidSort value log",
											  ALLOCSET_DEFAULT_SIZES),
						st->cfg.budget / 2, &st->instr.device);
	st->strategy = braid_wl_strategy(st, &data);
	st->path_ready = true;
	MemoryContextSwitchTo(old);
}

/*
 * braid_begin
 *		Initialize the child and the configuration; then braidsort's path,
 *		unless the node is adaptive and starts as PostgreSQL's tuplesort
 *		(sort_adaptive.c).
 */
static void
braid_begin(CustomScanState *node, EState *estate, int eflags)
{
	BraidSortState *st = (BraidSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	BraidSortPlanData data;

	braid_plan_unpack(cscan->custom_private, &data);
	begin_config(st, &data, eflags);
	st->mon.progress.slot = -1;
	/* (ExecInitNode sets up the node's instrument after this returns) */
	if (estate->es_instrument != 0 && !IsParallelWorker())
		braid_instr_leader_begin(node->ss.ps.plan->plan_node_id);

	/* the child is read once, forward; this node provides rewind etc. */
	eflags &= ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	if (st->cfg.value_log)
		begin_value_log(st, &data, estate, eflags);
	else
		begin_heap(st, &data, estate, eflags);

	/*
	 * the key buffer (keys read by keycols, or from a carried row): an
	 * adaptive node over a value log reads no key until it switches
	 */
	if (!data.adaptive || !st->cfg.value_log)
		braid_input_begin(st);
	if (data.adaptive)
	{
		braid_adaptive_begin(st, &data, estate);
		/* (ExecInitNode installs it once this returns) */
		node->ss.ps.ExecProcNode = braid_exec_adaptive;
	}
	else
		begin_path(st);
}

/*
 * braid_exec_adaptive
 *		An adaptive node's ExecProcNode, in place of ExecCustomScan: while
 *		its tuplesort serves the rows, one is returned for what ExecSort
 *		costs a row (most such sorts are a few hundred rows of a short
 *		query, whose every call counts); else braid_exec, as ExecCustomScan
 *		would call it.
 */
static TupleTableSlot *
braid_exec_adaptive(PlanState *ps)
{
	BraidSortState *st = (BraidSortState *) ps;

	CHECK_FOR_INTERRUPTS();
	if (st->adapt.serving)
	{
		/*
		 * the tuplesort's own row, as ExecSort returns it (past either end,
		 * the slot emptied)
		 */
		if (st->adapt.passthrough)
		{
			(void) tuplesort_gettupleslot(st->adapt.ts,
										  ScanDirectionIsForward(ps->state->es_direction),
										  false, st->adapt.slot, NULL);
			return st->adapt.slot;
		}
		return braid_adaptive_next(st, ps->state->es_direction);
	}
	return braid_exec(&st->css);
}

/*
 * braid_exec
 *		Return the next row in the scan direction.
 */
static TupleTableSlot *
braid_exec(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *scanslot;
	int64		pos;

	if (!st->pos.built)
	{
		const BraidProgress *prev = braid_progress_enter(&st->mon.progress);

		/* an adaptive node runs PostgreSQL's sort first (sort_adaptive.c) */
		if (st->adapt.on && braid_adaptive_sort(st))
			st->pos.built = true;
		else
		{
			/*
			 * An adaptive node's estimate proved wrong: size the build (its
			 * first IndexMap, the write-limited modes' plans) for at least
			 * twice the rows read so far.
			 */
			if (st->adapt.carrying)
				st->cfg.est_rows = Max(st->cfg.est_rows, 2.0 * (double) st->adapt.rows_read);
			if (!st->path_ready)
				begin_path(st);
			build_and_sort(st);
		}
		braid_progress_leave(prev);
	}
	if (st->adapt.serving)
		return braid_adaptive_next(st, node->ss.ps.state->es_direction);
	/* (set up with the path: after an adaptive node's switch) */
	scanslot = node->ss.ss_ScanTupleSlot;
	/* (after a rewind or at the end, a backward scan returns rows again) */
	braid_sort_set_phase(st, BRAID_PROGRESS_GATHERING);

	/* nothing stays in the scan slot once there is no current row */
	if (st->pos.scan_slot_full)
	{
		ExecClearTuple(scanslot);
		st->pos.scan_slot_full = false;
	}

	if (ScanDirectionIsForward(node->ss.ps.state->es_direction))
	{
		if (st->pos.current >= st->path->out.nrows)
		{
			st->pos.eof_reached = true;
			braid_sort_set_phase(st, BRAID_PROGRESS_DONE);
			return NULL;
		}
		if (st->cfg.value_log)
			return braid_vlog_emit(st, st->pos.current++);
		if (!braid_batches_position(st, st->pos.current))
		{
			st->pos.eof_reached = true;
			braid_sort_set_phase(st, BRAID_PROGRESS_DONE);
			return NULL;
		}
		pos = st->pos.current++;
	}
	else
	{
		if (st->pos.current <= 0)
			return NULL;
		if (st->pos.eof_reached)
			st->pos.eof_reached = false;
		else
		{
			st->pos.current--;
			if (st->pos.current <= 0)
				return NULL;
		}
		pos = st->pos.current - 1;
		if (st->cfg.value_log)
			return braid_vlog_emit(st, pos);
		if (!braid_batches_position(st, pos))
			elog(ERROR, "braidsort: position " INT64_FORMAT " is past the end", pos);
	}

	ExecStoreHeapTuple(braid_gather_tuple(&st->path->out.gather, pos), scanslot, false);
	st->pos.scan_slot_full = true;
	if (node->ss.ps.ps_ProjInfo == NULL)
		return scanslot;
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = scanslot;
	return ExecProject(node->ss.ps.ps_ProjInfo);
}

/*
 * braid_end
 *		Shut down the child and release the sort.
 */
static void
braid_end(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;
	int			plan_node = node->ss.ps.plan->plan_node_id;

	/*
	 * Instrumented: a parallel worker leaves what it did for its leader's
	 * EXPLAIN (instr.c), which the leader's node then frees.
	 */
	if (node->ss.ps.instrument != NULL)
	{
		if (IsParallelWorker())
		{
			if (st->instr.sorts > 0)
			{
				BraidSortInstr instr;

				snapshot_instr(st, &instr);
				braid_instr_report(plan_node, &instr);
			}
		}
		else
			braid_instr_leader_end(plan_node);
	}
	braid_progress_end(&st->mon.progress);

	braid_adaptive_end(st);
	if (st->path_ready)
	{
		release_spill(st);
		if (st->cfg.value_log)
			braid_vlog_reset(&st->path->vlog);
		else
			braid_batches_end(st);
	}
	ExecEndNode(st->child);
}

/*
 * braid_rescan
 *		Rewind over the sorted rows, or rebuild if the input changed.
 */
static void
braid_rescan(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;

	/* ExecReScan only passes changed parameters to lefttree/righttree */
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(st->child, node->ss.ps.chgParam);

	if (!st->pos.built)
		return;

	/* PostgreSQL's sort that stayed: rewound, or dropped to sort again */
	if (st->adapt.serving)
	{
		braid_adaptive_rescan(st);
		if (!st->adapt.serving)
		{
			st->pos.built = false;
			if (st->child->chgParam == NULL)
				ExecReScan(st->child);
		}
		return;
	}

	/*
	 * As nodeSort.c: rewind only when the node was set up for it (rewind,
	 * backward or mark).  Otherwise the input is read again: it may differ
	 * even with unchanged parameters (volatile quals, nextval() ...), e.g.
	 * under a correlated subplan, which rescans without EXEC_FLAG_REWIND.
	 */
	if (st->child->chgParam != NULL || st->path->merge.merger != NULL || !st->cfg.random_access)
	{
		reset_sort(st);
		/* a child with changed parameters is rescanned by ExecProcNode */
		if (st->child->chgParam == NULL)
			ExecReScan(st->child);
	}
	else
	{
		st->pos.current = 0;
		st->pos.eof_reached = false;
		st->pos.mark_current = 0;
		st->pos.mark_eof = false;
	}
}

/* braid_mark: remember the current position. */
static void
braid_mark(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;

	if (st->adapt.serving)
	{
		braid_adaptive_mark(st);
		return;
	}
	st->pos.mark_current = st->pos.current;
	st->pos.mark_eof = st->pos.eof_reached;
}

/* braid_restore: return to the marked position. */
static void
braid_restore(CustomScanState *node)
{
	BraidSortState *st = (BraidSortState *) node;

	if (st->adapt.serving)
	{
		braid_adaptive_restore(st);
		return;
	}
	st->pos.current = st->pos.mark_current;
	st->pos.eof_reached = st->pos.mark_eof;
}

/*
 * braid_explain_node
 *		ExplainCustomScan: what this process's node did, with its parallel
 *		workers' figures (sort_explain.c).
 */
static void
braid_explain_node(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BraidSortInstr instr;

	snapshot_instr((BraidSortState *) node, &instr);
	braid_explain(node, ancestors, &instr, es);
}
