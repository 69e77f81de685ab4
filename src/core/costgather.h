/*-------------------------------------------------------------------------
 *
 * costgather.h
 *	  The late gather's batches, passes over the table and page visits
 *	  (costgather.c).
 *
 * src/core/costgather.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_COSTGATHER_H
#define BRAID_COSTGATHER_H

#include "core/costinput.h"

extern double braid_cost_batch_arena(double mem, double row_bytes,
									 BraidRefsAt refs_at);
extern double braid_cost_gather_arena(double mem, double table_pages,
									  double row_bytes, BraidRefsAt refs_at);
extern bool braid_cost_offload_refs(double rows, double total_bytes, double budget,
									double arena_cap, double table_pages,
									double page_ns, double spill_ns_per_byte,
									double *passes);
extern bool braid_cost_merges_ahead(const BraidCostInput *in);
extern double braid_cost_gather_passes(const BraidCostInput *in);
extern double braid_cost_page_visits(const BraidCostInput *in);
extern double braid_cost_gather_pass_ns(const BraidCostInput *in);
extern double braid_cost_page_visit_ns(const BraidCostInput *in);

#endif							/* BRAID_COSTGATHER_H */
