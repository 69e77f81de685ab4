/*-------------------------------------------------------------------------
 *
 * plandata.h
 *	  What the planner tells the BraidSort executor, and how it travels.
 *
 * A CustomScan carries its private data as a List in custom_private, which
 * must stay copyable, printable and serializable for parallel workers:
 * nodes only (here a bytea constant and expression trees).
 * BraidSortPlanData is that data as a struct; braid_plan_pack() and
 * braid_plan_unpack() are the only functions that know its layout.
 *
 * src/plan/plandata.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PLANDATA_H
#define BRAID_PLANDATA_H

#include "postgres.h"

#include "access/attnum.h"
#include "nodes/pg_list.h"

/* How the node gets whole rows back after sorting. */
/* The node's CustomName, as EXPLAIN shows it and plans name it. */
#define BRAID_SORT_NAME "BraidSort"

#define BRAID_MODE_HEAP_TID		0	/* refetch from the table by TID */
#define BRAID_MODE_VALUE_LOG	1	/* read from the value log by offset */

typedef struct BraidSortPlanData
{
	int			nkeys;
	Oid		   *sortops;		/* sort operator of each key */
	Oid		   *collations;		/* its collation */
	bool	   *nullsfirst;		/* NULLS FIRST of each key */
	List	   *keyexprs;		/* key expressions (for EXPLAIN) */
	AttrNumber *keycols;		/* value log: input column of each key */
	AttrNumber *keyattnos;		/* heap TID mode, or NULL: table column of
								 * each key, read from the unprojected scan
								 * tuple */
	int			keylen;			/* bytes of key prefix per entry */
	bool		truncates;		/* some full key may be kept aside: a
								 * variable-width key may exceed keylen, a
								 * collated key always is */
	int			tuple_width;	/* planner's estimate of heap tuple bytes */
	int			sort_width;		/* ... of a sorted row's data, as PostgreSQL's
								 * Sort would hold it (NULL constants of
								 * unused columns left out; braidsort.stats) */
	bool		expect_spill;	/* the IndexMap is expected to spill */
	int			mode;			/* BRAID_MODE_* */
	int			processes;		/* processes running the node at once: a
								 * Gather's workers + 1 above it, else 1 */
	int			replaced_workers;	/* the node replaces a Gather Merge of
									 * this many planned workers' sorts (0:
									 * none) */
	bool		shared;			/* under a Gather, built by all its processes,
								 * sorted by one (sort/sort_shared.c) */
	int			wl_mode;		/* BraidWlMode (wlimit.h) should the IndexMap
								 * outgrow the budget */
	double		write_intensity;	/* as braidsort.write_intensity said: -1
									 * cost-optimal, else 0..1 */
	double		segment_share;	/* segment: share of the input through runs */
	int			gather_kb;		/* the late gather's rows by TID, in kB (0: a
								 * value log) */
	int			gather_pass_us; /* one gather pass over the table, in us */
	bool		can_reread;		/* the input can be read again: a plain heap
								 * scan to rescan, or a value log */
	bool		adaptive;		/* declined only for its row estimate: starts
								 * as PostgreSQL's in-memory sort, switches
								 * past work_mem (sort_adaptive.c) */
	int			key_tenths;		/* tenths of the bytes of a row's whole
								 * encoded key, estimated (0: unknown) */
	int			key_memory;		/* bytes an entry's full key is expected to
								 * take kept aside (0: none;
								 * braid_cost_split_key_memory) */
	bool		rank_collated;	/* sort collated keys by their ranks where
								 * they fit (braid_cost_ranks) */
	int			select_collated_ns; /* what a selection pass's candidate costs
									 * more than a run's entry: its collated
									 * keys compared, not ranked
									 * (braid_plan_wl_input) */
	int			est_braid_tenth_ms; /* the cost model's estimate of
									 * braidsort's sort as planned,
									 * MergePass's should it spill, per
									 * process, in tenths of ms; -1 for a sort
									 * taken adaptively, which is not
									 * estimated */
	int			est_pg_tenth_ms;	/* ... and of PostgreSQL's Sort */
} BraidSortPlanData;

extern List *braid_plan_pack(const BraidSortPlanData *data);
extern void braid_plan_unpack(List *private, BraidSortPlanData *data);
extern List *braid_plan_key_list(const BraidSortPlanData *data, List *context,
								 bool useprefix);

#endif							/* BRAID_PLANDATA_H */
