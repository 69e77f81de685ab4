/*-------------------------------------------------------------------------
 *
 * test_emulate.c
 *	  Unit tests of src/core/emulate.c: line counting, emulated waits and the
 *	  device clock.
 *
 * Lines are counted over [from, to) at any alignment; a wait lasts at
 * least what is owed, sleeping, and nothing is waited for zero lines or a
 * zero delay; the device clock reserves time as the model says, from
 * given times (deterministic), and keeps every reservation of threads that
 * race for it.
 *
 * test/unit/test_emulate.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"

#include "core/emulate.h"

/* lines_reference: lines touched by [from, to), one byte at a time. */
static uint64_t
lines_reference(uintptr_t from, uintptr_t to)
{
	uint64_t	n = 0;
	uintptr_t	last = UINTPTR_MAX;

	for (uintptr_t a = from; a < to; a++)
		if (a / BRAID_LINE_BYTES != last)
		{
			last = a / BRAID_LINE_BYTES;
			n++;
		}
	return n;
}

/*
 * test_emulate_lines_spanned: braid_lines_spanned agrees with counting the
 * lines byte by byte, for every start within two lines and lengths up to
 * five lines, and is 0 for empty or reversed ranges.
 */
static void
test_emulate_lines_spanned(void)
{
	Check		c;

	check_init(&c);
	for (uintptr_t base = 0; base < 4096; base += 4032)
		for (uintptr_t from = base; from < base + 2 * BRAID_LINE_BYTES; from++)
			for (uintptr_t len = 0; len <= 5 * BRAID_LINE_BYTES; len++)
				check_that(&c, braid_lines_spanned(from, from + len) ==
						   lines_reference(from, from + len),
						   "[%lu, %lu): %lu lines, expected %lu",
						   (unsigned long) from, (unsigned long) (from + len),
						   (unsigned long) braid_lines_spanned(from, from + len),
						   (unsigned long) lines_reference(from, from + len));
	check_that(&c, braid_lines_spanned(100, 50) == 0, "a reversed range spans no line");
	check_report(&c, "emulate: lines spanned by [from, to) at every alignment");
}

/*
 * test_emulate_waits: waits last at least what is owed and not much more,
 * a long wait sleeps rather than spins, and nothing owed costs nothing.
 */
static void
test_emulate_waits(void)
{
	Check		c;
	BraidEmulation own = {.lanes = 1,.read_ns = 100,.write_ns = 400};
	int64_t		t0,
				t1;
	struct timespec cpu0,
				cpu1;
	int64_t		cpu_ns;

	check_init(&c);
	t0 = braid_emulate_now_ns();
	t1 = braid_emulate_wait_ns(200000);
	check_that(&c, t1 - t0 >= 200000, "wait_ns(200 us) took %ld ns", (long) (t1 - t0));
	check_that(&c, braid_emulate_now_ns() >= t1, "the clock goes forward");

	/* 3 lines at 400 ns = 1.2 us: no rounding up to a microsecond */
	t0 = braid_emulate_now_ns();
	t1 = braid_emulate_access(&own, 3, true);
	check_that(&c, t1 - t0 >= 1200, "3 lines at 400 ns took %ld ns", (long) (t1 - t0));

	/* 1000 lines at 100 ns = 100 us */
	t0 = braid_emulate_now_ns();
	t1 = braid_emulate_access(&own, 1000, false);
	check_that(&c, t1 - t0 >= 100000, "1000 lines at 100 ns took %ld ns", (long) (t1 - t0));

	/* 20 ms sleeps: the thread uses a small part of it on a CPU */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
	t0 = braid_emulate_now_ns();
	t1 = braid_emulate_wait_ns(20000000);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
	cpu_ns = (int64_t) (cpu1.tv_sec - cpu0.tv_sec) * 1000000000 + (cpu1.tv_nsec - cpu0.tv_nsec);
	check_that(&c, t1 - t0 >= 20000000, "wait_ns(20 ms) took %ld ns", (long) (t1 - t0));
	check_that(&c, cpu_ns < 5000000, "a 20 ms wait used %ld ns of CPU", (long) cpu_ns);

	/* nothing owed: returns at once (well under a millisecond) */
	own.read_ns = own.write_ns = 0;
	t0 = braid_emulate_now_ns();
	for (int i = 0; i < 1000; i++)
	{
		own.write_ns = 1000;
		(void) braid_emulate_access(&own, 0, true);
		own.write_ns = 0;
		(void) braid_emulate_access(&own, 1000, true);
	}
	t1 = braid_emulate_now_ns();
	check_that(&c, t1 - t0 < 5000000, "2000 waits of nothing took %ld ns", (long) (t1 - t0));
	check_report(&c, "emulate: waits last what is owed, sleeping; nothing owed is free");
}

/*
 * test_clock_reserve: reservations at given times on an idle clock land
 * where the model says: on the first free lane, queued behind a busy one,
 * with interference for reads that start under a write reservation or a
 * writer the caller knows of; free accesses reserve nothing.
 */
static void
test_clock_reserve(void)
{
	Check		c;
	BraidDeviceClock clock;
	int64_t		end;

	check_init(&c);
	memset(&clock, 0, sizeof(clock));

	/* one lane: the second access queues behind the first */
	end = braid_clock_reserve(&clock, 1, 1000, 10, 100, 0, false, false);
	check_that(&c, end == 2000, "10 lines at 100 ns from 1000 end at %ld", (long) end);
	end = braid_clock_reserve(&clock, 1, 1500, 10, 100, 0, false, false);
	check_that(&c, end == 3000, "queued behind the first: end %ld, expected 3000", (long) end);
	check_that(&c, clock.queued_ns == 500 && clock.reserved_ns == 2000,
			   "queued %lu ns, reserved %lu ns", (unsigned long) clock.queued_ns,
			   (unsigned long) clock.reserved_ns);

	/* two lanes: the second access takes the idle lane at once */
	memset(&clock, 0, sizeof(clock));
	(void) braid_clock_reserve(&clock, 2, 1000, 10, 100, 0, false, false);
	end = braid_clock_reserve(&clock, 2, 1500, 10, 100, 0, false, false);
	check_that(&c, end == 2500, "on the second lane: end %ld, expected 2500", (long) end);
	end = braid_clock_reserve(&clock, 2, 1500, 10, 100, 0, false, false);
	check_that(&c, end == 3000, "both lanes busy: end %ld, expected 3000", (long) end);

	/* a read under a write reservation pays interference; later, not */
	memset(&clock, 0, sizeof(clock));
	end = braid_clock_reserve(&clock, 4, 0, 10, 100, 50, true, false);
	check_that(&c, end == 1000 && clock.writes_until == 1000,
			   "write ends %ld, writes_until %lu", (long) end,
			   (unsigned long) clock.writes_until);
	end = braid_clock_reserve(&clock, 4, 500, 10, 10, 50, false, false);
	check_that(&c, end == 500 + 10 * 60, "read under the write ends %ld, expected 1100", (long) end);
	check_that(&c, clock.interfered_lines == 10, "interfered lines %lu",
			   (unsigned long) clock.interfered_lines);
	end = braid_clock_reserve(&clock, 4, 1500, 10, 10, 50, false, false);
	check_that(&c, end == 1600, "read after the write ends %ld, expected 1600", (long) end);
	end = braid_clock_reserve(&clock, 4, 2000, 10, 10, 50, false, true);
	check_that(&c, end == 2600, "read beside a known writer ends %ld, expected 2600", (long) end);
	/* writes never pay interference */
	end = braid_clock_reserve(&clock, 4, 5000, 10, 100, 50, true, true);
	check_that(&c, end == 6000, "a write ends %ld, expected 6000", (long) end);

	/* nothing owed: no reservation, the clock unchanged */
	memset(&clock, 0, sizeof(clock));
	end = braid_clock_reserve(&clock, 4, 700, 10, 0, 50, false, false);
	check_that(&c, end == 700 && clock.reserved_ns == 0 && clock.lane_free[0] == 0,
			   "a free read reserved %lu ns", (unsigned long) clock.reserved_ns);
	end = braid_clock_reserve(&clock, 4, 700, 0, 100, 0, true, false);
	check_that(&c, end == 700 && clock.writes_until == 0, "zero lines reserved time");

	/* lanes out of range are clamped: 0 is one lane, 1000 is the maximum */
	memset(&clock, 0, sizeof(clock));
	(void) braid_clock_reserve(&clock, 0, 0, 1, 100, 0, true, false);
	end = braid_clock_reserve(&clock, 0, 0, 1, 100, 0, true, false);
	check_that(&c, end == 200, "lanes 0: end %ld, expected 200 (one lane)", (long) end);
	memset(&clock, 0, sizeof(clock));
	for (int i = 0; i < BRAID_CLOCK_MAX_LANES; i++)
		(void) braid_clock_reserve(&clock, 1000, 0, 1, 100, 0, true, false);
	end = braid_clock_reserve(&clock, 1000, 0, 1, 100, 0, true, false);
	check_that(&c, end == 200, "lanes 1000: end %ld, expected 200 after %d lanes",
			   (long) end, BRAID_CLOCK_MAX_LANES);

	braid_clock_reset_counters(&clock);
	check_that(&c, braid_clock_counter(&clock.reserved_ns) == 0 &&
			   braid_clock_counter(&clock.queued_ns) == 0 && clock.lane_free[0] == 200,
			   "a reset zeroes the counters and keeps the lanes");
	check_report(&c, "emulate: device clock reservations follow the model");
}

/* Shared by the threads of test_clock_threads. */
typedef struct ClockRace
{
	BraidDeviceClock *clock;
	int			lanes;
} ClockRace;

/* clock_racer: reserve 10000 accesses of 3 lines at 7 ns, all asked at 0. */
static void *
clock_racer(void *arg)
{
	ClockRace  *r = (ClockRace *) arg;

	for (int i = 0; i < 10000; i++)
		(void) braid_clock_reserve(r->clock, r->lanes, 0, 3, 7, 0, true, false);
	return NULL;
}

/*
 * test_clock_threads: four threads reserving on one clock at once lose no
 * reservation: the lanes' total busy time is exactly what was asked, and
 * on one lane the reservations line up end to end.
 */
static void
test_clock_threads(void)
{
	Check		c;
	BraidDeviceClock *clock = calloc(1, sizeof(BraidDeviceClock));

	check_init(&c);
	for (int lanes = 1; lanes <= 3; lanes += 2)
	{
		ClockRace	race = {clock, lanes};
		pthread_t	th[4];
		uint64_t	busy = 0;

		memset(clock, 0, sizeof(*clock));
		for (int t = 0; t < 4; t++)
			pthread_create(&th[t], NULL, clock_racer, &race);
		for (int t = 0; t < 4; t++)
			pthread_join(th[t], NULL);
		for (int l = 0; l < lanes; l++)
			busy += clock->lane_free[l];
		check_that(&c, busy == 4 * 10000 * 21 && clock->reserved_ns == busy,
				   "%d lanes: lanes busy %lu ns, reserved %lu, asked %d", lanes,
				   (unsigned long) busy, (unsigned long) clock->reserved_ns, 4 * 10000 * 21);
		check_that(&c, clock->writes_until == clock->lane_free[0] || lanes > 1,
				   "one lane: writes until %lu, lane free at %lu",
				   (unsigned long) clock->writes_until, (unsigned long) clock->lane_free[0]);
	}
	free(clock);
	check_report(&c, "emulate: concurrent reservations are all kept");
}

/* unit_emulate: the tests of src/core/emulate.c, in order. */
void
unit_emulate(void)
{
	test_emulate_lines_spanned();
	test_emulate_waits();
	test_clock_reserve();
	test_clock_threads();
}
