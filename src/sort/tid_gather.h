/*-------------------------------------------------------------------------
 *
 * tid_gather.h
 *	  Late materialization of sorted rows from heap TIDs, in batches.
 *
 * src/sort/tid_gather.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_TID_GATHER_H
#define BRAID_TID_GATHER_H

#include "postgres.h"

#include "access/htup.h"
#include "storage/bufmgr.h"
#include "utils/relcache.h"

#include "core/refs.h"
#include "sort/tid_gather_state.h"

extern void braid_gather_begin(BraidGather *g, Relation rel, MemoryContext cxt);
extern void braid_gather_set_threads(BraidGather *g, int threads);
extern void braid_gather_set_arena(BraidGather *g, char *mem, size_t cap);
extern void braid_gather_set_strip(BraidGather *g, bool strip);
extern void braid_gather_set_idle(BraidGather *g, BraidGatherIdleStep step,
								  void *arg);
extern void braid_gather_load(BraidGather *g, int64 first, const uint64 *refs, int n);
extern HeapTuple braid_gather_tuple(BraidGather *g, int64 pos);
extern void braid_gather_reset(BraidGather *g);
extern void braid_gather_end(BraidGather *g);

#endif							/* BRAID_TID_GATHER_H */
