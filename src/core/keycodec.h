/*-------------------------------------------------------------------------
 *
 * keycodec.h
 *	  Pure, order-preserving byte encodings of scalar sort keys.
 *
 * Every encoder here writes a byte string whose memcmp() order equals the
 * order PostgreSQL's default btree operator class gives the value, and
 * which is prefix-free: two different values never encode so that one is a
 * prefix of the other.  Prefix-freedom is what lets several columns be
 * concatenated into one normalized key, lets a descending column be
 * expressed by inverting its bytes, and makes a zero-padded fixed-size
 * prefix of a key compare correctly against any other key.
 *
 * This header deliberately uses no PostgreSQL facilities (no palloc, no
 * ereport, no Datum), so the encoders can be unit-tested on their own and
 * called from worker threads.
 *
 * src/core/keycodec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_KEYCODEC_H
#define BRAID_KEYCODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Null markers: one byte in front of every column, never inverted. */
#define BRAID_NULL_FIRST_MARK	0x00
#define BRAID_NOT_NULL_MARK		0x01
#define BRAID_NULL_LAST_MARK	0x02

/*
 * braid_put_be32 / braid_put_be64
 *		Store an unsigned integer big-endian, so memcmp sees it MSB first.
 */
static inline void
braid_put_be32(uint8_t *out, uint32_t v)
{
	out[0] = (uint8_t) (v >> 24);
	out[1] = (uint8_t) (v >> 16);
	out[2] = (uint8_t) (v >> 8);
	out[3] = (uint8_t) v;
}

/* braid_get_be32: read back what braid_put_be32 stored. */
static inline uint32_t
braid_get_be32(const uint8_t *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) |
		((uint32_t) p[2] << 8) | p[3];
}

static inline void
braid_put_be64(uint8_t *out, uint64_t v)
{
	braid_put_be32(out, (uint32_t) (v >> 32));
	braid_put_be32(out + 4, (uint32_t) v);
}

/*
 * braid_enc_int16/int32/int64
 *		Signed integers: flip the sign bit so negatives sort first.
 */
static inline size_t
braid_enc_int16(int16_t v, uint8_t *out)
{
	uint16_t	u = (uint16_t) v ^ UINT16_C(0x8000);

	out[0] = (uint8_t) (u >> 8);
	out[1] = (uint8_t) u;
	return 2;
}

static inline size_t
braid_enc_int32(int32_t v, uint8_t *out)
{
	braid_put_be32(out, (uint32_t) v ^ UINT32_C(0x80000000));
	return 4;
}

static inline size_t
braid_enc_int64(int64_t v, uint8_t *out)
{
	braid_put_be64(out, (uint64_t) v ^ UINT64_C(0x8000000000000000));
	return 8;
}

/* braid_enc_uint32: unsigned 32-bit (oid) is already in memcmp order. */
static inline size_t
braid_enc_uint32(uint32_t v, uint8_t *out)
{
	braid_put_be32(out, v);
	return 4;
}

/*
 * braid_enc_float8
 *		IEEE double in PostgreSQL's order: -Inf < negatives < -0 = +0 <
 *		positives < +Inf < NaN, all NaNs equal (float8_cmp_internal).
 *
 * -0 is folded into +0 and every NaN into one canonical NaN before the
 * usual transform (negative: invert all bits; positive: set the sign bit).
 */
static inline size_t
braid_enc_float8(double v, uint8_t *out)
{
	uint64_t	bits;

	if (v != v)
		bits = UINT64_C(0x7FF8000000000000);
	else if (v == 0.0)
		bits = 0;
	else
		memcpy(&bits, &v, sizeof(bits));

	if (bits & UINT64_C(0x8000000000000000))
		bits = ~bits;
	else
		bits |= UINT64_C(0x8000000000000000);
	braid_put_be64(out, bits);
	return 8;
}

/* braid_enc_float4: as braid_enc_float8, in 4 bytes (float4_cmp_internal). */
static inline size_t
braid_enc_float4(float v, uint8_t *out)
{
	uint32_t	bits;

	if (v != v)
		bits = UINT32_C(0x7FC00000);
	else if (v == 0.0f)
		bits = 0;
	else
		memcpy(&bits, &v, sizeof(bits));

	if (bits & UINT32_C(0x80000000))
		bits = ~bits;
	else
		bits |= UINT32_C(0x80000000);
	braid_put_be32(out, bits);
	return 4;
}

/*
 * braid_enc_cstring_bytes
 *		Byte strings that can never contain a NUL byte (text, varchar and
 *		bpchar in the server encoding): the bytes followed by one 0x00.
 *
 * Since 0x00 is smaller than every byte that can occur, a proper prefix
 * sorts first, exactly as memcmp-then-length (varstr_cmp under C) does.
 * Returns the number of bytes written: len + 1.
 */
static inline size_t
braid_enc_cstring_bytes(const uint8_t *p, size_t len, uint8_t *out)
{
	memcpy(out, p, len);
	out[len] = 0x00;
	return len + 1;
}

/*
 * braid_enc_binary_bytes
 *		Arbitrary byte strings (bytea): 0x00 is escaped as 0x00 0xFF and the
 *		string is terminated by 0x00 0x00.
 *
 * The terminator sorts below any escaped NUL and any other byte, so the
 * order is memcmp-then-length, as byteacmp(); output needs up to 2*len+2
 * bytes.  Returns the number of bytes written.
 */
static inline size_t
braid_enc_binary_bytes(const uint8_t *p, size_t len, uint8_t *out)
{
	uint8_t    *o = out;
	const uint8_t *end = p + len;

	while (p < end)
	{
		const uint8_t *z = memchr(p, 0, (size_t) (end - p));
		size_t		run = z ? (size_t) (z - p) : (size_t) (end - p);

		memcpy(o, p, run);
		o += run;
		p += run;
		if (z)
		{
			*o++ = 0x00;
			*o++ = 0xFF;
			p++;
		}
	}
	*o++ = 0x00;
	*o++ = 0x00;
	return (size_t) (o - out);
}

/*
 * Numeric keys: a class byte, then for finite non-zero values the base-10000
 * weight and digits.  Classes order -Infinity < negative < 0 < positive <
 * +Infinity < NaN, as numeric_cmp() does.
 */
#define BRAID_NUMERIC_NINF	0x01
#define BRAID_NUMERIC_NEG	0x02
#define BRAID_NUMERIC_ZERO	0x03
#define BRAID_NUMERIC_POS	0x04
#define BRAID_NUMERIC_PINF	0x05
#define BRAID_NUMERIC_NAN	0x06

/*
 * braid_enc_numeric_finite
 *		A finite numeric value given as sign, weight (of the first base-10000
 *		digit) and digits, each 0..9999.  Leading and trailing zero digits are
 *		ignored, so values equal under numeric_cmp() (1.0 and 1.00) encode
 *		identically.
 *
 * Magnitude: weight + 32768 (2 bytes), then each digit + 1 (2 bytes), then a
 * 0x0000 terminator, all big-endian: a larger weight is a larger magnitude
 * (the first digit is non-zero), equal weights compare digit by digit, and
 * a shorter digit string is smaller, as the terminator sorts below every
 * digit.  A negative value stores its magnitude inverted.  Needs at most
 * 2 * ndigits + 5 bytes; returns the number written.
 */
static inline size_t
braid_enc_numeric_finite(int negative, int weight, const int16_t *digits,
						 int ndigits, uint8_t *out)
{
	uint8_t    *o = out + 1;

	while (ndigits > 0 && digits[0] == 0)
	{
		digits++;
		ndigits--;
		weight--;
	}
	while (ndigits > 0 && digits[ndigits - 1] == 0)
		ndigits--;
	if (ndigits == 0)
	{
		out[0] = BRAID_NUMERIC_ZERO;
		return 1;
	}

	out[0] = negative ? BRAID_NUMERIC_NEG : BRAID_NUMERIC_POS;
	o[0] = (uint8_t) ((uint16_t) (weight + 32768) >> 8);
	o[1] = (uint8_t) (weight + 32768);
	o += 2;
	for (int i = 0; i < ndigits; i++)
	{
		uint16_t	d = (uint16_t) (digits[i] + 1);

		o[0] = (uint8_t) (d >> 8);
		o[1] = (uint8_t) d;
		o += 2;
	}
	o[0] = 0;
	o[1] = 0;
	o += 2;
	if (negative)
	{
		for (uint8_t *p = out + 1; p < o; p++)
			*p = (uint8_t) ~*p;
	}
	return (size_t) (o - out);
}

/*
 * braid_invert_bytes
 *		Turn an ascending encoding into a descending one.  Valid because the
 *		encodings are prefix-free: the first differing byte always decides.
 */
static inline void
braid_invert_bytes(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t) ~p[i];
}

#endif							/* BRAID_KEYCODEC_H */
