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

#include <limits.h>
#include <sched.h>
#include <time.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "access/htup_details.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/s_lock.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gather.h"
#include "pool.h"

/* How many rows ahead the copy loop prefetches its destination. */
#define GATHER_PREFETCH 8

/* Copy work is shared out in groups of this many pages... */
#define GATHER_BLOCKS_PER_TASK 64
/* ...and only for batches (and chunks) this large (a task costs). */
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
	g->nblocks = nblocks;
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
	 * once leaves buffers for the rest.  Two chunks are pinned at a time
	 * (one being copied, the next being pinned): half the share each.
	 */
	g->chunk_blocks = Max(16, Min(4096, NBuffers / Max(MaxBackends, 64) / 2));

	/*
	 * Through a buffer ring, pin few pages at a time: a pinned page cannot
	 * be recycled by the ring, so every further read would take a buffer
	 * from the rest of shared buffers.  Temporary tables live in the
	 * session's few local buffers: pin few of those too.
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
	 * A counting sort over the block range, which for a batch spread over
	 * the table is the table (its buckets are accounted by page of the
	 * table, see costmodel.h): much cheaper than the comparison sort, kept
	 * for a range so much larger than the batch that the buckets would
	 * outweigh it.
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

static Buffer read_block(BraidGather *g, BlockNumber blk);
static int	pin_chunk(BraidGather *g, int set, int first, int max);
static void unpin_chunk(BraidGather *g, int set, int nb);
static void report_bad(BraidGather *g, int64 bad);

/*
 * A chunk of pinned pages whose tuples are being copied: blocks[first ..
 * first + nblocks), pinned in chunk set "set".
 */
typedef struct GatherChunk
{
	int			set;
	int			first;
	int			nblocks;
	int			next;			/* next group of blocks, taken atomically */
} GatherChunk;

/*
 * copy_block
 *		Copy the batch's rows on page (block index b) to their arena
 *		positions; returns -1, or (b << 16 | line pointer) of a tuple that is
 *		not what the IndexMap says.  Pure memory work: runs on sort threads.
 */
static int64
copy_block(const BraidGather *g, Page page, int b)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	uint32		end = g->blkstart[b + 1];
	uint32		nrecs = g->blkstart[g->nblk];

	for (uint32 i = g->blkstart[b]; i < end; i++)
	{
		uint64		rec = g->recs[i];
		OffsetNumber off = braid_ref_offset(rec);
		uint32		len = braid_ref_len(rec);
		ItemId		lp;

		/*
		 * Destinations are scattered over the arena: start fetching the line
		 * a few rows ahead will write to, whatever page those rows are on
		 * (the arena is always there to prefetch).
		 */
		if (i + GATHER_PREFETCH < nrecs)
			__builtin_prefetch(g->arena + (g->recs[i + GATHER_PREFETCH] >> 32), 1);

		lp = (off >= FirstOffsetNumber && off <= maxoff) ? PageGetItemId(page, off) : NULL;
		if (lp == NULL || !ItemIdIsNormal(lp) || ItemIdGetLength(lp) != len ||
			len <= g->strip)
			return ((int64) b << 16) | off;
		memcpy(g->arena + (rec >> 32), (char *) PageGetItem(page, lp) + g->strip,
			   len - g->strip);
	}
	return -1;
}

/*
 * A batch's pages hold only a few of its rows each, at places no hardware
 * prefetcher can guess, so each row's copy would wait for its line pointer
 * and then for its tuple.  The copy loops fetch ahead in two steps: the line
 * pointers of the rows GATHER_LP_AHEAD pages on, then (those having
 * arrived) the tuples GATHER_ROWS_AHEAD pages on.  Only pinned pages are
 * read.
 */
#define GATHER_LP_AHEAD 8
#define GATHER_ROWS_AHEAD 4

/* prefetch_line_pointers: start fetching block b's rows' line pointers. */
static inline void
prefetch_line_pointers(const BraidGather *g, Page page, int b)
{
	for (uint32 i = g->blkstart[b]; i < g->blkstart[b + 1]; i++)
		__builtin_prefetch((char *) page + SizeOfPageHeaderData +
						   sizeof(ItemIdData) * (braid_ref_offset(g->recs[i]) - 1));
}

/* prefetch_rows: start fetching the tuple bytes block b's rows copy. */
static inline void
prefetch_rows(const BraidGather *g, Page page, int b)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	for (uint32 i = g->blkstart[b]; i < g->blkstart[b + 1]; i++)
	{
		uint64		rec = g->recs[i];
		OffsetNumber off = braid_ref_offset(rec);
		ItemId		lp;
		char	   *tup;

		if (off < FirstOffsetNumber || off > maxoff)
			continue;
		lp = PageGetItemId(page, off);
		if (!ItemIdIsNormal(lp) || ItemIdGetOffset(lp) + ItemIdGetLength(lp) > BLCKSZ)
			continue;
		tup = (char *) page + ItemIdGetOffset(lp) + g->strip;
		__builtin_prefetch(tup);
		/* a longer tuple's next lines (the rest streams in anyway) */
		if (ItemIdGetLength(lp) > g->strip + 64)
			__builtin_prefetch(tup + 64);
	}
}

/*
 * copy_pages
 *		Copy the rows of pinned pages[b0 .. b1) (block indexes first + b)
 *		to their arena positions, fetching ahead (see above); returns -1, or
 *		copy_block's report of a tuple that is not what the IndexMap says.
 *		Pure memory work: runs on sort threads.
 */
static int64
copy_pages(const BraidGather *g, Page *pages, int first, int b0, int b1)
{
	for (int b = b0; b < Min(b0 + GATHER_LP_AHEAD, b1); b++)
		prefetch_line_pointers(g, pages[b], first + b);
	for (int b = b0; b < Min(b0 + GATHER_ROWS_AHEAD, b1); b++)
		prefetch_rows(g, pages[b], first + b);
	for (int b = b0; b < b1; b++)
	{
		int64		bad;

		if (b + GATHER_LP_AHEAD < b1)
			prefetch_line_pointers(g, pages[b + GATHER_LP_AHEAD],
								   first + b + GATHER_LP_AHEAD);
		if (b + GATHER_ROWS_AHEAD < b1)
			prefetch_rows(g, pages[b + GATHER_ROWS_AHEAD],
						  first + b + GATHER_ROWS_AHEAD);
		bad = copy_block(g, pages[b], first + b);
		if (bad >= 0)
			return bad;
	}
	return -1;
}

/*
 * Where helpers sleep when they have nothing to do: an event count.  A
 * helper says it is about to sleep, checks once more for work, and sleeps
 * on the sequence word as it was before saying so; the backend, having
 * given work (or stopped), bumps the word and wakes every sleeper if there
 * is any.  All sequentially consistent, so that either the backend sees the
 * helper or the helper sees the work.  The timeout only bounds a lost
 * wake-up.
 */
typedef struct HelperBell
{
	int			seq;			/* futex word */
	int			sleepers;		/* helpers about to sleep or asleep */
} HelperBell;

/* bell_prepare: a helper is about to sleep; returns the word to sleep on. */
static inline int
bell_prepare(HelperBell *bell)
{
	int			seq = __atomic_load_n(&bell->seq, __ATOMIC_SEQ_CST);

	__atomic_add_fetch(&bell->sleepers, 1, __ATOMIC_SEQ_CST);
	return seq;
}

/* bell_sleep: sleep unless rung since bell_prepare(). */
static inline void
bell_sleep(HelperBell *bell, int seq)
{
#ifdef __linux__
	struct timespec timeout = {0, 1000 * 1000};

	(void) syscall(SYS_futex, &bell->seq, FUTEX_WAIT_PRIVATE, seq, &timeout,
				   NULL, 0);
#else
	sched_yield();
#endif
}

/* bell_done: the helper is awake (or decided not to sleep). */
static inline void
bell_done(HelperBell *bell)
{
	__atomic_sub_fetch(&bell->sleepers, 1, __ATOMIC_SEQ_CST);
}

/* bell_ring: wake every helper that sleeps or is about to. */
static inline void
bell_ring(HelperBell *bell)
{
	if (__atomic_load_n(&bell->sleepers, __ATOMIC_SEQ_CST) > 0)
	{
		__atomic_add_fetch(&bell->seq, 1, __ATOMIC_SEQ_CST);
#ifdef __linux__
		(void) syscall(SYS_futex, &bell->seq, FUTEX_WAKE_PRIVATE, INT_MAX,
					   NULL, NULL, 0);
#endif
	}
}

/*
 * A batch streamed through a small window of pinned pages: the backend pins
 * (reads) page after page, a helper thread copies each as soon as it is
 * published, and the backend releases each page once copied.
 */
typedef struct GatherStream
{
	BraidGather *g;
	int			window;			/* pages pinned ahead at most */
	int			published;		/* pages pinned and ready (atomic) */
	int			copied;			/* pages copied (atomic) */
	HelperBell	bell;			/* where the copier sleeps */
	bool		stop;			/* the backend gives up (atomic) */
	int64		bad;			/* as copy_block's result, or -1 */
} GatherStream;

/* stream_wait: the backend backs off while waiting for helpers. */
static inline void
stream_wait(int *spins)
{
	if (++*spins < 1000)
		SPIN_DELAY();
	else
		sched_yield();
}

/*
 * The copier is faster than the reads it follows, so it would mostly wait:
 * instead of spinning a core away it sleeps (HelperBell), and the backend
 * wakes it when half a window of pages is waiting (a wake-up every few
 * pages, not one per page), at the end, and when it gives up.
 */
#define STREAM_SPINS_BEFORE_SLEEP 200

/*
 * stream_copier
 *		The helper's side of a streamed batch: copy each published page, in
 *		order, and say so.  Pure memory work.
 */
static void
stream_copier(void *arg, int worker)
{
	GatherStream *st = (GatherStream *) arg;
	BraidGather *g = st->g;

	if (worker != 1)
		return;
	for (int b = 0; b < g->nblk; b++)
	{
		int			spins = 0;
		int64		bad;

		while (__atomic_load_n(&st->published, __ATOMIC_ACQUIRE) <= b)
		{
			if (__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE))
				return;
			if (++spins < STREAM_SPINS_BEFORE_SLEEP)
				SPIN_DELAY();
			else
			{
				int			seq = bell_prepare(&st->bell);

				if (__atomic_load_n(&st->published, __ATOMIC_SEQ_CST) <= b &&
					!__atomic_load_n(&st->stop, __ATOMIC_SEQ_CST))
					bell_sleep(&st->bell, seq);
				bell_done(&st->bell);
				spins = 0;
			}
		}
		bad = copy_block(g, g->win_pages[b % st->window], b);
		if (bad >= 0)
		{
			st->bad = bad;
			__atomic_store_n(&st->stop, true, __ATOMIC_RELEASE);
			return;
		}
		__atomic_store_n(&st->copied, b + 1, __ATOMIC_RELEASE);
	}
}

/*
 * Helpers copying into the arena must be waited for before the memory goes
 * away.  An ERROR while they run is caught where they are started; a FATAL
 * exit (a terminated backend, a shutdown, raised by an interrupt check or a
 * wait while pinning) goes straight to proc_exit(), whose cleanup frees the
 * arena and releases the pins.  This before_shmem_exit callback, registered
 * after PostgreSQL's own and so run before them, stops a streamed copy and
 * waits for the helpers first.
 */
typedef struct GatherBatch GatherBatch;
static GatherStream *volatile active_stream = NULL;
static GatherBatch *volatile active_batch = NULL;
static bool exit_callback_registered = false;
static void stop_batch(GatherBatch *t);

static void
gather_exit_callback(int code, Datum arg)
{
	braid_gather_stop_helpers();
}

/*
 * braid_gather_stop_helpers
 *		At backend exit: stop a gather's helpers, if any are running, and
 *		wait for every helper thread.  Whatever goes away at exit (the
 *		arena, pins, spill file mappings a helper merges from) must wait for
 *		this, so device.c's exit callback calls it too: callbacks run in the
 *		reverse order of registration, which depends on what the backend
 *		did first.
 */
void
braid_gather_stop_helpers(void)
{
	GatherStream *st = active_stream;
	GatherBatch *t = active_batch;

	if (st != NULL)
	{
		__atomic_store_n(&st->stop, true, __ATOMIC_SEQ_CST);
		bell_ring(&st->bell);
	}
	if (t != NULL)
		stop_batch(t);
	braid_pool_quiesce();
	active_stream = NULL;
	active_batch = NULL;
}

/* guard_helpers: make sure the exit callback is in place. */
static void
guard_helpers(void)
{
	if (!exit_callback_registered)
	{
		before_shmem_exit(gather_exit_callback, (Datum) 0);
		exit_callback_registered = true;
	}
}

/*
 * gather_streamed
 *		Load the planned batch by streaming it through a window of pinned
 *		pages: used through a buffer ring, where only a few pages may be
 *		pinned at once and handing every few pages to the threads would cost
 *		more than the copies.  The backend's reads (pins, through the ring)
 *		overlap the helper's copies.  False, having done nothing, if no
 *		helper thread could be started.
 */
static bool
gather_streamed(BraidGather *g)
{
	GatherStream st;
	int			helpers;
	int			released = 0;

	st.g = g;
	st.window = g->win_size;
	st.published = 0;
	st.copied = 0;
	memset(&st.bell, 0, sizeof(st.bell));
	st.stop = false;
	st.bad = -1;
	guard_helpers();
	active_stream = &st;
	helpers = braid_pool_start(2, stream_copier, &st);
	if (helpers == 0)
	{
		active_stream = NULL;
		return false;
	}

	/* the helper uses the stream and the pinned pages until waited for */
	PG_TRY();
	{
		for (int b = 0; b < g->nblk; b++)
		{
			int			spins = 0;
			int			slot = b % st.window;
			int			copied;

			/* wait for room in the window, releasing what was copied */
			for (;;)
			{
				copied = __atomic_load_n(&st.copied, __ATOMIC_ACQUIRE);
				for (; released < copied; released++)
					ReleaseBuffer(g->win_bufs[released % st.window]);
				if (b - released < st.window ||
					__atomic_load_n(&st.stop, __ATOMIC_ACQUIRE))
					break;
				bell_ring(&st.bell);
				stream_wait(&spins);
			}
			if (__atomic_load_n(&st.stop, __ATOMIC_ACQUIRE))
			{
				bell_ring(&st.bell);
				break;
			}
			if ((b & 255) == 0)
				CHECK_FOR_INTERRUPTS();
			g->win_bufs[slot] = read_block(g, g->blocks[b]);
			g->win_pages[slot] = BufferGetPage(g->win_bufs[slot]);
			__atomic_store_n(&st.published, b + 1, __ATOMIC_SEQ_CST);
			if (b + 1 - copied >= st.window / 2 || b + 1 == g->nblk)
				bell_ring(&st.bell);
		}
	}
	PG_CATCH();
	{
		__atomic_store_n(&st.stop, true, __ATOMIC_SEQ_CST);
		bell_ring(&st.bell);
		braid_pool_finish(2, helpers, stream_copier, &st, false);
		active_stream = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	braid_pool_finish(2, helpers, stream_copier, &st, false);
	active_stream = NULL;
	for (; released < __atomic_load_n(&st.published, __ATOMIC_ACQUIRE); released++)
		ReleaseBuffer(g->win_bufs[released % st.window]);
	g->block_visits += st.published;
	if (st.bad >= 0)
		report_bad(g, st.bad);
	return true;
}

/*
 * A batch copied under one pool task.  The backend pins the batch's pages a
 * chunk at a time, in two alternating chunk slots, and publishes each chunk
 * when it is pinned; the helpers take groups of pages of the published
 * chunks, in order, and copy them; the backend, once it has pinned the next
 * chunk, copies with them, waits for the chunk's last pages and releases
 * its pins.  Pins and releases are the backend's and cost more than the
 * copies, so a helper that finds nothing to copy does the batch's idle work
 * (the next batch's merge) a small step at a time: one task a batch instead
 * of one a chunk is what lets a helper keep at it across chunks.
 */
struct GatherBatch
{
	BraidGather *g;
	GatherChunk chunk[2];		/* chunk number k is chunk[k & 1] */
	int			done[2];		/* pages copied of each slot's chunk (atomic) */
	int			left[2];		/* helpers past each slot's chunk (atomic) */
	int			published;		/* chunks pinned and ready (atomic) */
	bool		finished;		/* no chunk is left to publish (atomic) */
	bool		stop;			/* the backend gives up, or a tuple was not
								 * as expected (atomic) */
	HelperBell	bell;			/* where idle helpers sleep */
	int64		bad;			/* as copy_block's result, or -1 */
};

/* A helper with neither pages to copy nor idle work sleeps after this. */
#define BATCH_SPINS_BEFORE_SLEEP 2000

/* stop_batch: make the helpers of a batch return as soon as they can. */
static void
stop_batch(GatherBatch *t)
{
	__atomic_store_n(&t->stop, true, __ATOMIC_SEQ_CST);
	bell_ring(&t->bell);
}

/*
 * copy_groups
 *		Take groups of pages of the chunk in "slot" until none is left, and
 *		copy them; false if the batch is stopped (or a tuple was not as
 *		expected, which stops it).  Helpers and the backend alike.
 */
static bool
copy_groups(GatherBatch *t, int slot)
{
	GatherChunk *chunk = &t->chunk[slot];
	BraidGather *g = t->g;
	Page	   *pages = g->chunk_pages[chunk->set];

	for (;;)
	{
		int			b0 = __atomic_fetch_add(&chunk->next, GATHER_BLOCKS_PER_TASK, __ATOMIC_RELAXED);
		int			b1 = Min(b0 + GATHER_BLOCKS_PER_TASK, chunk->nblocks);
		int64		bad;

		if (b0 >= chunk->nblocks)
			return true;
		if (__atomic_load_n(&t->stop, __ATOMIC_RELAXED))
			return false;
		bad = copy_pages(g, pages, chunk->first, b0, b1);
		if (bad >= 0)
		{
			int64		none = -1;

			__atomic_compare_exchange_n(&t->bad, &none, bad, false,
										__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
			stop_batch(t);
			return false;
		}
		/* the pages are read: the backend may release them once all are */
		__atomic_fetch_add(&t->done[slot], b1 - b0, __ATOMIC_RELEASE);
	}
}

/*
 * batch_worker
 *		A helper's side of a batch: copy from each chunk in turn as it is
 *		published; between chunks, do idle work (helper 1 only) or wait.
 *		Pure memory work.
 */
static void
batch_worker(void *arg, int worker)
{
	GatherBatch *t = (GatherBatch *) arg;
	BraidGather *g = t->g;
	bool		idle = (worker == 1 && g->idle_step != NULL);
	double		progress = 0;
	double		nchunks = (double) (g->nblk + g->chunk_blocks - 1) / g->chunk_blocks;

	if (worker == 0)
		return;
	for (int k = 0;; k++)
	{
		GatherChunk *chunk = &t->chunk[k & 1];
		int			spins = 0;

		while (__atomic_load_n(&t->published, __ATOMIC_ACQUIRE) <= k)
		{
			if (__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE))
				return;
			if (__atomic_load_n(&t->finished, __ATOMIC_ACQUIRE) &&
				__atomic_load_n(&t->published, __ATOMIC_ACQUIRE) <= k)
				return;
			if (idle)
			{
				progress = g->idle_step(g->idle_arg);
				idle = progress < 1.0;
			}
			else if (++spins < BATCH_SPINS_BEFORE_SLEEP)
				SPIN_DELAY();
			else
			{
				int			seq = bell_prepare(&t->bell);

				if (__atomic_load_n(&t->published, __ATOMIC_SEQ_CST) <= k &&
					!__atomic_load_n(&t->finished, __ATOMIC_SEQ_CST) &&
					!__atomic_load_n(&t->stop, __ATOMIC_SEQ_CST))
					bell_sleep(&t->bell, seq);
				bell_done(&t->bell);
				spins = 0;
			}
		}


		/*
		 * The backend's pins and releases are what take longest, so the idle
		 * work is due by the batch's end: while behind that schedule, work at
		 * it first and leave the chunk's copies to the backend (which takes
		 * what is left of a chunk before releasing it).
		 */
		while (idle && progress < k / nchunks &&
			   __atomic_load_n(&chunk->next, __ATOMIC_RELAXED) < chunk->nblocks)
		{
			if (__atomic_load_n(&t->stop, __ATOMIC_RELAXED))
				return;
			progress = g->idle_step(g->idle_arg);
			idle = progress < 1.0;
		}
		if (!copy_groups(t, k & 1))
			return;
		__atomic_fetch_add(&t->left[k & 1], 1, __ATOMIC_RELEASE);
	}
}

/* publish_chunk: pin the next chunk into slot "slot" and hand it out. */
static int
publish_chunk(GatherBatch *t, int slot, int first)
{
	GatherChunk *chunk = &t->chunk[slot];
	int			nb = pin_chunk(t->g, slot, first, t->g->chunk_blocks);

	chunk->set = slot;
	chunk->first = first;
	chunk->nblocks = nb;
	chunk->next = 0;
	t->done[slot] = 0;
	t->left[slot] = 0;
	__atomic_add_fetch(&t->published, 1, __ATOMIC_SEQ_CST);
	bell_ring(&t->bell);
	return nb;
}

/*
 * gather_batch_task
 *		Load the planned batch with the helpers under one task (see
 *		GatherBatch).  False, having done nothing, if no helper thread could
 *		be started.
 */
static bool
gather_batch_task(BraidGather *g)
{
	GatherBatch t;
	int			helpers;
	volatile int pinned[2] = {0, 0};	/* pins held in each chunk slot */

	memset(&t, 0, sizeof(t));
	t.g = g;
	t.bad = -1;
	guard_helpers();
	active_batch = &t;
	helpers = braid_pool_start(g->threads, batch_worker, &t);
	if (helpers == 0)
	{
		active_batch = NULL;
		return false;
	}

	/* the helpers use the batch and the pinned pages until waited for */
	PG_TRY();
	{
		int			next;

		next = pinned[0] = publish_chunk(&t, 0, 0);
		for (int k = 0;; k++)
		{
			int			slot = k & 1;
			int			spins = 0;

			/* the next chunk is pinned while the helpers copy this one */
			if (next < g->nblk)
			{
				pinned[slot ^ 1] = publish_chunk(&t, slot ^ 1, next);
				next += pinned[slot ^ 1];
			}
			else
			{
				__atomic_store_n(&t.finished, true, __ATOMIC_SEQ_CST);
				bell_ring(&t.bell);
			}

			/* copy with them, then wait until every helper is done with it */
			(void) copy_groups(&t, slot);
			while ((__atomic_load_n(&t.done[slot], __ATOMIC_ACQUIRE) < pinned[slot] ||
					__atomic_load_n(&t.left[slot], __ATOMIC_ACQUIRE) < helpers) &&
				   !__atomic_load_n(&t.stop, __ATOMIC_ACQUIRE))
				stream_wait(&spins);

			/* stopped: helpers may still read the pages until waited for */
			if (__atomic_load_n(&t.stop, __ATOMIC_ACQUIRE))
				break;
			unpin_chunk(g, slot, pinned[slot]);
			pinned[slot] = 0;
			if (next >= g->nblk && pinned[slot ^ 1] == 0)
				break;
		}
	}
	PG_CATCH();
	{
		stop_batch(&t);
		braid_pool_finish(g->threads, helpers, batch_worker, &t, false);
		active_batch = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	__atomic_store_n(&t.finished, true, __ATOMIC_SEQ_CST);
	bell_ring(&t.bell);
	braid_pool_finish(g->threads, helpers, batch_worker, &t, false);
	active_batch = NULL;
	for (int slot = 0; slot < 2; slot++)
		unpin_chunk(g, slot, pinned[slot]);
	if (t.bad >= 0)
		report_bad(g, t.bad);
	return true;
}

/*
 * read_block
 *		Pin block blk of the table (reading it if need be).
 */
static Buffer
read_block(BraidGather *g, BlockNumber blk)
{
	Buffer		buf;

	if (blk < g->nrecent && BufferIsValid(g->recent[blk]) &&
		ReadRecentBuffer(g->rel->rd_node, MAIN_FORKNUM, blk, g->recent[blk]))
		return g->recent[blk];
	buf = ReadBufferExtended(g->rel, MAIN_FORKNUM, blk, RBM_NORMAL, g->strategy);
	if (blk < g->nrecent)
		g->recent[blk] = buf;
	return buf;
}

/*
 * pin_chunk
 *		Pin up to "max" of the batch's pages from block index "first" into
 *		chunk set "set"; returns how many.
 */
static int
pin_chunk(BraidGather *g, int set, int first, int max)
{
	int			nb = Min(max, g->nblk - first);

	for (int b = 0; b < nb; b++)
	{
		BlockNumber blk = g->blocks[first + b];
		Buffer		buf;

		if (((first + b) & 255) == 0)
			CHECK_FOR_INTERRUPTS();
		buf = read_block(g, blk);
		g->chunk_bufs[set][b] = buf;
		g->chunk_pages[set][b] = BufferGetPage(buf);
	}
	g->block_visits += nb;
	return nb;
}

/* unpin_chunk: release the nb pins of chunk set "set". */
static void
unpin_chunk(BraidGather *g, int set, int nb)
{
	for (int b = 0; b < nb; b++)
		ReleaseBuffer(g->chunk_bufs[set][b]);
}

/* report_bad: raise the error for a tuple copy_block found changed. */
static void
report_bad(BraidGather *g, int64 bad)
{
	elog(ERROR, "braidsort: tuple (%u,%u) of relation \"%s\" changed during the sort",
		 g->blocks[bad >> 16], (unsigned) (bad & 0xFFFF), RelationGetRelationName(g->rel));
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

	if (g->win_size > 0 && g->threads > 1 && g->nblk > g->win_size &&
		gather_streamed(g))
	{
		g->nrows = n;
		g->batches++;
		return;
	}

	/*
	 * Visit the batch's pages in block order, each once, a chunk of pages at
	 * a time: the backend pins a chunk's pages, the copies -- pure memory
	 * work on pinned pages -- run on the sort threads, then the backend
	 * releases the pins.  With threads, the backend pins the next chunk
	 * while the helpers copy this one, then joins the copying
	 * (gather_batch_task).  (Pinning a chunk, then copying from it, beats
	 * pinning, copying and releasing one page at a time even on one thread:
	 * the misses of a chunk's pins, and then of its copies, overlap.)
	 */
	if (g->threads > 1 && g->nblk >= GATHER_PARALLEL_MIN_BLOCKS &&
		gather_batch_task(g))
	{
		g->nrows = n;
		g->batches++;
		return;
	}
	for (int first = 0; first < g->nblk;)
	{
		int			nb = pin_chunk(g, 0, first, g->chunk_blocks);
		int64		bad = copy_pages(g, g->chunk_pages[0], first, 0, nb);

		unpin_chunk(g, 0, nb);
		if (bad >= 0)
			report_bad(g, bad);
		first += nb;
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
