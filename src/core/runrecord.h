/*-------------------------------------------------------------------------
 *
 * runrecord.h
 *	  The records of an IndexMap run: one <key, ref> front-coded against
 *	  the record before it.
 *
 * A run (sort/runfile.c writes them, sort/runmerge.c reads and merges
 * them) is its sorted entries as records
 *
 *		[lengths][suffix][ref: high 32 bits][middle 16, same][low 16 - previous low 16]
 *
 * "shared" is how many leading bytes the key has in common with the
 * previous key of the run (sorted keys share many), the suffix is the
 * rest.  Both lengths share one byte, a nibble each; a nibble of 15 means
 * "15 plus a LEB128 varint that follows" (so short keys take one byte for
 * both, long ones at most what two varints would).  A ref is coded in
 * three parts whatever its layout (refs.h): the high 32 bits, the 16 bits
 * below them, and the low 16 bits -- in the heap layout block, line
 * pointer and tuple length.  The middle part carries a flag bit "low 16
 * bits the same as the previous record's", and only otherwise does the
 * zigzag difference from the previous record's low 16 bits follow: rows of
 * one length cost no byte for it.  At the sortbenchmark shape a record
 * takes about 13 bytes where PostgreSQL's external sort writes about 110 a
 * row.  The first record of a run is coded against an empty key and low
 * bits 0.
 *
 * Pure C, no PostgreSQL calls: used on the sort threads.
 *
 * src/core/runrecord.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_RUNRECORD_H
#define BRAID_RUNRECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/varint.h"

/* The most a record adds to its key suffix: lengths, two varints, a ref. */
#define BRAID_RUNREC_OVERHEAD_MAX (1 + 5 + 5 + 3 * 5)

/* The most a record's lengths take: the byte and two varints. */
#define BRAID_RUNREC_LENGTHS_MAX (1 + 5 + 5)

/* The most a record's ref takes: three varints. */
#define BRAID_RUNREC_REF_MAX (3 * 5)

/* braid_runrec_zigzag: a small signed difference as a small unsigned number. */
static inline uint32_t
braid_runrec_zigzag(int32_t v)
{
	return ((uint32_t) v << 1) ^ (uint32_t) (v >> 31);
}

/* braid_runrec_unzigzag: the inverse of braid_runrec_zigzag. */
static inline int32_t
braid_runrec_unzigzag(uint32_t v)
{
	return (int32_t) (v >> 1) ^ -(int32_t) (v & 1);
}

/* braid_runrec_shared: how many leading bytes key has in common with prev. */
static inline uint32_t
braid_runrec_shared(const uint8_t *prev, uint32_t prev_len, const uint8_t *key,
					uint32_t keylen)
{
	uint32_t	limit = keylen < prev_len ? keylen : prev_len;
	uint32_t	shared = 0;

	/* eight bytes at a time, then bytes */
	while (shared + 8 <= limit)
	{
		uint64_t	x,
					y;

		memcpy(&x, prev + shared, 8);
		memcpy(&y, key + shared, 8);
		if (x != y)
			break;
		shared += 8;
	}
	while (shared < limit && key[shared] == prev[shared])
		shared++;
	return shared;
}

/*
 * braid_runrec_size
 *		The size of the record front-coding key and ref after the record of
 *		prev (prev_len bytes, low ref bits prev_low); writes nothing.
 */
static inline size_t
braid_runrec_size(const uint8_t *prev, uint32_t prev_len, uint32_t prev_low,
				  const uint8_t *key, uint32_t keylen, uint64_t ref)
{
	uint32_t	shared = braid_runrec_shared(prev, prev_len, key, keylen);
	uint32_t	suffix = keylen - shared;
	size_t		n = 1 + suffix;

	if (shared >= 15)
		n += braid_varint_size(shared - 15);
	if (suffix >= 15)
		n += braid_varint_size(suffix - 15);
	n += braid_varint_size((uint32_t) (ref >> 32));
	n += braid_varint_size((uint32_t) ((ref >> 16) & 0xFFFF) << 1);
	if ((ref & 0xFFFF) != prev_low)
		n += braid_varint_size(braid_runrec_zigzag((int32_t) (ref & 0xFFFF) -
												   (int32_t) prev_low));
	return n;
}

/*
 * braid_runrec_put
 *		Front-code key and ref after the record of prev into out, which has
 *		room for keylen + BRAID_RUNREC_OVERHEAD_MAX bytes; returns the size
 *		(what braid_runrec_size gives).
 */
static inline size_t
braid_runrec_put(uint8_t *out, const uint8_t *prev, uint32_t prev_len,
				 uint32_t prev_low, const uint8_t *key, uint32_t keylen,
				 uint64_t ref)
{
	uint32_t	shared = braid_runrec_shared(prev, prev_len, key, keylen);
	uint32_t	suffix = keylen - shared;
	size_t		n = 0;

	out[n++] = (uint8_t) ((shared < 15 ? shared : 15) << 4 | (suffix < 15 ? suffix : 15));
	if (shared >= 15)
		n += braid_varint_put(out + n, shared - 15);
	if (suffix >= 15)
		n += braid_varint_put(out + n, suffix - 15);
	memcpy(out + n, key + shared, suffix);
	n += suffix;
	n += braid_varint_put(out + n, (uint32_t) (ref >> 32));
	if ((ref & 0xFFFF) == prev_low)
		n += braid_varint_put(out + n, ((uint32_t) ((ref >> 16) & 0xFFFF) << 1) | 1);
	else
	{
		n += braid_varint_put(out + n, (uint32_t) ((ref >> 16) & 0xFFFF) << 1);
		n += braid_varint_put(out + n, braid_runrec_zigzag((int32_t) (ref & 0xFFFF) -
														   (int32_t) prev_low));
	}
	return n;
}

/*
 * braid_runrec_lengths
 *		Read a record's lengths at p: the bytes its key shares with the
 *		previous record's and the suffix that follows.  Returns the bytes
 *		they take (at most BRAID_RUNREC_LENGTHS_MAX); the suffix comes next.
 */
static inline size_t
braid_runrec_lengths(const uint8_t *p, uint32_t *shared, uint32_t *suffix)
{
	size_t		n = 1;

	*shared = p[0] >> 4;
	*suffix = p[0] & 0x0F;
	if (*shared == 15)
	{
		n += braid_varint_get(p + n, shared);
		*shared += 15;
	}
	if (*suffix == 15)
	{
		n += braid_varint_get(p + n, suffix);
		*suffix += 15;
	}
	return n;
}

/*
 * braid_runrec_ref
 *		Read a record's ref at p (after its suffix), given the previous
 *		record's low 16 bits in *low, which it sets to this record's.
 *		Returns the bytes it takes (at most BRAID_RUNREC_REF_MAX).
 */
static inline size_t
braid_runrec_ref(const uint8_t *p, uint32_t *low, uint64_t *ref)
{
	uint32_t	hi,
				mid,
				lo;
	size_t		n = 0;

	n += braid_varint_get(p + n, &hi);
	n += braid_varint_get(p + n, &mid);
	if (mid & 1)
		lo = *low;				/* the same as the previous record's */
	else
	{
		n += braid_varint_get(p + n, &lo);
		lo = (uint32_t) ((int32_t) *low + braid_runrec_unzigzag(lo)) & 0xFFFF;
	}
	mid >>= 1;
	*low = lo;
	*ref = ((uint64_t) hi << 32) | ((uint64_t) mid << 16) | lo;
	return n;
}

#endif							/* BRAID_RUNRECORD_H */
