/*-------------------------------------------------------------------------
 *
 * emulate.c
 *	  Emulated device latency: waiting out the time an access owes.
 *
 * See emulate.h.  The clock is CLOCK_MONOTONIC; a wait spins on it, as
 * sleeps cannot resolve the sub-microsecond delays of a line.
 *
 * src/emulate.c
 *
 *-------------------------------------------------------------------------
 */
#include <time.h>

#include "emulate.h"

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
 * braid_emulate_wait_ns
 *		Wait ns nanoseconds, the emulated device time owed, and return the
 *		clock at the end (so the caller needs no second clock read).
 */
int64_t
braid_emulate_wait_ns(uint64_t ns)
{
	int64_t		start = braid_emulate_now_ns();
	int64_t		now = start;

	while ((uint64_t) (now - start) < ns)
		now = braid_emulate_now_ns();
	return now;
}

/*
 * braid_emulate_lines
 *		Wait for lines x ns_per_line nanoseconds, rounded up to a whole
 *		microsecond (nothing if either is 0).  The rounding is the spill
 *		files' emulation as it always was: a read of a few lines waits a
 *		microsecond, whose figures the benchmarks so far were taken with.
 */
void
braid_emulate_lines(uint64_t lines, int ns_per_line)
{
	uint64_t	ns;

	if (ns_per_line <= 0 || lines == 0)
		return;
	ns = lines * (uint64_t) ns_per_line;
	(void) braid_emulate_wait_ns((ns + 999) / 1000 * 1000);
}
