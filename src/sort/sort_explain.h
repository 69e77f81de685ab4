/*-------------------------------------------------------------------------
 *
 * explain.h
 *	  EXPLAIN output of a BraidSort node, and the "Worker N" groups in
 *	  which BraidSort and BraidJoin show their parallel workers' figures.
 *
 * src/explain.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_EXPLAIN_H
#define BRAID_EXPLAIN_H

#include "postgres.h"

#include "commands/explain.h"
#include "nodes/execnodes.h"

#include "monitor/instr.h"
#include "plan/plandata.h"

extern List *braid_explain_key_list(const BraidSortPlanData *data, List *context,
									 bool useprefix);
extern void braid_explain(CustomScanState *node, List *ancestors,
						  const BraidSortInstr *instr, ExplainState *es);

/* a parallel worker's group of figures (BraidJoin's too) */
extern void braid_explain_open_worker(int n, ExplainState *es);
extern void braid_explain_close_worker(int n, ExplainState *es);
extern void braid_explain_indent_text(ExplainState *es);

#endif							/* BRAID_EXPLAIN_H */
