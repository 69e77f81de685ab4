/*-------------------------------------------------------------------------
 *
 * test_costmodel.c
 *	  Unit tests of src/core/costmodel.c, braidsort's cost model.
 *
 * The OnePass accept/decline decision and its reasons, a random sweep
 * against the rule, gather passes and the uncached-table reread rule, the
 * sorted refs offload, the batch and gather arenas, collated keys,
 * threads of parallel processes, one sort in a Gather Merge's place, and
 * the choice between gathering by TID and from a value log.
 *
 * test/unit/test_costmodel.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "unit.h"

#include "core/collrank.h"
#include "core/costmodel.h"
#include "core/vlogrow.h"

/* accepting_input: a case braidsort should take (PG spills, map fits). */
static BraidCostInput
accepting_input(void)
{
	BraidCostInput in;

	memset(&in, 0, sizeof(in));

	in.rows = 1e6;
	in.sort_width = 200;
	in.tuple_bytes = 220;
	in.heap_refetch = true;
	in.entry_bytes = 32;
	in.budget_bytes = 64.0 * 1024 * 1024;	/* 32 MB needed */
	in.sort_mem_bytes = 4.0 * 1024 * 1024;	/* PG needs ~248 MB */
	return in;
}

/* test_costmodel: accept/decline decisions, boundaries and reasons. */
static void
test_costmodel(void)
{
	Check		c;
	BraidCostInput in;
	const char *why;
	const char *why_rows = NULL,
			   *why_budget = NULL,
			   *why_fits = NULL;

	check_init(&c);

	/* baseline accepts */
	in = accepting_input();
	check_that(&c, braid_cost_indexmap_bytes(&in) == in.rows * in.entry_bytes,
			   "indexmap bytes %g, expected rows*entry_bytes %g",
			   braid_cost_indexmap_bytes(&in), in.rows * in.entry_bytes);
	check_that(&c, braid_cost_pg_sort_bytes(&in) >= in.rows * in.sort_width,
			   "pg sort bytes %g below rows*sort_width %g",
			   braid_cost_pg_sort_bytes(&in), in.rows * in.sort_width);
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why), "baseline should be accepted (why=%s)",
			   why ? why : "NULL");

	/* too few rows */
	in = accepting_input();
	in.rows = BRAID_MIN_ROWS - 1;
	in.sort_mem_bytes = 0;		/* PG would still spill */
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why), "rows=%g should decline", in.rows);
	check_that(&c, why != NULL && why[0] != '\0', "rows=%g: no reason given", in.rows);
	why_rows = why;
	in.rows = 0;
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why) && why != NULL,
			   "rows=0 should decline with a reason");
	in.rows = BRAID_MIN_ROWS;
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why),
			   "rows=BRAID_MIN_ROWS with spill and fitting map should accept (why=%s)",
			   why ? why : "NULL");

	/* IndexMap over budget: MergePass expected, still accepted when cheap */
	in = accepting_input();
	in.budget_bytes = in.rows * in.entry_bytes;
	check_that(&c, braid_cost_is_onepass(&in), "IndexMap exactly at budget is OnePass");
	in.budget_bytes = in.rows * in.entry_bytes - 1;
	check_that(&c, !braid_cost_is_onepass(&in), "IndexMap over budget is MergePass");
	check_that(&c, braid_cost_braid_ns(&in) > in.rows * 280.0,
			   "MergePass should cost more than OnePass per row");
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why),
			   "over-budget IndexMap of a cached table should be accepted (why=%s)",
			   why ? why : "NULL");

	/*
	 * over budget, uncached table, tiny budget: too many gather rereads
	 * (gathering by TID; a value log is the way out, see
	 * test_costmodel_sources)
	 */
	in.table_pages = in.rows * in.tuple_bytes / 8192.0;
	in.table_cached = false;
	in.budget_bytes = 1024.0 * 1024;
	in.only_from = BRAID_FROM_HEAP_TID;
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why),
			   "uncached table with %g gather passes should decline",
			   braid_cost_gather_passes(&in));
	check_that(&c, why != NULL && why[0] != '\0', "rereads: no reason given");
	why_budget = why;

	/* PostgreSQL's sort fits in sort_mem: decline, also at equality */
	in = accepting_input();
	in.only_from = BRAID_FROM_ANY;
	in.sort_mem_bytes = braid_cost_pg_sort_bytes(&in);
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why),
			   "PG sort bytes == sort_mem (%g) should decline", in.sort_mem_bytes);
	check_that(&c, why != NULL && why[0] != '\0', "PG sort fits: no reason given");
	why_fits = why;
	in.sort_mem_bytes = 1e15;
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why) && why != NULL,
			   "huge sort_mem should decline with a reason");
	in.sort_mem_bytes = braid_cost_pg_sort_bytes(&in) - 1;
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why),
			   "PG sort 1 byte over sort_mem with fitting map should accept (why=%s)",
			   why ? why : "NULL");

	/* tiny sort width still accounts per-tuple memory, so spill is judged */
	in = accepting_input();
	in.sort_width = 0;
	check_that(&c, braid_cost_pg_sort_bytes(&in) > 0,
			   "pg sort bytes with width 0 should be positive, got %g",
			   braid_cost_pg_sort_bytes(&in));

	/* the three reasons are distinguishable */
	check_that(&c, why_rows && why_budget && why_fits &&
			   strcmp(why_rows, why_budget) != 0 && strcmp(why_rows, why_fits) != 0 &&
			   strcmp(why_budget, why_fits) != 0,
			   "decline reasons should differ: '%s' / '%s' / '%s'",
			   why_rows ? why_rows : "NULL", why_budget ? why_budget : "NULL",
			   why_fits ? why_fits : "NULL");

	check_report(&c, "costmodel: declines on few rows, costly rereads, PG sort fitting; accepts on spill");

	/* random sweep against the specification */
	check_init(&c);
	for (int i = 0; i < 20000; i++)
	{
		bool		expect,
					got;

		in.rows = (double) rng_below(4) == 0 ? (double) rng_below(2000)
			: (double) rng_below(100000000);
		in.sort_width = (double) rng_below(500);
		in.tuple_bytes = in.sort_width + (double) rng_below(100);
		in.entry_bytes = (double) (16 + rng_below(64));
		in.budget_bytes = (double) rng_below(UINT64_C(1) << 34);
		in.sort_mem_bytes = (double) rng_below(UINT64_C(1) << 34);
		in.table_pages = (double) rng_below(4) == 0 ? 0 : (double) rng_below(1000000);
		in.table_cached = rng_below(2) == 0;
		expect = in.rows >= BRAID_MIN_ROWS &&
			braid_cost_pg_sort_bytes(&in) > in.sort_mem_bytes &&
			braid_cost_braid_ns(&in) <= braid_cost_pg_ns(&in) * BRAID_COST_MARGIN;
		why = NULL;
		got = braid_cost_prefers(&in, &why);
		check_that(&c, got == expect,
				   "rows=%g entry=%g budget=%g width=%g sort_mem=%g: got %d, expected %d",
				   in.rows, in.entry_bytes, in.budget_bytes, in.sort_width,
				   in.sort_mem_bytes, got, expect);
		if (!got)
			check_that(&c, why != NULL && why[0] != '\0',
					   "declined without a reason (rows=%g)", in.rows);
	}
	check_report(&c, "costmodel: random sweep agrees with rows/spill/time rule, reason on every decline");
}

/*
 * test_costmodel_reread
 *		An uncached table is reread once per gather batch: declined when the
 *		budget leaves too little room for batches, accepted when the table is
 *		cached or the batches are few.
 */
static void
test_costmodel_reread(void)
{
	Check		c;
	BraidCostInput in;
	const char *why = NULL;

	check_init(&c);

	/* the benchmark's shape: 5M rows, 128MB, 82k pages */
	memset(&in, 0, sizeof(in));
	in.rows = 5e6;
	in.sort_width = 110;
	in.tuple_bytes = 136;
	in.entry_bytes = 24;
	in.budget_bytes = 128.0 * 1024 * 1024;
	in.sort_mem_bytes = 128.0 * 1024 * 1024;
	in.table_pages = 82000;
	in.table_cached = false;
	in.heap_refetch = true;
	in.sort_threads = 2;
	in.cpus = 2;
	/* the sorted refs go to the device, leaving the budget to tuples */
	check_that(&c, braid_cost_gather_passes(&in) == 6.0,
			   "expected 6 gather passes, got %g", braid_cost_gather_passes(&in));
	check_that(&c, braid_cost_prefers(&in, &why),
			   "benchmark shape, uncached: declined (%s)", why ? why : "NULL");

	/* a device too slow to be worth it keeps the refs in memory: 8 passes */
	in.spill_ns_per_byte = 1000.0;
	check_that(&c, braid_cost_gather_passes(&in) == 8.0,
			   "slow device: expected 8 gather passes, got %g", braid_cost_gather_passes(&in));
	in.spill_ns_per_byte = 0;

	/*
	 * a budget far below the table: over a hundred batches, each rereading
	 * about half of an uncached table's pages
	 */
	in.rows = 1e7;
	in.sort_width = 100;
	in.tuple_bytes = 100;
	in.entry_bytes = 24;
	in.budget_bytes = 8.0 * 1024 * 1024;
	in.sort_mem_bytes = 8.0 * 1024 * 1024;
	in.table_pages = 125000;
	in.table_cached = false;
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why) && why != NULL,
			   "uncached table with %g passes (%g page visits) was accepted",
			   braid_cost_gather_passes(&in), braid_cost_page_visits(&in));
	check_that(&c, braid_cost_page_visits(&in) < braid_cost_gather_passes(&in) * in.table_pages,
			   "sparse batches should visit fewer than all pages");

	/*
	 * a page read back at random costs twice one read in the table's order
	 * (the kernel reads ahead); in between by the squared correlation
	 */
	{
		double		random = braid_cost_page_visit_ns(&in);

		in.correlation = 1.0;
		check_that(&c, random == 2 * braid_cost_page_visit_ns(&in),
				   "random reread %g ns, in order %g", random, braid_cost_page_visit_ns(&in));
		in.correlation = -0.5;
		check_that(&c, fabs(braid_cost_page_visit_ns(&in) - random * (1 - 0.25 / 2)) < 1e-6,
				   "correlation -0.5: %g ns", braid_cost_page_visit_ns(&in));
		in.correlation = 0;
	}

	/* the same sort over a cached table only pays cheap page revisits */
	in.table_cached = true;
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why),
			   "cached table declined (%s)", why ? why : "NULL");

	/* one pass at least, even with an enormous budget */
	in.budget_bytes = 1e15;
	check_that(&c, braid_cost_gather_passes(&in) == 1.0,
			   "expected 1 pass, got %g", braid_cost_gather_passes(&in));

	check_report(&c, "costmodel: gather passes and the uncached-table reread rule");
}

/*
 * test_costmodel_offload_refs
 *		The sorted refs go to the device only when that saves gather passes
 *		worth more than writing them, and the batch arena pays for the
 *		bookkeeping of its rows.
 */
static void
test_costmodel_offload_refs(void)
{
	Check		c;
	double		passes = 0;
	double		mb = 1024.0 * 1024;

	check_init(&c);

	/*
	 * bookkeeping: 12 bytes a row in memory, 20 with refs on the device, 28
	 * when the next batch's refs are merged meanwhile
	 */
	check_that(&c, fabs(braid_cost_batch_arena(140.0 * mb, 128, BRAID_REFS_IN_MEMORY) -
						128.0 * mb) < 1.0,
			   "arena for 128-byte rows with refs in memory: %g",
			   braid_cost_batch_arena(140.0 * mb, 128, BRAID_REFS_IN_MEMORY));
	check_that(&c, fabs(braid_cost_batch_arena(148.0 * mb, 128, BRAID_REFS_ON_DEVICE) -
						128.0 * mb) < 1.0,
			   "arena for 128-byte rows with refs on the device: %g",
			   braid_cost_batch_arena(148.0 * mb, 128, BRAID_REFS_ON_DEVICE));
	check_that(&c, fabs(braid_cost_batch_arena(156.0 * mb, 128, BRAID_REFS_MERGED_AHEAD) -
						128.0 * mb) < 1.0,
			   "arena for 128-byte rows with the next batch merged ahead: %g",
			   braid_cost_batch_arena(156.0 * mb, 128, BRAID_REFS_MERGED_AHEAD));
	check_that(&c, braid_cost_batch_arena(1000, 128, BRAID_REFS_IN_MEMORY) == 32768.0,
			   "tiny memory still gives the minimum arena");

	/* the benchmark's shape: 8 passes become 6 */
	check_that(&c, braid_cost_offload_refs(5e6, 5e6 * 128, 128.0 * mb, 0, 82000, 200.0, 0,
										   &passes) && passes == 6.0,
			   "benchmark shape: offload expected with 6 passes (%g)", passes);

	/* everything fits one batch either way: nothing to save */
	check_that(&c, !braid_cost_offload_refs(1e5, 1e5 * 128, 128.0 * mb, 0, 1700, 200.0, 0,
											&passes) && passes == 1.0,
			   "one batch: no offload expected (%g passes)", passes);

	/* the gather_batch cap holds both arenas to the same size */
	check_that(&c, !braid_cost_offload_refs(5e6, 5e6 * 128, 128.0 * mb, 16.0 * mb, 82000,
											200.0, 0, &passes) && passes == 39.0,
			   "capped arena: no offload expected (%g passes)", passes);

	/* a write-expensive device: two passes of a small table do not pay */
	check_that(&c, !braid_cost_offload_refs(5e6, 5e6 * 128, 128.0 * mb, 0, 2000, 200.0, 50.0,
											&passes) && passes == 8.0,
			   "expensive device: no offload expected (%g passes)", passes);

	check_report(&c, "costmodel: sorted refs go to the device only when it saves gather passes");
}

/*
 * test_costmodel_gather_arena
 *		The gather's bookkeeping by page: 8 bytes per page of the table, and
 *		8 per distinct page of a batch, at most one a row (sparse) and at
 *		most the table's pages (dense).
 */
static void
test_costmodel_gather_arena(void)
{
	Check		c;
	double		mb = 1024.0 * 1024;
	double		sparse,
				dense,
				tiny;

	check_init(&c);

	/* 20M rows at 16MB: 327k pages, far more than a batch's rows */
	sparse = braid_cost_gather_arena(16.0 * mb, 327000, 112, BRAID_REFS_ON_DEVICE);
	check_that(&c, fabs(sparse - (16.0 * mb - 327000 * 8.0) * 112 / (112 + 20 + 8)) < 1.0,
			   "sparse batch: a distinct page per row (%g)", sparse);
	check_that(&c, sparse / 112 < 327000, "sparse batch: fewer rows than pages");

	/* a small table under a large budget: every page, once */
	dense = braid_cost_gather_arena(128.0 * mb, 1000, 112, BRAID_REFS_IN_MEMORY);
	check_that(&c, fabs(dense - (128.0 * mb - 1000 * 16.0) * 112 / (112 + 12)) < 1.0,
			   "dense batch: every page of the table (%g)", dense);

	/* the two regimes agree where a batch has as many rows as pages */
	sparse = braid_cost_gather_arena(1000 * (112 + 20 + 8) + 1000 * 8.0 - 1, 1000, 112, BRAID_REFS_ON_DEVICE);
	dense = braid_cost_gather_arena(1000 * (112 + 20 + 8) + 1000 * 8.0 + 1, 1000, 112, BRAID_REFS_ON_DEVICE);
	check_that(&c, fabs(sparse - dense) < 2.0,
			   "continuous at rows = pages (%g vs %g)", sparse, dense);

	/* a table whose bookkeeping outweighs the budget: the minimum arena */
	tiny = braid_cost_gather_arena(1.0 * mb, 1e6, 112, BRAID_REFS_ON_DEVICE);
	check_that(&c, tiny == 32768.0, "minimum arena (%g)", tiny);

	check_report(&c, "costmodel: the gather arena pays for its bookkeeping by page");
}

/*
 * cached_heap_input: a sort of 1M rows of a cached heap table (gathered by
 * TID) of table_pages pages, sort_width bytes a row in PostgreSQL's sort,
 * tuple_bytes a heap tuple, 24-byte entries, braidsort's budget and
 * PostgreSQL's work_mem as given; the rest zero, for the caller.
 */
static BraidCostInput
cached_heap_input(double sort_width, double tuple_bytes, double table_pages,
				  double budget_bytes, double sort_mem_bytes)
{
	BraidCostInput in;

	memset(&in, 0, sizeof(in));
	in.rows = 1e6;
	in.sort_width = sort_width;
	in.tuple_bytes = tuple_bytes;
	in.entry_bytes = 24;
	in.budget_bytes = budget_bytes;
	in.sort_mem_bytes = sort_mem_bytes;
	in.table_pages = table_pages;
	in.table_cached = true;
	in.heap_refetch = true;
	return in;
}

/*
 * names_input: 1M rows of a collated key (names), short rows (8 bytes in
 * PostgreSQL's sort, so that the comparisons are nearly all of either
 * sort's work and one thread gives braidsort no edge), a cached table,
 * within "budget" bytes.
 */
static BraidCostInput
names_input(double budget)
{
	BraidCostInput in = cached_heap_input(8, 72, 9000, budget, 16.0 * 1024 * 1024);

	in.collated = true;
	return in;
}

/* rank_saving: what ranking saves a sort gathering by TID (braid_cost_ranks). */
static double
rank_saving(const BraidCostInput *in)
{
	double		saving;

	(void) braid_cost_ranks(in, BRAID_FROM_HEAP_TID, &saving);
	return saving;
}

/*
 * test_costmodel_ranks: a sort ranks its collated strings (collrank.c) when
 * the first key's distinct strings fit its quarter of the budget and that
 * is cheaper than comparing them: 1M rows of 40000 names are then worth
 * taking even on one thread; all-distinct strings beyond the room, or a
 * key compared only between rows tied on a unique one, are not ranked;
 * without statistics the sort tries wherever comparisons are expected.
 */
static void
test_costmodel_ranks(void)
{
	Check		c;
	BraidCostInput in;
	const char *why = NULL;
	double		compared,
				ranked;

	check_init(&c);
	in = names_input(64.0 * 1024 * 1024);
	in.collated_keys = 2;
	in.sort_threads = 1;

	in.collated_first_distinct = 1e6;
	check_that(&c, !braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, NULL),
			   "1M distinct strings do not fit a quarter of 64 MB: not ranked");
	compared = braid_cost_tid_ns(&in);
	check_that(&c, !braid_cost_prefers(&in, &why), "compared on one thread: left to PostgreSQL");
	in.collated_first_distinct = 40000;
	check_that(&c, braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, NULL), "40000 names: ranked");
	ranked = braid_cost_tid_ns(&in);
	check_that(&c, ranked < compared - 1e6 * 10 * 90,
			   "ranked: at least 10 comparisons a row fewer (%.0f vs %.0f ns)", ranked, compared);
	check_that(&c, braid_cost_prefers(&in, &why), "ranked: taken on one thread (%s)", why ? why : "");
	check_that(&c, fabs(rank_saving(&in) - (compared - ranked)) < 1,
			   "the saving is the difference (%.0f vs %.0f ns)",
			   rank_saving(&in), compared - ranked);

	/* compared only between rows tied on a unique key: nothing to rank */
	in.collated_group_rows = 1;
	check_that(&c, !braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, NULL), "after a unique key: not ranked");
	in.collated_first_distinct = 0;
	check_that(&c, !braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, NULL),
			   "after a unique key, without statistics: not ranked");
	in.collated_group_rows = 2;
	check_that(&c, !braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, NULL),
			   "without statistics, one comparison a row: not worth a try");
	in.collated_group_rows = 0;
	check_that(&c, braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, NULL),
			   "without statistics: the sort tries");
	check_that(&c, rank_saving(&in) == 0,
			   "without statistics: no saving counted");
	check_that(&c, braid_cost_tid_ns(&in) == compared,
			   "without statistics: counted as compared (%.0f vs %.0f)", braid_cost_tid_ns(&in), compared);

	/* too few rows a sort to rank */
	in.collated_first_distinct = 40;
	in.rows = BRAID_RANK_MIN_ENTRIES / 2;
	check_that(&c, !braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, NULL), "%g rows: not ranked", in.rows);
	check_report(&c, "costmodel: collated strings ranked where they fit and it pays");
}

/*
 * test_costmodel_merge_memo: the merge's memos (core/collmemo.h) leave to
 * the collation a run's changes of string: with one collated key of 12000
 * names in runs of 51724 rows (the realistic workload's 3M last names in
 * 58 runs, where 9.07M calls of strcoll() became 2.0M, 0.22) about 0.23 of
 * the merge's comparisons; all of them with two collated keys or without
 * statistics; at least the floor for a status of 5 values; nearly all for
 * strings that rarely repeat in a run.  And a spilling sort of one
 * collated key is estimated cheaper than the comparisons would cost it.
 */
static void
test_costmodel_merge_memo(void)
{
	Check		c;
	BraidCostInput in = names_input(4.0 * 1024 * 1024);
	double		share;

	check_init(&c);
	in.collated_keys = 1;
	in.collated_first_distinct = 12000;
	share = braid_cost_merge_memo_share(&in, 51724);
	check_that(&c, share > 0.2 && share < 0.26, "12000 names, runs of 51724: %.3f", share);
	in.collated_first_distinct = 5;
	check_that(&c, braid_cost_merge_memo_share(&in, 1e5) == BRAID_MERGE_MEMO_FLOOR,
			   "5 values: the floor (%.3f)", braid_cost_merge_memo_share(&in, 1e5));
	in.collated_first_distinct = 1e7;
	share = braid_cost_merge_memo_share(&in, 5e4);
	check_that(&c, share > 0.99 && share <= 1.0, "strings that rarely repeat: %.3f", share);

	/* no credit: the whole share */
	{
		static const struct
		{
			const char *what;
			int			keys;
			double		distinct;
			double		group_rows;
			double		run_rows;
		}			none[] = {
			{"two collated keys", 2, 12000, 0, 51724},
			{"no statistics", 1, 0, 0, 51724},
			{"distinct not a number", 1, NAN, 0, 51724},
			{"after another key (groups of 1000 rows)", 1, 12000, 1000, 51724},
			{"no rows", 1, 12000, 0, 0},
		};

		for (int i = 0; i < (int) (sizeof(none) / sizeof(none[0])); i++)
		{
			BraidCostInput x = in;

			x.collated_keys = none[i].keys;
			x.collated_first_distinct = none[i].distinct;
			x.collated_group_rows = none[i].group_rows;
			check_that(&c, braid_cost_merge_memo_share(&x, none[i].run_rows) == 1.0,
					   "%s: 1, got %.3f", none[i].what,
					   braid_cost_merge_memo_share(&x, none[i].run_rows));
		}
	}

	/* the estimate of a spilling sort of 12000 names follows */
	in.collated_first_distinct = 12000;
	{
		double		memo = braid_cost_tid_ns(&in);

		in.collated_keys = 0;	/* one key, counted as such */
		check_that(&c, braid_cost_tid_ns(&in) == memo, "collated_keys 0 is one key");
		in.collated_first_distinct = 1e7;
		in.collated_distinct = 1e7;
		check_that(&c, braid_cost_tid_ns(&in) > memo,
				   "strings that do not repeat cost the merge more (%.0f vs %.0f ns)",
				   braid_cost_tid_ns(&in), memo);
	}
	check_report(&c, "costmodel: the merge's memos leave to the collation a run's changes of string");
}

/*
 * test_costmodel_tied: a first key of five strings, in runs: few
 * comparisons reach the collation (equal strings compare by memcmp, and
 * the merge makes most of the log2 5 a row), but unranked every entry ties
 * on its prefix and the tie-break orders the run: ranked, and the estimate
 * is the ranked sort's.  After another key (groups of 1000 rows) the
 * prefix orders the groups and no tie-break is counted.
 */
static void
test_costmodel_tied(void)
{
	Check		c;
	BraidCostInput in = names_input(4.0 * 1024 * 1024);
	double		saving;

	check_init(&c);
	in.collated_keys = 1;
	in.collated_first_distinct = 5;
	in.collated_distinct = 5;
	check_that(&c, braid_cost_spills(&in, BRAID_FROM_HEAP_TID), "1M rows in 4 MB spill");
	check_that(&c, braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, &saving) && saving > 1e6 * 10 * 30,
			   "first key of 5 strings: ranked, saving the tie-break's ~15 comparisons a row (%.0f ns)",
			   saving);
	in.collated_group_rows = 1000;
	check_that(&c, !braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, &saving),
			   "after a key of groups of 1000 rows: no tie-break counted, not ranked (saving %.0f ns)",
			   saving);
	in.collated_group_rows = -1;
	check_that(&c, !braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, &saving),
			   "after keys of unknown ties: no tie-break counted, not ranked (saving %.0f ns)",
			   saving);
	in.collated_group_rows = 0;
	in.collated_first_distinct = 0;
	in.collated_distinct = 0;
	(void) braid_cost_ranks(&in, BRAID_FROM_HEAP_TID, &saving);
	check_that(&c, saving == 0, "without statistics: no saving counted (%.0f ns)", saving);
	check_report(&c, "costmodel: a first collated key's ties go to the tie-break unless ranked");
}

/*
 * test_costmodel_collated: a key ordered by a collation's comparator costs
 * both sorts its comparisons; braidsort's are split among its threads, so
 * 1M names are worth taking on two threads and not on one.
 */
static void
test_costmodel_collated(void)
{
	Check		c;
	BraidCostInput in;
	const char *why = NULL;

	check_init(&c);
	in = names_input(256.0 * 1024 * 1024);
	in.sort_threads = 2;
	check_that(&c, braid_cost_prefers(&in, &why), "2 threads: should take it (%s)", why ? why : "");
	in.sort_threads = 1;
	check_that(&c, !braid_cost_prefers(&in, &why), "1 thread: should leave it to PostgreSQL");
	in.collated = false;
	check_that(&c, braid_cost_prefers(&in, &why), "not collated: should take it (%s)", why ? why : "");

	/*
	 * a collated key after a unique one is never compared: neither sort pays
	 * for it (as if not collated); after keys tying 1000 rows a group, each
	 * row pays log2(1000) comparisons instead of log2(1M)
	 */
	in.collated = true;
	in.sort_threads = 2;
	{
		double		all = braid_cost_pg_ns(&in);
		double		grouped,
					unique,
					plain;

		in.collated_group_rows = 1000;
		grouped = braid_cost_pg_ns(&in);
		in.collated_group_rows = 1;
		unique = braid_cost_pg_ns(&in);
		in.collated = false;
		plain = braid_cost_pg_ns(&in);
		check_that(&c, unique == plain, "unique keys before: no collated comparison (%.0f vs %.0f)",
				   unique, plain);
		check_that(&c, grouped > plain && grouped < all &&
				   fabs((grouped - plain) / (all - plain) - log2(1000) / log2(1e6)) < 1e-9,
				   "groups of 1000: log2(1000) comparisons a row (%.0f, %.0f, %.0f)",
				   plain, grouped, all);
		/* braidsort's side too */
		in.collated = true;
		in.collated_group_rows = 0;
		all = braid_cost_tid_ns(&in);
		in.collated_group_rows = 1;
		unique = braid_cost_tid_ns(&in);
		check_that(&c, unique < all, "braidsort: no collated comparison either (%.0f vs %.0f)",
				   unique, all);
	}

	/*
	 * unknown ties (< 0): taken only if taken both with every row reaching
	 * the collation and with none.  On one thread, where the comparisons cost
	 * braidsort about what they cost PostgreSQL, none would take it and every
	 * row would not: unknown does not.
	 */
	for (int threads = 1; threads <= 2; threads++)
	{
		bool		every,
					none,
					unknown;

		in.sort_threads = threads;
		in.collated_group_rows = 0;
		every = braid_cost_prefers(&in, &why);
		in.collated_group_rows = 1;
		none = braid_cost_prefers(&in, &why);
		in.collated_group_rows = -1;
		unknown = braid_cost_prefers(&in, &why);
		check_that(&c, unknown == (every && none),
				   "%d thread(s): unknown ties take it only if both extremes do (%d %d %d)",
				   threads, every, none, unknown);
		if (threads == 1)
			check_that(&c, none && !every && !unknown,
					   "1 thread: no comparisons would take it, every row not, unknown not (%d %d %d)",
					   none, every, unknown);
	}
	in.collated_group_rows = 0;

	/*
	 * spilled: the merge's comparisons (about log2 of the runs a row) are
	 * made in the backend, not shared among the threads
	 */
	{
		double		with,
					without,
					all = in.rows * log2(in.rows) * 90.0;

		in.sort_threads = 2;
		in.budget_bytes = 1.5 * 1024 * 1024;
		with = braid_cost_tid_ns(&in);
		in.collated = false;
		without = braid_cost_tid_ns(&in);
		in.collated = true;
		check_that(&c, with - without > all / 2 * 1.1 && with - without < all,
				   "spilled, 2 threads: %.0f ns of collated comparisons, between %.0f and %.0f",
				   with - without, all / 2, all);
		in.budget_bytes = 256.0 * 1024 * 1024;
		with = braid_cost_tid_ns(&in);
		in.collated = false;
		without = braid_cost_tid_ns(&in);
		in.collated = true;
		check_that(&c, fabs(with - without - all / 2) < 1,
				   "in memory, 2 threads: every comparison shared (%.0f ns)", with - without);
	}
	check_report(&c, "costmodel: collated keys pay their comparisons, braidsort's split among threads but the merge's, only among rows tied before them");
}

/*
 * parallel_input: a process's sort of 1M rows of 100 bytes (128-byte
 * tuples, a cached table of 16000 pages) with work_mem 4MB and the given
 * budget; CPUs, threads and processes left for the caller.
 */
static BraidCostInput
parallel_input(double budget_bytes)
{
	return cached_heap_input(100, 128, 16000, budget_bytes, 4.0 * 1024 * 1024);
}

/*
 * test_costmodel_parallel
 *		Under a Gather each process sorts its share on its share of the CPUs:
 *		threads beyond that share speed nothing up, so the estimate of
 *		three processes on two CPUs is that of one thread, and a process
 *		alone on two CPUs gains from its second thread.
 */
static void
test_costmodel_parallel(void)
{
	Check		c;
	BraidCostInput in;
	double		one,
				two;

	check_init(&c);
	in = parallel_input(64.0 * 1024 * 1024);

	in.cpus = 2;
	in.processes = 1;
	in.sort_threads = 2;
	check_that(&c, braid_cost_thread_speedup(&in) == 2.0,
			   "one process, two CPUs, two threads: speed-up %g, expected 2",
			   braid_cost_thread_speedup(&in));
	in.processes = 3;
	check_that(&c, braid_cost_thread_speedup(&in) == 1.0,
			   "three processes on two CPUs, two threads each: speed-up %g, expected 1",
			   braid_cost_thread_speedup(&in));
	in.sort_threads = 1;
	check_that(&c, braid_cost_thread_speedup(&in) == 1.0,
			   "three processes, one thread each: speed-up %g, expected 1",
			   braid_cost_thread_speedup(&in));
	in.cpus = 8;
	in.processes = 2;
	in.sort_threads = 4;
	check_that(&c, braid_cost_thread_speedup(&in) == 4.0,
			   "two processes on eight CPUs, four threads each: speed-up %g, expected 4",
			   braid_cost_thread_speedup(&in));

	/* a process's threads shorten its estimate only while they have CPUs */
	in.cpus = 2;
	in.processes = 1;
	in.sort_threads = 1;
	one = braid_cost_tid_ns(&in);
	in.sort_threads = 2;
	two = braid_cost_tid_ns(&in);
	check_that(&c, two < one, "a second thread on a second CPU should help (%g vs %g)", two, one);
	in.processes = 3;
	two = braid_cost_tid_ns(&in);
	in.sort_threads = 1;
	one = braid_cost_tid_ns(&in);
	check_that(&c, two == one,
			   "two threads in each of three processes on two CPUs cost as one (%g vs %g)",
			   two, one);
	in.sort_threads = 2;
	in.processes = 1;
	two = braid_cost_tid_ns(&in);
	/* unset fields mean one process on as many CPUs as threads */
	in.processes = 0;
	in.cpus = 0;
	check_that(&c, braid_cost_tid_ns(&in) == two, "defaults: %g vs %g", braid_cost_tid_ns(&in), two);
	check_report(&c, "costmodel: threads of parallel processes share the CPUs");
}

/*
 * test_costmodel_one_sort
 *		A Gather Merge over three processes' sorts (two CPUs) against one
 *		sort of all the rows: the processes take turns on the CPUs, the
 *		merge costs every row, and the single sort pays for reading the
 *		scan in one process.  Taken when it beats both parallel plans; not
 *		when each process's sort fits in work_mem, nor when a BraidSort in
 *		each process is faster; where the cost model would not take those,
 *		not by less than the margin over PostgreSQL's plan.
 */
static void
test_costmodel_one_sort(void)
{
	Check		c;
	BraidCostInput each;
	BraidCostInput whole;
	BraidCostEstimate each_est;
	BraidCostEstimate whole_est;
	BraidOneSortEstimate w;
	double		merge;

	check_init(&c);
	each = parallel_input(256.0 * 1024 * 1024);
	each.cpus = 2;
	each.sort_threads = 2;
	each.processes = 3;
	whole = each;
	whole.rows = 3e6;
	whole.table_pages = 48000;
	whole.processes = 1;
	braid_cost_estimate(&each, &each_est);
	braid_cost_estimate(&whole, &whole_est);
	merge = braid_cost_gather_merge_ns(3e6);

	braid_cost_one_sort(&each, &each_est, true, &whole_est, 3e6, 0, HUGE_VAL, &w);
	check_that(&c, fabs(w.pg_ns - (each_est.pg_ns * 1.5 + merge)) < 1,
			   "PostgreSQL's parallel plan: each sort %g x 1.5 (3 processes, 2 CPUs) + merge %g, got %g",
			   each_est.pg_ns, merge, w.pg_ns);
	check_that(&c, fabs(w.each_ns - (each_est.braid_ns * 1.5 + merge)) < 1,
			   "a BraidSort in each process: %g x 1.5 + merge %g, got %g",
			   each_est.braid_ns, merge, w.each_ns);
	check_that(&c, w.one_ns == whole_est.braid_ns, "no scan cost: one sort %g, got %g",
			   whole_est.braid_ns, w.one_ns);
	check_that(&c, w.prefers, "one sort of 3M rows should beat the merge of three (why=%s)",
			   w.why ? w.why : "NULL");

	/*
	 * the planner's rows a process are a worker's (its parallel divisor
	 * counts the leader as part of one): 1.25M of 3M, scaled to the even
	 * share, 0.8 of them
	 */
	{
		BraidCostInput planned = each;
		BraidCostEstimate planned_est;

		planned.rows = 1.25e6;
		braid_cost_estimate(&planned, &planned_est);
		braid_cost_one_sort(&planned, &planned_est, true, &whole_est, 3e6, 0, HUGE_VAL, &w);
		check_that(&c, fabs(w.pg_ns - (planned_est.pg_ns * 0.8 * 1.5 + merge)) < 1,
				   "PostgreSQL's plan at the even share: %g x 0.8 x 1.5 + %g, got %g",
				   planned_est.pg_ns, merge, w.pg_ns);
		check_that(&c, fabs(w.each_ns - (planned_est.braid_ns * 0.8 * 1.5 + merge)) < 1,
				   "each process's BraidSort at the even share: %g x 0.8 x 1.5 + %g, got %g",
				   planned_est.braid_ns, merge, w.each_ns);
	}

	/* the scan in one process instead of two CPUs: half of it is extra */
	braid_cost_one_sort(&each, &each_est, true, &whole_est, 3e6, 400e6, HUGE_VAL, &w);
	check_that(&c, fabs(w.one_ns - (whole_est.braid_ns + 200e6)) < 1,
			   "a 400 ms scan read by one process, not two: +200 ms, got %g",
			   w.one_ns - whole_est.braid_ns);

	/* a scan so slow that each process's share is better */
	braid_cost_one_sort(&each, &each_est, true, &whole_est, 3e6, 1e11, HUGE_VAL, &w);
	check_that(&c, !w.prefers && w.why != NULL && strstr(w.why, "each process") != NULL,
			   "a 100 s scan should keep a sort in each process (why=%s)", w.why ? w.why : "NULL");

	/*
	 * taken in each process: one sort need only beat that, not PostgreSQL's
	 * plan by the margin (asked of each process's sort already); not taken,
	 * the margin applies.  A merge of 30M rows weighs on both parallel plans
	 * alike, leaving "each" above 85% of PostgreSQL's; a scan cost places one
	 * sort just under "each" (the scan counts half: two CPUs would have read
	 * it).
	 */
	{
		double		scan;
		BraidCostEstimate declined = each_est;

		declined.prefers = false;
		declined.why = "declined";
		braid_cost_one_sort(&each, &each_est, true, &whole_est, 3e7, 0, HUGE_VAL, &w);
		scan = (w.each_ns - whole_est.braid_ns) * 2 - 2e6;
		braid_cost_one_sort(&each, &each_est, true, &whole_est, 3e7, scan, HUGE_VAL, &w);
		check_that(&c, each_est.prefers && w.one_ns < w.each_ns &&
				   w.one_ns > w.pg_ns * BRAID_COST_MARGIN,
				   "the case: each taken (%d), one %g under each %g, above 85%% of PostgreSQL's %g",
				   each_est.prefers, w.one_ns, w.each_ns, w.pg_ns);
		check_that(&c, w.prefers, "one sort just faster than each process's should be taken (why=%s)",
				   w.why ? w.why : "NULL");
		/* with braidsort.force the BraidSorts in each process are taken */
		braid_cost_one_sort(&each, &declined, true, &whole_est, 3e7, scan, HUGE_VAL, &w);
		check_that(&c, !w.prefers && w.why != NULL && strstr(w.why, "PostgreSQL") != NULL,
				   "each taken only by force: the margin over PostgreSQL decides (why=%s)",
				   w.why ? w.why : "NULL");
		braid_cost_one_sort(&each, &declined, false, &whole_est, 3e7, scan, HUGE_VAL, &w);
		check_that(&c, !w.prefers && w.why != NULL && strstr(w.why, "PostgreSQL") != NULL,
				   "not taken in each process: the margin over PostgreSQL decides (why=%s)",
				   w.why ? w.why : "NULL");
	}

	/* not taken by braidsort in each process: only PostgreSQL's plan counts */
	braid_cost_one_sort(&each, &each_est, false, &whole_est, 3e6, 0, HUGE_VAL, &w);
	check_that(&c, w.each_ns == HUGE_VAL && w.prefers, "each not taken: each %g, prefers %d",
			   w.each_ns, w.prefers);

	/* each process's sort fits in work_mem: PostgreSQL's quicksort stays */
	each.sort_mem_bytes = 1024.0 * 1024 * 1024;
	braid_cost_estimate(&each, &each_est);
	braid_cost_one_sort(&each, &each_est, false, &whole_est, 3e6, 0, HUGE_VAL, &w);
	check_that(&c, !w.prefers && each_est.small, "each share fits work_mem: prefers %d", w.prefers);
	check_report(&c, "costmodel: one sort in a Gather Merge's place");
}

/*
 * test_costmodel_shared_sort
 *		A shared sort (every process builds, one merges): each process's
 *		sort as the processes take turns on the CPUs, and the one process's
 *		merge and emitting of every row instead of the Gather Merge.  Only
 *		from value logs (by TID the one process would gather every row
 *		alone); where braidsort takes each process's sort, when it beats
 *		those; else by the margin over PostgreSQL's plan; not when each
 *		process's sort would not spill, nor when it fits in work_mem.  One
 *		sort is taken over it only when faster.
 */
static void
test_costmodel_shared_sort(void)
{
	Check		c;
	BraidCostInput each;
	BraidCostInput whole;
	BraidCostEstimate each_est;
	BraidCostEstimate whole_est;
	BraidCostEstimate declined;
	BraidOneSortEstimate w;
	double		shared_ns;
	double		pg_ns;
	double		merge;
	double		spilled_ns;
	bool		shared;

	check_init(&c);
	each = parallel_input(4.0 * 1024 * 1024);
	each.cpus = 2;
	each.sort_threads = 1;
	each.processes = 3;
	each.heap_refetch = false;	/* a value log */
	braid_cost_estimate(&each, &each_est);
	merge = braid_cost_gather_merge_ns(3e6);
	check_that(&c, each_est.from == BRAID_FROM_VALUE_LOG && braid_cost_spills(&each, each_est.from),
			   "the case: a value log that spills (from=%d)", each_est.from);

	shared = braid_cost_shared_sort(&each, &each_est, true, 3e6, &shared_ns, &pg_ns);
	check_that(&c, fabs(pg_ns - (each_est.pg_ns * 1.5 + merge)) < 1,
			   "PostgreSQL's parallel plan: %g x 1.5 + merge %g, got %g", each_est.pg_ns, merge, pg_ns);
	spilled_ns = each_est.braid_ns * 1.5 + 3e6 * 150.0;
	check_that(&c, fabs(shared_ns - spilled_ns) < 1,
			   "shared: each sort %g x 1.5 + 150 ns a row, got %g", each_est.braid_ns, shared_ns);
	check_that(&c, shared, "a shared sort beats a BraidSort in each process and the merge");

	/* not taken in each process: by the margin over PostgreSQL's plan */
	declined = each_est;
	declined.prefers = false;
	shared = braid_cost_shared_sort(&each, &declined, false, 3e6, &shared_ns, &pg_ns);
	check_that(&c, shared == (shared_ns <= pg_ns * BRAID_COST_MARGIN),
			   "each not taken: the margin decides (%g against %g)", shared_ns, pg_ns);

	/* one sort is taken over it only when faster */
	whole = each;
	whole.rows = 3e6;
	whole.processes = 1;
	braid_cost_estimate(&whole, &whole_est);
	braid_cost_one_sort(&each, &each_est, true, &whole_est, 3e6, 0, whole_est.braid_ns - 1, &w);
	check_that(&c, !w.prefers && w.why != NULL && strstr(w.why, "shared") != NULL,
			   "a shared sort 1 ns faster keeps one sort out (why=%s)", w.why ? w.why : "NULL");
	braid_cost_one_sort(&each, &each_est, true, &whole_est, 3e6, 0, whole_est.braid_ns + 1, &w);
	check_that(&c, w.prefers || (w.why != NULL && strstr(w.why, "shared") == NULL),
			   "a shared sort 1 ns slower is not why one sort is left (why=%s)",
			   w.why ? w.why : "NULL");

	/* a sort that would not spill: it has no final merge to save */
	each.budget_bytes = 64.0 * 1024 * 1024;
	each.sort_mem_bytes = 4.0 * 1024 * 1024;	/* PostgreSQL's would spill */
	braid_cost_estimate(&each, &each_est);
	check_that(&c, !braid_cost_spills(&each, each_est.from) &&
			   !braid_cost_shared_sort(&each, &each_est, true, 3e6, &shared_ns, &pg_ns),
			   "in memory: not shared (spills=%d)", braid_cost_spills(&each, each_est.from));

	/* by heap TID: never */
	each = parallel_input(256.0 * 1024 * 1024);
	each.cpus = 2;
	each.processes = 3;
	braid_cost_estimate(&each, &each_est);
	check_that(&c, each_est.from == BRAID_FROM_HEAP_TID &&
			   !braid_cost_shared_sort(&each, &each_est, true, 3e6, &shared_ns, &pg_ns),
			   "by heap TID a shared sort is not taken (from=%d)", each_est.from);

	/* each process's sort fits in work_mem: PostgreSQL's quicksort stays */
	each = parallel_input(4.0 * 1024 * 1024);
	each.processes = 3;
	each.cpus = 2;
	each.heap_refetch = false;
	each.sort_mem_bytes = 1024.0 * 1024 * 1024;
	braid_cost_estimate(&each, &each_est);
	check_that(&c, each_est.small &&
			   !braid_cost_shared_sort(&each, &each_est, true, 3e6, &shared_ns, &pg_ns),
			   "each share fits work_mem: not shared");
	check_report(&c, "costmodel: a shared sort in a Gather Merge's place");
}

/*
 * test_costmodel_sources
 *		Where rows come back from: by TID when the gather's page visits are
 *		cheap (a cached table, or a sort order that follows the physical
 *		one), from a value log when a small budget would make the gather
 *		reread an uncached table over and over; the DBA's choice wins; and
 *		an input that is not a heap scan has only the value log.
 */
static void
test_costmodel_sources(void)
{
	Check		c;
	BraidCostInput in;
	BraidCostEstimate est;

	check_init(&c);
	memset(&in, 0, sizeof(in));
	in.rows = 1.25e6;
	in.sort_width = 124;
	in.tuple_bytes = 148;
	in.row_bytes = 144;
	in.heap_refetch = true;
	in.entry_bytes = 24;
	in.budget_bytes = 64.0 * 1024 * 1024;
	in.sort_mem_bytes = 64.0 * 1024 * 1024;
	in.table_pages = 18700;
	in.table_cached = false;
	in.processes = 3;
	in.cpus = 2;
	in.sort_threads = 1;

	/* the realistic orders table at 64MB: by TID, and worth it */
	braid_cost_estimate(&in, &est);
	check_that(&c, est.prefers && est.from == BRAID_FROM_HEAP_TID,
			   "64MB, uncached: expected braidsort by TID, got prefers=%d from=%d (%s)",
			   est.prefers, est.from, est.why ? est.why : "");
	check_that(&c, est.braid_ns == est.tid_ns && est.tid_ns < est.vlog_ns,
			   "the estimate is the cheaper source's");

	/* at 4MB the gather rereads the table dozens of times: not by TID */
	in.budget_bytes = in.sort_mem_bytes = 4.0 * 1024 * 1024;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.from == BRAID_FROM_VALUE_LOG && est.vlog_ns < est.tid_ns,
			   "4MB, uncached, random order: expected a value log (tid %g, vlog %g)",
			   est.tid_ns, est.vlog_ns);
	check_that(&c, !est.prefers && est.why != NULL, "4MB wide rows: expected a decline");

	/* ... unless the sort order follows the physical order */
	in.correlation = -1.0;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.prefers && est.from == BRAID_FROM_HEAP_TID,
			   "4MB, descending physical order: expected braidsort by TID (%s)",
			   est.why ? est.why : "");
	check_that(&c, braid_cost_page_visits(&in) <= braid_cost_gather_passes(&in) * in.table_pages / 2,
			   "ordered batches should visit few pages each (%g visits)",
			   braid_cost_page_visits(&in));
	in.correlation = 0.5;
	{
		double		half = braid_cost_page_visits(&in);

		in.correlation = 0;
		check_that(&c, half < braid_cost_page_visits(&in),
				   "partial correlation should visit fewer pages than none");
	}

	/* the DBA's choice of source is the estimate's */
	in.only_from = BRAID_FROM_HEAP_TID;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.from == BRAID_FROM_HEAP_TID && est.braid_ns == est.tid_ns,
			   "only_from heap_tid: got from=%d", est.from);
	in.only_from = BRAID_FROM_VALUE_LOG;
	in.budget_bytes = in.sort_mem_bytes = 64.0 * 1024 * 1024;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.from == BRAID_FROM_VALUE_LOG && est.braid_ns == est.vlog_ns,
			   "only_from value_log: got from=%d", est.from);
	in.only_from = BRAID_FROM_ANY;

	/* no heap scan: a value log whatever it costs */
	in.heap_refetch = false;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.from == BRAID_FROM_VALUE_LOG && est.tid_ns == HUGE_VAL,
			   "no heap scan: expected only a value log");

	/* a value log that fits half the budget never touches the device */
	in.rows = 100000;
	{
		double		mem = braid_cost_vlog_ns(&in);

		in.budget_bytes = 1024.0 * 1024;
		check_that(&c, braid_cost_vlog_ns(&in) > mem,
				   "a value log over half the budget should cost its device traffic");
	}

	/* with a value log the IndexMap has half of the budget (exec.c) */
	in.rows = 1e6;
	in.entry_bytes = 24;
	in.budget_bytes = 32e6;
	check_that(&c, braid_cost_spills(&in, BRAID_FROM_VALUE_LOG) &&
			   !braid_cost_spills(&in, BRAID_FROM_HEAP_TID),
			   "24 MB of entries in a 32 MB budget: a value log's IndexMap spills, a TID one not");

	/* the margin: an estimate just below PostgreSQL's is not enough */
	memset(&in, 0, sizeof(in));
	in.rows = 1e6;
	in.sort_width = 100;
	in.tuple_bytes = 128;
	in.heap_refetch = true;
	in.entry_bytes = 24;
	in.budget_bytes = 64.0 * 1024 * 1024;
	in.sort_mem_bytes = 4.0 * 1024 * 1024;
	in.table_pages = 16000;
	in.table_cached = true;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.prefers == (est.braid_ns <= est.pg_ns * BRAID_COST_MARGIN),
			   "prefers should be braid <= margin * pg");
	check_report(&c, "costmodel: rows come back by TID or from a value log, whichever is cheaper");
}

/*
 * test_costmodel_gather_pass
 *		One gather pass's cost: its page visits (about every page, for rows
 *		in random order) at a visit's cost, less for a page in shared
 *		buffers than for one read from the table; nothing without a table.
 */
static void
test_costmodel_gather_pass(void)
{
	Check		c;
	BraidCostInput in;
	double		cached,
				uncached,
				per_visit;

	check_init(&c);
	memset(&in, 0, sizeof(in));
	in.rows = 5e6;
	in.sort_width = 110;
	in.tuple_bytes = 136;
	in.entry_bytes = 24;
	in.budget_bytes = 16.0 * 1024 * 1024;
	in.sort_mem_bytes = 16.0 * 1024 * 1024;
	in.table_pages = 82000;
	in.heap_refetch = true;
	in.sort_threads = 2;
	in.cpus = 2;
	in.table_cached = true;
	cached = braid_cost_gather_pass_ns(&in);
	/* a visit to a cached page: tens to hundreds of ns */
	per_visit = cached * braid_cost_gather_passes(&in) / braid_cost_page_visits(&in);
	check_that(&c, per_visit >= 10 && per_visit <= 1000,
			   "cached: %g ns a pass, %g ns a visit", cached, per_visit);
	/* rows in random order: a pass visits about every page */
	check_that(&c, braid_cost_page_visits(&in) / braid_cost_gather_passes(&in) > 0.5 * in.table_pages,
			   "a pass visits %g of %g pages",
			   braid_cost_page_visits(&in) / braid_cost_gather_passes(&in), in.table_pages);
	in.table_cached = false;
	uncached = braid_cost_gather_pass_ns(&in);
	check_that(&c, uncached > cached, "uncached %g ns, cached %g ns a pass", uncached, cached);
	in.table_pages = 0;
	check_that(&c, braid_cost_gather_pass_ns(&in) == 0, "no table: %g ns",
			   braid_cost_gather_pass_ns(&in));
	check_report(&c, "costmodel: a gather pass costs its page visits");
}

/*
 * test_costmodel_full_keys
 *		Full keys kept beside the entries (long or collated keys) take room
 *		in memory and are written and read once per merge pass: the fan-in
 *		is the budget over BRAID_MERGE_RUN_BYTES, within [2, 1024]; 50000
 *		rows whose 4 kB keys are stored compressed to 91 bytes (what
 *		PostgreSQL's sort carries) are left to it at a small work_mem.
 */
static void
test_costmodel_full_keys(void)
{
	Check		c;
	BraidCostInput in;
	const char *why = NULL;
	double		without,
				with;

	check_init(&c);
	check_that(&c, braid_cost_merge_fanin(0, 0) == 2 &&
			   braid_cost_merge_fanin(1024.0 * 1024, 16) == 64 &&
			   braid_cost_merge_fanin(1e12, 16) == BRAID_MAX_FANIN &&
			   braid_cost_merge_fanin(16.0 * 1024 * 1024, 32768) == 63 &&
			   braid_cost_merge_fanin(64.0 * 1024, 32768) == 2,
			   "fan-in %d %d %d %d %d", braid_cost_merge_fanin(0, 0),
			   braid_cost_merge_fanin(1024.0 * 1024, 16), braid_cost_merge_fanin(1e12, 16),
			   braid_cost_merge_fanin(16.0 * 1024 * 1024, 32768), braid_cost_merge_fanin(64.0 * 1024, 32768));

	memset(&in, 0, sizeof(in));
	in.rows = 50000;
	in.sort_width = 95;
	in.tuple_bytes = 130;
	in.entry_bytes = 40;
	in.table_pages = 900;
	in.table_cached = true;
	in.heap_refetch = true;
	in.collated = true;
	in.sort_threads = 2;
	in.cpus = 2;
	in.budget_bytes = 192.0 * 1024;
	in.sort_mem_bytes = 128.0 * 1024;

	/* passes: 1 while the map fits or its runs merge at once, then more */
	check_that(&c, braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID) == 1,
			   "50000 40-byte entries in 192 kB: 11 runs, 1 pass at fan-in 12 (%g)",
			   braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID));
	in.budget_bytes = 40.0 * 1024;
	check_that(&c, braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID) == 6,
			   "in 40 kB: 33 to 64 runs, 6 passes at fan-in 2 (%g)",
			   braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID));
	in.budget_bytes = 64.0 * 1024 * 1024;
	check_that(&c, braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID) == 1,
			   "map within the budget: 1 pass (%g)",
			   braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID));
	in.budget_bytes = 192.0 * 1024;

	without = braid_cost_tid_ns(&in);
	check_that(&c, braid_cost_prefers(&in, &why), "without full keys: taken (%s)", why ? why : "");
	in.full_key_bytes = 4000;
	with = braid_cost_tid_ns(&in);
	/* collated: the arena's slack (a third), no slots */
	check_that(&c, fabs(braid_cost_indexmap_bytes(&in) - in.rows * (in.entry_bytes + 4000 * 4.0 / 3.0)) < 1,
			   "indexmap bytes count the full keys (%g)", braid_cost_indexmap_bytes(&in));
	/* 4 kB keys: readers within a quarter of 192 kB, fan-in 5 */
	check_that(&c, braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID) == 5,
			   "2713 runs of half the budget at fan-in 5: 5 passes (%g)",
			   braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID));
	check_that(&c, with - without >= in.rows * 4000 * (0.5 + 1.5) * 5 * 0.999,
			   "each pass writes and reads the full keys (%.0f more)", with - without);
	check_that(&c, !braid_cost_prefers(&in, &why), "4 kB keys at 128 kB: left to PostgreSQL");
	in.budget_bytes = 6.0 * 1024 * 1024;
	in.sort_mem_bytes = 4.0 * 1024 * 1024;
	check_that(&c, braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID) == 1,
			   "85 runs at fan-in 184: 1 pass (%g)",
			   braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID));
	check_report(&c, "costmodel: full keys fill runs and are rewritten by every merge pass");
}

/*
 * test_costmodel_device_bytes
 *		What a sort may hold on the spill device at once: nothing when it
 *		fits, its runs once spilled (twice with an intermediate pass) and
 *		the merged refs, and from a value log, the rows beyond the log's
 *		half of the budget.
 */
static void
test_costmodel_device_bytes(void)
{
	Check		c;
	BraidCostInput in;

	check_init(&c);
	memset(&in, 0, sizeof(in));
	in.rows = 100000;
	in.sort_width = 40;
	in.tuple_bytes = 100;
	in.row_bytes = 120;
	in.entry_bytes = 24;
	in.table_pages = 2000;
	in.table_cached = true;
	in.heap_refetch = true;
	in.sort_threads = 2;
	in.cpus = 2;
	in.budget_bytes = 64.0 * 1024 * 1024;
	in.sort_mem_bytes = 64.0 * 1024 * 1024;

	check_that(&c, braid_cost_device_bytes(&in, BRAID_FROM_HEAP_TID) == 0,
			   "fits: nothing on the device (%g)", braid_cost_device_bytes(&in, BRAID_FROM_HEAP_TID));
	check_that(&c, braid_cost_device_bytes(&in, BRAID_FROM_VALUE_LOG) == 0,
			   "fits with its log: nothing (%g)", braid_cost_device_bytes(&in, BRAID_FROM_VALUE_LOG));
	in.budget_bytes = 1024.0 * 1024;
	check_that(&c, braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID) == 1 &&
			   braid_cost_device_bytes(&in, BRAID_FROM_HEAP_TID) == in.rows * (in.entry_bytes + 8),
			   "1 MB: runs merged in one pass, each entry once, and the merged refs (%g)",
			   braid_cost_device_bytes(&in, BRAID_FROM_HEAP_TID));

	/*
	 * the log: the half MB it kept in memory written whole, the other rows
	 * packed, 12 bytes a row fewer, in segments reserved whole (vlogrow.h)
	 */
	check_that(&c, fabs(braid_cost_device_bytes(&in, BRAID_FROM_VALUE_LOG) -
						(in.rows * (in.entry_bytes + 8) + 512.0 * 1024 +
						 braid_vlog_reserved_bytes((in.rows * in.row_bytes - 512.0 * 1024) *
												   (in.row_bytes - 12) / in.row_bytes))) < 1,
			   "1 MB from a value log: the runs and the log, whole in memory's share, packed beyond in whole segments (%g)",
			   braid_cost_device_bytes(&in, BRAID_FROM_VALUE_LOG));
	in.budget_bytes = 40.0 * 1024;
	check_that(&c, braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID) > 1 &&
			   braid_cost_device_bytes(&in, BRAID_FROM_HEAP_TID) == in.rows * (2 * in.entry_bytes + 8),
			   "40 kB: intermediate passes, old and new runs at once (%g)",
			   braid_cost_device_bytes(&in, BRAID_FROM_HEAP_TID));

	/*
	 * a shared sort: three processes' runs, written whole even where they
	 * fit, and their merged refs; twice the entries only where the one merge
	 * of all of their runs takes an intermediate pass
	 */
	in.budget_bytes = 64.0 * 1024 * 1024;
	check_that(&c, braid_cost_shared_device_bytes(&in, BRAID_FROM_HEAP_TID, 3) ==
			   3 * in.rows * (in.entry_bytes + 8),
			   "shared, 64 MB: each process's entries once (%g)",
			   braid_cost_shared_device_bytes(&in, BRAID_FROM_HEAP_TID, 3));
	in.budget_bytes = 40.0 * 1024;
	check_that(&c, braid_cost_shared_device_bytes(&in, BRAID_FROM_HEAP_TID, 3) ==
			   3 * in.rows * (2 * in.entry_bytes + 8),
			   "shared, 40 kB: intermediate passes (%g)",
			   braid_cost_shared_device_bytes(&in, BRAID_FROM_HEAP_TID, 3));
	/* 256 kB: one process's runs merge in one pass, all three's in two */
	in.budget_bytes = 256.0 * 1024;
	check_that(&c, braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID) == 1 &&
			   braid_cost_shared_device_bytes(&in, BRAID_FROM_HEAP_TID, 3) ==
			   3 * in.rows * (2 * in.entry_bytes + 8),
			   "shared, 256 kB: the three processes' runs need an intermediate pass (%g, %g passes alone)",
			   braid_cost_shared_device_bytes(&in, BRAID_FROM_HEAP_TID, 3),
			   braid_cost_merge_passes(&in, BRAID_FROM_HEAP_TID));
	check_that(&c, braid_cost_shared_device_bytes(&in, BRAID_FROM_HEAP_TID, 1) ==
			   in.rows * (in.entry_bytes + 8),
			   "256 kB, one process: its runs once (%g)",
			   braid_cost_shared_device_bytes(&in, BRAID_FROM_HEAP_TID, 1));
	check_report(&c, "costmodel: a sort's bytes on the spill device at once");
}

/*
 * test_costmodel_ties: rows tied on the first of several keys cost
 * PostgreSQL's sort a comparison of the second key each, read from the
 * tuples (more past variable-width columns, more for a numeric); none when
 * the first key is unique or unknown, and braidsort's estimate is the same.
 */
static void
test_costmodel_ties(void)
{
	Check		c;
	BraidCostInput in = accepting_input();
	double		one_key,
				braid,
				fixed,
				walked,
	numeric;

	check_init(&c);
	in.rows = 3e6;
	one_key = braid_cost_pg_ns(&in);
	braid = braid_cost_tid_ns(&in);

	in.tie_distinct = 3e6;		/* unique first key: no ties */
	check_that(&c, braid_cost_pg_ns(&in) == one_key, "unique first key: %g, expected %g",
			   braid_cost_pg_ns(&in), one_key);
	in.tie_distinct = 1e7;		/* statistics above the rows */
	check_that(&c, braid_cost_pg_ns(&in) == one_key, "more distinct than rows: %g, expected %g",
			   braid_cost_pg_ns(&in), one_key);

	/* 5 distinct first keys: log2(3e6 / 5) = 19.2 ties a row */
	in.tie_distinct = 5;
	fixed = braid_cost_pg_ns(&in) - one_key;
	check_that(&c, fabs(fixed - 3e6 * log2(3e6 / 5) * 40.0) < 1e3,
			   "5 distinct, second key at a fixed offset: %g ns more", fixed);
	in.tie_walk_columns = 4;
	walked = braid_cost_pg_ns(&in) - one_key;
	check_that(&c, walked > fixed, "4 columns stepped over: %g, not above %g", walked, fixed);
	in.tie_numeric = true;
	numeric = braid_cost_pg_ns(&in) - one_key;

	check_that(&c, numeric >walked, "numeric second key: %g, not above %g", numeric, walked);
	check_that(&c, braid_cost_tid_ns(&in) == braid,
			   "braidsort's estimate moved with the ties: %g, was %g", braid_cost_tid_ns(&in), braid);

	/* a parallel process's share: fewer rows, fewer ties each */
	{
		BraidCostInput share = in;

		share.rows = 1e6;
		numeric = braid_cost_pg_ns(&share);

		share.tie_distinct = 0;
		numeric   -=braid_cost_pg_ns(&share);

		check_that(&c, fabs(numeric -1e6 * log2(1e6 / 5) * (40.0 + 4 * 20.0 + 115.0)) < 1e3,
				   "1M rows: %g ns more", numeric);
	}
	check_report(&c, "costmodel: rows tied on the first key cost PostgreSQL's sort");
}

/*
 * test_costmodel_abbreviated: a first key PostgreSQL abbreviates from its
 * bytes costs its sort a conversion a row, whatever the rows' order or
 * width; braidsort's estimate does not move with it.
 */
static void
test_costmodel_abbreviated(void)
{
	Check		c;
	BraidCostInput in = accepting_input();
	double		plain,
				braid,
				more;

	check_init(&c);
	for (double rows = 1e6; rows <= 5e6; rows += 4e6)
	{
		in.rows = rows;
		in.abbreviated_key = false;
		plain = braid_cost_pg_ns(&in);
		braid = braid_cost_tid_ns(&in);
		in.abbreviated_key = true;
		more = braid_cost_pg_ns(&in) - plain;
		check_that(&c, fabs(more - rows * 175.0) < 1, "%g rows: %g ns more", rows, more);
		check_that(&c, braid_cost_tid_ns(&in) == braid,
				   "braidsort's estimate moved: %g, was %g", braid_cost_tid_ns(&in), braid);
	}
	check_report(&c, "costmodel: PostgreSQL's abbreviated keys cost a conversion a row");
}

/*
 * test_costmodel_split: once full keys share the budget with the entries,
 * the entries keep to what it holds with their keys, the keys having their
 * expected memory four times over, at least 1/64 of it and 8 kB, at most half until
 * the average is trusted (the entries at least a quarter) and an eighth
 * after; runs end when either share is full.
 */
static void
test_costmodel_split(void)
{
	Check		c;
	double		room = 65536;

	check_init(&c);
	check_that(&c, braid_cost_split_entries(0, room, 16, false) == 3584 &&
			   braid_cost_split_entries(0.05, room, 16, false) == 3584,
			   "rare long keys, a small room: all but the store's smallest 8 kB (%g, %g)",
			   braid_cost_split_entries(0, room, 16, false),
			   braid_cost_split_entries(0.05, room, 16, false));
	check_that(&c, braid_cost_split_entries(0, 64 * room, 16, false) == 258048 &&
			   braid_cost_split_entries(0.05, 64 * room, 16, true) == 258048,
			   "rare long keys: all but 1/64 of the room (%g, %g)",
			   braid_cost_split_entries(0, 64 * room, 16, false),
			   braid_cost_split_entries(0.05, 64 * room, 16, true));
	check_that(&c, braid_cost_split_entries(0.2, 64 * room, 16, true) == 249036,
			   "rare long keys, trusted: their memory four times over (%g)",
			   braid_cost_split_entries(0.2, 64 * room, 16, true));
	check_that(&c, braid_cost_split_entries(8, room, 16, false) == 2048,
			   "short keys, untrusted: half the room (%g)",
			   braid_cost_split_entries(8, room, 16, false));
	check_that(&c, braid_cost_split_entries(48, room, 16, false) == 1024,
			   "keys of 3 strides: a quarter (%g)", braid_cost_split_entries(48, room, 16, false));
	check_that(&c, braid_cost_split_entries(32, room, 16, false) == 1365,
			   "keys of 2 strides: a third (%g)", braid_cost_split_entries(32, room, 16, false));
	check_that(&c, braid_cost_split_entries(30000, room, 16, false) == 1024,
			   "one huge key, untrusted: still a quarter (%g)",
			   braid_cost_split_entries(30000, room, 16, false));
	check_that(&c, braid_cost_split_entries(100, 40, 16, false) == 2,
			   "a tiny room: 2 (%g)", braid_cost_split_entries(100, 40, 16, false));
	check_that(&c, braid_cost_split_entries(2000, room, 16, true) == 32 &&
			   braid_cost_split_entries(0.5, room, 16, true) == 3584,
			   "trusted: long keys get what they need (%g), rare ones an eighth (%g)",
			   braid_cost_split_entries(2000, room, 16, true),
			   braid_cost_split_entries(0.5, room, 16, true));

	/*
	 * rows: all entries without keys kept aside; else the entries' share, or
	 * fewer when the keys fill the rest first
	 */
	check_that(&c, braid_cost_split_rows(0, room, 16, false) == 4096 &&
			   braid_cost_split_rows(48, room, 16, false) == 1024 &&
			   braid_cost_split_rows(200, room, 16, false) == 245 &&
			   braid_cost_split_rows(200, room, 16, true) == 303,
			   "rows: %g %g %g %g", braid_cost_split_rows(0, room, 16, false),
			   braid_cost_split_rows(48, room, 16, false),
			   braid_cost_split_rows(200, room, 16, false),
			   braid_cost_split_rows(200, room, 16, true));
	/* a budget-full: unsplit while the input fits, else the fewer split */
	check_that(&c, braid_cost_budget_rows(1e6, 0, room, 16) == 4096 &&
			   braid_cost_budget_rows(100, 8, room, 16) == 2457 &&
			   braid_cost_budget_rows(1e6, 8, room, 16) == 2048 &&
			   braid_cost_budget_rows(1e6, 200, room, 16) == 245,
			   "budget-fulls: %g %g %g %g", braid_cost_budget_rows(1e6, 0, room, 16),
			   braid_cost_budget_rows(100, 8, room, 16), braid_cost_budget_rows(1e6, 8, room, 16),
			   braid_cost_budget_rows(1e6, 200, room, 16));
	check_report(&c, "costmodel: entries and full keys share the budget by their size");
}

/* unit_costmodel: run the tests of this module, in order. */
void
unit_costmodel(void)
{
	test_costmodel();
	test_costmodel_reread();
	test_costmodel_offload_refs();
	test_costmodel_gather_arena();
	test_costmodel_collated();
	test_costmodel_ranks();
	test_costmodel_merge_memo();
	test_costmodel_tied();
	test_costmodel_parallel();
	test_costmodel_one_sort();
	test_costmodel_shared_sort();
	test_costmodel_sources();
	test_costmodel_gather_pass();
	test_costmodel_full_keys();
	test_costmodel_device_bytes();
	test_costmodel_ties();
	test_costmodel_abbreviated();
	test_costmodel_split();
}
