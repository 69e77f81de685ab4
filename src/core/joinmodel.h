/*-------------------------------------------------------------------------
 *
 * joinmodel.h
 *	  Cost model of BraidJoin's write-limited hash join modes (Viglas, VLDB
 *	  2014, §2.2, worked out for entries in joinmodel.c): grace, hybrid
 *	  (Grace-nested-loops), segmented and lazy; which partitions of each
 *	  input are written, the lines written and read, the rescans and the
 *	  time; and lazy's run-time read-over-write rule.
 *
 * Pure C (no PostgreSQL calls, no globals written: callable from any
 * thread).  See joinmodel.c for the formulas and the default constants.
 *
 * src/core/joinmodel.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_JOINMODEL_H
#define BRAID_JOINMODEL_H

#include <stdbool.h>
#include <stdint.h>

typedef enum BraidJoinMode
{
	BRAID_JM_GRACE = 0,			/* every partition of both inputs written */
	BRAID_JM_HYBRID,			/* a share of each input's partitions written,
								 * the smaller input first; the rest joined by
								 * passes that rescan */
	BRAID_JM_SEGMENTED,			/* x of the partitions written (both inputs),
								 * the rest rebuilt by rescanning */
	BRAID_JM_LAZY,				/* nothing written while rescanning costs
								 * less; then the remainder, once */
	BRAID_JM_NMODES
} BraidJoinMode;

/* The largest partition count the model and the executor use. */
#define BRAID_JM_MAX_PARTITIONS 1024

/*
 * A join is taken (without braidsort.force) only when braid_jm_against_pg_ms
 * is below this share of PostgreSQL's estimate: a smaller expected gain is
 * within the model's error (the 1M x 10M join at 64 batches, expected 9%
 * faster, measured 1.03x and 0.90x in 4 kB pages; a join of 4 matches an
 * outer row expected 1% faster ran 1.7x slower).  The 300k x 3M join at 64
 * batches, expected 14% faster, measured 1.07x to 1.19x.
 */
#define BRAID_JM_TAKE_MARGIN 0.90

/*
 * match_fetch_ns when partitions are by key range (join_plan.c): a round's
 * inner rows lie in a k-th of the inner table, and a match's fetch stays
 * within the caches.  By hand (1M x 10M rows, dev cluster, 4 kB pages,
 * paired runs), partitions by range took 0.75-0.9 of the time by hash, about
 * 60-90 ns a match less, so nothing is left of the 60 ns a match costs
 * over PostgreSQL's own (JM_DEFAULT_MATCH_NS).
 */
#define BRAID_JM_RANGE_MATCH_NS 0.0

typedef struct BraidJmInput
{
	double		inner_rows;		/* |T|: rows of the inner input (hashed) */
	double		outer_rows;		/* |V|: rows of the outer input (probing) */
	double		entry_bytes;	/* bytes of an entry on the device */
	double		table_entry_bytes;	/* bytes an inner entry takes in the
									 * in-memory table (entry, bucket offset) */
	double		budget_bytes;	/* M: memory for the in-memory table */
	double		write_ns;		/* w: ns per 64-byte line written */
	double		read_ns;		/* r: ns per line read */
	double		inner_row_ns;	/* ns per inner row to read it (scan or value
								 * log) and hash it */
	double		outer_row_ns;	/* ns per outer row to read it and hash it */
	double		entry_cpu_ns;	/* CPU ns per entry to write it or read it
								 * back (beside the device's lines) */
	double		fetch_ns;		/* ns to fetch an outer row by its ref when
								 * its entry comes from a written partition
								 * (it is in hand when its input is scanned) */
	double		probe_ns;		/* ns per outer row to probe the table */
	double		match_rows;		/* inner rows fetched by ref for the join's
								 * output (about its rows) */
	double		match_fetch_ns; /* ns to fetch one of them, anywhere in the
								 * inner input, recheck and emit the pair */
	double		outer_uncached_pages;	/* pages of the outer table, read by
										 * TID, when shared buffers do not
										 * hold it (0: they do) */
	double		match_width;	/* bytes of the inner row a match fetches by
								 * heap TID (the inner input's width), 0 when
								 * matches fetch no heap row */
	double		inner_log_width;	/* bytes of an inner row written to the
									 * value log (the input is not read by
									 * heap TID), else 0 */
	double		outer_log_width;	/* the same for the outer input */
	double		inner_share;	/* share of the inner input one process reads
								 * and partitions (1, or 1/processes when they
								 * partition it together and each reads every
								 * process's partitions back: partition 0's
								 * entries written too) */
	bool		inner_rescan;	/* the inner input can be read again */
	bool		outer_rescan;	/* the outer input can be read again */
} BraidJmInput;

typedef struct BraidJmEstimate
{
	BraidJoinMode mode;
	bool		feasible;		/* possible at the asked write intensity */
	int			partitions;		/* k: partition 0 stays in memory */
	int			mat_inner;		/* partitions 1..k-1 of the inner input
								 * written (lazy: expected) */
	int			mat_outer;		/* and of the outer input */
	double		write_intensity;	/* lines written / grace's */
	double		lines_written;
	double		lines_read;
	double		rescans;		/* passes over an input beyond the first */
	double		ms;				/* estimated time */
} BraidJmEstimate;

extern void braid_jm_input_defaults(BraidJmInput *in);
extern int	braid_jm_partitions(const BraidJmInput *in);
extern void braid_jm_estimate(const BraidJmInput *in, BraidJoinMode mode,
							  double write_intensity, BraidJmEstimate *est);
extern BraidJoinMode braid_jm_choose(const BraidJmInput *in, double write_intensity,
									 BraidJmEstimate est[BRAID_JM_NMODES]);
extern bool braid_jm_lazy_materialize(const BraidJmInput *in, int partitions,
									  int round, double write_intensity);
extern void braid_jm_plan_sides(const BraidJmInput *in, BraidJoinMode mode,
								double write_intensity, int partitions,
								int *mat_inner, int *mat_outer);
extern double braid_jm_pg_ms(const BraidJmInput *in, double batches,
							 double inner_width, double outer_width);
extern double braid_jm_against_pg_ms(const BraidJmInput *in, const BraidJmEstimate *est);

extern double braid_jm_outer_page_visits(double outer_rows, double outer_pages,
										 const BraidJmEstimate *est);
extern const char *braid_jm_mode_name(BraidJoinMode mode);
extern bool braid_jm_range_bounds(const int64_t *hist, int nhist, int k, double first_share,
								  int64_t *bounds);

#endif							/* BRAID_JOINMODEL_H */
