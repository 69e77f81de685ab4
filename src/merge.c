/*-------------------------------------------------------------------------
 *
 * merge.c
 *	  IndexMap runs on the spill device and their k-way merge (MergePass).
 *
 * When an IndexMap outgrows its budget it is sorted in memory and written
 * to the spill device as a run of front-coded records
 *
 *		[lengths][suffix][ref: high 32 bits][middle 16][low 16 - previous low 16]
 *
 * "shared" is how many leading bytes the key has in common with the
 * previous key of the run (sorted keys share many), the suffix is the
 * rest.  Both lengths share one byte, a nibble each; a nibble of 15 means
 * "15 plus a LEB128 varint that follows" (so short keys take one byte for
 * both, long ones at most what two varints would).  A heap ref splits into block, line pointer and tuple
 * length, each a varint; the length (and truncation flag) is stored as the
 * zigzag difference from the previous record's, one byte when rows have the
 * same length.  This is the write-limited part of the design: at the
 * sortbenchmark shape a record takes about 12 bytes where PostgreSQL's
 * external sort writes about 110 per row.  Keys are complete
 * (a truncated prefix could not be compared), so comparisons during the
 * merge are plain memcmp-then-length.  Runs are read
 * back straight from their mapping (the device is byte-addressable): a
 * reader holds a pointer to its current record, no read buffers.  A binary
 * heap merges k runs; when there are more runs than one merge may take,
 * intermediate merges write new runs -- still keys and refs only.
 *
 * src/merge.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "merge.h"

/* Account reads in chunks of this many bytes (and at the end of a run). */
#define READ_ACCOUNT_CHUNK 4096

/* varint_put: write v as LEB128; returns bytes written. */
static inline size_t
varint_put(uint8 *p, uint32 v)
{
	size_t		n = 0;

	while (v >= 0x80)
	{
		p[n++] = (uint8) (v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8) v;
	return n;
}

/* varint_get: read a LEB128 value; returns bytes read. */
static inline size_t
varint_get(const uint8 *p, uint32 *v)
{
	uint32		result = 0;
	int			shift = 0;
	size_t		n = 0;

	for (;;)
	{
		uint8		b = p[n++];

		result |= (uint32) (b & 0x7F) << shift;
		if ((b & 0x80) == 0)
			break;
		shift += 7;
	}
	*v = result;
	return n;
}

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

/*
 * encode_record
 *		Front-code one record into c->scratch; returns its size.
 */
static size_t
encode_record(RecordCoder *c, const uint8 *key, uint32 keylen, uint64 ref)
{
	uint32		shared = 0;
	uint32		limit = Min(keylen, c->prev_len);
	size_t		n = 0;

	while (shared < limit && key[shared] == c->prev[shared])
		shared++;
	grow(CurrentMemoryContext, &c->scratch, &c->scratch_cap, (size_t) keylen - shared + 32);
	{
		uint32		suffix = keylen - shared;

		c->scratch[n++] = (uint8) (Min(shared, 15) << 4 | Min(suffix, 15));
		if (shared >= 15)
			n += varint_put(c->scratch + n, shared - 15);
		if (suffix >= 15)
			n += varint_put(c->scratch + n, suffix - 15);
	}
	memcpy(c->scratch + n, key + shared, keylen - shared);
	n += keylen - shared;
	n += varint_put(c->scratch + n, (uint32) (ref >> 32));
	n += varint_put(c->scratch + n, (uint32) ((ref >> 16) & 0xFFFF));
	n += varint_put(c->scratch + n, zigzag((int32) (ref & 0xFFFF) - (int32) c->prev_low));
	c->prev_low = (uint32) (ref & 0xFFFF);

	grow(CurrentMemoryContext, &c->prev, &c->prev_cap, keylen);
	memcpy(c->prev + shared, key + shared, keylen - shared);
	c->prev_len = keylen;
	return n;
}

/*
 * braid_run_write
 *		Write n sorted IndexMap entries as a run; key_of gives each entry's
 *		full key and ref.
 */
BraidRun *
braid_run_write(const uint8 *entries, size_t n, uint32 stride,
				BraidKeyOf key_of, void *arg, BraidDeviceStats *stats)
{
	BraidRun   *run;
	RecordCoder coder = {0};
	size_t		bytes = 0;

	/* exact size first: the file is reserved before anything is written */
	for (size_t i = 0; i < n; i++)
	{
		uint32		len;
		uint64		ref;
		const uint8 *key = key_of(entries + i * stride, &len, &ref, arg);

		bytes += encode_record(&coder, key, len, ref);
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	run = MemoryContextAllocZero(CurrentMemoryContext, sizeof(BraidRun));
	run->file = braid_spill_create(bytes, stats);
	coder_reset(&coder);
	for (size_t i = 0; i < n; i++)
	{
		uint32		len;
		uint64		ref;
		const uint8 *key = key_of(entries + i * stride, &len, &ref, arg);
		size_t		rec = encode_record(&coder, key, len, ref);

		braid_spill_write(run->file, coder.scratch, rec);
	}
	braid_spill_finish(run->file);
	coder_free(&coder);
	run->nrecords = n;
	run->bytes = bytes;
	return run;
}

/* braid_run_close: remove a run's file. */
void
braid_run_close(BraidRun *run)
{
	if (run == NULL)
		return;
	braid_spill_close(run->file);
	run->file = NULL;
}

/*
 * reader_advance
 *		Decode the next record of a run; false at its end.
 */
static bool
reader_advance(BraidRunReader *r)
{
	const uint8 *base = (const uint8 *) r->run->file->base;

	if (r->remaining == 0)
	{
		braid_spill_note_read(r->run->file, r->accounted, r->pos);
		r->accounted = r->pos;
		return false;
	}
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
			r->pos += varint_get(base + r->pos, &shared);
			shared += 15;
		}
		if (suffix == 15)
		{
			r->pos += varint_get(base + r->pos, &suffix);
			suffix += 15;
		}
		grow(r->cxt, &r->keybuf, &r->keybuf_cap, (size_t) shared + suffix);
		memcpy(r->keybuf + shared, base + r->pos, suffix);
		r->pos += suffix;
		r->keylen = shared + suffix;
		r->key = r->keybuf;
		r->pos += varint_get(base + r->pos, &hi);
		r->pos += varint_get(base + r->pos, &mid);
		r->pos += varint_get(base + r->pos, &lo);
		lo = (uint32) ((int32) r->prev_low + unzigzag(lo)) & 0xFFFF;
		r->prev_low = lo;
		r->ref = ((uint64) hi << 32) | ((uint64) mid << 16) | lo;
	}
	r->remaining--;

	if (r->pos - r->accounted >= READ_ACCOUNT_CHUNK)
	{
		size_t		upto = r->pos - (r->pos % READ_ACCOUNT_CHUNK);

		braid_spill_note_read(r->run->file, r->accounted, upto);
		r->accounted = upto;
	}
	return true;
}

/*
 * key_cmp
 *		memcmp then length, the order of normalized keys, unless the merger
 *		has a comparator (keys whose last column is collated).
 */
static inline int
key_cmp(const BraidMerger *m, const BraidRunReader *a, const BraidRunReader *b)
{
	int			c;

	if (m->compare)
		return m->compare(a->key, a->keylen, b->key, b->keylen, m->compare_arg);
	c = memcmp(a->key, b->key, Min(a->keylen, b->keylen));

	if (c == 0)
		c = (a->keylen > b->keylen) - (a->keylen < b->keylen);
	return c;
}

/* sift_down: restore the heap property from slot i. */
static void
sift_down(BraidMerger *m, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					s = i;

		if (l < m->heapsize &&
			key_cmp(m, &m->readers[m->heap[l]], &m->readers[m->heap[s]]) < 0)
			s = l;
		if (r < m->heapsize &&
			key_cmp(m, &m->readers[m->heap[r]], &m->readers[m->heap[s]]) < 0)
			s = r;
		if (s == i)
			return;
		{
			int			t = m->heap[i];

			m->heap[i] = m->heap[s];
			m->heap[s] = t;
		}
		i = s;
	}
}

/*
 * braid_merger_begin
 *		Start merging runs (which must be finished).
 */
BraidMerger *
braid_merger_begin(BraidRun **runs, int nruns, BraidKeyCompare compare,
				   void *compare_arg)
{
	BraidMerger *m = palloc0(sizeof(BraidMerger));

	m->compare = compare;
	m->compare_arg = compare_arg;
	m->nreaders = nruns;
	m->readers = palloc0(sizeof(BraidRunReader) * Max(nruns, 1));
	m->heap = palloc(sizeof(int) * Max(nruns, 1));
	for (int i = 0; i < nruns; i++)
	{
		BraidRunReader *r = &m->readers[i];

		r->run = runs[i];
		r->cxt = CurrentMemoryContext;
		r->remaining = runs[i]->nrecords;
		if (reader_advance(r))
			m->heap[m->heapsize++] = i;
	}
	for (int i = m->heapsize / 2 - 1; i >= 0; i--)
		sift_down(m, i);
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

	if (m->started && m->heapsize > 0)
	{
		/* advance the reader whose record was returned last time */
		r = &m->readers[m->heap[0]];
		if (!reader_advance(r))
			m->heap[0] = m->heap[--m->heapsize];
		if (m->heapsize > 0)
			sift_down(m, 0);
	}
	m->started = true;
	if (m->heapsize == 0)
		return false;
	r = &m->readers[m->heap[0]];
	*key = r->key;
	*keylen = r->keylen;
	*ref = r->ref;
	return true;
}

/* braid_merger_end: free the merger (the runs stay open). */
void
braid_merger_end(BraidMerger *m)
{
	for (int i = 0; i < m->nreaders; i++)
		if (m->readers[i].keybuf)
			pfree(m->readers[i].keybuf);
	pfree(m->readers);
	pfree(m->heap);
	pfree(m);
}

/*
 * braid_merge_runs
 *		Merge runs into one new run (an intermediate merge pass); the input
 *		runs are closed.
 */
BraidRun *
braid_merge_runs(BraidRun **runs, int nruns, BraidDeviceStats *stats,
				 BraidKeyCompare compare, void *compare_arg)
{
	BraidRun   *out = MemoryContextAllocZero(CurrentMemoryContext, sizeof(BraidRun));
	BraidMerger *m;
	RecordCoder coder = {0};
	const uint8 *key;
	uint32		keylen;
	uint64		ref;
	uint64		n = 0;


	BraidReadScope scope = {0};

	for (int i = 0; i < nruns; i++)
		braid_read_scope_add(&scope, runs[i]->file);

	/*
	 * The merged run front-codes differently from its inputs: a dry merge
	 * (reads only, which the device does cheaply) gives its exact size, so
	 * the file can be reserved before anything is written.  Reading happens
	 * under a read grant of the device; each flush of the output trades it
	 * for a write grant and back (device.c), so reads and writes alternate.
	 */
	braid_read_scope_begin(&scope);
	m = braid_merger_begin(runs, nruns, compare, compare_arg);
	while (braid_merger_next(m, &key, &keylen, &ref))
	{
		out->bytes += encode_record(&coder, key, keylen, ref);
		if ((++n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	braid_merger_end(m);
	braid_read_scope_end(&scope);

	out->file = braid_spill_create(out->bytes, stats);
	coder_reset(&coder);
	for (int i = 0; i < nruns; i++)
		braid_read_scope_add(&scope, runs[i]->file);
	braid_read_scope_begin(&scope);
	m = braid_merger_begin(runs, nruns, compare, compare_arg);
	while (braid_merger_next(m, &key, &keylen, &ref))
	{
		size_t		rec = encode_record(&coder, key, keylen, ref);

		braid_spill_write(out->file, coder.scratch, rec);
	}
	braid_merger_end(m);
	braid_read_scope_end(&scope);
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
