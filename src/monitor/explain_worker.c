/*-------------------------------------------------------------------------
 *
 * explain_worker.c
 *	  The "Worker N" groups in which BraidSort and BraidJoin show their
 *	  parallel workers' figures in EXPLAIN ANALYZE (instr.c carries the
 *	  figures to the leader).
 *
 * PostgreSQL collects a node's per-worker lines in es->workers_state and
 * prints them after the node's own (ExplainNode); the functions that open
 * and close a worker's part of it are static in explain.c.  From 18 on,
 * the pieces they are made of are exported (explain_format.h) and used;
 * before, they are copied.  braid_explain_open_worker, braid_explain_close_worker and
 * braid_explain_indent_text do what ExplainOpenWorker, ExplainCloseWorker
 * (with ExplainOpenSetAsideGroup, ExplainSaveGroup and
 * ExplainRestoreGroup) and ExplainIndentText do there, so that a worker's
 * figures join the worker's "Worker N:" group, with its times and buffers,
 * exactly as a Sort's do.
 *
 * src/monitor/explain_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "compat.h"
#include "monitor/explain_worker.h"

/* braid_explain_indent_text: ExplainIndentText (a copy before 18). */
void
braid_explain_indent_text(ExplainState *es)
{
#if PG_VERSION_NUM >= 180000
	ExplainIndentText(es);
#else
	if (es->str->len == 0 || es->str->data[es->str->len - 1] == '\n')
		appendStringInfoSpaces(es->str, es->indent * 2);
#endif
}

/*
 * braid_explain_open_worker
 *		As ExplainOpenWorker: begin or resume worker n's output.
 */
void
braid_explain_open_worker(int n, ExplainState *es)
{
	ExplainWorkersState *wstate = es->workers_state;

	wstate->prev_str = es->str;
	if (!wstate->worker_inited[n])
	{
		initStringInfo(&wstate->worker_str[n]);
		es->str = &wstate->worker_str[n];
#if PG_VERSION_NUM >= 180000
		ExplainOpenSetAsideGroup("Worker", NULL, true, 2, es);
		if (es->format != EXPLAIN_FORMAT_TEXT)
			ExplainPropertyInteger("Worker Number", NULL, n, es);
#else
		/* ExplainOpenSetAsideGroup("Worker", NULL, true, 2, es) */
		if (es->format == EXPLAIN_FORMAT_JSON || es->format == EXPLAIN_FORMAT_YAML)
			es->grouping_stack = lcons_int(0, es->grouping_stack);
		if (es->format != EXPLAIN_FORMAT_TEXT)
		{
			es->indent += 2;
			ExplainPropertyInteger("Worker Number", NULL, n, es);
		}
#endif
		wstate->worker_inited[n] = true;
	}
	else
	{
		es->str = &wstate->worker_str[n];
#if PG_VERSION_NUM >= 180000
		ExplainRestoreGroup(es, 2, &wstate->worker_state_save[n]);
#else
		/* ExplainRestoreGroup(es, 2, &wstate->worker_state_save[n]) */
		if (es->format == EXPLAIN_FORMAT_JSON || es->format == EXPLAIN_FORMAT_YAML)
			es->grouping_stack = lcons_int(wstate->worker_state_save[n],
										   es->grouping_stack);
		if (es->format != EXPLAIN_FORMAT_TEXT)
			es->indent += 2;
#endif
	}

	/* text: "Worker N:" begins the worker's first line, the rest indented */
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		if (es->str->len == 0)
		{
			braid_explain_indent_text(es);
			appendStringInfo(es->str, "Worker %d:  ", n);
		}
		es->indent++;
	}
}

/*
 * braid_explain_close_worker
 *		As ExplainCloseWorker; pairs with braid_explain_open_worker.
 */
void
braid_explain_close_worker(int n, ExplainState *es)
{
	ExplainWorkersState *wstate = es->workers_state;

#if PG_VERSION_NUM >= 180000
	ExplainSaveGroup(es, 2, &wstate->worker_state_save[n]);
#else
	/* ExplainSaveGroup(es, 2, &wstate->worker_state_save[n]) */
	if (es->format != EXPLAIN_FORMAT_TEXT)
		es->indent -= 2;
	if (es->format == EXPLAIN_FORMAT_JSON || es->format == EXPLAIN_FORMAT_YAML)
	{
		wstate->worker_state_save[n] = linitial_int(es->grouping_stack);
		es->grouping_stack = list_delete_first(es->grouping_stack);
	}
#endif

	/* text: drop a "Worker N:" prefix left without a line */
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		while (es->str->len > 0 && es->str->data[es->str->len - 1] != '\n')
			es->str->data[--(es->str->len)] = '\0';
		es->indent--;
	}
	es->str = wstate->prev_str;
}
