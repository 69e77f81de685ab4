/*-------------------------------------------------------------------------
 *
 * emulate.c
 *	  Emulated spill devices: reserving time on a device's clock, and
 *	  waiting it out.
 *
 * See emulate.h for the model.  A reservation takes the lane that is free
 * first: it starts when that lane's last reservation ends, or now if the
 * lane is idle, and lasts lines x the per-line delay (plus the interference
 * delay for a read that starts before the latest write reservation ends).
 * Lanes are claimed with compare-and-swap, so no lock is held and a thread
 * that loses a race simply looks again.  The caller then waits until its
 * reservation ends: it sleeps (clock_nanosleep on CLOCK_MONOTONIC, with
 * the thread's timer slack cut to a microsecond) until BRAID_SPIN_NS
 * before the end, and spins for the rest, as sleeps cannot resolve the
 * sub-microsecond delays of a few lines.  A waiting session therefore
 * leaves its CPU to others: on a machine with few cores, sessions compete
 * for the emulated device as they would for a real one.
 *
 * src/core/emulate.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "core/emulate.h"
#include "core/sync.h"

/* The last part of a wait is spun: sleeps wake up this late, or later. */
#define BRAID_SPIN_NS	30000

/* Timer slack asked of a thread that sleeps on the clock, in ns. */
#define BRAID_TIMER_SLACK_NS 1000

/*
 * The braidsort.emulate_* settings (defined as GUCs by guc.c).  They live
 * here, below every module that reads them (the device layer, the
 * scheduler's profile lookups), but only a backend reads them: it hands a
 * BraidEmulation to its threads.
 */
int			braid_emulate_read_ns = 0;
int			braid_emulate_write_ns = 0;
int			braid_emulate_interference_ns = 0;
int			braid_emulate_parallelism = 4;

/*
 * braid_emulate_now_ns
 *		The monotonic clock, in nanoseconds.
 */
int64_t
braid_emulate_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * braid_emulate_sleep_until
 *		Wait until the monotonic clock reads until_ns: sleep while more than
 *		BRAID_SPIN_NS is left, then spin.  Returns the clock at the end (so
 *		the caller needs no second clock read).
 */
int64_t
braid_emulate_sleep_until(int64_t until_ns)
{
	static __thread bool slack_set = false;
	int64_t		now = braid_emulate_now_ns();

	while (until_ns - now > BRAID_SPIN_NS)
	{
		struct timespec ts;
		int64_t		wake = until_ns - BRAID_SPIN_NS;

#ifdef __linux__
		/* the default slack (50 us) would overshoot most waits */
		if (!slack_set)
		{
			(void) prctl(PR_SET_TIMERSLACK, (unsigned long) BRAID_TIMER_SLACK_NS, 0, 0, 0);
			slack_set = true;
		}
#endif
		ts.tv_sec = wake / 1000000000;
		ts.tv_nsec = wake % 1000000000;
		/* a signal ends the sleep early: sleep again for what is left */
		(void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		now = braid_emulate_now_ns();
	}
	while (now < until_ns)
	{
		braid_cpu_relax();
		now = braid_emulate_now_ns();
	}
	return now;
}

/*
 * braid_emulate_wait_ns
 *		Wait ns nanoseconds from now, on no device's clock, and return the
 *		clock at the end.
 */
int64_t
braid_emulate_wait_ns(uint64_t ns)
{
	return braid_emulate_sleep_until(braid_emulate_now_ns() + (int64_t) ns);
}

/*
 * braid_clock_reserve
 *		Reserve device time on clock for an access of lines lines at
 *		ns_per_line, asked at time now, on the first of `lanes` lanes to be
 *		free; return when the reservation ends (now if the access costs
 *		nothing).  A read (write false) costs interference_ns more per line
 *		if it starts before the latest write reservation ends, or if the
 *		caller says a writer is at work (writing).  Pure: no waiting, so
 *		that it can be tested with any clock values.
 */
int64_t
braid_clock_reserve(BraidDeviceClock *clock, int lanes, int64_t now,
					uint64_t lines, int ns_per_line, int interference_ns,
					bool write, bool writing)
{
	if (lanes < 1)
		lanes = 1;
	if (lanes > BRAID_CLOCK_MAX_LANES)
		lanes = BRAID_CLOCK_MAX_LANES;
	if (now < 0)
		now = 0;

	for (;;)
	{
		int			best = 0;
		uint64_t	free_at = braid_load_seq(&clock->lane_free[0]);
		uint64_t	start;
		uint64_t	per_line = ns_per_line > 0 ? (uint64_t) ns_per_line : 0;
		bool		interfere = false;
		uint64_t	end;

		for (int i = 1; i < lanes; i++)
		{
			uint64_t	v = braid_load_seq(&clock->lane_free[i]);

			if (v < free_at)
			{
				free_at = v;
				best = i;
			}
		}
		start = free_at > (uint64_t) now ? free_at : (uint64_t) now;
		if (!write && interference_ns > 0 &&
			(writing || braid_load_seq(&clock->writes_until) > start))
		{
			per_line += (uint64_t) interference_ns;
			interfere = true;
		}
		end = start + lines * per_line;
		if (end == start)
			return now;
		if (!braid_cas_seq(&clock->lane_free[best], &free_at, end))
			continue;			/* another access took the lane: look again */

		if (write)
		{
			uint64_t	until = braid_load_seq(&clock->writes_until);

			while (until < end && !braid_cas_seq(&clock->writes_until, &until, end))
				;
		}
		braid_fetch_add_relaxed(&clock->reserved_ns, end - start);
		braid_fetch_add_relaxed(&clock->queued_ns, start - (uint64_t) now);
		if (interfere)
			braid_fetch_add_relaxed(&clock->interfered_lines, lines);
		return (int64_t) end;
	}
}

/*
 * braid_clock_counter
 *		Read one of a clock's counters (reserved_ns, queued_ns,
 *		interfered_lines), which accesses add to concurrently.
 */
uint64_t
braid_clock_counter(const uint64_t *counter)
{
	return braid_load_relaxed(counter);
}

/*
 * braid_clock_reset_counters
 *		Zero a clock's counters (braidsort.stats_reset), not its lanes:
 *		reservations in progress keep their time.
 */
void
braid_clock_reset_counters(BraidDeviceClock *clock)
{
	braid_store_relaxed(&clock->reserved_ns, 0);
	braid_store_relaxed(&clock->queued_ns, 0);
	braid_store_relaxed(&clock->interfered_lines, 0);
}

/*
 * braid_emulate_access
 *		Charge an access of lines lines (a write if write) under em: reserve
 *		its time on the device's clock (or, for a device of its own, just
 *		its own delay) and wait until the reservation ends.  Returns the
 *		clock at the end; costs one clock read if nothing is emulated.
 */
int64_t
braid_emulate_access(const BraidEmulation *em, uint64_t lines, bool write)
{
	int			ns = write ? em->write_ns : em->read_ns;
	int			interference = write ? 0 : em->interference_ns;
	int64_t		now;
	int64_t		end;

	if (lines == 0 || (ns <= 0 && interference <= 0))
		return braid_emulate_now_ns();
	now = braid_emulate_now_ns();
	if (em->clock != NULL)
		end = braid_clock_reserve(em->clock, em->lanes, now, lines, ns,
								  interference, write, em->writing);
	else
		end = now + (int64_t) (lines * (uint64_t) ((ns > 0 ? ns : 0) +
												   (em->writing ? interference : 0)));
	if (end <= now)
		return now;
	return braid_emulate_sleep_until(end);
}
