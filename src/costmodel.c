/*-------------------------------------------------------------------------
 *
 * costmodel.c
 *	  The OnePass decision: replace a Sort when PostgreSQL's sort would
 *	  spill tuples to disk while braidsort's IndexMap fits its budget.
 *
 * PostgreSQL's external sort writes and rereads every tuple at least once;
 * braidsort keeps only keys and TIDs in memory and reads each tuple once
 * more from the table.  When PostgreSQL's sort fits in work_mem it is a
 * quicksort over in-memory tuples, which the late gather cannot beat by
 * enough to be worth the refetch, so braidsort declines.
 *
 * When the IndexMap does not fit its budget, braidsort spills it as runs
 * (MergePass), which costs writing and merging keys and refs.  And every
 * gather batch revisits (nearly) every page of the table: cheaply when the
 * table is cached in shared buffers, at the price of a read through a small
 * buffer ring when it is not.  The batches are limited by the memory the
 * budget leaves after the sort.  The per-row and per-page constants below
 * were measured on the sortbenchmark shape (bench/run.sh, 5M rows):
 * PostgreSQL's external sort ~600 ns a row; braidsort's build, sort and
 * gather ~280 ns a row, ~100 ns more when it spills runs, ~0.3 us per page
 * revisited in shared buffers and ~1.4 us per page reread from outside.
 * braidsort declines when its estimate is not below PostgreSQL's.
 *
 * Pure C (no PostgreSQL calls).
 *
 * src/costmodel.c
 *
 *-------------------------------------------------------------------------
 */
#include "costmodel.h"

/*
 * Per-tuple bytes PostgreSQL's sort holds in memory beyond the row itself:
 * a SortTuple (24) plus the MinimalTuple header and allocator overhead
 * (tuplesort.c's accounting), rounded.
 */
#define PG_SORT_TUPLE_OVERHEAD 48.0

/* Measured costs, in nanoseconds (see the file header). */
#define PG_EXTERNAL_SORT_NS_PER_ROW 600.0
#define BRAID_NS_PER_ROW			280.0
#define BRAID_NS_PER_ROW_SPILLED	100.0	/* writing and merging runs */
#define BRAID_NS_PER_PAGE_REREAD	1400.0	/* page not in shared buffers */
#define BRAID_NS_PER_PAGE_REVISIT	300.0	/* page in shared buffers */

/* Bytes per IndexMap entry kept after the sort (the ref). */
#define BRAID_REF_BYTES_AFTER_SORT	8.0

/* braid_cost_indexmap_bytes: bytes of the IndexMap for the whole input. */
double
braid_cost_indexmap_bytes(const BraidCostInput *in)
{
	return in->rows * in->entry_bytes;
}

/* braid_cost_pg_sort_bytes: memory PostgreSQL's sort would need in memory. */
double
braid_cost_pg_sort_bytes(const BraidCostInput *in)
{
	double		width = in->sort_width < 8 ? 8 : in->sort_width;

	return in->rows * (width + PG_SORT_TUPLE_OVERHEAD);
}

/* braid_cost_is_onepass: does the IndexMap fit the budget? */
bool
braid_cost_is_onepass(const BraidCostInput *in)
{
	return braid_cost_indexmap_bytes(in) <= in->budget_bytes;
}

/*
 * braid_cost_gather_passes
 *		How many gather batches the sorted rows need: tuple bytes over the
 *		memory left for tuples (after a OnePass sort, what the budget leaves
 *		once only refs remain; after a MergePass, the budget).
 */
double
braid_cost_gather_passes(const BraidCostInput *in)
{
	double		arena = in->budget_bytes;
	double		bytes = in->rows * in->tuple_bytes;
	double		passes;

	if (braid_cost_is_onepass(in))
		arena -= in->rows * BRAID_REF_BYTES_AFTER_SORT;
	if (arena < 32768.0)
		arena = 32768.0;
	passes = bytes / arena;
	return passes < 1.0 ? 1.0 : (double) (long long) (passes + 0.999999);
}

/* braid_cost_pg_ns: estimated time of PostgreSQL's external sort. */
double
braid_cost_pg_ns(const BraidCostInput *in)
{
	return in->rows * PG_EXTERNAL_SORT_NS_PER_ROW;
}

/* braid_cost_braid_ns: estimated time of braidsort's sort. */
double
braid_cost_braid_ns(const BraidCostInput *in)
{
	double		ns = in->rows * BRAID_NS_PER_ROW;

	if (!braid_cost_is_onepass(in))
		ns += in->rows * BRAID_NS_PER_ROW_SPILLED;
	ns += braid_cost_gather_passes(in) * in->table_pages *
		(in->table_cached ? BRAID_NS_PER_PAGE_REVISIT : BRAID_NS_PER_PAGE_REREAD);
	return ns;
}

/*
 * braid_cost_prefers
 *		True if braidsort should replace PostgreSQL's Sort; otherwise *why
 *		says why not.
 */
bool
braid_cost_prefers(const BraidCostInput *in, const char **why)
{
	if (in->rows < BRAID_MIN_ROWS)
	{
		*why = "too few rows to be worth it";
		return false;
	}
	if (braid_cost_pg_sort_bytes(in) <= in->sort_mem_bytes)
	{
		*why = "PostgreSQL's sort is expected to fit in work_mem";
		return false;
	}
	if (braid_cost_braid_ns(in) >= braid_cost_pg_ns(in))
	{
		*why = in->table_cached ?
			"the estimated gather and merge costs exceed PostgreSQL's external sort" :
			"the gather would reread the uncached table too many times";
		return false;
	}
	return true;
}
