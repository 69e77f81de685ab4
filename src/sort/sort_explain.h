/*-------------------------------------------------------------------------
 *
 * sort_explain.h
 *	  EXPLAIN output of a BraidSort node.
 *
 * src/sort/sort_explain.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SORT_EXPLAIN_H
#define BRAID_SORT_EXPLAIN_H

#include "postgres.h"

#include "compat.h"
#include "nodes/execnodes.h"

#include "monitor/instr.h"
#include "plan/plandata.h"

extern void braid_explain(CustomScanState *node, List *ancestors,
						  const BraidSortInstr *instr, ExplainState *es);

#endif							/* BRAID_SORT_EXPLAIN_H */
