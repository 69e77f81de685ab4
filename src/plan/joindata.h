/*-------------------------------------------------------------------------
 *
 * joindata.h
 *	  What the planner leaves a BraidJoin (joindata.c).
 *
 * src/plan/joindata.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_JOINDATA_H
#define BRAID_JOINDATA_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "core/joinmodel.h"

/* The node's CustomName, as EXPLAIN shows it and plans name it. */
#define BRAID_JOIN_NAME "BraidJoin"

/*
 * All BraidJoins of the server together keep at most this many blocks
 * pinned for their fetches by TID (join/join_rows.c, take_held_block); the
 * planner declines, unless forced, a join under a Gather whose processes
 * would need more for the inner table (join_plan.c).  NBuffers is in
 * miscadmin.h.
 */
#define JOIN_MAX_HELD_BLOCKS	((uint64) NBuffers / 4)

/*
 * Partitions by key range (join_plan.c's range_bounds) are sized for this
 * share of the memory: the histogram is a sample, its intervals
 * interpolated.
 */
#define JOIN_RANGE_BUDGET_SHARE		0.9

/*
 * Most partitions of a join whose processes partition the inner input
 * together: its shared memory holds each process's files of each
 * (join_shared.c).
 */
#define BRAID_JOIN_SHARED_MAX_PARTITIONS	256


/*
 * What the planner leaves a BraidJoin in CustomScan.custom_private.  Its
 * expressions are in custom_exprs: the outer hash keys (OUTER_VAR), the
 * inner hash keys (INNER_VAR), the join qual and the hash clauses (both).
 */
typedef struct BraidJoinPlanData
{
	int			jointype;		/* JOIN_INNER, JOIN_LEFT, JOIN_SEMI, JOIN_ANTI */
	bool		single_match;	/* an outer row matches one inner row at most
								 * (SEMI, or a unique inner side) */
	int			mode;			/* BraidJoinMode to run */
	double		write_intensity;	/* as braidsort.write_intensity said */
	int			partitions;		/* planned k */
	double		inner_rows;		/* planner's estimates */
	double		outer_rows;
	double		join_rows;
	int			inner_width;
	int			outer_width;
	int			pg_batches;		/* PostgreSQL's planned batches */
	int			pg_sharers;		/* processes that would share PostgreSQL's
								 * hash table (a Parallel Hash replaced, each
								 * process now reading the inner input whole),
								 * else 1 */
	double		outer_uncached_pages;	/* pages of an outer table read by TID
										 * that its buffers do not hold
										 * (larger than half of shared
										 * buffers, or of temp_buffers for a
										 * temporary table), else 0 */
	bool		shared_inner;	/* a Parallel Hash replaced: the processes
								 * partition their shares of the inner
								 * parallel scan, each joins them all
								 * (join_shared.c), else each reads it whole */
	bool		inner_by_tid;	/* the input is a heap scan: refs are TIDs */
	bool		outer_by_tid;	/* (else its rows go to a value log) */
	bool		inner_rescan;	/* the input can be read again */
	bool		outer_rescan;
	bool		exact_key;		/* SEMI/ANTI without join qual on one key
								 * whose value is an exact integer form: inner
								 * entries carry the key, not a ref, and inner
								 * rows are never fetched */
	List	   *hashops;		/* hash operator of each key (Oids) */
	List	   *hashcolls;		/* its collation */
	List	   *range_bounds;	/* partitions by key range: the k - 1 bounds
								 * of the first key's exact form (String nodes
								 * of int64, braid_jm_range_bounds), else NIL:
								 * by hash */
} BraidJoinPlanData;

extern List *braid_join_pack(const BraidJoinPlanData *data);
extern void braid_join_unpack(List *private, BraidJoinPlanData *data);
extern bool braid_join_exact_key_type(Oid type);
extern int64 braid_join_exact_form(Oid type, Datum value);
extern void braid_join_model_input(const BraidJoinPlanData *data, size_t budget,
								   BraidJmInput *in);
extern double braid_join_pg_ms(const BraidJoinPlanData *data, const BraidJmInput *in);
extern BraidJoinMode braid_join_choose(const BraidJoinPlanData *data, const BraidJmInput *in,
									   BraidJmEstimate est[BRAID_JM_NMODES]);


#endif							/* BRAID_JOINDATA_H */
