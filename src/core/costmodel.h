/*-------------------------------------------------------------------------
 *
 * costmodel.h
 *	  When braidsort's key/TID sort is expected to beat PostgreSQL's Sort,
 *	  and whether it is expected to spill (MergePass).
 *
 * The model stands on costinput.h (what it is given), costmem.h (what the
 * sort holds and writes) and costgather.h (the late gather's passes), which
 * this header brings in for its callers.  Pure C (no PostgreSQL calls) so
 * the decision can be unit-tested.
 *
 * src/core/costmodel.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_COSTMODEL_H
#define BRAID_COSTMODEL_H

#include "core/costgather.h"
#include "core/costinput.h"
#include "core/costmem.h"

/* the least share of a merge's collated comparisons its memos leave */
#define BRAID_MERGE_MEMO_FLOOR		0.1

extern bool braid_cost_ranks(const BraidCostInput *in, BraidGatherFrom from,
							 double *saving_ns);
extern double braid_cost_thread_speedup(const BraidCostInput *in);
extern double braid_cost_merge_memo_share(const BraidCostInput *in, double run_rows);
extern double braid_cost_pg_ns(const BraidCostInput *in);
extern double braid_cost_tid_ns(const BraidCostInput *in);
extern double braid_cost_vlog_ns(const BraidCostInput *in);
extern double braid_cost_braid_ns(const BraidCostInput *in);
extern void braid_cost_estimate(const BraidCostInput *in, BraidCostEstimate *est);

/*
 * A Gather Merge over each process's sort of its share of a parallel scan,
 * against one sort of all the rows over the scan made serial
 * (braid_cost_one_sort).  Wall-clock estimates of the whole plan's sorting
 * part, in ns.
 */
typedef struct BraidOneSortEstimate
{
	double		pg_ns;			/* PostgreSQL's: each process's Sort, and the
								 * Gather Merge */
	double		each_ns;		/* a BraidSort in each process, and the Gather
								 * Merge; HUGE_VAL if braidsort would not take
								 * them */
	double		one_ns;			/* one BraidSort of all the rows, and the scan
								 * read in one process */
	double		shared_ns;		/* a shared sort where braidsort would take it
								 * (braid_cost_shared_sort), else HUGE_VAL */
	bool		prefers;		/* one sort is the fastest: by the margin
								 * against PostgreSQL's, or of the BraidSorts
								 * the cost model takes in each process or a
								 * shared sort */
	const char *why;			/* if not, why not */
} BraidOneSortEstimate;

extern double braid_cost_gather_merge_ns(double rows);
extern void braid_cost_one_sort(const BraidCostInput *each, const BraidCostEstimate *each_est,
								bool each_taken, const BraidCostEstimate *one_est,
								double rows, double scan_ns, double shared_ns,
								BraidOneSortEstimate *out);
extern bool braid_cost_shared_sort(const BraidCostInput *each, const BraidCostEstimate *each_est,
								   bool each_taken, double rows, double *shared_ns,
								   double *pg_ns);
extern bool braid_cost_prefers(const BraidCostInput *in, const char **why);

#endif							/* BRAID_COSTMODEL_H */
