/*-------------------------------------------------------------------------
 *
 * joinmodel.c
 *	  Cost model of BraidJoin's write-limited hash join modes.
 *
 * Viglas (VLDB 2014, §2.2), worked out here for braidsort's entries.  Both inputs become entries <hash, ref> of entry_bytes on the
 * device; the inner input's entries are split by hash into k partitions,
 * k = ceil(|T| x table_entry_bytes / M), so that one partition's entries
 * fit the in-memory table.  Partition 0 stays in memory during the first
 * pass over both inputs (its outer rows probe it with the row in hand).
 * Each later partition p needs its inner entries (to build the table) and
 * its outer entries (to probe), and for each input either
 *
 *	 - was *written* during an earlier pass: its rows/k entries cost
 *	   L = rows/k x entry_bytes / 64 lines written and read again, the CPU
 *	   to write and read them, and, for the outer input, the fetch of each
 *	   probing row by its ref (it is no longer in hand); or
 *	 - is *rebuilt* by a rescan of that input in p's round: rows x row_ns,
 *	   the outer rows in hand again.
 *
 * The cost is a sum over (input, partition) of one of the two, so a mode is
 * a rule for which of them are written:
 *
 *	 grace		all of them (Viglas's Grace join; writes (k-1)/k of both
 *				inputs' entries);
 *	 hybrid		Grace-nested-loops: a share of each input's partitions, the
 *				smaller input (the inner) first, as the write intensity allows;
 *				the rest are joined by passes that rescan the other input;
 *	 segmented	x whole partitions (both inputs), the rest rebuilt by
 *				rescanning both: J(x) is linear in x, so x is 0 or k-1
 *				unless the write intensity caps it (Viglas's rule: write all
 *				when k > lambda + 1, in braidsort's costs);
 *	 lazy		nothing is written at first; before round i the remainder
 *				(partitions i+1..k-1 of both inputs) is written during round
 *				i's rescans once writing it costs no more than the rescans
 *				done so far (the read-over-write rule, Eq. 11's spirit).
 *
 * An input that cannot be rescanned has every partition written in every
 * mode; its writes count against the write intensity first, and a mode
 * that then exceeds it is infeasible.
 *
 * Every mode also fetches the inner row of each matching pair by its ref
 * (match_rows x match_fetch_ns): rows all over the inner input, one at a
 * time, from pages kept pinned and at a place known from the entry, so
 * that a fetch costs about the cache miss PostgreSQL pays for the tuple in
 * its own hash table; what is left is about 60 ns a pair over PostgreSQL's
 * (bench --join, 300k x 3M rows), and nothing when the partitions are by
 * key range (BRAID_JM_RANGE_MATCH_NS: a round's inner rows then lie in a
 * k-th of the inner table; the fitted joins below were by hash).  A written partition's outer rows are
 * fetched by TID in block order (fetch_ns, 100 ns).  An input that is not
 * read by heap TID writes each row to the value log once and reads it back,
 * costed as PostgreSQL's batches cost a tuple (below).
 *
 * Whether to take the join at all compares BraidJoin with PostgreSQL's own
 * batched hash join (braid_jm_pg_ms, braid_jm_against_pg_ms), with two
 * constants fitted to plain-query timings of bench --join (300k x 3M and
 * 1M x 10M rows at PostgreSQL's 4, 16 and 64 batches; BraidJoin at 1, 2,
 * 6 and 1, 3, 10 partitions, all six faster than PostgreSQL, paired
 * medians 1.03x to 1.72x): a tuple PostgreSQL writes to a batch file and
 * reads back costs it about 850 ns (JM_PG_TUPLE_NS; 800-950 fitted, the
 * file's bytes, the tuple formed and stored again, and its batch's hash
 * table rebuilt), and an outer row BraidJoin fetches back from a written
 * partition costs it about as much against PostgreSQL (JM_VS_PG_FETCH_NS;
 * 600-1070 fitted), far more than fetch_ns, which only ranks the modes
 * against each other (the mode sweep: writing beats rescanning on a
 * device whose writes cost nothing).  The differences the model then
 * predicts between the two joins are within 650 ms of the six measured
 * (320 to 7229 ms), and overstate BraidJoin's lead at 64 batches (482 ms
 * predicted against 320 measured at 300k, 1030 against 549 at 1M) and at
 * 1M rows and 16 batches (2602 against 2055).  Those rows were 69 bytes
 * wide (as the plan sees the inner input).  With wider inner rows
 * (300k x 3M, the inner rows 264 and 648 bytes, 87 and 195 MB) BraidJoin
 * fared worse, PostgreSQL no better: the matches' inner rows, fetched all
 * over a larger table, each span more lines (by hand, plain queries,
 * paired medians of 4-5 runs, two or three times; PostgreSQL's time over
 * BraidJoin's: 264 bytes 1.03-1.08x at 2 MB and 0.79-1.00x at 512 kB,
 * 648 bytes 0.92-1.09x and 0.86-0.97x, where the model without width had
 * predicted gains of 0.5 to 1.4 s).  So each match costs
 * JM_VS_PG_MATCH_BYTE_NS (1 ns) a byte of the inner row's width beyond 69
 * against PostgreSQL: the 264-byte join at 2 MB is still taken, the other
 * three are declined, both are taken with one partition (8 MB: 1.22x,
 * 1.23x), and the fitted points are as they were.  The width is the
 * plan's, of the columns the query reads from the inner row (the
 * measured queries read all of it); a one-partition join of rows wider
 * than about 930 bytes is declined, unmeasured.  An outer table larger
 * than half of shared buffers (not held, its pages read again through the
 * buffer manager in every round, from the kernel's cache) costs each page
 * a round visits about 3.2 us against PostgreSQL (JM_VS_PG_UNCACHED_PAGE_NS;
 * by hand, 300k x 3M at shared_buffers 128 MB, the 40k-page outer table
 * uncached, paired medians of 4 runs: 1.30x, 1.08x, 0.92x and 0.79x at 2,
 * 3, 6 and 12 partitions, 207 to 1233 ms short of the fitted model's
 * gains; 3.2 us fits them by least squares and takes the first two; 8 kB
 * blocks).  Only the comparison with PostgreSQL charges those reads: the
 * modes are ranked without them, though an uncached outer input's rescans
 * read every page too (lazy and segmented rescan; on the tmpfs measured,
 * grace, writing, was chosen).  The rest of the model's costs are the
 * same on both sides and cancel.
 * Without braidsort.force the planner (join_plan.c) also leaves to
 * PostgreSQL what the fit did not cover: an inner table read by TID larger
 * than half of shared buffers, and written partitions whose outer rows
 * would be fetched back from an outer table larger than
 * effective_cache_size (from disk, perhaps), by parallel workers from one
 * shared buffers do not hold (unmeasured), in an index scan's order, or in
 * rounds visiting its pages more than 2M times in all.
 *
 * The write intensity is a share of grace's lines.  -1 asks for each
 * mode's cost-optimal choice (hybrid and segmented then write exactly the
 * partitions whose writing costs less than their rescan).
 *
 * src/core/joinmodel.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>

#include "core/joinmodel.h"

#define JM_LINE_BYTES			64.0
#define JM_DEFAULT_ENTRY_BYTES	16.0
#define JM_DEFAULT_TABLE_BYTES	20.0
#define JM_DEFAULT_WRITE_NS		8.0
#define JM_DEFAULT_READ_NS		4.0
#define JM_DEFAULT_ROW_NS		150.0
#define JM_DEFAULT_ENTRY_CPU_NS 6.0
#define JM_DEFAULT_FETCH_NS		100.0
#define JM_DEFAULT_PROBE_NS		40.0
#define JM_DEFAULT_MATCH_NS		60.0
#define JM_PG_TUPLE_NS			850.0
#define JM_PG_BYTE_NS			0.3
#define JM_VS_PG_FETCH_NS		850.0
#define JM_VS_PG_MATCH_BYTE_NS	1.0
#define JM_VS_PG_MATCH_FIT_WIDTH 69.0
#define JM_VS_PG_UNCACHED_PAGE_NS 3200.0
#define JM_MAX_ROWS				1e15

/* clamp_rows: a row count made finite and non-negative. */
static double
clamp_rows(double rows)
{
	if (!(rows > 0))
		return 0;
	return fmin(rows, JM_MAX_ROWS);
}

/* nonneg: a cost made finite and non-negative. */
static double
nonneg(double v)
{
	if (!(v > 0))
		return 0;
	return fmin(v, 1e18);
}

/*
 * spilled_tuple_ns
 *		A tuple of width bytes written to a temporary file and read back, as
 *		PostgreSQL's batches and braidsort's value log do (JM_PG_*).
 */
static double
spilled_tuple_ns(double width)
{
	return JM_PG_TUPLE_NS + fmin(nonneg(width), 1e9) * JM_PG_BYTE_NS;
}

/*
 * braid_jm_input_defaults
 *		Defaults of the per-row and per-line costs (a tmpfs on this class of
 *		machine); rows, budget and the rescan flags are the caller's.
 */
void
braid_jm_input_defaults(BraidJmInput *in)
{
	in->inner_rows = 0;
	in->outer_rows = 0;
	in->entry_bytes = JM_DEFAULT_ENTRY_BYTES;
	in->table_entry_bytes = JM_DEFAULT_TABLE_BYTES;
	in->budget_bytes = 0;
	in->write_ns = JM_DEFAULT_WRITE_NS;
	in->read_ns = JM_DEFAULT_READ_NS;
	in->inner_row_ns = JM_DEFAULT_ROW_NS;
	in->outer_row_ns = JM_DEFAULT_ROW_NS;
	in->entry_cpu_ns = JM_DEFAULT_ENTRY_CPU_NS;
	in->fetch_ns = JM_DEFAULT_FETCH_NS;
	in->probe_ns = JM_DEFAULT_PROBE_NS;
	in->match_rows = 0;
	in->match_fetch_ns = JM_DEFAULT_MATCH_NS;
	in->match_width = 0;
	in->outer_uncached_pages = 0;
	in->inner_log_width = 0;
	in->outer_log_width = 0;
	in->inner_rescan = false;
	in->outer_rescan = false;
	in->inner_share = 1.0;
}

/*
 * braid_jm_partitions
 *		k: partitions of the inner input's entries, each about the in-memory
 *		table's budget, 1 when they all fit.
 */
int
braid_jm_partitions(const BraidJmInput *in)
{
	double		bytes = clamp_rows(in->inner_rows) * nonneg(in->table_entry_bytes);
	double		budget = fmax(nonneg(in->budget_bytes), 1.0);
	double		k = ceil(bytes / budget);

	if (!(k >= 1))
		return 1;
	if (k > BRAID_JM_MAX_PARTITIONS)
		return BRAID_JM_MAX_PARTITIONS;
	return (int) k;
}

/*
 * inner_share: the share of the inner input's first pass one process does
 * (1, or 1/processes when they partition it together), within (0, 1].
 */
static double
inner_share(const BraidJmInput *in)
{
	return in->inner_share > 0 && in->inner_share < 1 ? in->inner_share : 1.0;
}

/* The cost of one (input, partition) either way, and its lines. */
typedef struct JmSide
{
	double		rows;			/* the input's rows */
	double		lines;			/* lines one partition's entries take */
	double		write_cost;		/* ns to write, read back (and fetch) them */
	double		rescan_cost;	/* ns to rebuild them by a rescan */
	bool		can_rescan;
} JmSide;

/* side_costs: the two inputs' per-partition costs at k partitions. */
static void
side_costs(const BraidJmInput *in, int k, JmSide *inner, JmSide *outer)
{
	double		w = nonneg(in->write_ns),
				r = nonneg(in->read_ns),
				e = nonneg(in->entry_bytes),
				cpu = nonneg(in->entry_cpu_ns),
				share = inner_share(in);

	inner->rows = clamp_rows(in->inner_rows);
	outer->rows = clamp_rows(in->outer_rows);
	inner->lines = inner->rows / k * e / JM_LINE_BYTES;
	outer->lines = outer->rows / k * e / JM_LINE_BYTES;

	/*
	 * shared (inner_share < 1): a process writes its share of each inner
	 * partition, and reads every process's back
	 */
	inner->write_cost = inner->lines * (w * share + r) + cpu * (share + 1) * inner->rows / k;
	outer->write_cost = outer->lines * (w + r) + 2 * cpu * outer->rows / k +
		nonneg(in->fetch_ns) * outer->rows / k;
	inner->rescan_cost = inner->rows * nonneg(in->inner_row_ns);
	outer->rescan_cost = outer->rows * nonneg(in->outer_row_ns);
	inner->can_rescan = in->inner_rescan;
	outer->can_rescan = in->outer_rescan;
}

/*
 * lazy_fires
 *		The read-over-write rule before round i (1-based) of k-1: write the
 *		remainder (partitions i+1..k-1 of each rescannable input) during this
 *		round's rescans when that costs no more than the rescans of the
 *		rounds before, and fits the write budget (lines, < 0: unlimited)
 *		beside the forced lines already spent.
 */
static bool
lazy_fires(const JmSide *inner, const JmSide *outer, int k, int i,
		   double budget_lines, double forced_lines)
{
	double		remain = (double) (k - 1 - i);
	double		write_cost = 0,
				lines = 0,
				reread = 0;

	if (remain <= 0)
		return false;
	if (inner->can_rescan)
	{
		write_cost += remain * inner->write_cost;
		lines += remain * inner->lines;
		reread += (i - 1) * inner->rescan_cost;
	}
	if (outer->can_rescan)
	{
		write_cost += remain * outer->write_cost;
		lines += remain * outer->lines;
		reread += (i - 1) * outer->rescan_cost;
	}
	if (lines <= 0)
		return false;
	if (budget_lines >= 0 && forced_lines + lines > budget_lines * (1 + 1e-9))
		return false;
	return write_cost <= reread;
}

/*
 * plan_sides
 *		How many of partitions 1..k-1 of each input the mode writes, at
 *		write intensity wi; *lazy_round is the round before which lazy
 *		writes its remainder (k when never).
 */
static void
plan_sides(const BraidJmInput *in, BraidJoinMode mode, double wi, int k,
		   int *mi, int *mo, int *lazy_round)
{
	JmSide		inner,
				outer;
	int			n = k - 1;
	double		grace_lines;
	double		budget;
	double		forced = 0;

	side_costs(in, k, &inner, &outer);
	grace_lines = n * (inner.lines + outer.lines);
	budget = wi < 0 ? -1 : wi * grace_lines;
	*mi = inner.can_rescan ? 0 : n;
	*mo = outer.can_rescan ? 0 : n;
	forced = *mi * inner.lines + *mo * outer.lines;
	*lazy_round = k;
	if (n <= 0)
	{
		*mi = *mo = 0;
		return;
	}

	switch (mode)
	{
		case BRAID_JM_GRACE:
			*mi = *mo = n;
			break;
		case BRAID_JM_HYBRID:
			{
				/* the smaller input first: the inner one, then the outer */
				JmSide	   *sides[2] = {&inner, &outer};
				int		   *counts[2] = {mi, mo};
				double		spent = forced;

				for (int s = 0; s < 2; s++)
				{
					int			c;

					if (!sides[s]->can_rescan)
						continue;
					if (wi < 0)
						c = sides[s]->write_cost < sides[s]->rescan_cost ? n : 0;
					else if (sides[s]->lines <= 0)
						c = n;
					else
						c = (int) fmin((double) n,
									   floor(fmax(budget - spent, 0) / sides[s]->lines * (1 + 1e-12)));
					*counts[s] = c;
					spent += c * sides[s]->lines;
				}
				break;
			}
		case BRAID_JM_SEGMENTED:
			{
				double		wcost = 0,
							rcost = 0,
							lines = 0;
				int			x;

				if (inner.can_rescan)
				{
					wcost += inner.write_cost;
					rcost += inner.rescan_cost;
					lines += inner.lines;
				}
				if (outer.can_rescan)
				{
					wcost += outer.write_cost;
					rcost += outer.rescan_cost;
					lines += outer.lines;
				}
				/* linear in x: all or nothing, then the write budget */
				x = (lines <= 0 || wcost < rcost) ? n : 0;
				if (wi >= 0 && lines > 0)
					x = (int) fmin((double) x,
								   floor(fmax(budget - forced, 0) / lines * (1 + 1e-12)));
				if (inner.can_rescan)
					*mi = x;
				if (outer.can_rescan)
					*mo = x;
				break;
			}
		case BRAID_JM_LAZY:
			for (int i = 1; i <= n; i++)
			{
				if (lazy_fires(&inner, &outer, k, i, budget, forced))
				{
					*lazy_round = i;
					if (inner.can_rescan)
						*mi = n - i;
					if (outer.can_rescan)
						*mo = n - i;
					break;
				}
			}
			break;
		default:
			break;
	}
}

/*
 * braid_jm_plan_sides
 *		For the executor: how many of partitions 1..k-1 of each input the
 *		mode writes at the actual partition count (lazy: none up front;
 *		its rule decides at run time).
 */
void
braid_jm_plan_sides(const BraidJmInput *in, BraidJoinMode mode, double write_intensity,
					int partitions, int *mat_inner, int *mat_outer)
{
	int			lazy_round;
	int			k = partitions < 1 ? 1 : partitions;

	plan_sides(in, mode, write_intensity, k, mat_inner, mat_outer, &lazy_round);
	if (mode == BRAID_JM_LAZY)
	{
		*mat_inner = in->inner_rescan ? 0 : k - 1;
		*mat_outer = in->outer_rescan ? 0 : k - 1;
	}
}

/*
 * braid_jm_lazy_materialize
 *		Lazy's rule at run time: before round "round" (1-based, of k-1),
 *		should this round's rescans write the remainder?
 */
bool
braid_jm_lazy_materialize(const BraidJmInput *in, int partitions, int round,
						  double write_intensity)
{
	JmSide		inner,
				outer;
	int			k = partitions < 1 ? 1 : partitions;
	double		forced,
				budget;

	side_costs(in, k, &inner, &outer);
	forced = (inner.can_rescan ? 0 : (k - 1) * inner.lines) +
		(outer.can_rescan ? 0 : (k - 1) * outer.lines);
	budget = write_intensity < 0 ? -1 :
		write_intensity * (k - 1) * (inner.lines + outer.lines);
	return lazy_fires(&inner, &outer, k, round, budget, forced);
}

/*
 * braid_jm_estimate
 *		One mode at write intensity wi (< 0: cost-optimal).
 */
void
braid_jm_estimate(const BraidJmInput *in, BraidJoinMode mode, double wi,
				  BraidJmEstimate *est)
{
	JmSide		inner,
				outer;
	int			k = braid_jm_partitions(in);
	int			n = k - 1;
	int			mi = 0,
				mo = 0,
				lazy_round = k;
	double		ns,
				grace_lines;

	est->mode = mode;
	est->partitions = k;
	if (mode < 0 || mode >= BRAID_JM_NMODES)
	{
		est->feasible = false;
		est->mat_inner = est->mat_outer = 0;
		est->write_intensity = est->lines_written = est->lines_read = 0;
		est->rescans = est->ms = 0;
		return;
	}
	side_costs(in, k, &inner, &outer);
	plan_sides(in, mode, wi, k, &mi, &mo, &lazy_round);
	grace_lines = n * (inner.lines + outer.lines);

	/*
	 * the first pass over both inputs (a process's share of the inner one),
	 * and every outer row's probe
	 */
	ns = inner.rows * inner_share(in) * nonneg(in->inner_row_ns) +
		outer.rows * nonneg(in->outer_row_ns) +
		outer.rows * nonneg(in->probe_ns) +
		clamp_rows(in->match_rows) * nonneg(in->match_fetch_ns);
	ns += mi * inner.write_cost + (n - mi) * inner.rescan_cost;
	/* shared: partition 0's inner entries are written too, for the others */
	if (inner_share(in) < 1.0)
		ns += inner.write_cost;
	ns += mo * outer.write_cost + (n - mo) * outer.rescan_cost;

	/*
	 * A value log: each row written once and read back, in every mode; all
	 * the inner rows, and the outer rows not of partition 0 (those are probed
	 * in hand).
	 */
	if (in->inner_log_width > 0)
		ns += inner.rows * spilled_tuple_ns(in->inner_log_width);
	if (in->outer_log_width > 0)
		ns += outer.rows * n / k * spilled_tuple_ns(in->outer_log_width);

	est->mat_inner = mi;
	est->mat_outer = mo;
	est->lines_written = (mi + (inner_share(in) < 1.0 ? 1 : 0)) * inner.lines * inner_share(in) +
		mo * outer.lines;
	est->lines_read = (mi + (inner_share(in) < 1.0 ? 1 : 0)) * inner.lines + mo * outer.lines;
	est->rescans = (double) ((n - mi) + (n - mo));
	est->write_intensity = grace_lines > 0 ? est->lines_written / grace_lines : 0;
	est->ms = nonneg(ns) / 1e6;
	est->feasible = wi < 0 || est->lines_written <= wi * grace_lines * (1 + 1e-9) + 1e-9;
}

/*
 * braid_jm_choose
 *		Every mode's estimate at write intensity wi, and the fastest
 *		feasible one (the one writing least when none is).
 */
BraidJoinMode
braid_jm_choose(const BraidJmInput *in, double wi, BraidJmEstimate est[BRAID_JM_NMODES])
{
	int			best = -1;

	for (int m = 0; m < BRAID_JM_NMODES; m++)
	{
		braid_jm_estimate(in, (BraidJoinMode) m, wi, &est[m]);
		if (est[m].feasible && (best < 0 || est[m].ms < est[best].ms))
			best = m;
	}
	if (best < 0)
	{
		best = 0;
		for (int m = 1; m < BRAID_JM_NMODES; m++)
			if (est[m].lines_written < est[best].lines_written)
				best = m;
	}
	return (BraidJoinMode) best;
}

/*
 * braid_jm_pg_ms
 *		PostgreSQL's hash join of the same inputs in "batches" batches: the
 *		same first pass and probes, and (1 - 1/batches) of both inputs'
 *		tuples written to temporary files and read back (a tuple costs
 *		JM_PG_TUPLE_NS plus JM_PG_BYTE_NS per byte), without braidsort's
 *		late fetches.
 */
double
braid_jm_pg_ms(const BraidJmInput *in, double batches, double inner_width,
			   double outer_width)
{
	double		t = clamp_rows(in->inner_rows),
				v = clamp_rows(in->outer_rows);
	double		spilled = batches > 1 ? 1.0 - 1.0 / batches : 0;
	double		ns;

	ns = t * nonneg(in->inner_row_ns) + v * nonneg(in->outer_row_ns) + v * nonneg(in->probe_ns);
	ns += spilled * (t * spilled_tuple_ns(inner_width) + v * spilled_tuple_ns(outer_width));
	return nonneg(ns) / 1e6;
}

/*
 * braid_jm_against_pg_ms
 *		A mode's estimate in the terms of the comparison with PostgreSQL
 *		(braid_jm_pg_ms): each outer row fetched back from a written
 *		partition at JM_VS_PG_FETCH_NS instead of fetch_ns (see the top of
 *		the file), from a value log too, whose writing the estimate already
 *		counts (fitted on heap fetches only: a value log's rows may be
 *		charged more than they cost, which errs towards PostgreSQL); and
 *		each match's inner row, fetched by TID, JM_VS_PG_MATCH_BYTE_NS a
 *		byte of its width beyond the fitted rows' (see the top of the
 *		file); and, for an outer table shared buffers do not hold, each
 *		page a round reads back through the buffer manager,
 *		JM_VS_PG_UNCACHED_PAGE_NS.  The planner takes the join when this is
 *		below PostgreSQL's.
 */
double
braid_jm_against_pg_ms(const BraidJmInput *in, const BraidJmEstimate *est)
{
	int			k = est->partitions < 1 ? 1 : est->partitions;
	double		fetched = clamp_rows(in->outer_rows) / k * est->mat_outer;
	double		wider = nonneg(fmin(nonneg(in->match_width), 1e9) - JM_VS_PG_MATCH_FIT_WIDTH);
	double		uncached = braid_jm_outer_page_visits(in->outer_rows, in->outer_uncached_pages,
													  est);

	return est->ms + (fetched * nonneg(JM_VS_PG_FETCH_NS - nonneg(in->fetch_ns)) +
					  clamp_rows(in->match_rows) * wider * JM_VS_PG_MATCH_BYTE_NS +
					  uncached * JM_VS_PG_UNCACHED_PAGE_NS) / 1e6;
}

/*
 * braid_jm_outer_page_visits
 *		The outer table's pages (of outer_pages) that the rounds fetching
 *		back a mode's written outer partitions visit in all: a round visits
 *		every page of the table (the partition's rows are all over it), or
 *		at most one page a row.
 */
double
braid_jm_outer_page_visits(double outer_rows, double outer_pages, const BraidJmEstimate *est)
{
	int			k = est->partitions < 1 ? 1 : est->partitions;

	return est->mat_outer * fmin(fmin(nonneg(outer_pages), JM_MAX_ROWS), clamp_rows(outer_rows) / k);
}

/*
 * braid_jm_range_bounds
 *		The k - 1 bounds of partitions by key range (join_plan.c): partition
 *		p >= 1 holds the keys from bounds[p - 1] up to, not including,
 *		bounds[p] (the last: every key from bounds[k - 2]), partition 0 every
 *		key below bounds[0].  From a histogram of the inner input's keys
 *		(nhist ascending values with about as many rows between each two,
 *		as ANALYZE's), interpolated within an interval.  Partition 0 gets
 *		first_share of an equal share, the others the rest equally: partition
 *		0 must fit the in-memory table during the first pass (else it is
 *		written out whole), a later one that does not is joined in pieces.
 *		False (bounds untouched) for k < 2 or an unusable histogram.
 */
bool
braid_jm_range_bounds(const int64_t *hist, int nhist, int k, double first_share,
					  int64_t *bounds)
{
	double		first,
				rest;

	if (k < 2 || nhist < 2 || !(first_share > 0.0 && first_share <= 1.0))
		return false;
	for (int i = 1; i < nhist; i++)
		if (hist[i] < hist[i - 1])
			return false;
	first = first_share / k;
	rest = (1.0 - first) / (k - 1);
	for (int j = 0; j < k - 1; j++)
	{
		double		at = (first + rest * j) * (nhist - 1);
		int			lo = (int) at;
		long double v;
		int64_t		b;

		if (lo > nhist - 2)
			lo = nhist - 2;
		if (lo < 0)
			lo = 0;
		/* within [hist[lo], hist[lo + 1]], so within int64 */
		v = (long double) hist[lo] +
			((long double) hist[lo + 1] - (long double) hist[lo]) * (long double) (at - lo);
		/* clamped before the cast: a long double of 64 bits may round past */
		if (v <= (long double) hist[lo])
			b = hist[lo];
		else if (v >= (long double) hist[lo + 1])
			b = hist[lo + 1];
		else
			b = (int64_t) v;
		if (j > 0 && b < bounds[j - 1])
			b = bounds[j - 1];
		bounds[j] = b;
	}
	return true;
}

/* braid_jm_mode_name: a mode's name, as braidsort.join_mode spells it. */
const char *
braid_jm_mode_name(BraidJoinMode mode)
{
	switch (mode)
	{
		case BRAID_JM_GRACE:
			return "grace";
		case BRAID_JM_HYBRID:
			return "hybrid";
		case BRAID_JM_SEGMENTED:
			return "segmented";
		case BRAID_JM_LAZY:
			return "lazy";
		default:
			return "?";
	}
}
