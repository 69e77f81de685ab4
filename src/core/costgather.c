/*-------------------------------------------------------------------------
 *
 * costgather.c
 *	  The cost model of the late gather by heap TID: how many rows a batch
 *	  holds, how many passes over the table the batches make, and how many
 *	  page visits they cost.
 *
 * Sorted rows come back from the table in batches that fit the gather's
 * arena (the memory the sort leaves it); each batch visits the pages its
 * rows lie on.  A batch of r rows over a table of p pages visits about
 * p * (1 - e^(-r/p)) pages when the sort order is unrelated to the
 * physical order, and r / (rows per page) when it follows it; in between,
 * weighted by the squared correlation as PostgreSQL's index costing does.
 * A page in shared buffers costs ~0.2 us a visit, one read through the
 * gather's buffer ring (a table over half of shared_buffers) ~2 us in the
 * table's order and ~4 us at random (in the model's units).  The
 * sort's estimate (costmodel.c) adds these to braidsort's time.
 *
 * Pure C (no PostgreSQL calls).
 *
 * src/core/costgather.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>

#include "core/costgather.h"
#include "core/costmem.h"

/* Bytes per IndexMap entry kept after the sort (the ref). */
#define BRAID_REF_BYTES_AFTER_SORT	8.0

/*
 * Bookkeeping per row of a gather batch (sort/tid_gather.c): its arena
 * offset (4) and copy instruction (8), and a copy of its ref (8) when the
 * refs are on the device, and one more (8) when a helper merges the next
 * batch's refs while this one is gathered (sort/sort_gather.c); and some
 * by page of the table (costmodel.h).
 */
#define BRAID_GATHER_ROW_BYTES				12.0
#define BRAID_GATHER_ROW_BYTES_DEVICE_REFS	20.0
#define BRAID_GATHER_ROW_BYTES_MERGED_AHEAD	28.0

/*
 * braid_cost_batch_arena
 *		The tuple bytes a gather batch may hold when "mem" bytes are left for
 *		it: each row of a batch also costs its bookkeeping (its place in the
 *		arena and its copy instruction, plus a copy of its ref when the refs
 *		are read from the device), so the arena gets the share of mem that
 *		rows of row_bytes leave.
 */
double
braid_cost_batch_arena(double mem, double row_bytes, BraidRefsAt refs_at)
{
	/* (the caller has taken the per-page bookkeeping off mem) */
	double		per_row = refs_at == BRAID_REFS_MERGED_AHEAD ?
		BRAID_GATHER_ROW_BYTES_MERGED_AHEAD :
		refs_at == BRAID_REFS_ON_DEVICE ? BRAID_GATHER_ROW_BYTES_DEVICE_REFS :
		BRAID_GATHER_ROW_BYTES;
	double		arena;

	if (row_bytes < 1.0)
		row_bytes = 1.0;
	arena = mem * row_bytes / (row_bytes + per_row);
	return arena < 32768.0 ? 32768.0 : arena;
}

/*
 * braid_cost_gather_arena
 *		The tuple bytes a gather batch may hold out of "mem" bytes, with the
 *		bookkeeping by page of a table of table_pages pages (see costmodel.h)
 *		taken off: a sparse batch (fewer rows than the table has pages) pays
 *		for a distinct page per row, a dense one for every page of the table.
 */
double
braid_cost_gather_arena(double mem, double table_pages, double row_bytes,
						BraidRefsAt refs_at)
{
	double		left = mem - table_pages * BRAID_GATHER_PAGE_BYTES;
	double		arena;

	if (row_bytes < 1.0)
		row_bytes = 1.0;
	arena = braid_cost_batch_arena(left, row_bytes + BRAID_GATHER_BLOCK_BYTES,
								   refs_at) *
		row_bytes / (row_bytes + BRAID_GATHER_BLOCK_BYTES);
	if (arena / row_bytes > table_pages)
		arena = braid_cost_batch_arena(left - table_pages * BRAID_GATHER_BLOCK_BYTES,
									   row_bytes, refs_at);
	return arena < 32768.0 ? 32768.0 : arena;
}

/* passes_for: batches of at most arena bytes that total bytes need. */
static double
passes_for(double total, double arena)
{
	double		passes = total / arena;

	return passes < 1.0 ? 1.0 : (double) (long long) (passes + 0.999999);
}

/*
 * braid_cost_offload_refs
 *		After a OnePass sort of "rows" rows whose tuples take total_bytes in
 *		a gather arena, should the sorted refs (8 bytes a row) go to the
 *		spill device, so that the whole budget holds tuples?  Yes when that
 *		saves gather passes, each a visit of the table's pages at page_ns a
 *		page (braid_cost_page_visit_ns), worth more than writing and reading
 *		back the refs (at the profiled cost, if any).  *passes gets the
 *		passes the gather will make.
 */
bool
braid_cost_offload_refs(double rows, double total_bytes, double budget,
						double arena_cap, double table_pages, double page_ns,
						double spill_ns_per_byte, double *passes)
{
	double		row_bytes = rows > 0 ? total_bytes / rows : 1.0;
	double		left = budget - rows * BRAID_REF_BYTES_AFTER_SORT;
	double		arena_mem = braid_cost_gather_arena(left, table_pages, row_bytes,
													BRAID_REFS_IN_MEMORY);
	double		arena_dev = braid_cost_gather_arena(budget, table_pages, row_bytes,
													BRAID_REFS_ON_DEVICE);
	double		passes_mem,
				passes_dev;
	double		saved_ns,
				cost_ns;

	if (arena_cap > 0)
	{
		arena_mem = arena_mem < arena_cap ? arena_mem : arena_cap;
		arena_dev = arena_dev < arena_cap ? arena_dev : arena_cap;
	}
	passes_mem = passes_for(total_bytes, arena_mem);
	passes_dev = passes_for(total_bytes, arena_dev);
	*passes = passes_mem;
	if (passes_dev >= passes_mem)
		return false;
	saved_ns = (passes_mem - passes_dev) * table_pages * page_ns;
	cost_ns = rows * BRAID_REF_BYTES_AFTER_SORT *
		(spill_ns_per_byte > 0 ? spill_ns_per_byte : BRAID_DEFAULT_SPILL_NS_PER_BYTE);
	if (cost_ns >= saved_ns)
		return false;
	*passes = passes_dev;
	return true;
}

/*
 * braid_cost_merges_ahead
 *		Does a MergePass gather merge each next batch on a helper thread
 *		while it gathers (sort_gather.c)?  With more than one thread, unless keys
 *		are compared by a collation (in the backend) or the table is read
 *		through a buffer ring (streamed page by page, sort/tid_gather_copy.c).
 */
bool
braid_cost_merges_ahead(const BraidCostInput *in)
{
	return in->sort_threads > 1 && !in->collated && in->table_cached;
}

/*
 * braid_cost_gather_passes
 *		How many gather batches the sorted rows need: tuple bytes over the
 *		arena the budget leaves (after a OnePass sort, what is left once only
 *		refs remain, or all of it when the refs go to the device; after a
 *		MergePass, all of it).
 */
double
braid_cost_gather_passes(const BraidCostInput *in)
{
	double		total = in->rows * in->tuple_bytes;
	double		passes;

	if (braid_cost_is_onepass(in))
		(void) braid_cost_offload_refs(in->rows, total, in->budget_bytes, 0,
									   in->table_pages, braid_cost_page_visit_ns(in),
									   in->spill_ns_per_byte, &passes);
	else
		passes = passes_for(total, braid_cost_gather_arena(in->budget_bytes,
														   in->table_pages,
														   in->tuple_bytes,
														   braid_cost_merges_ahead(in) ?
														   BRAID_REFS_MERGED_AHEAD :
														   BRAID_REFS_ON_DEVICE));
	return passes;
}

/*
 * braid_cost_page_visits
 *		Heap pages the gather visits in all: each batch visits the distinct
 *		pages its rows fall on.  Rows in random order land on pages at
 *		random; rows sorted in (or against) the table's physical order fill
 *		whole pages, few per batch.  Between the two, weighted by the
 *		squared correlation of the sort order with the physical order, as
 *		PostgreSQL's index scan costing does (cost_index).
 */
double
braid_cost_page_visits(const BraidCostInput *in)
{
	double		passes = braid_cost_gather_passes(in);
	double		rows_per_pass = in->rows / passes;
	double		random,
				ordered,
				c2 = in->correlation * in->correlation;

	if (in->table_pages <= 0)
		return 0;
	if (in->rows <= 0)
		return 0;
	random = in->table_pages * (1.0 - exp(-rows_per_pass / in->table_pages));
	ordered = ceil(rows_per_pass / (in->rows / in->table_pages));
	if (ordered > in->table_pages)
		ordered = in->table_pages;
	return passes * (c2 * ordered + (1.0 - c2) * random);
}

/*
 * braid_cost_gather_pass_ns
 *		One pass of the gather over the table, at the budget's batches: its
 *		page visits (braid_cost_page_visits over the passes) at what a
 *		visit costs.  What a write-limited sort's held memory costs per
 *		pass it adds (wlimit.c).
 */
double
braid_cost_gather_pass_ns(const BraidCostInput *in)
{
	double		passes = braid_cost_gather_passes(in);

	if (passes <= 0)
		return 0;
	return braid_cost_page_visits(in) / passes * braid_cost_page_visit_ns(in);
}

/*
 * braid_cost_page_visit_ns
 *		What one of the gather's page visits costs: a page in shared buffers
 *		when the table is cached, else a read through the buffer ring, in
 *		the table's order (the kernel reads ahead) or at random, weighted by
 *		the squared correlation as braid_cost_page_visits weighs the visits.
 */
double
braid_cost_page_visit_ns(const BraidCostInput *in)
{
	double		c2 = in->correlation * in->correlation;

	if (in->table_cached)
		return BRAID_NS_PER_PAGE_REVISIT;
	return c2 * BRAID_NS_PER_PAGE_REREAD + (1.0 - c2) * BRAID_NS_PER_PAGE_REREAD_RANDOM;
}
