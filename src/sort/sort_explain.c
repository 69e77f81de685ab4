/*-------------------------------------------------------------------------
 *
 * sort_explain.c
 *	  EXPLAIN output of a BraidSort node: its sort keys and method, and with
 *	  ANALYZE what the sort did, in this process and in each parallel
 *	  worker; and the worker groups BraidJoin's workers' figures go in.
 *
 * The property names are stable (tools parse them).  A parallel worker's
 * figures (instr.c) go where PostgreSQL puts a Sort's: in text format a
 * "Worker N:" line or two after the node's own lines, in the other formats
 * a "Worker" object of the node's "Workers" list, with the same property
 * names as the node's own.
 *
 * src/sort/sort_explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "compat.h"
#include "monitor/explain_worker.h"
#include "monitor/instr.h"
#include "sort/sort_explain.h"
#include "plan/plandata.h"
#include "core/wlimit.h"

/* explain_sort_keys: the "Sort Key" list, from the plan's data. */
static void
explain_sort_keys(CustomScanState *node, const BraidSortPlanData *data,
				  List *ancestors, ExplainState *es)
{
	bool		useprefix = (BRAID_EXPLAIN_RTABLE_SIZE(es) > 1 || es->verbose);
	List	   *context;
	List	   *keys = NIL;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	keys = braid_plan_key_list(data, context, useprefix);
	ExplainPropertyList("Sort Key", keys, es);
}

/*
 * method_name
 *		"Sort Method" of a sort that spilled or did not, in a write-limited
 *		mode (BraidWlMode) or not.
 */
static const char *
method_name(bool spilled, int wl_mode)
{
	if (!spilled)
		return "braid onepass";
	switch (wl_mode)
	{
		case BRAID_WL_HYBRID:
			return "braid hybrid";
		case BRAID_WL_SEGMENT:
			return "braid segment";
		case BRAID_WL_LAZY:
			return "braid lazy";
		default:
			return "braid mergepass";
	}
}

/* instr_spilled: did the sort these figures are of go beyond OnePass? */
static bool
instr_spilled(const BraidSortInstr *instr)
{
	return instr->runs > 0 || instr->shared_runs > 0 || instr->wl_mode != BRAID_WL_MERGEPASS;
}

/*
 * source_name
 *		"Gather Source": with the figures of a sort (instr), where its rows
 *		came back from, else where they are expected to.
 */
static const char *
source_name(bool value_log, const BraidSortInstr *instr)
{
	if (!value_log)
		return "heap tid";
	if (instr != NULL && instr->gather_source == BRAID_SOURCE_MEMORY)
		return "memory";
	return "value log";
}

/* refs_name: "Sorted Refs". */
static const char *
refs_name(BraidSortedRefs refs)
{
	switch (refs)
	{
		case BRAID_SORTED_REFS_DEVICE:
			return "device";
		case BRAID_SORTED_REFS_STREAM:
			return "merge stream";
		default:
			return "memory";
	}
}

/*
 * explain_figures
 *		What a sort did, one property each; the Key Prefix too unless
 *		keylen is -1 (a worker's, which is the node's).
 */
static void
explain_figures(const BraidSortInstr *instr, int keylen, bool value_log,
				ExplainState *es)
{
	ExplainPropertyInteger("Rows Sorted", NULL, instr->rows_sorted, es);
	/* a shared sort's emitter: every participant's runs or entries taken */
	if (instr->shared_parts > 0)
	{
		ExplainPropertyInteger("Processes Merged", NULL, instr->shared_parts, es);
		ExplainPropertyInteger("Rows Merged", NULL, instr->shared_rows, es);
	}
	if (keylen >= 0)
		ExplainPropertyInteger("Key Prefix", "bytes", keylen, es);
	ExplainPropertyInteger("IndexMap Memory", "kB", (int64) (instr->peak_map_bytes / 1024), es);
	/* stable names: tools parse these */
	ExplainPropertyInteger("Runs", NULL, instr->runs, es);
	ExplainPropertyInteger("Merge Passes", NULL, instr->merge_passes, es);
	ExplainPropertyInteger("Device Bytes Written", NULL, (int64) instr->device.bytes_written, es);
	ExplainPropertyInteger("Device Bytes Read", NULL, (int64) instr->device.bytes_read, es);
	ExplainPropertyInteger("Device Lines Written", NULL, (int64) instr->device.lines_written, es);
	ExplainPropertyInteger("Device Lines Read", NULL, (int64) instr->device.lines_read, es);
	if (instr->wl_mode != BRAID_WL_MERGEPASS)
	{
		ExplainPropertyInteger("Selection Passes", NULL, instr->selection_passes, es);
		ExplainPropertyInteger("Memory Run Entries", NULL, instr->memory_run_entries, es);
		if (instr->wl_mode == BRAID_WL_LAZY)
			ExplainPropertyBool("Materialized", instr->materialized, es);
	}
	ExplainPropertyInteger("Sort Threads", NULL, instr->sort_threads, es);
	/* collated keys sorted by their ranks (sort_map.c) */
	if (es->verbose && instr->rank_tried)
	{
		ExplainPropertyInteger("Ranked Keys", NULL, instr->ranked_keys, es);
		ExplainPropertyInteger("Rank Memory", "kB", (int64) (instr->peak_rank_bytes / 1024), es);
	}
	ExplainPropertyInteger("Gather Batches", NULL, instr->gather_batches, es);
	ExplainPropertyInteger("Gather Memory", "kB", (int64) (instr->peak_gather_bytes / 1024), es);
	if (!value_log)
		ExplainPropertyText("Sorted Refs", refs_name(instr->sorted_refs), es);
	if (instr->sorts > 1)
		ExplainPropertyInteger("Sorts", NULL, instr->sorts, es);
	if (es->timing)
	{
		ExplainPropertyFloat("Build Time", "ms", instr->build_ms, 3, es);
		ExplainPropertyFloat("Sort Time", "ms", instr->sort_ms, 3, es);
		ExplainPropertyFloat("Merge Time", "ms", instr->merge_ms + instr->merge_stream_ms, 3, es);
		ExplainPropertyFloat("Gather Time", "ms", instr->gather_ms - instr->merge_stream_ms, 3, es);
		if (instr->wl_mode == BRAID_WL_SEGMENT || instr->wl_mode == BRAID_WL_LAZY)
			ExplainPropertyFloat("Selection Time", "ms", instr->select_ms, 3, es);
		/* how much of the final merge a helper did while gathering */
		if (instr->merge_ahead)
			ExplainPropertyInteger("Rows Merged Ahead", NULL, instr->rows_merged_ahead, es);
	}
}

/*
 * explain_switch_estimates
 *		An adaptive node whose input outgrew work_mem, under braidsort.adaptive
 *		= on: the cost model's estimates its switch weighed, braidsort's path
 *		against PostgreSQL's external sort (in text, switch_estimates_text).
 */
static char *
switch_estimates_text(const BraidSortInstr *instr)
{
	return psprintf("braidsort %.2f ms, PostgreSQL %.2f ms",
					instr->switch_braid_ms, instr->switch_pg_ms);
}

static void
explain_switch_estimates(const BraidSortInstr *instr, ExplainState *es)
{
	if (!instr->switch_estimated)
		return;
	if (es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Switch Estimates", switch_estimates_text(instr), es);
	else
	{
		ExplainPropertyFloat("Switch Estimate braidsort", "ms", instr->switch_braid_ms, 2, es);
		ExplainPropertyFloat("Switch Estimate PostgreSQL", "ms", instr->switch_pg_ms, 2, es);
	}
}

/* write_intensity_text: the setting to two decimals, or "cost-optimal". */
static char *
write_intensity_text(const BraidSortPlanData *data)
{
	return data->write_intensity < 0 ? pstrdup("cost-optimal") :
		psprintf("%.2f", data->write_intensity);
}

/*
 * explain_write_intensity
 *		A write-limited sort's share of MergePass's writes: the setting, or
 *		the cost model's choice.
 */
static void
explain_write_intensity(const BraidSortPlanData *data, ExplainState *es)
{
	if (data->write_intensity < 0 || es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Write Intensity", write_intensity_text(data), es);
	else
		ExplainPropertyFloat("Write Intensity", NULL, data->write_intensity, 2, es);
}

/*
 * explain_tuplesort
 *		An adaptive node whose sort stayed PostgreSQL's: its method and
 *		space exactly as a Sort node shows them (show_sort_info), and where
 *		the cost model declined to switch.
 */
static void
explain_tuplesort(const BraidSortInstr *instr, ExplainState *es)
{
	const char *method = tuplesort_method_name((TuplesortMethod) instr->tuplesort_method);
	const char *space = instr->tuplesort_disk ? "Disk" : "Memory";

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		braid_explain_indent_text(es);
		appendStringInfo(es->str, "Sort Method: %s  %s: " INT64_FORMAT "kB\n",
						 method, space, instr->tuplesort_kb);
	}
	else
	{
		ExplainPropertyText("Sort Method", method, es);
		ExplainPropertyInteger("Sort Space Used", "kB", instr->tuplesort_kb, es);
		ExplainPropertyText("Sort Space Type", space, es);
	}
	/* it outgrew work_mem, but the cost model left it to PostgreSQL */
	if (instr->switch_declined_rows > 0)
		ExplainPropertyInteger("Switch Declined At Rows", NULL, instr->switch_declined_rows, es);
	explain_switch_estimates(instr, es);
}

/*
 * explain_worker_text
 *		A worker's figures in text format, as a Sort's worker line: the
 *		method, its share of the rows and memory; then, if it used the
 *		spill device, runs and traffic; then, with TIMING, its times.  The
 *		other formats have every figure.
 */
static void
explain_worker_text(const BraidSortInstr *w, const BraidSortPlanData *data, ExplainState *es)
{
	braid_explain_indent_text(es);
	appendStringInfo(es->str, "Sort Method: %s  Rows Sorted: " INT64_FORMAT
					 "  IndexMap Memory: " INT64_FORMAT " kB",
					 method_name(instr_spilled(w), w->wl_mode), w->rows_sorted,
					 (int64) (w->peak_map_bytes / 1024));
	if (w->adaptive == BRAID_ADAPTIVE_SWITCHED)
		appendStringInfo(es->str, "  Switched At Rows: " INT64_FORMAT, w->switched_at_rows);
	if (w->adaptive == BRAID_ADAPTIVE_SWITCHED && w->switch_estimated)
		appendStringInfo(es->str, "  Switch Estimates: %s", switch_estimates_text(w));
	if (w->gather_batches > 0)
		appendStringInfo(es->str, "  Gather Batches: " INT64_FORMAT, w->gather_batches);
	if (w->sorts > 1)
		appendStringInfo(es->str, "  Sorts: " INT64_FORMAT, w->sorts);
	if (w->shared_parts > 0)
		appendStringInfo(es->str, "  Processes Merged: %d  Rows Merged: " INT64_FORMAT,
						 w->shared_parts, w->shared_rows);
	appendStringInfoChar(es->str, '\n');

	if (w->runs > 0 || w->device.bytes_written > 0 || w->device.bytes_read > 0)
	{
		braid_explain_indent_text(es);
		appendStringInfo(es->str, "Runs: " INT64_FORMAT "  Merge Passes: " INT64_FORMAT
						 "  Device Bytes Written: " UINT64_FORMAT
						 "  Device Bytes Read: " UINT64_FORMAT "\n",
						 w->runs, w->merge_passes,
						 w->device.bytes_written, w->device.bytes_read);
	}
	if (w->wl_mode != BRAID_WL_MERGEPASS)
	{
		braid_explain_indent_text(es);
		appendStringInfo(es->str, "Write Intensity: %s  Selection Passes: " INT64_FORMAT
						 "  Memory Run Entries: " INT64_FORMAT "\n",
						 write_intensity_text(data), w->selection_passes, w->memory_run_entries);
	}
	if (es->timing)
	{
		braid_explain_indent_text(es);
		appendStringInfo(es->str, "Build Time: %.3f ms  Sort Time: %.3f ms"
						 "  Merge Time: %.3f ms  Gather Time: %.3f ms\n",
						 w->build_ms, w->sort_ms, w->merge_ms + w->merge_stream_ms,
						 w->gather_ms - w->merge_stream_ms);
	}
}

/*
 * braid_explain
 *		ExplainCustomScan: Sort Key and method; with ANALYZE, what the sort
 *		did in this process (instr) and in each parallel worker that ran
 *		it.  The node's own lines are as they always were: a leader that
 *		sorted nothing (parallel_leader_participation = off) shows only the
 *		planned method, and its workers' figures follow.
 */
void
braid_explain(CustomScanState *node, List *ancestors, const BraidSortInstr *instr,
			  ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	BraidSortPlanData data;
	bool		value_log;
	bool		expect_spill;
	const BraidSortInstr *shown = instr;
	BraidWorkerInstr *workers = NULL;
	int			nworkers = 0;
	bool		sorted;
	bool		spilled;
	int			wl_mode;

	braid_plan_unpack(cscan->custom_private, &data);
	value_log = data.mode == BRAID_MODE_VALUE_LOG;

	/*
	 * (a shared sort's emitter merges every process's runs where they spill
	 * or where all their entries outgrow its IndexMap, both in expect_spill,
	 * where full keys may be kept aside, in the processes' memory, or where
	 * the leader takes no part: sort/sort_shared.c)
	 */
	expect_spill = data.expect_spill ||
		(data.shared && (data.truncates || !parallel_leader_participation));
	explain_sort_keys(node, &data, ancestors, es);
	if (data.replaced_workers > 0)
		ExplainPropertyText("Replaces",
							psprintf("Gather Merge (Workers Planned: %d)", data.replaced_workers),
							es);
	if (data.shared)
		ExplainPropertyText("Shared Sort",
							psprintf("built by %d processes, sorted by one", data.processes),
							es);

	if (es->analyze)
		workers = braid_instr_worker_reports(cscan->scan.plan.plan_node_id, BRAID_INSTR_SORT,
											 &nworkers);

	/*
	 * No per-worker output (an invisible Gather, force_parallel_mode =
	 * regress, whose single worker ran the plan): as for a Sort, the worker's
	 * figures are shown as the node's.
	 */
	if (es->workers_state == NULL && nworkers > 0)
	{
		if (instr->sorts == 0)
			shown = &workers[0].u.sort;
		nworkers = 0;
	}

	/* with ANALYZE what happened, else what the planner expects */
	sorted = es->analyze && shown->sorts > 0;
	wl_mode = sorted ? shown->wl_mode : data.wl_mode;
	spilled = sorted ? instr_spilled(shown) : expect_spill;
	if (sorted && shown->adaptive == BRAID_ADAPTIVE_TUPLESORT)
		explain_tuplesort(shown, es);
	else if (data.adaptive && !sorted)
		ExplainPropertyText("Sort Method", "adaptive", es);
	else
	{
		ExplainPropertyText("Sort Method", method_name(spilled, wl_mode), es);
		if (sorted && shown->adaptive == BRAID_ADAPTIVE_SWITCHED)
		{
			ExplainPropertyInteger("Switched At Rows", NULL, shown->switched_at_rows, es);
			explain_switch_estimates(shown, es);
		}
		if (spilled && wl_mode != BRAID_WL_MERGEPASS)
			explain_write_intensity(&data, es);
		ExplainPropertyText("Gather Source", source_name(value_log, sorted ? shown : NULL), es);
		if (sorted)
			explain_figures(shown, data.keylen, value_log, es);
	}

	for (int i = 0; i < nworkers; i++)
	{
		const BraidSortInstr *w = &workers[i].u.sort;
		int			n = workers[i].worker;

		if (n < 0 || n >= es->workers_state->num_workers)
			continue;
		braid_explain_open_worker(n, es);
		if (w->adaptive == BRAID_ADAPTIVE_TUPLESORT)
			explain_tuplesort(w, es);
		else if (es->format == EXPLAIN_FORMAT_TEXT)
			explain_worker_text(w, &data, es);
		else
		{
			ExplainPropertyText("Sort Method", method_name(instr_spilled(w), w->wl_mode), es);
			if (w->adaptive == BRAID_ADAPTIVE_SWITCHED)
			{
				ExplainPropertyInteger("Switched At Rows", NULL, w->switched_at_rows, es);
				explain_switch_estimates(w, es);
			}
			if (instr_spilled(w) && w->wl_mode != BRAID_WL_MERGEPASS)
				explain_write_intensity(&data, es);
			ExplainPropertyText("Gather Source", source_name(value_log, w), es);
			explain_figures(w, -1, value_log, es);
		}
		braid_explain_close_worker(n, es);
	}
}
