/*-------------------------------------------------------------------------
 *
 * wlimit_lazy.c
 *	  The write-limited model's lazy sort: its selection passes counted one
 *	  by one (what each really emits), Viglas's read-over-write rule, and
 *	  its estimate (LAZY in wlimit.c's header).
 *
 * Pure C (no PostgreSQL calls, no globals written).
 *
 * src/core/wlimit_lazy.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wlimit_model.h"

/*
 * Lazy's passes are counted one by one (braid_wlm_pass_emits), the first being the
 * build, whose candidates have the IndexMap's room, a budget-full
 * (sort_wlimit.c), the later ones the passes' room.  Counted so, lazy makes
 * 3, 9 and 20 passes over 5M rows at beta 2, 4 and 8, as
 * wlimit-20261130-141206 measured (with 0.8 of the room a pass: 4, 9 and
 * 19; 4, 9 and 18 at the grid's own budgets).  Beyond WL_EXACT_PASSES
 * passes the rest are counted at h each: an estimate walks the passes a
 * dozen times or so (the rule's binary search among them), so that bounds
 * it to some thousands of steps.
 */
#define WL_EXACT_PASSES		256

/*
 * braid_wlm_lazy_wants: the read-over-write rule without the condition on
 * the last pass: true from some passes_done on, as the remainder shrinks.
 */
bool
braid_wlm_lazy_wants(const WlParams *p, double wi, double passes_done, double remaining)
{
	double		reread = passes_done * p->n * p->c; /* (passes_done - 1)
													 * re-reads + one more */
	double		lines = remaining * p->l_mat;

	if (!p->can_reread || remaining <= 0.0)
		return false;
	/* no limit, or the write stays within it */
	if (!braid_wlm_fits(lines, braid_wlm_mergepass_lines(p), wi))
		return false;
	/* a pass over the file must be cheaper than one over the input */
	if (remaining * (p->l_mat * p->r + p->mat_cpu) >= p->n * p->c)
		return false;
	return reread >= lines * p->w;
}

/*
 * lazy_step: the entries lazy has left after its pass number k (1: the
 * build, with the IndexMap's room), when "left" were left before it; its
 * callers count passes beyond WL_EXACT_PASSES at h each themselves.
 */
static double
lazy_step(const WlParams *p, double k, double left)
{
	return fmax(left - braid_wlm_pass_emits(left, k <= 1.0 ? p->m : p->cap), 0.0);
}

/*
 * braid_wlm_lazy_left: entries lazy has not emitted after its first k
 * selection passes, each counted by pass_emits.
 */
double
braid_wlm_lazy_left(const WlParams *p, double k)
{
	double		left = p->n;

	for (double i = 1.0; i <= k && left > 0.0; i++)
	{
		if (i > WL_EXACT_PASSES)
			return fmax(left - (k - i + 1.0) * p->h, 0.0);
		left = lazy_step(p, i, left);
	}
	return left;
}

/* lazy_passes: lazy's selection passes, the build first. */
static double
lazy_passes(const WlParams *p)
{
	double		left = p->n;
	double		passes = 0.0;

	while (left > 0.0)
	{
		if (passes >= WL_EXACT_PASSES)
			return passes + braid_wlm_ceil_div(left, p->h);
		passes++;
		left = lazy_step(p, passes, left);
	}
	return fmax(passes, 1.0);
}

/*
 * lazy_kept: candidates lazy's passes after the build keep, over
 * npasses - 1 of them, each over the rows it sees.
 */
static double
lazy_kept(const WlParams *p, double npasses)
{
	double		sum = 0.0;
	double		left = braid_wlm_lazy_left(p, 1.0);

	for (double k = 2.0; k <= npasses && left > 0.0; k++)
	{
		if (k > WL_EXACT_PASSES)
			return sum + braid_wlm_kept_sum(p, left, npasses - k + 1.0);
		sum += braid_wlm_kept(p, left);
		left = lazy_step(p, k, left);
	}
	return sum;
}

/*
 * braid_wlm_est_lazy: selection passes, the remainder written once by the
 * rule.
 */
void
braid_wlm_est_lazy(const WlParams *p, double wi, BraidWlEstimate *out)
{
	double		npasses = lazy_passes(p);
	double		mat = 0.0;
	double		rereads,
				cpu;

	/* first passes_done in [1, npasses - 1] the rule holds at, if any */
	if (npasses >= 2 && braid_wlm_lazy_wants(p, wi, npasses - 1, braid_wlm_lazy_left(p, npasses - 1)))
	{
		double		lo = 1.0,
					hi = npasses - 1;

		while (lo < hi)
		{
			double		mid = floor((lo + hi) / 2.0);

			if (braid_wlm_lazy_wants(p, wi, mid, braid_wlm_lazy_left(p, mid)))
				hi = mid;
			else
				lo = mid + 1.0;
		}

		/*
		 * ... and a later pass reads the file (a pass over no more rows than
		 * its candidates' room emits them all)
		 */
		if (braid_wlm_lazy_left(p, lo) > p->cap)
			mat = lo + 1.0;
	}

	/* the build's candidates (in the IndexMap's room), then the later passes' */
	cpu = p->sel * (braid_wlm_kept_in(p->n, p->m) + lazy_kept(p, npasses));
	if (mat > 0.0)
	{
		double		rem = braid_wlm_lazy_left(p, mat - 1.0);
		double		later = npasses - mat;

		rereads = mat - 1.0;
		out->lines_written = rem * p->l_mat;
		out->lines_read = later * rem * p->l_mat;
		cpu += later * rem * p->mat_cpu;
	}
	else
		rereads = npasses - 1.0;
	cpu += rereads * p->n * p->c;
	out->materialize_at = mat;
	out->selection_passes = npasses;
	out->input_passes = 1.0 + rereads;
	out->ms = (cpu + out->lines_written * p->w + out->lines_read * p->r) / 1e6;
}
