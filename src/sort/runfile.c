/*-------------------------------------------------------------------------
 *
 * runfile.c
 *	  Writing IndexMap runs: to the spill device, or kept in memory.
 *
 * When an IndexMap outgrows its budget it is sorted in memory and written
 * to the spill device as a run of front-coded records <key, ref>
 * (core/runrecord.h): about 13 bytes a record at the sortbenchmark shape,
 * where PostgreSQL's external sort writes about 110 a row.  This is the
 * write-limited part of the design.  Keys are complete (a truncated prefix
 * could not be compared), so the merge compares plain memcmp-then-length.
 * A run is sized exactly before anything is written (the file is reserved
 * first), then coded straight into the file's mapping on the pool's
 * threads, a stripe each.  A write-limited sort's last IndexMap is coded
 * the same way into memory and never written.  Reading and merging runs
 * is runmerge.c's.
 *
 * src/sort/runfile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "sort/runfile.h"
#include "core/pool.h"
#include "core/runrecord.h"
#include "core/sync.h"

/*
 * A run is coded in pieces: segments of RUN_SEGMENT entries (between which
 * the backend checks for interrupts and the device grant is given back),
 * each split into one stripe per thread.  Every record is coded against the
 * previous key where it lies in the IndexMap, so a stripe can start
 * anywhere and the result is the same as coding the run in one go.
 */
#define RUN_SEGMENT ((size_t) 1 << 16)
#define RUN_MIN_STRIPE ((size_t) 16384)

typedef struct RunWriter
{
	const uint8 *entries;
	uint32		stride;
	BraidKeyOf	key_of;
	void	   *arg;
	int			nworkers;		/* threads running the current task */
	size_t		first;			/* the current segment's stripes ... */
	int			nstripes;
	size_t	   *lo;				/* ... start at lo[k] (lo[k + 1] ends) */
	size_t	   *bytes;			/* and code to bytes[k] */
	BraidSpillFile *file;		/* writing: the run's file */
	uint8	   *dst;			/* writing: where the segment goes */
} RunWriter;

/* stripe_prev: the record before entry i (none for the first). */
static inline void
stripe_prev(const RunWriter *w, size_t i, const uint8 **prev, uint32 *prev_len,
			uint32 *prev_low)
{
	uint64		ref = 0;

	*prev = NULL;
	*prev_len = 0;
	if (i > 0)
		*prev = w->key_of(w->entries + (i - 1) * w->stride, prev_len, &ref, w->arg);
	*prev_low = (uint32) (ref & 0xFFFF);
}

/*
 * walk_stripe
 *		Front-code stripe k of the segment against the record before it:
 *		into dst when given, else only sizing it.  Returns its coded bytes.
 */
static size_t
walk_stripe(const RunWriter *w, int k, uint8 *dst)
{
	const uint8 *prev;
	uint32		prev_len,
				prev_low;
	size_t		bytes = 0;

	stripe_prev(w, w->lo[k], &prev, &prev_len, &prev_low);
	for (size_t i = w->lo[k]; i < w->lo[k + 1]; i++)
	{
		uint32		len;
		uint64		ref;
		const uint8 *key = w->key_of(w->entries + i * w->stride, &len, &ref, w->arg);

		if (dst)
			bytes += braid_runrec_put(dst + bytes, prev, prev_len, prev_low, key, len, ref);
		else
			bytes += braid_runrec_size(prev, prev_len, prev_low, key, len, ref);
		prev = key;
		prev_len = len;
		prev_low = (uint32) (ref & 0xFFFF);
	}
	return bytes;
}

/* size_stripes: (threads) the coded size of each stripe of the segment. */
static void
size_stripes(void *arg, int worker)
{
	RunWriter  *w = (RunWriter *) arg;

	for (int k = worker; k < w->nstripes; k += w->nworkers)
		w->bytes[k] = walk_stripe(w, k, NULL);
}

/* code_stripes: (threads) code each stripe of the segment in place. */
static void
code_stripes(void *arg, int worker)
{
	RunWriter  *w = (RunWriter *) arg;

	for (int k = worker; k < w->nstripes; k += w->nworkers)
	{
		size_t		off = 0;

		for (int j = 0; j < k; j++)
			off += w->bytes[j];
		braid_spill_fill_done(w->file, off, off + walk_stripe(w, k, w->dst + off));
	}
}

/* plan_stripes: split segment [first, end) into one stripe per thread. */
static void
plan_stripes(RunWriter *w, size_t first, size_t end, int threads)
{
	size_t		n = end - first;
	int			k = (int) Max(Min((size_t) threads, n / RUN_MIN_STRIPE), (size_t) 1);

	w->first = first;
	w->nstripes = k;
	for (int j = 0; j <= k; j++)
		w->lo[j] = first + n * j / k;
}

/*
 * braid_run_write
 *		Write n sorted IndexMap entries as a run; key_of gives each entry's
 *		full key and ref (it must be pure: it runs on the threads).  Sized
 *		first (the file is reserved before anything is written), then coded
 *		straight into the file's mapping, both a segment at a time on up to
 *		"threads" threads (writing on as many as the device grants).
 */
BraidRun *
braid_run_write(const uint8 *entries, size_t n, uint32 stride,
				BraidKeyOf key_of, void *arg, int threads,
				BraidDeviceStats *stats)
{
	BraidRun   *run;
	RunWriter	w = {0};
	size_t		nseg = (n + RUN_SEGMENT - 1) / RUN_SEGMENT;
	size_t	   *seg_bytes;
	size_t	   *stripe_bytes;
	size_t		bytes = 0;

	threads = Max(Min(threads, 64), 1);
	w.entries = entries;
	w.stride = stride;
	w.key_of = key_of;
	w.arg = arg;
	w.lo = palloc(sizeof(size_t) * (threads + 1));
	w.bytes = palloc(sizeof(size_t) * threads);
	seg_bytes = palloc0(sizeof(size_t) * Max(nseg, (size_t) 1));
	stripe_bytes = palloc(sizeof(size_t) * Max(nseg, (size_t) 1) * threads);

	/* exact size first: the file is reserved before anything is written */
	for (size_t s = 0; s < nseg; s++)
	{
		plan_stripes(&w, s * RUN_SEGMENT, Min(n, (s + 1) * RUN_SEGMENT), threads);
		w.nworkers = w.nstripes;
		braid_pool_run(w.nworkers, size_stripes, &w);
		for (int k = 0; k < w.nstripes; k++)
			seg_bytes[s] += w.bytes[k];
		memcpy(stripe_bytes + s * threads, w.bytes, sizeof(size_t) * w.nstripes);
		bytes += seg_bytes[s];
		CHECK_FOR_INTERRUPTS();
	}

	run = MemoryContextAllocZero(CurrentMemoryContext, sizeof(BraidRun));
	run->file = braid_spill_create(bytes, stats);
	w.file = run->file;
	for (size_t s = 0; s < nseg; s++)
	{
		int			granted;

		plan_stripes(&w, s * RUN_SEGMENT, Min(n, (s + 1) * RUN_SEGMENT), threads);
		/* the same stripes as when sizing, of the sizes found then */
		memcpy(w.bytes, stripe_bytes + s * threads, sizeof(size_t) * w.nstripes);
		granted = w.nstripes;
		w.dst = braid_spill_fill_begin(run->file, seg_bytes[s], &granted);
		w.nworkers = Min(granted, w.nstripes);
		braid_pool_run(w.nworkers, code_stripes, &w);
		braid_spill_fill_end(run->file, seg_bytes[s]);
		CHECK_FOR_INTERRUPTS();
	}
	braid_spill_finish(run->file);
	pfree(w.lo);
	pfree(w.bytes);
	pfree(seg_bytes);
	pfree(stripe_bytes);
	run->nrecords = n;
	run->bytes = bytes;
	return run;
}

/*
 * single_stripe
 *		Set up w to walk n entries as one stripe (lo[0..1]), for the run
 *		writers that work on one thread.
 */
static void
single_stripe(RunWriter *w, size_t *lo, const uint8 *entries, size_t n,
			  uint32 stride, BraidKeyOf key_of, void *arg)
{
	memset(w, 0, sizeof(*w));
	w->entries = entries;
	w->stride = stride;
	w->key_of = key_of;
	w->arg = arg;
	lo[0] = 0;
	lo[1] = n;
	w->lo = lo;
	w->nstripes = 1;
}

/*
 * braid_run_size
 *		The coded size of n sorted entries as one run, on one thread: the
 *		first half of braid_run_write() for a caller that sorts and writes
 *		runs on a helper thread while the backend goes on (sort_runs.c).  Pure
 *		memory work, as key_of must be.
 */
size_t
braid_run_size(const uint8 *entries, size_t n, uint32 stride,
			   BraidKeyOf key_of, void *arg)
{
	RunWriter	w;
	size_t		lo[2];

	single_stripe(&w, lo, entries, n, stride, key_of, arg);
	return walk_stripe(&w, 0, NULL);
}

/*
 * braid_run_code
 *		The second half: code the entries into dst, the mapping of a run's
 *		file taken by braid_spill_fill_begin() for the size braid_run_size()
 *		gave, and flush them (braid_spill_fill_done); unfinished if *stop
 *		is set meanwhile.  With no file, dst is memory (a run kept in
 *		memory).  Pure memory work.
 */
void
braid_run_code(const uint8 *entries, size_t n, uint32 stride,
			   BraidKeyOf key_of, void *arg, const BraidSpillFile *file,
			   uint8 *dst, const bool *stop)
{
	RunWriter	w;
	size_t		lo[2];
	size_t		done = 0;

	single_stripe(&w, lo, entries, n, stride, key_of, arg);

	/*
	 * A segment at a time, so that flushes follow the writes closely, and a
	 * caller giving up (*stop) need not wait for the rest.
	 */
	for (size_t first = 0; first < n; first += RUN_SEGMENT)
	{
		size_t		bytes;

		if (braid_load_relaxed(stop))
			return;

		lo[0] = first;
		lo[1] = Min(n, first + RUN_SEGMENT);
		bytes = walk_stripe(&w, 0, dst + done);
		if (file)
			braid_spill_fill_done(file, done, done + bytes);
		done += bytes;
	}
}

/*
 * braid_run_set_memory
 *		Code n sorted entries as the records of a run kept in memory (in the
 *		current memory context), replacing whatever records it held: the
 *		same format as on the device, so the merge reads both alike.
 */
void
braid_run_set_memory(BraidRun *run, const uint8 *entries, size_t n, uint32 stride,
					 BraidKeyOf key_of, void *arg)
{
	size_t		bytes = braid_run_size(entries, n, stride, key_of, arg);
	bool		stop = false;

	if (run->mem)
		pfree(run->mem);
	run->mem = MemoryContextAllocHuge(CurrentMemoryContext, Max(bytes, (size_t) 1));
	braid_run_code(entries, n, stride, key_of, arg, NULL, run->mem, &stop);
	run->nrecords = n;
	run->bytes = bytes;
	run->released = 0;
	run->given_back = 0;
}

/*
 * braid_run_in_memory
 *		A run of n sorted entries kept in memory: the records a write-limited
 *		sort never writes (see braid_run_set_memory).
 */
BraidRun *
braid_run_in_memory(const uint8 *entries, size_t n, uint32 stride,
					BraidKeyOf key_of, void *arg)
{
	BraidRun   *run = MemoryContextAllocZero(CurrentMemoryContext, sizeof(BraidRun));

	braid_run_set_memory(run, entries, n, stride, key_of, arg);
	return run;
}

/* braid_run_close: remove a run's file, or free its records in memory. */
void
braid_run_close(BraidRun *run)
{
	if (run == NULL)
		return;
	if (run->file)
		braid_spill_close(run->file);
	run->file = NULL;
	if (run->mem)
		pfree(run->mem);
	run->mem = NULL;
	run->nrecords = 0;
	run->refill = NULL;
}
