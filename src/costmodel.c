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
	return true;
}
