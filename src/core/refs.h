/*-------------------------------------------------------------------------
 *
 * refs.h
 *	  The ref: an IndexMap entry's 8-byte pointer to its row.
 *
 * Every IndexMap entry ends in a ref saying where the whole row is, so
 * that rows are gathered late.  Two layouts, by the node's gather source:
 *
 *	heap TID	bits 63..32 block number, 31..16 line pointer offset,
 *				14..0 tuple length (the gather sizes its batches by it)
 *	value log	bits 63..48 segment, 47..16 offset in the segment,
 *				14..0 row length, 0 when it is 32 kB or more (the reader
 *				then reads the length from the row)
 *
 * Bit 15 of either is the "key truncated" flag while the entry is in the
 * IndexMap: its full key is kept aside (sort/sort_overflow.c), and comparisons of
 * equal prefixes must look it up.  It is cleared before a ref leaves the
 * IndexMap (runs, merged refs, the gather).
 *
 * src/core/refs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_REFS_H
#define BRAID_REFS_H

#include <stddef.h>
#include <stdint.h>

#define BRAID_REF_LEN_MASK		UINT64_C(0x7FFF)
#define BRAID_REF_TRUNCATED		UINT64_C(0x8000)

/* braid_make_ref: a heap TID ref. */
static inline uint64_t
braid_make_ref(uint32_t blk, uint16_t off, uint32_t len)
{
	return ((uint64_t) blk << 32) | ((uint64_t) off << 16) | (uint64_t) len;
}

/* braid_ref_block: the block number of a heap TID ref. */
static inline uint32_t
braid_ref_block(uint64_t ref)
{
	return (uint32_t) (ref >> 32);
}

/* braid_ref_offset: the line pointer offset of a heap TID ref. */
static inline uint16_t
braid_ref_offset(uint64_t ref)
{
	return (uint16_t) ((ref >> 16) & 0xFFFF);
}

/* braid_ref_len: the tuple length of a heap TID ref. */
static inline uint32_t
braid_ref_len(uint64_t ref)
{
	return (uint32_t) (ref & BRAID_REF_LEN_MASK);
}

/* The largest offset in a segment that a value log ref can hold. */
#define BRAID_VLOG_MAX_SEGMENT	UINT64_C(0xFFFFFFFF)

/* braid_make_vlog_ref: a value log ref (len 0 when it does not fit). */
static inline uint64_t
braid_make_vlog_ref(int seg, size_t pos, size_t len)
{
	return ((uint64_t) seg << 48) | ((uint64_t) pos << 16) |
		(len <= BRAID_REF_LEN_MASK ? (uint64_t) len : 0);
}

/* braid_vlog_ref_seg: the segment of a value log ref. */
static inline int
braid_vlog_ref_seg(uint64_t ref)
{
	return (int) (ref >> 48);
}

/* braid_vlog_ref_pos: the offset in its segment of a value log ref. */
static inline size_t
braid_vlog_ref_pos(uint64_t ref)
{
	return (size_t) ((ref >> 16) & BRAID_VLOG_MAX_SEGMENT);
}

/* braid_vlog_ref_len: the row length of a value log ref, 0 if unknown. */
static inline uint32_t
braid_vlog_ref_len(uint64_t ref)
{
	return (uint32_t) (ref & BRAID_REF_LEN_MASK);
}

#endif							/* BRAID_REFS_H */
