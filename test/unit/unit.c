/*-------------------------------------------------------------------------
 *
 * unit.c
 *	  TAP reporting and shared helpers of the unit tests (see unit.h).
 *
 * test/unit/unit.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>

#include "unit.h"

/* ---------------------------------------------------------------------
 * TAP reporting
 * ---------------------------------------------------------------------
 */

int			unit_tests_run = 0;
int			unit_tests_failed = 0;

/* check_init: start a new group of assertions. */
void
check_init(Check *c)
{
	memset(c, 0, sizeof(*c));
}

/* check_that: record one assertion; on failure keep a formatted diagnostic. */
bool
check_that(Check *c, bool cond, const char *fmt,...)
{
	c->asserts++;
	if (cond)
		return true;
	if (c->failures < MAX_DIAG)
	{
		va_list		ap;

		va_start(ap, fmt);
		vsnprintf(c->diag[c->failures], sizeof(c->diag[0]), fmt, ap);
		va_end(ap);
	}
	c->failures++;
	return false;
}

/* check_report: print the TAP line (and diagnostics) of a group. */
void
check_report(const Check *c, const char *fmt,...)
{
	va_list		ap;
	bool		ok = c->failures == 0 && c->asserts > 0;

	unit_tests_run++;
	if (!ok)
		unit_tests_failed++;
	printf("%s %d - ", ok ? "ok" : "not ok", unit_tests_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (%ld assertions)\n", c->asserts);
	if (c->asserts == 0)
		printf("#   no assertions were made\n");
	for (long i = 0; i < c->failures && i < MAX_DIAG; i++)
		printf("#   %s\n", c->diag[i]);
	if (c->failures > MAX_DIAG)
		printf("#   ... and %ld more failures\n", c->failures - MAX_DIAG);
	fflush(stdout);
}

/* ---------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------
 */

/* The fixed seed: every run (and every module) draws the same values. */
#define RNG_SEED UINT64_C(0x9E3779B97F4A7C15)

/* xorshift64* state. */
static uint64_t rng_state = RNG_SEED;

/* rng_reset: back to the fixed seed (done before each module). */
void
rng_reset(void)
{
	rng_state = RNG_SEED;
}

/* rng_next: next 64-bit pseudo-random value (xorshift64*). */
uint64_t
rng_next(void)
{
	uint64_t	x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* rng_below: pseudo-random value in [0, n); n > 0. */
uint64_t
rng_below(uint64_t n)
{
	return rng_next() % n;
}

/* sign: -1, 0 or 1 for an int comparison result. */
int
sign(int v)
{
	return (v > 0) - (v < 0);
}

/* cmp_bytes: memcmp order with a length tie-break (byteacmp semantics). */
int
cmp_bytes(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int			c = memcmp(a, b, la < lb ? la : lb);

	if (c != 0)
		return sign(c);
	return (la > lb) - (la < lb);
}

/* hex: render bytes as hex into buf (truncated), for diagnostics. */
const char *
hex(const uint8_t *p, size_t len, char *buf, size_t bufsize)
{
	size_t		o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < len && o + 3 < bufsize; i++)
		o += (size_t) snprintf(buf + o, bufsize - o, "%02x", p[i]);
	if (o + 3 >= bufsize && bufsize > 4)
		memcpy(buf + bufsize - 4, "..", 3);
	return buf;
}

/* xmalloc: malloc that never returns NULL (size 0 allowed). */
void *
xmalloc(size_t size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

/*
 * rand_bytestr: random string over an alphabet stressing the escape
 * (0x00, 0x01, 0xFE, 0xFF); with_nul=false excludes 0x00.
 */
void
rand_bytestr(ByteStr *s, bool with_nul)
{
	static const uint8_t alpha_nul[] = {0x00, 0x00, 0x01, 0xFE, 0xFF, 0xFF, 'a', 'b'};
	static const uint8_t alpha_cstr[] = {0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF, 'a', 'b'};
	const uint8_t *alpha = with_nul ? alpha_nul : alpha_cstr;

	s->len = (size_t) rng_below(rng_below(4) == 0 ? MAX_STR / 2 + 1 : 7);
	for (size_t i = 0; i < s->len; i++)
		s->b[i] = rng_below(8) == 0 ? (uint8_t) (rng_below(255) + (with_nul ? 0 : 1))
			: alpha[rng_below(8)];
}
