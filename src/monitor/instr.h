/*-------------------------------------------------------------------------
 *
 * instr.h
 *	  What a BraidSort or BraidJoin node did (its EXPLAIN ANALYZE figures),
 *	  and the figures of its parallel workers, passed to the leader.
 *
 * src/monitor/instr.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_INSTR_H
#define BRAID_INSTR_H

#include "postgres.h"

#include "io/device.h"

/* Where the rows come back from ("Gather Source"). */
typedef enum BraidGatherSource
{
	BRAID_SOURCE_HEAP_TID,		/* refetched from the table */
	BRAID_SOURCE_MEMORY,		/* a value log that stayed in memory */
	BRAID_SOURCE_VALUE_LOG		/* a value log on the spill device */
} BraidGatherSource;

/* Where the sorted refs were ("Sorted Refs"; heap TID mode only). */
typedef enum BraidSortedRefs
{
	BRAID_SORTED_REFS_NONE,		/* value log mode */
	BRAID_SORTED_REFS_MEMORY,
	BRAID_SORTED_REFS_DEVICE,
	BRAID_SORTED_REFS_STREAM	/* a final merge streamed into the gather */
} BraidSortedRefs;

/* Which path an adaptive node's last sort took ("Sort Method"). */
typedef enum BraidAdaptivePath
{
	BRAID_ADAPTIVE_NONE,		/* not adaptive: braidsort's path */
	BRAID_ADAPTIVE_TUPLESORT,	/* stayed PostgreSQL's sort */
	BRAID_ADAPTIVE_SWITCHED		/* switched to braidsort's path */
} BraidAdaptivePath;

/*
 * A node's instrumentation.  Plain data: a parallel worker copies it into
 * shared memory for its leader's EXPLAIN.  Each field means the same in a
 * worker's report as in the leader's node.
 */
typedef struct BraidSortInstr
{
	/* counted over every sort of the node (its loops) */
	int64		sorts;
	int64		rows_sorted;
	int64		runs;
	int64		merge_passes;	/* the final merge included */
	BraidDeviceStats device;
	int64		gather_batches;
	int64		rows_merged_ahead;
	double		build_ms;
	double		sort_ms;		/* with the runs made during the build */
	double		merge_ms;		/* merge passes before the first row */
	double		merge_stream_ms;	/* the final merge, streamed (inside
									 * gather_ms) */
	double		gather_ms;
	int64		selection_passes;	/* write-limited sorts' passes (a lazy
									 * sort's build included) */
	int64		memory_run_entries; /* entries merged from memory, never
									 * written (hybrid, segment) */
	double		select_ms;		/* selection passes after the build (inside
								 * merge_ms or gather_ms) */
	/* the largest over the sorts */
	size_t		peak_map_bytes;
	size_t		peak_gather_bytes;
	size_t		peak_rank_bytes;	/* collation ranks' dictionaries */
	int			ranked_keys;	/* collated keys ranked (sort/sort_map.c) */
	int			shared_parts;	/* a shared sort's participants whose runs or
								 * entries this process took, itself included
								 * (0: not shared, sort/sort_shared.c) */
	int64		shared_rows;	/* ... and the rows they built */
	int			shared_runs;	/* ... and the runs of the others among them */
	bool		rank_tried;		/* a sort tried to rank its keys */
	/* the last sort */
	int			sort_threads;
	BraidGatherSource gather_source;
	BraidSortedRefs sorted_refs;
	bool		merge_ahead;	/* a helper took batches of its final merge */
	int			wl_mode;		/* BraidWlMode it ran (MergePass: none) */
	bool		materialized;	/* a lazy sort wrote its remainder once */
	BraidAdaptivePath adaptive; /* adaptive node: the path taken */
	int64		switched_at_rows;	/* ... rows read when it switched */
	int64		switch_declined_rows;	/* ... or when the cost model left it
										 * to PostgreSQL's external sort */
	bool		switch_estimated;	/* ... the cost model was asked: */
	double		switch_braid_ms;	/* ... its estimate of braidsort's path */
	double		switch_pg_ms;	/* ... and of PostgreSQL's external sort */
	int			tuplesort_method;	/* ... TuplesortMethod, if it stayed */
	bool		tuplesort_disk; /* ... its space was on disk */
	int64		tuplesort_kb;	/* ... and how much */
} BraidSortInstr;

/* What a BraidJoin node did with one of its inputs. */
typedef struct BraidJoinSideInstr
{
	int64		materialized;	/* partitions whose entries it wrote */
	int64		rescans;
	int64		pinned_peak;	/* blocks held pinned at most */
	BraidDeviceStats device;
} BraidJoinSideInstr;

/*
 * A BraidJoin node's instrumentation, as its EXPLAIN ANALYZE shows it: the
 * device traffic and times over every execution (its loops), the rest of
 * the last one.  Plain data, as BraidSortInstr.
 */
typedef struct BraidJoinInstr
{
	bool		joined;			/* an execution began (in any loop) */
	int			partitions;
	int64		rounds;
	bool		evicted;		/* partition 0 was written out */
	int			lazy_from;		/* lazy wrote from this partition on (0:
								 * never) */
	size_t		peak_table_bytes;
	BraidJoinSideInstr outer;
	BraidJoinSideInstr inner;
	double		first_ms;
	double		rounds_ms;
} BraidJoinInstr;

/* Which node's figures a report holds. */
typedef enum BraidInstrKind
{
	BRAID_INSTR_SORT,
	BRAID_INSTR_JOIN
} BraidInstrKind;

/* A node's figures, of its kind. */
typedef union BraidNodeInstr
{
	BraidSortInstr sort;
	BraidJoinInstr join;
} BraidNodeInstr;

/* One parallel worker's figures, as its leader reads them. */
typedef struct BraidWorkerInstr
{
	int			worker;			/* ParallelWorkerNumber */
	BraidInstrKind kind;
	BraidNodeInstr u;
} BraidWorkerInstr;

/* set-up, registered with braid_shmem_add() (shmem.c) */
extern void braid_instr_shmem_request(void);
extern void braid_instr_shmem_init(void);

/* a parallel worker's node, as it ends */
extern void braid_instr_report(int node, const BraidSortInstr *instr);
extern void braid_instr_report_join(int node, const BraidJoinInstr *instr);

/* the leader's node */
extern void braid_instr_leader_begin(int node);
extern BraidWorkerInstr *braid_instr_worker_reports(int node, BraidInstrKind kind,
													int *nreports);
extern void braid_instr_leader_end(int node);

#endif							/* BRAID_INSTR_H */
