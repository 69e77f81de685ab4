/*-------------------------------------------------------------------------
 *
 * runmerge.c
 *	  Reading IndexMap runs and their k-way merge (MergePass).
 *
 * Runs (runfile.c) are read back straight from their mapping (the device
 * is byte-addressable): a reader holds a pointer to its current record, no
 * read buffers; it loads the next block of the run under a short read
 * grant of the device a little before it decodes there, so the merge's CPU
 * work holds no grant.  A loser tree merges k runs; when there are more
 * runs than one merge may take, intermediate merges write new runs --
 * still keys and refs only.  A run kept in memory is read the same way and
 * given back to the operating system as the merge reads past it.
 *
 * src/sort/runmerge.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"
#include "port/pg_bswap.h"
#include "utils/memutils.h"

#include "sort/runmerge.h"
#include "core/runrecord.h"

/*
 * Runs on the device are read in blocks of this many bytes (and what is
 * left at the end of a run), each under its own read grant, ahead of the
 * record being decoded by at least READ_LOOK_AHEAD bytes.
 */
#define READ_ACCOUNT_CHUNK 4096
#define READ_LOOK_AHEAD 64

StaticAssertDecl(READ_LOOK_AHEAD >= BRAID_RUNREC_LENGTHS_MAX,
				 "a record's lengths must fit in the look-ahead");

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

/*
 * grow: make *buf (allocated in cxt) at least need bytes, and allocated
 * even for none (an empty key is copied from it).
 */
static void
grow(MemoryContext cxt, uint8 **buf, size_t *cap, size_t need)
{
	if (need <= *cap && *buf != NULL)
		return;
	*cap = Max(need, Max(*cap * 2, (size_t) 256));
	*buf = *buf ? repalloc_huge(*buf, *cap) : MemoryContextAllocHuge(cxt, *cap);
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
		 (size_t) keylen + BRAID_RUNREC_OVERHEAD_MAX);
	n = braid_runrec_put(c->scratch, c->prev, c->prev_len, c->prev_low, key, keylen, ref);
	c->prev_low = (uint32) (ref & 0xFFFF);
	grow(CurrentMemoryContext, &c->prev, &c->prev_cap, keylen);
	memcpy(c->prev, key, keylen);
	c->prev_len = keylen;
	return n;
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
					suffix;
		uint64		ref;
		uint64		prefix = 0;

		r->pos += braid_runrec_lengths(base + r->pos, &shared, &suffix);
		/* the suffix and the ref */
		reader_load(r, r->pos + suffix + BRAID_RUNREC_REF_MAX);
		grow(r->cxt, &r->keybuf, &r->keybuf_cap, (size_t) shared + suffix);
		memcpy(r->keybuf + shared, base + r->pos, suffix);
		r->pos += suffix;
		r->keylen = shared + suffix;
		r->key = r->keybuf;
		/* the first 8 bytes as a number (zero padded): most comparisons */
		memcpy(&prefix, r->key, Min(r->keylen, 8));
		r->prefix = pg_bswap64(prefix);
		r->pos += braid_runrec_ref(base + r->pos, &r->prev_low, &ref);
		r->ref = ref + r->run->ref_add;
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
	uint32		shared,
				suffix;

	(void) braid_runrec_lengths(run_base(r->run) + r->pos, &shared, &suffix);
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
