/*-------------------------------------------------------------------------
 *
 * test_joinmodel.c
 *	  Unit tests of src/core/joinmodel.c, the cost model of BraidJoin's modes.
 *
 * Partition counts, grace writing (k-1)/k of both inputs' entries, hybrid
 * spending a write budget on the inner input first, segmented's all-or-
 * nothing optimum, lazy's read-over-write rule (never on a free device's
 * first round, never when writes are dear), write intensities never
 * exceeded, inputs that cannot be rescanned, which mode wins on a tmpfs and
 * on a slow-writing device, PostgreSQL's estimate, the comparison with it
 * (the measured joins taken, value logs and many matches a row declined),
 * and garbage inputs.
 *
 * test/unit/test_joinmodel.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "unit.h"

#include "core/joinmodel.h"

/* paper_input: |T| inner rows joined to 10|T| outer rows, k partitions. */
static BraidJmInput
paper_input(double inner, int k)
{
	BraidJmInput in;

	braid_jm_input_defaults(&in);
	in.inner_rows = inner;
	in.outer_rows = 10 * inner;
	in.budget_bytes = inner * in.table_entry_bytes / k;
	in.inner_rescan = true;
	in.outer_rescan = true;
	return in;
}

/* sane: every figure of an estimate finite and non-negative. */
static bool
sane(const BraidJmEstimate *e)
{
	const double v[] = {e->write_intensity, e->lines_written, e->lines_read, e->rescans, e->ms};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!isfinite(v[i]) || v[i] < 0)
			return false;
	return e->partitions >= 1 && e->partitions <= BRAID_JM_MAX_PARTITIONS &&
		e->mat_inner >= 0 && e->mat_inner < e->partitions &&
		e->mat_outer >= 0 && e->mat_outer < e->partitions;
}

/* test_joinmodel_basics: partitions and grace's lines. */
static void
test_joinmodel_basics(void)
{
	Check		c;
	BraidJmInput in = paper_input(1e6, 8);
	BraidJmEstimate e;
	double		lines;

	check_init(&c);
	check_that(&c, braid_jm_partitions(&in) == 8, "k = %d, expected 8", braid_jm_partitions(&in));
	in.budget_bytes = 1e12;
	check_that(&c, braid_jm_partitions(&in) == 1, "everything fits: k = %d", braid_jm_partitions(&in));
	in.budget_bytes = 1;
	check_that(&c, braid_jm_partitions(&in) == BRAID_JM_MAX_PARTITIONS, "k capped: %d",
			   braid_jm_partitions(&in));

	in = paper_input(1e6, 8);
	braid_jm_estimate(&in, BRAID_JM_GRACE, -1, &e);
	lines = 7.0 / 8 * 11e6 * in.entry_bytes / 64;
	check_that(&c, fabs(e.lines_written - lines) < 1e-6 * lines,
			   "grace lines %g, expected %g", e.lines_written, lines);
	check_that(&c, e.lines_read == e.lines_written, "grace reads what it writes");
	check_that(&c, e.mat_inner == 7 && e.mat_outer == 7 && e.rescans == 0,
			   "grace writes every partition but 0 and never rescans");
	check_that(&c, fabs(e.write_intensity - 1) < 1e-9, "grace intensity %g", e.write_intensity);
	check_that(&c, e.feasible && sane(&e), "grace feasible and sane");

	in.budget_bytes = 1e12;
	for (int m = 0; m < BRAID_JM_NMODES; m++)
	{
		braid_jm_estimate(&in, (BraidJoinMode) m, 0, &e);
		check_that(&c, e.partitions == 1 && e.lines_written == 0 && e.rescans == 0 && e.feasible,
				   "one partition: %s writes and rescans nothing", braid_jm_mode_name(m));
	}
	check_report(&c, "joinmodel: partitions; grace writes (k-1)/k of both inputs' entries");
}

/* test_joinmodel_intensity: no mode exceeds the write budget it is given. */
static void
test_joinmodel_intensity(void)
{
	Check		c;
	const double wis[] = {0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.99, 1};

	check_init(&c);
	for (int k = 2; k <= 64; k *= 2)
		for (size_t i = 0; i < sizeof(wis) / sizeof(wis[0]); i++)
		{
			BraidJmInput in = paper_input(1e6, k);
			BraidJmEstimate e;

			for (int m = BRAID_JM_HYBRID; m < BRAID_JM_NMODES; m++)
			{
				braid_jm_estimate(&in, (BraidJoinMode) m, wis[i], &e);
				check_that(&c, e.feasible && e.write_intensity <= wis[i] + 1e-9 && sane(&e),
						   "%s at k %d wi %g writes %g", braid_jm_mode_name(m), k, wis[i],
						   e.write_intensity);
			}
			braid_jm_estimate(&in, BRAID_JM_GRACE, wis[i], &e);
			check_that(&c, e.feasible == (wis[i] >= 1), "grace feasible only at 1 (wi %g)", wis[i]);
		}
	check_report(&c, "joinmodel: hybrid, segmented and lazy stay within the write intensity");
}

/* test_joinmodel_hybrid: the write budget goes to the inner input first. */
static void
test_joinmodel_hybrid(void)
{
	Check		c;
	BraidJmInput in = paper_input(1e6, 8);
	BraidJmEstimate e;

	check_init(&c);

	/*
	 * the inner input is 1/11 of the lines: 0.3 covers it and one outer
	 * partition
	 */
	braid_jm_estimate(&in, BRAID_JM_HYBRID, 0.3, &e);
	check_that(&c, e.mat_inner == 7, "inner first: %d of 7 inner partitions", e.mat_inner);
	check_that(&c, e.mat_outer == 1, "then 1 outer partition, got %d", e.mat_outer);
	braid_jm_estimate(&in, BRAID_JM_HYBRID, 0.05, &e);
	check_that(&c, e.mat_outer == 0 && e.mat_inner == 3,
			   "0.05: 3 inner, 0 outer (got %d, %d)", e.mat_inner, e.mat_outer);
	braid_jm_estimate(&in, BRAID_JM_HYBRID, 0, &e);
	check_that(&c, e.lines_written == 0 && e.rescans == 14, "0: all rescans (%g)", e.rescans);
	/* an outer input that cannot be rescanned is written whatever the budget */
	in.outer_rescan = false;
	braid_jm_estimate(&in, BRAID_JM_HYBRID, 0.1, &e);
	check_that(&c, e.mat_outer == 7 && !e.feasible, "forced outer writes exceed 0.1");
	braid_jm_estimate(&in, BRAID_JM_HYBRID, -1, &e);
	check_that(&c, e.mat_outer == 7 && e.feasible, "forced outer writes at the optimum");
	check_report(&c, "joinmodel: hybrid spends the write budget on the inner input first");
}

/* test_joinmodel_segmented: all or nothing, Viglas's k > lambda + 1 rule. */
static void
test_joinmodel_segmented(void)
{
	Check		c;
	BraidJmInput in = paper_input(1e6, 8);
	BraidJmEstimate e;

	check_init(&c);
	braid_jm_estimate(&in, BRAID_JM_SEGMENTED, -1, &e);
	check_that(&c, e.mat_inner == 7 && e.mat_outer == 7, "cheap writes: all written");
	in.write_ns = 1e6;
	braid_jm_estimate(&in, BRAID_JM_SEGMENTED, -1, &e);
	check_that(&c, e.mat_inner == 0 && e.mat_outer == 0 && e.rescans == 14,
			   "dear writes: none written (%d, %d)", e.mat_inner, e.mat_outer);
	in = paper_input(1e6, 8);
	braid_jm_estimate(&in, BRAID_JM_SEGMENTED, 0.5, &e);
	check_that(&c, e.mat_inner == 3 && e.mat_outer == 3, "0.5: 3 of 7 (%d, %d)",
			   e.mat_inner, e.mat_outer);
	check_report(&c, "joinmodel: segmented writes all or nothing, then what the budget allows");
}

/* test_joinmodel_lazy: the read-over-write rule. */
static void
test_joinmodel_lazy(void)
{
	Check		c;
	BraidJmInput in = paper_input(1e6, 8);
	BraidJmEstimate e;

	check_init(&c);
	check_that(&c, !braid_jm_lazy_materialize(&in, 8, 1, -1),
			   "round 1: nothing re-read yet, nothing written");
	check_that(&c, braid_jm_lazy_materialize(&in, 8, 2, -1),
			   "round 2 on a tmpfs: one round of rescans pays for the writes");
	check_that(&c, !braid_jm_lazy_materialize(&in, 8, 7, -1), "last round: nothing remains");
	braid_jm_estimate(&in, BRAID_JM_LAZY, -1, &e);
	check_that(&c, e.mat_inner == 5 && e.mat_outer == 5 && e.rescans == 4,
			   "lazy writes from round 2: %d, %d, %g", e.mat_inner, e.mat_outer, e.rescans);
	in.write_ns = 1e6;
	for (int r = 1; r < 8; r++)
		check_that(&c, !braid_jm_lazy_materialize(&in, 8, r, -1), "dear writes: round %d writes", r);
	in = paper_input(1e6, 8);
	check_that(&c, !braid_jm_lazy_materialize(&in, 8, 2, 0.1), "0.1 cannot hold the remainder");
	check_report(&c, "joinmodel: lazy writes the remainder once re-reading costs more");
}

/* test_joinmodel_choose: grace on a tmpfs, no writes on a very slow device. */
static void
test_joinmodel_choose(void)
{
	Check		c;
	BraidJmInput in = paper_input(1e6, 16);
	BraidJmEstimate est[BRAID_JM_NMODES];
	BraidJoinMode m;

	check_init(&c);
	m = braid_jm_choose(&in, -1, est);
	check_that(&c, est[m].lines_written == est[BRAID_JM_GRACE].lines_written,
			   "tmpfs: %s, writing as grace does", braid_jm_mode_name(m));
	in.write_ns = 1e7;
	m = braid_jm_choose(&in, -1, est);
	check_that(&c, est[m].lines_written == 0, "slow writes: %s writes %g lines",
			   braid_jm_mode_name(m), est[m].lines_written);
	for (int i = 0; i < BRAID_JM_NMODES; i++)
		check_that(&c, est[m].ms <= est[i].ms + 1e-9, "the chosen mode is the fastest");
	in = paper_input(1e6, 16);
	m = braid_jm_choose(&in, 0.3, est);
	check_that(&c, m != BRAID_JM_GRACE && est[m].write_intensity <= 0.3 + 1e-9,
			   "0.3: %s at %g", braid_jm_mode_name(m), est[m].write_intensity);
	/* PostgreSQL's estimate grows with its batches */
	check_that(&c, braid_jm_pg_ms(&in, 1, 80, 80) < braid_jm_pg_ms(&in, 4, 80, 80) &&
			   braid_jm_pg_ms(&in, 4, 80, 80) < braid_jm_pg_ms(&in, 64, 80, 80),
			   "PostgreSQL's estimate grows with its batches");
	check_report(&c, "joinmodel: auto picks grace on a tmpfs, a mode without writes on a slow device");
}

/*
 * measured_input: the bench --join shape as the planner sees it, |T| inner
 * rows of 69 bytes joined to 10|T| outer ones, each matching one, at
 * work_mem wm_kb (hash_mem_multiplier 2).
 */
static BraidJmInput
measured_input(double inner, double wm_kb)
{
	BraidJmInput in = paper_input(inner, 1);

	in.match_rows = 10 * inner;
	in.budget_bytes = wm_kb * 1024 * 2;
	return in;
}

/* auto_est: the estimate of the mode auto picks for in. */
static BraidJmEstimate
auto_est(const BraidJmInput *in)
{
	BraidJmEstimate est[BRAID_JM_NMODES];

	return est[braid_jm_choose(in, -1, est)];
}

/*
 * extra_ms: what a match width and uncached outer pages add to the
 * comparison of the mode auto picks for in (which they do not change).
 */
static double
extra_ms(BraidJmInput in, double match_width, double uncached_pages)
{
	BraidJmEstimate e = auto_est(&in);
	double		before = braid_jm_against_pg_ms(&in, &e);

	in.match_width = match_width;
	in.outer_uncached_pages = uncached_pages;
	return braid_jm_against_pg_ms(&in, &e) - before;
}

/*
 * test_joinmodel_against_pg: the comparison with PostgreSQL's hash join
 * takes the five joins bench --join measured clearly faster than
 * PostgreSQL's (plain queries: 300k and 1M inner rows at PostgreSQL's 4,
 * 16 and 64 batches, but 1M at 64, measured 1.03x and 0.90x: within the
 * margin, declined), and declines joins it has no reason to expect
 * faster: both inputs through the value log, and outer rows matching 20
 * inner rows each with many partitions.
 */
static void
test_joinmodel_against_pg(void)
{
	Check		c;
	BraidJmEstimate est[BRAID_JM_NMODES];
	struct
	{
		double		inner,
					wm_kb,
					batches;
	}			measured[] = {
		{3e5, 8192, 4}, {3e5, 2048, 16}, {3e5, 512, 64},
		{1e6, 16384, 4}, {1e6, 4096, 16}, {1e6, 1024, 64}
	};

	check_init(&c);
	for (int i = 0; i < 6; i++)
	{
		BraidJmInput in = measured_input(measured[i].inner, measured[i].wm_kb);
		BraidJoinMode m = braid_jm_choose(&in, -1, est);
		double		own = braid_jm_against_pg_ms(&in, &est[m]);
		double		pg = braid_jm_pg_ms(&in, measured[i].batches, 69, 69);

		check_that(&c, (own < pg * BRAID_JM_TAKE_MARGIN) == (i != 5),
				   "%g rows, %g batches: %g ms against PostgreSQL's %g",
				   measured[i].inner, measured[i].batches, own, pg);
		/* ... yet expected faster, within the margin */
		check_that(&c, own < pg, "%g rows, %g batches: expected faster",
				   measured[i].inner, measured[i].batches);
		/* nothing fetched back with one partition */
		check_that(&c, est[m].partitions > 1 || own == est[m].ms,
				   "one partition: the comparison adds nothing");
		/* 300k at 2 MB: 2 partitions, 1.5M outer rows fetched at 750 ns more */
		if (i == 1)
			check_that(&c, est[m].partitions == 2 && fabs(own - est[m].ms - 1125) < 1e-6,
					   "2 MB: %g ms over %g in %d partitions", own, est[m].ms,
					   est[m].partitions);
	}
	{
		BraidJmInput in = measured_input(3e5, 2048);
		double		before = auto_est(&in).ms;
		BraidJmEstimate e;

		in.inner_log_width = 69;
		in.outer_log_width = 69;
		e = auto_est(&in);
		check_that(&c, e.ms > before, "a value log costs");
		check_that(&c, braid_jm_against_pg_ms(&in, &e) > braid_jm_pg_ms(&in, 16, 69, 69),
				   "both inputs through the value log: declined");
	}
	{
		/* an outer value log: only the rows not probed in hand are written */
		BraidJmInput in = measured_input(3e5, 8192);
		double		before = auto_est(&in).ms;
		BraidJmEstimate e;

		in.outer_log_width = 69;
		e = auto_est(&in);
		check_that(&c, e.partitions == 1 && e.ms == before,
				   "one partition: the outer value log writes nothing");
		in = measured_input(3e5, 512);
		before = auto_est(&in).ms;
		in.outer_log_width = 69;
		e = auto_est(&in);
		check_that(&c, fabs(e.ms - before - 3e6 * 5 / 6 * (850 + 69 * 0.3) / 1e6) < 1e-6,
				   "6 partitions: 5/6 of the outer rows logged (%g ms over %g)",
				   e.ms, before);
	}
	/* the value log's cost is the same in every mode: the choice stands */
	for (int i = 0; i < 6; i++)
	{
		BraidJmInput in = measured_input(measured[i].inner, measured[i].wm_kb);
		BraidJoinMode without,
					with;

		for (int w = 0; w < 3; w++)
		{
			in.write_ns = (double[])
			{
				8, 600, 2400
			}[w];
			in.inner_log_width = in.outer_log_width = 0;
			without = auto_est(&in).mode;
			in.inner_log_width = in.outer_log_width = 69;
			with = auto_est(&in).mode;
			check_that(&c, with == without, "value logs changed the mode: %s, %s",
					   braid_jm_mode_name(without), braid_jm_mode_name(with));
		}
	}
	{
		/*
		 * wider inner rows, 300k x 3M by hand (PostgreSQL's batches as it
		 * planned them): 264 bytes taken at 2 MB (measured 1.03-1.08x) and
		 * declined at 512 kB (0.79-1.00x; by 63 ms of 3.5 s, a thin margin);
		 * 648 bytes declined at both (0.92-1.09x, 0.86-0.97x); both taken
		 * with one partition at 8 MB (1.22x, 1.23x); the fitted width costs
		 * nothing more
		 */
		struct
		{
			double		width,
						wm_kb,
						batches;
			bool		taken;
		}			wide[] = {
			{264, 2048, 32, true}, {264, 512, 128, false},
			{648, 2048, 64, false}, {648, 512, 256, false},
			{264, 8192, 8, true}, {648, 8192, 16, true}
		};

		for (int i = 0; i < 6; i++)
		{
			BraidJmInput in = measured_input(3e5, wide[i].wm_kb);
			BraidJmEstimate e;
			double		own,
						pg;

			in.match_width = wide[i].width;
			e = auto_est(&in);
			own = braid_jm_against_pg_ms(&in, &e);
			pg = braid_jm_pg_ms(&in, wide[i].batches, wide[i].width, 69);
			check_that(&c, (own < pg) == wide[i].taken,
					   "%g-byte inner rows at %g kB: %g ms against PostgreSQL's %g",
					   wide[i].width, wide[i].wm_kb, own, pg);
		}
		for (int i = 0; i < 6; i++)
		{
			BraidJmInput in = measured_input(measured[i].inner, measured[i].wm_kb);

			check_that(&c, extra_ms(in, 69, 0) == 0, "the fitted width adds nothing");
		}
	}
	{
		/*
		 * the outer table (40k pages) larger than half of shared buffers (128
		 * MB), by hand: 1.30x and 1.08x at 2 and 3 partitions, taken; 0.92x
		 * and 0.79x at 6 and 12, declined; 3.2 us a page a round
		 */
		struct
		{
			double		wm_kb,
						batches;
			bool		taken;
		}			uncached[] = {
			{2048, 16, true}, {1024, 32, true}, {512, 64, false}, {256, 128, false}
		};

		for (int i = 0; i < 4; i++)
		{
			BraidJmInput in = measured_input(3e5, uncached[i].wm_kb);
			BraidJmEstimate e = auto_est(&in);
			double		own,
						pg;

			in.outer_uncached_pages = 40000;
			own = braid_jm_against_pg_ms(&in, &e);
			pg = braid_jm_pg_ms(&in, uncached[i].batches, 69, 69);
			check_that(&c, (own < pg) == uncached[i].taken,
					   "uncached outer at %g kB: %g ms against PostgreSQL's %g",
					   uncached[i].wm_kb, own, pg);
			check_that(&c, fabs(extra_ms(measured_input(3e5, uncached[i].wm_kb), 0, 40000) -
								e.mat_outer * 40000 * 3200 / 1e6) < 1e-6,
					   "%d rounds over 40k uncached pages", e.mat_outer);
		}
		/* at most one page a row fetched back: 6 partitions, 10M pages */
		{
			BraidJmInput in = measured_input(3e5, 512);
			BraidJmEstimate e = auto_est(&in);

			check_that(&c, fabs(extra_ms(in, 0, 1e7) -
								e.mat_outer * (3e6 / e.partitions) * 3200 / 1e6) < 1e-6,
					   "the page charge is capped at a page a row");
		}
		/* nothing written: nothing read back */
		check_that(&c, extra_ms(measured_input(3e5, 8192), 0, 40000) == 0,
				   "one partition: uncached outer pages cost nothing more");
	}
	{
		BraidJmInput in = measured_input(3e5, 512);
		BraidJmEstimate e;

		in.match_rows = 20 * in.outer_rows;
		e = auto_est(&in);
		check_that(&c, braid_jm_against_pg_ms(&in, &e) > braid_jm_pg_ms(&in, 64, 69, 69),
				   "20 matches an outer row, 6 partitions: declined");
	}
	check_report(&c, "joinmodel: the measured joins beat PostgreSQL's, value logs, wide inner rows, many rounds over an uncached outer table and many matches do not");
}

/* test_joinmodel_garbage: random and absurd inputs stay sane. */
static void
test_joinmodel_garbage(void)
{
	Check		c;
	BraidJmEstimate e;

	check_init(&c);
	for (int i = 0; i < 2000; i++)
	{
		BraidJmInput in;
		double		wi = rng_below(3) == 0 ? -1 : (double) rng_below(1001) / 1000;

		braid_jm_input_defaults(&in);
		in.inner_rows = (double) rng_below(100000000);
		in.outer_rows = (double) rng_below(100000000);
		in.budget_bytes = (double) rng_below(1u << 30);
		in.write_ns = (double) rng_below(100000);
		in.read_ns = (double) rng_below(1000);
		in.match_rows = (double) rng_below(1000000);
		in.inner_rescan = rng_below(2) == 0;
		in.outer_rescan = rng_below(2) == 0;
		in.inner_log_width = rng_below(2) == 0 ? 0 : (double) rng_below(10000);
		in.outer_log_width = rng_below(2) == 0 ? 0 : (double) rng_below(10000);
		in.match_width = rng_below(2) == 0 ? 0 : (double) rng_below(10000);
		in.outer_uncached_pages = rng_below(2) == 0 ? 0 : (double) rng_below(100000000);
		for (int m = 0; m < BRAID_JM_NMODES; m++)
		{
			braid_jm_estimate(&in, (BraidJoinMode) m, wi, &e);
			check_that(&c, sane(&e), "%s not sane", braid_jm_mode_name(m));
			check_that(&c, isfinite(braid_jm_against_pg_ms(&in, &e)) &&
					   braid_jm_against_pg_ms(&in, &e) >= e.ms,
					   "%s: the comparison figure not sane", braid_jm_mode_name(m));
		}
	}
	{
		BraidJmInput in;

		braid_jm_input_defaults(&in);
		in.inner_rows = NAN;
		in.outer_rows = INFINITY;
		in.budget_bytes = -5;
		in.write_ns = NAN;
		in.inner_log_width = NAN;
		in.outer_log_width = INFINITY;
		in.match_width = NAN;
		in.outer_uncached_pages = INFINITY;
		for (int m = 0; m < BRAID_JM_NMODES; m++)
		{
			braid_jm_estimate(&in, (BraidJoinMode) m, 0.5, &e);
			check_that(&c, isfinite(braid_jm_against_pg_ms(&in, &e)),
					   "infinite uncached pages: %s's comparison figure is finite",
					   braid_jm_mode_name(m));
		}
		in.outer_uncached_pages = NAN;
		for (int m = 0; m < BRAID_JM_NMODES; m++)
		{
			braid_jm_estimate(&in, (BraidJoinMode) m, 0.5, &e);
			check_that(&c, sane(&e), "NaN input: %s not sane", braid_jm_mode_name(m));
			check_that(&c, !isnan(braid_jm_against_pg_ms(&in, &e)),
					   "NaN input: %s's comparison figure is a number",
					   braid_jm_mode_name(m));
		}
		braid_jm_estimate(&in, BRAID_JM_NMODES, -1, &e);
		check_that(&c, !e.feasible, "an invalid mode is infeasible");
	}
	check_report(&c, "joinmodel: random and absurd inputs give finite, bounded estimates");
}

/* range_part: the partition of a key under bounds (as join_state.h's partition_of). */
static int
range_part(const int64_t *bounds, int k, int64_t key)
{
	int			p = 0;

	while (p < k - 1 && bounds[p] <= key)
		p++;
	return p;
}

/*
 * test_joinmodel_range_bounds: partitions by key range from a histogram
 * hold about equal shares of the keys it describes (partition 0 the share
 * asked), bounds never decrease, and unusable histograms are refused.
 */
static void
test_joinmodel_range_bounds(void)
{
	Check		c;
	int64_t		hist[101];
	int64_t		bounds[BRAID_JM_MAX_PARTITIONS];
	int64_t		edge[2] = {INT64_MIN, INT64_MAX};
	int64_t		same[5] = {7, 7, 7, 7, 7};
	int64_t		down[3] = {3, 2, 1};

	check_init(&c);
	/* 1..1000000 in 100 intervals (a serial key's histogram) */
	for (int i = 0; i <= 100; i++)
		hist[i] = 1 + (int64_t) i * 999999 / 100;
	for (int k = 2; k <= 300; k += (k < 20 ? 1 : 37))
	{
		int			n[BRAID_JM_MAX_PARTITIONS] = {0};

		check_that(&c, braid_jm_range_bounds(hist, 101, k, 0.9, bounds), "k %d: bounds", k);
		for (int j = 1; j < k - 1; j++)
			check_that(&c, bounds[j] >= bounds[j - 1], "k %d: bound %d decreases", k, j);
		for (int64_t key = 1; key <= 1000000; key += 7)
			n[range_part(bounds, k, key)]++;
		for (int p = 0; p < k; p++)
		{
			double		want = (p == 0 ? 0.9 / k : (1.0 - 0.9 / k) / (k - 1)) * (1000000 / 7);

			check_that(&c, fabs(n[p] - want) <= want * 0.01 + 2,
					   "k %d: partition %d holds %d keys, expected about %.0f", k, p, n[p], want);
		}
	}
	/* keys beyond the histogram go to the first and last partitions */
	braid_jm_range_bounds(hist, 101, 10, 1.0, bounds);
	check_that(&c, range_part(bounds, 10, -5) == 0 && range_part(bounds, 10, INT64_MAX) == 9,
			   "keys outside the histogram: partitions %d and %d",
			   range_part(bounds, 10, -5), range_part(bounds, 10, INT64_MAX));
	/* the whole int64 range: no overflow, bounds ascending */
	check_that(&c, braid_jm_range_bounds(edge, 2, 1000, 0.9, bounds), "int64 extremes");
	for (int j = 1; j < 999; j++)
		check_that(&c, bounds[j] >= bounds[j - 1], "int64 extremes: bound %d decreases", j);
	check_that(&c, bounds[0] > INT64_MIN / 1000 * 999 && bounds[998] < INT64_MAX,
			   "int64 extremes: bounds %lld .. %lld", (long long) bounds[0],
			   (long long) bounds[998]);
	/* one value: every bound is it */
	check_that(&c, braid_jm_range_bounds(same, 5, 4, 0.9, bounds) &&
			   bounds[0] == 7 && bounds[2] == 7, "a one-value histogram");
	check_that(&c, !braid_jm_range_bounds(down, 3, 4, 0.9, bounds), "a descending histogram is refused");
	check_that(&c, !braid_jm_range_bounds(hist, 1, 4, 0.9, bounds), "one value is no histogram");
	check_that(&c, !braid_jm_range_bounds(hist, 101, 1, 0.9, bounds), "one partition needs no bounds");
	check_that(&c, !braid_jm_range_bounds(hist, 101, 4, NAN, bounds), "a NaN share is refused");
	check_report(&c, "joinmodel: key range bounds split a histogram's keys evenly, partition 0 its share");
}

/*
 * test_joinmodel_shared_inner: processes partitioning the inner input
 * together (inner_share 1/3): a process writes a third of the inner
 * entries, partition 0's too, reads every one back, and its estimate falls
 * by two thirds of the inner first pass less partition 0's writes; out of
 * range shares count as 1.
 */
static void
test_joinmodel_shared_inner(void)
{
	Check		c;
	BraidJmInput alone = paper_input(1e6, 8);
	BraidJmInput shared;
	BraidJmEstimate a,
				sh,
				e;
	double		inner_lines = 1e6 / 8 * alone.entry_bytes / 64;
	const double bad[] = {0, -1, 2, NAN};

	alone.inner_rescan = alone.outer_rescan = false;
	shared = alone;
	shared.inner_share = 1.0 / 3;
	check_init(&c);
	braid_jm_estimate(&alone, BRAID_JM_GRACE, -1, &a);
	braid_jm_estimate(&shared, BRAID_JM_GRACE, -1, &sh);
	check_that(&c, sane(&sh) && sh.feasible, "shared: sane and feasible");
	check_that(&c, fabs(sh.lines_written - (a.lines_written - 7 * inner_lines + 8 * inner_lines / 3)) <
			   1e-6 * a.lines_written,
			   "shared: lines written %g, expected a third of all 8 inner partitions beside the outer's",
			   sh.lines_written);
	check_that(&c, fabs(sh.lines_read - (a.lines_read + inner_lines)) < 1e-6 * a.lines_read,
			   "shared: every inner partition read back (%g lines, alone %g)", sh.lines_read,
			   a.lines_read);
	check_that(&c, sh.ms < a.ms, "shared: %g ms below alone's %g ms", sh.ms, a.ms);
	check_that(&c, a.ms - sh.ms < 1e6 * alone.inner_row_ns / 1e6,
			   "shared: saves less than the whole inner first pass (%g ms)", a.ms - sh.ms);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		shared.inner_share = bad[i];
		braid_jm_estimate(&shared, BRAID_JM_GRACE, -1, &e);
		check_that(&c, e.ms == a.ms && e.lines_written == a.lines_written,
				   "share %g counts as 1", bad[i]);
	}
	check_report(&c, "joinmodel: a shared inner input: a process's share written, every entry read");
}

/* unit_joinmodel: the cost model of BraidJoin's modes. */
void
unit_joinmodel(void)
{
	test_joinmodel_basics();
	test_joinmodel_intensity();
	test_joinmodel_hybrid();
	test_joinmodel_segmented();
	test_joinmodel_lazy();
	test_joinmodel_choose();
	test_joinmodel_against_pg();
	test_joinmodel_garbage();
	test_joinmodel_range_bounds();
	test_joinmodel_shared_inner();
}
