/*-------------------------------------------------------------------------
 *
 * wlimit.h
 *	  Cost model of braidsort's write-limited sort modes (Viglas, VLDB 2014,
 *	  §2.1, worked out for IndexMaps in wlimit.c): MergePass, hybrid,
 *	  segment and lazy, their lines written and read, their time, and lazy's
 *	  run-time read-over-write rule.
 *
 * Pure C (no PostgreSQL calls, no globals written: callable from any
 * thread).  See wlimit.c for the formulas and the default constants.
 *
 * src/core/wlimit.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_WLIMIT_H
#define BRAID_WLIMIT_H

#include <stdbool.h>

typedef enum BraidWlMode
{
	BRAID_WL_MERGEPASS = 0,		/* every entry written once per pass */
	BRAID_WL_HYBRID,			/* the last budget-full of entries stays in
								 * memory */
	BRAID_WL_SEGMENT,			/* share x through MergePass runs, the rest by
								 * selection passes */
	BRAID_WL_LAZY,				/* selection passes; remainder written once by
								 * the read-over-write rule */
	BRAID_WL_NMODES
} BraidWlMode;

typedef struct BraidWlInput
{
	double		rows;			/* N: entries to sort */
	double		budget_entries; /* M: entries the budget holds (IndexMap) */
	double		pass_room_entries;	/* candidates a selection pass after
									 * lazy's build holds (and segment's
									 * virtual run); 0: M/2, half the budget
									 * when the IndexMap has all of it */
	double		run_entry_bytes;	/* bytes of an entry in a run
									 * (front-coded) */
	double		mat_entry_bytes;	/* bytes of an entry in lazy's
									 * materialized file */
	double		write_ns;		/* w: ns per 64-byte line written to the spill
								 * device */
	double		read_ns;		/* r: ns per line read from it */
	double		run_cpu_ns;		/* CPU ns per entry to sort it and code it
								 * into a run */
	double		merge_cpu_ns;	/* CPU ns per entry per loser-tree level in a
								 * merge */
	double		pass_row_ns;	/* ns per input row to re-read it in a
								 * selection pass (rescan of the heap scan or
								 * value-log read, key encoding, compare with
								 * the bound) */
	double		select_cpu_ns;	/* CPU ns per candidate kept in a selection
								 * pass (the candidate buffer is sorted and
								 * halved when full) */
	double		mat_read_cpu_ns;	/* CPU ns per entry to decode lazy's
									 * materialized file */
	int			fanin;			/* runs one merge takes at once */
	bool		can_reread;		/* the input can be re-read (segment, lazy
								 * possible) */
	bool		pass_rereads_all;	/* a segment selection pass re-reads the
									 * whole input (N rows), not only the
									 * segment's first (1-x)N rows; false (the
									 * executor's way) unless the scan cannot
									 * stop early */
	/* the late gather, whose memory a mode holding some during it shrinks */
	double		gather_bytes;	/* bytes of the rows the gather brings back by
								 * TID (0: no gather term) */
	double		budget_bytes;	/* the budget: the gather's memory after a
								 * MergePass */
	double		gather_pass_ms; /* one gather pass over the table */
} BraidWlInput;

typedef struct BraidWlEstimate
{
	BraidWlMode mode;
	bool		feasible;		/* the mode can run within the write intensity
								 * asked */
	double		write_intensity;	/* lines written / MergePass's lines
									 * written (0..1; 0 if MergePass writes
									 * nothing) */
	double		segment_share;	/* SEGMENT: x, the share of the input through
								 * runs */
	double		lines_written;
	double		lines_read;		/* spill-device lines read (runs, lazy's
								 * file); re-reads of the input are in ms */
	double		input_passes;	/* times the input is read, the build included
								 * (1 for MergePass and hybrid) */
	double		selection_passes;	/* SEGMENT, LAZY: selection passes (LAZY:
									 * the build is the first) */
	double		materialize_at; /* LAZY: the pass before which the remainder
								 * is written (0: never) */
	double		merge_passes;	/* intermediate merge passes (the final merge
								 * not counted) */
	double		held_bytes;		/* memory the mode holds during the gather
								 * (its memory run, its candidates' room) */
	double		gather_ms;		/* the gather's extra time for having that
								 * much less memory than after a MergePass */
	double		ms;				/* estimated time of the sorting part
								 * (everything after building the entries of
								 * the first read: runs, merges, passes) and
								 * gather_ms */
} BraidWlEstimate;

/*
 * Write intensity meaning "no limit": each mode at its cost-optimal choice.
 * Any negative value means the same.
 */
#define BRAID_WL_NO_LIMIT (-1.0)

/*
 * Fills every field with defaults (see wlimit.c); the caller sets rows,
 * budget_entries, fanin, can_reread and, if known, the device's w and r.
 */
extern void braid_wl_input_defaults(BraidWlInput *in);
extern double braid_wl_run_entry_bytes(double key_bytes);

/*
 * One mode at one write intensity (-1 = the mode's cost-optimal choice;
 * 0..1 = at most that share of MergePass's lines written: segment takes
 * x <= it, lazy materializes only if that stays within it, hybrid and
 * MergePass are infeasible if their fixed writes exceed it).
 */
extern void braid_wl_estimate(const BraidWlInput *in, BraidWlMode mode,
							  double write_intensity, BraidWlEstimate *out);

/* SEGMENT at a given share x (0..1) of the input through runs. */
extern void braid_wl_estimate_segment(const BraidWlInput *in, double x,
									  BraidWlEstimate *out);

/* All modes (est[mode]), and the fastest feasible one (MergePass if none is). */
extern BraidWlMode braid_wl_choose(const BraidWlInput *in, double write_intensity,
								   BraidWlEstimate est[BRAID_WL_NMODES]);

/*
 * LAZY at run time, before each selection pass after the first: write the
 * remaining entries now?  passes_done = selection passes so far (the first
 * is the build), remaining = entries not yet emitted.  Viglas's
 * read-over-write rule: materialize when accumulated re-read cost + the
 * cost of constructing the remainder (one more read of the input) >= the
 * cost of writing it, and only if the write stays within write_intensity x
 * MergePass's lines (-1: no limit).
 */
extern bool braid_wl_lazy_materialize(const BraidWlInput *in, double write_intensity,
									  double passes_done, double remaining);

/* Lines MergePass writes (the reference of every write intensity). */
extern double braid_wl_mergepass_lines(const BraidWlInput *in);

/*
 * Entries a selection pass emits where passes are not counted one by one:
 * 0.8 of its room (at least one).
 */
extern double braid_wl_pass_entries(const BraidWlInput *in);

/* Segment's selection passes over a head of rows; the most rows k emit. */
extern double braid_wl_segment_passes(const BraidWlInput *in, double rows);
extern double braid_wl_segment_pass_bound(const BraidWlInput *in, int k);

/* Entries a lazy sort has left after its first passes_done passes. */
extern double braid_wl_lazy_entries_left(const BraidWlInput *in, double passes_done);

/* "mergepass", "hybrid", "segment", "lazy" ("invalid" otherwise). */
extern const char *braid_wl_mode_name(BraidWlMode mode);

#endif							/* BRAID_WLIMIT_H */
