/*-------------------------------------------------------------------------
 *
 * runfile.c
 *	  IndexMap runs on the spill device and their k-way merge (MergePass).
 *
 * When an IndexMap outgrows its budget it is sorted in memory and written
 * to the spill device as a run of front-coded records
 *
 *		[lengths][suffix][ref: high 32 bits][middle 16, same][low 16 - previous low 16]
 *
 * "shared" is how many leading bytes the key has in common with the
 * previous key of the run (sorted keys share many), the suffix is the
 * rest.  Both lengths share one byte, a nibble each; a nibble of 15 means
 * "15 plus a LEB128 varint that follows" (so short keys take one byte for
 * both, long ones at most what two varints would).  A heap ref splits into
 * block, line pointer and tuple length, each a varint; the line pointer
 * carries a flag bit "same length (and truncation flag) as the previous
 * record", and only otherwise does the zigzag difference from the previous
 * record's follow: rows of one length cost no byte for it.  This is the
 * write-limited part of the design: at the sortbenchmark shape a record
 * takes about 13 bytes where PostgreSQL's
 * external sort writes about 110 per row.  Keys are complete
 * (a truncated prefix could not be compared), so comparisons during the
 * merge are plain memcmp-then-length.  Runs are read
 * back straight from their mapping (the device is byte-addressable): a
 * reader holds a pointer to its current record, no read buffers; it loads
 * the next block of the run under a short read grant of the device a
 * little before it decodes there, so the merge's CPU work holds no grant.  A loser
 * tree merges k runs; when there are more runs than one merge may take,
 * intermediate merges write new runs -- still keys and refs only.
 *
 * src/sort/runfile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"
#include "port/pg_bswap.h"
#include "utils/memutils.h"

#include "sort/runfile.h"
#include "core/pool.h"
#include "core/sync.h"
#include "core/varint.h"

/*
 * Runs on the device are read in blocks of this many bytes (and what is
 * left at the end of a run), each under its own read grant, ahead of the
 * record being decoded by at least READ_LOOK_AHEAD bytes.
 */
#define READ_ACCOUNT_CHUNK 4096
#define READ_LOOK_AHEAD 64

/* zigzag: a small signed difference as a small unsigned number. */
static inline uint32
zigzag(int32 v)
{
	return ((uint32) v << 1) ^ (uint32) (v >> 31);
}

/* unzigzag: the inverse of zigzag. */
static inline int32
unzigzag(uint32 v)
{
	return (int32) (v >> 1) ^ -(int32) (v & 1);
}

/*
 * RecordCoder: front-codes the records of one run (remembers the previous
 * key) into a scratch buffer.
 */
typedef struct RecordCoder
{
	uint8	   *prev;
	uint32		prev_len;
	uint32		prev_low;		/* low 16 bits of the previous ref */
	size_t		prev_cap;
	uint8	   *scratch;
	size_t		scratch_cap;
} RecordCoder;

/* coder_reset: start a new run. */
static void
coder_reset(RecordCoder *c)
{
	c->prev_len = 0;
	c->prev_low = 0;
}

/* coder_free: release a coder's buffers. */
static void
coder_free(RecordCoder *c)
{
	if (c->prev)
		pfree(c->prev);
	if (c->scratch)
		pfree(c->scratch);
	memset(c, 0, sizeof(*c));
}

/* grow: make *buf (allocated in cxt) at least need bytes. */
static void
grow(MemoryContext cxt, uint8 **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return;
	*cap = Max(need, Max(*cap * 2, (size_t) 256));
	*buf = *buf ? repalloc_huge(*buf, *cap) : MemoryContextAllocHuge(cxt, *cap);
}

/* The most a record adds to its key suffix: lengths, two varints, a ref. */
#define RECORD_OVERHEAD_MAX (1 + 5 + 5 + 3 * 5)

/* shared_prefix: how many leading bytes key has in common with prev. */
static inline uint32
shared_prefix(const uint8 *prev, uint32 prev_len, const uint8 *key, uint32 keylen)
{
	uint32		limit = Min(keylen, prev_len);
	uint32		shared = 0;

	/* eight bytes at a time, then bytes */
	while (shared + 8 <= limit)
	{
		uint64		x,
					y;

		memcpy(&x, prev + shared, 8);
		memcpy(&y, key + shared, 8);
		if (x != y)
			break;
		shared += 8;
	}
	while (shared < limit && key[shared] == prev[shared])
		shared++;
	return shared;
}

/*
 * record_size
 *		The size of the record front-coding key and ref after the record of
 *		prev (prev_len bytes, low ref bits prev_low); writes nothing.
 *
 *		A ref is coded in three parts whatever its layout (refs.h): the
 *		high 32 bits, the 16 bits below them, and the low 16 bits (the
 *		heap layout's block, line pointer and length), the last mostly
 *		equal from record to record and then taking one bit.
 */
static inline size_t
record_size(const uint8 *prev, uint32 prev_len, uint32 prev_low,
			const uint8 *key, uint32 keylen, uint64 ref)
{
	uint32		shared = shared_prefix(prev, prev_len, key, keylen);
	uint32		suffix = keylen - shared;
	size_t		n = 1 + suffix;

	if (shared >= 15)
		n += braid_varint_size(shared - 15);
	if (suffix >= 15)
		n += braid_varint_size(suffix - 15);
	n += braid_varint_size((uint32) (ref >> 32));
	n += braid_varint_size((uint32) ((ref >> 16) & 0xFFFF) << 1);
	if ((ref & 0xFFFF) != prev_low)
		n += braid_varint_size(zigzag((int32) (ref & 0xFFFF) - (int32) prev_low));
	return n;
}

/*
 * record_put
 *		Front-code key and ref after the record of prev into out, which has
 *		room for keylen + RECORD_OVERHEAD_MAX bytes; returns the size.
 */
static inline size_t
record_put(uint8 *out, const uint8 *prev, uint32 prev_len, uint32 prev_low,
		   const uint8 *key, uint32 keylen, uint64 ref)
{
	uint32		shared = shared_prefix(prev, prev_len, key, keylen);
	uint32		suffix = keylen - shared;
	size_t		n = 0;

	out[n++] = (uint8) (Min(shared, 15) << 4 | Min(suffix, 15));
	if (shared >= 15)
		n += braid_varint_put(out + n, shared - 15);
	if (suffix >= 15)
		n += braid_varint_put(out + n, suffix - 15);
	memcpy(out + n, key + shared, suffix);
	n += suffix;
	n += braid_varint_put(out + n, (uint32) (ref >> 32));
	if ((ref & 0xFFFF) == prev_low)
		n += braid_varint_put(out + n, ((uint32) ((ref >> 16) & 0xFFFF) << 1) | 1);
	else
	{
		n += braid_varint_put(out + n, (uint32) ((ref >> 16) & 0xFFFF) << 1);
		n += braid_varint_put(out + n, zigzag((int32) (ref & 0xFFFF) - (int32) prev_low));
	}
	return n;
}

/*
 * encode_record
 *		Front-code one record into c->scratch, remembering its key (for
 *		keys that do not stay put, as a merger's); returns its size.
 */
static size_t
encode_record(RecordCoder *c, const uint8 *key, uint32 keylen, uint64 ref)
{
	size_t		n;

	grow(CurrentMemoryContext, &c->scratch, &c->scratch_cap,
		 (size_t) keylen + RECORD_OVERHEAD_MAX);
	n = record_put(c->scratch, c->prev, c->prev_len, c->prev_low, key, keylen, ref);
	c->prev_low = (uint32) (ref & 0xFFFF);
	grow(CurrentMemoryContext, &c->prev, &c->prev_cap, keylen);
	memcpy(c->prev, key, keylen);
	c->prev_len = keylen;
	return n;
}

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
			bytes += record_put(dst + bytes, prev, prev_len, prev_low, key, len, ref);
		else
			bytes += record_size(prev, prev_len, prev_low, key, len, ref);
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

/* run_base: where a run's records are, on the device or in memory. */
static inline const uint8 *
run_base(const BraidRun *run)
{
	return run->file ? (const uint8 *) run->file->base : run->mem;
}

/* note_read: read a stretch of a run (memory runs cost nothing). */
static inline void
note_read(BraidRunReader *r, size_t upto)
{
	if (r->run->file)
		braid_spill_note_read(r->run->file, r->accounted, upto);
	r->accounted = upto;
}

/*
 * reader_load
 *		Read a run on the device up to at least byte "need" (in whole
 *		chunks, up to its end) before decoding there: each block is read
 *		under a short grant of the device (braid_spill_note_read) and
 *		decoded holding none.  A reader that defers its reads leaves them
 *		to braid_merger_account().
 */
static inline void
reader_load(BraidRunReader *r, size_t need)
{
	size_t		upto;

	if (need <= r->accounted || r->run->file == NULL || r->defer_reads)
		return;
	upto = Min((size_t) TYPEALIGN(READ_ACCOUNT_CHUNK, need), r->run->file->written);
	if (upto > r->accounted)
		note_read(r, upto);
}

/*
 * reader_advance
 *		Decode the next record of a run; false at its end.
 */
static bool
reader_advance(BraidRunReader *r)
{
	const uint8 *base;

	while (r->remaining == 0)
	{
		if (!r->defer_reads && r->pos > r->accounted)
			note_read(r, r->pos);
		/* a virtual run: its next chunk, coded afresh */
		if (r->run->refill == NULL || !r->run->refill(r->run, r->run->refill_arg))
			return false;
		r->pos = 0;
		r->accounted = 0;
		r->prev_low = 0;
		r->remaining = r->run->nrecords;
	}
	base = run_base(r->run);
	/* a record's lengths and their varints fit in the look-ahead */
	reader_load(r, r->pos + READ_LOOK_AHEAD);
	{
		uint32		shared,
					suffix,
					hi,
					mid,
					lo;
		uint8		lengths = base[r->pos++];

		shared = lengths >> 4;
		suffix = lengths & 0x0F;
		if (shared == 15)
		{
			r->pos += braid_varint_get(base + r->pos, &shared);
			shared += 15;
		}
		if (suffix == 15)
		{
			r->pos += braid_varint_get(base + r->pos, &suffix);
			suffix += 15;
		}
		/* the suffix and the ref's three varints (5 bytes at most each) */
		reader_load(r, r->pos + suffix + 15);
		grow(r->cxt, &r->keybuf, &r->keybuf_cap, (size_t) shared + suffix);
		memcpy(r->keybuf + shared, base + r->pos, suffix);
		r->pos += suffix;
		r->keylen = shared + suffix;
		r->key = r->keybuf;
		{
			uint64		prefix = 0;

			/* the first 8 bytes as a number (zero padded): most comparisons */
			if (r->keylen >= 8)
				memcpy(&prefix, r->key, 8);
			else
				memcpy(&prefix, r->key, r->keylen);
			r->prefix = pg_bswap64(prefix);
		}
		r->pos += braid_varint_get(base + r->pos, &hi);
		r->pos += braid_varint_get(base + r->pos, &mid);
		if (mid & 1)
			lo = r->prev_low;	/* the same length as the previous record */
		else
		{
			r->pos += braid_varint_get(base + r->pos, &lo);
			lo = (uint32) ((int32) r->prev_low + unzigzag(lo)) & 0xFFFF;
		}
		mid >>= 1;
		r->prev_low = lo;
		r->ref = (((uint64) hi << 32) | ((uint64) mid << 16) | lo) + r->run->ref_add;
	}
	r->remaining--;
	return true;
}

/*
 * key_cmp
 *		memcmp then length, the order of normalized keys, unless the merger
 *		has a comparator (keys with collated columns).  The first 8
 *		bytes, zero padded, compare as numbers first: zero is the smallest
 *		byte, so where the padded prefixes differ, so do the keys, the same
 *		way.
 */
static inline int
key_cmp(const BraidMerger *m, const BraidRunReader *a, const BraidRunReader *b,
		int node)
{
	int			c;

	if (m->compare)
		return m->compare(a->key, a->keylen, b->key, b->keylen, m->compare_arg,
						  m->memos ? m->memos + (size_t) node * m->memo_bytes : NULL);
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	c = memcmp(a->key, b->key, Min(a->keylen, b->keylen));
	if (c == 0)
		c = (a->keylen > b->keylen) - (a->keylen < b->keylen);
	return c;
}

/*
 * beats
 *		Does reader a's current record come before reader b's, in the match
 *		at tree node "node"?  An exhausted reader comes after everything;
 *		equal keys go to the lower run.
 */
static inline bool
beats(const BraidMerger *m, int a, int b, int node)
{
	const BraidRunReader *ra = &m->readers[a];
	const BraidRunReader *rb = &m->readers[b];
	int			c;

	if (ra->done)
		return false;
	if (rb->done)
		return true;
	c = key_cmp(m, ra, rb, node);
	return c < 0 || (c == 0 && a < b);
}

/*
 * build_tree
 *		Play the tournament below node (leaves k..2k-1 are the readers):
 *		store each match's loser, return the winner.
 */
static int
build_tree(BraidMerger *m, int node)
{
	int			l,
				r;

	if (node >= m->nreaders)
		return node - m->nreaders;
	l = build_tree(m, 2 * node);
	r = build_tree(m, 2 * node + 1);
	if (beats(m, l, r, node))
	{
		m->tree[node] = r;
		return l;
	}
	m->tree[node] = l;
	return r;
}

/*
 * braid_merger_begin
 *		Start merging runs (which must be finished).  A loser tree picks
 *		the next record: log2(k) comparisons each, against a binary heap's
 *		up to twice that.  With a comparator, memo_bytes (0: none) of
 *		zeroed memory a node are its memo (BraidKeyCompare).
 */
BraidMerger *
braid_merger_begin(BraidRun **runs, int nruns, BraidKeyCompare compare,
				   void *compare_arg, size_t memo_bytes)
{
	BraidMerger *m = palloc0(sizeof(BraidMerger));

	m->compare = compare;
	m->compare_arg = compare_arg;
	if (compare != NULL && memo_bytes > 0 && nruns > 1)
	{
		m->memo_bytes = memo_bytes;
		m->memos = palloc0(memo_bytes * nruns);
	}
	m->nreaders = nruns;
	m->readers = palloc0(sizeof(BraidRunReader) * Max(nruns, 1));
	m->tree = palloc0(sizeof(int) * Max(nruns, 1));
	for (int i = 0; i < nruns; i++)
	{
		BraidRunReader *r = &m->readers[i];

		r->run = runs[i];
		r->cxt = CurrentMemoryContext;
		r->remaining = runs[i]->nrecords;
		r->done = !reader_advance(r);
	}
	if (nruns > 0)
		m->tree[0] = nruns == 1 ? 0 : build_tree(m, 1);
	return m;
}

/*
 * braid_merger_next
 *		The next record in key order; false when every run is exhausted.
 *		*key stays valid until the next call.
 */
bool
braid_merger_next(BraidMerger *m, const uint8 **key, uint32 *keylen, uint64 *ref)
{
	BraidRunReader *r;
	int			winner;

	if (m->nreaders == 0)
		return false;
	winner = m->tree[0];
	if (m->started)
	{
		/* advance the reader whose record was returned last time ... */
		r = &m->readers[winner];
		if (!r->done && !reader_advance(r))
			r->done = true;
		/* ... and replay its matches up to the root */
		for (int node = (winner + m->nreaders) / 2; node >= 1; node /= 2)
		{
			int			other = m->tree[node];

			if (beats(m, other, winner, node))
			{
				m->tree[node] = winner;
				winner = other;
			}
		}
		m->tree[0] = winner;
	}
	m->started = true;
	r = &m->readers[winner];
	if (r->done)
		return false;
	*key = r->key;
	*keylen = r->keylen;
	*ref = r->ref;
	return true;
}

/*
 * reader_next_keylen
 *		The key length of the record after the reader's current one (which
 *		must exist), read from its lengths without decoding it.
 */
static uint32
reader_next_keylen(const BraidRunReader *r)
{
	const uint8 *p = run_base(r->run) + r->pos;
	uint32		shared = *p >> 4;
	uint32		suffix = *p & 0x0F;
	size_t		n = 1;

	if (shared == 15)
	{
		n += braid_varint_get(p + n, &shared);
		shared += 15;
	}
	if (suffix == 15)
	{
		(void) braid_varint_get(p + n, &suffix);
		suffix += 15;
	}
	return shared + suffix;
}

/*
 * braid_merger_try_next
 *		braid_merger_next() for a thread other than the backend's: the next
 *		record's ref in *ref and 1, 0 when every run is exhausted, or -1,
 *		changing nothing, when taking it would grow a reader's key buffer
 *		(an allocation), which only the backend may do.  The merger must
 *		defer its read accounting (braid_merger_defer_reads) and compare
 *		keys by memcmp (no comparator, which may call the server).  Pure
 *		memory work on the runs' mappings.
 */
int
braid_merger_try_next(BraidMerger *m, uint64 *ref)
{
	const uint8 *key;
	uint32		keylen;

	Assert(m->compare == NULL);
	if (m->nreaders == 0)
		return 0;
	if (m->started)
	{
		const BraidRunReader *r = &m->readers[m->tree[0]];

		Assert(r->defer_reads);
		if (!r->done && r->remaining > 0 &&
			reader_next_keylen(r) > r->keybuf_cap)
			return -1;
	}
	return braid_merger_next(m, &key, &keylen, ref) ? 1 : 0;
}

/*
 * braid_merger_defer_reads
 *		With defer, count and pay for the runs' reads only when
 *		braid_merger_account() is called, so that braid_merger_try_next()
 *		can run on a helper thread (which cannot wait for the device's
 *		gate); without, read each block under a grant before decoding it
 *		again (the backend merging).
 */
void
braid_merger_defer_reads(BraidMerger *m, bool defer)
{
	for (int i = 0; i < m->nreaders; i++)
		m->readers[i].defer_reads = defer;
}

/*
 * braid_merger_account
 *		Account the reads made since the last call, in READ_ACCOUNT_CHUNK
 *		steps and the rest at the end of each run (a whole run adds up to
 *		what a merger that does not defer its reads reads of it).  Backend
 *		only; each block is read under its own grant.
 */
void
braid_merger_account(BraidMerger *m)
{
	for (int i = 0; i < m->nreaders; i++)
	{
		BraidRunReader *r = &m->readers[i];
		size_t		upto = r->remaining == 0 ? r->pos :
			r->pos - (r->pos % READ_ACCOUNT_CHUNK);

		if (upto > r->accounted)
			note_read(r, upto);
	}
}

/*
 * A memory run is given back in whole units of this size, aligned: the
 * transparent huge pages (2 MB on x86-64) a large anonymous allocation may
 * be backed by are then freed at once, not split and kept until the
 * kernel reclaims them.
 */
#define RUN_RELEASE_UNIT	((uintptr_t) 2 * 1024 * 1024)

/*
 * braid_merger_release_read
 *		Give back to the operating system the memory of the records the
 *		merge has read of its runs kept in memory (a write-limited sort's
 *		last IndexMap, never written): the whole aligned 2 MB units between
 *		the run's start and its reader's position (madvise MADV_DONTNEED:
 *		the reader keeps its current key in its own buffer, rebuilt from
 *		the front coding, and never reads back), all of it once the run is
 *		exhausted.  Returns the bytes given back by this call, which the
 *		gather's batches may take from then on (sort_gather.c): with keys
 *		in no particular order the merge reads the memory run along with
 *		the others, so it holds about half of it on average instead of all
 *		of it to the end (with ascending input, whose memory run holds the
 *		largest keys, nothing until the end).  Not a virtual run's chunks,
 *		which are coded afresh in place.
 */
size_t
braid_merger_release_read(BraidMerger *m)
{
	size_t		total = 0;

	for (int i = 0; i < m->nreaders; i++)
	{
		BraidRunReader *r = &m->readers[i];
		BraidRun   *run = r->run;
		uintptr_t	base;
		uintptr_t	from;
		uintptr_t	to;

		if (run->file != NULL || run->mem == NULL || run->refill != NULL)
			continue;
		if (r->done)
		{
			total += run->bytes - run->given_back;
			run->given_back = run->released = run->bytes;
			pfree(run->mem);
			run->mem = NULL;
			continue;
		}
		base = (uintptr_t) run->mem;
		from = TYPEALIGN(RUN_RELEASE_UNIT, base + run->released);
		to = TYPEALIGN_DOWN(RUN_RELEASE_UNIT, base + r->pos);
		if (to <= from)
			continue;
		if (madvise((void *) from, to - from, MADV_DONTNEED) != 0)
			continue;			/* nothing given back: count nothing */
		total += to - from;
		run->given_back += to - from;
		run->released = to - base;
	}
	return total;
}

/* braid_merger_end: free the merger (the runs stay open). */
void
braid_merger_end(BraidMerger *m)
{
	for (int i = 0; i < m->nreaders; i++)
		if (m->readers[i].keybuf)
			pfree(m->readers[i].keybuf);
	pfree(m->readers);
	pfree(m->tree);
	if (m->memos)
		pfree(m->memos);
	pfree(m);
}

/*
 * braid_merge_runs
 *		Merge runs into one new run (an intermediate merge pass); the input
 *		runs are closed.  compare, compare_arg and memo_bytes as for
 *		braid_merger_begin.
 */
BraidRun *
braid_merge_runs(BraidRun **runs, int nruns, BraidDeviceStats *stats,
				 BraidKeyCompare compare, void *compare_arg, size_t memo_bytes)
{
	BraidRun   *out = MemoryContextAllocZero(CurrentMemoryContext, sizeof(BraidRun));
	BraidMerger *m;
	RecordCoder coder = {0};
	const uint8 *key;
	uint32		keylen;
	uint64		ref;
	uint64		n = 0;

	/*
	 * The merged run front-codes differently from its inputs: a dry merge
	 * (reads only, which the device does cheaply) gives its exact size, so
	 * the file can be reserved before anything is written.  Each block read
	 * takes a read grant of the device, and each flush of the output a write
	 * grant (spillread.c, device.c), so reads and writes alternate, and the
	 * merging in between holds neither.
	 */
	m = braid_merger_begin(runs, nruns, compare, compare_arg, memo_bytes);
	while (braid_merger_next(m, &key, &keylen, &ref))
	{
		out->bytes += encode_record(&coder, key, keylen, ref);
		if ((++n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	braid_merger_end(m);

	out->file = braid_spill_create(out->bytes, stats);
	coder_reset(&coder);
	m = braid_merger_begin(runs, nruns, compare, compare_arg, memo_bytes);
	while (braid_merger_next(m, &key, &keylen, &ref))
	{
		size_t		rec = encode_record(&coder, key, keylen, ref);

		braid_spill_write(out->file, coder.scratch, rec);
	}
	braid_merger_end(m);
	coder_free(&coder);
	braid_spill_finish(out->file);
	n = 0;
	for (int i = 0; i < nruns; i++)
		n += runs[i]->nrecords;
	out->nrecords = n;
	for (int i = 0; i < nruns; i++)
		braid_run_close(runs[i]);
	return out;
}
