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
extern int	braid_adaptive;
extern int	braid_work_mem;
extern int	braid_gather_batch;
extern int	braid_sort_threads;
extern int	braid_gather_source;
extern int	braid_sort_mode;
extern double braid_write_intensity;
extern int	braid_join_mode;
extern bool braid_join_read_ahead;
extern bool braid_join_range_partitions;
extern bool braid_advise_huge_pages_on;
extern int	braid_sort_thread_count(int processes);
extern void braid_define_gucs(void);
extern size_t braid_budget_bytes(void);

/* hugepages.c */
extern void braid_advise_huge_pages(void);

/* worker.c */
extern void braid_worker_register(void);

/* permissions.c */
extern bool braid_rtable_permitted(List *rtable, bool ereport_on_violation);

/* planner.c */
extern void braid_planner_init(void);
extern bool braid_plan_messages_hidden;

/*
 * BRAID_PLAN_DEBUG
 *		The planner's DEBUG1 account of what it did with a Sort or a Hash
 *		Join.  Its estimates come from the tables' statistics, which a role
 *		may not read (pg_stats hides them): for a statement with a table the
 *		role may not read, which the executor refuses only after planning,
 *		nothing is said.
 */
#define BRAID_PLAN_DEBUG(...) \
	do { \
		if (!braid_plan_messages_hidden) \
			elog(DEBUG1, __VA_ARGS__); \
	} while (0)
extern bool braid_reads_changing_header(Node *node);
extern bool braid_heap_rescannable(Plan *child);
extern bool braid_spill_has_room(double bytes, const char *what, char **why);
extern bool braid_heap_tid_input(PlannedStmt *stmt, Plan *child, Oid *relid,
								 double *table_pages, bool *table_cached, char **why);
extern bool braid_table_cached(Relation rel, double table_pages);

/* sort_node.c */
extern CustomScanMethods braid_sort_scan_methods;
extern void braid_exec_init(void);

/* Name of the join provider, as EXPLAIN shows it. */
#define BRAID_JOIN_NAME "BraidJoin"

/* join_plan.c, join_node.c */
extern Plan *braid_try_join(PlannedStmt *stmt, HashJoin *hj, int processes, char **why);
extern CustomScanMethods braid_join_scan_methods;
extern void braid_join_exec_init(void);

/* braidsort.gather_source */
#define BRAID_GATHER_AUTO		0
#define BRAID_GATHER_HEAP_TID	1
#define BRAID_GATHER_VALUE_LOG	2

/* braidsort.adaptive */
#define BRAID_ADAPTIVE_OFF		0
#define BRAID_ADAPTIVE_ON		1	/* switch if the cost model expects a gain */
#define BRAID_ADAPTIVE_ALWAYS	2	/* switch whenever past work_mem (testing) */

/* braidsort.sort_mode: auto, or a BraidWlMode + 1 */
#define BRAID_SORT_MODE_AUTO		0
#define BRAID_SORT_MODE_MERGEPASS	1
#define BRAID_SORT_MODE_HYBRID		2
#define BRAID_SORT_MODE_SEGMENT		3
#define BRAID_SORT_MODE_LAZY		4

/* braidsort.join_mode: off, auto, or a BraidJoinMode + 2 */
#define BRAID_JOIN_MODE_OFF			0
#define BRAID_JOIN_MODE_AUTO		1
#define BRAID_JOIN_MODE_GRACE		2
#define BRAID_JOIN_MODE_HYBRID		3
#define BRAID_JOIN_MODE_SEGMENTED	4
#define BRAID_JOIN_MODE_LAZY		5

#endif							/* BRAIDSORT_H */
