/*-------------------------------------------------------------------------
 *
 * progress.h
 *	  What each running BraidSort node is doing, for braidsort.progress.
 *
 * src/io/progress.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PROGRESS_H
#define BRAID_PROGRESS_H

#include "postgres.h"

/* Nodes shown per backend; a backend's further nodes are not shown. */
#define BRAID_PROGRESS_NODES	4

/*
 * What a node is doing (braidsort.progress's phase).  The build may make
 * runs on a helper while it goes on reading: it stays "building" then, and
 * the runs column counts them.
 */
typedef enum BraidProgressPhase
{
	BRAID_PROGRESS_BUILDING,	/* reading its input into the IndexMap */
	BRAID_PROGRESS_WRITING_RUN, /* the build stopped: a full IndexMap is
								 * sorted and written as a run, or a helper's
								 * run is waited for */
	BRAID_PROGRESS_SORTING,		/* sorting the whole IndexMap in memory */
	BRAID_PROGRESS_MERGING,		/* merge passes before the first row */
	BRAID_PROGRESS_GATHERING,	/* returning rows (a final merge streams) */
	BRAID_PROGRESS_DONE,		/* returned its last row */
	BRAID_PROGRESS_SELECTING	/* a write-limited sort's selection pass
								 * re-reads its input */
} BraidProgressPhase;

/*
 * A node's claim on one of its backend's slots.  The generation tells a
 * claim from a later one of the same slot: a node whose slot was released
 * behind its back (an abort) writes nothing.
 */
typedef struct BraidProgress
{
	int			slot;			/* in this backend's row, -1 if none */
	uint64		generation;
} BraidProgress;

/* set-up, registered with braid_shmem_add() (shmem.c) */
extern void braid_progress_shmem_request(void);
extern void braid_progress_shmem_init(void);

/* the node's updates (sort_*.c) */
extern void braid_progress_start(BraidProgress *p, int node, double rows_estimated);
extern void braid_progress_set_phase(const BraidProgress *p, BraidProgressPhase phase);
extern void braid_progress_set_rows(const BraidProgress *p, int64 rows_read);
extern void braid_progress_add_run(const BraidProgress *p);
extern void braid_progress_add_merge_pass(const BraidProgress *p);
extern void braid_progress_set_batches(const BraidProgress *p, int64 batches);
extern void braid_progress_end(BraidProgress *p);

/* which node the backend's I/O gate waits are for (sort_*.c) */
extern const BraidProgress *braid_progress_enter(const BraidProgress *p);
extern void braid_progress_leave(const BraidProgress *prev);

/* a wait for the device's phase gate (iosched.c) */
extern void braid_progress_wait_begin(int gate_phase);
extern void braid_progress_wait_end(void);

#endif							/* BRAID_PROGRESS_H */
