/*-------------------------------------------------------------------------
 *
 * tid_gather_copy.h
 *	  Copying a planned gather batch's tuples (tid_gather_copy.c).
 *
 * src/sort/tid_gather_copy.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_TID_GATHER_COPY_H
#define BRAID_TID_GATHER_COPY_H

#include "sort/tid_gather_state.h"

/* Pages below which copies are not shared with helpers. */
#define GATHER_PARALLEL_MIN_BLOCKS 256

extern void braid_gather_copy_rows(BraidGather *g);
extern void braid_gather_stop_helpers(void);

#endif							/* BRAID_TID_GATHER_COPY_H */
