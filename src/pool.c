/*-------------------------------------------------------------------------
 *
 * pool.c
 *	  Run a function on several threads at once, for pure CPU work.
 *
 * PostgreSQL backends are single-threaded by contract, so braidsort's
 * threads only ever touch plain memory: they sort and copy, and never call
 * PostgreSQL, allocate with palloc, or raise errors.  They are started with
 * every signal blocked, so that signals keep reaching the backend's main
 * thread and its handlers, and they are always joined before the caller
 * returns: nothing of theirs outlives the call, whatever happens next.  If
 * a thread cannot be started, the work simply runs on fewer threads.
 *
 * Pure C (pthreads).
 *
 * src/pool.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "pool.h"

#define BRAID_MAX_THREADS 64

typedef struct PoolSlot
{
	BraidTask	task;
	void	   *arg;
	int			worker;
} PoolSlot;

/* pool_main: a started thread runs its share of the task. */
static void *
pool_main(void *p)
{
	PoolSlot   *slot = (PoolSlot *) p;

	slot->task(slot->arg, slot->worker);
	return NULL;
}

/*
 * braid_pool_run
 *		Run task on nthreads threads (the caller being thread 0) and wait for
 *		all of them.  Returns how many threads ran it.
 */
int
braid_pool_run(int nthreads, BraidTask task, void *arg)
{
	pthread_t	threads[BRAID_MAX_THREADS];
	PoolSlot	slots[BRAID_MAX_THREADS];
	sigset_t	all,
				old;
	int			started = 0;

	if (nthreads > BRAID_MAX_THREADS)
		nthreads = BRAID_MAX_THREADS;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < nthreads; i++)
	{
		slots[started].task = task;
		slots[started].arg = arg;
		slots[started].worker = started + 1;
		if (pthread_create(&threads[started], NULL, pool_main, &slots[started]) != 0)
			break;
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	task(arg, 0);
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	return started + 1;
}

/* braid_pool_cpus: online CPUs, at least 1. */
int
braid_pool_cpus(void)
{
	long		n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (int) n;
}
