/*-------------------------------------------------------------------------
 *
 * test_keycodec.c
 *	  Unit tests of src/core/keycodec.h, the order-preserving key encoders.
 *
 * Every encoder's memcmp order (with a length tie-break) equals
 * PostgreSQL's btree order for the type, byte encoders are prefix-free,
 * equal values encode identically (-0/+0, every NaN), braid_invert_bytes
 * reverses the order, and concatenated multi-column keys (with null
 * markers and descending columns) order lexicographically.
 *
 * test/unit/test_keycodec.c
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>

#include "unit.h"

#include "core/keycodec.h"

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
	0x7FC00000u, 0x7FC00001u, 0x7F800001u, 0x7FFFFFFFu, /* NaNs */
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
		-DBL_TRUE_MIN, 0.0, DBL_TRUE_MIN, DBL_MIN, 1.0, DBL_MAX, INFINITY, NAN};
		static const float f4[] = {-INFINITY, -FLT_MAX, -1.0f, -FLT_MIN,
		-FLT_TRUE_MIN, 0.0f, FLT_TRUE_MIN, FLT_MIN, 1.0f, FLT_MAX, INFINITY, NAN};

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
		r->s.len = r->s.len < 2 ? r->s.len : 2; /* more ties */
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
 * keycodec: numeric
 * ---------------------------------------------------------------------
 */

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

	CMP_NUM(0, 0, zeros, 2, 1, 5, zeros, 0, 0); /* 0 == -0 (no digits) */
	CMP_NUM(0, 0, one, 1, 0, 0, one_zero, 3, 0);	/* 1 == 1.00000000 */
	CMP_NUM(0, 1, lead_zero_one, 2, 0, 0, one, 1, 0);	/* leading zero digit */
	CMP_NUM(0, 0, n9999, 1, 0, 1, n10000, 2, -1);	/* 9999 < 10000 */
	CMP_NUM(1, 0, n9999, 1, 1, 1, n10000, 2, 1);	/* -9999 > -10000 */
	CMP_NUM(0, -1, half, 1, 0, -1, half_more, 2, -1);	/* 0.5 < 0.50000001 */
	CMP_NUM(1, -1, half, 1, 1, -1, half_more, 2, 1);	/* -0.5 > -0.50000001 */
	CMP_NUM(1, 0, one, 1, 0, 0, zeros, 0, -1);	/* -1 < 0 */
	CMP_NUM(0, -1, half, 1, 0, 0, zeros, 0, 1); /* 0.5 > 0 */
	CMP_NUM(1, 3, one, 1, 1, -3, one, 1, -1);	/* -1e12 < -1e-12 */
#undef CMP_NUM
	check_report(&c, "keycodec: numeric magnitudes, signs, zeros, trailing zero digits");
}

/* unit_keycodec: run the tests of this module, in order. */
void
unit_keycodec(void)
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
}
