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
 * copy_entry / exchange_entry
 *		Move entries a machine word at a time when the stride allows it
 *		(the planner pads strides to a multiple of 8): several times faster
 *		than memcpy() calls of a run-time size, and this is the inner loop
 *		of the radix permutation.
 */
static inline void
copy_entry(uint8_t *dst, const uint8_t *src, size_t stride)
{
	if ((stride & 7) == 0)
	{
		for (size_t i = 0; i < stride; i += 8)
		{
			uint64_t	w;

			memcpy(&w, src + i, 8);
			memcpy(dst + i, &w, 8);
		}
	}
	else
		memcpy(dst, src, stride);
}

static inline void
exchange_entry(uint8_t *slot, uint8_t *hold, size_t stride)
{
	if ((stride & 7) == 0)
	{
		for (size_t i = 0; i < stride; i += 8)
		{
			uint64_t	a,
						b;

			memcpy(&a, slot + i, 8);
			memcpy(&b, hold + i, 8);
			memcpy(slot + i, &b, 8);
			memcpy(hold + i, &a, 8);
		}
	}
	else
	{
		uint8_t		tmp[BRAID_MAX_STRIDE];

		memcpy(tmp, slot, stride);
		memcpy(slot, hold, stride);
		memcpy(hold, tmp, stride);
	}
}

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

/* swap_entries: exchange two entries. */
static inline void
swap_entries(uint8_t *a, uint8_t *b, size_t stride)
{
	exchange_entry(a, b, stride);
}

/*
 * tie_sort
 *		Quicksort of entries whose prefixes are all equal, by the tie-break
 *		comparator alone.  Three-way partitioning (Dijkstra) keeps runs of
 *		equal full keys linear; recursion goes to the smaller side, so the
 *		stack stays logarithmic.
 */
static void
tie_sort(uint8_t *base, size_t n, const BraidSortSpec *spec)
{
	const size_t stride = spec->stride;
	uint8_t		pivot[BRAID_MAX_STRIDE];

	while (n > INSERTION_THRESHOLD)
	{
		size_t		lt = 0,
					i = 0,
					gt = n;

		/* median of three as the pivot, copied out of the array */
		{
			uint8_t    *a = base,
					   *b = base + (n / 2) * stride,
					   *c = base + (n - 1) * stride;
			uint8_t    *m;

			if (spec->tiebreak(a, b, spec->tiebreak_arg) < 0)
				m = (spec->tiebreak(b, c, spec->tiebreak_arg) < 0) ? b :
					(spec->tiebreak(a, c, spec->tiebreak_arg) < 0) ? c : a;
			else
				m = (spec->tiebreak(a, c, spec->tiebreak_arg) < 0) ? a :
					(spec->tiebreak(b, c, spec->tiebreak_arg) < 0) ? c : b;
			copy_entry(pivot, m, stride);
		}

		/* [0, lt) < pivot, [lt, i) == pivot, [gt, n) > pivot */
		while (i < gt)
		{
			uint8_t    *e = base + i * stride;
			int			c = spec->tiebreak(e, pivot, spec->tiebreak_arg);

			if (c < 0)
			{
				if (i != lt)
					swap_entries(e, base + lt * stride, stride);
				lt++;
				i++;
			}
			else if (c > 0)
			{
				gt--;
				swap_entries(e, base + gt * stride, stride);
			}
			else
				i++;
		}

		/* recurse into the smaller outer part, loop on the larger */
		if (lt < n - gt)
		{
			tie_sort(base, lt, spec);
			base += gt * stride;
			n -= gt;
		}
		else
		{
			tie_sort(base + gt * stride, n - gt, spec);
			n = lt;
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
				copy_entry(hold, slot, stride);
				do
				{
					uint8_t    *dst = base + next[d] * stride;

					next[d]++;
					exchange_entry(dst, hold, stride);
					d = hold[depth];
				} while (d != b);
				copy_entry(slot, hold, stride);
				next[b]++;
			}
		}

		/* recurse into every bucket of two or more entries */
		pos = 0;
		for (b = 0; b < 256; b++)
		{
			if (count[b] > 1)
			{
				if (spec->interrupt_check && n > 65536)
					spec->interrupt_check(spec->interrupt_arg);
				radix_sort(base + pos * stride, count[b], depth + 1, spec);
			}
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
