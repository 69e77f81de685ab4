/*-------------------------------------------------------------------------
 *
 * valuelog.h
 *	  The value log: input rows of a Sort or a BraidJoin that cannot be
 *	  refetched by TID.
 *
 * src/io/valuelog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_VALUELOG_H
#define BRAID_VALUELOG_H

#include "postgres.h"

#include "access/htup_details.h"

#include "io/device.h"
#include "core/refs.h"
#include "core/vlogrow.h"

typedef struct BraidValueLog
{
	MemoryContext cxt;
	size_t		mem_limit;		/* bytes kept in memory before spilling */
	char	   *mem;			/* segment 0 while it is in memory */
	size_t		mem_used;
	size_t		mem_cap;
	bool		on_device;
	BraidSpillFile **segs;		/* segments on the spill device */
	int			nsegs;
	int			segs_cap;
	size_t		seg_used;		/* bytes written to the last segment */
	uint64		bytes;			/* bytes appended in all, as stored */
	char	   *scanbuf;		/* a scan's unpacked row */
	size_t		scanbuf_cap;
	char	   *formbuf;		/* a row formed for the device */
	size_t		formbuf_cap;
	bool	   *whole_segs;		/* which segments hold whole tuples, once
								 * other processes' logs were added
								 * (braid_vlog_add_foreign); NULL: segment 0
								 * only */
	BraidDeviceStats *stats;
} BraidValueLog;

/* A read of the log from its start, in the order rows were appended. */
typedef struct BraidVlogScan
{
	int			seg;
	size_t		pos;
	size_t		accounted;		/* bytes of the segment counted as read */
	bool		copied;			/* the last row returned is a copy */
} BraidVlogScan;

/*
 * A row of a log on the device, found by braid_vlog_locate: copy it out
 * with braid_vlog_row_copy (vlogrow.h) and count "stored" bytes read.
 */
typedef struct BraidVlogRow
{
	const char *src;			/* its bytes in the mapping */
	BraidSpillFile *file;
	size_t		pos;			/* offset of src in file */
	uint32		len;			/* its t_len, once copied out */
	uint32		stored;			/* bytes it takes in the log */
	bool		packed;			/* stored packed (vlogrow.h) */
} BraidVlogRow;

extern void braid_vlog_init(BraidValueLog *log, MemoryContext cxt, size_t mem_limit,
							BraidDeviceStats *stats);
extern uint64 braid_vlog_append(BraidValueLog *log, MinimalTuple tuple);
extern uint64 braid_vlog_append_heap(BraidValueLog *log, HeapTuple tuple);
extern uint64 braid_vlog_append_values(BraidValueLog *log, TupleDesc desc,
									   Datum *values, bool *isnull, uint32 *t_len);
extern void braid_vlog_finish(BraidValueLog *log);
extern void braid_vlog_to_device(BraidValueLog *log);
extern int	braid_vlog_add_foreign(BraidValueLog *log, int nsegs, const Oid *spcs,
								   const char *const *names, const uint64 *written);
extern MinimalTuple braid_vlog_get(BraidValueLog *log, uint64 ref);
extern BraidSpillFile *braid_vlog_ref_file(BraidValueLog *log, uint64 ref);
extern void braid_vlog_locate(BraidValueLog *log, uint64 ref, BraidVlogRow *row);
extern void braid_vlog_reset(BraidValueLog *log);
extern void braid_vlog_scan_begin(BraidValueLog *log, BraidVlogScan *scan);
extern MinimalTuple braid_vlog_scan_next(BraidValueLog *log, BraidVlogScan *scan,
										 uint64 *ref);
extern void braid_vlog_scan_end(BraidValueLog *log, BraidVlogScan *scan);

#endif							/* BRAID_VALUELOG_H */
