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
 * a selection pass emits on average (WL_PASS_EMITS: used only beyond the
 * passes counted one by one, 64 of segment's and 256 of lazy's), F the
 * fan-in, l = bytes / 64 lines per entry (l_run
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
 * virtual run, one more stream of the final merge, produced by P
 * selection passes, each re-reading the S rows (N rows with
 * pass_rereads_all) at c each and emitting what it really emits (as
 * lazy's below, each with room C: braid_wlm_segment_passes).  P rises by
 * one just past each pass bound B_k, the most rows k passes emit (B_1 = C,
 * B_k the most rows whose first pass leaves at most B_(k-1);
 * braid_wlm_set_pass_bounds), and by one every h rows beyond B_64.  C(x) is minimised numerically over
 * [0, min(write intensity, 1)] (Viglas's Eq. 4 does not follow from his
 * Eq. 3, which drops a +1 term: his Eq. 1 is minimised instead).  Between two breakpoints of P (x_k = 1 - B_k/N) or
 * of the run count (x_j = j*M/N) the cost is linear in x apart from the
 * merge's log2 and the candidates' sum, so the minimum is searched at every
 * breakpoint near both ends, strided ones between, and a uniform grid; and
 * one entry past each run-count breakpoint, where a run of its own can
 * leave a merge group smaller (the lines still within the write limit).
 * With passes re-reading the whole input, k passes cost k*N*c and keep
 * B_k rows out of the runs (a each, the run cost of an entry), down to
 * the memory run's share x = M/N, below which the runs write nothing; the
 * first passes emit a whole room C each and later ones less, so the
 * optimum leaves x = 1 once l_run*(w+r) + run_cpu exceeds about (N/C)*c
 * and moves down the pass bounds to M/N as w grows.  With passes
 * re-reading the segment only (all S rows each pass), C is about
 * quadratic in k (k*B_k*c - a*B_k, B_k ~ k*h with h what a pass emits on
 * average): the optimum is near k ~ a/(2c) passes, x* ~ 1 - a*h/(2*c*N),
 * clamped to [M/N, 1], interior once a exceeds c.
 *
 * LAZY: P selection passes feeding the gather directly, the build being
 * the first, with the IndexMap's room M for its candidates, the later
 * ones with C.  Each is counted by what it really emits
 * (braid_wlm_pass_emits): a
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
 * The segment sort's search is in wlimit_segment.c, lazy's pass counting in
 * wlimit_lazy.c; what they and this file share (MergePass's merges, the
 * candidates kept, the gather term) in wlimit_model.c, declared with the
 * sanitized inputs in wlimit_model.h.
 *
 * src/core/wlimit.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wlimit.h"
#include "core/wlimit_model.h"

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
 * A run's record (runrecord.h): a byte of lengths, the key's suffix past
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
 * of its candidates (sort_select.c, compact).  Where the IndexMap has the
 * whole budget that room is half a budget-full; over a value log the
 * IndexMap has half the budget (the log's buffer the other half) and the
 * passes' room is a whole budget-full.  Segment's and lazy's passes are
 * counted one by one by what each emits; beyond the passes so counted (64
 * of segment's, 256 of lazy's) each is taken to emit 0.8 of the room, an
 * average of early runs (segment at intensity 0 made 5, 10 and 21 passes
 * over 5M rows at beta 2, 4 and 8 in wlimit-20261130-002435, 4, 8 and 16
 * at a whole room each).
 */
#define WL_PASS_EMITS	0.8

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

/* Largest value of any input (entries, bytes, ns). */
#define WL_MAX_INPUT	1e15

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
	braid_wlm_set_pass_bounds(p);
}

/* finish: intensity and feasibility of an estimate whose lines are set. */
static void
finish(const WlParams *p, double wi, BraidWlEstimate *out)
{
	double		mp = braid_wlm_mergepass_lines(p);

	out->write_intensity = mp > 0.0 ? out->lines_written / mp : 0.0;
	out->feasible = braid_wlm_fits(out->lines_written, mp, wi);
	if ((out->mode == BRAID_WL_SEGMENT || out->mode == BRAID_WL_LAZY) &&
		!p->can_reread && p->n > p->m)
		out->feasible = false;
}

/* onepass: N <= M, every mode sorts the IndexMap in place. */
static void
onepass(const WlParams *p, BraidWlMode mode, BraidWlEstimate *out)
{
	braid_wlm_clear(mode, out);
	out->ms = p->n * p->run_cpu / 1e6;
}

/* est_mergepass: every entry through runs. */
static void
est_mergepass(const WlParams *p, BraidWlEstimate *out)
{
	WlMerges	mg;
	double		cpu;

	braid_wlm_merges(p, p->n, false, &mg);
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

	braid_wlm_merges(p, e, true, &mg);
	out->lines_written = (e + mg.rewritten) * p->l_run;
	out->lines_read = out->lines_written;
	out->merge_passes = mg.passes;
	out->segment_share = 1;
	cpu = p->n * p->run_cpu +
		p->merge_cpu * (mg.levels + p->n * log2(mg.final_runs + 1.0));
	out->ms = (cpu + out->lines_written * p->w + out->lines_read * p->r) / 1e6;
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
	braid_wlm_clear(mode, out);
	switch (mode)
	{
		case BRAID_WL_MERGEPASS:
			est_mergepass(&p, out);
			break;
		case BRAID_WL_HYBRID:
			est_hybrid(&p, out);
			break;
		case BRAID_WL_SEGMENT:
			braid_wlm_est_segment(&p, write_intensity, out);
			break;
		case BRAID_WL_LAZY:
			braid_wlm_est_lazy(&p, write_intensity, out);
			break;
		default:
			/* not a mode: MergePass's figures, never feasible */
			est_mergepass(&p, out);
			finish(&p, write_intensity, out);
			out->feasible = false;
			return;
	}
	if (mode != BRAID_WL_SEGMENT)	/* (segment's search counts it) */
		braid_wlm_gather_term(&p, out);
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
	braid_wlm_clear(BRAID_WL_SEGMENT, out);
	braid_wlm_est_segment_at(&p, x, out);
	braid_wlm_gather_term(&p, out);
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
	return braid_wlm_lazy_wants(&p, write_intensity, fmax(passes_done, 1.0), remaining);
}

/* braid_wl_mergepass_lines: lines MergePass writes (and reads back). */
double
braid_wl_mergepass_lines(const BraidWlInput *in)
{
	WlParams	p;

	params(in, &p);
	return braid_wlm_mergepass_lines(&p);
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
 * braid_wl_segment_passes: the selection passes a segment sort makes over
 * the rows of its head, as its estimates count them.
 */
double
braid_wl_segment_passes(const BraidWlInput *in, double rows)
{
	WlParams	p;
	double		kept;

	params(in, &p);
	return braid_wlm_segment_passes(&p, rows, &kept);
}

/*
 * braid_wl_segment_pass_bound: the most rows of a segment sort's head that
 * k selection passes emit, as its estimates count them (k >= 1).
 */
double
braid_wl_segment_pass_bound(const BraidWlInput *in, int k)
{
	WlParams	p;
	double		last;

	params(in, &p);
	if (p.npass_bounds == 0)
		return 0.0;
	if (k <= p.npass_bounds)
		return p.pass_bounds[(k < 1 ? 1 : k) - 1];
	last = p.npass_bounds > 0 ? p.pass_bounds[p.npass_bounds - 1] : 0.0;
	return last + (k - p.npass_bounds) * p.h;
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
	return braid_wlm_lazy_left(&p, passes_done);
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
