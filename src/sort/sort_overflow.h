/*-------------------------------------------------------------------------
 *
 * sort_overflow.h
 *	  The overflow store: full keys of IndexMap entries whose prefix is not
 *	  the whole key (sort_overflow.c).
 *
 * src/sort/sort_overflow.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SORT_OVERFLOW_H
#define BRAID_SORT_OVERFLOW_H

#include "postgres.h"

/*
 * Full encodings of keys longer than the entry prefix, found by TID, or
 * appended and located by the entry (collated keys).  Open addressing;
 * slot_tid 0 means empty (stored TIDs are offset by one).
 */
typedef struct BraidOverflow
{
	MemoryContext cxt;			/* where it allocates (the sort's) */
	uint64	   *slot_tid;
	uint64	   *slot_off;
	uint32	   *slot_len;
	size_t		nslots;			/* power of two, or 0 */
	size_t		nused;
	uint8	   *arena;
	size_t		arena_used;
	size_t		arena_cap;
	size_t		limit;			/* bytes (slots and arena) its growth stops at
								 * while keys still fit, or 0: none */
} BraidOverflow;

extern void braid_ovf_init(BraidOverflow *ovf, MemoryContext cxt);
extern size_t braid_ovf_bytes(const BraidOverflow *ovf);
extern size_t braid_ovf_bytes_after(const BraidOverflow *ovf, size_t len, bool with_slot);
extern void braid_ovf_put(BraidOverflow *ovf, uint64 ref, const uint8 *key, size_t len);
extern uint64 braid_ovf_append(BraidOverflow *ovf, const uint8 *key, size_t len);
extern const uint8 *braid_ovf_get(const BraidOverflow *ovf, uint64 ref, uint32 *len);
extern const uint8 *braid_ovf_at(const BraidOverflow *ovf, uint64 loc, uint32 *len);
extern void braid_ovf_free(BraidOverflow *ovf);

#endif							/* BRAID_SORT_OVERFLOW_H */
