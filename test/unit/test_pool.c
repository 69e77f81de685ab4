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

#include <pthread.h>

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
		check_that(&c, once && r.sum == expect,
				   "iteration %d: %d threads: each must run once (sum %ld, want %ld)",
				   iter, ran, r.sum, expect);
		if (iter % 97 == 0)
		{
			int			conc;

			memset(&r, 0, sizeof(r));
			conc = braid_pool_run_concurrent(want, pool_round_task, &r);
			check_that(&c, conc >= 1 && conc <= ran && r.hits[conc - 1] == 1 &&
					   (conc == 64 || r.hits[conc] == 0),
					   "iteration %d: concurrent run of %d reported %d", iter, want, conc);
		}
	}
	check_report(&c, "pool: kept threads run every task once per thread, 3000 tasks of 1-64 threads");
}

/* One capped round: each worker records the thread it ran on. */
typedef struct PoolCapRound
{
	int			hits[64];
	pthread_t	thread[64];
} PoolCapRound;

/* pool_cap_task: record that worker ran, and on which thread. */
static void
pool_cap_task(void *arg, int worker)
{
	PoolCapRound *r = (PoolCapRound *) arg;

	r->hits[worker]++;
	r->thread[worker] = pthread_self();
}

/*
 * test_pool_cap: under braid_pool_max_threads (braidsort.max_backend_threads)
 * a task asking for more threads still runs every worker's share once,
 * on no more threads than the cap; a concurrent run reports the cap.
 */
static void
test_pool_cap(void)
{
	Check		c;
	int			saved = braid_pool_max_threads;

	check_init(&c);
	for (int cap = 1; cap <= 4; cap++)
	{
		braid_pool_max_threads = cap;
		for (int want = 1; want <= 12; want++)
		{
			PoolCapRound r;
			pthread_t	seen[64];
			int			nseen = 0;
			bool		once = true;
			int			conc;

			memset(&r, 0, sizeof(r));
			braid_pool_run(want, pool_cap_task, &r);
			for (int w = 0; w < 64; w++)
			{
				bool		known = false;

				if (r.hits[w] != (w < want ? 1 : 0))
					once = false;
				if (w >= want)
					continue;
				for (int i = 0; i < nseen; i++)
					known |= pthread_equal(seen[i], r.thread[w]) != 0;
				if (!known)
					seen[nseen++] = r.thread[w];
			}
			check_that(&c, once && nseen <= cap,
					   "cap %d, %d workers: each must run once on at most %d threads (%d)",
					   cap, want, cap, nseen);
			memset(&r, 0, sizeof(r));
			conc = braid_pool_run_concurrent(want, pool_cap_task, &r);
			check_that(&c, conc >= 1 && conc <= cap && conc <= want,
					   "cap %d: a concurrent run of %d reported %d", cap, want, conc);
		}
	}
	braid_pool_max_threads = saved;
	check_report(&c, "pool: a task of up to 12 workers runs on at most max_backend_threads threads (1-4)");
}

/* unit_pool: run the tests of this module, in order. */
void
unit_pool(void)
{
	test_pool_persistent();
	test_pool_cap();
}
