/*-------------------------------------------------------------------------
 *
 * costmodel.c
 *	  When braidsort's sort is expected to beat PostgreSQL's Sort, how it
 *	  should get rows back, and whether it will spill (MergePass).
 *
 * PostgreSQL's external sort writes and rereads every tuple at least once;
 * braidsort sorts only keys and refs and gets whole rows back once: by heap
 * TID from the table, late, a batch at a time (each batch visits the pages
 * its rows lie on), or from a value log it keeps as it reads the input
 * (every row copied in and out, through the spill device beyond half of
 * the budget).  When PostgreSQL's sort fits in work_mem it is a quicksort
 * over in-memory tuples, which the late gather cannot beat by enough to be
 * worth it, so braidsort declines.
 *
 * Everything is per process: under a Gather each of the planned workers and
 * the leader runs its own copy of the sort on its share of the CPUs, and so
 * does PostgreSQL's Sort.  braidsort's threaded work (the IndexMap's radix
 * sort, the gather's copies, collated comparisons) goes only as much
 * faster as its threads get CPU beyond PostgreSQL's one thread on the same
 * share (braid_cost_thread_speedup).
 *
 * The late gather's batches, their passes over the table and their page
 * visits are costed in costgather.c.
 *
 * The constants were fitted to measurements on two shapes, in the
 * model's units (about 1.2-2x the measured time, see "The model's scale"
 * below; bench/bench.py): the
 * sortbenchmark table (5M rows, 10-byte keys, 110-byte rows, two columns)
 * and the realistic orders table (3M rows of nine columns, 124 bytes,
 * timestamps, numerics and en_US text; PostgreSQL's defaults, parallel
 * query on, work_mem 4MB and 64MB).  PostgreSQL's external sort: ~350 ns a
 * row plus ~4 ns per byte of row, ~35 ns more per comparison of a numeric
 * key (log2(rows) of them a row) and ~100 ns per comparison of a libc
 * collated key that reaches strcoll() (log2 of its distinct values a row:
 * equal strings are settled by memcmp), and ~40 ns per comparison of rows
 * tied on the first of several keys (more when the second key lies past
 * variable-width columns, or is a numeric; see PG_NS_PER_TIE), and ~175
 * ns a row whose first key it abbreviates from its bytes (a bytea, or a
 * string under the C collation; PG_NS_PER_ABBREVIATED_ROW).
 * braidsort: ~170 ns a row taking and emitting it (~90 ns more when a
 * parallel plan's processes outnumber the CPUs: its memory-bound phases
 * suffer more from sharing them than PostgreSQL's sort does), ~80 ns a
 * row of threaded work, ~0.5 ns per byte gathered (threaded), ~90 ns per
 * collated comparison (threaded), ~100 ns a row for a numeric key's
 * digits, ~50 ns a row more and each entry's bytes written and read back
 * when it spills runs; a value log ~135 ns a row plus ~1 ns a byte, and
 * beyond half the budget ~100 ns a row and its bytes at the device's cost.
 * When the spill device has a stored profile its measured write and read
 * cost replaces the default (DRAM-speed) one.
 *
 * Refitted on 30 November (see "The model's scale" below): the numeric
 * key, the threaded work, the bytes gathered and the runs' writing and
 * merging, which had been fitted a week before on older code.
 *
 * The model's scale.  Its estimates run above the measured times on both
 * sides; what the decisions need is that they run above by as much.
 * Measured on 30 November (one process, alternating runs, the two tables
 * above), the estimates of PostgreSQL's sorts were 1.2-1.4x the measured
 * time on the sortbenchmark and 1.6-2.0x on the orders table (whose extra
 * terms, ties and numeric and collated comparisons, run high; the
 * sortbenchmark's bytea key, which PostgreSQL abbreviates, was left out
 * then: with PG_NS_PER_ABBREVIATED_ROW its estimates are 1.8x at 5M rows,
 * 1.6x at 20M, measured on 1 December), those of
 * braidsort gathering by TID 2.0-2.4x, and from a value log 1.7-1.9x (the
 * orders table).  By phase (EXPLAIN ANALYZE, 3M and 5M rows), taking and
 * emitting the rows came to ~130-155 ns a row, close to its constant, but
 * the IndexMap sort to 26-43 ns a row on one thread (160 in the model
 * then), merging runs to ~30 (100 in the model then) and the gather's
 * copies to ~0.3 ns a byte (1 in the model then).  Those three were
 * halved: recomputed for the same runs, the estimates of braidsort by TID
 * are 1.6-2.0x the measured, as high as PostgreSQL's on the orders table
 * and above them on the sortbenchmark, and one sort of the sortbenchmark
 * at work_mem 16MB with parallel query on (1.89x measured) is taken.
 *
 * The machine these were measured on varies by 20-30% from one run to the
 * next, and the model is coarse: braidsort takes a sort only when its
 * estimate is at most BRAID_COST_MARGIN of PostgreSQL's, so that where it
 * runs it is not slower.
 *
 * Pure C (no PostgreSQL calls).
 *
 * src/core/costmodel.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>

#include "core/collrank.h"
#include "core/costmodel.h"
#include "core/vlogrow.h"

/* Measured costs, in nanoseconds (see the file header). */
#define PG_EXTERNAL_SORT_NS_PER_ROW 350.0
#define PG_EXTERNAL_SORT_NS_PER_BYTE 4.0	/* per byte of row: copied,
											 * written, read */
#define BRAID_NS_PER_ROW_SERIAL		170.0	/* taking the row, emitting it */
#define BRAID_NS_PER_ROW_CROWDED	90.0	/* more when processes outnumber
											 * CPUs (see sort_ns) */
#define BRAID_NS_PER_ROW_THREADED	80.0	/* the IndexMap sort and gather
											 * copies, on one thread */
#define BRAID_NS_PER_BYTE			0.5 /* per byte of tuple gathered, one
										 * thread */
#define BRAID_NS_PER_ROW_SPILLED	50.0	/* writing and merging runs */

/*
 * A full key's byte in a merge pass, besides the device's write and read:
 * decoded from its run's front coding, compared, coded again.  Fitted by
 * hand on 5000 rows of 2240-byte keys (C collation, 6 to 626 runs, 1 to 10
 * passes): 1.5 to 2 ns a byte written beyond the device's cost.
 */
#define BRAID_NS_PER_MERGED_KEY_BYTE 1.5

/*
 * A key under a libc collation is ordered by strcoll() comparisons in both
 * sorts (see collated_compares for how many reach it): measured on the
 * realistic workload's names, ~100 ns each in PostgreSQL's sort, ~90 ns in
 * braidsort's (its strings lie together in the overflow store, PostgreSQL's
 * in its wide tuples), split among braidsort's sort threads.
 */
#define PG_NS_PER_COLLATED_CMP		100.0
#define BRAID_NS_PER_COLLATED_CMP	90.0

/*
 * A sort whose first key is collated and not ranked has no byte of that
 * key in its prefixes (the head holds only its null mark): the radix sort
 * finds every entry tied and the tie-break orders them, log2(run) full-key
 * comparisons a row, each parsing both keys (braid_compare_collated) even
 * where the strings are equal and no strcoll() is called.  Measured on the
 * realistic workload's ORDER BY status, amount DESC (5 statuses, 3M rows
 * in 75 runs of 40k, two threads): 2.1 s of sorting runs unranked, ~90 ns
 * of CPU a comparison with the radix sort's passes around it; ranked,
 * 1.0 s.
 */
#define BRAID_NS_PER_TIED_CMP		60.0

/*
 * Ranking a sort's collated strings (collrank.c) instead: two passes over
 * its entries hashing each collated key, ~80 ns a key a row (measured on
 * the realistic workload's names, 3M rows in one process: the sort went
 * from ~10 s to ~1 s), and each key's distinct strings sorted by the
 * collation, d log2 d comparisons (on the sort threads; the first key's d
 * stands for every key's).  It applies to a sort or run whose first
 * collated key's distinct strings fit in 1/BRAID_RANK_MEMORY_SHARE of the
 * budget, at up to BRAID_RANK_BYTES_PER_STRING each: collrank.c's 24-byte
 * string, and while its array doubles the old and the new one (72 bytes
 * then), with two 4-byte slots; or, when the strings are presorted, the
 * array (24-48 bytes a string), the slots and the presort's 24-byte
 * entries.
 */
#define BRAID_NS_PER_RANKED_KEY		80.0
#define BRAID_RANK_BYTES_PER_STRING	88.0

/*
 * From BRAID_RANK_PRESORT_MIN distinct strings, collrank.c puts a key's
 * strings in order by the first bytes of their strxfrm_l() sort keys and
 * checks each neighbouring pair by the collation: one transform and one
 * comparison a string instead of log2 d comparisons.  Measured in the
 * realistic workload's `ORDER BY last_name, first_name` at 4 MB (~27 runs
 * a process, ~19,000 distinct strings a run): ~210 ns a string in the
 * backends' profile; 280 + 130 ns on 12,000 last names alone.
 */
#define BRAID_NS_PER_PRESORTED_STRING	300.0	/* ~
												 * BRAID_RANK_PRESORT_COMPARES
												 * x BRAID_NS_PER_COLLATED_CMP */

/*
 * Of what ranking saves a sort that spills runs, the estimate counts this
 * share: measured on the realistic workload's `ORDER BY last_name` at 4 MB
 * (a value log, ~55 runs a process, 3 processes on 2 CPUs), the sort
 * phase fell by ~600 ms a process but the query by only ~300 ms; in
 * memory (64 MB) the query fell by all of it and more.  Why only half is
 * not established (the processes are CPU-bound on shared CPUs, and the
 * final merges still compare by the collation).
 */
#define BRAID_RANK_SPILLED_CREDIT	0.5

/*
 * A numeric first key: PostgreSQL's merges compare numerics in full (the
 * abbreviated keys of its run-forming quicksorts are not kept on tape),
 * ~35 ns more a comparison; braidsort encodes the digits and its radix
 * sort goes deeper into keys whose first bytes are alike.  Fitted at
 * ~350 ns a row on 23 November; on 30 November a profile of ORDER BY
 * amount on the orders table (3M rows, work_mem 4MB, one process, a value
 * log) put the numeric encoding at ~45 ns a row, and the whole sort took
 * no longer than that of a two-column integer and timestamp key (1285 ms
 * against 1435 ms for ORDER BY customer_id, created_at DESC).  ~100 ns in
 * the model's units, which run about twice the measured time (see "The
 * model's scale" in the header).
 */
#define PG_NS_PER_NUMERIC_CMP		35.0
#define BRAID_NS_PER_NUMERIC_KEY	100.0

/*
 * Rows tied on the first of several keys: PostgreSQL's sort compares them
 * on the second key, read from both tuples (heap_getattr) each time; past
 * a variable-width column it steps over every column before the key
 * (nocachegetattr), and a numeric is copied out of its short varlena
 * header (pg_detoast_datum) before it is compared.  braidsort's encoded
 * keys settle a tie by the bytes after it.  Measured on the realistic
 * orders table (3M rows, serial, work_mem 4MB; the Sort's own time over
 * that of the first key alone, ties counted as log2(rows / distinct)):
 * ORDER BY status, id 74 ns a tie, status, created_at (3 columns stepped
 * over) 156, status, amount (numeric, 4 stepped over) 289, customer_id,
 * created_at 101.  The constants are below every one of them.
 */
#define PG_NS_PER_TIE				40.0
#define PG_NS_PER_TIE_WALKED_COL	20.0
#define PG_NS_PER_NUMERIC_TIE		115.0

/*
 * A first key PostgreSQL sorts by an abbreviated key of its bytes (a bytea,
 * or a string under the C collation: varstr_sortsupport) is converted for
 * every row: the datum detoasted, its first bytes copied, and the key and
 * its prefix hashed into the two HyperLogLog counters that decide whether
 * abbreviation pays.  Measured on 1 December (5M sortbenchmark rows, one
 * process, work_mem 16MB, 4 alternating runs): ORDER BY the 10-byte bytea
 * key took 2686 ms, ORDER BY a bigint made of its first 8 bytes, in the
 * same table, 2194; ~98 ns a row.  The model's estimate of both was 3950
 * ms, 1.80x the bigint's time and 1.47x the bytea's; the constant, in the
 * model's units, makes them both 1.80x.  Where the abbreviated keys turn
 * out much less varied than the values (strings alike in their first 8
 * bytes), PostgreSQL stops abbreviating early and compares whole strings
 * instead, which is not cheaper (not measured); ICU strings, uuids and
 * numerics are abbreviated too, and not charged here (numerics have
 * their own term): the model errs low on PostgreSQL's side there.
 */
#define PG_NS_PER_ABBREVIATED_ROW	175.0

/*
 * A value log copies each row in (as a minimal tuple) and out again; rows
 * that outgrow half the budget go to the spill device, where each costs
 * its bytes written and read back and a random read when it is emitted.
 * Refitted on 1 December, after rows were appended straight from their
 * pages and projections formed in place: one process, alternating runs,
 * the model's estimate of the value log's sort against its measured time
 * was 2.28x (orders, ORDER BY created_at, 3M rows, 4MB: 2496 against 1094
 * ms), 1.86x (customer_id, created_at DESC: 2496 against 1340; the same
 * estimate, which these keys do not change) and 2.18x
 * (the sortbenchmark's 20M rows, 128MB: 15923 against 7304), where
 * PostgreSQL's sorts are estimated at ~1.8x theirs.  The per-row constant
 * came down by what makes those 1.8x on average (250 to 135 ns); the
 * estimates by TID of the same sorts stay the lower, as measured.
 */
#define BRAID_VLOG_NS_PER_ROW			135.0
#define BRAID_VLOG_NS_PER_BYTE			1.0
#define BRAID_VLOG_NS_PER_ROW_DEVICE	100.0

/* compares: comparisons a comparison sort makes per row. */
static double
compares(const BraidCostInput *in)
{
	return in->rows > 2 ? log2(in->rows) : 1.0;
}

/*
 * collated_compares
 *		Comparisons per row that call the collation: both sorts settle equal
 *		strings with a memcmp first (varstr_cmp), so with d distinct values
 *		about log2(d) of a row's comparisons reach strcoll().  Both compare
 *		a collated key only between rows tied on the keys before it: within
 *		groups of collated_group_rows, none when those keys are unique.
 */
static double
collated_compares(const BraidCostInput *in)
{
	double		d = in->collated_distinct;

	if (d <= 0 || d > in->rows)
		d = in->rows;
	if (in->collated_group_rows > 0 && in->collated_group_rows < d)
	{
		d = in->collated_group_rows;
		if (d < 2)
			return 0.0;
	}
	return d > 2 ? log2(d) : 1.0;
}

/* collated_keys: the keys ordered by a collation (at least one). */
static double
collated_keys(const BraidCostInput *in)
{
	return in->collated_keys > 0 ? in->collated_keys : 1;
}

/*
 * rank_sort_ns
 *		What putting d distinct strings of a key in order costs collrank.c:
 *		compared by the collation on the sort threads, or from
 *		BRAID_RANK_PRESORT_MIN of them presorted by their sort keys on one
 *		thread, whichever is cheaper (as collrank.c chooses,
 *		braid_rank_presorts).
 */
static double
rank_sort_ns(double d, double speedup)
{
	double		compared = d * (d > 2 ? log2(d) : 1.0) * BRAID_NS_PER_COLLATED_CMP / speedup;

	if (d >= BRAID_RANK_PRESORT_MIN && d * BRAID_NS_PER_PRESORTED_STRING < compared)
		return d * BRAID_NS_PER_PRESORTED_STRING;
	return compared;
}

/*
 * ranked_ns
 *		What ranking costs a sort whose runs hold run_rows rows
 *		(collrank.c): HUGE_VAL when the first collated key's distinct
 *		strings would not fit its memory, or the runs are too small to rank.
 */
static double
ranked_ns(const BraidCostInput *in, double run_rows)
{
	double		d = in->collated_first_distinct;
	double		keys = collated_keys(in);

	if (d > run_rows)
		d = run_rows;
	if (run_rows < BRAID_RANK_MIN_ENTRIES || keys > BRAID_RANK_MAX_KEYS ||
		d * BRAID_RANK_BYTES_PER_STRING > in->budget_bytes / BRAID_RANK_MEMORY_SHARE)
		return HUGE_VAL;
	return in->rows * keys * BRAID_NS_PER_RANKED_KEY +
		in->rows / run_rows * keys * rank_sort_ns(d, braid_cost_thread_speedup(in));
}

/*
 * CollatedCost: braidsort's comparisons of collated keys (collated_cost).
 */
typedef struct CollatedCost
{
	double		compared;		/* within sorts or runs, by the collation */
	double		ranked;			/* ... or by ranks (no more than compared) */
	bool		ranks;			/* ... which the sort does */
	double		merged;			/* between runs, by the merge */
} CollatedCost;

/*
 * braid_cost_merge_memo_share
 *		The share of the merge's comparisons of collated keys that reach
 *		the collation past the loser tree's memos, with runs of run_rows
 *		rows (BRAID_MERGE_MEMO_FLOOR).
 *
 *		The merge's loser-tree nodes remember their last comparison by the
 *		collation (core/collmemo.h): a record whose string is its run's
 *		previous record's meets the same losers, with the same strings, and
 *		is answered from the memo.  With one collated key, the first, of d
 *		distinct strings, a run of r rows holds about d (1 - e^(-r/d)) of
 *		them, and only a run's change of string reaches strcoll(): that
 *		share of the merge's comparisons, at least BRAID_MERGE_MEMO_FLOOR
 *		(the memo's checks, two memcmp() calls).  Measured on the realistic
 *		workload's last names (3M rows in one process, 58 runs): 9.07M
 *		strcoll() calls without the memo, 2.0M with it (0.22; this rule
 *		says 0.23 of the comparisons, which it charges all as calls).
 *		Several collated keys change their last string with nearly every
 *		record, and a key after others with every group: no credit.
 */
double
braid_cost_merge_memo_share(const BraidCostInput *in, double run_rows)
{
	double		d = in->collated_first_distinct;
	double		share;

	if (in->collated_keys > 1 || in->collated_group_rows != 0 ||
		!(d > 0) || !(run_rows > 0))
		return 1.0;
	share = d * (1.0 - exp(-run_rows / d)) / run_rows;
	return share > 1.0 ? 1.0 : share < BRAID_MERGE_MEMO_FLOOR ? BRAID_MERGE_MEMO_FLOOR : share;
}

/*
 * collated_cost
 *		braidsort's comparisons of collated keys: within a sort or run, by
 *		the collation (threaded) or, where that is cheaper, by ranks
 *		(ranked_ns); between runs, by the merge (in the backend: a
 *		collation's comparator is not called on the threads there), about
 *		log2(runs) of a row's, of which the memos answer many
 *		(braid_cost_merge_memo_share).
 */
static void
collated_cost(const BraidCostInput *in, BraidGatherFrom from, bool spills, CollatedCost *cc)
{
	double		total = collated_compares(in);
	double		merged = 0;
	double		run_rows = in->rows;
	double		speedup = braid_cost_thread_speedup(in);
	double		strcolls;

	if (spills)
	{
		double		runs = braid_cost_runs_written(in, from);

		merged = runs > 2 ? log2(runs) : 1.0;
		if (merged > total)
			merged = total;
		run_rows = runs > 1 ? in->rows / runs : in->rows;
	}
	cc->merged = in->rows * merged * BRAID_NS_PER_COLLATED_CMP *
		(spills ? braid_cost_merge_memo_share(in, run_rows) : 1.0);
	strcolls = in->rows * (total - merged) / speedup * BRAID_NS_PER_COLLATED_CMP;
	cc->compared = strcolls;
	if (in->collated_group_rows == 0 && run_rows > 2)
	{
		/* the first key: unranked, its ties go to the tie-break */
		double		tied = log2(run_rows) - (total - merged);

		if (tied > 0)
			cc->compared += in->rows * tied / speedup * BRAID_NS_PER_TIED_CMP;
	}

	/*
	 * Without statistics (a value log's input, an expression) whether the
	 * strings fit is left to the sort, which tries where the comparisons are
	 * expected to cost at least twice what ranking a row costs; the estimate
	 * counts the collation's comparisons (as before the tie-break's were
	 * counted, so that no such sort is newly declined).
	 */
	if (in->collated_first_distinct <= 0)
	{
		cc->ranks = cc->compared > 2 * in->rows * collated_keys(in) * BRAID_NS_PER_RANKED_KEY;
		cc->compared = cc->ranked = strcolls;
		return;
	}
	cc->ranked = ranked_ns(in, run_rows);
	cc->ranks = cc->ranked < cc->compared;
	if (!cc->ranks)
		cc->ranked = cc->compared;
	else if (spills && cc->ranked < strcolls)
	{
		/* the tie-break's comparisons saved, the collation's in part */
		cc->ranked = strcolls - (strcolls - cc->ranked) * BRAID_RANK_SPILLED_CREDIT;
	}
}

/*
 * braid_cost_ranks
 *		Should a sort gathering from "from" rank its collated strings
 *		(collrank.c): is that cheaper than comparing them by the collation?
 *		*saving_ns (if not NULL) is what it saves in braidsort's estimate (0
 *		where it does not rank): the write-limited modes' selection passes
 *		compare keys by the collation (segment, lazy), and pay it back a
 *		candidate (braid_plan_wl_input).
 */
bool
braid_cost_ranks(const BraidCostInput *in, BraidGatherFrom from, double *saving_ns)
{
	CollatedCost cc = {0};

	if (in->collated)
		collated_cost(in, from, braid_cost_spills(in, from), &cc);
	if (saving_ns != NULL)
		*saving_ns = cc.compared - cc.ranked;
	return cc.ranks;
}

/*
 * braid_cost_thread_speedup
 *		How much faster braidsort's threaded work (the IndexMap sort, the
 *		gather's copies, collated comparisons) runs than it would on the one
 *		thread PostgreSQL's sort has.  Under a Gather, every process runs
 *		its own copy of the sort on a share of the CPUs: threads beyond that
 *		share only take turns, and PostgreSQL's sort there gets the same
 *		share, so the speed-up is what braidsort's threads get over it.
 */
double
braid_cost_thread_speedup(const BraidCostInput *in)
{
	double		threads = in->sort_threads > 1 ? in->sort_threads : 1;
	double		processes = in->processes > 1 ? in->processes : 1;
	double		cpus = in->cpus > 0 ? in->cpus : threads;
	double		share = cpus / processes;	/* CPUs this process can count on */
	double		pg = share < 1.0 ? share : 1.0;
	double		braid = share < threads ? share : threads;

	return braid / pg > 1.0 ? braid / pg : 1.0;
}

/*
 * tied_compares
 *		Comparisons per row between rows tied on the first key, which go on
 *		to the second: with d distinct first keys, a row's comparisons
 *		below the level where its group is alone, about log2(rows / d).
 */
static double
tied_compares(const BraidCostInput *in)
{
	double		d = in->tie_distinct;

	if (d <= 0 || in->rows <= 2)
		return 0.0;
	if (d < 1)
		d = 1;
	return d < in->rows ? log2(in->rows / d) : 0.0;
}

/* braid_cost_pg_ns: estimated time of PostgreSQL's external sort. */
double
braid_cost_pg_ns(const BraidCostInput *in)
{
	double		ns = in->rows * (PG_EXTERNAL_SORT_NS_PER_ROW +
								 PG_EXTERNAL_SORT_NS_PER_BYTE * in->sort_width);

	if (in->collated)
		ns += in->rows * collated_compares(in) * PG_NS_PER_COLLATED_CMP;
	if (in->numeric_key)
		ns += in->rows * compares(in) * PG_NS_PER_NUMERIC_CMP;
	if (in->abbreviated_key)
		ns += in->rows * PG_NS_PER_ABBREVIATED_ROW;
	ns += in->rows * tied_compares(in) *
		(PG_NS_PER_TIE + PG_NS_PER_TIE_WALKED_COL * in->tie_walk_columns +
		 (in->tie_numeric ? PG_NS_PER_NUMERIC_TIE : 0.0));
	return ns;
}

/*
 * sort_ns
 *		What braidsort spends on keys whatever it gathers from: taking each
 *		row (in the backend), sorting the IndexMap (on its threads), spilling
 *		and merging runs when it outgrows the budget, collated comparisons.
 */
static double
sort_ns(const BraidCostInput *in, BraidGatherFrom from)
{
	double		speedup = braid_cost_thread_speedup(in);
	bool		spills = braid_cost_spills(in, from);
	double		ns = in->rows * (BRAID_NS_PER_ROW_SERIAL +
								 BRAID_NS_PER_ROW_THREADED / speedup);

	/*
	 * Measured: when a parallel plan's processes outnumber the CPUs,
	 * braidsort's memory-bound phases (the scan into the IndexMap, the
	 * gather) slow down more than PostgreSQL's sort does.
	 */
	if (in->processes > 1 && in->cpus > 0 && in->processes > in->cpus)
		ns += in->rows * BRAID_NS_PER_ROW_CROWDED;

	if (spills)
	{
		double		spill_ns = in->spill_ns_per_byte > 0 ? in->spill_ns_per_byte :
			BRAID_DEFAULT_SPILL_NS_PER_BYTE;

		ns += in->rows * BRAID_NS_PER_ROW_SPILLED;

		/*
		 * Each entry written once and read back once (as fitted: the measured
		 * sorts merged in a pass or two), and each full key once per merge
		 * pass, decoded and coded again: long keys fill runs with few rows,
		 * and a merge of many runs rewrites them all a pass at a time.
		 */
		ns += in->rows * in->entry_bytes * spill_ns;
		ns += in->rows * in->full_key_bytes * (spill_ns + BRAID_NS_PER_MERGED_KEY_BYTE) *
			braid_cost_merge_passes(in, from);
	}
	if (in->collated)
	{
		CollatedCost cc;

		collated_cost(in, from, spills, &cc);
		ns += cc.ranked + cc.merged;
	}
	if (in->numeric_key)
		ns += in->rows * BRAID_NS_PER_NUMERIC_KEY;
	return ns;
}

/*
 * braid_cost_tid_ns
 *		Estimated time of braidsort's sort gathering rows by heap TID: the
 *		sort, the copies of the gathered tuples (on the threads), and the
 *		gather's visits of the table's pages, one per page per batch.
 *		HUGE_VAL when the rows cannot be refetched.
 */
double
braid_cost_tid_ns(const BraidCostInput *in)
{
	if (!in->heap_refetch)
		return HUGE_VAL;
	return sort_ns(in, BRAID_FROM_HEAP_TID) +
		in->rows * in->tuple_bytes * BRAID_NS_PER_BYTE / braid_cost_thread_speedup(in) +
		braid_cost_page_visits(in) * braid_cost_page_visit_ns(in);
}

/*
 * braid_cost_vlog_ns
 *		Estimated time of braidsort's sort keeping each input row in a value
 *		log: every row copied in once and out once, in memory while the log
 *		fits half of the budget, else written to the spill device and read
 *		back from it a row at a time.
 */
double
braid_cost_vlog_ns(const BraidCostInput *in)
{
	double		row = braid_cost_vlog_row_bytes(in);
	double		ns = sort_ns(in, BRAID_FROM_VALUE_LOG) +
		in->rows * (BRAID_VLOG_NS_PER_ROW + BRAID_VLOG_NS_PER_BYTE * row);

	if (braid_cost_vlog_on_device(in))
		ns += braid_cost_vlog_device_bytes(in, false) * (in->spill_ns_per_byte > 0 ? in->spill_ns_per_byte :
														 BRAID_DEFAULT_SPILL_NS_PER_BYTE) +
			in->rows * BRAID_VLOG_NS_PER_ROW_DEVICE;
	return ns;
}

/* braid_cost_braid_ns: braidsort's estimate, gathering the cheaper way. */
double
braid_cost_braid_ns(const BraidCostInput *in)
{
	double		tid = braid_cost_tid_ns(in);
	double		vlog = braid_cost_vlog_ns(in);

	return tid <= vlog ? tid : vlog;
}

/*
 * estimate
 *		braid_cost_estimate for a known collated_group_rows.
 */
static void
estimate(const BraidCostInput *in, BraidCostEstimate *est)
{
	est->pg_ns = braid_cost_pg_ns(in);
	est->tid_ns = braid_cost_tid_ns(in);
	est->vlog_ns = braid_cost_vlog_ns(in);
	if (in->only_from == BRAID_FROM_VALUE_LOG || !in->heap_refetch)
		est->from = BRAID_FROM_VALUE_LOG;
	else if (in->only_from == BRAID_FROM_HEAP_TID)
		est->from = BRAID_FROM_HEAP_TID;
	else
		est->from = est->tid_ns <= est->vlog_ns ? BRAID_FROM_HEAP_TID : BRAID_FROM_VALUE_LOG;
	est->braid_ns = est->from == BRAID_FROM_HEAP_TID ? est->tid_ns : est->vlog_ns;
	est->why = NULL;
	est->small = false;
	if (in->rows < BRAID_MIN_ROWS)
	{
		est->why = "too few rows to be worth it";
		est->small = true;
	}
	else if (braid_cost_pg_sort_bytes(in) <= in->sort_mem_bytes)
	{
		est->why = "PostgreSQL's sort is expected to fit in work_mem";
		est->small = true;
	}
	else if (est->braid_ns > est->pg_ns * BRAID_COST_MARGIN)
	{
		if (est->from == BRAID_FROM_VALUE_LOG && in->heap_refetch &&
			in->only_from != BRAID_FROM_VALUE_LOG)
			est->why = in->table_cached ?
				"neither the gather nor a value log is enough cheaper than PostgreSQL's external sort" :
				"the gather would reread the uncached table too many times, and a value log is not enough cheaper";
		else if (est->from == BRAID_FROM_HEAP_TID && !in->table_cached)
			est->why = "the gather would reread the uncached table too many times";
		else
			est->why = "braidsort's estimate is not enough below PostgreSQL's external sort";
	}
	est->prefers = est->why == NULL;
}

/*
 * braid_cost_estimate
 *		Both sides' estimates, where braidsort would gather from, and whether
 *		it should replace PostgreSQL's Sort (else est->why says why not).
 *		Where the rows tied on the keys before a collated key are unknown,
 *		both extremes are estimated (every row reaching the collation, and
 *		none), and the one less favourable to braidsort counts: collated
 *		comparisons favour braidsort when its threads share them, and
 *		PostgreSQL when they do not (one thread, or a parallel plan's
 *		processes taking every CPU), since braidsort must come out below
 *		BRAID_COST_MARGIN of PostgreSQL's estimate.
 */
void
braid_cost_estimate(const BraidCostInput *in, BraidCostEstimate *est)
{
	BraidCostInput every = *in;
	BraidCostInput none = *in;
	BraidCostEstimate est_every;
	BraidCostEstimate est_none;

	if (!in->collated || in->collated_group_rows >= 0)
	{
		estimate(in, est);
		return;
	}
	/* (every row ties on the keys before: "rows", not 0, the first key's) */
	every.collated_group_rows = in->rows;
	none.collated_group_rows = 1;
	estimate(&every, &est_every);
	estimate(&none, &est_none);
	if (!est_every.prefers)
		*est = est_every;
	else if (!est_none.prefers)
		*est = est_none;
	else
		*est = est_every.braid_ns * est_none.pg_ns >= est_none.braid_ns * est_every.pg_ns ?
			est_every : est_none;
}

/*
 * A Gather Merge's leader reads each row from a worker's tuple queue (or
 * its own sort) and keeps the processes' next rows in a heap: measured on
 * the sortbenchmark (5M rows of 110 bytes, 2 workers and the leader on 2
 * CPUs, bench --onepass), the plan above the processes' sorts took about
 * 880 ms more than the same sort's output in one process, ~170 ns a row
 * measured: ~300 in the model's units (1.6-2.0x the measured, see "The
 * model's scale" in the header), beside the sorts' estimates it is added
 * to.
 */
#define BRAID_GATHER_MERGE_NS_PER_ROW 300.0

/*
 * A shared sort (sort/sort_shared.c): the processes build and sort their
 * shares as a BraidSort in each process would, then one of them merges
 * every process's runs and emits every row, in place of each process's
 * final merge and the Gather Merge.  Measured on the realistic workload
 * (3M rows, work_mem 4MB, 3 processes on 2 CPUs, value logs, alternating
 * runs), it took 0.75-0.92x the time of a BraidSort in each process: in
 * the model's units, each process's estimate and ~100-190 ns a row for
 * the one process's merge and emitting, serial.
 */
#define BRAID_SHARED_NS_PER_ROW 150.0

/* braid_cost_gather_merge_ns: a Gather Merge collecting rows in order. */
double
braid_cost_gather_merge_ns(double rows)
{
	return rows * BRAID_GATHER_MERGE_NS_PER_ROW;
}

/*
 * braid_cost_one_sort
 *		Whether one braidsort of all the rows a Gather Merge collects, over
 *		the parallel scan read whole in one process, beats the parallel
 *		plan: PostgreSQL's (each process sorts its share, the leader merges
 *		them) and, where braidsort would take them (each_taken), a BraidSort
 *		in each process.  "each" and each_est are the cost model's input and
 *		estimate of one process's sort (its share of the rows, its share of
 *		the CPUs); one_est that of the single sort of all "rows" (every
 *		CPU); scan_ns what reading the whole scan takes one process.
 *
 *		Each process's estimate is its sort's time as if it had a CPU of its
 *		own (braid_cost_thread_speedup counts braidsort's threads against
 *		PostgreSQL's one on the same share), scaled from the rows the
 *		planner gives a worker to the processes' even share of "rows": when
 *		the processes outnumber the CPUs they take turns, and the sorts end
 *		later by that ratio.
 *		The single sort does without the Gather Merge, but reads the scan
 *		in one process, where the parallel plan reads it in all of them (as
 *		fast as the CPUs let them).  Where the cost model takes each
 *		process's sort (each_est->prefers, not merely braidsort.force), that
 *		is what one sort replaces, and it is preferred when it is faster
 *		(the margin over PostgreSQL was asked of each process's sort); else
 *		when its estimate is at most BRAID_COST_MARGIN of PostgreSQL's
 *		plan.  Never when each process's sort is expected to
 *		fit in work_mem (PostgreSQL's quicksort, which the estimate of its
 *		external sort overstates).
 */
/*
 * each_scale
 *		What one process's estimate ("each", for the planner's rows of a
 *		worker) is multiplied by for the processes' sorts of "rows" in all:
 *		when the processes outnumber the CPUs they take turns, and the sorts
 *		end later by that ratio; and the planner gives each process the rows
 *		of a worker (PostgreSQL's parallel divisor counts the leader as part
 *		of one), more than the processes' even share, which is what they
 *		sort when the leader keeps up.
 */
static double
each_scale(const BraidCostInput *each, double rows)
{
	double		processes = each->processes > 1 ? each->processes : 1;
	double		cpus = each->cpus > 0 ? each->cpus : processes;
	double		turns = processes > cpus ? processes / cpus : 1.0;
	double		share = 1.0;

	if (each->rows > 0 && rows > 0 && rows < processes * each->rows)
		share = rows / (processes * each->rows);
	return share * turns;
}

void
braid_cost_one_sort(const BraidCostInput *each, const BraidCostEstimate *each_est,
					bool each_taken, const BraidCostEstimate *one_est, double rows,
					double scan_ns, double shared_ns, BraidOneSortEstimate *out)
{
	double		processes = each->processes > 1 ? each->processes : 1;
	double		cpus = each->cpus > 0 ? each->cpus : processes;
	double		readers = processes < cpus ? processes : cpus;
	double		merge = braid_cost_gather_merge_ns(rows);
	double		scale = each_scale(each, rows);

	out->pg_ns = each_est->pg_ns * scale + merge;
	out->each_ns = each_taken ? each_est->braid_ns * scale + merge : HUGE_VAL;
	out->one_ns = one_est->braid_ns + scan_ns * (1.0 - 1.0 / readers);
	out->shared_ns = shared_ns;
	out->why = NULL;
	if (each_est->small)
		out->why = each_est->why;
	else if (out->one_ns > out->shared_ns)
		out->why = "a shared sort is expected to be faster";
	else if (out->one_ns > out->each_ns)
		out->why = "a BraidSort in each process is expected to be faster";
	else if (!each_est->prefers && out->one_ns > out->pg_ns * BRAID_COST_MARGIN)
		out->why = "one sort is not expected to be enough faster than PostgreSQL's parallel plan";
	out->prefers = out->why == NULL;
}

/*
 * braid_cost_shared_sort
 *		Whether a shared sort (sort/sort_shared.c) should replace a Gather
 *		Merge over each process's Sort: "each" and each_est as for
 *		braid_cost_one_sort, "rows" all the processes' rows.  *shared_ns is
 *		its estimate (each process's sort, as braid_cost_one_sort weighs
 *		it, and the one process's merge and emitting of every row, instead
 *		of each process's final merge and the Gather Merge); *pg_ns that of
 *		PostgreSQL's parallel plan.  Preferred where it is expected to beat
 *		the BraidSorts braidsort would take in each process (each_taken), or,
 *		where it would leave those to PostgreSQL, where its estimate is at
 *		most BRAID_COST_MARGIN of PostgreSQL's plan; only from value logs,
 *		where each process's sort spills runs (below), and never when each
 *		process's sort is expected to fit in work_mem.
 */
bool
braid_cost_shared_sort(const BraidCostInput *each, const BraidCostEstimate *each_est,
					   bool each_taken, double rows, double *shared_ns, double *pg_ns)
{
	double		merge = braid_cost_gather_merge_ns(rows);
	double		scale = each_scale(each, rows);
	double		each_ns = each_est->braid_ns * scale + merge;

	*pg_ns = each_est->pg_ns * scale + merge;
	*shared_ns = each_est->braid_ns * scale + rows * BRAID_SHARED_NS_PER_ROW;

	/*
	 * By heap TID the one process would gather every row, which the
	 * processes' sorts do a share each, at once: measured at 64MB (each
	 * process's sort in memory), the one process's gather of 3M rows took 980
	 * ms against 225-290 ms in each of three, and `ORDER BY last_name` ran
	 * 1.2x longer shared; at 4MB no faster than one sort.  Only a value log's
	 * rows, copied out of the logs, are taken shared.  And only where each
	 * process's sort spills: one that would not hands its entries and its
	 * whole log over to the leader, which then sorts every entry as one sort
	 * of the whole scan would, and measured about as fast as one
	 * (docs/benchmarks.md, onepass).
	 */
	if (each_est->small || each_est->from != BRAID_FROM_VALUE_LOG ||
		!braid_cost_spills(each, each_est->from))
		return false;
	return each_taken ? *shared_ns <= each_ns : *shared_ns <= *pg_ns * BRAID_COST_MARGIN;
}

/*
 * braid_cost_prefers
 *		True if braidsort should replace PostgreSQL's Sort; otherwise *why
 *		says why not.
 */
bool
braid_cost_prefers(const BraidCostInput *in, const char **why)
{
	BraidCostEstimate est;

	braid_cost_estimate(in, &est);
	*why = est.why;
	return est.prefers;
}
