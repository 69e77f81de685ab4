/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Cumulative statistics of braidsort.stats.
 *
 * src/monitor/stats.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_STATS_H
#define BRAID_STATS_H

#include "monitor/instr.h"
#include "io/shmem.h"

extern bool braid_stats_declines_paused;

extern void braid_stats_count_decline(BraidDecline why);
extern void braid_stats_count_sort(BraidMethod method, bool value_log,
								   uint64 rows, uint64 value_bytes_avoided);
extern void braid_stats_count_join(int mode, uint64 rows);
extern void braid_stats_count_adaptive(BraidAdaptivePath path, bool declined);

#endif							/* BRAID_STATS_H */
