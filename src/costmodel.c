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
 * A second effect decides when the table is not cached in shared buffers:
 * every gather batch rereads (nearly) every page of the table through a
 * small buffer ring, and the batches are limited by the memory the budget
 * leaves after the sort.  The per-row and per-page constants below were
 * measured on the sortbenchmark shape (bench/run.sh, 5M rows): PostgreSQL's
 * external sort ~600 ns a row; braidsort's build, sort and gather ~280 ns a
 * row plus ~1.4 us per page reread.  braidsort declines when its estimate
 * is not below PostgreSQL's.
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
#define BRAID_NS_PER_PAGE_REREAD	1400.0

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

/*
 * braid_cost_gather_passes
 *		How many gather batches the sorted rows need: tuple bytes over the
 *		memory the budget leaves once only refs remain.
 */
double
braid_cost_gather_passes(const BraidCostInput *in)
{
	double		arena = in->budget_bytes - in->rows * BRAID_REF_BYTES_AFTER_SORT;
	double		bytes = in->rows * in->tuple_bytes;
	double		passes;

	if (arena < 32768.0)
		arena = 32768.0;
	passes = bytes / arena;
	return passes < 1.0 ? 1.0 : (double) (long long) (passes + 0.999999);
}

/*
 * braid_cost_prefers
 *		True if braidsort's OnePass sort should replace PostgreSQL's Sort;
 *		otherwise *why says why not.
 */
bool
braid_cost_prefers(const BraidCostInput *in, const char **why)
{
	if (in->rows < BRAID_MIN_ROWS)
	{
		*why = "too few rows to be worth it";
		return false;
	}
	if (braid_cost_indexmap_bytes(in) > in->budget_bytes)
	{
		*why = "the IndexMap is not expected to fit braidsort.work_mem";
		return false;
	}
	if (braid_cost_pg_sort_bytes(in) <= in->sort_mem_bytes)
	{
		*why = "PostgreSQL's sort is expected to fit in work_mem";
		return false;
	}
	if (!in->table_cached && in->table_pages > 0)
	{
		double		braid = in->rows * BRAID_NS_PER_ROW +
			braid_cost_gather_passes(in) * in->table_pages * BRAID_NS_PER_PAGE_REREAD;

		if (braid >= in->rows * PG_EXTERNAL_SORT_NS_PER_ROW)
		{
			*why = "the gather would reread the uncached table too many times";
			return false;
		}
	}
	return true;
}
