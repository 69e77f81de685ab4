/*-------------------------------------------------------------------------
 *
 * valuelog.c
 *	  The value log: input rows of a Sort that cannot be refetched by TID.
 *
 * When a Sort's input is not a plain heap scan (a join, an aggregate, a
 * function scan, a scan with volatile output...), its rows cannot be fetched
 * again later, so each input row is appended once, sequentially, to a value
 * log, and the IndexMap entry points at its offset.  Small inputs keep the
 * log in memory; once it outgrows its share of the budget it moves to the
 * spill device (the bytes kept so far become its first segment, written in
 * one sequential pass) and later rows are appended to further segments,
 * spill files whose size doubles from BRAID_VLOG_FIRST_SEGMENT to
 * BRAID_VLOG_SEGMENT (or one row, if larger; vlogrow.h): a segment's space is reserved
 * when it is created, so small logs reserve little of a shared device.
 * Rows are read back from the mapping (sort_vlog.c copies them out a window at a
 * time, under a read grant of the device).
 *
 * Rows in memory are whole minimal tuples, MAXALIGNed, read in place.
 * Rows the log writes to the device once it is there (segments 1 on) are
 * packed (vlogrow.h): 10 bytes of each tuple's header left out and no
 * alignment, about 12 bytes a row less; readers copy them out unpacked
 * (braid_vlog_locate, braid_vlog_row_copy).  Segment 0, the memory's
 * bytes written as they were, keeps whole tuples: the refs to them were
 * handed out already.
 *
 * A ref (the IndexMap entry's 8-byte payload, laid out in refs.h) holds
 * the segment number, the byte offset and the row's length (its t_len) if
 * it is under 32 kB: whoever reads rows back can lay them out without
 * touching them first.
 *
 * src/io/valuelog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "utils/memutils.h"

#include "io/valuelog.h"
#include "core/vlogrow.h"

StaticAssertDecl(BRAID_VLOG_ROW_SKIP == MINIMAL_TUPLE_DATA_OFFSET,
				 "a packed row leaves out the bytes before a minimal tuple's data");

#define BRAID_VLOG_MAX_SEGMENTS 65535

/*
 * braid_vlog_init
 *		An empty log keeping up to mem_limit bytes in memory.
 */
void
braid_vlog_init(BraidValueLog *log, MemoryContext cxt, size_t mem_limit,
				BraidDeviceStats *stats)
{
	memset(log, 0, sizeof(*log));
	log->cxt = cxt;
	log->mem_limit = Min(mem_limit, BRAID_VLOG_MAX_MEMORY);
	log->stats = stats;
}

/* add_segment: start a new device segment of at least "need" bytes. */
static void
add_segment(BraidValueLog *log, size_t size)
{
	if (log->nsegs > 0)
		braid_spill_finish(log->segs[log->nsegs - 1]);
	if (log->nsegs == BRAID_VLOG_MAX_SEGMENTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("braidsort value log has too many segments")));
	if (log->nsegs == log->segs_cap)
	{
		log->segs_cap = Max(log->segs_cap * 2, 16);
		log->segs = log->segs ?
			repalloc(log->segs, sizeof(BraidSpillFile *) * log->segs_cap) :
			MemoryContextAlloc(log->cxt, sizeof(BraidSpillFile *) * log->segs_cap);
	}
	log->segs[log->nsegs++] = braid_spill_create(size, log->stats);
	log->seg_used = 0;
}

/*
 * move_to_device
 *		The in-memory log outgrew its share: write it out as segment 0.
 */
static void
move_to_device(BraidValueLog *log)
{
	add_segment(log, Max(log->mem_used, (size_t) 1));
	braid_spill_write(log->segs[0], log->mem, log->mem_used);
	log->seg_used = log->mem_used;
	braid_spill_finish(log->segs[0]);
	if (log->mem)
		pfree(log->mem);
	log->mem = NULL;
	log->mem_cap = log->mem_used = 0;
	log->on_device = true;
}

/*
 * mem_reserve
 *		Where the next alen (MAXALIGNed) bytes of the in-memory log go, or
 *		NULL if they would outgrow its share (the caller then moves it to
 *		the device).  mem_commit() appends them.
 */
static char *
mem_reserve(BraidValueLog *log, size_t alen)
{
	if (log->mem_used + alen > log->mem_limit)
		return NULL;
	if (log->mem_used + alen > log->mem_cap)
	{
		size_t		cap = Max(log->mem_cap * 2, (size_t) 65536);

		cap = Min(Max(cap, log->mem_used + alen), log->mem_limit);
		log->mem = log->mem ? repalloc_huge(log->mem, cap) :
			MemoryContextAllocHuge(log->cxt, cap);
		log->mem_cap = cap;
	}
	return log->mem + log->mem_used;
}

/*
 * mem_commit
 *		Append the row of t_len bytes written where mem_reserve() said;
 *		returns its ref.
 */
static uint64
mem_commit(BraidValueLog *log, uint32 t_len)
{
	uint64		ref = braid_make_vlog_ref(0, log->mem_used, t_len);

	log->mem_used += MAXALIGN(t_len);
	log->bytes += MAXALIGN(t_len);
	return ref;
}

/*
 * append_row
 *		Append a row given as its t_len and its bytes from
 *		BRAID_VLOG_ROW_SKIP on (body, t_len - BRAID_VLOG_ROW_SKIP of them);
 *		returns its ref.  In memory the row is laid out as a MinimalTuple
 *		(t_len, zeroed padding, body), so that braid_vlog_get() returns it
 *		in place; on the device it is packed (vlogrow.h).
 */
static uint64
append_row(BraidValueLog *log, uint32 t_len, const char *body)
{
	size_t		len = t_len;
	size_t		alen = MAXALIGN(len);
	size_t		stored;
	uint8		hdr[8];
	size_t		hdrlen;
	uint64		ref;

	if (!log->on_device)
	{
		char	   *dst = mem_reserve(log, alen);

		if (dst != NULL)
		{
			memcpy(dst, &t_len, sizeof(t_len));
			memset(dst + sizeof(t_len), 0, BRAID_VLOG_ROW_SKIP - sizeof(t_len));
			memcpy(dst + BRAID_VLOG_ROW_SKIP, body, len - BRAID_VLOG_ROW_SKIP);
			return mem_commit(log, len);
		}
		move_to_device(log);
	}

	/* on the device: packed (vlogrow.h) */
	hdrlen = braid_vlog_pack_header(hdr, t_len);
	stored = hdrlen + len - BRAID_VLOG_ROW_SKIP;
	if (log->nsegs < 2 || log->seg_used + stored > log->segs[log->nsegs - 1]->size)
		/* segment 0 is the memory's: the first written here is 1 */
		add_segment(log, braid_vlog_segment_size(log->nsegs, stored));
	braid_spill_write(log->segs[log->nsegs - 1], hdr, hdrlen);
	braid_spill_write(log->segs[log->nsegs - 1], body, len - BRAID_VLOG_ROW_SKIP);
	ref = braid_make_vlog_ref(log->nsegs - 1, log->seg_used, len);
	log->seg_used += stored;
	log->bytes += stored;
	return ref;
}

/*
 * braid_vlog_append
 *		Append a row; returns its ref.
 */
uint64
braid_vlog_append(BraidValueLog *log, MinimalTuple tuple)
{
	return append_row(log, tuple->t_len, (const char *) tuple + BRAID_VLOG_ROW_SKIP);
}

/*
 * braid_vlog_append_heap
 *		Append a heap tuple as the MinimalTuple it makes, without making it:
 *		a MinimalTuple is the tuple's header from t_infomask2 on and its
 *		data, MINIMAL_TUPLE_OFFSET bytes shorter (minimal_tuple_from_heap_tuple
 *		copies exactly those bytes), so they go to the log straight from
 *		the table's page.  Returns its ref, as braid_vlog_append would.
 */
uint64
braid_vlog_append_heap(BraidValueLog *log, HeapTuple tuple)
{
	StaticAssertStmt(MINIMAL_TUPLE_OFFSET + BRAID_VLOG_ROW_SKIP ==
					 offsetof(HeapTupleHeaderData, t_infomask2),
					 "a heap tuple's t_infomask2 is a minimal tuple's, MINIMAL_TUPLE_OFFSET on");
	return append_row(log, tuple->t_len - MINIMAL_TUPLE_OFFSET,
					  (const char *) tuple->t_data + MINIMAL_TUPLE_OFFSET + BRAID_VLOG_ROW_SKIP);
}

/*
 * form_row
 *		Form the row (values, isnull) at dst, zeroed, as the MinimalTuple
 *		heap_form_minimal_tuple() makes: hoff and data_len as
 *		braid_vlog_append_values computed them.  dst must be MAXALIGNed:
 *		heap_fill_tuple aligns each column by its address.
 */
static void
form_row(char *dst, TupleDesc desc, Datum *values, bool *isnull, bool hasnull,
		 Size hoff, Size data_len)
{
	MinimalTuple tuple = (MinimalTuple) dst;

	tuple->t_len = hoff + data_len;
	HeapTupleHeaderSetNatts(tuple, desc->natts);
	tuple->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	heap_fill_tuple(desc, values, isnull, dst + hoff, data_len,
					&tuple->t_infomask, hasnull ? tuple->t_bits : NULL);
}

/*
 * braid_vlog_append_values
 *		Append a row given as its columns (a virtual slot's, all of them
 *		valid), formed as heap_form_minimal_tuple() forms it, byte for byte,
 *		but in place: in the in-memory log where it fits, else in the log's
 *		own buffer, reused row to row, and packed from there (heap_fill_tuple
 *		aligns by address, and the packed form keeps no alignment).  What
 *		this saves is a palloc0() and a copy a row: for rows a projection
 *		made (a scan's selected columns), forming them was much of what
 *		building the log cost.  Returns the ref and sets *t_len.
 */
uint64
braid_vlog_append_values(BraidValueLog *log, TupleDesc desc, Datum *values,
						 bool *isnull, uint32 *t_len)
{
	bool		hasnull = false;
	Size		hoff;
	Size		data_len;
	Size		len;
	char	   *dst;

	if (desc->natts > MaxTupleAttributeNumber)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("number of columns (%d) exceeds limit (%d)",
						desc->natts, MaxTupleAttributeNumber)));
	for (int i = 0; i < desc->natts; i++)
	{
		if (isnull[i])
		{
			hasnull = true;
			break;
		}
	}
	hoff = SizeofMinimalTupleHeader;
	if (hasnull)
		hoff += BITMAPLEN(desc->natts);
	hoff = MAXALIGN(hoff);
	data_len = heap_compute_data_size(desc, values, isnull);
	len = hoff + data_len;
	if (!AllocSizeIsValid(len))
		elog(ERROR, "invalid memory alloc request size %zu", len);
	*t_len = (uint32) len;

	if (!log->on_device)
	{
		dst = mem_reserve(log, MAXALIGN(len));
		if (dst != NULL)
		{
			memset(dst, 0, len);
			form_row(dst, desc, values, isnull, hasnull, hoff, data_len);
			return mem_commit(log, (uint32) len);
		}
	}
	if (len > log->formbuf_cap)
	{
		size_t		cap = Max((size_t) MAXALIGN(len), log->formbuf_cap * 2);

		if (log->formbuf)
			pfree(log->formbuf);
		log->formbuf = MemoryContextAllocHuge(log->cxt, cap);
		log->formbuf_cap = cap;
	}
	memset(log->formbuf, 0, len);
	form_row(log->formbuf, desc, values, isnull, hasnull, hoff, data_len);
	return append_row(log, (uint32) len, log->formbuf + BRAID_VLOG_ROW_SKIP);
}

/*
 * braid_vlog_finish
 *		No more appends: persist the last segment so it can be read.
 */
void
braid_vlog_finish(BraidValueLog *log)
{
	if (log->on_device && log->nsegs > 0)
		braid_spill_finish(log->segs[log->nsegs - 1]);
}

/*
 * braid_vlog_to_device
 *		No more appends, and every row on the device, even a log that fits
 *		in memory: another process is to read it (a parallel sort's
 *		participant, sort_shared.c).  An empty log stays empty.
 */
void
braid_vlog_to_device(BraidValueLog *log)
{
	if (!log->on_device && log->mem_used > 0)
		move_to_device(log);
	braid_vlog_finish(log);
}

/*
 * seg_whole
 *		Whether a segment holds whole tuples (the memory's, written as they
 *		were) or packed ones.
 */
static inline bool
seg_whole(const BraidValueLog *log, int seg)
{
	return log->whole_segs != NULL ? log->whole_segs[seg] : seg == 0;
}

/*
 * braid_vlog_add_foreign
 *		Add to a log on the device the segments of another process's log
 *		(braid_vlog_to_device there): nsegs files, each named in its
 *		tablespace, in their order, the first holding whole tuples.  Returns
 *		the number their first one takes here: a ref of that log reads this
 *		one with that added to its segment.  For a parallel sort's leader,
 *		which emits every participant's rows (sort_shared.c).
 */
int
braid_vlog_add_foreign(BraidValueLog *log, int nsegs, const Oid *spcs,
					   const char *const *names, const uint64 *written)
{
	int			first = log->nsegs;

	Assert(log->on_device || log->nsegs == 0);
	if (nsegs == 0)
		return first;
	if (first + nsegs > BRAID_VLOG_MAX_SEGMENTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("braidsort value log has too many segments")));
	if (first + nsegs > log->segs_cap)
	{
		log->segs_cap = Max(first + nsegs, log->segs_cap * 2);
		log->segs = log->segs ?
			repalloc(log->segs, sizeof(BraidSpillFile *) * log->segs_cap) :
			MemoryContextAlloc(log->cxt, sizeof(BraidSpillFile *) * log->segs_cap);
	}
	if (log->whole_segs == NULL)
	{
		log->whole_segs = MemoryContextAllocZero(log->cxt, sizeof(bool) * BRAID_VLOG_MAX_SEGMENTS);
		for (int i = 0; i < first; i++)
			log->whole_segs[i] = (i == 0);
	}
	for (int i = 0; i < nsegs; i++)
	{
		/*
		 * (on an error, those opened so far are the log's: its reset closes
		 * them)
		 */
		log->segs[log->nsegs] = braid_spill_open_foreign(spcs[i], names[i], written[i], log->stats);
		log->whole_segs[log->nsegs] = (i == 0);
		log->nsegs++;
	}
	log->on_device = true;
	return first;
}

/*
 * braid_vlog_get
 *		The row a ref points at, in place: only for a log still in memory
 *		(rows on the device are packed, and are copied out through
 *		braid_vlog_locate).
 */
MinimalTuple
braid_vlog_get(BraidValueLog *log, uint64 ref)
{
	if (log->on_device)
		elog(ERROR, "braidsort: value log row read in place from the device");
	return (MinimalTuple) (log->mem + braid_vlog_ref_pos(ref));
}

/*
 * braid_vlog_ref_file
 *		The device segment holding the row a ref points at, to take a read
 *		grant of before braid_vlog_locate.  Only for a log on the device.
 */
BraidSpillFile *
braid_vlog_ref_file(BraidValueLog *log, uint64 ref)
{
	int			seg = braid_vlog_ref_seg(ref);

	Assert(log->on_device);
	if (seg >= log->nsegs)
		elog(ERROR, "braidsort: value log reference to missing segment %d", seg);
	return log->segs[seg];
}

/*
 * braid_vlog_locate
 *		Where the row a ref points at lives on the device, its length and
 *		form, for braid_vlog_row_copy; the row is touched only when the ref
 *		does not carry its length (under the caller's read grant of
 *		braid_vlog_ref_file).  The read is not counted (the caller copies the
 *		row and counts row->stored bytes).  Only for a log on the device.
 */
void
braid_vlog_locate(BraidValueLog *log, uint64 ref, BraidVlogRow *row)
{
	int			seg = braid_vlog_ref_seg(ref);

	row->file = braid_vlog_ref_file(log, ref);
	row->pos = braid_vlog_ref_pos(ref);
	row->src = row->file->base + row->pos;
	/* the memory's rows, written as they were, are whole; the others packed */
	row->packed = !seg_whole(log, seg);
	row->len = braid_vlog_ref_len(ref);
	if (row->len == 0)
		row->len = row->packed ? braid_vlog_packed_len((const uint8 *) row->src) :
			((MinimalTuple) row->src)->t_len;
	row->stored = row->packed ? braid_vlog_packed_size(row->len) : row->len;
}

/*
 * braid_vlog_reset
 *		Remove the log's segments and free its memory.
 */
void
braid_vlog_reset(BraidValueLog *log)
{
	for (int i = 0; i < log->nsegs; i++)
		braid_spill_close(log->segs[i]);
	if (log->segs)
		pfree(log->segs);
	if (log->mem)
		pfree(log->mem);
	if (log->scanbuf)
		pfree(log->scanbuf);
	if (log->formbuf)
		pfree(log->formbuf);
	if (log->whole_segs)
		pfree(log->whole_segs);
	braid_vlog_init(log, log->cxt, log->mem_limit, log->stats);
}

/* A scan reads a segment of the log this much at a time, ahead of its rows. */
#define BRAID_VLOG_SCAN_CHUNK ((size_t) 16384)

/*
 * scan_load
 *		Read a segment up to at least byte "need" (in whole chunks, up to
 *		its end) before the scan reads there: each block under a short read
 *		grant of the device (braid_spill_note_read), so that whatever the
 *		caller does with the rows holds none.
 */
static inline void
scan_load(BraidSpillFile *f, BraidVlogScan *scan, size_t need)
{
	size_t		upto;

	if (need <= scan->accounted)
		return;
	upto = Min((size_t) TYPEALIGN(BRAID_VLOG_SCAN_CHUNK, need), f->written);
	if (upto > scan->accounted)
	{
		braid_spill_note_read(f, scan->accounted, upto);
		scan->accounted = upto;
	}
}

/*
 * braid_vlog_scan_begin
 *		Start reading the log from its first row (a write-limited sort's
 *		selection pass).  The scan reads the log a block at a time, each
 *		under a read grant of its own (scan_load).
 */
void
braid_vlog_scan_begin(BraidValueLog *log, BraidVlogScan *scan)
{
	scan->seg = 0;
	scan->pos = 0;
	scan->accounted = 0;
	scan->copied = false;
}

/*
 * braid_vlog_scan_next
 *		The next row in the order rows were appended, and its ref (the one
 *		braid_vlog_append returned); NULL after the last.  A row in memory
 *		or in segment 0 is returned in place; a packed one unpacked into the
 *		log's buffer (scan->copied), valid until the next call.
 */
MinimalTuple
braid_vlog_scan_next(BraidValueLog *log, BraidVlogScan *scan, uint64 *ref)
{
	MinimalTuple tuple;

	scan->copied = false;
	if (!log->on_device)
	{
		if (scan->pos >= log->mem_used)
			return NULL;
		tuple = (MinimalTuple) (log->mem + scan->pos);
		*ref = braid_make_vlog_ref(0, scan->pos, tuple->t_len);
		scan->pos += MAXALIGN(tuple->t_len);
		return tuple;
	}
	for (;;)
	{
		BraidSpillFile *f;

		if (scan->seg >= log->nsegs)
			return NULL;
		f = log->segs[scan->seg];
		if (scan->pos < f->written)
		{
			const char *src = f->base + scan->pos;

			/* a row's length is in its first bytes */
			scan_load(f, scan, scan->pos + MAXIMUM_ALIGNOF);
			if (seg_whole(log, scan->seg))
			{
				tuple = (MinimalTuple) src;
				scan_load(f, scan, scan->pos + tuple->t_len);
				*ref = braid_make_vlog_ref(scan->seg, scan->pos, tuple->t_len);
				scan->pos += MAXALIGN(tuple->t_len);
			}
			else
			{
				uint32		len = braid_vlog_packed_len((const uint8 *) src);

				if (len > log->scanbuf_cap)
				{
					size_t		cap = Max((size_t) MAXALIGN(len), log->scanbuf_cap * 2);

					if (log->scanbuf)
						pfree(log->scanbuf);
					log->scanbuf = MemoryContextAllocHuge(log->cxt, cap);
					log->scanbuf_cap = cap;
				}
				*ref = braid_make_vlog_ref(scan->seg, scan->pos, len);
				scan_load(f, scan, scan->pos + braid_vlog_packed_size(len));
				scan->pos += braid_vlog_row_copy(src, true, len, log->scanbuf);
				tuple = (MinimalTuple) log->scanbuf;
				scan->copied = true;
			}
			return tuple;
		}
		braid_vlog_scan_end(log, scan);
		scan->seg++;
		scan->pos = 0;
		scan->accounted = 0;
	}
}

/*
 * braid_vlog_scan_end
 *		Count what the scan read of its current segment and has not counted.
 */
void
braid_vlog_scan_end(BraidValueLog *log, BraidVlogScan *scan)
{
	BraidSpillFile *f;
	size_t		upto;

	if (!log->on_device || scan->seg >= log->nsegs)
		return;
	f = log->segs[scan->seg];
	upto = Min(scan->pos, f->written);
	if (upto > scan->accounted)
		braid_spill_note_read(f, scan->accounted, upto);
	scan->accounted = upto;
}
