/*-------------------------------------------------------------------------
 *
 * sync.h
 *	  How braidsort's threads wait for each other: atomics, spin-then-sleep,
 *	  and an event count.
 *
 * Helper threads (pool.c) and the backend that drives them share plain
 * memory: counters and flags read and written with the atomic operations
 * below, named for their memory order, so that every order is chosen and
 * visible.  A thread that waits first spins a little (work often comes
 * within microseconds), then yields or sleeps:
 *
 *	braid_backoff()		spin with a pause hint, then yield the CPU
 *	BraidEventCount		a futex-based event count: a waiter says it is
 *						about to sleep, checks once more for work, and
 *						sleeps on the count as it was; whoever gives work
 *						bumps the count and wakes every sleeper, if any.
 *						All sequentially consistent, so either the waker
 *						sees the sleeper or the sleeper sees the work.  The
 *						sleep's timeout only bounds a lost wake-up.
 *
 * Pure C, no PostgreSQL calls: safe on pool threads.
 *
 * src/core/sync.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SYNC_H
#define BRAID_SYNC_H

#include <limits.h>
#include <sched.h>
#include <time.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Atomic operations, by memory order (GCC/Clang builtins). */
#define braid_load_relaxed(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define braid_load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define braid_load_seq(p)			__atomic_load_n((p), __ATOMIC_SEQ_CST)
#define braid_store_relaxed(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define braid_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define braid_store_seq(p, v)		__atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define braid_fetch_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define braid_fetch_add_release(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELEASE)
#define braid_add_fetch_release(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELEASE)
#define braid_add_fetch_seq(p, v)	__atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define braid_sub_fetch_seq(p, v)	__atomic_sub_fetch((p), (v), __ATOMIC_SEQ_CST)
#define braid_fetch_sub_acq_rel(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_ACQ_REL)
#define braid_cas_seq(p, expected, v) \
	__atomic_compare_exchange_n((p), (expected), (v), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)

/* braid_cpu_relax: a spin-wait hint to the processor. */
static inline void
braid_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/*
 * braid_backoff
 *		One step of a wait: a pause for the first thousand steps, then a
 *		yield of the CPU (to the helpers being waited for, on a machine with
 *		few cores).  *spins counts the steps; start it at 0.
 */
static inline void
braid_backoff(int *spins)
{
	if (++*spins < 1000)
		braid_cpu_relax();
	else
		sched_yield();
}

typedef struct BraidEventCount
{
	int			seq;			/* futex word */
	int			sleepers;		/* waiters about to sleep or asleep */
} BraidEventCount;

/* braid_event_prepare: about to sleep; returns the count to sleep on. */
static inline int
braid_event_prepare(BraidEventCount *ev)
{
	int			seq = braid_load_seq(&ev->seq);

	braid_add_fetch_seq(&ev->sleepers, 1);
	return seq;
}

/* braid_event_sleep: sleep (1 ms at most) unless signalled since prepare. */
static inline void
braid_event_sleep(BraidEventCount *ev, int seq)
{
#ifdef __linux__
	struct timespec timeout = {0, 1000 * 1000};

	(void) syscall(SYS_futex, &ev->seq, FUTEX_WAIT_PRIVATE, seq, &timeout,
				   NULL, 0);
#else
	sched_yield();
#endif
}

/* braid_event_done: the waiter is awake (or decided not to sleep). */
static inline void
braid_event_done(BraidEventCount *ev)
{
	braid_sub_fetch_seq(&ev->sleepers, 1);
}

/* braid_event_signal: wake every waiter that sleeps or is about to. */
static inline void
braid_event_signal(BraidEventCount *ev)
{
	if (braid_load_seq(&ev->sleepers) > 0)
	{
		braid_add_fetch_seq(&ev->seq, 1);
#ifdef __linux__
		(void) syscall(SYS_futex, &ev->seq, FUTEX_WAKE_PRIVATE, INT_MAX,
					   NULL, NULL, 0);
#endif
	}
}

#endif							/* BRAID_SYNC_H */
