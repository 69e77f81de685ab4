/*-------------------------------------------------------------------------
 *
 * indexmap.h
 *	  IndexMap entries and their in-memory sort.
 *
 * An IndexMap is an array of fixed-size entries
 *
 *		[ normalized key prefix: keylen bytes ][ ref: 8 bytes ][ padding ]
 *
 * sorted by memcmp() of the key prefix.  The ref is opaque here: the
 * executor packs a heap TID and the tuple length into it (see refs.h).
 * When a key is longer than its prefix, the caller supplies a tie-break
 * callback that compares the full keys of two entries whose prefixes are
 * equal.
 *
 * Pure C: no PostgreSQL calls, no allocation, safe to run in threads (the
 * tie-break callback must be too).
 *
 * src/core/indexmap.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_INDEXMAP_H
#define BRAID_INDEXMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Largest entry the sort handles (it keeps two entries on its stack). */
#define BRAID_MAX_STRIDE	256
#define BRAID_REF_BYTES		8

/*
 * Tie-break callback: compare the full keys of two entries whose keylen-byte
 * prefixes are equal.  Returns <0, 0 or >0 like memcmp.
 */
typedef int (*BraidTieBreak) (const uint8_t *a, const uint8_t *b, void *arg);

typedef struct BraidSortSpec
{
	uint32_t	keylen;			/* bytes of key prefix per entry */
	uint32_t	stride;			/* bytes per entry, >= keylen + 8 */
	BraidTieBreak tiebreak;		/* NULL if equal prefixes mean equal keys */
	void	   *tiebreak_arg;

	/*
	 * Called now and then (once per top-level bucket) if not NULL; a backend
	 * passes a function that checks for query cancel, which may not return.
	 */
	void		(*interrupt_check) (void *arg);
	void	   *interrupt_arg;
} BraidSortSpec;

/* braid_entry_ref: the 8-byte ref stored after an entry's key prefix. */
static inline uint64_t
braid_entry_ref(const uint8_t *entry, uint32_t keylen)
{
	uint64_t	ref;

	memcpy(&ref, entry + keylen, sizeof(ref));
	return ref;
}

/* braid_entry_set_ref: store the ref of an entry. */
static inline void
braid_entry_set_ref(uint8_t *entry, uint32_t keylen, uint64_t ref)
{
	memcpy(entry + keylen, &ref, sizeof(ref));
}

/* Below this many entries a sort stays on one thread. */
#define BRAID_PARALLEL_MIN_ENTRIES 65536

extern void braid_indexmap_sort(uint8_t *entries, size_t n,
								const BraidSortSpec *spec);
extern void braid_indexmap_sort_parallel(uint8_t *entries, size_t n,
										 const BraidSortSpec *spec, int nthreads);
extern int	braid_entry_compare(const uint8_t *a, const uint8_t *b,
								const BraidSortSpec *spec);

#endif							/* BRAID_INDEXMAP_H */
