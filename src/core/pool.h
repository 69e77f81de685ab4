/*-------------------------------------------------------------------------
 *
 * pool.h
 *	  Run a function on several threads at once, for pure CPU work.
 *
 * Pure C (pthreads): no PostgreSQL calls, usable from the unit tests.
 *
 * src/core/pool.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_POOL_H
#define BRAID_POOL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The most threads a task runs on at once in a process, the caller
 * included (braidsort.max_backend_threads); more workers than that share
 * the threads there are.
 */
#define BRAID_POOL_DEFAULT_MAX_THREADS 8
extern int	braid_pool_max_threads;

/* A task: called once per thread, with that thread's number (0 = caller). */
typedef void (*BraidTask) (void *arg, int worker);

extern void braid_pool_run(int nthreads, BraidTask task, void *arg);

/*
 * braid_pool_start() lets the caller work while the helpers run a task; the
 * pool runs one task at a time, so nothing may use the pool until the
 * matching braid_pool_finish().
 */
extern int	braid_pool_start(int nthreads, BraidTask task, void *arg);
extern void braid_pool_finish(int nthreads, int helpers, BraidTask task,
							  void *arg, bool run_caller);
extern bool braid_pool_busy(void);
extern void braid_pool_quiesce(void);
extern int	braid_pool_run_concurrent(int nthreads, BraidTask task, void *arg);
extern void braid_prefault_start(void *base, size_t len, int nthreads);
extern void braid_prefault_end(void);
extern int	braid_pool_cpus(void);

#endif							/* BRAID_POOL_H */
