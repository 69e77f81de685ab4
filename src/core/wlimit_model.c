/*-------------------------------------------------------------------------
 *
 * wlimit_model.c
 *	  What the write-limited cost model's modes share (wlimit_model.h):
 *	  MergePass's merges over some entries, the candidates a selection pass
 *	  keeps, a write limit's test, an empty estimate, and the gather term
 *	  (GATHER in wlimit.c's header), and what a selection pass emits and
 *	  how many passes segment makes.  wlimit.c, wlimit_segment.c and
 *	  wlimit_lazy.c call these; they call nothing of theirs.
 *
 * Pure C (no PostgreSQL calls, no globals written).
 *
 * src/core/wlimit_model.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wlimit_model.h"

/*
 * What a gather pass the held memory adds costs, as a share of the
 * planner's estimate of a pass (gather_pass_ms): measured with hybrid
 * against MergePass at no write cost (wlimit-20261130-002435: 0, 115 and
 * 189 ms more at beta 2, 4 and 8 where this term said 167, 320 and 507),
 * about a third.  The planner prices a pass's page visits as rereads of
 * pages not in shared buffers, where the table was in the page cache.
 */
#define WL_GATHER_EXTRA_PASS	0.35

#define WL_LN2			0.69314718055994530942
/* Passes of the candidates' sum added one by one before integrating. */
#define WL_KEPT_EXACT_TERMS		32

/*
 * braid_wlm_ceil_div: ceil(a / b) for a >= 0, b > 0, forgiving the rounding
 * error of a quotient that should be an integer (k*h/N computed back to k).
 */
double
braid_wlm_ceil_div(double a, double b)
{
	double		q;

	if (a <= 0.0)
		return 0.0;
	q = a / b;
	return ceil(q - q * 1e-12);
}

/*
 * braid_wlm_merges: the intermediate passes of a MergePass over e entries
 * in runs of M, merging groups of F from the first run while there are more
 * than F runs; a last group of one run is left as it is (sort_merge.c).
 * Runs are tracked as a first, middle ones of equal size and a last: the
 * partial run is the last one (MergePass) or, when partial_first, the first
 * one (hybrid and segment's runs, whose last budget-full stays in memory).
 */
void
braid_wlm_merges(const WlParams *p, double e, bool partial_first, WlMerges *out)
{
	double		runs = braid_wlm_ceil_div(e, p->m);
	double		partial = e - (runs - 1.0) * p->m;
	double		middle = p->m;
	double		last = partial_first ? p->m : partial;

	out->passes = 0;
	out->rewritten = 0;
	out->levels = 0;
	while (runs > p->fanin)
	{
		double		groups = ceil(runs / p->fanin);
		double		in_last = runs - (groups - 1.0) * p->fanin;
		double		last_group = (in_last - 1.0) * middle + last;

		if (in_last == 1.0)
			out->rewritten += e - last;
		else
		{
			out->rewritten += e;
			out->levels += last_group * log2(in_last);
			last = last_group;
		}
		out->levels += (e - last_group) * log2(p->fanin);
		middle *= p->fanin;
		runs = groups;
		out->passes++;
	}
	out->final_runs = runs;
}

/*
 * braid_wlm_kept_in: candidates a selection pass over s rows above its
 * bound keeps in a room of "room" candidates.
 */
double
braid_wlm_kept_in(double s, double room)
{
	if (s <= room)
		return s;
	return room + room / 2.0 * log2(s / room);
}

/* braid_wlm_kept: kept_in a later selection pass's room. */
double
braid_wlm_kept(const WlParams *p, double s)
{
	return braid_wlm_kept_in(s, p->cap);
}


/* log2_antiderivative: an antiderivative of log2(s / m) in s. */
static double
log2_antiderivative(double s, double m)
{
	return (s * log(s / m) - s) / WL_LN2;
}

/*
 * braid_wlm_kept_sum: candidates kept over passes 1..npasses of a selection
 * over s rows, pass k seeing the s - (k-1)*h rows above its bound.  Passes
 * seeing more rows than the candidates' room are summed one by one when
 * few, else by the midpoint rule (an integral of log2); the rest is an
 * arithmetic series.
 */
double
braid_wlm_kept_sum(const WlParams *p, double s, double npasses)
{
	double		big = 0.0;
	double		sum = 0.0;
	double		n2,
				first,
				last;

	if (s <= 0.0 || npasses <= 0.0)
		return 0.0;
	if (s > p->cap)
		big = fmin(braid_wlm_ceil_div(s - p->cap, p->h), npasses);
	if (big <= WL_KEPT_EXACT_TERMS)
	{
		for (double k = 0; k < big; k++)
			sum += braid_wlm_kept(p, s - k * p->h);
	}
	else
	{
		double		lo = s - (big - 1) * p->h - p->h / 2.0;
		double		hi = s + p->h / 2.0;

		sum = big * p->cap + p->cap / 2.0 / p->h *
			(log2_antiderivative(hi, p->cap) - log2_antiderivative(lo, p->cap));
	}
	n2 = npasses - big;
	if (n2 > 0)
	{
		first = s - big * p->h;
		last = fmax(s - (npasses - 1) * p->h, 0.0);
		sum += n2 * (fmax(first, 0.0) + last) / 2.0;
	}
	return sum;
}

/*
 * braid_wlm_pass_emits: entries a selection pass over s rows above its bound emits
 * when it holds "room" candidates (sort_select.c): all of them when they
 * fit; else the room fills at "room" rows and is halved (the larger half
 * dropped, the cutoff set at the rest's largest), after which a row gets in
 * with probability room / (2 * rows seen), so that it fills again after as
 * many rows again: at room, 2 room, 4 room... rows.  The pass ends with the
 * rows since the last halving on top of half the room:
 * (s/2) / 2^(ceil(log2(s/room)) - 1), between half the room and all of it.
 */
double
braid_wlm_pass_emits(double s, double room)
{
	int			j;

	if (s <= room)
		return s;
	/* the least j with s <= 2^j room, log2's rounding corrected exactly */
	j = (int) fmax(ceil(log2(s / room)), 1.0);
	while (ldexp(room, j) < s)
		j++;
	while (j > 1 && ldexp(room, j - 1) >= s)
		j--;
	return fmax(floor(ldexp(s, -j)), 1.0);
}

/*
 * pass_leaves: the rows above the bound a selection pass over s of them
 * leaves for the next (with the later passes' room).  It never decreases
 * as s grows: within one halving count s - s/2^j grows with s, and where s
 * passes 2^j * cap the pass emits about half as much as just below.
 */
static double
pass_leaves(const WlParams *p, double s)
{
	return fmax(s - braid_wlm_pass_emits(s, p->cap), 0.0);
}

/*
 * pass_bound_guess: about the largest s whose pass leaves b rows.  A pass
 * over s in (2^(j-1) cap, 2^j cap] halves its room j times and leaves about
 * s (1 - 2^-j), so s = b / (1 - 2^-j) for the j whose range holds it; where
 * that falls below its range, the leaves jumped past b at the range's
 * start, which is the answer.
 */
static double
pass_bound_guess(const WlParams *p, double b)
{
	for (int j = 1; j < 64; j++)
	{
		double		s = b / (1.0 - ldexp(1.0, -j));

		if (s <= ldexp(p->cap, j))
			return fmax(s, ldexp(p->cap, j - 1));
	}
	return b;
}

/*
 * braid_wlm_set_pass_bounds: p->pass_bounds, each the most rows one pass
 * more than the bound before emits: B_1 = cap, B_k the largest s whose pass
 * leaves at most B_(k-1) (pass_leaves never decreases: found by bisection
 * within one pass's room of B_(k-1)), until n or WL_SEGMENT_EXACT_PASSES.
 * The pass count of s rows rises by one just past each bound.  Every
 * estimate computes these, so the bisection starts from a few rows around
 * pass_bound_guess where the exact leaves confirm them (the same bounds in
 * a fifth of the steps), else from the whole room.
 */
void
braid_wlm_set_pass_bounds(WlParams *p)
{
	double		b = 0.0;

	p->npass_bounds = 0;
	while (p->npass_bounds < WL_SEGMENT_EXACT_PASSES && b < p->n)
	{
		double		lo = b,
					hi = b + p->cap,
					guess = floor(pass_bound_guess(p, b));

		if (guess - 4.0 > lo && guess - 4.0 <= hi && pass_leaves(p, guess - 4.0) <= b)
			lo = guess - 4.0;
		if (guess + 4.0 >= lo && guess + 4.0 < hi && pass_leaves(p, guess + 5.0) > b)
			hi = guess + 4.0;

		/* the largest integer s in [lo, hi] with pass_leaves(s) <= b */
		while (hi - lo > 0.5)
		{
			double		mid = floor((lo + hi + 1.0) / 2.0);

			if (pass_leaves(p, mid) <= b)
				lo = mid;
			else
				hi = mid - 1.0;
		}
		b = lo;
		p->pass_kept[p->npass_bounds] = braid_wlm_kept(p, b) +
			(p->npass_bounds > 0 ? p->pass_kept[p->npass_bounds - 1] : 0.0);
		p->pass_bounds[p->npass_bounds++] = b;
	}
}

/*
 * braid_wlm_segment_passes: the selection passes that emit s rows, each
 * pass with the later passes' room: k where s is in (B_(k-1), B_k], k
 * passes (a pass over s rows leaves at most B_(k-1), and so on down), or
 * beyond the last bound one more every h rows; *kept the candidates they
 * keep in all, the later passes' counted as if over the bounds (the most
 * they see).  Segment at intensity 0 measured 2, 8 and 19 passes over 5M
 * rows at beta 2, 4 and 8 (wlimit-20261130-141206), what this counts; at h
 * each (0.8 of a pass's room) the model had said 3, 8 and 17.  A search
 * over segment's share calls this some thousand times: a bisection of the
 * bounds, no walk over the passes.
 */
double
braid_wlm_segment_passes(const WlParams *p, double s, double *kept)
{
	int			lo = 0,
				hi;
	double		last,
				beyond;

	/*
	 * whole rows, as a pass counts them (a bound computed back through x, N -
	 * (1 - B/N) * N, comes out a hair off B)
	 */
	s = floor(s + 0.5);
	*kept = 0.0;
	if (s <= 0.0 || p->npass_bounds == 0)
		return 0.0;
	last = p->pass_bounds[p->npass_bounds - 1];
	if (s > last)
	{
		beyond = braid_wlm_ceil_div(s - last, p->h);
		*kept = braid_wlm_kept_sum(p, s, beyond) + p->pass_kept[p->npass_bounds - 1];
		return p->npass_bounds + beyond;
	}
	/* the least k (lo + 1) with s <= B_k */
	hi = p->npass_bounds - 1;
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (s <= p->pass_bounds[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	*kept = braid_wlm_kept(p, s) + (lo > 0 ? p->pass_kept[lo - 1] : 0.0);
	return lo + 1.0;
}

/* braid_wlm_mergepass_lines: lines MergePass writes (0 when N <= M). */
double
braid_wlm_mergepass_lines(const WlParams *p)
{
	WlMerges	mg;

	if (p->n <= p->m)
		return 0.0;
	braid_wlm_merges(p, p->n, false, &mg);
	return (p->n + mg.rewritten) * p->l_run;
}

/*
 * braid_wlm_fits: lines within write intensity wi (< 0: no limit) of
 * MergePass's.
 */
bool
braid_wlm_fits(double lines, double mp_lines, double wi)
{
	if (wi < 0.0 || lines <= 0.0)
		return true;
	return lines <= wi * mp_lines * (1.0 + 1e-9);
}

/* braid_wlm_clear: an empty estimate of a mode. */
void
braid_wlm_clear(BraidWlMode mode, BraidWlEstimate *out)
{
	out->mode = mode;
	out->feasible = true;
	out->write_intensity = 0;
	out->segment_share = 0;
	out->lines_written = 0;
	out->lines_read = 0;
	out->input_passes = 1;
	out->selection_passes = 0;
	out->materialize_at = 0;
	out->merge_passes = 0;
	out->held_bytes = 0;
	out->gather_ms = 0;
	out->ms = 0;
}

/*
 * braid_wlm_gather_term
 *		What the mode holds during the late gather, and the gather passes
 *		that costs (GATHER in wlimit.c's header), added to out->ms.
 */
void
braid_wlm_gather_term(const WlParams *p, BraidWlEstimate *out)
{
	double		b = p->budget_bytes;
	double		memrun = fmin(p->m, out->segment_share * p->n) * p->l_run * WL_LINE_BYTES;
	double		held = 0;
	double		full,
				less;

	switch (out->mode)
	{
		case BRAID_WL_HYBRID:
			held = p->m * p->l_run * WL_LINE_BYTES;
			break;
		case BRAID_WL_SEGMENT:
			held = (out->selection_passes > 0 ? b / 2 : 0) + memrun;
			break;
		case BRAID_WL_LAZY:
			held = out->selection_passes > 1 ? b / 2 : 0;
			break;
		default:
			break;
	}
	out->held_bytes = held;
	if (held <= 0 || b <= 0 || p->gather_bytes <= 0 || p->gather_pass_ms <= 0)
		return;
	full = braid_wlm_ceil_div(p->gather_bytes, b);
	less = braid_wlm_ceil_div(p->gather_bytes, fmax(b - held, b / 4));
	out->gather_ms = (less - full) * p->gather_pass_ms * WL_GATHER_EXTRA_PASS;
	out->ms += out->gather_ms;
}
