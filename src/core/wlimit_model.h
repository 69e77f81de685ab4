/*-------------------------------------------------------------------------
 *
 * wlimit_model.h
 *	  The write-limited cost model's parts that its files share: the
 *	  sanitized inputs and the helpers every mode's estimate uses
 *	  (wlimit_model.c).  Local to src/core: wlimit.c (the model, MergePass,
 *	  hybrid, the public functions) calls wlimit_segment.c (segment's search
 *	  for its share x) and wlimit_lazy.c (lazy's passes and its
 *	  read-over-write rule), and all three call wlimit_model.c: the calls
 *	  run one way.  Callers outside include wlimit.h.
 *
 * Pure C (no PostgreSQL calls, no globals written).
 *
 * src/core/wlimit_model.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_WLIMIT_MODEL_H
#define BRAID_WLIMIT_MODEL_H

#include <stdbool.h>

#include "core/wlimit.h"

/* The bytes of a line, the unit the model counts writes and reads in. */
#define WL_LINE_BYTES	64.0

/*
 * Segment's selection passes counted one by one (braid_wlm_segment_passes)
 * up to this many; beyond, at h each.
 */
#define WL_SEGMENT_EXACT_PASSES	64

/* The inputs, sanitized: finite, non-negative, M >= 1, h >= 1, F >= 2. */
typedef struct WlParams
{
	double		n;
	double		m;
	double		h;
	double		cap;
	double		l_run;
	double		l_mat;
	double		w;
	double		r;
	double		run_cpu;
	double		merge_cpu;
	double		c;
	double		sel;
	double		mat_cpu;
	double		fanin;
	bool		can_reread;
	bool		rereads_all;
	double		gather_bytes;
	double		budget_bytes;
	double		gather_pass_ms;

	/*
	 * segment's pass bounds: pass_bounds[k - 1] the most rows k selection
	 * passes emit (k <= npass_bounds, the last one at least n or the
	 * WL_SEGMENT_EXACT_PASSES'th; braid_wlm_set_pass_bounds)
	 */
	double		pass_bounds[WL_SEGMENT_EXACT_PASSES];
	/* pass_kept[k - 1]: candidates kept by passes over B_1..B_k rows */
	double		pass_kept[WL_SEGMENT_EXACT_PASSES];
	int			npass_bounds;
} WlParams;

/* A MergePass over some entries: its passes and what they cost. */
typedef struct WlMerges
{
	double		passes;			/* intermediate passes */
	double		rewritten;		/* entries written again by them */
	double		levels;			/* entry-levels of their loser trees */
	double		final_runs;		/* runs the final merge takes */
} WlMerges;


/* wlimit_model.c */
extern double braid_wlm_ceil_div(double a, double b);
extern void braid_wlm_merges(const WlParams *p, double e, bool partial_first,
							 WlMerges *out);
extern double braid_wlm_kept_in(double s, double room);
extern double braid_wlm_kept(const WlParams *p, double s);
extern double braid_wlm_kept_sum(const WlParams *p, double s, double npasses);
extern double braid_wlm_pass_emits(double s, double room);
extern void braid_wlm_set_pass_bounds(WlParams *p);
extern double braid_wlm_segment_passes(const WlParams *p, double s, double *kept);
extern double braid_wlm_mergepass_lines(const WlParams *p);
extern bool braid_wlm_fits(double lines, double mp_lines, double wi);
extern void braid_wlm_clear(BraidWlMode mode, BraidWlEstimate *out);
extern void braid_wlm_gather_term(const WlParams *p, BraidWlEstimate *out);

/* wlimit_segment.c */
extern void braid_wlm_est_segment_at(const WlParams *p, double x,
									 BraidWlEstimate *out);
extern void braid_wlm_est_segment(const WlParams *p, double wi,
								  BraidWlEstimate *out);

/* wlimit_lazy.c */
extern bool braid_wlm_lazy_wants(const WlParams *p, double wi,
								 double passes_done, double remaining);
extern double braid_wlm_lazy_left(const WlParams *p, double k);
extern void braid_wlm_est_lazy(const WlParams *p, double wi,
							   BraidWlEstimate *out);

#endif							/* BRAID_WLIMIT_MODEL_H */
