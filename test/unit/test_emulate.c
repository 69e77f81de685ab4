/*-------------------------------------------------------------------------
 *
 * test_emulate.c
 *	  Unit tests of src/emulate.c: line counting and emulated waits.
 *
 * Lines are counted over [from, to) at any alignment; a wait lasts at
 * least what is owed (rounded up to a microsecond for braid_emulate_lines)
 * and nothing is waited for zero lines or a zero delay.
 *
 * test/unit/test_emulate.c
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include "emulate.h"

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
 * test_emulate_waits: waits last at least what is owed, a delay is
 * rounded up to a whole microsecond, and zero owes nothing.
 */
static void
test_emulate_waits(void)
{
	Check		c;
	int64_t		t0,
				t1;

	check_init(&c);
	t0 = braid_emulate_now_ns();
	t1 = braid_emulate_wait_ns(200000);
	check_that(&c, t1 - t0 >= 200000, "wait_ns(200 us) took %ld ns", (long) (t1 - t0));
	check_that(&c, braid_emulate_now_ns() >= t1, "the clock goes forward");

	/* 3 lines at 400 ns = 1.2 us, rounded up to 2 us */
	t0 = braid_emulate_now_ns();
	braid_emulate_lines(3, 400);
	t1 = braid_emulate_now_ns();
	check_that(&c, t1 - t0 >= 2000, "3 lines at 400 ns took %ld ns, at least 2 us expected",
			   (long) (t1 - t0));

	/* 1000 lines at 100 ns = 100 us */
	t0 = braid_emulate_now_ns();
	braid_emulate_lines(1000, 100);
	t1 = braid_emulate_now_ns();
	check_that(&c, t1 - t0 >= 100000, "1000 lines at 100 ns took %ld ns", (long) (t1 - t0));

	/* nothing owed: returns at once (well under a millisecond) */
	t0 = braid_emulate_now_ns();
	for (int i = 0; i < 1000; i++)
	{
		braid_emulate_lines(0, 1000);
		braid_emulate_lines(1000, 0);
	}
	t1 = braid_emulate_now_ns();
	check_that(&c, t1 - t0 < 5000000, "2000 waits of nothing took %ld ns", (long) (t1 - t0));
	check_report(&c, "emulate: waits last what is owed, rounded up to a microsecond");
}

/* unit_emulate: the tests of src/emulate.c, in order. */
void
unit_emulate(void)
{
	test_emulate_lines_spanned();
	test_emulate_waits();
}
