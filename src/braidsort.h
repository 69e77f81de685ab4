/*-------------------------------------------------------------------------
 *
 * braidsort.h
 *	  Declarations shared by braidsort's PostgreSQL-facing modules.
 *
 * src/braidsort.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAIDSORT_H
#define BRAIDSORT_H

#include "nodes/extensible.h"
#include "nodes/plannodes.h"

/* Name of the custom scan provider, as EXPLAIN shows it. */
#define BRAID_SORT_NAME "BraidSort"

/* guc.c: settings */
extern bool braid_enable;
extern bool braid_force;
extern int	braid_work_mem;
extern int	braid_gather_batch;
extern int	braid_sort_threads;
extern int	braid_gather_source;
extern int	braid_sort_mode;
extern double braid_write_intensity;
extern int	braid_sort_thread_count(int processes);
extern void braid_define_gucs(void);
extern size_t braid_budget_bytes(void);

/* worker.c */
extern void braid_worker_register(void);

/* planner.c */
extern void braid_planner_init(void);

/* sort_node.c */
extern CustomScanMethods braid_sort_scan_methods;
extern void braid_exec_init(void);

/* braidsort.gather_source */
#define BRAID_GATHER_AUTO		0
#define BRAID_GATHER_HEAP_TID	1
#define BRAID_GATHER_VALUE_LOG	2

/* braidsort.sort_mode: auto, or a BraidWlMode + 1 */
#define BRAID_SORT_MODE_AUTO		0
#define BRAID_SORT_MODE_MERGEPASS	1
#define BRAID_SORT_MODE_HYBRID		2
#define BRAID_SORT_MODE_SEGMENT		3
#define BRAID_SORT_MODE_LAZY		4

#endif							/* BRAIDSORT_H */
