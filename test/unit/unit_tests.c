/*-------------------------------------------------------------------------
 *
 * unit_tests.c
 *	  Self-contained unit tests of braidsort's pure C modules.
 *
 * Covers:
 *	  - keycodec.h: every encoder's memcmp order (with a length tie-break)
 *	    equals PostgreSQL's btree order for the type, byte encoders are
 *	    prefix-free, equal values encode identically (-0/+0, every NaN),
 *	    braid_invert_bytes reverses the order, and concatenated multi-column
 *	    keys (with null markers and descending columns) order lexicographically.
 *	  - indexmap.c: braid_indexmap_sort yields a permutation of its input that
 *	    is ordered by the key prefix, for many sizes, key lengths, strides and
 *	    key distributions, and uses the tie-break callback correctly.
 *	  - costmodel.c: the OnePass accept/decline decision and its reasons.
 *	  - profkernel.c: every device-profile op measures something on 1 and 2
 *	    threads, writes stay in their area, bad arguments are refused,
 *	    emulated delays slow the device down, and a cancel stops at once.
 *
 * No test framework: output is TAP ("ok N - ...", "not ok N - ...", plan
 * line at the end), then a summary line "unit: N passed, M failed".  The
 * exit status is 0 only if every test passed.  A fixed-seed xorshift64*
 * generator makes every run identical.
 *
 * test/unit/unit_tests.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel.h"
#include "indexmap.h"
#include "keycodec.h"
#include "pool.h"
#include "profkernel.h"

/* ---------------------------------------------------------------------
 * TAP reporting
 * ---------------------------------------------------------------------
 */

static int	tests_run = 0;
static int	tests_failed = 0;

/*
 * A group of related assertions reported as one TAP test.  Only the first
 * few failures are kept as diagnostics.
 */
#define MAX_DIAG 4
typedef struct Check
{
	long		asserts;
	long		failures;
	char		diag[MAX_DIAG][400];
} Check;

/* check_init: start a new group of assertions. */
static void
check_init(Check *c)
{
	memset(c, 0, sizeof(*c));
}

/* check_that: record one assertion; on failure keep a formatted diagnostic. */
static bool
check_that(Check *c, bool cond, const char *fmt, ...)
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
static void
check_report(const Check *c, const char *fmt, ...)
{
	va_list		ap;
	bool		ok = c->failures == 0 && c->asserts > 0;

	tests_run++;
	if (!ok)
		tests_failed++;
	printf("%s %d - ", ok ? "ok" : "not ok", tests_run);
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

/* xorshift64* state: fixed seed so every run is the same. */
static uint64_t rng_state = UINT64_C(0x9E3779B97F4A7C15);

/* rng_next: next 64-bit pseudo-random value (xorshift64*). */
static uint64_t
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
static uint64_t
rng_below(uint64_t n)
{
	return rng_next() % n;
}

/* sign: -1, 0 or 1 for an int comparison result. */
static int
sign(int v)
{
	return (v > 0) - (v < 0);
}

/* cmp_bytes: memcmp order with a length tie-break (byteacmp semantics). */
static int
cmp_bytes(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int			c = memcmp(a, b, la < lb ? la : lb);

	if (c != 0)
		return sign(c);
	return (la > lb) - (la < lb);
}

/* hex: render bytes as hex into buf (truncated), for diagnostics. */
static const char *
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

/* ---------------------------------------------------------------------
 * keycodec: generic pair checking
 * ---------------------------------------------------------------------
 */

/*
 * check_encoded_pair: given the natural order of two values and their
 * encodings, assert the encodings' order, equality on equal values,
 * prefix-freedom and inverted order.  what describes the pair.
 */
static void
check_encoded_pair(Check *c, const char *what, int natural,
				   const uint8_t *ea, size_t la, const uint8_t *eb, size_t lb)
{
	uint8_t		ia[1024],
				ib[1024];
	int			enc = cmp_bytes(ea, la, eb, lb);
	bool		ok;
	char		ha[96],
				hb[96];

	natural = sign(natural);
	ok = enc == natural;
	if (!check_that(c, ok, "%s: encoded order %d, natural order %d", what, enc, natural) &&
		c->failures <= MAX_DIAG)
		printf("#     enc a=%s b=%s\n", hex(ea, la, ha, sizeof(ha)),
			   hex(eb, lb, hb, sizeof(hb)));

	/* equal values must have byte-identical encodings */
	if (natural == 0)
		ok = la == lb && memcmp(ea, eb, la) == 0;
	else
	{
		/* prefix-freedom: neither encoding is a proper prefix of the other */
		size_t		m = la < lb ? la : lb;

		ok = la == lb || memcmp(ea, eb, m) != 0;
	}
	if (!check_that(c, ok, "%s: %s", what, natural == 0 ?
					"equal values encode differently" :
					"one encoding is a proper prefix of the other") &&
		c->failures <= MAX_DIAG)
		printf("#     enc a=%s b=%s\n", hex(ea, la, ha, sizeof(ha)),
			   hex(eb, lb, hb, sizeof(hb)));

	/* inverting both encodings reverses the order */
	if (la <= sizeof(ia) && lb <= sizeof(ib))
	{
		int			inv;

		memcpy(ia, ea, la);
		memcpy(ib, eb, lb);
		braid_invert_bytes(ia, la);
		braid_invert_bytes(ib, lb);
		inv = cmp_bytes(ia, la, ib, lb);
		check_that(c, inv == -natural, "%s: inverted order %d, expected %d",
				   what, inv, -natural);
	}
}

/* ---------------------------------------------------------------------
 * keycodec: integers
 * ---------------------------------------------------------------------
 */

/* rand_int64: random value mixing full-range, small and edge values. */
static int64_t
rand_int64(const int64_t *edges, size_t nedges)
{
	switch (rng_below(4))
	{
		case 0:
			return (int64_t) rng_next();
		case 1:
			return (int64_t) rng_below(21) - 10;
		case 2:
			return edges[rng_below(nedges)];
		default:
			return edges[rng_below(nedges)] + (int64_t) rng_below(3) - 1;
	}
}

/* test_int16: braid_enc_int16 order over edge pairs and random pairs. */
static void
test_int16(void)
{
	static const int16_t edges[] = {INT16_MIN, INT16_MIN + 1, -256, -255, -129,
		-128, -2, -1, 0, 1, 2, 127, 128, 255, 256, INT16_MAX - 1, INT16_MAX};
	const size_t ne = sizeof(edges) / sizeof(edges[0]);
	Check		c;
	char		what[64];

	check_init(&c);
	for (size_t i = 0; i < ne + 20000; i++)
	{
		int16_t		a,
					b;
		uint8_t		ea[2],
					eb[2];
		size_t		la,
					lb;

		if (i < ne * ne)
		{
			a = edges[i / ne];
			b = edges[i % ne];
		}
		else
		{
			a = (int16_t) (rng_below(2) ? (int16_t) rng_next() : edges[rng_below(ne)]);
			b = (int16_t) (rng_below(2) ? (int16_t) rng_next() : (int16_t) (a + (int) rng_below(3) - 1));
		}
		la = braid_enc_int16(a, ea);
		lb = braid_enc_int16(b, eb);
		check_that(&c, la == 2 && lb == 2, "int16 length %zu/%zu", la, lb);
		snprintf(what, sizeof(what), "int16 a=%d b=%d", a, b);
		check_encoded_pair(&c, what, (a > b) - (a < b), ea, la, eb, lb);
	}
	check_report(&c, "keycodec: int16 order matches natural order (edges + random)");
}

/* test_int32: braid_enc_int32 order over edge pairs and random pairs. */
static void
test_int32(void)
{
	static const int64_t edges[] = {INT32_MIN, (int64_t) INT32_MIN + 1, -65536,
		-256, -255, -1, 0, 1, 255, 256, 65535, 65536, (int64_t) INT32_MAX - 1,
	INT32_MAX};
	const size_t ne = sizeof(edges) / sizeof(edges[0]);
	Check		c;
	char		what[80];

	check_init(&c);
	for (size_t i = 0; i < ne * ne + 30000; i++)
	{
		int32_t		a,
					b;
		uint8_t		ea[4],
					eb[4];
		size_t		la,
					lb;

		if (i < ne * ne)
		{
			a = (int32_t) edges[i / ne];
			b = (int32_t) edges[i % ne];
		}
		else
		{
			a = (int32_t) (uint32_t) (uint64_t) rand_int64(edges, ne);
			b = (int32_t) (uint32_t) (uint64_t) rand_int64(edges, ne);
		}
		la = braid_enc_int32(a, ea);
		lb = braid_enc_int32(b, eb);
		check_that(&c, la == 4 && lb == 4, "int32 length %zu/%zu", la, lb);
		snprintf(what, sizeof(what), "int32 a=%" PRId32 " b=%" PRId32, a, b);
		check_encoded_pair(&c, what, (a > b) - (a < b), ea, la, eb, lb);
	}
	check_report(&c, "keycodec: int32 order matches natural order (edges + random)");
}

/* test_int64: braid_enc_int64 order over edge pairs and random pairs. */
static void
test_int64(void)
{
	static const int64_t edges[] = {INT64_MIN, INT64_MIN + 1,
		(int64_t) INT32_MIN - 1, INT32_MIN, -4294967296LL, -1, 0, 1,
		4294967295LL, 4294967296LL, INT32_MAX, (int64_t) INT32_MAX + 1,
	INT64_MAX - 1, INT64_MAX};
	const size_t ne = sizeof(edges) / sizeof(edges[0]);
	Check		c;
	char		what[96];

	check_init(&c);
	for (size_t i = 0; i < ne * ne + 30000; i++)
	{
		int64_t		a,
					b;
		uint8_t		ea[8],
					eb[8];
		size_t		la,
					lb;

		if (i < ne * ne)
		{
			a = edges[i / ne];
			b = edges[i % ne];
		}
		else
		{
			a = rand_int64(edges, ne);
			b = rand_int64(edges, ne);
		}
		la = braid_enc_int64(a, ea);
		lb = braid_enc_int64(b, eb);
		check_that(&c, la == 8 && lb == 8, "int64 length %zu/%zu", la, lb);
		snprintf(what, sizeof(what), "int64 a=%" PRId64 " b=%" PRId64, a, b);
		check_encoded_pair(&c, what, (a > b) - (a < b), ea, la, eb, lb);
	}
	check_report(&c, "keycodec: int64 order matches natural order (edges + random)");
}

/* test_uint32: braid_enc_uint32 (oid) order over edge and random pairs. */
static void
test_uint32(void)
{
	static const uint32_t edges[] = {0, 1, 2, 255, 256, 65535, 65536,
		0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu};
	const size_t ne = sizeof(edges) / sizeof(edges[0]);
	Check		c;
	char		what[80];

	check_init(&c);
	for (size_t i = 0; i < ne * ne + 20000; i++)
	{
		uint32_t	a,
					b;
		uint8_t		ea[4],
					eb[4];
		size_t		la,
					lb;

		if (i < ne * ne)
		{
			a = edges[i / ne];
			b = edges[i % ne];
		}
		else
		{
			a = rng_below(2) ? (uint32_t) rng_next() : edges[rng_below(ne)];
			b = rng_below(2) ? (uint32_t) rng_next() : a + (uint32_t) rng_below(3) - 1u;
		}
		la = braid_enc_uint32(a, ea);
		lb = braid_enc_uint32(b, eb);
		check_that(&c, la == 4 && lb == 4, "uint32 length %zu/%zu", la, lb);
		snprintf(what, sizeof(what), "uint32 a=%" PRIu32 " b=%" PRIu32, a, b);
		check_encoded_pair(&c, what, (a > b) - (a < b), ea, la, eb, lb);
	}
	check_report(&c, "keycodec: uint32 (oid) order matches natural order");
}

/* ---------------------------------------------------------------------
 * keycodec: floats
 * ---------------------------------------------------------------------
 */

/* pg_float8_cmp: float8_cmp_internal (NaN last, all NaNs equal). */
static int
pg_float8_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

/* pg_float4_cmp: float4_cmp_internal (NaN last, all NaNs equal). */
static int
pg_float4_cmp(float a, float b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

/* dbl_from_bits: reinterpret a bit pattern as a double. */
static double
dbl_from_bits(uint64_t bits)
{
	double		d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* flt_from_bits: reinterpret a bit pattern as a float. */
static float
flt_from_bits(uint32_t bits)
{
	float		f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* Interesting float8 bit patterns: infinities, zeros, denormals, NaNs. */
static const uint64_t f8_edge_bits[] = {
	UINT64_C(0xFFF0000000000000),	/* -Inf */
	UINT64_C(0xFFEFFFFFFFFFFFFF),	/* -DBL_MAX */
	UINT64_C(0xBFF0000000000001),	/* just below -1 */
	UINT64_C(0xBFF0000000000000),	/* -1 */
	UINT64_C(0xBFEFFFFFFFFFFFFF),	/* just above -1 */
	UINT64_C(0x8010000000000000),	/* -DBL_MIN */
	UINT64_C(0x800FFFFFFFFFFFFF),	/* largest negative denormal magnitude */
	UINT64_C(0x8000000000000001),	/* -smallest denormal */
	UINT64_C(0x8000000000000000),	/* -0 */
	UINT64_C(0x0000000000000000),	/* +0 */
	UINT64_C(0x0000000000000001),	/* smallest denormal */
	UINT64_C(0x000FFFFFFFFFFFFF),	/* largest denormal */
	UINT64_C(0x0010000000000000),	/* DBL_MIN */
	UINT64_C(0x3FEFFFFFFFFFFFFF),	/* just below 1 */
	UINT64_C(0x3FF0000000000000),	/* 1 */
	UINT64_C(0x3FF0000000000001),	/* just above 1 */
	UINT64_C(0x7FEFFFFFFFFFFFFF),	/* DBL_MAX */
	UINT64_C(0x7FF0000000000000),	/* +Inf */
	UINT64_C(0x7FF8000000000000),	/* canonical quiet NaN */
	UINT64_C(0x7FF8000000000001),	/* quiet NaN with payload */
	UINT64_C(0x7FF0000000000001),	/* signalling NaN */
	UINT64_C(0x7FFFFFFFFFFFFFFF),	/* NaN, all payload bits */
	UINT64_C(0xFFF8000000000000),	/* negative quiet NaN */
	UINT64_C(0xFFF0000000000001),	/* negative signalling NaN */
	UINT64_C(0xFFFFFFFFFFFFFFFF),	/* negative NaN, all payload bits */
};

/* Interesting float4 bit patterns, as above. */
static const uint32_t f4_edge_bits[] = {
	0xFF800000u,				/* -Inf */
	0xFF7FFFFFu,				/* -FLT_MAX */
	0xBF800001u, 0xBF800000u, 0xBF7FFFFFu,	/* around -1 */
	0x80800000u,				/* -FLT_MIN */
	0x807FFFFFu, 0x80000001u,	/* negative denormals */
	0x80000000u,				/* -0 */
	0x00000000u,				/* +0 */
	0x00000001u, 0x007FFFFFu,	/* denormals */
	0x00800000u,				/* FLT_MIN */
	0x3F7FFFFFu, 0x3F800000u, 0x3F800001u,	/* around 1 */
	0x7F7FFFFFu,				/* FLT_MAX */
	0x7F800000u,				/* +Inf */
	0x7FC00000u, 0x7FC00001u, 0x7F800001u, 0x7FFFFFFFu,	/* NaNs */
	0xFFC00000u, 0xFF800001u, 0xFFFFFFFFu,	/* negative NaNs */
};

/* rand_f8_bits: random double bits: edges, raw patterns, ordinary values. */
static uint64_t
rand_f8_bits(void)
{
	const size_t ne = sizeof(f8_edge_bits) / sizeof(f8_edge_bits[0]);
	double		d;
	uint64_t	bits;

	switch (rng_below(4))
	{
		case 0:
			return f8_edge_bits[rng_below(ne)];
		case 1:
			return rng_next();	/* any pattern: denormals, NaN payloads */
		case 2:
			d = (double) ((int64_t) rng_below(41) - 20) / 4.0;	/* ties */
			memcpy(&bits, &d, sizeof(bits));
			return bits;
		default:
			/* neighbour of an edge value: +-1 ulp in bit space */
			return f8_edge_bits[rng_below(ne)] + rng_below(3) - 1;
	}
}

/* rand_f4_bits: random float bits, as rand_f8_bits. */
static uint32_t
rand_f4_bits(void)
{
	const size_t ne = sizeof(f4_edge_bits) / sizeof(f4_edge_bits[0]);
	float		f;
	uint32_t	bits;

	switch (rng_below(4))
	{
		case 0:
			return f4_edge_bits[rng_below(ne)];
		case 1:
			return (uint32_t) rng_next();
		case 2:
			f = (float) ((int64_t) rng_below(41) - 20) / 4.0f;
			memcpy(&bits, &f, sizeof(bits));
			return bits;
		default:
			return f4_edge_bits[rng_below(ne)] + (uint32_t) rng_below(3) - 1u;
	}
}

/* test_float8: braid_enc_float8 follows PostgreSQL's float8 ordering. */
static void
test_float8(void)
{
	const size_t ne = sizeof(f8_edge_bits) / sizeof(f8_edge_bits[0]);
	Check		c;
	char		what[128];

	check_init(&c);
	for (size_t i = 0; i < ne * ne + 40000; i++)
	{
		uint64_t	ba,
					bb;
		double		a,
					b;
		uint8_t		ea[8],
					eb[8];
		size_t		la,
					lb;

		if (i < ne * ne)
		{
			ba = f8_edge_bits[i / ne];
			bb = f8_edge_bits[i % ne];
		}
		else
		{
			ba = rand_f8_bits();
			bb = rand_f8_bits();
		}
		a = dbl_from_bits(ba);
		b = dbl_from_bits(bb);
		la = braid_enc_float8(a, ea);
		lb = braid_enc_float8(b, eb);
		check_that(&c, la == 8 && lb == 8, "float8 length %zu/%zu", la, lb);
		snprintf(what, sizeof(what), "float8 a=%g (0x%016" PRIx64 ") b=%g (0x%016" PRIx64 ")",
				 a, ba, b, bb);
		check_encoded_pair(&c, what, pg_float8_cmp(a, b), ea, la, eb, lb);
	}
	check_report(&c, "keycodec: float8 order is PostgreSQL's (-Inf<neg<0<pos<+Inf<NaN)");
}

/* test_float4: braid_enc_float4 follows PostgreSQL's float4 ordering. */
static void
test_float4(void)
{
	const size_t ne = sizeof(f4_edge_bits) / sizeof(f4_edge_bits[0]);
	Check		c;
	char		what[128];

	check_init(&c);
	for (size_t i = 0; i < ne * ne + 40000; i++)
	{
		uint32_t	ba,
					bb;
		float		a,
					b;
		uint8_t		ea[4],
					eb[4];
		size_t		la,
					lb;

		if (i < ne * ne)
		{
			ba = f4_edge_bits[i / ne];
			bb = f4_edge_bits[i % ne];
		}
		else
		{
			ba = rand_f4_bits();
			bb = rand_f4_bits();
		}
		a = flt_from_bits(ba);
		b = flt_from_bits(bb);
		la = braid_enc_float4(a, ea);
		lb = braid_enc_float4(b, eb);
		check_that(&c, la == 4 && lb == 4, "float4 length %zu/%zu", la, lb);
		snprintf(what, sizeof(what), "float4 a=%g (0x%08" PRIx32 ") b=%g (0x%08" PRIx32 ")",
				 (double) a, ba, (double) b, bb);
		check_encoded_pair(&c, what, pg_float4_cmp(a, b), ea, la, eb, lb);
	}
	check_report(&c, "keycodec: float4 order is PostgreSQL's (-Inf<neg<0<pos<+Inf<NaN)");
}

/* test_float_canonical: -0/+0 and every NaN encode byte-identically. */
static void
test_float_canonical(void)
{
	Check		c;
	uint8_t		e1[8],
				e2[8];
	char		h1[40],
				h2[40];

	check_init(&c);

	braid_enc_float8(-0.0, e1);
	braid_enc_float8(0.0, e2);
	check_that(&c, memcmp(e1, e2, 8) == 0, "float8 -0 %s != +0 %s",
			   hex(e1, 8, h1, sizeof(h1)), hex(e2, 8, h2, sizeof(h2)));
	braid_enc_float4(-0.0f, e1);
	braid_enc_float4(0.0f, e2);
	check_that(&c, memcmp(e1, e2, 4) == 0, "float4 -0 %s != +0 %s",
			   hex(e1, 4, h1, sizeof(h1)), hex(e2, 4, h2, sizeof(h2)));

	braid_enc_float8(NAN, e2);
	for (int i = 0; i < 5000; i++)
	{
		/* random NaN: exponent all ones, nonzero mantissa, any sign */
		uint64_t	bits = rng_next() | UINT64_C(0x7FF0000000000000);

		if ((bits & UINT64_C(0x000FFFFFFFFFFFFF)) == 0)
			bits |= 1;
		braid_enc_float8(dbl_from_bits(bits), e1);
		check_that(&c, memcmp(e1, e2, 8) == 0,
				   "float8 NaN 0x%016" PRIx64 " encodes %s, canonical NaN %s",
				   bits, hex(e1, 8, h1, sizeof(h1)), hex(e2, 8, h2, sizeof(h2)));
	}
	braid_enc_float4(NAN, e2);
	for (int i = 0; i < 5000; i++)
	{
		uint32_t	bits = (uint32_t) rng_next() | 0x7F800000u;

		if ((bits & 0x007FFFFFu) == 0)
			bits |= 1;
		braid_enc_float4(flt_from_bits(bits), e1);
		check_that(&c, memcmp(e1, e2, 4) == 0,
				   "float4 NaN 0x%08" PRIx32 " encodes %s, canonical NaN %s",
				   bits, hex(e1, 4, h1, sizeof(h1)), hex(e2, 4, h2, sizeof(h2)));
	}

	/* the landmarks in order, pairwise strictly increasing */
	{
		static const double f8[] = {-INFINITY, -DBL_MAX, -1.0, -DBL_MIN,
		-0x1p-1074, 0.0, 0x1p-1074, DBL_MIN, 1.0, DBL_MAX, INFINITY, NAN};
		static const float f4[] = {-INFINITY, -FLT_MAX, -1.0f, -FLT_MIN,
		-0x1p-149f, 0.0f, 0x1p-149f, FLT_MIN, 1.0f, FLT_MAX, INFINITY, NAN};

		for (size_t i = 0; i + 1 < sizeof(f8) / sizeof(f8[0]); i++)
		{
			braid_enc_float8(f8[i], e1);
			braid_enc_float8(f8[i + 1], e2);
			check_that(&c, memcmp(e1, e2, 8) < 0, "float8 %g !< %g", f8[i], f8[i + 1]);
			braid_enc_float4(f4[i], e1);
			braid_enc_float4(f4[i + 1], e2);
			check_that(&c, memcmp(e1, e2, 4) < 0, "float4 %g !< %g",
					   (double) f4[i], (double) f4[i + 1]);
		}
	}
	check_report(&c, "keycodec: -0/+0 and all NaNs (any sign/payload) encode identically");
}

/* ---------------------------------------------------------------------
 * keycodec: byte strings
 * ---------------------------------------------------------------------
 */

#define MAX_STR 24

/* A raw byte string of up to MAX_STR bytes. */
typedef struct ByteStr
{
	size_t		len;
	uint8_t		b[MAX_STR];
} ByteStr;

/*
 * rand_bytestr: random string over an alphabet stressing the escape
 * (0x00, 0x01, 0xFE, 0xFF); with_nul=false excludes 0x00.
 */
static void
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

/* derive_bytestr: b becomes a relative of a (prefix, extension, 1 edit). */
static void
derive_bytestr(const ByteStr *a, ByteStr *b, bool with_nul)
{
	*b = *a;
	switch (rng_below(4))
	{
		case 0:					/* proper prefix (or equal) */
			b->len = (size_t) rng_below(a->len + 1);
			break;
		case 1:					/* extension */
			while (b->len < MAX_STR && rng_below(3) != 0)
				b->b[b->len++] = with_nul ? (uint8_t) (rng_below(2) ? 0x00 : 0xFF)
					: (uint8_t) (rng_below(2) ? 0x01 : 0xFF);
			break;
		case 2:					/* one byte changed */
			if (b->len > 0)
				b->b[rng_below(b->len)] = with_nul ? (uint8_t) rng_below(256)
					: (uint8_t) (rng_below(255) + 1);
			break;
		default:				/* equal */
			break;
	}
}

/* str_of: build a ByteStr from a literal with explicit length. */
static ByteStr
str_of(const char *p, size_t len)
{
	ByteStr		s;

	s.len = len;
	memcpy(s.b, p, len);
	return s;
}

/* test_binary_bytes: braid_enc_binary_bytes is byteacmp-ordered, prefix-free. */
static void
test_binary_bytes(void)
{
	ByteStr		edges[] = {
		str_of("", 0), str_of("\0", 1), str_of("\0\0", 2), str_of("\0\0\0", 3),
		str_of("\0\x01", 2), str_of("\0\xFF", 2), str_of("\0\xFF\0", 3),
		str_of("\x01", 1), str_of("\xFF", 1), str_of("\xFF\0", 2),
		str_of("\xFF\xFF", 2), str_of("\xFF\0\0", 3), str_of("a", 1),
		str_of("a\0", 2), str_of("a\0\0", 3), str_of("a\0\xFF", 3),
		str_of("a\x01", 2), str_of("a\xFF", 2), str_of("ab", 2),
		str_of("ab\0", 3), str_of("abc", 3), str_of("b", 1),
	};
	const size_t ne = sizeof(edges) / sizeof(edges[0]);
	Check		c;
	char		what[200];

	check_init(&c);
	for (size_t i = 0; i < ne * ne + 60000; i++)
	{
		ByteStr		a,
					b;
		uint8_t		ea[2 * MAX_STR + 2],
					eb[2 * MAX_STR + 2];
		size_t		la,
					lb;
		char		ha[64],
					hb[64];

		if (i < ne * ne)
		{
			a = edges[i / ne];
			b = edges[i % ne];
		}
		else
		{
			rand_bytestr(&a, true);
			if (rng_below(2))
				derive_bytestr(&a, &b, true);
			else
				rand_bytestr(&b, true);
		}
		la = braid_enc_binary_bytes(a.b, a.len, ea);
		lb = braid_enc_binary_bytes(b.b, b.len, eb);
		check_that(&c, la <= 2 * a.len + 2 && lb <= 2 * b.len + 2,
				   "binary encoding longer than 2*len+2 (%zu for %zu, %zu for %zu)",
				   la, a.len, lb, b.len);
		snprintf(what, sizeof(what), "bytea a=%s b=%s",
				 hex(a.b, a.len, ha, sizeof(ha)), hex(b.b, b.len, hb, sizeof(hb)));
		check_encoded_pair(&c, what, cmp_bytes(a.b, a.len, b.b, b.len),
						   ea, la, eb, lb);
	}
	check_report(&c, "keycodec: binary bytes (embedded 0x00/0xFF, prefixes) order, prefix-free, invert");
}

/* test_cstring_bytes: braid_enc_cstring_bytes for NUL-free strings. */
static void
test_cstring_bytes(void)
{
	ByteStr		edges[] = {
		str_of("", 0), str_of("\x01", 1), str_of("\x01\x01", 2),
		str_of("\xFF", 1), str_of("\xFF\xFF", 2), str_of("\xFF\x01", 2),
		str_of("a", 1), str_of("a\x01", 2), str_of("a\xFF", 2), str_of("ab", 2),
		str_of("abc", 3), str_of("abd", 3), str_of("b", 1), str_of("ba", 2),
	};
	const size_t ne = sizeof(edges) / sizeof(edges[0]);
	Check		c;
	char		what[200];

	check_init(&c);
	for (size_t i = 0; i < ne * ne + 60000; i++)
	{
		ByteStr		a,
					b;
		uint8_t		ea[MAX_STR + 1],
					eb[MAX_STR + 1];
		size_t		la,
					lb;
		char		ha[64],
					hb[64];

		if (i < ne * ne)
		{
			a = edges[i / ne];
			b = edges[i % ne];
		}
		else
		{
			rand_bytestr(&a, false);
			if (rng_below(2))
				derive_bytestr(&a, &b, false);
			else
				rand_bytestr(&b, false);
		}
		la = braid_enc_cstring_bytes(a.b, a.len, ea);
		lb = braid_enc_cstring_bytes(b.b, b.len, eb);
		check_that(&c, la == a.len + 1 && lb == b.len + 1,
				   "cstring encoding length %zu for %zu, %zu for %zu",
				   la, a.len, lb, b.len);
		snprintf(what, sizeof(what), "cstring a=%s b=%s",
				 hex(a.b, a.len, ha, sizeof(ha)), hex(b.b, b.len, hb, sizeof(hb)));
		check_encoded_pair(&c, what, cmp_bytes(a.b, a.len, b.b, b.len),
						   ea, la, eb, lb);
	}
	check_report(&c, "keycodec: cstring bytes (NUL-free, prefixes) order, prefix-free, invert");
}

/* ---------------------------------------------------------------------
 * keycodec: multi-column keys
 * ---------------------------------------------------------------------
 */

/* One row of the multi-column test: (int32, bytea, float8), any NULL. */
typedef struct Row3
{
	bool		null[3];
	int32_t		i;
	ByteStr		s;
	double		f;
} Row3;

/* Per-column ordering options of the multi-column test. */
typedef struct ColOpts
{
	bool		descending;
	bool		nulls_first;
} ColOpts;

/* rand_row3: a row with small domains so earlier columns often tie. */
static void
rand_row3(Row3 *r, bool allow_nulls)
{
	static const double fvals[] = {-INFINITY, -1.5, -0.0, 0.0, 2.0, INFINITY, NAN};

	for (int k = 0; k < 3; k++)
		r->null[k] = allow_nulls && rng_below(6) == 0;
	r->i = rng_below(4) == 0 ? (int32_t) (uint32_t) rng_next()
		: (int32_t) rng_below(5) - 2;
	rand_bytestr(&r->s, true);
	if (rng_below(2))
		r->s.len = r->s.len < 2 ? r->s.len : 2;	/* more ties */
	r->f = rng_below(3) == 0 ? dbl_from_bits(rand_f8_bits())
		: fvals[rng_below(sizeof(fvals) / sizeof(fvals[0]))];
}

/* row3_cmp: natural lexicographic order of two rows under opts. */
static int
row3_cmp(const Row3 *a, const Row3 *b, const ColOpts *opts)
{
	for (int k = 0; k < 3; k++)
	{
		int			c;

		if (a->null[k] || b->null[k])
		{
			if (a->null[k] && b->null[k])
				continue;
			/* NULL sorts first iff nulls_first, regardless of direction */
			c = a->null[k] ? -1 : 1;
			if (!opts[k].nulls_first)
				c = -c;
			return c;
		}
		if (k == 0)
			c = (a->i > b->i) - (a->i < b->i);
		else if (k == 1)
			c = cmp_bytes(a->s.b, a->s.len, b->s.b, b->s.len);
		else
			c = pg_float8_cmp(a->f, b->f);
		if (opts[k].descending)
			c = -c;
		if (c != 0)
			return c;
	}
	return 0;
}

/*
 * row3_encode: concatenate the columns like keys.c does: a null marker
 * byte per column (never inverted), then the value's encoding, inverted
 * for a descending column.  Returns the key length.
 */
static size_t
row3_encode(const Row3 *r, const ColOpts *opts, bool markers, uint8_t *out)
{
	size_t		len = 0;

	for (int k = 0; k < 3; k++)
	{
		size_t		n;

		if (markers)
		{
			if (r->null[k])
			{
				out[len++] = opts[k].nulls_first ? BRAID_NULL_FIRST_MARK
					: BRAID_NULL_LAST_MARK;
				continue;
			}
			out[len++] = BRAID_NOT_NULL_MARK;
		}
		if (k == 0)
			n = braid_enc_int32(r->i, out + len);
		else if (k == 1)
			n = braid_enc_binary_bytes(r->s.b, r->s.len, out + len);
		else
			n = braid_enc_float8(r->f, out + len);
		if (opts[k].descending)
			braid_invert_bytes(out + len, n);
		len += n;
	}
	return len;
}

/* test_multicolumn: concatenated keys order lexicographically by column. */
static void
test_multicolumn(void)
{
	Check		c;

	/* plain ascending (int32, bytea, float8), no markers, no NULLs */
	check_init(&c);
	for (int i = 0; i < 40000; i++)
	{
		static const ColOpts asc[3] = {{false, false}, {false, false}, {false, false}};
		Row3		a,
					b;
		uint8_t		ea[128],
					eb[128];
		size_t		la,
					lb;
		int			nat,
					enc;
		char		ha[96],
					hb[96];

		rand_row3(&a, false);
		b = a;
		if (rng_below(3) == 0)
			rand_row3(&b, false);
		else
		{
			/* copy a and perturb one column so the others tie */
			Row3		t;

			rand_row3(&t, false);
			switch (rng_below(3))
			{
				case 0:
					b.i = t.i;
					break;
				case 1:
					b.s = t.s;
					break;
				default:
					b.f = t.f;
					break;
			}
		}
		la = row3_encode(&a, asc, false, ea);
		lb = row3_encode(&b, asc, false, eb);
		nat = row3_cmp(&a, &b, asc);
		enc = cmp_bytes(ea, la, eb, lb);
		check_that(&c, enc == nat,
				   "(int32,bytea,float8) encoded order %d, natural %d: a=%s b=%s",
				   enc, nat, hex(ea, la, ha, sizeof(ha)), hex(eb, lb, hb, sizeof(hb)));
	}
	check_report(&c, "keycodec: multi-column (int32, bytea, float8) concatenation is lexicographic");

	/* with null markers, mixed directions and NULLS FIRST/LAST */
	check_init(&c);
	for (int combo = 0; combo < 64; combo++)
	{
		ColOpts		opts[3];

		for (int k = 0; k < 3; k++)
		{
			opts[k].descending = (combo >> (2 * k)) & 1;
			opts[k].nulls_first = (combo >> (2 * k + 1)) & 1;
		}
		for (int i = 0; i < 1500; i++)
		{
			Row3		a,
						b;
			uint8_t		ea[128],
						eb[128];
			size_t		la,
						lb;
			int			nat,
						enc;
			char		ha[96],
						hb[96];

			rand_row3(&a, true);
			if (rng_below(2))
				rand_row3(&b, true);
			else
			{
				Row3		t;
				int			k = (int) rng_below(3);

				rand_row3(&t, true);
				b = a;
				b.null[k] = t.null[k];
				if (k == 0)
					b.i = t.i;
				else if (k == 1)
					b.s = t.s;
				else
					b.f = t.f;
			}
			la = row3_encode(&a, opts, true, ea);
			lb = row3_encode(&b, opts, true, eb);
			nat = row3_cmp(&a, &b, opts);
			enc = cmp_bytes(ea, la, eb, lb);
			check_that(&c, enc == nat,
					   "opts combo %d: encoded order %d, natural %d: a=%s b=%s",
					   combo, enc, nat, hex(ea, la, ha, sizeof(ha)),
					   hex(eb, lb, hb, sizeof(hb)));
		}
	}
	check_report(&c, "keycodec: multi-column keys with null markers, DESC and NULLS FIRST/LAST");
}

/* ---------------------------------------------------------------------
 * indexmap: sorting
 * ---------------------------------------------------------------------
 */

/* Entry stride for qsort_entries' comparator (qsort has no context arg). */
static size_t qsort_stride;

/* cmp_whole_entry: qsort comparator over all stride bytes of an entry. */
static int
cmp_whole_entry(const void *a, const void *b)
{
	return memcmp(a, b, qsort_stride);
}

/* same_multiset: are a and b (n entries each) permutations of each other? */
static bool
same_multiset(const uint8_t *a, const uint8_t *b, size_t n, size_t stride)
{
	uint8_t    *ca,
			   *cb;
	bool		same;

	if (n == 0)
		return true;
	ca = malloc(n * stride);
	cb = malloc(n * stride);
	if (ca == NULL || cb == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	memcpy(ca, a, n * stride);
	memcpy(cb, b, n * stride);
	qsort_stride = stride;
	qsort(ca, n, stride, cmp_whole_entry);
	qsort(cb, n, stride, cmp_whole_entry);
	same = memcmp(ca, cb, n * stride) == 0;
	free(ca);
	free(cb);
	return same;
}

/* xmalloc: malloc that never returns NULL (size 0 allowed). */
static void *
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

/* Key distributions for the sort tests. */
typedef enum KeyDist
{
	DIST_RANDOM,				/* uniform random bytes */
	DIST_FEW_KEYS,				/* 7 distinct keys, heavy duplicates */
	DIST_ALL_EQUAL,				/* every key identical */
	DIST_SMALL_ALPHABET,		/* bytes from {0x00, 0x01, 0xFF} */
	DIST_SKEWED,				/* 95% share all but the last byte */
	DIST_SHARED_HEAD,			/* all share the first half of the key */
	NUM_DISTS
} KeyDist;

static const char *const dist_names[NUM_DISTS] = {
	"random", "few-keys", "all-equal", "small-alphabet", "skewed", "shared-head"
};

/*
 * fill_entries: n entries of key prefix (per dist), ref = index, and random
 * padding bytes after the ref.
 */
static void
fill_entries(uint8_t *e, size_t n, uint32_t keylen, uint32_t stride, KeyDist dist)
{
	uint8_t		common[BRAID_MAX_STRIDE];
	uint8_t		few[7][BRAID_MAX_STRIDE];

	for (uint32_t j = 0; j < keylen; j++)
		common[j] = (uint8_t) rng_next();
	for (int k = 0; k < 7; k++)
		for (uint32_t j = 0; j < keylen; j++)
			few[k][j] = (k == 0) ? 0x00 : (k == 1) ? 0xFF : (uint8_t) rng_next();

	for (size_t i = 0; i < n; i++)
	{
		uint8_t    *p = e + i * stride;

		switch (dist)
		{
			case DIST_RANDOM:
				for (uint32_t j = 0; j < keylen; j++)
					p[j] = (uint8_t) rng_next();
				break;
			case DIST_FEW_KEYS:
				memcpy(p, few[rng_below(7)], keylen);
				break;
			case DIST_ALL_EQUAL:
				memcpy(p, common, keylen);
				break;
			case DIST_SMALL_ALPHABET:
				for (uint32_t j = 0; j < keylen; j++)
				{
					static const uint8_t alpha[3] = {0x00, 0x01, 0xFF};

					p[j] = alpha[rng_below(3)];
				}
				break;
			case DIST_SKEWED:
				if (rng_below(20) != 0)
				{
					memcpy(p, common, keylen);
					p[keylen - 1] = (uint8_t) rng_below(4);
				}
				else
					for (uint32_t j = 0; j < keylen; j++)
						p[j] = (uint8_t) rng_next();
				break;
			case DIST_SHARED_HEAD:
				memcpy(p, common, keylen / 2);
				for (uint32_t j = keylen / 2; j < keylen; j++)
					p[j] = (uint8_t) rng_below(j + 1 == keylen ? 256 : 3);
				break;
			default:
				break;
		}
		braid_entry_set_ref(p, keylen, (uint64_t) i);
		for (uint32_t j = keylen + BRAID_REF_BYTES; j < stride; j++)
			p[j] = (uint8_t) rng_next();
	}
}

/* test_sort_prefix: sort without tie-break over sizes/keylens/strides/dists. */
static void
test_sort_prefix(void)
{
	static const size_t sizes[] = {0, 1, 2, 23, 24, 25, 1000, 100000};
	static const uint32_t keylens[] = {1, 4, 13, 16};

	for (size_t kl = 0; kl < sizeof(keylens) / sizeof(keylens[0]); kl++)
	{
		for (int padded = 0; padded <= 1; padded++)
		{
			uint32_t	keylen = keylens[kl];
			uint32_t	stride = keylen + BRAID_REF_BYTES + (padded ? 3 + 8 * kl : 0);
			BraidSortSpec spec = {keylen, stride, NULL, NULL, NULL, NULL};
			Check		c;

			check_init(&c);
			for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
			{
				for (int d = 0; d < NUM_DISTS; d++)
				{
					size_t		n = sizes[si];
					uint8_t    *in = xmalloc(n * stride);
					uint8_t    *out = xmalloc(n * stride);
					size_t		bad = 0;

					/* the big size only with a stride-exact layout, to save time */
					if (n >= 100000 && padded && d != DIST_RANDOM && d != DIST_SKEWED)
					{
						free(in);
						free(out);
						continue;
					}
					fill_entries(in, n, keylen, stride, (KeyDist) d);
					memcpy(out, in, n * stride);
					braid_indexmap_sort(out, n, &spec);

					for (size_t i = 1; i < n; i++)
						if (memcmp(out + (i - 1) * stride, out + i * stride, keylen) > 0)
						{
							bad = i;
							break;
						}
					check_that(&c, bad == 0,
							   "n=%zu dist=%s: entries %zu and %zu out of prefix order",
							   n, dist_names[d], bad - 1, bad);
					check_that(&c, same_multiset(in, out, n, stride),
							   "n=%zu dist=%s: output is not a permutation of the input",
							   n, dist_names[d]);
					free(in);
					free(out);
				}
			}
			check_report(&c, "indexmap: sort keylen=%u stride=%u: ordered permutation, sizes 0..100000, %d distributions",
						 keylen, stride, (int) NUM_DISTS);
		}
	}
}

/* Side table of full keys for the tie-break tests. */
typedef struct FullKeys
{
	uint8_t   **key;
	size_t	   *len;
	uint32_t	keylen;			/* prefix length of the spec */
	long		calls;			/* tie-break invocations */
	long		unequal_prefix_calls;	/* calls whose prefixes differ */
} FullKeys;

/* full_key_cmp: memcmp-then-length of two full keys by side-table index. */
static int
full_key_cmp(const FullKeys *fk, uint64_t ia, uint64_t ib)
{
	return cmp_bytes(fk->key[ia], fk->len[ia], fk->key[ib], fk->len[ib]);
}

/* tiebreak_full: BraidTieBreak comparing full keys via each entry's ref. */
static int
tiebreak_full(const uint8_t *a, const uint8_t *b, void *arg)
{
	FullKeys   *fk = (FullKeys *) arg;

	fk->calls++;
	if (memcmp(a, b, fk->keylen) != 0)
		fk->unequal_prefix_calls++;
	return full_key_cmp(fk, braid_entry_ref(a, fk->keylen),
						braid_entry_ref(b, fk->keylen));
}

/* FullKeys used by the qsort reference comparator. */
static const FullKeys *ref_keys;

/* cmp_ref_index: qsort comparator of side-table indexes by full key. */
static int
cmp_ref_index(const void *a, const void *b)
{
	return full_key_cmp(ref_keys, *(const uint64_t *) a, *(const uint64_t *) b);
}

/* Full-key distributions for the tie-break tests. */
typedef enum TieDist
{
	TIE_RANDOM,					/* short random strings, many duplicates */
	TIE_RANDOM_UNIQUE,			/* random strings made unique by a suffix */
	TIE_LONG_HEAD,				/* all share a head longer than the prefix */
	TIE_FEW_VALUES,				/* a handful of long values, duplicated */
	NUM_TIE_DISTS
} TieDist;

static const char *const tie_dist_names[NUM_TIE_DISTS] = {
	"random", "random-unique", "long-head", "few-values"
};

/*
 * make_full_key: a binary-encoded (prefix-free) key, as keys.c builds them,
 * so its zero-padded truncation is a valid IndexMap prefix.  i is the
 * entry's index, used to make keys unique where the distribution says so.
 */
static size_t
make_full_key(uint8_t *out, TieDist dist, const ByteStr *few, size_t i)
{
	ByteStr		s;

	/* odd multiplier: a bijection on 24 bits, so ids are unique, unsorted */
	i = (i * 0x9E3779u + 0x5A5A5Au) & 0xFFFFFFu;

	switch (dist)
	{
		case TIE_RANDOM:
			rand_bytestr(&s, true);
			break;
		case TIE_RANDOM_UNIQUE:
			rand_bytestr(&s, true);
			if (s.len > MAX_STR - 3)
				s.len = MAX_STR - 3;
			s.b[s.len++] = (uint8_t) (i >> 16);
			s.b[s.len++] = (uint8_t) (i >> 8);
			s.b[s.len++] = (uint8_t) i;
			break;
		case TIE_LONG_HEAD:
			/* 20 equal bytes, then a 3-byte unique tail and 0-1 more bytes */
			memset(s.b, 'h', 20);
			s.b[20] = (uint8_t) (i >> 16);
			s.b[21] = (uint8_t) (i >> 8);
			s.b[22] = (uint8_t) i;
			s.len = 23 + (size_t) rng_below(2);
			s.b[23] = (uint8_t) (rng_below(2) ? 0x00 : 0xFF);
			break;
		default:
			s = few[rng_below(5)];
			break;
	}
	return braid_enc_binary_bytes(s.b, s.len, out);
}

/*
 * run_tiebreak_case: sort n entries whose prefix is the first keylen bytes
 * (zero-padded) of a full key in a side table, with the tie-break; compare
 * against a qsort reference on the full keys.
 */
static void
run_tiebreak_case(Check *c, size_t n, uint32_t keylen, uint32_t stride, TieDist dist)
{
	FullKeys	fk;
	BraidSortSpec spec;
	uint8_t    *in = xmalloc(n * stride);
	uint8_t    *out = xmalloc(n * stride);
	uint64_t   *ref = xmalloc(n * sizeof(uint64_t));
	uint8_t    *keybuf = xmalloc(n * (2 * MAX_STR + 2));
	ByteStr		few[5];
	size_t		bad = 0;

	for (int k = 0; k < 5; k++)
	{
		few[k].len = 22;
		memset(few[k].b, 'v', 22);
		few[k].b[21] = (uint8_t) ('0' + k);
		few[k].b[k] = 0x00;
	}

	fk.key = xmalloc(n * sizeof(uint8_t *));
	fk.len = xmalloc(n * sizeof(size_t));
	fk.keylen = keylen;
	fk.calls = 0;
	fk.unequal_prefix_calls = 0;

	for (size_t i = 0; i < n; i++)
	{
		uint8_t    *p = in + i * stride;
		size_t		m;

		fk.key[i] = keybuf + i * (2 * MAX_STR + 2);
		fk.len[i] = make_full_key(fk.key[i], dist, few, i);
		m = fk.len[i] < keylen ? fk.len[i] : keylen;
		memset(p, 0, keylen);
		memcpy(p, fk.key[i], m);
		braid_entry_set_ref(p, keylen, (uint64_t) i);
		for (uint32_t j = keylen + BRAID_REF_BYTES; j < stride; j++)
			p[j] = (uint8_t) rng_next();
		ref[i] = i;
	}
	memcpy(out, in, n * stride);

	memset(&spec, 0, sizeof(spec));
	spec.keylen = keylen;
	spec.stride = stride;
	spec.tiebreak = tiebreak_full;
	spec.tiebreak_arg = &fk;
	braid_indexmap_sort(out, n, &spec);

	ref_keys = &fk;
	if (n > 0)
		qsort(ref, n, sizeof(uint64_t), cmp_ref_index);

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	r = braid_entry_ref(out + i * stride, keylen);

		if (r >= n || full_key_cmp(&fk, r, ref[i]) != 0)
		{
			bad = i + 1;
			break;
		}
	}
	check_that(c, bad == 0,
			   "n=%zu keylen=%u dist=%s: position %zu differs from the qsort reference",
			   n, keylen, tie_dist_names[dist], bad - 1);
	check_that(c, same_multiset(in, out, n, stride),
			   "n=%zu keylen=%u dist=%s: output is not a permutation of the input",
			   n, keylen, tie_dist_names[dist]);
	check_that(c, fk.unequal_prefix_calls == 0,
			   "n=%zu keylen=%u dist=%s: tie-break called %ld times on unequal prefixes",
			   n, keylen, tie_dist_names[dist], fk.unequal_prefix_calls);

	free(in);
	free(out);
	free(ref);
	free(keybuf);
	free(fk.key);
	free(fk.len);
}

/* test_sort_tiebreak: final order by full keys through the tie-break. */
static void
test_sort_tiebreak(void)
{
	static const size_t sizes[] = {0, 1, 2, 23, 24, 25, 1000, 100000};
	static const uint32_t keylens[] = {1, 4, 13, 16};

	for (int d = 0; d < NUM_TIE_DISTS; d++)
	{
		Check		c;

		check_init(&c);
		for (size_t kl = 0; kl < sizeof(keylens) / sizeof(keylens[0]); kl++)
		{
			for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
			{
				uint32_t	keylen = keylens[kl];
				size_t		n = sizes[si];

				/*
				 * At 100000 only the (nearly) duplicate-free distributions:
				 * duplicated full keys are test_tiebreak_duplicates' job.
				 */
				if (n >= 100000 && (d == TIE_RANDOM || d == TIE_FEW_VALUES))
					continue;
				run_tiebreak_case(&c, n, keylen, keylen + BRAID_REF_BYTES, (TieDist) d);
				run_tiebreak_case(&c, n < 1000 ? n : 1000, keylen,
								  keylen + BRAID_REF_BYTES + 5, (TieDist) d);
			}
		}
		check_report(&c, "indexmap: tie-break sort matches qsort on full keys (%s keys, keylen 1/4/13/16)",
					 tie_dist_names[d]);
	}
}

/*
 * test_tiebreak_duplicates: many entries whose full keys are equal (a long
 * text value repeated, as in ORDER BY on a low-cardinality long column).
 * The sort must stay O(n log n) in tie-break calls; a quicksort that does
 * not split off keys equal to the pivot degrades to O(n^2) here.
 */
static void
test_tiebreak_duplicates(void)
{
	const size_t n = 4096;
	const uint32_t keylen = 8;
	const uint32_t stride = keylen + BRAID_REF_BYTES;
	uint8_t    *e = xmalloc(n * stride);
	uint8_t    *keybuf = xmalloc(n * 32);
	FullKeys	fk;
	BraidSortSpec spec = {keylen, stride, tiebreak_full, &fk, NULL, NULL};
	Check		c;
	long		limit = (long) (8 * n * 12);	/* 8 n log2(n) */

	fk.key = xmalloc(n * sizeof(uint8_t *));
	fk.len = xmalloc(n * sizeof(size_t));
	fk.keylen = keylen;
	fk.calls = 0;
	fk.unequal_prefix_calls = 0;
	for (size_t i = 0; i < n; i++)
	{
		fk.key[i] = keybuf + i * 32;
		memset(fk.key[i], 'x', 30);
		fk.key[i][30] = 0;
		fk.key[i][31] = 0;
		fk.len[i] = 32;
		memcpy(e + i * stride, fk.key[i], keylen);
		braid_entry_set_ref(e + i * stride, keylen, (uint64_t) i);
	}
	check_init(&c);
	braid_indexmap_sort(e, n, &spec);
	check_that(&c, fk.calls <= limit,
			   "n=%zu equal full keys: %ld tie-break calls, expected at most %ld (O(n log n))",
			   n, fk.calls, limit);
	check_report(&c, "indexmap: tie-break sort of %zu equal full keys makes O(n log n) calls", n);

	free(e);
	free(keybuf);
	free(fk.key);
	free(fk.len);
}

/* test_entry_compare: braid_entry_compare is prefix, then tie-break. */
static void
test_entry_compare(void)
{
	uint8_t		a[32],
				b[32];
	uint8_t		k0[] = {1, 2, 3, 9},
				k1[] = {1, 2, 3, 4, 5};
	uint8_t    *keys[2] = {k0, k1};
	size_t		lens[2] = {4, 5};
	FullKeys	fk = {keys, lens, 3, 0, 0};
	BraidSortSpec with = {3, 16, tiebreak_full, &fk, NULL, NULL};
	BraidSortSpec without = {3, 16, NULL, NULL, NULL, NULL};
	Check		c;

	check_init(&c);
	memcpy(a, k0, 3);
	memcpy(b, k1, 3);
	braid_entry_set_ref(a, 3, 0);
	braid_entry_set_ref(b, 3, 1);
	check_that(&c, braid_entry_ref(a, 3) == 0 && braid_entry_ref(b, 3) == 1,
			   "ref round trip failed");
	check_that(&c, braid_entry_compare(a, b, &without) == 0,
			   "equal prefixes without tie-break should compare equal");
	check_that(&c, braid_entry_compare(a, b, &with) > 0,
			   "tie-break should order {1,2,3,9} after {1,2,3,4,5}");
	check_that(&c, braid_entry_compare(b, a, &with) < 0,
			   "tie-break should order {1,2,3,4,5} before {1,2,3,9}");
	b[2] = 4;
	fk.calls = 0;
	check_that(&c, braid_entry_compare(a, b, &with) < 0 && fk.calls == 0,
			   "unequal prefixes must decide without the tie-break");
	check_report(&c, "indexmap: braid_entry_compare uses prefix, then tie-break");
}

/* ---------------------------------------------------------------------
 * costmodel
 * ---------------------------------------------------------------------
 */

/* accepting_input: a case braidsort should take (PG spills, map fits). */
static BraidCostInput
accepting_input(void)
{
	BraidCostInput in;

	memset(&in, 0, sizeof(in));

	in.rows = 1e6;
	in.sort_width = 200;
	in.tuple_bytes = 220;
	in.heap_refetch = true;
	in.entry_bytes = 32;
	in.budget_bytes = 64.0 * 1024 * 1024;	/* 32 MB needed */
	in.sort_mem_bytes = 4.0 * 1024 * 1024;	/* PG needs ~248 MB */
	return in;
}

/* test_costmodel: accept/decline decisions, boundaries and reasons. */
static void
test_costmodel(void)
{
	Check		c;
	BraidCostInput in;
	const char *why;
	const char *why_rows = NULL,
			   *why_budget = NULL,
			   *why_fits = NULL;

	check_init(&c);

	/* baseline accepts */
	in = accepting_input();
	check_that(&c, braid_cost_indexmap_bytes(&in) == in.rows * in.entry_bytes,
			   "indexmap bytes %g, expected rows*entry_bytes %g",
			   braid_cost_indexmap_bytes(&in), in.rows * in.entry_bytes);
	check_that(&c, braid_cost_pg_sort_bytes(&in) >= in.rows * in.sort_width,
			   "pg sort bytes %g below rows*sort_width %g",
			   braid_cost_pg_sort_bytes(&in), in.rows * in.sort_width);
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why), "baseline should be accepted (why=%s)",
			   why ? why : "NULL");

	/* too few rows */
	in = accepting_input();
	in.rows = BRAID_MIN_ROWS - 1;
	in.sort_mem_bytes = 0;		/* PG would still spill */
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why), "rows=%g should decline", in.rows);
	check_that(&c, why != NULL && why[0] != '\0', "rows=%g: no reason given", in.rows);
	why_rows = why;
	in.rows = 0;
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why) && why != NULL,
			   "rows=0 should decline with a reason");
	in.rows = BRAID_MIN_ROWS;
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why),
			   "rows=BRAID_MIN_ROWS with spill and fitting map should accept (why=%s)",
			   why ? why : "NULL");

	/* IndexMap over budget: MergePass expected, still accepted when cheap */
	in = accepting_input();
	in.budget_bytes = in.rows * in.entry_bytes;
	check_that(&c, braid_cost_is_onepass(&in), "IndexMap exactly at budget is OnePass");
	in.budget_bytes = in.rows * in.entry_bytes - 1;
	check_that(&c, !braid_cost_is_onepass(&in), "IndexMap over budget is MergePass");
	check_that(&c, braid_cost_braid_ns(&in) > in.rows * 280.0,
			   "MergePass should cost more than OnePass per row");
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why),
			   "over-budget IndexMap of a cached table should be accepted (why=%s)",
			   why ? why : "NULL");

	/*
	 * over budget, uncached table, tiny budget: too many gather rereads
	 * (gathering by TID; a value log is the way out, see
	 * test_costmodel_sources)
	 */
	in.table_pages = in.rows * in.tuple_bytes / 8192.0;
	in.table_cached = false;
	in.budget_bytes = 1024.0 * 1024;
	in.only_from = BRAID_FROM_HEAP_TID;
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why),
			   "uncached table with %g gather passes should decline",
			   braid_cost_gather_passes(&in));
	check_that(&c, why != NULL && why[0] != '\0', "rereads: no reason given");
	why_budget = why;

	/* PostgreSQL's sort fits in sort_mem: decline, also at equality */
	in = accepting_input();
	in.only_from = BRAID_FROM_ANY;
	in.sort_mem_bytes = braid_cost_pg_sort_bytes(&in);
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why),
			   "PG sort bytes == sort_mem (%g) should decline", in.sort_mem_bytes);
	check_that(&c, why != NULL && why[0] != '\0', "PG sort fits: no reason given");
	why_fits = why;
	in.sort_mem_bytes = 1e15;
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why) && why != NULL,
			   "huge sort_mem should decline with a reason");
	in.sort_mem_bytes = braid_cost_pg_sort_bytes(&in) - 1;
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why),
			   "PG sort 1 byte over sort_mem with fitting map should accept (why=%s)",
			   why ? why : "NULL");

	/* tiny sort width still accounts per-tuple memory, so spill is judged */
	in = accepting_input();
	in.sort_width = 0;
	check_that(&c, braid_cost_pg_sort_bytes(&in) > 0,
			   "pg sort bytes with width 0 should be positive, got %g",
			   braid_cost_pg_sort_bytes(&in));

	/* the three reasons are distinguishable */
	check_that(&c, why_rows && why_budget && why_fits &&
			   strcmp(why_rows, why_budget) != 0 && strcmp(why_rows, why_fits) != 0 &&
			   strcmp(why_budget, why_fits) != 0,
			   "decline reasons should differ: '%s' / '%s' / '%s'",
			   why_rows ? why_rows : "NULL", why_budget ? why_budget : "NULL",
			   why_fits ? why_fits : "NULL");

	check_report(&c, "costmodel: declines on few rows, costly rereads, PG sort fitting; accepts on spill");

	/* random sweep against the specification */
	check_init(&c);
	for (int i = 0; i < 20000; i++)
	{
		bool		expect,
					got;

		in.rows = (double) rng_below(4) == 0 ? (double) rng_below(2000)
			: (double) rng_below(100000000);
		in.sort_width = (double) rng_below(500);
		in.tuple_bytes = in.sort_width + (double) rng_below(100);
		in.entry_bytes = (double) (16 + rng_below(64));
		in.budget_bytes = (double) rng_below(UINT64_C(1) << 34);
		in.sort_mem_bytes = (double) rng_below(UINT64_C(1) << 34);
		in.table_pages = (double) rng_below(4) == 0 ? 0 : (double) rng_below(1000000);
		in.table_cached = rng_below(2) == 0;
		expect = in.rows >= BRAID_MIN_ROWS &&
			braid_cost_pg_sort_bytes(&in) > in.sort_mem_bytes &&
			braid_cost_braid_ns(&in) <= braid_cost_pg_ns(&in) * BRAID_COST_MARGIN;
		why = NULL;
		got = braid_cost_prefers(&in, &why);
		check_that(&c, got == expect,
				   "rows=%g entry=%g budget=%g width=%g sort_mem=%g: got %d, expected %d",
				   in.rows, in.entry_bytes, in.budget_bytes, in.sort_width,
				   in.sort_mem_bytes, got, expect);
		if (!got)
			check_that(&c, why != NULL && why[0] != '\0',
					   "declined without a reason (rows=%g)", in.rows);
	}
	check_report(&c, "costmodel: random sweep agrees with rows/spill/time rule, reason on every decline");
}

/* enc_num: encode a numeric from sign, weight and digits into buf. */
static size_t
enc_num(int neg, int weight, const int16_t *d, int nd, uint8_t *buf)
{
	return braid_enc_numeric_finite(neg, weight, d, nd, buf);
}

/*
 * test_numeric
 *		Hand-picked numeric pairs: zero in any form, equal values with
 *		trailing zero digits, weight boundaries, negatives.
 */
static void
test_numeric(void)
{
	Check		c;
	uint8_t		a[64],
				b[64];
	size_t		la,
				lb;
	const int16_t one[] = {1};
	const int16_t one_zero[] = {1, 0, 0};
	const int16_t lead_zero_one[] = {0, 1};
	const int16_t n9999[] = {9999};
	const int16_t n10000[] = {1, 0};
	const int16_t half[] = {5000};
	const int16_t half_more[] = {5000, 1};
	const int16_t zeros[] = {0, 0};

	check_init(&c);
#define CMP_NUM(na, wa, da, nda, nb, wb, db, ndb, expect) \
	do { \
		la = enc_num(na, wa, da, nda, a); \
		lb = enc_num(nb, wb, db, ndb, b); \
		check_that(&c, sign(cmp_bytes(a, la, b, lb)) == (expect), \
				   "numeric case at line %d: got %d, expected %d", __LINE__, \
				   sign(cmp_bytes(a, la, b, lb)), (expect)); \
	} while (0)

	CMP_NUM(0, 0, zeros, 2, 1, 5, zeros, 0, 0);	/* 0 == -0 (no digits) */
	CMP_NUM(0, 0, one, 1, 0, 0, one_zero, 3, 0);	/* 1 == 1.00000000 */
	CMP_NUM(0, 1, lead_zero_one, 2, 0, 0, one, 1, 0);	/* leading zero digit */
	CMP_NUM(0, 0, n9999, 1, 0, 1, n10000, 2, -1);	/* 9999 < 10000 */
	CMP_NUM(1, 0, n9999, 1, 1, 1, n10000, 2, 1);	/* -9999 > -10000 */
	CMP_NUM(0, -1, half, 1, 0, -1, half_more, 2, -1);	/* 0.5 < 0.50000001 */
	CMP_NUM(1, -1, half, 1, 1, -1, half_more, 2, 1);	/* -0.5 > -0.50000001 */
	CMP_NUM(1, 0, one, 1, 0, 0, zeros, 0, -1);	/* -1 < 0 */
	CMP_NUM(0, -1, half, 1, 0, 0, zeros, 0, 1);	/* 0.5 > 0 */
	CMP_NUM(1, 3, one, 1, 1, -3, one, 1, -1);	/* -1e12 < -1e-12 */
#undef CMP_NUM
	check_report(&c, "keycodec: numeric magnitudes, signs, zeros, trailing zero digits");
}

/* count_interrupt_checks: interrupt hook that counts its calls. */
static void
count_interrupt_checks(void *arg)
{
	(*(int *) arg)++;
}

/*
 * test_sort_interrupt_hook
 *		A large sort calls the interrupt hook (so a backend can cancel it),
 *		a small one need not, and the result is sorted either way.
 */
static void
test_sort_interrupt_hook(void)
{
	Check		c;
	const size_t n = 300000;
	const uint32_t keylen = 8,
				stride = 16;
	uint8_t    *map = malloc(n * stride);
	BraidSortSpec spec;
	int			calls = 0;
	bool		sorted = true;

	check_init(&c);
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	r = rng_next();

		memcpy(map + i * stride, &r, 8);
		braid_entry_set_ref(map + i * stride, keylen, (uint64_t) i);
	}
	memset(&spec, 0, sizeof(spec));
	spec.keylen = keylen;
	spec.stride = stride;
	spec.interrupt_check = count_interrupt_checks;
	spec.interrupt_arg = &calls;
	braid_indexmap_sort(map, n, &spec);
	for (size_t i = 1; i < n; i++)
		if (memcmp(map + (i - 1) * stride, map + i * stride, keylen) > 0)
			sorted = false;
	check_that(&c, sorted, "sort with an interrupt hook is not ordered");
	check_that(&c, calls > 0, "interrupt hook never called for %zu entries", n);
	free(map);
	check_report(&c, "indexmap: large sorts call the interrupt hook");
}

/*
 * test_sort_parallel
 *		The threaded sort gives exactly the serial result (same top-level
 *		partition, same bucket sorts), with 1, 2 and 4 threads, keys with many
 *		duplicates and a skewed first byte.
 */
static void
test_sort_parallel(void)
{
	Check		c;
	const size_t n = 400000;
	const uint32_t keylen = 16,
				stride = 24;
	uint8_t    *orig = malloc(n * stride);
	uint8_t    *serial = malloc(n * stride);
	uint8_t    *par = malloc(n * stride);
	BraidSortSpec spec;
	int			calls = 0;

	check_init(&c);
	for (size_t i = 0; i < n; i++)
	{
		uint8_t    *e = orig + i * stride;
		uint64_t	r = rng_next();

		memset(e, 0, keylen);
		e[0] = (uint8_t) (r % 7 == 0 ? 200 : 1);	/* skewed */
		e[1] = (uint8_t) (r >> 8);
		e[2] = (uint8_t) (rng_below(4));	/* duplicates */
		memcpy(e + 3, &r, 8);
		braid_entry_set_ref(e, keylen, (uint64_t) i);
	}
	memset(&spec, 0, sizeof(spec));
	spec.keylen = keylen;
	spec.stride = stride;
	memcpy(serial, orig, n * stride);
	braid_indexmap_sort(serial, n, &spec);

	for (int threads = 1; threads <= 8; threads++)
	{
		memcpy(par, orig, n * stride);
		spec.interrupt_check = count_interrupt_checks;
		spec.interrupt_arg = &calls;
		braid_indexmap_sort_parallel(par, n, &spec, threads);
		spec.interrupt_check = NULL;
		check_that(&c, memcmp(par, serial, n * stride) == 0,
				   "%d-thread sort differs from the serial sort", threads);
	}
	check_that(&c, calls > 0, "parallel sort never called the interrupt hook");
	free(orig);
	free(serial);
	free(par);
	check_report(&c, "indexmap: threaded sort equals the serial sort (1 to 8 threads)");
}


/*
 * check_threads_match_serial
 *		Sort a copy of orig serially and copies with 2 to 8 threads, and
 *		check that every entry's bytes [off, off + len) come out in the same
 *		order ("what" names the input in failures).
 */
static void
check_threads_match_serial(Check *c, const uint8_t *orig, size_t n,
						   const BraidSortSpec *spec, size_t off, size_t len,
						   const char *what)
{
	size_t		stride = spec->stride;
	uint8_t    *serial = malloc(n * stride);
	uint8_t    *par = malloc(n * stride);

	memcpy(serial, orig, n * stride);
	braid_indexmap_sort(serial, n, spec);
	for (int threads = 2; threads <= 8; threads++)
	{
		bool		same = true;

		memcpy(par, orig, n * stride);
		braid_indexmap_sort_parallel(par, n, spec, threads);
		for (size_t i = 0; i < n && same; i++)
			same = memcmp(par + i * stride + off, serial + i * stride + off, len) == 0;
		check_that(c, same, "%s: %d-thread sort differs from the serial sort", what, threads);
	}
	free(serial);
	free(par);
}

/*
 * test_sort_parallel_uneven: inputs whose first-level bytes are spread
 * unevenly along the array (a block of one byte, then a mix; descending
 * blocks), so that the threads' speculative permutation leaves many
 * entries misplaced (and overflows its record of them): still the serial
 * result, for 2 to 8 threads.
 */
static void
test_sort_parallel_uneven(void)
{
	Check		c;
	const size_t n = 300000;
	const uint32_t keylen = 8,
				stride = 16;
	uint8_t    *orig = malloc(n * stride);
	BraidSortSpec spec;

	check_init(&c);
	memset(&spec, 0, sizeof(spec));
	spec.keylen = keylen;
	spec.stride = stride;
	for (int shape = 0; shape < 3; shape++)
	{
		for (size_t i = 0; i < n; i++)
		{
			uint8_t    *e = orig + i * stride;
			uint64_t	r = rng_next();

			memcpy(e, &r, keylen);
			if (shape == 0)
				e[0] = (i < n / 10) ? 2 : (uint8_t) rng_below(3);
			else if (shape == 1)
				e[0] = (uint8_t) (255 - i * 256 / n);	/* descending blocks */
			else
				e[0] = (i % 1000 < 990) ? 7 : (uint8_t) rng_below(256);
			braid_entry_set_ref(e, keylen, (uint64_t) i);
		}
		check_threads_match_serial(&c, orig, n, &spec, 0, stride,
								   shape == 0 ? "block then mix" :
								   shape == 1 ? "descending blocks" : "mostly one byte");
	}
	free(orig);
	check_report(&c, "indexmap: threaded sort of unevenly spread bytes equals the serial sort");
}

/* hidden_tiebreak: order entries by 8 bytes stored after their ref. */
static int
hidden_tiebreak(const uint8_t *a, const uint8_t *b, void *arg)
{
	uint64_t	x,
				y;

	(void) arg;
	memcpy(&x, a + 16, 8);
	memcpy(&y, b + 16, 8);
	return (x > y) - (x < y);
}

/*
 * test_sort_parallel_ties: every prefix equal (as with a single key under a
 * libc collation), the comparator orders everything: the threaded tie sort
 * gives the serial order, for 2 to 8 threads, with and without duplicates.
 */
static void
test_sort_parallel_ties(void)
{
	Check		c;
	const size_t n = 200000;
	const uint32_t keylen = 8,
				stride = 24;
	uint8_t    *orig = malloc(n * stride);
	BraidSortSpec spec;

	check_init(&c);
	memset(&spec, 0, sizeof(spec));
	spec.keylen = keylen;
	spec.stride = stride;
	spec.tiebreak = hidden_tiebreak;
	for (int dups = 0; dups < 2; dups++)
	{
		for (size_t i = 0; i < n; i++)
		{
			uint8_t    *e = orig + i * stride;
			uint64_t	h = dups ? rng_below(50) : rng_next();

			memset(e, 0, keylen);
			e[0] = 1;
			braid_entry_set_ref(e, keylen, (uint64_t) i);
			memcpy(e + 16, &h, 8);
		}
		/* equal hidden keys may come in any order: compare them only */
		check_threads_match_serial(&c, orig, n, &spec, 16, 8,
								   dups ? "duplicates" : "distinct");
	}
	free(orig);
	check_report(&c, "indexmap: threaded sort of all-equal prefixes by the tie-break alone");
}

/* One round of the pool test: each thread marks its slot. */
typedef struct PoolRound
{
	int			hits[64];
	long		sum;
} PoolRound;

/* pool_round_task: record that worker ran, add to a shared sum. */
static void
pool_round_task(void *arg, int worker)
{
	PoolRound  *r = (PoolRound *) arg;

	r->hits[worker]++;
	__atomic_fetch_add(&r->sum, worker + 1, __ATOMIC_RELAXED);
}

/*
 * test_pool_persistent: the kept threads run each task exactly once per
 * asked thread, whatever the sequence of thread counts (growing,
 * shrinking, one), many times over; a task asking for more threads than
 * the cap runs on the cap.
 */
static void
test_pool_persistent(void)
{
	Check		c;
	static const int counts[] = {2, 8, 1, 3, 8, 5, 2, 64, 4, 1, 7};

	check_init(&c);
	for (int iter = 0; iter < 3000; iter++)
	{
		int			want = counts[iter % (sizeof(counts) / sizeof(counts[0]))];
		PoolRound	r;
		int			ran;
		long		expect;
		bool		once = true;

		memset(&r, 0, sizeof(r));
		braid_pool_run(want, pool_round_task, &r);
		ran = want > 64 ? 64 : want;	/* every worker number runs, once */
		expect = (long) ran * (ran + 1) / 2;
		for (int w = 0; w < 64; w++)
			if (r.hits[w] != (w < ran ? 1 : 0))
				once = false;
		if (iter % 97 == 0)
		{
			int			conc;

			memset(&r, 0, sizeof(r));
			conc = braid_pool_run_concurrent(want, pool_round_task, &r);
			check_that(&c, conc >= 1 && conc <= ran && r.hits[conc - 1] == 1 &&
					   (conc == 64 || r.hits[conc] == 0),
					   "iteration %d: concurrent run of %d reported %d", iter, want, conc);
		}
		check_that(&c, once && r.sum == expect,
				   "iteration %d: %d threads: each must run once (sum %ld, want %ld)",
				   iter, ran, r.sum, expect);
	}
	check_report(&c, "pool: kept threads run every task once per thread, 3000 tasks of 1-64 threads");
}

/*
 * test_costmodel_collated: a key ordered by a collation's comparator costs
 * both sorts its comparisons; braidsort's are split among its threads, so
 * 1M names are worth taking on two threads and not on one.
 */
static void
test_costmodel_collated(void)
{
	Check		c;
	BraidCostInput in;
	const char *why = NULL;

	check_init(&c);
	memset(&in, 0, sizeof(in));
	in.rows = 1e6;
	in.sort_width = 40;
	in.tuple_bytes = 72;
	in.entry_bytes = 24;
	in.budget_bytes = 256.0 * 1024 * 1024;
	in.sort_mem_bytes = 16.0 * 1024 * 1024;
	in.table_pages = 9000;
	in.table_cached = true;
	in.heap_refetch = true;
	in.collated = true;
	in.sort_threads = 2;
	check_that(&c, braid_cost_prefers(&in, &why), "2 threads: should take it (%s)", why ? why : "");
	in.sort_threads = 1;
	check_that(&c, !braid_cost_prefers(&in, &why), "1 thread: should leave it to PostgreSQL");
	in.collated = false;
	check_that(&c, braid_cost_prefers(&in, &why), "not collated: should take it (%s)", why ? why : "");
	check_report(&c, "costmodel: collated keys pay their comparisons, braidsort's split among threads");
}

/*
 * test_costmodel_parallel
 *		Under a Gather each process sorts its share on its share of the CPUs:
 *		threads beyond that share speed nothing up, so the estimate of
 *		three processes on two CPUs is that of one thread, and a process
 *		alone on two CPUs gains from its second thread.
 */
static void
test_costmodel_parallel(void)
{
	Check		c;
	BraidCostInput in;
	double		one,
				two;

	check_init(&c);
	memset(&in, 0, sizeof(in));
	in.rows = 1e6;
	in.sort_width = 100;
	in.tuple_bytes = 128;
	in.heap_refetch = true;
	in.entry_bytes = 24;
	in.budget_bytes = 64.0 * 1024 * 1024;
	in.sort_mem_bytes = 4.0 * 1024 * 1024;
	in.table_pages = 16000;
	in.table_cached = true;

	in.cpus = 2;
	in.processes = 1;
	in.sort_threads = 2;
	check_that(&c, braid_cost_thread_speedup(&in) == 2.0,
			   "one process, two CPUs, two threads: speed-up %g, expected 2",
			   braid_cost_thread_speedup(&in));
	in.processes = 3;
	check_that(&c, braid_cost_thread_speedup(&in) == 1.0,
			   "three processes on two CPUs, two threads each: speed-up %g, expected 1",
			   braid_cost_thread_speedup(&in));
	in.sort_threads = 1;
	check_that(&c, braid_cost_thread_speedup(&in) == 1.0,
			   "three processes, one thread each: speed-up %g, expected 1",
			   braid_cost_thread_speedup(&in));
	in.cpus = 8;
	in.processes = 2;
	in.sort_threads = 4;
	check_that(&c, braid_cost_thread_speedup(&in) == 4.0,
			   "two processes on eight CPUs, four threads each: speed-up %g, expected 4",
			   braid_cost_thread_speedup(&in));

	/* a process's threads shorten its estimate only while they have CPUs */
	in.cpus = 2;
	in.processes = 1;
	in.sort_threads = 1;
	one = braid_cost_tid_ns(&in);
	in.sort_threads = 2;
	two = braid_cost_tid_ns(&in);
	check_that(&c, two < one, "a second thread on a second CPU should help (%g vs %g)", two, one);
	in.processes = 3;
	two = braid_cost_tid_ns(&in);
	in.sort_threads = 1;
	one = braid_cost_tid_ns(&in);
	check_that(&c, two == one,
			   "two threads in each of three processes on two CPUs cost as one (%g vs %g)",
			   two, one);
	in.sort_threads = 2;
	in.processes = 1;
	two = braid_cost_tid_ns(&in);
	/* unset fields mean one process on as many CPUs as threads */
	in.processes = 0;
	in.cpus = 0;
	check_that(&c, braid_cost_tid_ns(&in) == two, "defaults: %g vs %g", braid_cost_tid_ns(&in), two);
	check_report(&c, "costmodel: threads of parallel processes share the CPUs");
}

/*
 * test_costmodel_sources
 *		Where rows come back from: by TID when the gather's page visits are
 *		cheap (a cached table, or a sort order that follows the physical
 *		one), from a value log when a small budget would make the gather
 *		reread an uncached table over and over; the DBA's choice wins; and
 *		an input that is not a heap scan has only the value log.
 */
static void
test_costmodel_sources(void)
{
	Check		c;
	BraidCostInput in;
	BraidCostEstimate est;

	check_init(&c);
	memset(&in, 0, sizeof(in));
	in.rows = 1.25e6;
	in.sort_width = 124;
	in.tuple_bytes = 148;
	in.row_bytes = 144;
	in.heap_refetch = true;
	in.entry_bytes = 24;
	in.budget_bytes = 64.0 * 1024 * 1024;
	in.sort_mem_bytes = 64.0 * 1024 * 1024;
	in.table_pages = 18700;
	in.table_cached = false;
	in.processes = 3;
	in.cpus = 2;
	in.sort_threads = 1;

	/* the realistic orders table at 64MB: by TID, and worth it */
	braid_cost_estimate(&in, &est);
	check_that(&c, est.prefers && est.from == BRAID_FROM_HEAP_TID,
			   "64MB, uncached: expected braidsort by TID, got prefers=%d from=%d (%s)",
			   est.prefers, est.from, est.why ? est.why : "");
	check_that(&c, est.braid_ns == est.tid_ns && est.tid_ns < est.vlog_ns,
			   "the estimate is the cheaper source's");

	/* at 4MB the gather rereads the table dozens of times: not by TID */
	in.budget_bytes = in.sort_mem_bytes = 4.0 * 1024 * 1024;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.from == BRAID_FROM_VALUE_LOG && est.vlog_ns < est.tid_ns,
			   "4MB, uncached, random order: expected a value log (tid %g, vlog %g)",
			   est.tid_ns, est.vlog_ns);
	check_that(&c, !est.prefers && est.why != NULL, "4MB wide rows: expected a decline");

	/* ... unless the sort order follows the physical order */
	in.correlation = -1.0;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.prefers && est.from == BRAID_FROM_HEAP_TID,
			   "4MB, descending physical order: expected braidsort by TID (%s)",
			   est.why ? est.why : "");
	check_that(&c, braid_cost_page_visits(&in) <= braid_cost_gather_passes(&in) * in.table_pages / 2,
			   "ordered batches should visit few pages each (%g visits)",
			   braid_cost_page_visits(&in));
	in.correlation = 0.5;
	{
		double		half = braid_cost_page_visits(&in);

		in.correlation = 0;
		check_that(&c, half < braid_cost_page_visits(&in),
				   "partial correlation should visit fewer pages than none");
	}

	/* the DBA's choice of source is the estimate's */
	in.only_from = BRAID_FROM_HEAP_TID;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.from == BRAID_FROM_HEAP_TID && est.braid_ns == est.tid_ns,
			   "only_from heap_tid: got from=%d", est.from);
	in.only_from = BRAID_FROM_VALUE_LOG;
	in.budget_bytes = in.sort_mem_bytes = 64.0 * 1024 * 1024;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.from == BRAID_FROM_VALUE_LOG && est.braid_ns == est.vlog_ns,
			   "only_from value_log: got from=%d", est.from);
	in.only_from = BRAID_FROM_ANY;

	/* no heap scan: a value log whatever it costs */
	in.heap_refetch = false;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.from == BRAID_FROM_VALUE_LOG && est.tid_ns == HUGE_VAL,
			   "no heap scan: expected only a value log");

	/* a value log that fits half the budget never touches the device */
	in.rows = 100000;
	{
		double		mem = braid_cost_vlog_ns(&in);

		in.budget_bytes = 1024.0 * 1024;
		check_that(&c, braid_cost_vlog_ns(&in) > mem,
				   "a value log over half the budget should cost its device traffic");
	}

	/* with a value log the IndexMap has half of the budget (exec.c) */
	in.rows = 1e6;
	in.entry_bytes = 24;
	in.budget_bytes = 32e6;
	check_that(&c, braid_cost_spills(&in, BRAID_FROM_VALUE_LOG) &&
			   !braid_cost_spills(&in, BRAID_FROM_HEAP_TID),
			   "24 MB of entries in a 32 MB budget: a value log's IndexMap spills, a TID one not");

	/* the margin: an estimate just below PostgreSQL's is not enough */
	memset(&in, 0, sizeof(in));
	in.rows = 1e6;
	in.sort_width = 100;
	in.tuple_bytes = 128;
	in.heap_refetch = true;
	in.entry_bytes = 24;
	in.budget_bytes = 64.0 * 1024 * 1024;
	in.sort_mem_bytes = 4.0 * 1024 * 1024;
	in.table_pages = 16000;
	in.table_cached = true;
	braid_cost_estimate(&in, &est);
	check_that(&c, est.prefers == (est.braid_ns <= est.pg_ns * BRAID_COST_MARGIN),
			   "prefers should be braid <= margin * pg");
	check_report(&c, "costmodel: rows come back by TID or from a value log, whichever is cheaper");
}

/*
 * test_costmodel_reread
 *		An uncached table is reread once per gather batch: declined when the
 *		budget leaves too little room for batches, accepted when the table is
 *		cached or the batches are few.
 */
static void
test_costmodel_reread(void)
{
	Check		c;
	BraidCostInput in;
	const char *why = NULL;

	check_init(&c);

	/* the benchmark's shape: 5M rows, 128MB, 82k pages */
	memset(&in, 0, sizeof(in));
	in.rows = 5e6;
	in.sort_width = 110;
	in.tuple_bytes = 136;
	in.entry_bytes = 24;
	in.budget_bytes = 128.0 * 1024 * 1024;
	in.sort_mem_bytes = 128.0 * 1024 * 1024;
	in.table_pages = 82000;
	in.table_cached = false;
	in.heap_refetch = true;
	in.sort_threads = 2;
	in.cpus = 2;
	/* the sorted refs go to the device, leaving the budget to tuples */
	check_that(&c, braid_cost_gather_passes(&in) == 6.0,
			   "expected 6 gather passes, got %g", braid_cost_gather_passes(&in));
	check_that(&c, braid_cost_prefers(&in, &why),
			   "benchmark shape, uncached: declined (%s)", why ? why : "NULL");

	/* a device too slow to be worth it keeps the refs in memory: 8 passes */
	in.spill_ns_per_byte = 1000.0;
	check_that(&c, braid_cost_gather_passes(&in) == 8.0,
			   "slow device: expected 8 gather passes, got %g", braid_cost_gather_passes(&in));
	in.spill_ns_per_byte = 0;

	/* a budget far below the table: over a hundred batches, each rereading
	 * about half of an uncached table's pages */
	in.rows = 1e7;
	in.sort_width = 100;
	in.tuple_bytes = 100;
	in.entry_bytes = 24;
	in.budget_bytes = 8.0 * 1024 * 1024;
	in.sort_mem_bytes = 8.0 * 1024 * 1024;
	in.table_pages = 125000;
	in.table_cached = false;
	why = NULL;
	check_that(&c, !braid_cost_prefers(&in, &why) && why != NULL,
			   "uncached table with %g passes (%g page visits) was accepted",
			   braid_cost_gather_passes(&in), braid_cost_page_visits(&in));
	check_that(&c, braid_cost_page_visits(&in) < braid_cost_gather_passes(&in) * in.table_pages,
			   "sparse batches should visit fewer than all pages");

	/* the same sort over a cached table only pays cheap page revisits */
	in.table_cached = true;
	why = NULL;
	check_that(&c, braid_cost_prefers(&in, &why),
			   "cached table declined (%s)", why ? why : "NULL");

	/* one pass at least, even with an enormous budget */
	in.budget_bytes = 1e15;
	check_that(&c, braid_cost_gather_passes(&in) == 1.0,
			   "expected 1 pass, got %g", braid_cost_gather_passes(&in));

	check_report(&c, "costmodel: gather passes and the uncached-table reread rule");
}

/*
 * test_costmodel_offload_refs
 *		The sorted refs go to the device only when that saves gather passes
 *		worth more than writing them, and the batch arena pays for the
 *		bookkeeping of its rows.
 */
static void
test_costmodel_offload_refs(void)
{
	Check		c;
	double		passes = 0;
	double		mb = 1024.0 * 1024;

	check_init(&c);

	/*
	 * bookkeeping: 12 bytes a row in memory, 20 with refs on the device, 28
	 * when the next batch's refs are merged meanwhile
	 */
	check_that(&c, fabs(braid_cost_batch_arena(140.0 * mb, 128, BRAID_REFS_IN_MEMORY) -
						128.0 * mb) < 1.0,
			   "arena for 128-byte rows with refs in memory: %g",
			   braid_cost_batch_arena(140.0 * mb, 128, BRAID_REFS_IN_MEMORY));
	check_that(&c, fabs(braid_cost_batch_arena(148.0 * mb, 128, BRAID_REFS_ON_DEVICE) -
						128.0 * mb) < 1.0,
			   "arena for 128-byte rows with refs on the device: %g",
			   braid_cost_batch_arena(148.0 * mb, 128, BRAID_REFS_ON_DEVICE));
	check_that(&c, fabs(braid_cost_batch_arena(156.0 * mb, 128, BRAID_REFS_MERGED_AHEAD) -
						128.0 * mb) < 1.0,
			   "arena for 128-byte rows with the next batch merged ahead: %g",
			   braid_cost_batch_arena(156.0 * mb, 128, BRAID_REFS_MERGED_AHEAD));
	check_that(&c, braid_cost_batch_arena(1000, 128, BRAID_REFS_IN_MEMORY) == 32768.0,
			   "tiny memory still gives the minimum arena");

	/* the benchmark's shape: 8 passes become 6 */
	check_that(&c, braid_cost_offload_refs(5e6, 5e6 * 128, 128.0 * mb, 0, 82000, true, 0,
										   &passes) && passes == 6.0,
			   "benchmark shape: offload expected with 6 passes (%g)", passes);

	/* everything fits one batch either way: nothing to save */
	check_that(&c, !braid_cost_offload_refs(1e5, 1e5 * 128, 128.0 * mb, 0, 1700, true, 0,
											&passes) && passes == 1.0,
			   "one batch: no offload expected (%g passes)", passes);

	/* the gather_batch cap holds both arenas to the same size */
	check_that(&c, !braid_cost_offload_refs(5e6, 5e6 * 128, 128.0 * mb, 16.0 * mb, 82000,
											true, 0, &passes) && passes == 39.0,
			   "capped arena: no offload expected (%g passes)", passes);

	/* a write-expensive device: two passes of a small table do not pay */
	check_that(&c, !braid_cost_offload_refs(5e6, 5e6 * 128, 128.0 * mb, 0, 2000, true, 50.0,
											&passes) && passes == 8.0,
			   "expensive device: no offload expected (%g passes)", passes);

	check_report(&c, "costmodel: sorted refs go to the device only when it saves gather passes");
}

/*
 * test_costmodel_gather_arena
 *		The gather's bookkeeping by page: 8 bytes per page of the table, and
 *		8 per distinct page of a batch, at most one a row (sparse) and at
 *		most the table's pages (dense).
 */
static void
test_costmodel_gather_arena(void)
{
	Check		c;
	double		mb = 1024.0 * 1024;
	double		sparse,
				dense,
				tiny;

	check_init(&c);

	/* 20M rows at 16MB: 327k pages, far more than a batch's rows */
	sparse = braid_cost_gather_arena(16.0 * mb, 327000, 112, BRAID_REFS_ON_DEVICE);
	check_that(&c, fabs(sparse - (16.0 * mb - 327000 * 8.0) * 112 / (112 + 20 + 8)) < 1.0,
			   "sparse batch: a distinct page per row (%g)", sparse);
	check_that(&c, sparse / 112 < 327000, "sparse batch: fewer rows than pages");

	/* a small table under a large budget: every page, once */
	dense = braid_cost_gather_arena(128.0 * mb, 1000, 112, BRAID_REFS_IN_MEMORY);
	check_that(&c, fabs(dense - (128.0 * mb - 1000 * 16.0) * 112 / (112 + 12)) < 1.0,
			   "dense batch: every page of the table (%g)", dense);

	/* the two regimes agree where a batch has as many rows as pages */
	sparse = braid_cost_gather_arena(1000 * (112 + 20 + 8) + 1000 * 8.0 - 1, 1000, 112, BRAID_REFS_ON_DEVICE);
	dense = braid_cost_gather_arena(1000 * (112 + 20 + 8) + 1000 * 8.0 + 1, 1000, 112, BRAID_REFS_ON_DEVICE);
	check_that(&c, fabs(sparse - dense) < 2.0,
			   "continuous at rows = pages (%g vs %g)", sparse, dense);

	/* a table whose bookkeeping outweighs the budget: the minimum arena */
	tiny = braid_cost_gather_arena(1.0 * mb, 1e6, 112, BRAID_REFS_ON_DEVICE);
	check_that(&c, tiny == 32768.0, "minimum arena (%g)", tiny);

	check_report(&c, "costmodel: the gather arena pays for its bookkeeping by page");
}

/* ---------------------------------------------------------------------
 * profkernel.c
 * ---------------------------------------------------------------------
 */

#define PROF_REGION (8 * 1024 * 1024)

/*
 * test_profile_ops
 *		Every op, on 1 and 2 threads and three access sizes, returns 0 with
 *		positive bandwidth and consistent counters; sequential writes land at
 *		the start of the region, and READ_UNDER_WRITE writes only the second
 *		half.
 */
static void
test_profile_ops(void)
{
	Check		c;
	char	   *region = aligned_alloc(64, PROF_REGION);
	const size_t sizes[] = {64, 256, 4096};
	const char *const names[] = {"seq_read", "rand_read", "seq_write",
	"rand_write", "read_under_write"};

	check_init(&c);
	for (int op = BRAID_PROF_SEQ_READ; op <= BRAID_PROF_READ_UNDER_WRITE; op++)
	{
		const char *name = braid_profile_op_name((BraidProfOp) op);

		check_that(&c, strcmp(name, names[op]) == 0,
				   "op %d is named \"%s\", expected \"%s\"", op, name, names[op]);
		for (int threads = 1; threads <= 2; threads++)
		{
			for (int s = 0; s < 3; s++)
			{
				BraidProfResult r;
				int			rc;

				memset(region, 0, PROF_REGION);
				rc = braid_profile_measure(region, PROF_REGION, (BraidProfOp) op,
										   sizes[s], threads, 0.05, 0, 0, NULL, &r);
				check_that(&c, rc == 0, "%s/%d/%zu returned %d",
						   name, threads, sizes[s], rc);
				check_that(&c, r.mb_per_s > 0 && r.accesses > 0,
						   "%s/%d/%zu: %g MB/s, %" PRIu64 " accesses",
						   name, threads, sizes[s], r.mb_per_s, r.accesses);
				check_that(&c, r.bytes == r.accesses * sizes[s],
						   "%s/%d/%zu: %" PRIu64 " bytes for %" PRIu64 " accesses",
						   name, threads, sizes[s], r.bytes, r.accesses);
				check_that(&c, r.seconds >= 0.05 && r.seconds < 1.0,
						   "%s/%d/%zu: ran %g s for 0.05 s",
						   name, threads, sizes[s], r.seconds);
				check_that(&c, r.accesses == 0 ||
						   fabs(r.ns_per_access - r.seconds * 1e9 * threads / r.accesses)
						   <= 1e-6 * r.ns_per_access,
						   "%s/%d/%zu: ns_per_access %g inconsistent",
						   name, threads, sizes[s], r.ns_per_access);
				if (op == BRAID_PROF_SEQ_WRITE)
					check_that(&c, region[0] != 0,
							   "seq_write/%d/%zu did not write the region start",
							   threads, sizes[s]);
				if (op == BRAID_PROF_READ_UNDER_WRITE)
				{
					bool		clean = true;

					for (size_t i = 0; i < PROF_REGION / 2; i++)
						if (region[i] != 0)
							clean = false;
					check_that(&c, clean,
							   "read_under_write/%d/%zu wrote the readers' half",
							   threads, sizes[s]);
					check_that(&c, region[PROF_REGION / 2] != 0,
							   "read_under_write/%d/%zu: the writer did not write",
							   threads, sizes[s]);
				}
			}
		}
	}
	free(region);
	check_report(&c, "profkernel: every op measures on 1 and 2 threads, writes stay in their area");
}

/*
 * test_profile_bad_args
 *		Zero access size, thread counts out of range (64 readers plus a
 *		writer included), regions too small for the access size or for the
 *		threads, bad seconds, NULL pointers and unknown ops all return -1.
 */
static void
test_profile_bad_args(void)
{
	Check		c;
	char	   *region = aligned_alloc(64, 65536);
	BraidProfResult r;

	check_init(&c);
#define BAD(expr) \
	check_that(&c, (expr) == -1, "accepted at line %d: %s", __LINE__, #expr)
	BAD(braid_profile_measure(region, 65536, BRAID_PROF_SEQ_READ, 0, 1, 0.01, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 65536, BRAID_PROF_SEQ_READ, 64, 0, 0.01, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 65536, BRAID_PROF_SEQ_READ, 64, 65, 0.01, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 65536, BRAID_PROF_READ_UNDER_WRITE, 64, 64, 0.01, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 1024, BRAID_PROF_RAND_READ, 4096, 1, 0.01, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 8192, BRAID_PROF_SEQ_WRITE, 4096, 4, 0.01, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 8192, BRAID_PROF_READ_UNDER_WRITE, 8192, 1, 0.01, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 65536, BRAID_PROF_SEQ_READ, 64, 1, -1.0, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 65536, BRAID_PROF_SEQ_READ, 64, 1, NAN, 0, 0, NULL, &r));
	BAD(braid_profile_measure(NULL, 65536, BRAID_PROF_SEQ_READ, 64, 1, 0.01, 0, 0, NULL, &r));
	BAD(braid_profile_measure(region, 65536, BRAID_PROF_SEQ_READ, 64, 1, 0.01, 0, 0, NULL, NULL));
	BAD(braid_profile_measure(region, 65536, (BraidProfOp) 99, 64, 1, 0.01, 0, 0, NULL, &r));
#undef BAD
	check_that(&c, r.accesses == 0 && r.mb_per_s == 0,
			   "a refused call left a result behind");
	check_that(&c, strcmp(braid_profile_op_name((BraidProfOp) 99), "unknown") == 0,
			   "unknown op has a name");
	/* the smallest accepted region: exactly one access per thread */
	check_that(&c, braid_profile_measure(region, 8192, BRAID_PROF_SEQ_WRITE, 4096, 2,
										 0.01, 0, 0, NULL, &r) == 0 && r.accesses > 0,
			   "two threads of one 4096-byte access each were refused");
	free(region);
	check_report(&c, "profkernel: bad arguments are refused");
}

/*
 * test_profile_emulation
 *		An emulated 2000 ns per line makes sequential writes (and reads) at
 *		least three times slower than the undelayed device.
 */
static void
test_profile_emulation(void)
{
	Check		c;
	char	   *region = aligned_alloc(64, PROF_REGION);
	BraidProfResult fast,
				slow;
	int			rc1,
				rc2;

	check_init(&c);
	memset(region, 1, PROF_REGION);
	rc1 = braid_profile_measure(region, PROF_REGION, BRAID_PROF_SEQ_WRITE, 4096, 1,
								0.05, 0, 0, NULL, &fast);
	rc2 = braid_profile_measure(region, PROF_REGION, BRAID_PROF_SEQ_WRITE, 4096, 1,
								0.05, 0, 2000, NULL, &slow);
	check_that(&c, rc1 == 0 && rc2 == 0, "seq_write returned %d, %d", rc1, rc2);
	check_that(&c, slow.mb_per_s > 0 && slow.mb_per_s * 3 <= fast.mb_per_s,
			   "seq_write: %g MB/s emulated vs %g MB/s", slow.mb_per_s, fast.mb_per_s);
	/* 64 lines per access at 2000 ns each: at most 4096 B / 128 us */
	check_that(&c, slow.mb_per_s <= 4096.0 / 128e-6 / 1e6 * 1.05,
			   "seq_write: %g MB/s is faster than the emulated device", slow.mb_per_s);

	rc1 = braid_profile_measure(region, PROF_REGION, BRAID_PROF_SEQ_READ, 4096, 1,
								0.05, 0, 0, NULL, &fast);
	rc2 = braid_profile_measure(region, PROF_REGION, BRAID_PROF_SEQ_READ, 4096, 1,
								0.05, 2000, 0, NULL, &slow);
	check_that(&c, rc1 == 0 && rc2 == 0, "seq_read returned %d, %d", rc1, rc2);
	check_that(&c, slow.mb_per_s > 0 && slow.mb_per_s * 3 <= fast.mb_per_s,
			   "seq_read: %g MB/s emulated vs %g MB/s", slow.mb_per_s, fast.mb_per_s);
	free(region);
	check_report(&c, "profkernel: emulated line delays slow the measured device");
}

/*
 * test_profile_cancel
 *		With the cancel flag already set, a 5-second measurement returns at
 *		once with nothing measured, for plain ops and for READ_UNDER_WRITE.
 */
static void
test_profile_cancel(void)
{
	Check		c;
	char	   *region = aligned_alloc(64, PROF_REGION);
	volatile int cancel = 1;
	BraidProfResult r;
	int			rc;

	check_init(&c);
	memset(region, 0, PROF_REGION);
	for (int op = BRAID_PROF_SEQ_READ; op <= BRAID_PROF_READ_UNDER_WRITE; op++)
	{
		rc = braid_profile_measure(region, PROF_REGION, (BraidProfOp) op, 4096, 2,
								   5.0, 0, 0, &cancel, &r);
		check_that(&c, rc == 0, "cancelled %s returned %d",
				   braid_profile_op_name((BraidProfOp) op), rc);
		check_that(&c, r.seconds < 0.5 && r.accesses == 0,
				   "cancelled %s ran %g s, %" PRIu64 " accesses",
				   braid_profile_op_name((BraidProfOp) op), r.seconds, r.accesses);
	}
	free(region);
	check_report(&c, "profkernel: a cancel flag set before the start stops at once");
}

/* ---------------------------------------------------------------------
 * main
 * ---------------------------------------------------------------------
 */

/* main: run every test, print the TAP plan and the summary line. */
int
main(void)
{
	test_int16();
	test_int32();
	test_int64();
	test_uint32();
	test_float8();
	test_float4();
	test_float_canonical();
	test_binary_bytes();
	test_cstring_bytes();
	test_multicolumn();
	test_numeric();

	test_entry_compare();
	test_sort_prefix();
	test_sort_tiebreak();
	test_tiebreak_duplicates();
	test_sort_interrupt_hook();
	test_sort_parallel();
	test_sort_parallel_uneven();
	test_sort_parallel_ties();
	test_pool_persistent();

	test_costmodel();
	test_costmodel_reread();
	test_costmodel_offload_refs();
	test_costmodel_gather_arena();
	test_costmodel_collated();
	test_costmodel_parallel();
	test_costmodel_sources();

	test_profile_ops();
	test_profile_bad_args();
	test_profile_emulation();
	test_profile_cancel();

	printf("1..%d\n", tests_run);
	printf("unit: %d passed, %d failed\n", tests_run - tests_failed, tests_failed);
	return tests_failed == 0 ? 0 : 1;
}
