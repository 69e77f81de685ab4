/*-------------------------------------------------------------------------
 *
 * explain.h
 *	  EXPLAIN output of a BraidSort node.
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

#include "instr.h"
#include "plandata.h"

extern List *braid_explain_key_list(const BraidSortPlanData *data, List *context,
									 bool useprefix);
extern void braid_explain(CustomScanState *node, List *ancestors,
						  const BraidSortInstr *instr, ExplainState *es);

#endif							/* BRAID_EXPLAIN_H */
