/*-------------------------------------------------------------------------
 *
 * costmem.h
 *	  What a sort holds: the IndexMap's bytes and its split of the budget
 *	  with the full keys, the runs it writes and their merge passes, what
 *	  it puts on the spill device (costmem.c).
 *
 * src/core/costmem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_COSTMEM_H
#define BRAID_COSTMEM_H

#include "core/costinput.h"

extern double braid_cost_split_key_memory(double full_key_bytes, bool collated);
extern double braid_cost_split_entries(double key_memory, double room, double stride,
									   bool trusted);
extern double braid_cost_split_rows(double key_memory, double room, double stride,
									bool trusted);
extern double braid_cost_budget_rows(double rows, double key_memory, double room,
									 double stride);
extern double braid_cost_indexmap_bytes(const BraidCostInput *in);
extern double braid_cost_pg_sort_bytes(const BraidCostInput *in);
extern bool braid_cost_is_onepass(const BraidCostInput *in);
extern bool braid_cost_spills(const BraidCostInput *in, BraidGatherFrom from);
extern bool braid_cost_spills_rows(const BraidCostInput *in, BraidGatherFrom from,
								   double rows);
extern double braid_cost_device_bytes(const BraidCostInput *in, BraidGatherFrom from);
extern double braid_cost_shared_device_bytes(const BraidCostInput *in, BraidGatherFrom from,
											 int processes);
extern int	braid_cost_merge_fanin(double budget_bytes, double key_bytes);
extern int	braid_cost_merge_readers(double budget_bytes, double key_bytes);
extern double braid_cost_merge_passes(const BraidCostInput *in, BraidGatherFrom from);
extern double braid_cost_map_budget(const BraidCostInput *in, BraidGatherFrom from);
extern double braid_cost_full_key_memory(const BraidCostInput *in);
extern double braid_cost_vlog_row_bytes(const BraidCostInput *in);
extern bool braid_cost_vlog_on_device(const BraidCostInput *in);
extern double braid_cost_vlog_device_bytes(const BraidCostInput *in, bool reserved);
extern double braid_cost_runs_written(const BraidCostInput *in, BraidGatherFrom from);

#endif							/* BRAID_COSTMEM_H */
