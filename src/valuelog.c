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
 * BRAID_VLOG_SEGMENT (or one row, if larger): a segment's space is reserved
 * when it is created, so small logs reserve little of a shared device.
 * Rows are read back from the mapping (sort_vlog.c copies them out a window at a
 * time, under a read grant of the device).
 *
 * A ref (the IndexMap entry's 8-byte payload, laid out in refs.h) holds
 * the segment number, the byte offset and the row's length if it is under
 * 32 kB: whoever reads rows back can lay them out without touching them
 * first.
 *
 * src/valuelog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "valuelog.h"

#define BRAID_VLOG_FIRST_SEGMENT ((size_t) 4 * 1024 * 1024)
#define BRAID_VLOG_SEGMENT ((size_t) 64 * 1024 * 1024)
#define BRAID_VLOG_MAX_MEMORY ((size_t) 1024 * 1024 * 1024)
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
 * braid_vlog_append
 *		Append a row; returns its ref.
 */
uint64
braid_vlog_append(BraidValueLog *log, MinimalTuple tuple)
{
	size_t		len = tuple->t_len;
	size_t		alen = MAXALIGN(len);
	static const char zeros[MAXIMUM_ALIGNOF] = {0};
	uint64		ref;

	log->bytes += alen;
	if (!log->on_device)
	{
		if (log->mem_used + alen <= log->mem_limit)
		{
			if (log->mem_used + alen > log->mem_cap)
			{
				size_t		cap = Max(log->mem_cap * 2, (size_t) 65536);

				cap = Min(Max(cap, log->mem_used + alen), log->mem_limit);
				log->mem = log->mem ? repalloc_huge(log->mem, cap) :
					MemoryContextAllocHuge(log->cxt, cap);
				log->mem_cap = cap;
			}
			memcpy(log->mem + log->mem_used, tuple, len);
			ref = braid_make_vlog_ref(0, log->mem_used, len);
			log->mem_used += alen;
			return ref;
		}
		move_to_device(log);
	}

	if (log->nsegs == 0 || log->seg_used + alen > log->segs[log->nsegs - 1]->size)
		add_segment(log, Max(alen, Min(BRAID_VLOG_FIRST_SEGMENT << Min(log->nsegs, 4),
									  BRAID_VLOG_SEGMENT)));
	braid_spill_write(log->segs[log->nsegs - 1], tuple, len);
	if (alen > len)
		braid_spill_write(log->segs[log->nsegs - 1], zeros, alen - len);
	ref = braid_make_vlog_ref(log->nsegs - 1, log->seg_used, len);
	log->seg_used += alen;
	return ref;
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
 * braid_vlog_get
 *		The row a ref points at, in place (memory or mapping).
 */
MinimalTuple
braid_vlog_get(BraidValueLog *log, uint64 ref)
{
	int			seg = braid_vlog_ref_seg(ref);
	size_t		pos = braid_vlog_ref_pos(ref);
	BraidSpillFile *f;
	MinimalTuple tuple;

	if (!log->on_device)
		return (MinimalTuple) (log->mem + pos);
	if (seg >= log->nsegs)
		elog(ERROR, "braidsort: value log reference to missing segment %d", seg);
	f = log->segs[seg];
	tuple = (MinimalTuple) (f->base + pos);
	braid_spill_note_read(f, pos, pos + tuple->t_len);
	return tuple;
}

/*
 * braid_vlog_locate
 *		Where the row a ref points at lives on the device: its segment and
 *		offset, without counting the read (the caller copies it and counts).
 *		Only for a log on the device.
 */
MinimalTuple
braid_vlog_locate(BraidValueLog *log, uint64 ref, BraidSpillFile **file, size_t *pos)
{
	int			seg = braid_vlog_ref_seg(ref);

	Assert(log->on_device);
	if (seg >= log->nsegs)
		elog(ERROR, "braidsort: value log reference to missing segment %d", seg);
	*file = log->segs[seg];
	*pos = braid_vlog_ref_pos(ref);
	return (MinimalTuple) ((*file)->base + *pos);
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
	braid_vlog_init(log, log->cxt, log->mem_limit, log->stats);
}

/* Reads of a scan are counted (and their emulated delay paid) this much at a time. */
#define BRAID_VLOG_SCAN_CHUNK ((size_t) 65536)

/*
 * braid_vlog_scan_begin
 *		Start reading the log from its first row (a write-limited sort's
 *		selection pass).  The caller holds a read grant of its device.
 */
void
braid_vlog_scan_begin(BraidValueLog *log, BraidVlogScan *scan)
{
	scan->seg = 0;
	scan->pos = 0;
	scan->accounted = 0;
}

/*
 * braid_vlog_scan_next
 *		The next row in the order rows were appended, in place, and its ref
 *		(the one braid_vlog_append returned); NULL after the last.
 */
MinimalTuple
braid_vlog_scan_next(BraidValueLog *log, BraidVlogScan *scan, uint64 *ref)
{
	MinimalTuple tuple;

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
			tuple = (MinimalTuple) (f->base + scan->pos);
			*ref = braid_make_vlog_ref(scan->seg, scan->pos, tuple->t_len);
			scan->pos += MAXALIGN(tuple->t_len);
			if (scan->pos - scan->accounted >= BRAID_VLOG_SCAN_CHUNK)
			{
				size_t		upto = Min(scan->pos, f->written);

				braid_spill_note_read(f, scan->accounted, upto);
				scan->accounted = upto;
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
