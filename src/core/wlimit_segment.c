/*-------------------------------------------------------------------------
 *
 * wlimit_segment.c
 *	  The write-limited model's segment sort: its cost at a share x of the
 *	  input through runs, and the search for its cheapest x within a write
 *	  intensity (SEGMENT(x) in wlimit.c's header).
 *
 * Pure C (no PostgreSQL calls, no globals written).
 *
 * src/core/wlimit_segment.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wlimit_model.h"

/*
 * The share of a budget-full hybrid and segment keep in memory at run time
 * (sort_wlimit.c leaves 2% to spare for rows beyond the estimate).
 */
#define WL_MEMORY_RUN_KEPT	0.98

/* Breakpoints evaluated exactly at each end of segment's x range. */
#define WL_SEGMENT_EDGE_POINTS	256
/* ... strided breakpoints in between, and the uniform grid. */
#define WL_SEGMENT_MID_POINTS	512
#define WL_SEGMENT_GRID_POINTS	256

/*
 * braid_wlm_est_segment_at: segment sort with share x of the input through
 * runs.
 */
void
braid_wlm_est_segment_at(const WlParams *p, double x, BraidWlEstimate *out)
{
	double		e,
				s,
				streams = 0.0,
				npasses,
				kept,
				per_pass,
				cpu;

	x = fmin(fmax(x, 0.0), 1.0);
	e = x * p->n;
	s = p->n - e;
	if (s < 1e-9 * p->n)
	{
		s = 0.0;
		e = p->n;
	}
	out->segment_share = x;
	cpu = 0.0;
	if (e > 0.0)
	{
		/* built as hybrid: its last budget-full stays in memory */
		double		written = fmax(e - p->m, 0.0);

		/* (x = M/N computed back to e = M) */
		if (written <= 1e-9 * p->n)
			written = 0.0;

		if (written > 0.0)
		{
			WlMerges	mg;

			braid_wlm_merges(p, written, true, &mg);
			out->lines_written = (written + mg.rewritten) * p->l_run;
			out->merge_passes = mg.passes;
			streams = mg.final_runs;
			cpu += p->merge_cpu * mg.levels;
		}
		streams += 1.0;
		cpu += e * p->run_cpu;
	}
	out->lines_read = out->lines_written;
	npasses = braid_wlm_segment_passes(p, s, &kept);
	if (s > 0.0)
		streams += 1.0;
	if (streams > 1.0)
		cpu += p->n * p->merge_cpu * log2(streams);
	per_pass = p->rereads_all ? p->n : s;
	cpu += npasses * per_pass * p->c + p->sel * kept;
	out->selection_passes = npasses;
	out->input_passes = 1.0 + npasses;
	out->ms = (cpu + out->lines_written * p->w + out->lines_read * p->r) / 1e6;
}

/* The range segment's x is searched in, and its write limit. */
typedef struct WlSegmentSearch
{
	double		wi;				/* write intensity (< 0: no limit) */
	double		mp_lines;		/* MergePass's lines */
	bool		have;			/* best holds a candidate */
} WlSegmentSearch;

/*
 * segment_consider: evaluate segment at x and keep it in best if it writes
 * within the limit and is cheaper (on a tie, the smaller x: fewer writes).
 * x <= wi does not quite bound the lines: a last run left out of an
 * intermediate pass can make MergePass rewrite a little less than the runs
 * of a segment just under N.
 */
static void
segment_consider(const WlParams *p, double x, BraidWlEstimate *best,
				 WlSegmentSearch *ss)
{
	BraidWlEstimate e;

	braid_wlm_clear(BRAID_WL_SEGMENT, &e);
	braid_wlm_est_segment_at(p, x, &e);
	braid_wlm_gather_term(p, &e);
	if (!braid_wlm_fits(e.lines_written, ss->mp_lines, ss->wi))
		return;
	if (!ss->have ||
		e.ms < best->ms * (1.0 - 1e-12) ||
		(e.ms <= best->ms * (1.0 + 1e-12) && e.segment_share < best->segment_share))
	{
		*best = e;
		ss->have = true;
	}
}

/*
 * segment_breakpoints: consider x = 1 - (base + k*step)/N (from_top) or
 * k*step/N for k in [k0, k1]: every k within WL_SEGMENT_EDGE_POINTS of
 * either end, strided between.  At a run count's breakpoint (not from_top)
 * the cost jumps: one entry more starts a run of its own, which can leave
 * a merge group (and its rewrite) smaller, so x + 1/N is considered too.
 */
static void
segment_breakpoints(const WlParams *p, double base, double step, bool from_top,
					double k0, double k1, BraidWlEstimate *best, WlSegmentSearch *ss)
{
	double		stride;

	if (k1 < k0)
		return;
	stride = fmax(1.0, floor((k1 - k0) / WL_SEGMENT_MID_POINTS));
	for (double k = k0; k <= k1;)
	{
		double		x = from_top ? 1.0 - (base + k * step) / p->n : k * step / p->n;

		segment_consider(p, x, best, ss);
		if (!from_top)
			segment_consider(p, fmin(x + 1.0 / p->n, 1.0), best, ss);
		if (k - k0 < WL_SEGMENT_EDGE_POINTS || k1 - k <= WL_SEGMENT_EDGE_POINTS)
			k += 1.0;
		else
			k = fmin(k + stride, k1 - WL_SEGMENT_EDGE_POINTS);
	}
}

/*
 * braid_wlm_est_segment: segment at its cheapest x within [0, min(wi +
 * kept, 1)] (the whole of [0, 1] when wi < 0) whose lines stay within wi of
 * MergePass's, kept the share of the input its memory run holds (the runs
 * write about x - M/N of MergePass's lines), less the runtime's margin
 * (WL_MEMORY_RUN_KEPT): at intensity 0, runs that fit in memory even with a
 * few more rows than estimated.  x = 0 writes nothing, so there is always
 * one.
 */
void
braid_wlm_est_segment(const WlParams *p, double wi, BraidWlEstimate *out)
{
	WlSegmentSearch ss;
	double		top;

	top = wi < 0.0 ? 1.0 : fmin(wi + WL_MEMORY_RUN_KEPT * p->m / fmax(p->n, 1.0), 1.0);
	ss.wi = wi;
	ss.mp_lines = braid_wlm_mergepass_lines(p);
	ss.have = false;
	segment_consider(p, 0.0, out, &ss);
	segment_consider(p, top, out, &ss);
	for (int i = 1; i < WL_SEGMENT_GRID_POINTS; i++)
		segment_consider(p, top * i / WL_SEGMENT_GRID_POINTS, out, &ss);

	/*
	 * the pass count's breakpoints: S at a pass bound (the most rows k passes
	 * emit), x = 1 - S/N in [0, top]; beyond the last bound, S = last + k*h
	 */
	for (int k = 0; k < p->npass_bounds; k++)
		if (p->pass_bounds[k] <= p->n && p->pass_bounds[k] >= (1.0 - top) * p->n)
			segment_consider(p, 1.0 - p->pass_bounds[k] / p->n, out, &ss);
	if (p->npass_bounds > 0 && p->pass_bounds[p->npass_bounds - 1] < p->n)
	{
		double		last = p->pass_bounds[p->npass_bounds - 1];

		segment_breakpoints(p, last, p->h, true,
							fmax(ceil(((1.0 - top) * p->n - last) / p->h), 1.0),
							floor((p->n - last) / p->h), out, &ss);
	}
	/* the run count's: x*N = j*M (j = 1: the memory run's share) */
	segment_breakpoints(p, 0.0, p->m, false, 1.0, floor(top * p->n / p->m), out, &ss);
}
