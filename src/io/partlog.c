/*-------------------------------------------------------------------------
 *
 * partlog.c
 *	  A partition log: the entries of one input's partition of a BraidJoin,
 *	  appended in memory and written to the spill device in blocks.
 *
 * A BraidJoin writes one log per partition and input it materializes, all
 * of them filling at once while an input is scanned: 2(k-1) logs.  So each
 * keeps only a small stage (BRAID_PARTLOG_STAGE bytes) and writes it to its
 * current segment directly (braid_spill_write_direct), not through the
 * spill file's own 1 MB staging buffer.  Segments are spill files reserved
 * at creation, the first at about the partition's expected size, later
 * ones doubling up to BRAID_PARTLOG_MAX_SEGMENT: a misestimate costs more
 * segments, never a failure.  Entries whose partition never grows past the
 * stage never reach the device at all.
 *
 * Entries are read back in the order appended, copied out a chunk at a
 * time under a read grant of the device (counted as read, their emulated
 * delay paid), so that the caller holds no grant while it uses them.
 *
 * src/io/partlog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "io/partlog.h"

#define BRAID_PARTLOG_STAGE			((size_t) 32 * 1024)
#define BRAID_PARTLOG_MIN_SEGMENT	((size_t) 256 * 1024)
#define BRAID_PARTLOG_MAX_SEGMENT	((size_t) 64 * 1024 * 1024)

/*
 * braid_partlog_init
 *		An empty log of entries of entry_bytes, expected to reach about
 *		expected_bytes (the first segment's size).
 */
void
braid_partlog_init(BraidPartLog *log, MemoryContext cxt, size_t entry_bytes,
				   size_t expected_bytes, BraidDeviceStats *stats)
{
	memset(log, 0, sizeof(*log));
	log->cxt = cxt;
	log->stats = stats;
	log->entry_bytes = entry_bytes;
	log->first_segment = TYPEALIGN(65536, Min(Max(expected_bytes + expected_bytes / 8,
												  BRAID_PARTLOG_MIN_SEGMENT),
											  BRAID_PARTLOG_MAX_SEGMENT));
	log->stage_cap = (BRAID_PARTLOG_STAGE / entry_bytes) * entry_bytes;
}

/* add_segment: start the next segment, big enough for one stage at least. */
static void
add_segment(BraidPartLog *log)
{
	size_t		size;

	if (log->nsegs > 0)
		braid_spill_finish(log->segs[log->nsegs - 1]);
	if (log->nsegs == log->segs_cap)
	{
		log->segs_cap = Max(log->segs_cap * 2, 8);
		log->segs = log->segs ?
			repalloc(log->segs, sizeof(BraidSpillFile *) * log->segs_cap) :
			MemoryContextAlloc(log->cxt, sizeof(BraidSpillFile *) * log->segs_cap);
	}
	size = Min(log->first_segment << Min(log->nsegs, 8), BRAID_PARTLOG_MAX_SEGMENT);
	size = Max(size, log->stage_cap);
	log->segs[log->nsegs++] = braid_spill_create(size, log->stats);
}

/* flush: write the stage to the current segment (a new one if full). */
static void
flush(BraidPartLog *log)
{
	BraidSpillFile *f;

	if (log->staged == 0)
		return;
	if (log->nsegs == 0 ||
		log->segs[log->nsegs - 1]->written + log->staged > log->segs[log->nsegs - 1]->size)
		add_segment(log);
	f = log->segs[log->nsegs - 1];
	braid_spill_write_direct(f, log->stage, log->staged);
	log->staged = 0;
}

/*
 * braid_partlog_append
 *		Append one entry (entry_bytes bytes).
 */
void
braid_partlog_append(BraidPartLog *log, const void *entry)
{
	Assert(!log->finished);
	if (log->stage == NULL)
		log->stage = MemoryContextAlloc(log->cxt, log->stage_cap);
	if (log->staged + log->entry_bytes > log->stage_cap)
		flush(log);
	memcpy(log->stage + log->staged, entry, log->entry_bytes);
	log->staged += log->entry_bytes;
	log->count++;
}

/*
 * braid_partlog_finish
 *		No more appends: a log on the device writes its stage and persists
 *		its last segment; a log that never left its stage keeps it.
 */
void
braid_partlog_finish(BraidPartLog *log)
{
	if (log->finished)
		return;
	if (log->nsegs > 0)
	{
		flush(log);
		braid_spill_finish(log->segs[log->nsegs - 1]);
		if (log->stage)
			pfree(log->stage);
		log->stage = NULL;
	}
	log->finished = true;
}

/*
 * braid_partlog_scan_begin
 *		Start reading a finished log from its first entry (braid_partlog_read).
 */
void
braid_partlog_scan_begin(BraidPartLog *log, BraidPartScan *scan)
{
	Assert(log->finished);
	scan->seg = 0;
	scan->pos = 0;
}

/*
 * braid_partlog_read
 *		Copy up to max entries from the scan's position into buf; returns
 *		how many (0 after the last).  Entries on the device are copied
 *		under a read grant of it, released before returning: the caller may
 *		run any code on them.
 */
int
braid_partlog_read(BraidPartLog *log, BraidPartScan *scan, char *buf, int max)
{
	int			n = 0;

	while (n < max)
	{
		BraidSpillFile *f;
		size_t		avail;
		size_t		take;
		BraidReadScope scope = {0};

		if (log->nsegs == 0)
		{
			/* a log that stayed in its stage */
			avail = (log->staged - Min(scan->pos, log->staged)) / log->entry_bytes;
			take = Min(avail, (size_t) (max - n));
			if (take == 0)
				break;
			memcpy(buf + (size_t) n * log->entry_bytes, log->stage + scan->pos,
				   take * log->entry_bytes);
			scan->pos += take * log->entry_bytes;
			n += (int) take;
			continue;
		}
		if (scan->seg >= log->nsegs)
			break;
		f = log->segs[scan->seg];
		avail = (f->written - Min(scan->pos, f->written)) / log->entry_bytes;
		if (avail == 0)
		{
			scan->seg++;
			scan->pos = 0;
			continue;
		}
		take = Min(avail, (size_t) (max - n));
		braid_read_scope_add(&scope, f);
		braid_read_scope_begin(&scope);
		braid_spill_note_read(f, scan->pos, scan->pos + take * log->entry_bytes);
		memcpy(buf + (size_t) n * log->entry_bytes, f->base + scan->pos,
			   take * log->entry_bytes);
		braid_read_scope_end(&scope);
		scan->pos += take * log->entry_bytes;
		n += (int) take;
	}
	return n;
}

/*
 * braid_partlog_reset
 *		Remove the log's segments and free its memory; the log is empty and
 *		can be appended to again.
 */
void
braid_partlog_reset(BraidPartLog *log)
{
	for (int i = 0; i < log->nsegs; i++)
		braid_spill_close(log->segs[i]);
	if (log->segs)
		pfree(log->segs);
	if (log->stage)
		pfree(log->stage);
	log->segs = NULL;
	log->nsegs = log->segs_cap = 0;
	log->stage = NULL;
	log->staged = 0;
	log->count = 0;
	log->finished = false;
}

/*
 * braid_partlog_finish_on_device
 *		Finish a log with every entry on the device, even one that never left
 *		its stage: for a log another process reads (the processes of a
 *		parallel BraidJoin, join_shared.c).
 */
void
braid_partlog_finish_on_device(BraidPartLog *log)
{
	Assert(!log->finished);
	if (log->nsegs == 0 && log->staged > 0)
		flush(log);
	braid_partlog_finish(log);
}

/*
 * braid_partlog_disown
 *		Its segments are another process's to remove now
 *		(braid_spill_disown): forget them; the log is empty.
 */
void
braid_partlog_disown(BraidPartLog *log)
{
	for (int i = 0; i < log->nsegs; i++)
	{
		braid_spill_disown(log->segs[i]);
		log->segs[i] = NULL;
	}
	log->nsegs = 0;
	log->count = 0;
	log->staged = 0;
}

/*
 * braid_partlog_adopt
 *		A finished log of segments another process wrote, to read
 *		(braid_spill_open_foreign): nsegs of them, taken over by the log,
 *		whose reset unmaps them.
 */
void
braid_partlog_adopt(BraidPartLog *log, MemoryContext cxt, size_t entry_bytes,
					BraidSpillFile **segs, int nsegs, BraidDeviceStats *stats)
{
	memset(log, 0, sizeof(*log));
	log->cxt = cxt;
	log->stats = stats;
	log->entry_bytes = entry_bytes;
	log->segs = MemoryContextAlloc(cxt, sizeof(BraidSpillFile *) * Max(nsegs, 1));
	log->segs_cap = Max(nsegs, 1);
	for (int i = 0; i < nsegs; i++)
	{
		log->segs[i] = segs[i];
		log->count += segs[i]->written / entry_bytes;
	}
	log->nsegs = nsegs;
	log->finished = true;
}
