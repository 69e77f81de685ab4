/*-------------------------------------------------------------------------
 *
 * indexmap.c
 *	  In-place MSD radix sort (American flag sort) of IndexMap entries.
 *
 * Entries are sorted by the memcmp() order of their key prefix, one byte
 * per level.  Each level counts the byte values, then permutes entries into
 * their buckets with cycle-leader swaps, so no second array of entries is
 * ever needed: the IndexMap is sorted within the memory it already has,
 * which is what lets a budget of N bytes hold N bytes of entries.  Small
 * buckets finish with insertion sort; buckets whose prefixes are entirely
 * equal are handed to the caller's tie-break comparator (quicksort).
 *
 * Pure C: no PostgreSQL calls, no allocation.
 *
 * src/indexmap.c
 *
 *-------------------------------------------------------------------------
 */
#include "indexmap.h"

/* Below this many entries a bucket is finished by insertion sort. */
#define INSERTION_THRESHOLD 24

/*
 * braid_entry_compare
 *		Full comparison of two entries: prefix, then tie-break.
 */
int
braid_entry_compare(const uint8_t *a, const uint8_t *b,
					const BraidSortSpec *spec)
{
	int			c = memcmp(a, b, spec->keylen);

	if (c == 0 && spec->tiebreak)
		c = spec->tiebreak(a, b, spec->tiebreak_arg);
	return c;
}

/*
 * compare_from
 *		Compare two entries known to agree on their first "depth" bytes.
 */
static inline int
compare_from(const uint8_t *a, const uint8_t *b, uint32_t depth,
			 const BraidSortSpec *spec)
{
	int			c = 0;

	if (depth < spec->keylen)
		c = memcmp(a + depth, b + depth, spec->keylen - depth);
	if (c == 0 && spec->tiebreak)
		c = spec->tiebreak(a, b, spec->tiebreak_arg);
	return c;
}

/*
 * insertion_sort
 *		Sort a small run of entries that agree on their first depth bytes.
 */
static void
insertion_sort(uint8_t *base, size_t n, uint32_t depth,
			   const BraidSortSpec *spec)
{
	const size_t stride = spec->stride;
	uint8_t		tmp[BRAID_MAX_STRIDE];

	for (size_t i = 1; i < n; i++)
	{
		uint8_t    *cur = base + i * stride;
		size_t		j = i;

		if (compare_from(cur - stride, cur, depth, spec) <= 0)
			continue;
		memcpy(tmp, cur, stride);
		while (j > 0 && compare_from(base + (j - 1) * stride, tmp, depth, spec) > 0)
			j--;
		memmove(base + (j + 1) * stride, base + j * stride, (i - j) * stride);
		memcpy(base + j * stride, tmp, stride);
	}
}

/* swap_entries: exchange two entries through a stack buffer. */
static inline void
swap_entries(uint8_t *a, uint8_t *b, size_t stride)
{
	uint8_t		tmp[BRAID_MAX_STRIDE];

	memcpy(tmp, a, stride);
	memcpy(a, b, stride);
	memcpy(b, tmp, stride);
}

/*
 * tie_sort
 *		Quicksort of entries whose prefixes are all equal, by the tie-break
 *		comparator alone.  Recurses on the smaller side, so the stack stays
 *		logarithmic.
 */
static void
tie_sort(uint8_t *base, size_t n, const BraidSortSpec *spec)
{
	const size_t stride = spec->stride;

	while (n > INSERTION_THRESHOLD)
	{
		size_t		mid = n / 2;
		size_t		i,
					store;
		uint8_t    *pivot;

		/* median of three to the last slot, then Lomuto partition */
		{
			uint8_t    *a = base,
					   *b = base + mid * stride,
					   *c = base + (n - 1) * stride;

			if (spec->tiebreak(a, b, spec->tiebreak_arg) > 0)
				swap_entries(a, b, stride);
			if (spec->tiebreak(b, c, spec->tiebreak_arg) > 0)
			{
				swap_entries(b, c, stride);
				if (spec->tiebreak(a, b, spec->tiebreak_arg) > 0)
					swap_entries(a, b, stride);
			}
			swap_entries(b, c, stride);
		}
		pivot = base + (n - 1) * stride;
		store = 0;
		for (i = 0; i < n - 1; i++)
		{
			if (spec->tiebreak(base + i * stride, pivot, spec->tiebreak_arg) < 0)
			{
				if (i != store)
					swap_entries(base + i * stride, base + store * stride, stride);
				store++;
			}
		}
		swap_entries(base + store * stride, pivot, stride);

		/* recurse into the smaller part, loop on the larger */
		if (store < n - store - 1)
		{
			tie_sort(base, store, spec);
			base += (store + 1) * stride;
			n -= store + 1;
		}
		else
		{
			tie_sort(base + (store + 1) * stride, n - store - 1, spec);
			n = store;
		}
	}
	insertion_sort(base, n, spec->keylen, spec);
}

/*
 * radix_sort
 *		American flag sort of n entries agreeing on their first depth bytes.
 */
static void
radix_sort(uint8_t *base, size_t n, uint32_t depth, const BraidSortSpec *spec)
{
	const size_t stride = spec->stride;
	size_t		count[256];
	size_t		next[256];
	size_t		end[256];
	uint8_t		hold[BRAID_MAX_STRIDE];
	uint8_t		swap[BRAID_MAX_STRIDE];

	for (;;)
	{
		size_t		pos;
		int			b;

		if (n < INSERTION_THRESHOLD)
		{
			insertion_sort(base, n, depth, spec);
			return;
		}
		if (depth >= spec->keylen)
		{
			if (spec->tiebreak)
				tie_sort(base, n, spec);
			return;
		}

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[base[i * stride + depth]]++;

		/* a level where every entry has the same byte needs no permutation */
		if (count[base[depth]] == n)
		{
			depth++;
			continue;
		}

		pos = 0;
		for (b = 0; b < 256; b++)
		{
			next[b] = pos;
			pos += count[b];
			end[b] = pos;
		}

		/* cycle-leader permutation into buckets */
		for (b = 0; b < 256; b++)
		{
			while (next[b] < end[b])
			{
				uint8_t    *slot = base + next[b] * stride;
				int			d = slot[depth];

				if (d == b)
				{
					next[b]++;
					continue;
				}
				memcpy(hold, slot, stride);
				do
				{
					uint8_t    *dst = base + next[d] * stride;

					next[d]++;
					memcpy(swap, dst, stride);
					memcpy(dst, hold, stride);
					memcpy(hold, swap, stride);
					d = hold[depth];
				} while (d != b);
				memcpy(slot, hold, stride);
				next[b]++;
			}
		}

		/* recurse into every bucket of two or more entries */
		pos = 0;
		for (b = 0; b < 256; b++)
		{
			if (count[b] > 1)
				radix_sort(base + pos * stride, count[b], depth + 1, spec);
			pos += count[b];
		}
		return;
	}
}

/*
 * braid_indexmap_sort
 *		Sort n entries in place by key prefix, then tie-break.
 */
void
braid_indexmap_sort(uint8_t *entries, size_t n, const BraidSortSpec *spec)
{
	if (n < 2)
		return;
	radix_sort(entries, n, 0, spec);
}
