/*-------------------------------------------------------------------------
 *
 * pool.c
 *	  A thread pool for pure CPU and memory work: sorting, copying, spill
 *	  writes, device microbenchmarks.
 *
 * PostgreSQL backends are single-threaded by contract, so braidsort's
 * threads only ever touch plain memory: they sort and copy, and never call
 * PostgreSQL, allocate with palloc, or raise errors.  They are started with
 * every signal blocked, so that signals keep reaching the backend's main
 * thread and its handlers.
 *
 * The threads are started on first use in a backend (never in the
 * postmaster, which forks) and then kept, idle on a condition variable,
 * for the backend's life: a task costs a wake-up rather than a thread
 * creation, which matters for the many small tasks (a spill flush, a window
 * of value-log rows).  braid_pool_run() hands one task to the calling
 * thread and as many pool threads as asked, and returns only when all of
 * them are done: nothing of a task outlives the call, whatever happens
 * next.  If a thread cannot be started, the work simply runs on fewer.
 *
 * Pure C (pthreads).
 *
 * src/core/pool.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/pool.h"
#include "core/sync.h"

#define BRAID_MAX_THREADS 64

/*
 * The most threads a task runs on in this process, the caller included
 * (braidsort.max_backend_threads, set by the server's configuration): the
 * shares of workers beyond it run on the threads there are.
 */
int			braid_pool_max_threads = BRAID_POOL_DEFAULT_MAX_THREADS;

/*
 * The pool of one process, protected by "lock", except that helpers count
 * "pending" down without it and threads watch "generation" and "pending"
 * before sleeping on the condition variables.
 */
static struct
{
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a new task was posted */
	pthread_cond_t done;		/* the last helper finished the task */
	int			nthreads;		/* helper threads started (numbers 1..n) */
	uint64_t	generation;		/* bumped for each task */
	BraidTask	task;
	void	   *arg;
	int			helpers;		/* helpers that take part in this task */
	int			pending;		/* helpers not done with it yet (atomic) */
	int			waiting;		/* a caller sleeps on "done" (atomic) */
	pid_t		owner;			/* process the threads belong to */
	uint64_t	born[BRAID_MAX_THREADS + 1];	/* generation at each start */
}			pool = {

	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/*
 * How long a thread watches for work or completion before sleeping: a few
 * tens of microseconds of pause instructions.
 */
#define POOL_SPINS 2000

/*
 * pool_main
 *		A helper thread: wait for each new task, run it if this thread's
 *		number is among the helpers asked for, report completion.
 */
static void *
pool_main(void *p)
{
	int			me = (int) (intptr_t) p;
	uint64_t	seen;

	/* tasks posted after this thread was started are for it to see */
	pthread_mutex_lock(&pool.lock);
	seen = pool.born[me];
	pthread_mutex_unlock(&pool.lock);
	for (;;)
	{
		BraidTask	task;
		void	   *arg;
		bool		mine;

		/*
		 * Tasks often come in quick succession (a gather's chunks, a sort's
		 * levels): watch for the next one a little while before sleeping,
		 * which saves a wake-up (a futex call and, in a virtual machine, an
		 * interprocessor interrupt) per task.
		 */
		for (int spin = 0; spin < POOL_SPINS &&
			 braid_load_acquire(&pool.generation) == seen; spin++)
			braid_cpu_relax();
		pthread_mutex_lock(&pool.lock);
		while (pool.generation == seen)
			pthread_cond_wait(&pool.work, &pool.lock);
		seen = pool.generation;
		mine = me <= pool.helpers;
		task = pool.task;
		arg = pool.arg;
		pthread_mutex_unlock(&pool.lock);
		if (!mine)
			continue;

		task(arg, me);

		/*
		 * Done, without taking the lock unless the caller sleeps: a caller
		 * watching "pending" would otherwise often find it zero while this
		 * thread still held the lock, and block on it.  (Sequentially
		 * consistent with the caller's "waiting", so that one of the two sees
		 * the other.)
		 */
		if (braid_sub_fetch_seq(&pool.pending, 1) == 0 &&
			braid_load_seq(&pool.waiting))
		{
			pthread_mutex_lock(&pool.lock);
			pthread_cond_signal(&pool.done);
			pthread_mutex_unlock(&pool.lock);
		}
	}
	return NULL;
}

/*
 * start_threads
 *		Make sure helpers 1..want exist; returns how many do.  A forked
 *		child has none of its parent's threads: start afresh there.
 */
static int
start_threads(int want)
{
	sigset_t	all,
				old;

	if (pool.owner != getpid())
	{
		pool.owner = getpid();
		pool.nthreads = 0;
	}
	if (pool.nthreads >= want)
		return pool.nthreads;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (pool.nthreads < want)
	{
		pthread_t	t;

		pool.born[pool.nthreads + 1] = pool.generation;
		if (pthread_create(&t, NULL, pool_main,
						   (void *) (intptr_t) (pool.nthreads + 1)) != 0)
			break;
		pthread_detach(t);
		pool.nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pool.nthreads;
}

/*
 * The prefault of one process: the range a helper populates, the helpers
 * running it, and the flag that stops it.
 */
static struct
{
	char	   *base;
	size_t		len;
	int			helpers;		/* -1: no prefault running */
	volatile bool stop;
}			prefault = {.helpers = -1};

static void wait_task(void);

/*
 * post_task
 *		Hand task to helpers 1..nthreads-1, as many as exist or can be
 *		started, without running it on the caller; returns how many helpers
 *		took it.  wait_task() must follow.
 */
static int
post_task(int nthreads, BraidTask task, void *arg)
{
	int			helpers;
	int			want;

	if (nthreads > BRAID_MAX_THREADS)
		nthreads = BRAID_MAX_THREADS;
	if (nthreads <= 1)
		return 0;

	/* a task left behind by an error must end before the next starts */
	if (braid_load_seq(&pool.pending) > 0)
	{
		prefault.stop = true;
		wait_task();
		prefault.helpers = -1;
	}
	pthread_mutex_lock(&pool.lock);
	want = (nthreads < braid_pool_max_threads ? nthreads : braid_pool_max_threads) - 1;
	helpers = want > 0 ? start_threads(want) : 0;
	if (helpers > want)
		helpers = want;
	pool.task = task;
	pool.arg = arg;
	pool.helpers = helpers;
	braid_store_seq(&pool.pending, helpers);
	braid_add_fetch_release(&pool.generation, 1);
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);
	return helpers;
}

/* wait_task: wait until every helper of the posted task is done. */
static void
wait_task(void)
{
	/* helpers usually finish soon after the caller's own share */
	for (int spin = 0; spin < POOL_SPINS; spin++)
	{
		if (braid_load_acquire(&pool.pending) == 0)
			return;
		braid_cpu_relax();
	}
	pthread_mutex_lock(&pool.lock);
	braid_store_seq(&pool.waiting, 1);
	while (braid_load_seq(&pool.pending) > 0)
		pthread_cond_wait(&pool.done, &pool.lock);
	braid_store_seq(&pool.waiting, 0);
	pthread_mutex_unlock(&pool.lock);
}

/*
 * run_on_threads
 *		Run task as workers 0..nthreads-1, the caller being worker 0, on as
 *		many pool threads as exist or can be started; returns how many
 *		workers ran (1 + the helpers).
 */
static int
run_on_threads(int nthreads, BraidTask task, void *arg)
{
	int			helpers = post_task(nthreads, task, arg);

	task(arg, 0);
	if (helpers > 0)
		wait_task();
	return helpers + 1;
}

/*
 * braid_pool_run
 *		Run task as workers 0..nthreads-1 (nthreads at most 64) and wait for
 *		all of them.  Tasks may split their work by worker number: a worker
 *		no thread could be started for runs on the caller afterwards, so
 *		every share is always done.
 */
void
braid_pool_run(int nthreads, BraidTask task, void *arg)
{
	braid_pool_finish(nthreads, post_task(nthreads, task, arg), task, arg, true);
}

/*
 * braid_pool_start
 *		Start task on the helpers of workers 1..nthreads-1 and return at
 *		once, so that the caller can do other work (that the task does not
 *		depend on) meanwhile.  braid_pool_finish() must follow, also when
 *		that other work fails: the task's memory must outlive it.  Returns
 *		the number of helpers running it.
 */
int
braid_pool_start(int nthreads, BraidTask task, void *arg)
{
	return post_task(nthreads, task, arg);
}

/*
 * braid_pool_finish
 *		Complete a task started by braid_pool_start(), which returned
 *		"helpers": run worker 0 on the caller, wait for the helpers, and run
 *		the shares of workers no thread could be started for.  With
 *		run_caller false the caller only waits (for error cleanup: the task
 *		must then not depend on every share being run).
 */
void
braid_pool_finish(int nthreads, int helpers, BraidTask task, void *arg,
				  bool run_caller)
{
	if (nthreads > BRAID_MAX_THREADS)
		nthreads = BRAID_MAX_THREADS;
	if (run_caller)
		task(arg, 0);
	if (helpers > 0)
		wait_task();
	if (run_caller)
		for (int w = helpers + 1; w < nthreads; w++)
			task(arg, w);
}

/*
 * braid_pool_busy
 *		Is a task started by braid_pool_start() still running on a helper?
 *		(Its braid_pool_finish() would wait.)
 */
bool
braid_pool_busy(void)
{
	return braid_load_acquire(&pool.pending) > 0;
}

/*
 * braid_pool_quiesce
 *		Wait for the helpers of a task still running, if any (for a process
 *		that exits without reaching braid_pool_finish()).
 */
void
braid_pool_quiesce(void)
{
	prefault.stop = true;
	if (pool.owner == getpid() && pool.nthreads > 0)
		wait_task();
	prefault.helpers = -1;
}

/*
 * braid_pool_run_concurrent
 *		Run task on up to nthreads threads at once, for work that only makes
 *		sense concurrently (measurements); returns how many workers ran,
 *		numbered 0..n-1.
 */
int
braid_pool_run_concurrent(int nthreads, BraidTask task, void *arg)
{
	return run_on_threads(nthreads, task, arg);
}

#define BRAID_PREFAULT_STEP (2 * 1024 * 1024)

/*
 * prefault_task
 *		Populate the prefault range with writable pages, a step at a time,
 *		until done or stopped.  MADV_POPULATE_WRITE faults pages in without
 *		changing their contents, so racing with the backend's own writes (or
 *		with the range being freed: the call then fails) is harmless.
 */
static void
prefault_task(void *arg, int worker)
{
	(void) arg;
#ifdef MADV_POPULATE_WRITE
	if (worker == 0)
		return;
	for (size_t off = 0; off < prefault.len && !prefault.stop;
		 off += BRAID_PREFAULT_STEP)
	{
		size_t		n = prefault.len - off;

		if (n > BRAID_PREFAULT_STEP)
			n = BRAID_PREFAULT_STEP;
		if (madvise(prefault.base + off, n, MADV_POPULATE_WRITE) != 0 &&
			errno != EINTR && errno != EAGAIN)
			break;
	}
#else
	(void) worker;
#endif
}

/*
 * braid_prefault_start
 *		Have a helper fault in [base, base + len) ahead of the caller, who
 *		is about to fill it sequentially: the kernel's page-clearing then
 *		runs beside the caller instead of in it.  The pool is taken until
 *		braid_prefault_end().  Does nothing for small ranges or with one
 *		thread; ends a prefault still running.
 */
void
braid_prefault_start(void *base, size_t len, int nthreads)
{
#ifndef MADV_POPULATE_WRITE
	(void) base;
	(void) len;
	(void) nthreads;
#else
	uintptr_t	page = (uintptr_t) sysconf(_SC_PAGESIZE);
	uintptr_t	lo = ((uintptr_t) base + page - 1) & ~(page - 1);
	uintptr_t	hi = ((uintptr_t) base + len) & ~(page - 1);

	braid_prefault_end();
	if (nthreads < 2 || hi <= lo ||
		hi - lo < 4 * BRAID_PREFAULT_STEP)
		return;
	prefault.base = (char *) lo;
	prefault.len = hi - lo;
	prefault.stop = false;
	prefault.helpers = post_task(2, prefault_task, NULL);
	if (prefault.helpers == 0)
		prefault.helpers = -1;
#endif
}

/*
 * braid_prefault_end
 *		Stop a prefault, if one runs, and wait for its helper.
 */
void
braid_prefault_end(void)
{
	if (prefault.helpers < 0)
		return;
	prefault.stop = true;
	wait_task();
	prefault.helpers = -1;
}

/*
 * braid_pool_cpus: online CPUs, at least 1.  Read once per process: glibc
 * reads a sysfs file for it, and the planner asks for every Sort.  (A
 * race between threads only reads the same number twice.)
 */
int
braid_pool_cpus(void)
{
	static int	cpus = 0;

	if (cpus == 0)
	{
		long		n = sysconf(_SC_NPROCESSORS_ONLN);

		cpus = n < 1 ? 1 : (int) n;
	}
	return cpus;
}
