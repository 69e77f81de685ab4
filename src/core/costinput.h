/*-------------------------------------------------------------------------
 *
 * costinput.h
 *	  What the sort's cost models are given, and the measured constants
 *	  more than one of them uses (costmem.c, costgather.c, costmodel.c).
 *
 * Pure C (no PostgreSQL calls).
 *
 * src/core/costinput.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_COSTINPUT_H
#define BRAID_COSTINPUT_H

#include <stdbool.h>

/* Where braidsort gets whole rows back after sorting keys. */
typedef enum BraidGatherFrom
{
	BRAID_FROM_ANY = 0,			/* (input only) whichever is cheaper */
	BRAID_FROM_HEAP_TID = 1,	/* refetched from the table by TID, late */
	BRAID_FROM_VALUE_LOG = 2	/* kept in a value log as they are read */
} BraidGatherFrom;

typedef struct BraidCostInput
{
	double		rows;			/* estimated rows to sort (in one process) */
	double		sort_width;		/* bytes per row in PostgreSQL's sort */
	double		tuple_bytes;	/* bytes per heap tuple refetched */
	double		row_bytes;		/* bytes per row kept in a value log; 0 =
								 * tuple_bytes */
	bool		heap_refetch;	/* rows can be refetched by TID (a heap scan
								 * feeds the sort); else only a value log */
	BraidGatherFrom only_from;	/* a gather source the DBA insists on, or
								 * BRAID_FROM_ANY (braidsort.gather_source) */
	double		entry_bytes;	/* bytes per IndexMap entry */
	double		full_key_bytes; /* bytes per row of full keys kept beside the
								 * entries (a collated key, or keys longer
								 * than the prefix): in memory, in every run
								 * and every merge pass; 0 = none */
	double		budget_bytes;	/* braidsort's IndexMap budget */
	double		sort_mem_bytes; /* work_mem of PostgreSQL's sort */
	double		table_pages;	/* pages of the table gathered from */
	double		correlation;	/* of the table's physical order with the sort
								 * order (pg_stats, first key): -1..1, 0 if
								 * unknown */
	bool		table_cached;	/* table fits the shared buffers it may use */
	double		spill_ns_per_byte;	/* profiled write + read cost of a spilled
									 * byte; 0 = no profile */
	bool		collated;		/* a key is ordered by a collation's
								 * comparator (both sorts compare strings) */
	double		collated_distinct;	/* distinct values of the collated keys
									 * together (0: as many as rows) */
	int			collated_keys;	/* keys ordered by a collation's comparator
								 * (0: one) */
	double		collated_first_distinct;	/* distinct values of the first of
											 * them (0: unknown, the sort
											 * finds out) */
	double		collated_group_rows;	/* rows tied on the keys before the
										 * first collated key, which only
										 * those ties reach (0: the rows; it
										 * is the first key; < 0: unknown, see
										 * braid_cost_estimate) */
	bool		numeric_key;	/* the first key is a numeric (PostgreSQL
								 * compares digits, braidsort encodes them) */
	bool		abbreviated_key;	/* the first key is a bytea, or a string
									 * under the C collation: PostgreSQL makes
									 * every row an abbreviated key of its
									 * bytes */
	double		tie_distinct;	/* distinct values of the first key of a sort
								 * by several (ANALYZE's); 0: one key, or
								 * unknown */
	int			tie_walk_columns;	/* columns PostgreSQL's sort steps over to
									 * read the second key in a tuple (0: at a
									 * fixed offset) */
	bool		tie_numeric;	/* the second key is a numeric */
	int			sort_threads;	/* threads braidsort sorts with (per process) */
	int			processes;		/* processes running the sort at once (a
								 * parallel plan's workers and leader); 0 = 1 */
	bool		partial;		/* each process sorts its share of the rows
								 * (its input is a parallel-aware scan), not
								 * all of them */
	int			cpus;			/* CPUs of the machine; 0 = sort_threads */
} BraidCostInput;

/* Both sides' estimates, what braidsort would gather from, and the verdict. */
typedef struct BraidCostEstimate
{
	double		pg_ns;			/* PostgreSQL's sort */
	double		tid_ns;			/* braidsort gathering by heap TID (HUGE_VAL
								 * if the rows cannot be refetched) */
	double		vlog_ns;		/* braidsort gathering from a value log */
	double		braid_ns;		/* the cheaper of the two */
	BraidGatherFrom from;		/* ... and which it is */
	bool		prefers;		/* braidsort should replace the Sort */
	const char *why;			/* if not, why not */
	bool		small;			/* not, only because the rows are expected to
								 * be few or to fit in work_mem: an estimate
								 * the run time may prove wrong */
} BraidCostEstimate;

/* braidsort takes a sort when its estimate is at most this share of PostgreSQL's. */
#define BRAID_COST_MARGIN 0.85

/* Rows below which a sort is too small to be worth replacing. */
#define BRAID_MIN_ROWS 1000.0

/*
 * Budget charged per run being merged: the budget divided by this is the
 * merge fan-in, within [2, BRAID_MAX_FANIN] (braid_cost_merge_fanin).  Runs
 * are read in place from their mappings, so a run's reader holds no read
 * buffer, only its cursor (about BRAID_MERGE_READER_BYTES) and its current
 * key rebuilt from the front coding (sort/runmerge.c), in a buffer that grows by
 * doubling to up to twice the longest key.  With long keys the readers
 * take at most a quarter of the budget.  (It was 256 kB, PostgreSQL's read
 * buffer per tape: a fan-in of 2 below 768 kB of budget, and a merge pass,
 * writing every entry again, for each doubling of the runs.)
 */
#define BRAID_MERGE_RUN_BYTES (16.0 * 1024.0)
#define BRAID_MERGE_READER_BYTES 512.0
#define BRAID_MAX_FANIN 1024

/*
 * Gather bookkeeping by page of the table: per page, the buffer it was last
 * found in and the counting sort's bucket (4 bytes each); per distinct page
 * of a batch (at most one a row, at most the table's pages), the block and
 * where its rows start (4 bytes each).  braid_cost_gather_arena() takes it
 * off the memory.
 */
#define BRAID_GATHER_PAGE_BYTES 8.0
#define BRAID_GATHER_BLOCK_BYTES 8.0

/*
 * Measured constants both the sort's estimate (costmodel.c) and the
 * gather's (costgather.c) use: a page visited again by the gather, in
 * shared buffers or read back through its buffer ring (a table over half
 * of shared_buffers) in the table's order, or at random (the sort order
 * unrelated to the table's), and a byte written to the spill device and
 * read back when the device has no profile (a DAX mount's memory speed, ~4
 * GB/s for both).  A page read at random from the kernel's page cache into
 * the ring measured ~2.1 us (the sortbenchmark's 20M rows, a 2.6 GB table,
 * shared_buffers 2GB, one process: 3.07M reads and 3.74M hits in 7.2 s of
 * gather) and ~2.3 us in each of three processes on two CPUs, 1 December:
 * about twice the 2 us a visit in the table's order costs, in the model's
 * units (about 1.8x the measured, costmodel.c).
 */
#define BRAID_NS_PER_PAGE_REVISIT	200.0
#define BRAID_NS_PER_PAGE_REREAD	2000.0
#define BRAID_NS_PER_PAGE_REREAD_RANDOM	4000.0
#define BRAID_DEFAULT_SPILL_NS_PER_BYTE		0.5

/* Where a gather batch's refs are, which sets its bookkeeping per row. */
typedef enum BraidRefsAt
{
	BRAID_REFS_IN_MEMORY = 0,	/* a OnePass sort's refs, in place */
	BRAID_REFS_ON_DEVICE = 1,	/* each batch's copied from the device */
	BRAID_REFS_MERGED_AHEAD = 2 /* and the next batch's merged meanwhile */
} BraidRefsAt;

#endif							/* BRAID_COSTINPUT_H */
