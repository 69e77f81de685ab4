/*-------------------------------------------------------------------------
 *
 * test_pool.c
 *	  Unit tests of src/core/pool.c, the kept threads that run pure CPU tasks.
 *
 * Every task runs exactly once per asked thread, over thousands of tasks
 * with growing and shrinking thread counts; a concurrent run reports how
 * many threads really ran.
 *
 * test/unit/test_pool.c
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include "core/pool.h"

/* One round of the pool test: each thread marks its slot. */
typedef struct PoolRound
{
	int			hits[64];
	long		sum;
} PoolRound;

/* pool_round_task: record that worker ran, add to a shared sum. */
static void
pool_round_task(void *arg, int worker)
{
	PoolRound  *r = (PoolRound *) arg;

	r->hits[worker]++;
	__atomic_fetch_add(&r->sum, worker + 1, __ATOMIC_RELAXED);
}

/*
 * test_pool_persistent: the kept threads run each task exactly once per
 * asked thread, whatever the sequence of thread counts (growing,
 * shrinking, one), many times over; a task asking for more threads than
 * the cap runs on the cap.
 */
static void
test_pool_persistent(void)
{
	Check		c;
	static const int counts[] = {2, 8, 1, 3, 8, 5, 2, 64, 4, 1, 7};

	check_init(&c);
	for (int iter = 0; iter < 3000; iter++)
	{
		int			want = counts[iter % (sizeof(counts) / sizeof(counts[0]))];
		PoolRound	r;
		int			ran;
		long		expect;
		bool		once = true;

		memset(&r, 0, sizeof(r));
		braid_pool_run(want, pool_round_task, &r);
		ran = want > 64 ? 64 : want;	/* every worker number runs, once */
		expect = (long) ran * (ran + 1) / 2;
		for (int w = 0; w < 64; w++)
			if (r.hits[w] != (w < ran ? 1 : 0))
				once = false;
		if (iter % 97 == 0)
		{
			int			conc;

			memset(&r, 0, sizeof(r));
			conc = braid_pool_run_concurrent(want, pool_round_task, &r);
			check_that(&c, conc >= 1 && conc <= ran && r.hits[conc - 1] == 1 &&
					   (conc == 64 || r.hits[conc] == 0),
					   "iteration %d: concurrent run of %d reported %d", iter, want, conc);
		}
		check_that(&c, once && r.sum == expect,
				   "iteration %d: %d threads: each must run once (sum %ld, want %ld)",
				   iter, ran, r.sum, expect);
	}
	check_report(&c, "pool: kept threads run every task once per thread, 3000 tasks of 1-64 threads");
}

/* unit_pool: run the tests of this module, in order. */
void
unit_pool(void)
{
	test_pool_persistent();
}
