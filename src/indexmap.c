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
 * equal are handed to the caller's tie-break comparator (quicksort).  Large
 * sorts can run on several threads (braid_indexmap_sort_parallel): after the
 * first level, buckets are independent.
 *
 * Pure C: no PostgreSQL calls, no allocation.
 *
 * src/indexmap.c
 *
 *-------------------------------------------------------------------------
 */
#include "indexmap.h"
#include "pool.h"

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
 * partition_level
 *		Permute n entries that agree on their first *depth bytes into 256
 *		buckets by the byte at *depth, first skipping levels where every
 *		entry has the same byte (advancing *depth).  Fills count[].  Returns
 *		false, doing nothing, when the run is small or its prefix exhausted:
 *		finish_run then completes it.
 */
static bool
partition_level(uint8_t *base, size_t n, uint32_t *depth,
				const BraidSortSpec *spec, size_t count[256])
{
	const size_t stride = spec->stride;
	size_t		next[256];
	size_t		end[256];
	uint8_t		hold[BRAID_MAX_STRIDE];
	uint32_t	d = *depth;

	for (;;)
	{
		size_t		pos;
		int			b;

		if (n < INSERTION_THRESHOLD || d >= spec->keylen)
		{
			*depth = d;
			return false;
		}

		memset(count, 0, sizeof(size_t) * 256);
		for (size_t i = 0; i < n; i++)
			count[base[i * stride + d]]++;

		/* a level where every entry has the same byte needs no permutation */
		if (count[base[d]] == n)
		{
			d++;
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
				int			k = slot[d];

				if (k == b)
				{
					next[b]++;
					continue;
				}
				copy_entry(hold, slot, stride);
				do
				{
					uint8_t    *dst = base + next[k] * stride;

					next[k]++;
					exchange_entry(dst, hold, stride);
					k = hold[d];
				} while (k != b);
				copy_entry(slot, hold, stride);
				next[b]++;
			}
		}
		*depth = d;
		return true;
	}
}

/*
 * finish_run
 *		Complete a run partition_level declined: insertion sort when small,
 *		tie-break sort when the prefix is exhausted.
 */
static void
finish_run(uint8_t *base, size_t n, uint32_t depth, const BraidSortSpec *spec)
{
	if (n < INSERTION_THRESHOLD)
		insertion_sort(base, n, depth, spec);
	else if (spec->tiebreak)
		tie_sort(base, n, spec);
}

/*
 * radix_sort
 *		American flag sort of n entries agreeing on their first depth bytes.
 */
static void
radix_sort(uint8_t *base, size_t n, uint32_t depth, const BraidSortSpec *spec)
{
	size_t		count[256];
	size_t		pos = 0;

	if (!partition_level(base, n, &depth, spec, count))
	{
		finish_run(base, n, depth, spec);
		return;
	}

	/* recurse into every bucket of two or more entries */
	for (int b = 0; b < 256; b++)
	{
		if (count[b] > 1)
		{
			if (spec->interrupt_check && n > 65536)
				spec->interrupt_check(spec->interrupt_arg);
			radix_sort(base + pos * spec->stride, count[b], depth + 1, spec);
		}
		pos += count[b];
	}
}

/* Shared state of a parallel sort: the top-level buckets, handed out. */
typedef struct ParallelSort
{
	uint8_t    *base;
	BraidSortSpec spec;			/* without the interrupt hook */
	uint32_t	depth;
	size_t		start[256];
	size_t		count[256];
	int			order[256];		/* buckets to sort, largest first */
	int			ntasks;
	int			next;			/* next task, taken atomically */
} ParallelSort;

/* parallel_worker: sort top-level buckets until none is left. */
static void
parallel_worker(void *arg, int worker)
{
	ParallelSort *ps = (ParallelSort *) arg;

	(void) worker;
	for (;;)
	{
		int			t = __atomic_fetch_add(&ps->next, 1, __ATOMIC_RELAXED);
		int			b;

		if (t >= ps->ntasks)
			break;
		b = ps->order[t];
		radix_sort(ps->base + ps->start[b] * ps->spec.stride, ps->count[b],
				   ps->depth + 1, &ps->spec);
	}
}

/*
 * braid_indexmap_sort_parallel
 *		Sort with nthreads threads: the first level is partitioned on the
 *		calling thread, then the threads sort its buckets, largest first.
 *		The interrupt hook is only called on the calling thread, and only
 *		when no other thread is running.
 */
void
braid_indexmap_sort_parallel(uint8_t *entries, size_t n, const BraidSortSpec *spec,
							 int nthreads)
{
	ParallelSort ps;
	size_t		pos = 0;

	if (nthreads <= 1 || n < BRAID_PARALLEL_MIN_ENTRIES)
	{
		braid_indexmap_sort(entries, n, spec);
		return;
	}

	ps.base = entries;
	ps.spec = *spec;
	ps.spec.interrupt_check = NULL;
	ps.depth = 0;
	if (!partition_level(entries, n, &ps.depth, spec, ps.count))
	{
		finish_run(entries, n, ps.depth, spec);
		return;
	}
	if (spec->interrupt_check)
		spec->interrupt_check(spec->interrupt_arg);

	ps.ntasks = 0;
	for (int b = 0; b < 256; b++)
	{
		ps.start[b] = pos;
		pos += ps.count[b];
		if (ps.count[b] > 1)
			ps.order[ps.ntasks++] = b;
	}
	/* largest buckets first, so the threads finish together */
	for (int i = 1; i < ps.ntasks; i++)
	{
		int			b = ps.order[i];
		int			j = i;

		while (j > 0 && ps.count[ps.order[j - 1]] < ps.count[b])
		{
			ps.order[j] = ps.order[j - 1];
			j--;
		}
		ps.order[j] = b;
	}
	ps.next = 0;
	braid_pool_run(nthreads, parallel_worker, &ps);
	if (spec->interrupt_check)
		spec->interrupt_check(spec->interrupt_arg);
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
