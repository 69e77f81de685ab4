/*-------------------------------------------------------------------------
 *
 * tid_gather_copy.c
 *	  Copying a gather batch's tuples from pinned heap pages.
 *
 * tid_gather.c plans a batch: its rows' arena positions and its pages in block
 * order.  This file visits those pages and copies the tuples, in one of
 * three ways:
 *
 *	chunks, alone	the backend pins a chunk of pages, copies from them and
 *					releases them (the misses of a chunk's pins, and then
 *					of its copies, overlap)
 *	chunks, helpers	the backend pins the next chunk while helper threads
 *					copy this one, then joins the copying
 *					(gather_batch_task); idle helpers may do other work
 *					(merge-ahead, BraidGatherIdleStep)
 *	streamed		when only a few pages may be pinned at once (reads
 *					through a buffer ring, for a table larger than half
 *					of shared_buffers, or a temporary table's local
 *					buffers), pages stream through a window: the
 *					backend pins page after page, one helper copies each as
 *					soon as it is published, the backend releases it
 *
 * Helpers do pure memory work on pages the backend keeps pinned; they wait
 * with sync.h's primitives.  An error in the backend while helpers copy
 * stops them before the pins go (gather_exit_callback, stop_batch).
 *
 * src/sort/tid_gather_copy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/ipc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#if PG_VERSION_NUM >= 170000
#include "storage/read_stream.h"
#endif

#include "compat.h"
#include "core/pool.h"
#include "core/refs.h"
#include "core/sync.h"
#include "io/device.h"
#include "sort/tid_gather_copy.h"

/* How many rows ahead the copy loop prefetches its destination. */
#define GATHER_PREFETCH 8

/* Copy work is shared out in groups of this many pages... */
#define GATHER_BLOCKS_PER_TASK 64
/* ...and only for batches (and chunks) of GATHER_PARALLEL_MIN_BLOCKS. */

static Buffer read_block(BraidGather *g, BlockNumber blk);
static int	pin_chunk(BraidGather *g, int set, int first, int max);
static void unpin_chunk(BraidGather *g, int set, int nb);
static void report_bad(BraidGather *g, int64 bad);
static void copy_batch(BraidGather *g);

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
	BraidEventCount bell;		/* where the copier sleeps */
	bool		stop;			/* the backend gives up (atomic) */
	int64		bad;			/* as copy_block's result, or -1 */
} GatherStream;

/*
 * The copier is faster than the reads it follows, so it would mostly wait:
 * instead of spinning a core away it sleeps (BraidEventCount), and the backend
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

		while (braid_load_acquire(&st->published) <= b)
		{
			if (braid_load_acquire(&st->stop))
				return;
			if (++spins < STREAM_SPINS_BEFORE_SLEEP)
				braid_cpu_relax();
			else
			{
				int			seq = braid_event_prepare(&st->bell);

				if (braid_load_seq(&st->published) <= b &&
					!braid_load_seq(&st->stop))
					braid_event_sleep(&st->bell, seq);
				braid_event_done(&st->bell);
				spins = 0;
			}
		}
		bad = copy_block(g, g->win_pages[b % st->window], b);
		if (bad >= 0)
		{
			st->bad = bad;
			braid_store_release(&st->stop, true);
			return;
		}
		braid_store_release(&st->copied, b + 1);
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
 *		this, so the spill files' exit callback calls it too
 *		(braid_spill_on_exit): callbacks run in the reverse order of
 *		registration, which depends on what the backend did first.
 */
void
braid_gather_stop_helpers(void)
{
	GatherStream *st = active_stream;
	GatherBatch *t = active_batch;

	if (st != NULL)
	{
		braid_store_seq(&st->stop, true);
		braid_event_signal(&st->bell);
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
		braid_spill_on_exit(braid_gather_stop_helpers);
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
				copied = braid_load_acquire(&st.copied);
				for (; released < copied; released++)
					ReleaseBuffer(g->win_bufs[released % st.window]);
				if (b - released < st.window ||
					braid_load_acquire(&st.stop))
					break;
				braid_event_signal(&st.bell);
				braid_backoff(&spins);
			}
			if (braid_load_acquire(&st.stop))
			{
				braid_event_signal(&st.bell);
				break;
			}
			if ((b & 255) == 0)
				CHECK_FOR_INTERRUPTS();
			g->win_bufs[slot] = read_block(g, g->blocks[b]);
			g->win_pages[slot] = BufferGetPage(g->win_bufs[slot]);
			braid_store_seq(&st.published, b + 1);
			if (b + 1 - copied >= st.window / 2 || b + 1 == g->nblk)
				braid_event_signal(&st.bell);
		}
	}
	PG_CATCH();
	{
		braid_store_seq(&st.stop, true);
		braid_event_signal(&st.bell);
		braid_pool_finish(2, helpers, stream_copier, &st, false);
		active_stream = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	braid_pool_finish(2, helpers, stream_copier, &st, false);
	active_stream = NULL;
	for (; released < braid_load_acquire(&st.published); released++)
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
	bool		stop;			/* the backend gives up, or a tuple was not as
								 * expected (atomic) */
	BraidEventCount bell;		/* where idle helpers sleep */
	int64		bad;			/* as copy_block's result, or -1 */
};

/* A helper with neither pages to copy nor idle work sleeps after this. */
#define BATCH_SPINS_BEFORE_SLEEP 2000

/* stop_batch: make the helpers of a batch return as soon as they can. */
static void
stop_batch(GatherBatch *t)
{
	braid_store_seq(&t->stop, true);
	braid_event_signal(&t->bell);
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
		int			b0 = braid_fetch_add_relaxed(&chunk->next, GATHER_BLOCKS_PER_TASK);
		int			b1 = Min(b0 + GATHER_BLOCKS_PER_TASK, chunk->nblocks);
		int64		bad;

		if (b0 >= chunk->nblocks)
			return true;
		if (braid_load_relaxed(&t->stop))
			return false;
		bad = copy_pages(g, pages, chunk->first, b0, b1);
		if (bad >= 0)
		{
			int64		none = -1;

			braid_cas_seq(&t->bad, &none, bad);
			stop_batch(t);
			return false;
		}
		/* the pages are read: the backend may release them once all are */
		braid_fetch_add_release(&t->done[slot], b1 - b0);
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

		while (braid_load_acquire(&t->published) <= k)
		{
			if (braid_load_acquire(&t->stop))
				return;
			if (braid_load_acquire(&t->finished) &&
				braid_load_acquire(&t->published) <= k)
				return;
			if (idle)
			{
				progress = g->idle_step(g->idle_arg);
				idle = progress < 1.0;
			}
			else if (++spins < BATCH_SPINS_BEFORE_SLEEP)
				braid_cpu_relax();
			else
			{
				int			seq = braid_event_prepare(&t->bell);

				if (braid_load_seq(&t->published) <= k &&
					!braid_load_seq(&t->finished) &&
					!braid_load_seq(&t->stop))
					braid_event_sleep(&t->bell, seq);
				braid_event_done(&t->bell);
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
			   braid_load_relaxed(&chunk->next) < chunk->nblocks)
		{
			if (braid_load_relaxed(&t->stop))
				return;
			progress = g->idle_step(g->idle_arg);
			idle = progress < 1.0;
		}
		if (!copy_groups(t, k & 1))
			return;
		braid_fetch_add_release(&t->left[k & 1], 1);
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
	braid_add_fetch_seq(&t->published, 1);
	braid_event_signal(&t->bell);
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
				braid_store_seq(&t.finished, true);
				braid_event_signal(&t.bell);
			}

			/* copy with them, then wait until every helper is done with it */
			(void) copy_groups(&t, slot);
			while ((braid_load_acquire(&t.done[slot]) < pinned[slot] ||
					braid_load_acquire(&t.left[slot]) < helpers) &&
				   !braid_load_acquire(&t.stop))
				braid_backoff(&spins);

			/* stopped: helpers may still read the pages until waited for */
			if (braid_load_acquire(&t.stop))
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
	braid_store_seq(&t.finished, true);
	braid_event_signal(&t.bell);
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

#if PG_VERSION_NUM >= 170000
	if (g->stream != NULL)
	{
		/* the stream yields the batch's blocks in the order they are pinned */
		buf = read_stream_next_buffer(g->stream, NULL);
		if (!BufferIsValid(buf) || BufferGetBlockNumber(buf) != blk)
			elog(ERROR, "braidsort: the read stream of relation \"%s\" returned block %u, not %u",
				 RelationGetRelationName(g->rel),
				 BufferIsValid(buf) ? BufferGetBlockNumber(buf) : InvalidBlockNumber, blk);
		return buf;
	}
#endif
	if (blk < g->nrecent && BufferIsValid(g->recent[blk]) &&
		ReadRecentBuffer(BRAID_REL_FILE(g->rel), MAIN_FORKNUM, blk, g->recent[blk]))
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

#if PG_VERSION_NUM >= 170000
/*
 * stream_next_block
 *		The read stream's callback: the batch's next block, in the order
 *		read_block() will ask for them (blocks[] ascending), then none.
 */
static BlockNumber
stream_next_block(ReadStream *stream, void *private_data, void *per_buffer_data)
{
	BraidGather *g = (BraidGather *) private_data;

	if (g->stream_next >= g->nblk)
		return InvalidBlockNumber;
	return g->blocks[g->stream_next++];
}
#endif

/*
 * braid_gather_copy_rows
 *		Copy the planned batch's tuples from the table into the arena,
 *		through a read stream of its blocks where there is one (17+).
 */
void
braid_gather_copy_rows(BraidGather *g)
{
#if PG_VERSION_NUM >= 170000
	if (g->use_stream && g->nblk > 0)
	{
		int			flags = READ_STREAM_FULL;

#if PG_VERSION_NUM >= 180000
		/* the callback does no I/O of its own: submit reads in batches */
		flags |= READ_STREAM_USE_BATCHING;
#endif
		g->stream_next = 0;
		g->stream = read_stream_begin_relation(flags, g->strategy, g->rel, MAIN_FORKNUM,
											   stream_next_block, g, 0);

		/*
		 * An error ends the batch with the stream's memory in the query's
		 * context and its pins released by the resource owner: forget it.
		 */
		PG_TRY();
		{
			copy_batch(g);
		}
		PG_CATCH();
		{
			g->stream = NULL;
			PG_RE_THROW();
		}
		PG_END_TRY();
		read_stream_end(g->stream);
		g->stream = NULL;
		return;
	}
#endif
	copy_batch(g);
}

/*
 * copy_batch
 *		Copy the planned batch's tuples: streamed through a window of pages,
 *		by chunks with helper threads, or by chunks on the backend alone.
 */
static void
copy_batch(BraidGather *g)
{
	if (g->win_size > 0 && g->threads > 1 && g->nblk > g->win_size &&
		gather_streamed(g))
		return;

	/*
	 * Visit the batch's pages in block order, each once, a chunk of pages at
	 * a time: the backend pins a chunk's pages, the copies -- pure memory
	 * work on pinned pages -- run on the sort threads, then the backend
	 * releases the pins.  With threads, the backend pins the next chunk while
	 * the helpers copy this one, then joins the copying (gather_batch_task).
	 * (Pinning a chunk, then copying from it, beats pinning, copying and
	 * releasing one page at a time even on one thread: the misses of a
	 * chunk's pins, and then of its copies, overlap.)
	 */
	if (g->threads > 1 && g->nblk >= GATHER_PARALLEL_MIN_BLOCKS &&
		gather_batch_task(g))
		return;
	for (int first = 0; first < g->nblk;)
	{
		int			nb = pin_chunk(g, 0, first, g->chunk_blocks);
		int64		bad = copy_pages(g, g->chunk_pages[0], first, 0, nb);

		unpin_chunk(g, 0, nb);
		if (bad >= 0)
			report_bad(g, bad);
		first += nb;
	}
}
