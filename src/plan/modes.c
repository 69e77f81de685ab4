/*-------------------------------------------------------------------------
 *
 * modes.c
 *	  SQL: braidsort.sort_modes(query) and braidsort.join_modes(query), what
 *	  each write-limited mode would cost for every sort and every hash join
 *	  braidsort would take in a query.
 *
 * The query is planned, not run: braidsort's planner hook replaces the
 * Sorts and Hash Joins it takes, and for each BraidSort (BraidJoin) node of
 * the plan, its subplans included, the cost model (wlimit.c, joinmodel.c)
 * estimates every mode at the current braidsort.write_intensity from the
 * node's planned rows and the spill device's profile -- exactly what the
 * planner weighed -- and says which one the node would run.
 *
 * src/plan/modes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/ruleutils.h"

#include "guc.h"
#include "plan/permissions.h"
#include "plan/joindata.h"
#include "plan/plancost.h"
#include "plan/plandata.h"
#include "monitor/stats.h"
#include "core/wlimit.h"

PG_FUNCTION_INFO_V1(braidsort_sort_modes);
PG_FUNCTION_INFO_V1(braidsort_join_modes);

typedef struct ModesWalk ModesWalk;

/* Rows for one node of the kind a walk looks for. */
typedef void (*ModesNodeRows) (ModesWalk *w, CustomScan *cscan, List *ancestors);

/* What the walk over a plan needs. */
struct ModesWalk
{
	ReturnSetInfo *rsinfo;
	PlannedStmt *stmt;
	List	   *deparse_cxt;
	bool		useprefix;
	const char *node_name;		/* the nodes it looks for (CustomName) */
	ModesNodeRows node_rows;
};

/*
 * sort_node_rows
 *		One row per mode for a BraidSort node (ancestors: its parents,
 *		innermost first, for deparsing its keys).
 */
static void
sort_node_rows(ModesWalk *w, CustomScan *cscan, List *ancestors)
{
	BraidSortPlanData data;
	BraidWlEstimate est[BRAID_WL_NMODES];
	double		share;
	List	   *context;
	List	   *keys;
	StringInfoData key;
	ListCell   *lc;
	bool		with_pg;

	braid_plan_unpack(cscan->custom_private, &data);
	(void) braid_plan_sort_mode(cscan->scan.plan.plan_rows, data.keylen, data.key_tenths / 10.0,
								data.key_memory,
								data.mode == BRAID_MODE_VALUE_LOG, data.can_reread,
								data.gather_kb * 1024.0, data.gather_pass_us / 1000.0,
								data.select_collated_ns, est, &share);
	context = set_deparse_context_plan(w->deparse_cxt, (Plan *) cscan, ancestors);
	keys = braid_plan_key_list(&data, context, w->useprefix);
	initStringInfo(&key);
	foreach(lc, keys)
	{
		if (key.len > 0)
			appendStringInfoString(&key, ", ");
		appendStringInfoString(&key, (char *) lfirst(lc));
	}

	/* braidsort 0.7 and earlier declared no postgresql_ms, compared_ms */
	with_pg = w->rsinfo->setDesc->natts >= 13;
	for (int m = 0; m < BRAID_WL_NMODES; m++)
	{
		Datum		values[13];
		bool		nulls[13] = {0};
		int			c = 9;

		values[0] = Int32GetDatum(cscan->scan.plan.plan_node_id);
		values[1] = CStringGetTextDatum(key.data);
		values[2] = CStringGetTextDatum(braid_wl_mode_name((BraidWlMode) m));
		values[3] = Float8GetDatum(est[m].write_intensity);
		values[4] = Float8GetDatum(est[m].lines_written);
		values[5] = Float8GetDatum(est[m].lines_read);
		values[6] = Float8GetDatum(est[m].input_passes);
		values[7] = Float8GetDatum(est[m].selection_passes);
		values[8] = Float8GetDatum(est[m].ms);
		if (with_pg)
		{
			/*
			 * The planner's estimates (none for a sort taken adaptively):
			 * braidsort's was MergePass's should the sort spill, and a mode
			 * changes it by what the mode costs more or less than MergePass.
			 */
			nulls[9] = nulls[10] = data.est_pg_tenth_ms < 0;
			values[9] = Float8GetDatum(data.est_pg_tenth_ms / 10.0);
			values[10] = Float8GetDatum(data.expect_spill ?
										Max(data.est_braid_tenth_ms / 10.0 +
											est[m].ms - est[BRAID_WL_MERGEPASS].ms, 0.0) :
										data.est_braid_tenth_ms / 10.0);
			c = 11;
		}
		values[c] = BoolGetDatum(est[m].feasible);
		values[c + 1] = BoolGetDatum(m == data.wl_mode);
		tuplestore_putvalues(w->rsinfo->setResult, w->rsinfo->setDesc, values, nulls);
	}
}

/*
 * join_node_rows
 *		One row per mode for a BraidJoin node: the estimates the planner
 *		weighed, at the memory and write intensity in force now.
 */
static void
join_node_rows(ModesWalk *w, CustomScan *cscan, List *ancestors)
{
	BraidJoinPlanData data;
	BraidJmInput in;
	BraidJmEstimate est[BRAID_JM_NMODES];
	List	   *context;
	List	   *hashclauses = (List *) lfourth(cscan->custom_exprs);
	char	   *clause;
	double		pg_ms;

	braid_join_unpack(cscan->custom_private, &data);
	braid_join_model_input(&data, get_hash_memory_limit(), &in);
	(void) braid_jm_choose(&in, braid_write_intensity, est);
	pg_ms = braid_join_pg_ms(&data, &in);
	context = set_deparse_context_plan(w->deparse_cxt, (Plan *) cscan, ancestors);
	clause = deparse_expression((Node *) make_ands_explicit(hashclauses), context,
								w->useprefix, false);

	for (int m = 0; m < BRAID_JM_NMODES; m++)
	{
		Datum		values[13];
		bool		nulls[13] = {0};

		values[0] = Int32GetDatum(cscan->scan.plan.plan_node_id);
		values[1] = CStringGetTextDatum(clause);
		values[2] = CStringGetTextDatum(braid_jm_mode_name((BraidJoinMode) m));
		values[3] = Float8GetDatum(est[m].write_intensity);
		values[4] = Int32GetDatum(est[m].partitions);
		values[5] = Float8GetDatum(est[m].lines_written);
		values[6] = Float8GetDatum(est[m].lines_read);
		values[7] = Float8GetDatum(est[m].rescans);
		values[8] = Float8GetDatum(est[m].ms);
		values[9] = Float8GetDatum(pg_ms);
		values[10] = Float8GetDatum(braid_jm_against_pg_ms(&in, &est[m]));
		values[11] = BoolGetDatum(est[m].feasible);
		values[12] = BoolGetDatum(m == data.mode);
		tuplestore_putvalues(w->rsinfo->setResult, w->rsinfo->setDesc, values, nulls);
	}
}

static void walk_plan(ModesWalk *w, Plan *plan, List *ancestors);

/* walk_list: walk_plan over every plan of a list. */
static void
walk_list(ModesWalk *w, List *plans, List *ancestors)
{
	ListCell   *lc;

	foreach(lc, plans)
		walk_plan(w, (Plan *) lfirst(lc), ancestors);
}

/*
 * walk_plan
 *		Find the BraidSort nodes of a plan tree, in EXPLAIN's order.
 */
static void
walk_plan(ModesWalk *w, Plan *plan, List *ancestors)
{
	List	   *below;

	/* (lcons and list_delete_first reuse the list, as in EXPLAIN) */
	if (plan == NULL)
		return;
	if (IsA(plan, CustomScan) &&
		strcmp(((CustomScan *) plan)->methods->CustomName, w->node_name) == 0)
		w->node_rows(w, (CustomScan *) plan, ancestors);

	below = lcons(plan, ancestors);
	walk_plan(w, outerPlan(plan), below);
	walk_plan(w, innerPlan(plan), below);
	switch (nodeTag(plan))
	{
		case T_Append:
			walk_list(w, ((Append *) plan)->appendplans, below);
			break;
		case T_MergeAppend:
			walk_list(w, ((MergeAppend *) plan)->mergeplans, below);
			break;
		case T_SubqueryScan:
			walk_plan(w, ((SubqueryScan *) plan)->subplan, below);
			break;
		case T_CustomScan:
			walk_list(w, ((CustomScan *) plan)->custom_plans, below);
			break;
		default:
			break;
	}
	below = list_delete_first(below);
}

/*
 * query_error_callback
 *		An error in the query string (a syntax error, an unknown relation)
 *		points into that string, shown as the error's QUERY, not into the
 *		statement that called the function (as SPI does).
 */
static void
query_error_callback(void *arg)
{
	int			position = geterrposition();

	if (position > 0)
	{
		errposition(0);
		internalerrposition(position);
		internalerrquery((const char *) arg);
	}
	else
		errcontext("query \"%s\"", (const char *) arg);
}

/*
 * plan_and_walk
 *		Plan the one statement of a query string (as EXPLAIN would, without
 *		running it) and put rows for every node a walk looks for; fname
 *		names the SQL function in messages.
 */
static void
plan_and_walk(FunctionCallInfo fcinfo, const char *fname,
			  const char *node_name, ModesNodeRows node_rows)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *raw;
	ListCell   *lc;
	ErrorContextCallback errcallback;

	InitMaterializedSRF(fcinfo, 0);
	errcallback.callback = query_error_callback;
	errcallback.arg = query;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	raw = pg_parse_query(query);
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s takes exactly one statement", fname),
				 errdetail("The query string holds %d statements.", list_length(raw))));

	foreach(lc, pg_analyze_and_rewrite_fixedparams(linitial_node(RawStmt, raw), query,
												   NULL, 0, NULL))
	{
		Query	   *q = lfirst_node(Query, lc);
		PlannedStmt *stmt;
		ModesWalk	w;
		ListCell   *sp;

		if (q->commandType == CMD_UTILITY)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s cannot plan a utility statement", fname),
					 errhint("Pass the query itself, e.g. the SELECT of an EXPLAIN.")));
		/* the declines of a plan that is only shown are not counted */
		braid_stats_declines_paused = true;
		PG_TRY();
		{
			stmt = pg_plan_query(q, query, CURSOR_OPT_PARALLEL_OK, NULL);
		}
		PG_FINALLY();
		{
			braid_stats_declines_paused = false;
		}
		PG_END_TRY();

		/*
		 * as EXPLAIN (ExecutorStart): the caller must be allowed to read them
		 * (without the executor's hook: permissions.c)
		 */
		(void) braid_stmt_permitted(stmt, true);
		w.rsinfo = rsinfo;
		w.stmt = stmt;
		w.deparse_cxt = deparse_context_for_plan_tree(stmt,
													  select_rtable_names_for_explain(stmt->rtable,
																					  NULL));
		w.useprefix = list_length(stmt->rtable) > 1;
		w.node_name = node_name;
		w.node_rows = node_rows;
		walk_plan(&w, stmt->planTree, NIL);
		foreach(sp, stmt->subplans)
			walk_plan(&w, (Plan *) lfirst(sp), NIL);
	}
	error_context_stack = errcallback.previous;
}

/*
 * braidsort_sort_modes
 *		SQL: braidsort.sort_modes(query text) returns setof (node, sort_key,
 *		mode, write_intensity, lines_written, lines_read, input_passes,
 *		selection_passes, est_ms, postgresql_ms, compared_ms, feasible,
 *		chosen).
 */
Datum
braidsort_sort_modes(PG_FUNCTION_ARGS)
{
	plan_and_walk(fcinfo, "braidsort.sort_modes()", BRAID_SORT_NAME,
				  sort_node_rows);
	return (Datum) 0;
}

/*
 * braidsort_join_modes
 *		SQL: braidsort.join_modes(query text) returns setof (node,
 *		join_clause, mode, write_intensity, partitions, lines_written,
 *		lines_read, rescans, est_ms, postgresql_ms, compared_ms, feasible,
 *		chosen).
 */
Datum
braidsort_join_modes(PG_FUNCTION_ARGS)
{
	plan_and_walk(fcinfo, "braidsort.join_modes()", BRAID_JOIN_NAME,
				  join_node_rows);
	return (Datum) 0;
}
