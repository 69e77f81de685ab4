/*-------------------------------------------------------------------------
 *
 * wlimit.c
 *	  Cost model of braidsort's write-limited sort modes: how many 64-byte
 *	  lines each writes to and reads from the spill device, how often it
 *	  reads its input, and how long its sorting part takes (everything
 *	  after the build's first read of the input and before the late
 *	  gather, which all modes share).
 *
 * Symbols: N entries, M entries per budget (the IndexMap's), C the
 * candidates a selection pass holds (pass_room_entries: M/2, or M over a
 * value log, which has half the budget for its buffer), h = 0.8 C entries
 * a segment sort's selection pass emits (WL_PASS_EMITS; lazy's passes are
 * counted one by one), F the fan-in, l = bytes / 64 lines per entry (l_run
 * in a run, l_mat in lazy's file), w and r ns per line written and read, c
 * = pass_row_ns.  A run holds M entries.
 *
 * MERGEPASS: R = ceil(N/M) runs.  While R > F an intermediate pass merges
 * groups of F runs into one (a group of one run left over is not
 * rewritten, as sort_merge.c does).  Lines written = lines read =
 * l_run * (N + entries rewritten by the passes), about N*l_run*(1 + passes).
 * CPU: N*run_cpu + merge_cpu * (entries of each pass * log2(F) + N *
 * log2(runs of the final merge)).
 *
 * HYBRID: the same over the first N - M entries; the last budget-full never
 * leaves memory and is one more stream of the final merge.  Writes
 * (N - M)*l_run per pass: 1 - 1/beta of MergePass's at beta = N/M <= F.
 *
 * SEGMENT(x): the last xN rows of the input are sorted as hybrid sorts
 * its input (runs, passes while they exceed F, the last budget-full kept
 * in memory); the first S = (1-x)N rows are a
 * virtual run, one more stream of the final merge, produced by P =
 * ceil(S/h) selection passes, each re-reading the S rows (N rows with
 * pass_rereads_all) at c each.  C(x) is minimised numerically over
 * [0, min(write intensity, 1)] (Viglas's Eq. 4 does not follow from his
 * Eq. 3, which drops a +1 term: his Eq. 1 is minimised instead).  Between two breakpoints of P (x_k = 1 - k*h/N) or
 * of the run count (x_j = j*M/N) the cost is linear in x apart from the
 * merge's log2 and the candidates' sum, so the minimum is searched at every
 * breakpoint near both ends, strided ones between, and a uniform grid; and
 * one entry past each run-count breakpoint, where a run of its own can
 * leave a merge group smaller (the lines still within the write limit).
 * With passes re-reading the whole input, C is linear in the pass count k
 * (k*(N*c - h*a) with a the run cost of an entry) down to the memory run's
 * share x = M/N, below which the runs write nothing: the optimum is x = 1,
 * M/N or a pass breakpoint next to it, away from 1 once l_run*(w+r) +
 * run_cpu exceeds about (N/h)*c.  With passes re-reading the segment only
 * (all S rows each pass), C is quadratic in k (k^2*h*c - k*h*a): the
 * optimum is k ~ a/(2c) passes, i.e. x* ~ 1 - a*h/(2*c*N) (= 1 -
 * a/(5*beta*c) with h = 0.4 M, 1 - a/(2.5*beta*c) over a value log)
 * clamped to [M/N, 1], interior once a exceeds c.
 *
 * LAZY: P selection passes feeding the gather directly, the build being
 * the first, with the IndexMap's room M for its candidates, the later
 * ones with C.  Each is counted by what it really emits (pass_emits): a
 * pass over S rows with room R ends with S / 2^j of them, the least j with
 * S <= 2^j R (all S when they fit), between R/2 and R; P is where nothing
 * is left.  Before pass n >= 2, braid_wl_lazy_materialize() decides; the
 * materializing pass m re-reads the input and writes its remainder R_m
 * (what the first m - 1 passes left) at l_mat; passes m+1..P read that
 * whole file
 * (R_m*l_mat*r + R_m*mat_read_cpu each), the passes before re-read the
 * input (N*c each).  Written once; nothing at write intensity 0.  The
 * build's candidates count (its reading does not, as in every mode), in
 * its room of M.
 *
 * Candidates: a selection pass over S_k rows above its bound keeps them
 * all while they fit its room of C; beyond, the room is halved at
 * about C, 2C, 4C... rows (each half of the new rows below the cutoff),
 * so it keeps kept(S) = C + (C/2)*log2(S/C) candidates, each at
 * select_cpu_ns (appending it and its share of sorting the buffer).
 *
 * GATHER: the modes other than MergePass keep memory during the late
 * gather (hybrid its memory run, about M*run_entry_bytes; segment that and
 * the virtual run's room, half the budget; lazy the passes' room, half
 * the budget), which the gather's batches then lack: with G bytes of rows to
 * bring back by TID, B the budget and H held, the gather makes
 * ceil(G / max(B - H, B/4)) passes over the table instead of ceil(G / B)
 * (as sort_gather.c sizes its arena), each WL_GATHER_EXTRA_PASS of
 * gather_pass_ms (as measured).  On a device
 * whose writes cost little this is what decides against hybrid.
 *
 * N <= M: every mode is the OnePass sort: feasible, no line written or
 * read, ms = N*run_cpu_ns, write intensity 0.
 *
 * Pure C (no PostgreSQL calls, no globals written).
 *
 * src/core/wlimit.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wlimit.h"

/*
 * Defaults, first guesses for one modern x86 core, to be calibrated
 * against measurements:
 *
 * - w, r: a tmpfs with no emulation (DRAM through the page cache):
 *	 non-temporal stores at ~8 GB/s, ~8 ns a line written; reads at
 *	 ~16 GB/s, ~4 ns a line.
 * - run_cpu: the threads benchmark sorted 5M IndexMap entries in 337 ms on
 *	 one thread (~67 ns an entry) and sorted and wrote runs in 433 ms
 *	 (~87 ns): ~85 ns an entry sorted and front-coded.
 * - merge_cpu: a loser-tree level is one prefix comparison and a move,
 *	 ~8 ns with the decoding of front-coded records spread over the levels.
 * - pass_row: a rescan of a heap scan whose pages are in shared buffers
 *	 (~70-90 ns a row through the fast path: the build took ~190 ns a row
 *	 including the IndexMap appends), the key encoding (~20 ns) and a
 *	 comparison with the bound: ~120 ns a row.
 * - select_cpu: appending a candidate (~10 ns) and its share of the
 *	 buffer's sorts (sorted about twice at ~45 ns): ~100 ns.
 * - mat_read_cpu: decoding an entry-log record <lengths, ref, key> and
 *	 comparing it with the bound: ~15 ns.
 * - entries: 13 bytes in a front-coded run, 20 in lazy's entry log (two
 *	 length bytes, an 8-byte ref and a 10-byte key) by default; the planner
 *	 sizes both from the encoded key instead (braid_wl_run_entry_bytes;
 *	 2 + 8 + the whole key for the entry log, as sort_select.c writes it);
 *	 fan-in 64 (what 1 MB of budget merges at once).
 */
#define WL_DEFAULT_WRITE_NS			8.0
#define WL_DEFAULT_READ_NS			4.0
#define WL_DEFAULT_RUN_CPU_NS		85.0
#define WL_DEFAULT_MERGE_CPU_NS		8.0
#define WL_DEFAULT_PASS_ROW_NS		120.0
#define WL_DEFAULT_SELECT_CPU_NS	100.0
#define WL_DEFAULT_MAT_READ_CPU_NS	15.0
#define WL_DEFAULT_RUN_ENTRY_BYTES	13.0
#define WL_DEFAULT_MAT_ENTRY_BYTES	20.0
#define WL_DEFAULT_FANIN			64

/*
 * A run's record (runfile.c): a byte of lengths, the key's suffix past
 * what it shares with the previous key, and the ref (a heap ref: the block
 * a varint of 3 bytes up to 16 GB of table, the line pointer 1, the length
 * mostly unchanged and then nothing).  Measured at the sortbenchmark shape
 * (wlimit-20261124-223150: a 10-byte bytea key, encoded 13 bytes with its
 * null mark and terminator; 5M rows in runs of 625k to 2.5M entries) a
 * record took 12.8-13.0 bytes: a suffix of 0.6 of the encoded key.
 */
#define WL_RECORD_LENGTHS	1.0
#define WL_RECORD_SUFFIX	0.6
#define WL_RECORD_REF		4.0

/*
 * A selection pass's candidates have half the budget (the gather's arena
 * the other half; pass_room_entries) and a pass emits between half and all
 * of its candidates (sort_select.c, compact): 0.8 of them on average as
 * measured (segment at intensity 0 made 5, 10 and 21 passes over 5M rows at
 * beta 2, 4 and 8 in wlimit-20261130-002435, where all of them a pass made
 * 4, 8 and 16).  Where the IndexMap has the whole budget that room is half
 * a budget-full and a pass emits 0.4 of one; over a value log the IndexMap
 * has half the budget (the log's buffer the other half) and the passes'
 * room is a whole budget-full.
 */
#define WL_PASS_EMITS	0.8

/*
 * Lazy's passes are counted one by one (pass_emits), the first being the
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
 * A mode other than MergePass is chosen over a feasible MergePass only
 * when it is estimated this much faster.  Where they are closer the
 * measured order is the machine's noise as often as the model's (hybrid
 * against MergePass at low write cost turned by 100-350 ms between runs of
 * 1-2 s), and MergePass, which holds no memory during the gather and
 * re-reads nothing, is the one whose estimate is surest.  Replayed on the
 * model's estimates and the measured times of two grids
 * (wlimit-20261130-013518 and -112614), 5% stops `auto` from choosing
 * hybrid where it ran more than 5% slower than MergePass (1 and 3 points
 * of 18 without it) and puts `auto` within 10% of the fastest
 * configuration at 18 and 13 points (17 and 12 without it).
 */
#define WL_CHOOSE_MARGIN	0.05

/*
 * What a gather pass the held memory adds costs, as a share of the
 * planner's estimate of a pass (gather_pass_ms): measured with hybrid
 * against MergePass at no write cost (wlimit-20261130-002435: 0, 115 and
 * 189 ms more at beta 2, 4 and 8 where this term said 167, 320 and 507),
 * about a third.  The planner prices a pass's page visits as rereads of
 * pages not in shared buffers, where the table was in the page cache.
 */
#define WL_GATHER_EXTRA_PASS	0.35

/*
 * The share of a budget-full hybrid and segment keep in memory at run time
 * (sort_wlimit.c leaves 2% to spare for rows beyond the estimate).
 */
#define WL_MEMORY_RUN_KEPT	0.98

#define WL_LINE_BYTES	64.0
#define WL_LN2			0.69314718055994530942
/* Largest value of any input (entries, bytes, ns). */
#define WL_MAX_INPUT	1e15

/* Breakpoints evaluated exactly at each end of segment's x range. */
#define WL_SEGMENT_EDGE_POINTS	256
/* ... strided breakpoints in between, and the uniform grid. */
#define WL_SEGMENT_MID_POINTS	512
#define WL_SEGMENT_GRID_POINTS	256

/* Passes of the candidates' sum added one by one before integrating. */
#define WL_KEPT_EXACT_TERMS		32

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
} WlParams;

static void gather_term(const WlParams *p, BraidWlEstimate *out);

/* A MergePass over some entries: its passes and what they cost. */
typedef struct WlMerges
{
	double		passes;			/* intermediate passes */
	double		rewritten;		/* entries written again by them */
	double		levels;			/* entry-levels of their loser trees */
	double		final_runs;		/* runs the final merge takes */
} WlMerges;

/*
 * nonneg: v if it is a non-negative number, else 0 (NaN included); at most
 * WL_MAX_INPUT, so that no product of inputs overflows.
 */
static double
nonneg(double v)
{
	if (!(v >= 0.0))
		return 0.0;
	return fmin(v, WL_MAX_INPUT);
}

/*
 * ceil_div: ceil(a / b) for a >= 0, b > 0, forgiving the rounding error of
 * a quotient that should be an integer (k*h/N computed back to k).
 */
static double
ceil_div(double a, double b)
{
	double		q;

	if (a <= 0.0)
		return 0.0;
	q = a / b;
	return ceil(q - q * 1e-12);
}

/* params: the sanitized inputs. */
static void
params(const BraidWlInput *in, WlParams *p)
{
	double		room;

	p->n = nonneg(in->rows);
	p->m = fmax(nonneg(in->budget_entries), 1.0);
	room = nonneg(in->pass_room_entries);
	if (room <= 0.0)
		room = p->m / 2.0;
	p->h = fmax(floor(room * WL_PASS_EMITS), 1.0);
	p->cap = fmax(floor(room), 1.0);
	p->l_run = nonneg(in->run_entry_bytes) / WL_LINE_BYTES;
	p->l_mat = nonneg(in->mat_entry_bytes) / WL_LINE_BYTES;
	p->w = nonneg(in->write_ns);
	p->r = nonneg(in->read_ns);
	p->run_cpu = nonneg(in->run_cpu_ns);
	p->merge_cpu = nonneg(in->merge_cpu_ns);
	p->c = nonneg(in->pass_row_ns);
	p->sel = nonneg(in->select_cpu_ns);
	p->mat_cpu = nonneg(in->mat_read_cpu_ns);
	p->fanin = in->fanin < 2 ? 2.0 : (double) in->fanin;
	p->can_reread = in->can_reread;
	p->rereads_all = in->pass_rereads_all;
	p->gather_bytes = nonneg(in->gather_bytes);
	p->budget_bytes = nonneg(in->budget_bytes);
	p->gather_pass_ms = nonneg(in->gather_pass_ms);
}

/*
 * merges: the intermediate passes of a MergePass over e entries in runs of
 * M, merging groups of F from the first run while there are more than F
 * runs; a last group of one run is left as it is (sort_merge.c).  Runs are
 * tracked as a first, middle ones of equal size and a last: the partial
 * run is the last one (MergePass) or, when partial_first, the first one
 * (hybrid and segment's runs, whose last budget-full stays in memory).
 */
static void
merges(const WlParams *p, double e, bool partial_first, WlMerges *out)
{
	double		runs = ceil_div(e, p->m);
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
 * kept_in: candidates a selection pass over s rows above its bound keeps
 * in a room of "room" candidates.
 */
static double
kept_in(double s, double room)
{
	if (s <= room)
		return s;
	return room + room / 2.0 * log2(s / room);
}

/* kept: kept_in a later selection pass's room. */
static double
kept(const WlParams *p, double s)
{
	return kept_in(s, p->cap);
}

/* log2_antiderivative: an antiderivative of log2(s / m) in s. */
static double
log2_antiderivative(double s, double m)
{
	return (s * log(s / m) - s) / WL_LN2;
}

/*
 * kept_sum: candidates kept over passes 1..npasses of a selection over s
 * rows, pass k seeing the s - (k-1)*h rows above its bound.  Passes seeing
 * more rows than the candidates' room are summed one by one when few, else by the midpoint
 * rule (an integral of log2); the rest is an arithmetic series.
 */
static double
kept_sum(const WlParams *p, double s, double npasses)
{
	double		big = 0.0;
	double		sum = 0.0;
	double		n2,
				first,
				last;

	if (s <= 0.0 || npasses <= 0.0)
		return 0.0;
	if (s > p->cap)
		big = fmin(ceil_div(s - p->cap, p->h), npasses);
	if (big <= WL_KEPT_EXACT_TERMS)
	{
		for (double k = 0; k < big; k++)
			sum += kept(p, s - k * p->h);
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

/* mergepass_lines: lines MergePass writes (0 when N <= M). */
static double
mergepass_lines(const WlParams *p)
{
	WlMerges	mg;

	if (p->n <= p->m)
		return 0.0;
	merges(p, p->n, false, &mg);
	return (p->n + mg.rewritten) * p->l_run;
}

/* fits: lines within write intensity wi (< 0: no limit) of MergePass's. */
static bool
fits(double lines, double mp_lines, double wi)
{
	if (wi < 0.0 || lines <= 0.0)
		return true;
	return lines <= wi * mp_lines * (1.0 + 1e-9);
}

/* finish: intensity and feasibility of an estimate whose lines are set. */
static void
finish(const WlParams *p, double wi, BraidWlEstimate *out)
{
	double		mp = mergepass_lines(p);

	out->write_intensity = mp > 0.0 ? out->lines_written / mp : 0.0;
	out->feasible = fits(out->lines_written, mp, wi);
	if ((out->mode == BRAID_WL_SEGMENT || out->mode == BRAID_WL_LAZY) &&
		!p->can_reread && p->n > p->m)
		out->feasible = false;
}

/* clear: an empty estimate of a mode. */
static void
clear(BraidWlMode mode, BraidWlEstimate *out)
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

/* onepass: N <= M, every mode sorts the IndexMap in place. */
static void
onepass(const WlParams *p, BraidWlMode mode, BraidWlEstimate *out)
{
	clear(mode, out);
	out->ms = p->n * p->run_cpu / 1e6;
}

/* est_mergepass: every entry through runs. */
static void
est_mergepass(const WlParams *p, BraidWlEstimate *out)
{
	WlMerges	mg;
	double		cpu;

	merges(p, p->n, false, &mg);
	out->lines_written = (p->n + mg.rewritten) * p->l_run;
	out->lines_read = out->lines_written;
	out->merge_passes = mg.passes;
	out->segment_share = 1;
	cpu = p->n * p->run_cpu +
		p->merge_cpu * (mg.levels + p->n * log2(mg.final_runs));
	out->ms = (cpu + out->lines_written * p->w + out->lines_read * p->r) / 1e6;
}

/* est_hybrid: the last budget-full merged from memory, never written. */
static void
est_hybrid(const WlParams *p, BraidWlEstimate *out)
{
	WlMerges	mg;
	double		e = p->n - p->m;
	double		cpu;

	merges(p, e, true, &mg);
	out->lines_written = (e + mg.rewritten) * p->l_run;
	out->lines_read = out->lines_written;
	out->merge_passes = mg.passes;
	out->segment_share = 1;
	cpu = p->n * p->run_cpu +
		p->merge_cpu * (mg.levels + p->n * log2(mg.final_runs + 1.0));
	out->ms = (cpu + out->lines_written * p->w + out->lines_read * p->r) / 1e6;
}

/* est_segment_at: segment sort with share x of the input through runs. */
static void
est_segment_at(const WlParams *p, double x, BraidWlEstimate *out)
{
	double		e,
				s,
				streams = 0.0,
				npasses,
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

			merges(p, written, true, &mg);
			out->lines_written = (written + mg.rewritten) * p->l_run;
			out->merge_passes = mg.passes;
			streams = mg.final_runs;
			cpu += p->merge_cpu * mg.levels;
		}
		streams += 1.0;
		cpu += e * p->run_cpu;
	}
	out->lines_read = out->lines_written;
	npasses = ceil_div(s, p->h);
	if (s > 0.0)
		streams += 1.0;
	if (streams > 1.0)
		cpu += p->n * p->merge_cpu * log2(streams);
	per_pass = p->rereads_all ? p->n : s;
	cpu += npasses * per_pass * p->c + p->sel * kept_sum(p, s, npasses);
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

	clear(BRAID_WL_SEGMENT, &e);
	est_segment_at(p, x, &e);
	gather_term(p, &e);
	if (!fits(e.lines_written, ss->mp_lines, ss->wi))
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
 * segment_breakpoints: consider x = 1 - k*step/N (from_top) or k*step/N for
 * k in [k0, k1]: every k within WL_SEGMENT_EDGE_POINTS of either end,
 * strided between.  At a run count's breakpoint (not from_top) the cost
 * jumps: one entry more starts a run of its own, which can leave a merge
 * group (and its rewrite) smaller, so x + 1/N is considered too.
 */
static void
segment_breakpoints(const WlParams *p, double step, bool from_top, double k0, double k1,
					BraidWlEstimate *best, WlSegmentSearch *ss)
{
	double		stride;

	if (k1 < k0)
		return;
	stride = fmax(1.0, floor((k1 - k0) / WL_SEGMENT_MID_POINTS));
	for (double k = k0; k <= k1;)
	{
		double		x = from_top ? 1.0 - k * step / p->n : k * step / p->n;

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
 * est_segment: segment at its cheapest x within [0, min(wi + kept, 1)] (the
 * whole of [0, 1] when wi < 0) whose lines stay within wi of MergePass's,
 * kept the share of the input its memory run holds (the runs write about x
 * - M/N of MergePass's lines), less the runtime's margin
 * (WL_MEMORY_RUN_KEPT): at intensity 0, runs that fit in memory even with
 * a few more rows than estimated.  x = 0 writes nothing, so there is always
 * one.
 */
static void
est_segment(const WlParams *p, double wi, BraidWlEstimate *out)
{
	WlSegmentSearch ss;
	double		top;

	top = wi < 0.0 ? 1.0 : fmin(wi + WL_MEMORY_RUN_KEPT * p->m / fmax(p->n, 1.0), 1.0);
	ss.wi = wi;
	ss.mp_lines = mergepass_lines(p);
	ss.have = false;
	segment_consider(p, 0.0, out, &ss);
	segment_consider(p, top, out, &ss);
	for (int i = 1; i < WL_SEGMENT_GRID_POINTS; i++)
		segment_consider(p, top * i / WL_SEGMENT_GRID_POINTS, out, &ss);
	/* the pass count's breakpoints: S = k*h, x = 1 - k*h/N in [0, top] */
	segment_breakpoints(p, p->h, true, ceil((1.0 - top) * p->n / p->h),
						floor(p->n / p->h), out, &ss);
	/* the run count's: x*N = j*M (j = 1: the memory run's share) */
	segment_breakpoints(p, p->m, false, 1.0, floor(top * p->n / p->m), out, &ss);
}

/*
 * lazy_wants: the read-over-write rule without the condition on the last
 * pass: true from some passes_done on, as the remainder shrinks.
 */
static bool
lazy_wants(const WlParams *p, double wi, double passes_done, double remaining)
{
	double		reread = passes_done * p->n * p->c; /* (passes_done - 1)
													 * re-reads + one more */
	double		lines = remaining * p->l_mat;

	if (!p->can_reread || remaining <= 0.0)
		return false;
	/* no limit, or the write stays within it */
	if (!fits(lines, mergepass_lines(p), wi))
		return false;
	/* a pass over the file must be cheaper than one over the input */
	if (remaining * (p->l_mat * p->r + p->mat_cpu) >= p->n * p->c)
		return false;
	return reread >= lines * p->w;
}

/*
 * pass_emits: entries a selection pass over s rows above its bound emits
 * when it holds "room" candidates (sort_select.c): all of them when they
 * fit; else the room fills at "room" rows and is halved (the larger half
 * dropped, the cutoff set at the rest's largest), after which a row gets in
 * with probability room / (2 * rows seen), so that it fills again after as
 * many rows again: at room, 2 room, 4 room... rows.  The pass ends with the
 * rows since the last halving on top of half the room:
 * (s/2) / 2^(ceil(log2(s/room)) - 1), between half the room and all of it.
 */
static double
pass_emits(double s, double room)
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
 * lazy_step: the entries lazy has left after its pass number k (1: the
 * build, with the IndexMap's room), when "left" were left before it; its
 * callers count passes beyond WL_EXACT_PASSES at h each themselves.
 */
static double
lazy_step(const WlParams *p, double k, double left)
{
	return fmax(left - pass_emits(left, k <= 1.0 ? p->m : p->cap), 0.0);
}

/*
 * lazy_left: entries lazy has not emitted after its first k selection
 * passes, each counted by pass_emits.
 */
static double
lazy_left(const WlParams *p, double k)
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
			return passes + ceil_div(left, p->h);
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
	double		left = lazy_left(p, 1.0);

	for (double k = 2.0; k <= npasses && left > 0.0; k++)
	{
		if (k > WL_EXACT_PASSES)
			return sum + kept_sum(p, left, npasses - k + 1.0);
		sum += kept(p, left);
		left = lazy_step(p, k, left);
	}
	return sum;
}

/* est_lazy: selection passes, the remainder written once by the rule. */
static void
est_lazy(const WlParams *p, double wi, BraidWlEstimate *out)
{
	double		npasses = lazy_passes(p);
	double		mat = 0.0;
	double		rereads,
				cpu;

	/* first passes_done in [1, npasses - 1] the rule holds at, if any */
	if (npasses >= 2 && lazy_wants(p, wi, npasses - 1, lazy_left(p, npasses - 1)))
	{
		double		lo = 1.0,
					hi = npasses - 1;

		while (lo < hi)
		{
			double		mid = floor((lo + hi) / 2.0);

			if (lazy_wants(p, wi, mid, lazy_left(p, mid)))
				hi = mid;
			else
				lo = mid + 1.0;
		}

		/*
		 * ... and a later pass reads the file (a pass over no more rows than
		 * its candidates' room emits them all)
		 */
		if (lazy_left(p, lo) > p->cap)
			mat = lo + 1.0;
	}

	/* the build's candidates (in the IndexMap's room), then the later passes' */
	cpu = p->sel * (kept_in(p->n, p->m) + lazy_kept(p, npasses));
	if (mat > 0.0)
	{
		double		rem = lazy_left(p, mat - 1.0);
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

/*
 * gather_term
 *		What the mode holds during the late gather, and the gather passes
 *		that costs (see GATHER above), added to out->ms.
 */
static void
gather_term(const WlParams *p, BraidWlEstimate *out)
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
	full = ceil_div(p->gather_bytes, b);
	less = ceil_div(p->gather_bytes, fmax(b - held, b / 4));
	out->gather_ms = (less - full) * p->gather_pass_ms * WL_GATHER_EXTRA_PASS;
	out->ms += out->gather_ms;
}

/*
 * braid_wl_input_defaults
 *		Every field at its default: the constants above, no rows, no budget,
 *		no re-reads.
 */
void
braid_wl_input_defaults(BraidWlInput *in)
{
	in->rows = 0;
	in->budget_entries = 0;
	in->pass_room_entries = 0;
	in->run_entry_bytes = WL_DEFAULT_RUN_ENTRY_BYTES;
	in->mat_entry_bytes = WL_DEFAULT_MAT_ENTRY_BYTES;
	in->write_ns = WL_DEFAULT_WRITE_NS;
	in->read_ns = WL_DEFAULT_READ_NS;
	in->run_cpu_ns = WL_DEFAULT_RUN_CPU_NS;
	in->merge_cpu_ns = WL_DEFAULT_MERGE_CPU_NS;
	in->pass_row_ns = WL_DEFAULT_PASS_ROW_NS;
	in->select_cpu_ns = WL_DEFAULT_SELECT_CPU_NS;
	in->mat_read_cpu_ns = WL_DEFAULT_MAT_READ_CPU_NS;
	in->fanin = WL_DEFAULT_FANIN;
	in->can_reread = false;
	in->pass_rereads_all = false;
	in->gather_bytes = 0;
	in->budget_bytes = 0;
	in->gather_pass_ms = 0;
}

/*
 * braid_wl_run_entry_bytes
 *		Bytes a front-coded run record takes for a key of key_bytes encoded
 *		bytes (the whole key, as runs hold it), as measured (see
 *		WL_RECORD_SUFFIX): at least a byte of suffix.
 */
double
braid_wl_run_entry_bytes(double key_bytes)
{
	double		suffix = fmax(WL_RECORD_SUFFIX * nonneg(key_bytes), 1.0);

	return WL_RECORD_LENGTHS + suffix + WL_RECORD_REF;
}

/*
 * braid_wl_estimate
 *		One mode at write intensity wi: < 0 for the mode's cost-optimal
 *		choice, 0..1 for at most that share of MergePass's lines.
 *		MergePass and hybrid are infeasible when their fixed writes exceed
 *		it, segment and lazy when the input cannot be re-read; the other
 *		fields describe the mode all the same.
 */
void
braid_wl_estimate(const BraidWlInput *in, BraidWlMode mode,
				  double write_intensity, BraidWlEstimate *out)
{
	WlParams	p;

	params(in, &p);
	if (isnan(write_intensity))
		write_intensity = BRAID_WL_NO_LIMIT;
	if (p.n <= p.m)
	{
		onepass(&p, mode, out);
		return;
	}
	clear(mode, out);
	switch (mode)
	{
		case BRAID_WL_MERGEPASS:
			est_mergepass(&p, out);
			break;
		case BRAID_WL_HYBRID:
			est_hybrid(&p, out);
			break;
		case BRAID_WL_SEGMENT:
			est_segment(&p, write_intensity, out);
			break;
		case BRAID_WL_LAZY:
			est_lazy(&p, write_intensity, out);
			break;
		default:
			/* not a mode: MergePass's figures, never feasible */
			est_mergepass(&p, out);
			finish(&p, write_intensity, out);
			out->feasible = false;
			return;
	}
	if (mode != BRAID_WL_SEGMENT)	/* (segment's search counts it) */
		gather_term(&p, out);
	finish(&p, write_intensity, out);
}

/*
 * braid_wl_estimate_segment
 *		Segment sort at share x of the input through runs (no write limit
 *		but x itself).
 */
void
braid_wl_estimate_segment(const BraidWlInput *in, double x, BraidWlEstimate *out)
{
	WlParams	p;

	params(in, &p);
	if (p.n <= p.m)
	{
		onepass(&p, BRAID_WL_SEGMENT, out);
		return;
	}
	clear(BRAID_WL_SEGMENT, out);
	est_segment_at(&p, x, out);
	gather_term(&p, out);
	finish(&p, BRAID_WL_NO_LIMIT, out);
}

/*
 * braid_wl_choose
 *		Every mode at write intensity wi into est[mode]; returns the fastest
 *		feasible one (the lower mode on a tie), MergePass if none is, and
 *		MergePass too where it is feasible and the fastest is not
 *		WL_CHOOSE_MARGIN faster than it.
 */
BraidWlMode
braid_wl_choose(const BraidWlInput *in, double write_intensity,
				BraidWlEstimate est[BRAID_WL_NMODES])
{
	BraidWlMode best = BRAID_WL_NMODES;

	for (int m = 0; m < BRAID_WL_NMODES; m++)
	{
		braid_wl_estimate(in, (BraidWlMode) m, write_intensity, &est[m]);
		if (est[m].feasible && (best == BRAID_WL_NMODES || est[m].ms < est[best].ms))
			best = (BraidWlMode) m;
	}
	if (best == BRAID_WL_NMODES)
		return BRAID_WL_MERGEPASS;
	if (best != BRAID_WL_MERGEPASS && est[BRAID_WL_MERGEPASS].feasible &&
		est[best].ms > est[BRAID_WL_MERGEPASS].ms * (1.0 - WL_CHOOSE_MARGIN))
		return BRAID_WL_MERGEPASS;
	return best;
}

/*
 * braid_wl_lazy_materialize
 *		Lazy, before a selection pass after the first: write the remaining
 *		entries during this pass?  Viglas's read-over-write rule: yes when
 *		the re-reads so far (passes_done - 1 of the input) plus the one that
 *		constructs the remainder cost at least writing it
 *			passes_done * N * c >= remaining * l_mat * w,
 *		the write stays within write_intensity of MergePass's lines (< 0: no
 *		limit), a later pass reads the file (remaining more than the pass's
 *		candidates' room C: else it emits them all) and
 *		reading the file costs less than re-reading the
 *		input.  As the remainder shrinks with every pass that is first true
 *		after some passes, earlier as w falls.
 */
bool
braid_wl_lazy_materialize(const BraidWlInput *in, double write_intensity,
						  double passes_done, double remaining)
{
	WlParams	p;

	params(in, &p);
	if (isnan(write_intensity))
		write_intensity = BRAID_WL_NO_LIMIT;
	remaining = nonneg(remaining);
	/* (a pass over no more rows than its candidates' room emits them all) */
	if (remaining <= p.cap)
		return false;
	return lazy_wants(&p, write_intensity, fmax(passes_done, 1.0), remaining);
}

/* braid_wl_mergepass_lines: lines MergePass writes (and reads back). */
double
braid_wl_mergepass_lines(const BraidWlInput *in)
{
	WlParams	p;

	params(in, &p);
	return mergepass_lines(&p);
}

/* braid_wl_pass_entries: entries one selection pass emits. */
double
braid_wl_pass_entries(const BraidWlInput *in)
{
	WlParams	p;

	params(in, &p);
	return p.h;
}

/*
 * braid_wl_lazy_entries_left: entries a lazy sort has not emitted after
 * its first passes_done selection passes (the build is the first), as
 * the model counts them.
 */
double
braid_wl_lazy_entries_left(const BraidWlInput *in, double passes_done)
{
	WlParams	p;

	params(in, &p);
	return lazy_left(&p, passes_done);
}

/* braid_wl_mode_name: the mode's name as the GUC and EXPLAIN spell it. */
const char *
braid_wl_mode_name(BraidWlMode mode)
{
	switch (mode)
	{
		case BRAID_WL_MERGEPASS:
			return "mergepass";
		case BRAID_WL_HYBRID:
			return "hybrid";
		case BRAID_WL_SEGMENT:
			return "segment";
		case BRAID_WL_LAZY:
			return "lazy";
		default:
			return "invalid";
	}
}
