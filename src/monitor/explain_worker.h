/*-------------------------------------------------------------------------
 *
 * explain_worker.h
 *	  A parallel worker's group of figures in EXPLAIN (explain_worker.c).
 *
 * src/monitor/explain_worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_EXPLAIN_WORKER_H
#define BRAID_EXPLAIN_WORKER_H

#include "compat.h"

extern void braid_explain_open_worker(int n, ExplainState *es);
extern void braid_explain_close_worker(int n, ExplainState *es);
extern void braid_explain_indent_text(ExplainState *es);

#endif							/* BRAID_EXPLAIN_WORKER_H */
