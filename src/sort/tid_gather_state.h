/*-------------------------------------------------------------------------
 *
 * tid_gather_state.h
 *	  The state of the late gather by heap TID, shared by its planning of a
 *	  batch (tid_gather.c) and the copies of its tuples (tid_gather_copy.c).
 *
 * src/sort/tid_gather_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_TID_GATHER_STATE_H
#define BRAID_TID_GATHER_STATE_H

#include "postgres.h"

#include "access/htup.h"
#include "storage/bufmgr.h"
#include "utils/relcache.h"

/*
 * Work a helper thread does beside its share of a batch's copies (the next
 * batch's merge): one small step per call, returning the fraction of the
 * work done so far, 1 or more when there is no more.  Called on one helper
 * thread only, during braid_gather_load(); pure memory work (no server
 * calls, allocations or errors).
 */
typedef double (*BraidGatherIdleStep) (void *arg);

typedef struct BraidGather
{
	Relation	rel;
	BufferAccessStrategy strategy;
	MemoryContext cxt;
	BlockNumber nblocks;		/* the table's size when the gather began */
	Buffer	   *recent;			/* buffer last seen holding each block */
	BlockNumber nrecent;

	/* the loaded batch */
	int64		first;			/* sort position of its first row */
	int			nrows;			/* rows loaded, 0 if none */
	const uint64 *refs;			/* refs, in output order (caller's memory) */
	uint32	   *offsets;		/* arena offset of each row's tuple */
	int			rows_cap;
	uint64	   *recs;			/* the batch's rows in block order, each arena
								 * offset << 32 | line pointer << 16 | length */
	BlockNumber *blocks;		/* the batch's distinct blocks, ascending */
	uint32	   *blkstart;		/* first recs[] index of each block, and n */
	int			nblk;
	size_t		blk_cap;		/* room in blocks[] and blkstart[] */
	uint32	   *counts;			/* scratch: counting sort buckets */
	size_t		counts_cap;
	char	   *arena;			/* tuple copies, in output order; the
								 * BRAID_GATHER_HEADROOM bytes before it are
								 * allocated too */
	size_t		arena_cap;		/* bytes from arena on */
	bool		arena_external; /* arena is caller's memory */
	uint32		strip;			/* leading header bytes not copied (0 or
								 * BRAID_GATHER_STRIP) */
	HeapTupleData tuple;		/* header handed to the scan slot */

	/*
	 * Pages pinned together while their tuples are copied: two sets, so that
	 * the backend can pin the next chunk while the threads copy from this
	 * one.
	 */
	int			chunk_blocks;
	Buffer	   *chunk_bufs[2];
	Page	   *chunk_pages[2];
	int			threads;		/* threads sharing the copies */

	/* work for an idle helper during the next load (NULL: none) */
	BraidGatherIdleStep idle_step;
	void	   *idle_arg;

	/* or, when only a few pages may be pinned, a window streamed through */
	int			win_size;		/* 0 = chunks only */
	Buffer	   *win_bufs;
	Page	   *win_pages;

	/*
	 * 17+, braidsort.gather_read_stream on (off by default): a table read
	 * through a buffer ring is read through a read stream of the batch's
	 * blocks (ahead of the pins, adjacent blocks combined).  NULL between
	 * batches.
	 */
	bool		use_stream;
	struct ReadStream *stream;
	int			stream_next;	/* index in blocks[] the stream asks for next */

	/* statistics */
	int64		batches;
	int64		block_visits;
	size_t		peak_arena;
} BraidGather;

/*
 * A gathered tuple's header starts with its xmin, xmax, command id and the
 * block half of its ctid: 16 bytes that only system columns read (xmin,
 * xmax, cmin, cmax; ctid comes from t_self).  When the node's expressions
 * read none of them, the gather copies each tuple without them, 16 bytes
 * of about 128 at the sortbenchmark shape, so more rows fit in a batch and
 * every batch revisits the same pages.  The tuple handed to the slot then
 * starts 16 bytes before its copy (over the previous copy's tail), hence
 * the headroom before the arena.
 */
#define BRAID_GATHER_STRIP		16
#define BRAID_GATHER_HEADROOM	16

/* braid_gather_row_bytes: arena bytes a tuple of len bytes takes. */
static inline size_t
braid_gather_row_bytes(const BraidGather *g, uint32 len)
{
	return MAXALIGN(len > g->strip ? len - g->strip : len);
}

#endif							/* BRAID_TID_GATHER_STATE_H */
