/*-------------------------------------------------------------------------
 *
 * keys.h
 *	  Normalized sort keys for PostgreSQL datums.
 *
 * A normalized key is the concatenation, for each sort column, of a null
 * marker byte and (for non-null values) the column's order-preserving,
 * prefix-free encoding from keycodec.h, inverted for descending columns.
 * memcmp() of two normalized keys orders them exactly as the Sort node's
 * operators, collations and NULLS FIRST/LAST flags would.
 *
 * src/plan/keys.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_KEYS_H
#define BRAID_KEYS_H

#include "postgres.h"

#include "core/collmemo.h"

typedef enum BraidKeyKind
{
	BRAID_KEY_INT2,
	BRAID_KEY_INT4,
	BRAID_KEY_INT8,
	BRAID_KEY_OID,
	BRAID_KEY_FLOAT4,
	BRAID_KEY_FLOAT8,
	BRAID_KEY_BOOL,
	BRAID_KEY_DATE,
	BRAID_KEY_INT64TIME,		/* time, timestamp, timestamptz */
	BRAID_KEY_UUID,
	BRAID_KEY_BYTEA,
	BRAID_KEY_TEXT,				/* text, varchar under C collation */
	BRAID_KEY_BPCHAR,			/* char(n) under C collation */
	BRAID_KEY_NUMERIC,
	BRAID_KEY_TEXT_ICU,			/* text, varchar under an ICU collation */
	BRAID_KEY_BPCHAR_ICU,		/* char(n) under an ICU collation */
	BRAID_KEY_TEXT_LIBC,		/* text, varchar under another libc collation */
	BRAID_KEY_BPCHAR_LIBC		/* char(n) under another libc collation */
} BraidKeyKind;

/* Kinds ordered by a comparator, not by memcmp of their encoding. */
#define BRAID_KEY_IS_COLLATED(kind) \
	((kind) == BRAID_KEY_TEXT_LIBC || (kind) == BRAID_KEY_BPCHAR_LIBC)

/*
 * Keys PostgreSQL's sort orders by an abbreviated key of their bytes
 * (varstr_sortsupport: a bytea, or a string under the C collation), made
 * for every row it sorts unless it gives abbreviation up (the cost model
 * charges it: costmodel.c, PG_NS_PER_ABBREVIATED_ROW).
 */
#define BRAID_KEY_IS_ABBREVIATED(kind) \
	((kind) == BRAID_KEY_BYTEA || (kind) == BRAID_KEY_TEXT || \
	 (kind) == BRAID_KEY_BPCHAR)

typedef struct BraidKeyColumn
{
	BraidKeyKind kind;
	bool		descending;
	bool		nulls_first;
	void	   *locale;			/* ICU kinds: the collation's pg_locale_t;
								 * libc kinds: its locale_t */
} BraidKeyColumn;

/* A growable byte buffer for encoding one row's key. */
typedef struct BraidKeyBuffer
{
	uint8	   *data;
	size_t		cap;
	size_t		sortable;		/* bytes that order by memcmp: the whole key,
								 * or with a collated column its head, which
								 * starts at BRAID_COLLATED_HEADER */
} BraidKeyBuffer;

extern bool braid_key_column_for(Oid sortop, Oid collation, bool nulls_first,
								 BraidKeyColumn *col, char **why);
extern int	braid_key_fixed_width(BraidKeyKind kind);
extern int	braid_key_max_width(BraidKeyKind kind, int32 typmod);

/* Bytes of a head's or segment's length in the collated layout (keys.c). */
#define BRAID_COLLATED_LENGTH	4
#define BRAID_COLLATED_HEADER	BRAID_COLLATED_LENGTH
extern int	braid_compare_collated(const uint8 *a, uint32 la, const uint8 *b,
								   uint32 lb, const BraidKeyColumn *cols,
								   int ncols, BraidCollMemo *memo);
extern size_t braid_encode_key(const BraidKeyColumn *cols, int ncols,
							   const Datum *values, const bool *isnull,
							   BraidKeyBuffer *buf);

#endif							/* BRAID_KEYS_H */
