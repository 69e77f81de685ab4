/*-------------------------------------------------------------------------
 *
 * vlogrow.h
 *	  The packed form of a row in a value log's device segments, and the
 *	  segments' sizes.
 *
 * A value log (valuelog.c) keeps rows as PostgreSQL's minimal tuples: a
 * 4-byte length, 6 bytes of padding, then the tuple's header fields and
 * data, each row MAXALIGNed.  Rows in memory stay that way, to be read in
 * place.  On the spill device every byte written is paid for, so a row
 * there is packed: its length minus those first 10 bytes as a LEB128
 * varint (1 byte for rows under 138 bytes, 2 under 16 kB), then the tuple from
 * t_infomask2 on, unaligned -- PostgreSQL's own tapes drop the same 10
 * bytes (MINIMAL_TUPLE_DATA_OFFSET) and write a 4-byte length instead.  A
 * row of 100 bytes takes 91 bytes packed against 104.  Whoever reads a
 * packed row copies it out (unpacks it) into aligned memory, which readers
 * of the device do anyway so as to hold no read grant of it.
 *
 * The rows a log writes to the device go to segments (spill files, each
 * reserved whole when created) of 1 MB, 2 MB, ... doubling to 64 MB, or
 * one row if larger: a small log reserves little of a shared device.  The
 * planner's check of the device's free space counts these reservations
 * (braid_vlog_reserved_bytes), not only the bytes written.
 *
 * Pure C, no PostgreSQL calls: the unpacking runs on the device's reader
 * threads (sort_vlog.c).
 *
 * src/core/vlogrow.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_VLOGROW_H
#define BRAID_VLOGROW_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/varint.h"

/*
 * The leading bytes of a minimal tuple a packed row leaves out: its t_len
 * and padding (MINIMAL_TUPLE_DATA_OFFSET, checked in valuelog.c).
 */
#define BRAID_VLOG_ROW_SKIP		10

/* the most of a log kept in memory, whatever the budget */
#define BRAID_VLOG_MAX_MEMORY	((size_t) 1024 * 1024 * 1024)

/* device segments: the first, the largest, and the doublings between */
#define BRAID_VLOG_FIRST_SEGMENT ((size_t) 1024 * 1024)
#define BRAID_VLOG_SEGMENT		((size_t) 64 * 1024 * 1024)
#define BRAID_VLOG_DOUBLINGS	6

/*
 * braid_vlog_segment_size
 *		The size of the n-th segment a log writes packed rows to (n >= 1;
 *		segment 0 is the memory's rows, written at their size) when its next
 *		row takes "need" bytes.
 */
static inline size_t
braid_vlog_segment_size(uint32_t n, size_t need)
{
	uint32_t	doublings = n - 1 < BRAID_VLOG_DOUBLINGS ? n - 1 : BRAID_VLOG_DOUBLINGS;
	size_t		size = BRAID_VLOG_FIRST_SEGMENT << doublings;

	return need > size ? need : size;
}

/*
 * braid_vlog_reserved_bytes
 *		The device space that segments 1 and later reserve to hold "bytes"
 *		of packed rows (rows no larger than a segment): the segments up to
 *		the one they end in, whole.
 */
static inline double
braid_vlog_reserved_bytes(double bytes)
{
	double		reserved = 0;
	double		full;

	if (bytes <= 0)
		return 0;
	for (uint32_t n = 1; n <= BRAID_VLOG_DOUBLINGS; n++)
	{
		reserved += (double) braid_vlog_segment_size(n, 0);
		if (reserved >= bytes)
			return reserved;
	}
	/* 64 MB segments from here on */
	full = (double) BRAID_VLOG_SEGMENT;
	return reserved + full * ceil((bytes - reserved) / full);
}

/* braid_vlog_packed_size: bytes a row of t_len bytes takes packed. */
static inline size_t
braid_vlog_packed_size(uint32_t t_len)
{
	uint32_t	body = t_len - BRAID_VLOG_ROW_SKIP;

	return braid_varint_size(body) + body;
}

/*
 * braid_vlog_pack_header
 *		Write the varint of a row of t_len bytes to hdr (at least 5 bytes);
 *		returns its size.  The row's bytes from BRAID_VLOG_ROW_SKIP on
 *		follow it in the log.
 */
static inline size_t
braid_vlog_pack_header(uint8_t *hdr, uint32_t t_len)
{
	return braid_varint_put(hdr, t_len - BRAID_VLOG_ROW_SKIP);
}

/*
 * braid_vlog_packed_len
 *		The t_len of the packed row at src, read from its varint.
 */
static inline uint32_t
braid_vlog_packed_len(const uint8_t *src)
{
	uint32_t	body;

	(void) braid_varint_get(src, &body);
	return body + BRAID_VLOG_ROW_SKIP;
}

/*
 * braid_vlog_row_copy
 *		Copy the row at src (t_len bytes once unpacked) to dst, a minimal
 *		tuple's memory of at least t_len bytes: as it is, or unpacked (its
 *		length and padding rebuilt in front of the bytes stored).  Returns
 *		the bytes read at src.
 */
static inline size_t
braid_vlog_row_copy(const void *src, bool packed, uint32_t t_len, void *dst)
{
	const uint8_t *s = (const uint8_t *) src;
	uint8_t    *d = (uint8_t *) dst;
	size_t		hdr;

	if (!packed)
	{
		memcpy(d, s, t_len);
		return t_len;
	}
	hdr = braid_varint_size(t_len - BRAID_VLOG_ROW_SKIP);
	memcpy(d, &t_len, sizeof(t_len));
	memset(d + sizeof(t_len), 0, BRAID_VLOG_ROW_SKIP - sizeof(t_len));
	memcpy(d + BRAID_VLOG_ROW_SKIP, s + hdr, t_len - BRAID_VLOG_ROW_SKIP);
	return hdr + t_len - BRAID_VLOG_ROW_SKIP;
}

#endif							/* BRAID_VLOGROW_H */
