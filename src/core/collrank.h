/*-------------------------------------------------------------------------
 *
 * collrank.h
 *	  Rank prefixes: keys under a libc collation made radix-sortable within
 *	  one sort.
 *
 * See collrank.c for the idea.  The caller hands over the entries of one
 * sort (prefix, then the 8-byte place of the full key and the ref, as
 * sort/sort_map.c lays them out), a way to reach each entry's full key in the
 * collated layout of keys.c, and an allocator; braid_rank_prefixes()
 * rewrites the prefixes when that pays, and says how many collated keys it
 * ranked.
 *
 * Pure C and libc (strcoll_l): no PostgreSQL calls, safe to unit-test.
 *
 * src/core/collrank.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_COLLRANK_H
#define BRAID_COLLRANK_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a head's or segment's length in the layout (keys.h's
 * BRAID_COLLATED_LENGTH, checked in sort/sort_map.c). */
#define BRAID_RANK_LAYOUT_LENGTH	4

/* Fewer entries than this are sorted as they are (ranking would not pay). */
#define BRAID_RANK_MIN_ENTRIES	1024

/*
 * A sort's dictionaries take at most this fraction of its budget, beside
 * its full IndexMap (sort/sort_map.c sets the cap, costmodel.c counts it).
 */
#define BRAID_RANK_MEMORY_SHARE 4

/*
 * From this many distinct strings a key's strings are put in order by
 * their strxfrm_l() sort keys, checked by the collation (collrank.c's
 * sort_by_xfrm); fewer are sorted by comparisons.  The presort (a
 * transform and a check a string, on one thread) costs about as much as
 * BRAID_RANK_PRESORT_COMPARES comparisons a string: where the comparison
 * sort's log2(d) a string, shared by its threads, come to less, the
 * strings are compared.
 */
#define BRAID_RANK_PRESORT_MIN	256
#define BRAID_RANK_PRESORT_COMPARES 3.4

/* braid_rank_presorts: are d strings presorted, with "threads" to sort? */
static inline bool
braid_rank_presorts(size_t d, int threads)
{
	double		log2d = 0;

	if (d < BRAID_RANK_PRESORT_MIN)
		return false;
	for (size_t v = d; v > 1; v >>= 1)
		log2d += 1;
	return log2d > BRAID_RANK_PRESORT_COMPARES * (threads > 1 ? threads : 1);
}

/* Most collated keys ranked in one sort. */
#define BRAID_RANK_MAX_KEYS		8

/* One key compared by a libc collation, in key order. */
typedef struct BraidRankKey
{
	locale_t	locale;
	bool		descending;
} BraidRankKey;

/* An entry's full key in the collated layout (keys.c); NULL if none. */
typedef const uint8_t *(*BraidRankKeyOf) (const uint8_t *entry, uint32_t *len,
										  void *arg);

/* Memory for the dictionaries: NULL when there is none to give. */
typedef void *(*BraidRankAlloc) (size_t size, void *arg);
typedef void (*BraidRankFree) (void *ptr, void *arg);

typedef struct BraidRankSpec
{
	uint32_t	prefix_len;		/* bytes of prefix the radix sort orders by */
	uint32_t	stride;			/* bytes per entry */
	int			nkeys;			/* collated keys in the layout */
	const BraidRankKey *keys;
	size_t		memory_cap;		/* most bytes of dictionaries at once */
	int			threads;		/* for sorting the distinct strings */
	BraidRankKeyOf key_of;
	void	   *key_arg;
	BraidRankAlloc alloc;
	BraidRankFree free;
	void	   *alloc_arg;

	/*
	 * A string's collation sort key, as strxfrm_l() (NULL: strxfrm_l itself;
	 * the unit tests pass one that disagrees with the collation, to check
	 * that the result does not follow it).
	 */
	size_t		(*xfrm) (char *dst, const char *src, size_t n, locale_t locale);

	/*
	 * Called now and then on the calling thread if not NULL (query cancel: it
	 * may not return; the allocator's memory must then be reclaimed by its
	 * owner).
	 */
	void		(*interrupt_check) (void *arg);
	void	   *interrupt_arg;
} BraidRankSpec;

/* What one call did. */
typedef struct BraidRankResult
{
	int			keys_ranked;	/* leading collated keys ranked, 0 if none */
	bool		exact;			/* every key ranked and whole in its prefix:
								 * equal prefixes are equal keys */
	size_t		strings;		/* distinct strings of the keys ranked */
	int			presorted_keys; /* keys whose strings were put in order by
								 * their sort keys (sort_by_xfrm) */
	size_t		peak_bytes;		/* most dictionary memory held */
} BraidRankResult;

extern void braid_rank_prefixes(uint8_t *entries, size_t n,
								const BraidRankSpec *spec,
								BraidRankResult *result);

/* The width in bytes of ranks 0 .. distinct - 1 (0 when all are equal). */
static inline uint32_t
braid_rank_width(size_t distinct)
{
	if (distinct <= 1)
		return 0;
	if (distinct <= ((size_t) 1 << 8))
		return 1;
	if (distinct <= ((size_t) 1 << 16))
		return 2;
	if (distinct <= ((size_t) 1 << 24))
		return 3;
	return 4;
}

#endif							/* BRAID_COLLRANK_H */
