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

extern bool braid_cost_ranks(const BraidCostInput *in, BraidGatherFrom from,
							 double *saving_ns);
extern double braid_cost_thread_speedup(const BraidCostInput *in);
extern double braid_cost_pg_ns(const BraidCostInput *in);
extern double braid_cost_tid_ns(const BraidCostInput *in);
extern double braid_cost_vlog_ns(const BraidCostInput *in);
extern double braid_cost_braid_ns(const BraidCostInput *in);
extern void braid_cost_estimate(const BraidCostInput *in, BraidCostEstimate *est);
extern bool braid_cost_prefers(const BraidCostInput *in, const char **why);

#endif							/* BRAID_COSTMODEL_H */
