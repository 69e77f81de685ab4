/*-------------------------------------------------------------------------
 *
 * gather.c
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
 * src/gather.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gather.h"
#include "pool.h"

/* How many rows ahead the copy loop prefetches its destination. */
#define GATHER_PREFETCH 8

/* Copy work is shared out in groups of this many pages... */
#define GATHER_BLOCKS_PER_TASK 16
/* ...and only for chunks this large (starting threads costs). */
#define GATHER_PARALLEL_MIN_BLOCKS 256

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
	if (!RelationUsesLocalBuffers(rel) && nblocks > (BlockNumber) (NBuffers / 2))
		g->strategy = GetAccessStrategy(BAS_BULKREAD);
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
	 * Pages pinned at once while their tuples are copied: this backend's
	 * fair share of shared buffers, so that even every backend gathering at
	 * once leaves buffers for the rest.
	 */
	g->chunk_blocks = Max(16, Min(4096, NBuffers / Max(MaxBackends, 64)));

	/*
	 * Through a buffer ring, pin few pages at a time: a pinned page cannot
	 * be recycled by the ring, so every further read would take a buffer
	 * from the rest of shared buffers.  Temporary tables live in the
	 * session's few local buffers: pin few of those too.
	 */
	if (g->strategy || RelationUsesLocalBuffers(rel))
		g->chunk_blocks = 8;
	g->chunk_bufs = MemoryContextAlloc(cxt, sizeof(Buffer) * g->chunk_blocks);
	g->chunk_pages = MemoryContextAlloc(cxt, sizeof(Page) * g->chunk_blocks);
	g->chunk_starts = MemoryContextAlloc(cxt, sizeof(int) * (g->chunk_blocks + 1));
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
 * braid_gather_set_arena
 *		Copy tuples into caller-owned memory (the IndexMap's free tail after
 *		the sort) instead of an arena of the gather's own.  Batches must then
 *		fit in cap bytes.
 */
void
braid_gather_set_arena(BraidGather *g, char *mem, size_t cap)
{
	if (g->arena && !g->arena_external)
		pfree(g->arena);
	g->arena = mem;
	g->arena_cap = cap;
	g->arena_external = (mem != NULL);
}

/* compare_block_keys: qsort comparator for (block << 32 | row) keys. */
static int
compare_block_keys(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return (x > y) - (x < y);
}

/*
 * order_by_block
 *		Fill g->order with the batch's row numbers sorted by heap block: a
 *		counting sort over the batch's block range, or a comparison sort when
 *		that range is much larger than the batch.
 */
static void
order_by_block(BraidGather *g, int n)
{
	BlockNumber minblk = InvalidBlockNumber;
	BlockNumber maxblk = 0;
	size_t		range;

	for (int i = 0; i < n; i++)
	{
		BlockNumber blk = braid_ref_block(g->refs[i]);

		minblk = Min(minblk, blk);
		maxblk = Max(maxblk, blk);
	}
	range = (size_t) (maxblk - minblk) + 1;

	if (range <= (size_t) n * 8 + 1024)
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

			g->counts[b] = sum;
			sum += c;
		}
		for (int i = 0; i < n; i++)
			g->order[g->counts[braid_ref_block(g->refs[i]) - minblk]++] = (uint32) i;
	}
	else
	{
		uint64	   *keys = MemoryContextAllocHuge(g->cxt, sizeof(uint64) * n);

		for (int i = 0; i < n; i++)
			keys[i] = ((uint64) braid_ref_block(g->refs[i]) << 32) | (uint32) i;
		qsort(keys, n, sizeof(uint64), compare_block_keys);
		for (int i = 0; i < n; i++)
			g->order[i] = (uint32) keys[i];
		pfree(keys);
	}
}

/* A chunk of pinned pages whose tuples are being copied. */
typedef struct GatherChunk
{
	BraidGather *g;
	int			nblocks;
	int			next;			/* next group of blocks, taken atomically */
	int			bad_row;		/* a row whose tuple was not as expected */
} GatherChunk;

/*
 * copy_worker
 *		Copy the tuples of a chunk's pages to their arena positions, a few
 *		blocks at a time.  Runs on sort threads: touches only the pinned
 *		pages and the arena, never calls the server; a tuple that is not what
 *		the IndexMap says is reported through bad_row, for the backend to
 *		raise the error.
 */
static void
copy_worker(void *arg, int worker)
{
	GatherChunk *chunk = (GatherChunk *) arg;
	BraidGather *g = chunk->g;

	(void) worker;
	for (;;)
	{
		int			b0 = __atomic_fetch_add(&chunk->next, GATHER_BLOCKS_PER_TASK, __ATOMIC_RELAXED);
		int			b1 = Min(b0 + GATHER_BLOCKS_PER_TASK, chunk->nblocks);

		if (b0 >= chunk->nblocks)
			return;
		for (int b = b0; b < b1; b++)
		{
			Page		page = g->chunk_pages[b];
			OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
			int			end = g->chunk_starts[b + 1];

			for (int i = g->chunk_starts[b]; i < end; i++)
			{
				uint32		row = g->order[i];
				uint64		ref = g->refs[row];
				OffsetNumber off = braid_ref_offset(ref);
				uint32		len = braid_ref_len(ref);
				ItemId		lp;

				/*
				 * Destinations are scattered over the arena: start fetching
				 * the line a few rows ahead will write to.
				 */
				if (i + GATHER_PREFETCH < end)
					__builtin_prefetch(g->arena + g->offsets[g->order[i + GATHER_PREFETCH]], 1);

				lp = (off >= FirstOffsetNumber && off <= maxoff) ? PageGetItemId(page, off) : NULL;
				if (lp == NULL || !ItemIdIsNormal(lp) || ItemIdGetLength(lp) != len)
				{
					int			none = -1;

					__atomic_compare_exchange_n(&chunk->bad_row, &none, (int) row, false,
												__ATOMIC_RELAXED, __ATOMIC_RELAXED);
					return;
				}
				memcpy(g->arena + g->offsets[row], PageGetItem(page, lp), len);
			}
		}
	}
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
	size_t		total = 0;
	int			i;

	if (n > g->rows_cap)
	{
		int			cap = Max(n, 1024);

		if (g->offsets)
		{
			pfree(g->offsets);
			pfree(g->order);
		}
		g->offsets = MemoryContextAllocHuge(g->cxt, sizeof(uint32) * cap);
		g->order = MemoryContextAllocHuge(g->cxt, sizeof(uint32) * cap);
		g->rows_cap = cap;
	}
	g->first = first;
	g->nrows = 0;				/* nothing valid until the copy is done */
	g->refs = refs;

	/* arena positions in output order */
	for (i = 0; i < n; i++)
	{
		g->offsets[i] = (uint32) total;
		total += MAXALIGN(braid_ref_len(g->refs[i]));
		if (total > (size_t) PG_UINT32_MAX)
			elog(ERROR, "braidsort: gather batch exceeds 4GB");
	}
	if (total > g->arena_cap)
	{
		if (g->arena_external)
			elog(ERROR, "braidsort: gather batch of %zu bytes exceeds its arena of %zu bytes",
				 total, g->arena_cap);
		if (g->arena)
			pfree(g->arena);
		g->arena_cap = Max(total, (size_t) BLCKSZ);
		g->arena = MemoryContextAllocHuge(g->cxt, g->arena_cap);
	}
	g->peak_arena = Max(g->peak_arena, total);

	order_by_block(g, n);

	/*
	 * Visit the batch's pages in block order, each once, a chunk of pages at
	 * a time: the backend pins the chunk's pages, then the copies -- pure
	 * memory work on pinned pages -- run on the sort threads, then the
	 * backend releases the pins.
	 */
	i = 0;
	while (i < n)
	{
		GatherChunk chunk;
		int			nb = 0;

		CHECK_FOR_INTERRUPTS();
		while (i < n && nb < g->chunk_blocks)
		{
			BlockNumber blk = braid_ref_block(g->refs[g->order[i]]);
			Buffer		buf;

			if (blk < g->nrecent && BufferIsValid(g->recent[blk]) &&
				ReadRecentBuffer(g->rel->rd_node, MAIN_FORKNUM, blk, g->recent[blk]))
				buf = g->recent[blk];
			else
			{
				buf = ReadBufferExtended(g->rel, MAIN_FORKNUM, blk, RBM_NORMAL, g->strategy);
				if (blk < g->nrecent)
					g->recent[blk] = buf;
			}
			g->chunk_bufs[nb] = buf;
			g->chunk_pages[nb] = BufferGetPage(buf);
			g->chunk_starts[nb] = i;
			while (i < n && braid_ref_block(g->refs[g->order[i]]) == blk)
				i++;
			nb++;
		}
		g->chunk_starts[nb] = i;
		g->block_visits += nb;

		chunk.g = g;
		chunk.nblocks = nb;
		chunk.next = 0;
		chunk.bad_row = -1;
		if (g->threads > 1 && nb >= GATHER_PARALLEL_MIN_BLOCKS)
			braid_pool_run(g->threads, copy_worker, &chunk);
		else
			copy_worker(&chunk, 0);

		for (int b = 0; b < nb; b++)
			ReleaseBuffer(g->chunk_bufs[b]);

		if (chunk.bad_row >= 0)
		{
			uint64		ref = g->refs[chunk.bad_row];

			elog(ERROR, "braidsort: tuple (%u,%u) of relation \"%s\" changed during the sort",
				 braid_ref_block(ref), braid_ref_offset(ref), RelationGetRelationName(g->rel));
		}
	}
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
	g->tuple.t_data = (HeapTupleHeader) (g->arena + g->offsets[row]);
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
