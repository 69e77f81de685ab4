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
 * src/core/indexmap.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "core/indexmap.h"
#include "core/pool.h"
#include "core/sync.h"

/* Below this many entries a bucket is finished by insertion sort. */
#define INSERTION_THRESHOLD 24

/* Most threads one sort uses (bounds its per-thread histograms). */
#define BRAID_MAX_SORT_THREADS 64

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

	/*
	 * Eight bytes at a time as big-endian numbers (what memcmp would
	 * conclude), without a call: this is the inner loop of every small
	 * bucket's insertion sort.
	 */
	while (depth + 8 <= spec->keylen)
	{
		uint64_t	x,
					y;

		memcpy(&x, a + depth, 8);
		memcpy(&y, b + depth, 8);
		if (x != y)
		{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			x = __builtin_bswap64(x);
			y = __builtin_bswap64(y);
#elif !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
			return memcmp(a + depth, b + depth, 8);
#endif
			return x < y ? -1 : 1;
		}
		depth += 8;
	}
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
 * tie_partition
 *		One three-way partition step of tie_sort around a median-of-three
 *		pivot: afterwards [0, *lt) < pivot, [*lt, *gt) == pivot and
 *		[*gt, n) > pivot.
 */
static void
tie_partition(uint8_t *base, size_t n, const BraidSortSpec *spec,
			  size_t *lt_out, size_t *gt_out)
{
	const size_t stride = spec->stride;
	uint8_t		pivot[BRAID_MAX_STRIDE];
	size_t		lt = 0,
				i = 0,
				gt = n;

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
	*lt_out = lt;
	*gt_out = gt;
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

	while (n > INSERTION_THRESHOLD)
	{
		size_t		lt,
					gt;

		tie_partition(base, n, spec, &lt, &gt);

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
 * Shared state of a parallel sort: the first level's histogram and
 * stripes, then its buckets, handed out to the threads.
 */
typedef struct ParallelSort
{
	uint8_t    *base;
	size_t		n;
	BraidSortSpec spec;			/* without the interrupt hook */
	uint32_t	depth;
	int			nthreads;
	size_t		start[256];
	size_t		count[256];
	size_t		thread_count[BRAID_MAX_SORT_THREADS][256];
	int			order[256];		/* buckets to sort, largest first */
	int			ntasks;
	int			next;			/* next task, taken atomically */
	/* entries each thread left out of place: position << 8 | region's bucket */
	size_t	   *misplaced[BRAID_MAX_SORT_THREADS];
	size_t		nmisplaced[BRAID_MAX_SORT_THREADS];
	size_t		misplaced_cap;
	bool		overflow;		/* some thread ran out of room to record */
} ParallelSort;

/*
 * cycle_into_buckets
 *		Cycle-leader permutation by the byte at d, within the ranges
 *		[next[b], end[b]) of each bucket b: an entry out of its bucket is
 *		carried into the first slot of its own bucket's range that does not
 *		hold a right entry yet.  With the buckets' whole regions as ranges
 *		every entry finds its place.  With a thread's stripes of them
 *		(permute_worker) an entry may find its range full: it is left out of
 *		place, and recorded in ps for worker if ps is given.
 */
static void
cycle_into_buckets(uint8_t *base, size_t stride, uint32_t d, size_t next[256],
				   const size_t end[256], ParallelSort *ps, int worker)
{
	uint8_t		hold[BRAID_MAX_STRIDE];

	for (int b = 0; b < 256; b++)
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
			/* the slot is a hole while its entry travels */
			copy_entry(hold, slot, stride);
			for (;;)
			{
				while (next[k] < end[k] && base[next[k] * stride + d] == k)
					next[k]++;
				if (next[k] == end[k])
					break;		/* no room: the entry goes back, misplaced */
				exchange_entry(base + next[k] * stride, hold, stride);
				next[k]++;
				k = hold[d];
				if (k == b)
					break;		/* it belongs in the hole */
			}
			copy_entry(slot, hold, stride);
			if (hold[d] != b && ps != NULL)
			{
				if (ps->nmisplaced[worker] < ps->misplaced_cap)
					ps->misplaced[worker][ps->nmisplaced[worker]++] =
						(next[b] << 8) | (size_t) b;
				else
					ps->overflow = true;
			}
			next[b]++;
		}
	}
}

/*
 * permute_by_byte
 *		Permute entries into the 256 buckets of byte d, whose sizes are
 *		count[].  Entries already in their bucket cost a look only, so
 *		finishing a nearly partitioned array is a fast scan.
 */
static void
permute_by_byte(uint8_t *base, const size_t count[256], uint32_t d, size_t stride)
{
	size_t		next[256];
	size_t		end[256];
	size_t		pos = 0;

	for (int b = 0; b < 256; b++)
	{
		next[b] = pos;
		pos += count[b];
		end[b] = pos;
	}
	cycle_into_buckets(base, stride, d, next, end, NULL, 0);
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
	uint32_t	d = *depth;

	for (;;)
	{
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

		permute_by_byte(base, count, d, stride);
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

/* histogram_worker: count the bytes at depth of this thread's slice. */
static void
histogram_worker(void *arg, int worker)
{
	ParallelSort *ps = (ParallelSort *) arg;
	size_t		from = ps->n * worker / ps->nthreads;
	size_t		to = ps->n * (worker + 1) / ps->nthreads;
	size_t	   *count = ps->thread_count[worker];
	const uint8_t *p = ps->base + from * ps->spec.stride + ps->depth;

	memset(count, 0, sizeof(size_t) * 256);
	for (size_t i = from; i < to; i++, p += ps->spec.stride)
		count[*p]++;
}

/*
 * permute_worker
 *		Speculative permutation of the first level (after PARADIS): every
 *		bucket's range is split into one stripe per thread, and this thread
 *		moves entries only between its own stripes, cycle-leader style,
 *		placing an entry when its bucket's stripe still has room and leaving
 *		it where it is otherwise.  The threads touch disjoint entries; what
 *		is left misplaced (a small fraction when bytes are spread evenly)
 *		is put right by the serial permutation that follows.
 */
static void
permute_worker(void *arg, int worker)
{
	ParallelSort *ps = (ParallelSort *) arg;
	size_t		next[256];
	size_t		end[256];

	for (int b = 0; b < 256; b++)
	{
		next[b] = ps->start[b] + ps->count[b] * worker / ps->nthreads;
		end[b] = ps->start[b] + ps->count[b] * (worker + 1) / ps->nthreads;
	}
	cycle_into_buckets(ps->base, ps->spec.stride, ps->depth, next, end, ps, worker);
}

/*
 * fix_misplaced
 *		Finish the first level after the speculative permutation: cycle the
 *		misplaced entries through the misplaced slots (each slot's bucket is
 *		known from its position), so only they are touched.  Returns false
 *		if the lists are incomplete (then the caller scans everything).
 */
static bool
fix_misplaced(ParallelSort *ps)
{
	const size_t stride = ps->spec.stride;
	const uint32_t d = ps->depth;
	size_t		total = 0;
	size_t	   *slots;
	size_t		next[257];
	size_t		fill[256];
	uint8_t		hold[BRAID_MAX_STRIDE];
	int			r;

	if (ps->overflow)
		return false;
	for (int t = 0; t < ps->nthreads; t++)
		total += ps->nmisplaced[t];
	if (total == 0)
		return true;
	slots = malloc(sizeof(size_t) * total);
	if (slots == NULL)
		return false;

	/* misplaced slots grouped by the bucket whose region holds them */
	memset(fill, 0, sizeof(fill));
	for (int t = 0; t < ps->nthreads; t++)
		for (size_t i = 0; i < ps->nmisplaced[t]; i++)
			fill[ps->misplaced[t][i] & 0xFF]++;
	next[0] = 0;
	for (r = 0; r < 256; r++)
		next[r + 1] = next[r] + fill[r];
	memcpy(fill, next, sizeof(fill));
	for (int t = 0; t < ps->nthreads; t++)
		for (size_t i = 0; i < ps->nmisplaced[t]; i++)
		{
			size_t		m = ps->misplaced[t][i];

			slots[fill[m & 0xFF]++] = m >> 8;
		}

	/* cycle-leader over the misplaced slots only */
	memcpy(fill, next, sizeof(fill));
	for (int b = 0; b < 256; b++)
	{
		while (fill[b] < next[b + 1])
		{
			uint8_t    *slot = ps->base + slots[fill[b]] * stride;
			int			k = slot[d];

			if (k == b)
			{
				fill[b]++;
				continue;
			}
			copy_entry(hold, slot, stride);
			do
			{
				uint8_t    *dst;

				while (fill[k] < next[k + 1] &&
					   ps->base[slots[fill[k]] * stride + d] == k)
					fill[k]++;	/* (filled earlier in this pass) */
				if (fill[k] == next[k + 1])
				{
					/* the record was incomplete: let the full pass finish */
					copy_entry(slot, hold, stride);
					free(slots);
					return false;
				}
				dst = ps->base + slots[fill[k]] * stride;
				fill[k]++;
				exchange_entry(dst, hold, stride);
				k = hold[d];
			} while (k != b);
			copy_entry(slot, hold, stride);
			fill[b]++;
		}
	}
	free(slots);
	return true;
}

/* parallel_worker: sort top-level buckets until none is left. */
static void
parallel_worker(void *arg, int worker)
{
	ParallelSort *ps = (ParallelSort *) arg;

	(void) worker;
	for (;;)
	{
		int			t = braid_fetch_add_relaxed(&ps->next, 1);
		int			b;

		if (t >= ps->ntasks)
			break;
		b = ps->order[t];
		radix_sort(ps->base + ps->start[b] * ps->spec.stride, ps->count[b],
				   ps->depth + 1, &ps->spec);
	}
}

/* A range of a parallel tie sort, and the whole list of them. */
typedef struct TieTask
{
	size_t		start;
	size_t		n;
} TieTask;

typedef struct ParallelTies
{
	uint8_t    *base;
	const BraidSortSpec *spec;
	TieTask		tasks[64];
	int			ntasks;
	int			next;			/* next task, taken atomically */
} ParallelTies;

/* tie_worker: sort ranges of a parallel tie sort until none is left. */
static void
tie_worker(void *arg, int worker)
{
	ParallelTies *pt = (ParallelTies *) arg;

	(void) worker;
	for (;;)
	{
		int			t = braid_fetch_add_relaxed(&pt->next, 1);

		if (t >= pt->ntasks)
			break;
		tie_sort(pt->base + pt->tasks[t].start * pt->spec->stride,
				 pt->tasks[t].n, pt->spec);
	}
}

/*
 * tie_sort_parallel
 *		Sort n entries whose prefixes are all equal (say, a single key under
 *		a libc collation: every entry ties and the comparator decides) on
 *		nthreads threads: split the range by quicksort partition steps on
 *		this thread until there are a few ranges per thread, then let the
 *		threads sort the ranges, largest first.
 */
static void
tie_sort_parallel(uint8_t *base, size_t n, const BraidSortSpec *spec, int nthreads)
{
	ParallelTies *pt = malloc(sizeof(ParallelTies));
	int			want = 4 * nthreads < 32 ? 4 * nthreads : 32;

	if (pt == NULL)
	{
		tie_sort(base, n, spec);
		return;
	}
	pt->base = base;
	pt->spec = spec;
	pt->tasks[0].start = 0;
	pt->tasks[0].n = n;
	pt->ntasks = 1;
	while (pt->ntasks < want)
	{
		int			big = 0;
		size_t		lt,
					gt;
		TieTask		t;

		for (int i = 1; i < pt->ntasks; i++)
			if (pt->tasks[i].n > pt->tasks[big].n)
				big = i;
		t = pt->tasks[big];
		if (t.n < BRAID_PARALLEL_MIN_ENTRIES / 4)
			break;
		tie_partition(base + t.start * spec->stride, t.n, spec, &lt, &gt);
		/* the part equal to the pivot is in place: keep the outer two */
		pt->tasks[big].n = lt;
		pt->tasks[pt->ntasks].start = t.start + gt;
		pt->tasks[pt->ntasks].n = t.n - gt;
		pt->ntasks++;
	}
	/* largest first, so the threads finish together */
	for (int i = 1; i < pt->ntasks; i++)
	{
		TieTask		t = pt->tasks[i];
		int			j = i;

		while (j > 0 && pt->tasks[j - 1].n < t.n)
		{
			pt->tasks[j] = pt->tasks[j - 1];
			j--;
		}
		pt->tasks[j] = t;
	}
	pt->next = 0;
	braid_pool_run(nthreads, tie_worker, pt);
	free(pt);
}

/*
 * braid_indexmap_sort_parallel
 *		Sort with nthreads threads.  The first level is counted and
 *		permuted by all threads (a speculative permutation within per-thread
 *		stripes, finished by a nearly free serial pass), then the threads
 *		sort its buckets, largest first.  The interrupt hook is only called
 *		on the calling thread, and only when no other thread is running.
 */
void
braid_indexmap_sort_parallel(uint8_t *entries, size_t n, const BraidSortSpec *spec,
							 int nthreads)
{
	ParallelSort *ps;
	size_t		pos = 0;

	if (nthreads <= 1 || n < BRAID_PARALLEL_MIN_ENTRIES)
	{
		braid_indexmap_sort(entries, n, spec);
		return;
	}
	if (nthreads > BRAID_MAX_SORT_THREADS)
		nthreads = BRAID_MAX_SORT_THREADS;

	ps = calloc(1, sizeof(ParallelSort));
	if (ps == NULL)
	{
		/* no memory for the bookkeeping: sort on this thread */
		braid_indexmap_sort(entries, n, spec);
		return;
	}
	ps->base = entries;
	ps->n = n;
	ps->spec = *spec;
	ps->spec.interrupt_check = NULL;
	ps->nthreads = nthreads;

	/* the first byte position where the entries differ */
	for (ps->depth = 0;; ps->depth++)
	{
		if (ps->depth >= spec->keylen)
		{
			/* every prefix is equal: the tie-break orders them all */
			free(ps);
			if (spec->tiebreak)
				tie_sort_parallel(entries, n, spec, nthreads);
			return;
		}
		braid_pool_run(nthreads, histogram_worker, ps);
		memset(ps->count, 0, sizeof(ps->count));
		for (int t = 0; t < nthreads; t++)
			for (int b = 0; b < 256; b++)
				ps->count[b] += ps->thread_count[t][b];
		if (ps->count[entries[ps->depth]] != n)
			break;
	}
	for (int b = 0; b < 256; b++)
	{
		ps->start[b] = pos;
		pos += ps->count[b];
	}

	/*
	 * room to record misplaced entries: a few percent is plenty when bytes
	 * are spread evenly; if it runs out, scan everything instead
	 */
	ps->misplaced_cap = n / nthreads / 16 + 1024;
	ps->overflow = false;
	for (int t = 0; t < nthreads; t++)
	{
		ps->nmisplaced[t] = 0;
		ps->misplaced[t] = malloc(sizeof(size_t) * ps->misplaced_cap);
		if (ps->misplaced[t] == NULL)
			ps->misplaced_cap = 0;
	}
	braid_pool_run(nthreads, permute_worker, ps);
	if (!fix_misplaced(ps))
		permute_by_byte(entries, ps->count, ps->depth, spec->stride);
	for (int t = 0; t < nthreads; t++)
		free(ps->misplaced[t]);

	ps->ntasks = 0;
	for (int b = 0; b < 256; b++)
		if (ps->count[b] > 1)
			ps->order[ps->ntasks++] = b;
	/* largest buckets first, so the threads finish together */
	for (int i = 1; i < ps->ntasks; i++)
	{
		int			b = ps->order[i];
		int			j = i;

		while (j > 0 && ps->count[ps->order[j - 1]] < ps->count[b])
		{
			ps->order[j] = ps->order[j - 1];
			j--;
		}
		ps->order[j] = b;
	}
	ps->next = 0;
	braid_pool_run(nthreads, parallel_worker, ps);
	free(ps);
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
