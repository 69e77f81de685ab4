/*-------------------------------------------------------------------------
 *
 * tid_gather.c
 *	  Batched late materialization of sorted rows from heap TIDs.
 *
 * After the sort, rows are fetched back from the table a batch at a time
 * (WiscSort's offset queue).  A batch is visited in heap block order, so
 * each heap page is pinned once per batch however many of the batch's rows
 * it holds, and each tuple is copied straight to its final position in an
 * arena laid out in output order (the lengths are known from the IndexMap,
 * so the positions are computed before any page is read).  Rows are then
 * emitted from the arena sequentially.
 *
 * This is what makes late materialization pay: fetching tuples one TID at a
 * time in output order costs a buffer lookup and a random page touch per
 * row and loses to PostgreSQL's sort; batched block-order copies touch each
 * page once per batch.  When the table is larger than shared buffers the
 * pages come from the kernel's page cache through a bulk-read ring, once
 * per batch, so larger batches mean fewer rereads.
 *
 * Tuples are read with a pin and no content lock, as heapgettup_pagemode()
 * does: a tuple visible to the query's registered snapshot cannot be pruned
 * or moved while the page is pinned, and its data never changes in place.
 *
 * src/sort/tid_gather.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "guc.h"
#include "sort/tid_gather.h"
#include "sort/tid_gather_copy.h"



/*
 * braid_gather_begin
 *		Set up gathering from "rel"; memory comes from "cxt".
 */
void
braid_gather_begin(BraidGather *g, Relation rel, MemoryContext cxt)
{
	BlockNumber nblocks;

	memset(g, 0, sizeof(*g));
	g->rel = rel;
	g->cxt = cxt;

	/*
	 * Each batch revisits most of the table's pages.  If the table fits in
	 * half of shared buffers, let them keep its pages, so every batch after
	 * the first finds them there.  A larger table would only evict everything
	 * else for nothing; read it through a small ring of buffers, like a
	 * sequential scan does.
	 */
	nblocks = RelationGetNumberOfBlocks(rel);
	g->nblocks = nblocks;
	if (!RelationUsesLocalBuffers(rel) && nblocks > (BlockNumber) (NBuffers / 2))
	{
		g->strategy = GetAccessStrategy(BAS_BULKREAD);

		/*
		 * Pages read through the ring come from the device or the kernel's
		 * page cache each batch: with braidsort.gather_read_stream on (off by
		 * default: slower on tables in the page cache), a read stream (17+)
		 * reads them ahead of the pins, adjacent ones in one call.
		 */
		g->use_stream = braid_gather_read_stream && PG_VERSION_NUM >= 170000;
	}
	else if (nblocks > 0)
	{
		/*
		 * Remember which buffer held each block, so that later batches can
		 * pin it with ReadRecentBuffer() and skip the buffer mapping lookup,
		 * a cache miss per page per batch on a large shared_buffers.
		 */
		g->recent = MemoryContextAllocHuge(cxt, sizeof(Buffer) * nblocks);
		memset(g->recent, 0, sizeof(Buffer) * nblocks);
		g->nrecent = nblocks;
	}
	g->tuple.t_tableOid = RelationGetRelid(rel);

	/*
	 * Pages pinned at once while their tuples are copied: this backend's fair
	 * share of shared buffers, so that even every backend gathering at once
	 * leaves buffers for the rest.  Two chunks are pinned at a time (one
	 * being copied, the next being pinned): half the share each.
	 */
	g->chunk_blocks = Max(16, Min(4096, NBuffers / Max(MaxBackends, 64) / 2));

	/*
	 * Through a buffer ring, pin few pages at a time: a pinned page cannot be
	 * recycled by the ring, so every further read would take a buffer from
	 * the rest of shared buffers.  Temporary tables live in the session's few
	 * local buffers: pin few of those too.
	 */
	if (g->strategy || RelationUsesLocalBuffers(rel))
		g->chunk_blocks = 8;
	for (int set = 0; set < 2; set++)
	{
		g->chunk_bufs[set] = MemoryContextAlloc(cxt, sizeof(Buffer) * g->chunk_blocks);
		g->chunk_pages[set] = MemoryContextAlloc(cxt, sizeof(Page) * g->chunk_blocks);
	}

	/*
	 * With so few pages pinned at once, chunks are too small to hand to the
	 * threads: batches are streamed through a window of pinned pages instead
	 * (gather_streamed), as many as the two chunks would pin.
	 */
	if (g->chunk_blocks < GATHER_PARALLEL_MIN_BLOCKS)
	{
		g->win_size = 2 * g->chunk_blocks;
		g->win_bufs = MemoryContextAlloc(cxt, sizeof(Buffer) * g->win_size);
		g->win_pages = MemoryContextAlloc(cxt, sizeof(Page) * g->win_size);
	}
	g->threads = 1;
}

/*
 * braid_gather_set_threads
 *		Share the tuple copies among this many threads.
 */
void
braid_gather_set_threads(BraidGather *g, int threads)
{
	g->threads = Max(threads, 1);
}

/*
 * braid_gather_set_idle
 *		Give the next loads idle work for a helper (see BraidGatherIdleStep),
 *		or none (step NULL).  The step runs only inside braid_gather_load(),
 *		and only if the batch is shared with helpers.
 */
void
braid_gather_set_idle(BraidGather *g, BraidGatherIdleStep step, void *arg)
{
	g->idle_step = step;
	g->idle_arg = arg;
}

/* free_own_arena: free the arena if the gather allocated it. */
static void
free_own_arena(BraidGather *g)
{
	if (g->arena && !g->arena_external)
		pfree(g->arena - BRAID_GATHER_HEADROOM);
	g->arena = NULL;
}

/*
 * braid_gather_set_arena
 *		Copy tuples into caller-owned memory (the IndexMap's free tail after
 *		the sort) instead of an arena of the gather's own.  Batches must then
 *		fit in cap bytes.
 */
void
braid_gather_set_arena(BraidGather *g, char *mem, size_t cap)
{
	free_own_arena(g);
	if (mem != NULL && cap > BRAID_GATHER_HEADROOM)
	{
		g->arena = mem + BRAID_GATHER_HEADROOM;
		g->arena_cap = cap - BRAID_GATHER_HEADROOM;
		g->arena_external = true;
	}
	else
	{
		g->arena = NULL;
		g->arena_cap = 0;
		g->arena_external = false;
	}
}

/*
 * braid_gather_set_strip
 *		Copy tuples without the first BRAID_GATHER_STRIP bytes of their
 *		header (see gather.h), or whole.  Only between batches.
 */
void
braid_gather_set_strip(BraidGather *g, bool strip)
{
	g->strip = strip ? BRAID_GATHER_STRIP : 0;
}

/* compare_block_keys: qsort comparator for (block << 32 | row) keys. */
static int
compare_block_keys(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return (x > y) - (x < y);
}

/* make_rec: a row's copy instruction, see BraidGather.recs. */
static inline uint64
make_rec(uint32 dest, uint64 ref)
{
	return ((uint64) dest << 32) | (ref & UINT64CONST(0xFFFF0000)) | braid_ref_len(ref);
}

/* add_block: append block blk, whose rows start at recs[start]. */
static inline void
add_block(BraidGather *g, BlockNumber blk, uint32 start)
{
	g->blocks[g->nblk] = blk;
	g->blkstart[g->nblk] = start;
	g->nblk++;
}

/*
 * plan_batch
 *		Lay the batch's n rows out in the arena in output order (offsets[])
 *		and list them in heap block order with their arena offsets (recs[],
 *		blocks[], blkstart[]), so that both the pinning and the copying then
 *		walk memory sequentially.  A counting sort over the batch's block
 *		range, or a comparison sort when that range is far larger than the
 *		batch.  Returns the arena bytes the batch needs.
 */
static size_t
plan_batch(BraidGather *g, int n)
{
	BlockNumber minblk = InvalidBlockNumber;
	BlockNumber maxblk = 0;
	size_t		total = 0;
	size_t		range;

	for (int i = 0; i < n; i++)
	{
		uint64		ref = g->refs[i];
		BlockNumber blk = braid_ref_block(ref);

		g->offsets[i] = (uint32) total;
		total += braid_gather_row_bytes(g, braid_ref_len(ref));
		if (total > (size_t) PG_UINT32_MAX)
			elog(ERROR, "braidsort: gather batch exceeds 4GB");
		minblk = Min(minblk, blk);
		maxblk = Max(maxblk, blk);
	}
	g->nblk = 0;
	if (n == 0)
		return 0;
	range = (size_t) (maxblk - minblk) + 1;

	/* the batch's distinct blocks: no more than its rows or its range */
	if (Min(range, (size_t) n) + 1 > g->blk_cap)
	{
		size_t		cap = Max(Min(range, (size_t) n) + 1, (size_t) 1024);

		if (g->blocks)
		{
			pfree(g->blocks);
			pfree(g->blkstart);
		}
		g->blocks = MemoryContextAllocHuge(g->cxt, sizeof(BlockNumber) * cap);
		g->blkstart = MemoryContextAllocHuge(g->cxt, sizeof(uint32) * cap);
		g->blk_cap = cap;
	}

	/*
	 * A counting sort over the block range, which for a batch spread over the
	 * table is the table (its buckets are accounted by page of the table, see
	 * costmodel.h): much cheaper than the comparison sort, kept for a range
	 * so much larger than the batch that the buckets would outweigh it.
	 */
	if (range <= (size_t) n * 8 + 65536)
	{
		uint32		sum = 0;

		if (range + 1 > g->counts_cap)
		{
			if (g->counts)
				pfree(g->counts);
			g->counts_cap = Max(range + 1, (size_t) 1024);
			g->counts = MemoryContextAllocHuge(g->cxt, sizeof(uint32) * g->counts_cap);
		}
		memset(g->counts, 0, sizeof(uint32) * (range + 1));
		for (int i = 0; i < n; i++)
			g->counts[braid_ref_block(g->refs[i]) - minblk]++;
		for (size_t b = 0; b < range; b++)
		{
			uint32		c = g->counts[b];

			if (c > 0)
				add_block(g, minblk + (BlockNumber) b, sum);
			g->counts[b] = sum;
			sum += c;
		}
		for (int i = 0; i < n; i++)
		{
			uint64		ref = g->refs[i];

			g->recs[g->counts[braid_ref_block(ref) - minblk]++] = make_rec(g->offsets[i], ref);
		}
	}
	else
	{
		uint64	   *keys = MemoryContextAllocHuge(g->cxt, sizeof(uint64) * n);
		BlockNumber last = InvalidBlockNumber;

		for (int i = 0; i < n; i++)
			keys[i] = ((uint64) braid_ref_block(g->refs[i]) << 32) | (uint32) i;
		qsort(keys, n, sizeof(uint64), compare_block_keys);
		for (int i = 0; i < n; i++)
		{
			uint32		row = (uint32) keys[i];
			BlockNumber blk = (BlockNumber) (keys[i] >> 32);

			if (blk != last)
				add_block(g, blk, (uint32) i);
			last = blk;
			g->recs[i] = make_rec(g->offsets[row], g->refs[row]);
		}
		pfree(keys);
	}
	g->blkstart[g->nblk] = (uint32) n;
	return total;
}

/*
 * braid_gather_load
 *		Load the batch of n rows starting at sort position "first", whose
 *		refs (in output order) are refs[0..n-1]: copy their tuples from the
 *		table into the arena.  refs must stay valid while the batch is used.
 */
void
braid_gather_load(BraidGather *g, int64 first, const uint64 *refs, int n)
{
	size_t		total;

	if (n > g->rows_cap)
	{
		int			cap = Max(n, 1024);

		if (g->offsets)
		{
			pfree(g->offsets);
			pfree(g->recs);
		}
		g->offsets = MemoryContextAllocHuge(g->cxt, sizeof(uint32) * cap);
		g->recs = MemoryContextAllocHuge(g->cxt, sizeof(uint64) * cap);
		g->rows_cap = cap;
	}
	g->first = first;
	g->nrows = 0;				/* nothing valid until the copy is done */
	g->refs = refs;

	total = plan_batch(g, n);
	if (total > g->arena_cap)
	{
		if (g->arena_external)
			elog(ERROR, "braidsort: gather batch of %zu bytes exceeds its arena of %zu bytes",
				 total, g->arena_cap);
		free_own_arena(g);
		g->arena_cap = Max(total, (size_t) BLCKSZ);
		g->arena = (char *) MemoryContextAllocHuge(g->cxt, g->arena_cap +
												   BRAID_GATHER_HEADROOM) +
			BRAID_GATHER_HEADROOM;
	}
	g->peak_arena = Max(g->peak_arena, total);

	braid_gather_copy_rows(g);
	g->nrows = n;
	g->batches++;
}

/*
 * braid_gather_tuple
 *		The tuple at sort position pos, which must be in the loaded batch.
 *		Valid until the next batch is loaded.
 */
HeapTuple
braid_gather_tuple(BraidGather *g, int64 pos)
{
	int			row = (int) (pos - g->first);
	uint64		ref;

	Assert(row >= 0 && row < g->nrows);
	ref = g->refs[row];
	g->tuple.t_len = braid_ref_len(ref);
	ItemPointerSet(&g->tuple.t_self, braid_ref_block(ref), braid_ref_offset(ref));
	g->tuple.t_data = (HeapTupleHeader) (g->arena + g->offsets[row] - g->strip);
	return &g->tuple;
}

/*
 * braid_gather_reset
 *		Forget the loaded batch (after a rescan or rebuild).
 */
void
braid_gather_reset(BraidGather *g)
{
	g->first = 0;
	g->nrows = 0;
	g->refs = NULL;
	if (g->arena_external)
		braid_gather_set_arena(g, NULL, 0);
}

/*
 * braid_gather_end
 *		Release the access strategy; memory goes with the node's context.
 */
void
braid_gather_end(BraidGather *g)
{
	if (g->strategy)
		FreeAccessStrategy(g->strategy);
	g->strategy = NULL;
}
