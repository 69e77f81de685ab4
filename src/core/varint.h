/*-------------------------------------------------------------------------
 *
 * varint.h
 *	  LEB128 varints, as the spill formats code lengths and refs: the runs
 *	  (core/runrecord.h) and a lazy sort's entry log (sort/sort_select.c).
 *
 * Pure C, no PostgreSQL calls: used on the sort threads.
 *
 * src/core/varint.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_VARINT_H
#define BRAID_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* braid_varint_put: write v as LEB128; returns bytes written (at most 5). */
static inline size_t
braid_varint_put(uint8_t *p, uint32_t v)
{
	size_t		n = 0;

	while (v >= 0x80)
	{
		p[n++] = (uint8_t) (v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t) v;
	return n;
}

/* braid_varint_get: read a LEB128 value; returns bytes read. */
static inline size_t
braid_varint_get(const uint8_t *p, uint32_t *v)
{
	uint32_t	result = 0;
	int			shift = 0;
	size_t		n = 0;

	for (;;)
	{
		uint8_t		b = p[n++];

		result |= (uint32_t) (b & 0x7F) << shift;
		if ((b & 0x80) == 0)
			break;
		shift += 7;
	}
	*v = result;
	return n;
}

/* braid_varint_size: bytes braid_varint_put would write for v. */
static inline size_t
braid_varint_size(uint32_t v)
{
	return v < (1U << 7) ? 1 : v < (1U << 14) ? 2 : v < (1U << 21) ? 3 :
		v < (1U << 28) ? 4 : 5;
}

#endif							/* BRAID_VARINT_H */
