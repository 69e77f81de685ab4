/*-------------------------------------------------------------------------
 *
 * joinbucket.h
 *	  BraidJoin's entry, and the grouping of a partition's entries by hash
 *	  bucket that its in-memory table is made of (join_table.c).
 *
 * Pure C (no PostgreSQL calls, no globals: callable from any thread).
 * See joinbucket.c for the algorithm.
 *
 * src/core/joinbucket.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_JOINBUCKET_H
#define BRAID_JOINBUCKET_H

#include <stdint.h>

/*
 * An entry: the row's hash, its ref, and where the row is in its page when
 * the page stays pinned from the moment the row was read (JOIN_POS_* in
 * join_state.h: the fetch then reads the tuple without its line pointer),
 * else 0.  The partition logs hold entries as they are; the table groups
 * them by bucket.
 */
typedef struct BraidJoinEntry
{
	uint32_t	hash;
	uint32_t	pos;
	uint64_t	ref;
} BraidJoinEntry;

/*
 * braid_join_bucket_group
 *		Reorder entries[0..n) in place so that the entries of each bucket
 *		(hash & mask) are side by side, buckets in order; offsets[b] is then
 *		where bucket b starts, offsets[mask + 1] = n.  offsets has mask + 2
 *		elements; mask + 1 is a power of two.  No other memory is used.
 */
extern void braid_join_bucket_group(BraidJoinEntry *entries, uint32_t n, uint32_t mask,
									uint32_t *offsets);

#endif							/* BRAID_JOINBUCKET_H */
