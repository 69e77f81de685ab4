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
 *		Wait for lines x ns_per_line nanoseconds (nothing if either is 0).
 */
void
braid_emulate_lines(uint64_t lines, int ns_per_line)
{
	if (ns_per_line <= 0 || lines == 0)
		return;
	(void) braid_emulate_wait_ns(lines * (uint64_t) ns_per_line);
}
