/*-------------------------------------------------------------------------
 *
 * partlog.h
 *	  A partition log: the entries of one input's partition of a BraidJoin,
 *	  appended in memory and written to the spill device in blocks.
 *
 * src/io/partlog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PARTLOG_H
#define BRAID_PARTLOG_H

#include "postgres.h"

#include "io/device.h"

typedef struct BraidPartLog
{
	MemoryContext cxt;
	BraidDeviceStats *stats;	/* where its device traffic is counted */
	size_t		entry_bytes;	/* every entry's size */
	size_t		first_segment;	/* bytes the first segment reserves */
	char	   *stage;			/* entries not yet written */
	size_t		staged;
	size_t		stage_cap;
	BraidSpillFile **segs;		/* segments on the device, in order */
	int			nsegs;
	int			segs_cap;
	uint64		count;			/* entries appended */
	bool		finished;
} BraidPartLog;

/* A read of a log from its first entry. */
typedef struct BraidPartScan
{
	int			seg;			/* segment (a log without any: the stage) */
	size_t		pos;			/* byte offset in it */
} BraidPartScan;

extern void braid_partlog_init(BraidPartLog *log, MemoryContext cxt, size_t entry_bytes,
							   size_t expected_bytes, BraidDeviceStats *stats);
extern void braid_partlog_append(BraidPartLog *log, const void *entry);
extern void braid_partlog_finish(BraidPartLog *log);
extern void braid_partlog_scan_begin(BraidPartLog *log, BraidPartScan *scan);
extern int	braid_partlog_read(BraidPartLog *log, BraidPartScan *scan, char *buf, int max);
extern void braid_partlog_reset(BraidPartLog *log);
extern void braid_partlog_finish_on_device(BraidPartLog *log);
extern void braid_partlog_disown(BraidPartLog *log);
extern void braid_partlog_adopt(BraidPartLog *log, MemoryContext cxt, size_t entry_bytes,
								BraidSpillFile **segs, int nsegs, BraidDeviceStats *stats);

#endif							/* BRAID_PARTLOG_H */
