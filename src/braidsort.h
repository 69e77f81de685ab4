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
extern int	braid_sort_thread_count(int processes);
extern void braid_define_gucs(void);
extern size_t braid_budget_bytes(void);

/* worker.c */
extern void braid_worker_register(void);

/* planner.c */
extern void braid_planner_init(void);

/* exec.c */
extern CustomScanMethods braid_sort_scan_methods;
extern void braid_exec_init(void);

/*
 * Layout of a BraidSort CustomScan's custom_private list, written by the
 * planner and read by the executor (all plain integer/OID lists, so the plan
 * can be copied, printed and sent to parallel workers).
 */
#define BRAID_PRIV_SORTOPS		0	/* OID list: sort operators */
#define BRAID_PRIV_COLLATIONS	1	/* OID list: collations */
#define BRAID_PRIV_NULLSFIRST	2	/* int list: nulls first flags */
#define BRAID_PRIV_PARAMS		3	/* int list: see BRAID_PARAM_* */
#define BRAID_PRIV_KEYEXPRS		4	/* List of key expressions (for EXPLAIN) */
#define BRAID_PRIV_KEYCOLS		5	/* int list: input column of each key */
#define BRAID_PRIV_KEYATTNOS	6	/* heap TID mode, optional: table column
									 * of each key, read from the unprojected
									 * scan tuple */

#define BRAID_PARAM_KEYLEN		0	/* bytes of key prefix per entry */
#define BRAID_PARAM_TRUNCATES	1	/* 1 if some key may exceed keylen */
#define BRAID_PARAM_TUPLE_WIDTH 2	/* planner's estimate of heap tuple bytes */
#define BRAID_PARAM_EXPECT_SPILL 3	/* 1 if the IndexMap is expected to spill */
#define BRAID_PARAM_MODE		4	/* BRAID_MODE_* */
#define BRAID_PARAM_PROCESSES	5	/* processes running the node at once: a
									 * Gather's workers + 1 above it, else 1 */
#define BRAID_NUM_PARAMS		6

/* braidsort.gather_source */
#define BRAID_GATHER_AUTO		0
#define BRAID_GATHER_HEAP_TID	1
#define BRAID_GATHER_VALUE_LOG	2

/* How the node gets whole rows back after sorting. */
#define BRAID_MODE_HEAP_TID		0	/* refetch from the table by TID */
#define BRAID_MODE_VALUE_LOG	1	/* read from the value log by offset */

#endif							/* BRAIDSORT_H */
