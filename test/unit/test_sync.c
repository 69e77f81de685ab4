/*-------------------------------------------------------------------------
 *
 * test_sync.c
 *	  Unit tests of src/core/sync.h: the event count and the atomics threads
 *	  wait with.
 *
 * A waiter that prepares, finds no work and sleeps is always woken by a
 * signal given after the work was published, whatever the interleaving
 * (thousands of rounds between two threads); the atomics return what
 * their names say.
 *
 * test/unit/test_sync.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <time.h>

#include "unit.h"

#include "core/sync.h"

#define SYNC_ROUNDS 20000

/* What the two threads share: work items published one at a time. */
typedef struct SyncShared
{
	BraidEventCount ev;
	int			published;		/* items given (atomic) */
	int			taken;			/* items taken (atomic) */
} SyncShared;

/*
 * sync_consumer: take every item, sleeping on the event count when there
 * is none, as sort/tid_gather_copy.c's copier does.
 */
static void *
sync_consumer(void *arg)
{
	SyncShared *sh = (SyncShared *) arg;
	int			next = 0;

	while (next < SYNC_ROUNDS)
	{
		int			spins = 0;

		while (braid_load_acquire(&sh->published) <= next)
		{
			int			seq;

			if (spins++ < 50)
			{
				braid_cpu_relax();
				continue;
			}
			seq = braid_event_prepare(&sh->ev);
			if (braid_load_acquire(&sh->published) <= next)
				braid_event_sleep(&sh->ev, seq);
			braid_event_done(&sh->ev);
		}
		next++;
		braid_store_release(&sh->taken, next);
	}
	return NULL;
}

/*
 * test_sync_event_count: a producer publishing items one by one and
 * signalling after each, and a consumer sleeping on the event count when
 * it runs out, finish every round (a lost wake-up would cost the 1 ms
 * timeout each: the run is bounded to catch many of those).
 */
static void
test_sync_event_count(void)
{
	Check		c;
	SyncShared	sh;
	pthread_t	th;
	struct timespec t0,
				t1;
	double		secs;

	check_init(&c);
	memset(&sh, 0, sizeof(sh));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pthread_create(&th, NULL, sync_consumer, &sh) != 0)
	{
		check_that(&c, false, "could not start a thread");
		check_report(&c, "sync: event count wakes every sleeper");
		return;
	}
	for (int i = 1; i <= SYNC_ROUNDS; i++)
	{
		int			spins = 0;

		braid_store_release(&sh.published, i);
		braid_event_signal(&sh.ev);
		/* let the consumer catch up now and then, so it often sleeps */
		if (i % 64 == 0)
			while (braid_load_acquire(&sh.taken) < i)
				braid_backoff(&spins);
	}
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	check_that(&c, braid_load_acquire(&sh.taken) == SYNC_ROUNDS, "taken %d of %d",
			   sh.taken, SYNC_ROUNDS);
	check_that(&c, braid_load_seq(&sh.ev.sleepers) == 0, "%d sleepers left",
			   sh.ev.sleepers);
	/* 20000 rounds: far under the 20 s that a lost wake-up per round costs */
	check_that(&c, secs < 10.0, "%d rounds took %.1f s", SYNC_ROUNDS, secs);
	check_report(&c, "sync: event count wakes every sleeper (%d rounds)", SYNC_ROUNDS);
}

/*
 * test_sync_atomics: fetch_add returns the value before, add_fetch the
 * value after, cas succeeds only on the expected value.
 */
static void
test_sync_atomics(void)
{
	Check		c;
	int			v = 5;
	int64_t		w = 7;
	int64_t		expected = 7;

	check_init(&c);
	check_that(&c, braid_fetch_add_relaxed(&v, 2) == 5 && v == 7, "fetch_add returns the old value");
	check_that(&c, braid_fetch_add_release(&v, 1) == 7 && v == 8, "fetch_add_release");
	check_that(&c, braid_add_fetch_seq(&v, 2) == 10, "add_fetch returns the new value");
	check_that(&c, braid_add_fetch_release(&v, 1) == 11, "add_fetch_release");
	check_that(&c, braid_sub_fetch_seq(&v, 1) == 10, "sub_fetch returns the new value");
	check_that(&c, braid_fetch_sub_acq_rel(&v, 4) == 10 && v == 6, "fetch_sub returns the old value");
	braid_store_seq(&v, 3);
	check_that(&c, braid_load_seq(&v) == 3 && braid_load_relaxed(&v) == 3, "store/load");
	check_that(&c, braid_cas_seq(&w, &expected, 9) && w == 9, "cas on the expected value");
	expected = 7;
	check_that(&c, !braid_cas_seq(&w, &expected, 11) && w == 9 && expected == 9,
			   "cas on another value fails and reads it");
	check_report(&c, "sync: atomics return what their names say");
}

/* unit_sync: the tests of src/core/sync.h, in order. */
void
unit_sync(void)
{
	test_sync_atomics();
	test_sync_event_count();
}
