/*-------------------------------------------------------------------------
 *
 * guc.h
 *	  braidsort's parameters for the planner and the executor nodes, and
 *	  the values of its enum parameters.
 *
 * The device's and the I/O gate's parameters are their modules' own
 * (io/device.h, io/iosched.h, io/hugepages.h); guc.c defines every
 * parameter, those included.
 *
 * src/guc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_GUC_H
#define BRAID_GUC_H

#include <stddef.h>

#include "c.h"

extern bool braid_enable;
extern bool braid_force;
extern int	braid_adaptive;
extern int	braid_work_mem;
extern int	braid_gather_batch;
extern int	braid_sort_threads;
extern int	braid_gather_source;
extern int	braid_parallel_sort;
extern int	braid_parallel_join;
extern int	braid_sort_mode;
extern double braid_write_intensity;
extern int	braid_join_mode;
extern bool braid_join_read_ahead;
extern bool braid_gather_read_stream;
extern bool braid_join_range_partitions;
extern int	braid_log_declines;

extern void braid_define_gucs(void);
extern int	braid_sort_thread_count(int processes);
extern size_t braid_budget_bytes(void);
extern int	braid_decline_level(void);

/* braidsort.gather_source */
#define BRAID_GATHER_AUTO		0
#define BRAID_GATHER_HEAP_TID	1
#define BRAID_GATHER_VALUE_LOG	2

/* braidsort.parallel_sort */
#define BRAID_PARALLEL_SORT_AUTO	0	/* the cost model chooses */
#define BRAID_PARALLEL_SORT_EACH	1	/* each process sorts its share */
#define BRAID_PARALLEL_SORT_ONE		2	/* one sort replaces the Gather Merge */
#define BRAID_PARALLEL_SORT_SHARED	3	/* a Gather over one sort every
										 * process builds replaces it */

/* braidsort.parallel_join */
#define BRAID_PARALLEL_JOIN_SHARED	0	/* the processes partition the inner
										 * input together */
#define BRAID_PARALLEL_JOIN_EACH	1	/* each process partitions it whole */

/* braidsort.log_declines */
#define BRAID_LOG_DECLINES_OFF		0
#define BRAID_LOG_DECLINES_NOTICE	1
#define BRAID_LOG_DECLINES_LOG		2

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

#endif							/* BRAID_GUC_H */
