/*-------------------------------------------------------------------------
 *
 * keys.c
 *	  Choosing an exact encoder for a sort column, and encoding datums.
 *
 * A sort column gets an encoder only when memcmp() order of the encoding is
 * provably the order of the Sort node's operator: the operator must be the
 * "<" or ">" of the type's default btree operator class.  Text-like types
 * are encoded under a C (or POSIX) collation, where PostgreSQL itself
 * compares with memcmp(), and under ICU collations, whose sort keys are
 * exact by design (PostgreSQL trusts them for abbreviated keys too): the ICU
 * sort key, then -- for deterministic collations, which PostgreSQL breaks
 * ties of with strcmp() -- the string's bytes.  Anything else is declined,
 * leaving PostgreSQL's Sort in place.
 *
 * Other libc collations have no exact encoding: strxfrm() cannot be trusted
 * to agree with strcoll() (PostgreSQL does not trust it either).  Any sort
 * key may be such a "collated" column.  A key with collated columns c1..cn
 * is laid out
 *
 *		[H: 4][head: H bytes]
 *		[length: 4][string c1][0x00] [G1: 4][segment 1: G1 bytes]
 *		...
 *		[length: 4][string cn][0x00] [later keys, to the end]
 *
 * The head holds the keys before c1 and c1's null mark; segment i holds the
 * keys between ci and ci+1 and ci+1's null mark.  Heads and segments order
 * by memcmp (their keys are prefix-free encodings); only the head goes in
 * the IndexMap prefix.  Keys whose heads are equal are ordered by
 * braid_compare_collated(): each string by strcoll_l(), then strcmp() when
 * the collation calls different strings equal (exactly as PostgreSQL's
 * varstr_cmp()), then the next segment by memcmp, and so on.  Strings end in
 * a zero byte (text holds none) so that strcoll_l() reads them in place.  It
 * is pure libc, so it runs on the sort threads too.  Lengths are big-endian.
 *
 * src/plan/keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <locale.h>

#include "access/stratnum.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
#include "utils/uuid.h"
#include "mb/pg_wchar.h"

#include "compat.h"
#include "core/keycodec.h"
#include "plan/keys.h"

PG_FUNCTION_INFO_V1(braidsort_normalized_key);


/*
 * default_libc_locale
 *		A locale_t for the database's default collation (PostgreSQL 15 has no
 *		pg_locale_t for it and calls strcoll() under LC_COLLATE): made once
 *		from LC_COLLATE, so that comparisons can use strcoll_l() anywhere.
 */
static locale_t
default_libc_locale(void)
{
	static locale_t loc = (locale_t) 0;

	if (loc == (locale_t) 0)
	{
		const char *name = setlocale(LC_COLLATE, NULL);

		loc = newlocale(LC_COLLATE_MASK, name ? name : "C", (locale_t) 0);
		if (loc == (locale_t) 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not create locale \"%s\": %m", name ? name : "C")));
	}
	return loc;
}

/*
 * key_column_lookup
 *		braid_key_column_for's answer from the catalogs.
 */
static bool
key_column_lookup(Oid sortop, Oid collation, bool nulls_first,
				  BraidKeyColumn *col, char **why)
{
	Oid			opfamily;
	Oid			opcintype;
	BraidOrderDirection strategy;
	TypeCacheEntry *typentry;

	col->locale = NULL;
	if (!get_ordering_op_properties(sortop, &opfamily, &opcintype, &strategy))
	{
		*why = psprintf("operator %u is not a btree ordering operator", sortop);
		return false;
	}

	/*
	 * The type's default btree operator family, from the type cache: this
	 * runs for every Sort planned and every BraidSort begun, and
	 * GetDefaultOpClass() scans pg_opclass each time.
	 */
	typentry = lookup_type_cache(opcintype, TYPECACHE_BTREE_OPFAMILY);
	if (!OidIsValid(typentry->btree_opf) || typentry->btree_opf != opfamily)
	{
		*why = psprintf("operator %s is not from the default operator class of type %s",
						get_opname(sortop), format_type_be(opcintype));
		return false;
	}

	switch (opcintype)
	{
		case INT2OID:
			col->kind = BRAID_KEY_INT2;
			break;
		case INT4OID:
			col->kind = BRAID_KEY_INT4;
			break;
		case INT8OID:
			col->kind = BRAID_KEY_INT8;
			break;
		case OIDOID:
			col->kind = BRAID_KEY_OID;
			break;
		case FLOAT4OID:
			col->kind = BRAID_KEY_FLOAT4;
			break;
		case FLOAT8OID:
			col->kind = BRAID_KEY_FLOAT8;
			break;
		case BOOLOID:
			col->kind = BRAID_KEY_BOOL;
			break;
		case DATEOID:
			col->kind = BRAID_KEY_DATE;
			break;
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			col->kind = BRAID_KEY_INT64TIME;
			break;
		case UUIDOID:
			col->kind = BRAID_KEY_UUID;
			break;
		case BYTEAOID:
			col->kind = BRAID_KEY_BYTEA;
			break;
		case NUMERICOID:
			col->kind = BRAID_KEY_NUMERIC;
			break;
		case TEXTOID:
		case BPCHAROID:
			col->locale = NULL;
			if (OidIsValid(collation) && braid_collation_is_c(collation))
			{
				col->kind = (opcintype == TEXTOID) ? BRAID_KEY_TEXT : BRAID_KEY_BPCHAR;
				break;
			}
#ifdef USE_ICU
			if (OidIsValid(collation))
			{
				pg_locale_t locale = pg_newlocale_from_collation(collation);

				if (locale && locale->provider == COLLPROVIDER_ICU &&
					(BRAID_ICU_ANY_ENCODING || GetDatabaseEncoding() == PG_UTF8))
				{
					col->kind = (opcintype == TEXTOID) ? BRAID_KEY_TEXT_ICU : BRAID_KEY_BPCHAR_ICU;
					col->locale = locale;
					break;
				}
			}
#endif
			if (OidIsValid(collation))
			{
				/*
				 * A libc collation: compared by strcoll_l(), see above.  The
				 * default collation is libc's where the server says so:
				 * before 18 as no locale (0), from 18 on as a locale of
				 * provider libc. (An ICU default in a database that is not
				 * UTF-8 reaches here on 18, and is declined, as is any other
				 * provider.)
				 */
				pg_locale_t locale = pg_newlocale_from_collation(collation);

				if (locale == 0 ||
					(locale->provider == COLLPROVIDER_LIBC && locale->deterministic))
				{
					col->kind = (opcintype == TEXTOID) ? BRAID_KEY_TEXT_LIBC : BRAID_KEY_BPCHAR_LIBC;
					col->locale = (locale == 0 || collation == DEFAULT_COLLATION_OID) ?
						(void *) default_libc_locale() : (void *) locale->info.lt;
					break;
				}
			}
			*why = psprintf("type %s under collation \"%s\" has no exact key encoding",
							format_type_be(opcintype),
							OidIsValid(collation) ? get_collation_name(collation) : "none");
			return false;
		default:
			*why = psprintf("type %s has no exact key encoding",
							format_type_be(opcintype));
			return false;
	}

	col->descending = (strategy == BRAID_ORDER_GREATER);
	col->nulls_first = nulls_first;
	return true;
}

/*
 * A backend's encoders of the sort columns it has planned, for those that
 * hold no locale (every kind but the libc and ICU collated ones): the
 * planner asks for every key of every Sort it plans, and the two catalog
 * lookups behind an answer cost a short query's planning more than the rest
 * of braidsort's look at its sort.  An operator's properties change only
 * with its operator family (pg_amop) or its type's default operator class
 * (pg_opclass): an invalidation of either empties the cache.  A collated
 * column's locale is left out, as are declines, which say why each time.
 */
#define KEY_CACHE_SIZE 16

typedef struct KeyCacheEntry
{
	Oid			sortop;
	Oid			collation;
	bool		nulls_first;
	BraidKeyColumn col;
} KeyCacheEntry;

static KeyCacheEntry key_cache[KEY_CACHE_SIZE];
static int	key_cache_used = 0; /* entries in use */
static int	key_cache_next = 0; /* the entry to replace when full */
static uint64 key_cache_generation = 0; /* invalidations seen */
static bool key_cache_watched = false;	/* invalidation callbacks set */

/* key_cache_forget: a syscache callback emptying the cache. */
static void
key_cache_forget(Datum arg, int cacheid, uint32 hashvalue)
{
	key_cache_used = 0;
	key_cache_next = 0;
	key_cache_generation++;
}

/*
 * braid_key_column_for
 *		Find the exact encoder for a sort column, or explain why there is
 *		none.  Returns false (and sets *why) to decline.
 */
bool
braid_key_column_for(Oid sortop, Oid collation, bool nulls_first,
					 BraidKeyColumn *col, char **why)
{
	KeyCacheEntry *entry;
	uint64		generation;

	/* (before any lookup: an invalidation during it must be seen) */
	if (!key_cache_watched)
	{
		CacheRegisterSyscacheCallback(AMOPOPID, key_cache_forget, (Datum) 0);
		CacheRegisterSyscacheCallback(CLAOID, key_cache_forget, (Datum) 0);
		key_cache_watched = true;
	}
	generation = key_cache_generation;
	for (int i = 0; i < key_cache_used; i++)
	{
		entry = &key_cache[i];
		if (entry->sortop == sortop && entry->collation == collation &&
			entry->nulls_first == nulls_first)
		{
			*col = entry->col;
			return true;
		}
	}
	if (!key_column_lookup(sortop, collation, nulls_first, col, why))
		return false;
	if (col->kind == BRAID_KEY_TEXT_ICU || col->kind == BRAID_KEY_BPCHAR_ICU ||
		BRAID_KEY_IS_COLLATED(col->kind))
		return true;
	/* an invalidation during the lookup: the answer may predate it */
	if (key_cache_generation != generation)
		return true;
	if (key_cache_used < KEY_CACHE_SIZE)
		entry = &key_cache[key_cache_used++];
	else
	{
		entry = &key_cache[key_cache_next];
		key_cache_next = (key_cache_next + 1) % KEY_CACHE_SIZE;
	}
	entry->sortop = sortop;
	entry->collation = collation;
	entry->nulls_first = nulls_first;
	entry->col = *col;
	return true;
}

/*
 * braid_key_max_width
 *		Most bytes the value encoding of a variable-width kind can take under
 *		this type modifier, or -1 if unbounded.  A numeric(p, s) has at most
 *		ceil((p - s) / 4) base-10000 digits before the decimal point and
 *		ceil(s / 4) after it (digits are aligned to the point), and its
 *		encoding takes 2 bytes a digit and 5 more (keycodec.h).  The null
 *		marker byte is not included.
 */
int
braid_key_max_width(BraidKeyKind kind, int32 typmod)
{
	if (kind == BRAID_KEY_NUMERIC && typmod >= (int32) VARHDRSZ)
	{
		int			precision = ((typmod - VARHDRSZ) >> 16) & 0xffff;
		int			scale = (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;

		/* PostgreSQL 15 allows scales outside 0..precision: not bounded here */
		if (scale < 0 || scale > precision)
			return -1;
		return 2 * ((precision - scale + 3) / 4 + (scale + 3) / 4) + 5;
	}
	return -1;
}

/*
 * braid_key_fixed_width
 *		Bytes of value encoding of a fixed-width kind, or -1 if variable.
 *		The null marker byte is not included.
 */
int
braid_key_fixed_width(BraidKeyKind kind)
{
	switch (kind)
	{
		case BRAID_KEY_BOOL:
			return 1;
		case BRAID_KEY_INT2:
			return 2;
		case BRAID_KEY_INT4:
		case BRAID_KEY_OID:
		case BRAID_KEY_FLOAT4:
		case BRAID_KEY_DATE:
			return 4;
		case BRAID_KEY_INT8:
		case BRAID_KEY_FLOAT8:
		case BRAID_KEY_INT64TIME:
			return 8;
		case BRAID_KEY_UUID:
			return UUID_LEN;
		case BRAID_KEY_BYTEA:
		case BRAID_KEY_TEXT:
		case BRAID_KEY_BPCHAR:
		case BRAID_KEY_NUMERIC:
		case BRAID_KEY_TEXT_ICU:
		case BRAID_KEY_BPCHAR_ICU:
		case BRAID_KEY_TEXT_LIBC:
		case BRAID_KEY_BPCHAR_LIBC:
			return -1;
	}
	return -1;
}

/*
 * The on-disk numeric format (utils/adt/numeric.c keeps these private; the
 * format is stable, being on disk): a header word whose top bits say short
 * (2-byte header), long (4-byte header) or special (NaN, +/-Infinity), then
 * base-10000 digits.
 */
#define NUMERIC_SIGN_MASK	0xC000
#define NUMERIC_NEG			0x4000
#define NUMERIC_SHORT		0x8000
#define NUMERIC_SPECIAL		0xC000
#define NUMERIC_NAN			0xC000
#define NUMERIC_PINF		0xD000
#define NUMERIC_NINF		0xF000
#define NUMERIC_SHORT_SIGN_MASK			0x2000
#define NUMERIC_SHORT_WEIGHT_SIGN_MASK	0x0040
#define NUMERIC_SHORT_WEIGHT_MASK		0x003F

/*
 * encode_numeric
 *		Encode a (fully detoasted) numeric; returns bytes written to out,
 *		which must have room for 2 * ndigits + 5 bytes.
 */
static size_t
encode_numeric(struct varlena *v, uint8 *out)
{
	const char *p = VARDATA(v);
	size_t		len = VARSIZE(v) - VARHDRSZ;
	uint16		header;
	int			weight;
	bool		negative;
	const int16 *digits;
	int			ndigits;

	memcpy(&header, p, sizeof(uint16));
	if ((header & NUMERIC_SIGN_MASK) == NUMERIC_SPECIAL)
	{
		out[0] = header == NUMERIC_NAN ? BRAID_NUMERIC_NAN :
			header == NUMERIC_PINF ? BRAID_NUMERIC_PINF : BRAID_NUMERIC_NINF;
		return 1;
	}
	if ((header & NUMERIC_SIGN_MASK) == NUMERIC_SHORT)
	{
		negative = (header & NUMERIC_SHORT_SIGN_MASK) != 0;
		weight = (header & NUMERIC_SHORT_WEIGHT_SIGN_MASK) ?
			(int) (~NUMERIC_SHORT_WEIGHT_MASK | (header & NUMERIC_SHORT_WEIGHT_MASK)) :
			(int) (header & NUMERIC_SHORT_WEIGHT_MASK);
		digits = (const int16 *) (p + sizeof(uint16));
		ndigits = (int) ((len - sizeof(uint16)) / sizeof(int16));
	}
	else
	{
		int16		w;

		negative = (header & NUMERIC_SIGN_MASK) == NUMERIC_NEG;
		memcpy(&w, p + sizeof(uint16), sizeof(int16));
		weight = w;
		digits = (const int16 *) (p + 2 * sizeof(uint16));
		ndigits = (int) ((len - 2 * sizeof(uint16)) / sizeof(int16));
	}
	return braid_enc_numeric_finite(negative, weight, digits, ndigits, out);
}

/* reserve: make room for "need" more bytes after "used" in buf. */
static inline void reserve(BraidKeyBuffer *buf, size_t used, size_t need);

#ifdef USE_ICU
/*
 * encode_icu
 *		Append the ICU sort key of p[0..len) (then 0x00), and for
 *		deterministic collations the bytes themselves (then 0x00), at
 *		buf->data + at; returns the bytes appended.
 *
 * ICU sort keys contain no zero byte, so the encoding is prefix-free.
 */
static size_t
encode_icu(pg_locale_t locale, const char *p, size_t len,
		   BraidKeyBuffer *buf, size_t at)
{
	size_t		n = 0;

	if (GetDatabaseEncoding() == PG_UTF8)
	{
		UCharIterator iter;
		uint32_t	state[2] = {0, 0};

		uiter_setUTF8(&iter, p, (int32_t) len);
		for (;;)
		{
			UErrorCode	status = U_ZERO_ERROR;
			int32_t		got;

			reserve(buf, at + n, 1024);
			got = ucol_nextSortKeyPart(locale->info.icu.ucol, &iter, state,
									   buf->data + at + n, 1024, &status);
			if (U_FAILURE(status))
				ereport(ERROR,
						(errmsg("sort key generation failed: %s", u_errorName(status))));
			n += got;
			if (got < 1024)
				break;
		}
	}
	else
	{
#if PG_VERSION_NUM >= 180000
		/*
		 * (braid_key_column_for takes no ICU key there:
		 * BRAID_ICU_ANY_ENCODING)
		 */
		elog(ERROR, "braidsort: an ICU key in a database not in UTF-8");
#else
		UChar	   *uchar;
		int32_t		ulen = icu_to_uchar(&uchar, p, len);
		int32_t		need;

		need = ucol_getSortKey(locale->info.icu.ucol, uchar, ulen, NULL, 0);
		reserve(buf, at, need);
		(void) ucol_getSortKey(locale->info.icu.ucol, uchar, ulen, buf->data + at, need);
		n = need > 0 ? need - 1 : 0;	/* drop ICU's own terminating zero */
		pfree(uchar);
#endif
	}
	reserve(buf, at + n, len + 2);
	buf->data[at + n++] = 0x00;
	if (locale->deterministic)
		n += braid_enc_cstring_bytes((const uint8 *) p, len, buf->data + at + n);
	return n;
}
#endif

static inline void
reserve(BraidKeyBuffer *buf, size_t used, size_t need)
{
	if (used + need > buf->cap)
	{
		size_t		newcap = Max(buf->cap * 2, used + need);

		buf->data = repalloc_huge(buf->data, newcap);
		buf->cap = newcap;
	}
}

/*
 * Where the memcmp-ordered bytes being appended go: the segment that started
 * at "start", whose 4-byte length is to be written at "length_at".
 */
typedef struct SegmentCursor
{
	size_t		length_at;
	size_t		start;
	bool		first;			/* still in the head */
} SegmentCursor;

/*
 * encode_collated
 *		Append a key compared by its libc collation at len: its NULL mark
 *		(closing the current memcmp-ordered segment, whose length it writes),
 *		then the string's length, bytes and a zero byte, compared by
 *		braid_compare_collated(), not by memcmp; then, if another collated
 *		key follows ("more"), room for the next segment's length.  Returns
 *		the new length.
 */
static inline size_t
encode_collated(const BraidKeyColumn *col, Datum d, bool isnull, bool more,
				SegmentCursor *seg, BraidKeyBuffer *buf, size_t len)
{
	const char *p = NULL;
	uint32		vlen = 0;
	size_t		seglen;
	uint8	   *out;

	if (!isnull)
	{
		struct varlena *v = PG_DETOAST_DATUM_PACKED(d);

		p = VARDATA_ANY(v);
		vlen = VARSIZE_ANY_EXHDR(v);
		/* bpchar compares without trailing spaces (bcTruelen) */
		if (col->kind == BRAID_KEY_BPCHAR_LIBC)
			while (vlen > 0 && p[vlen - 1] == ' ')
				vlen--;
	}
	reserve(buf, len, 1 + 4 + (size_t) vlen + 1 + BRAID_COLLATED_LENGTH);
	out = buf->data + len;
	out[0] = isnull ? (col->nulls_first ? BRAID_NULL_FIRST_MARK : BRAID_NULL_LAST_MARK) :
		BRAID_NOT_NULL_MARK;
	seglen = len + 1 - seg->start;
	/* (keys are built in palloc'd memory: below 1 GB, or MaxAllocHugeSize) */
	if (seglen > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("braidsort sort keys between collated keys exceed %u bytes",
						PG_UINT32_MAX)));
	braid_put_be32(buf->data + seg->length_at, (uint32) seglen);
	if (seg->first)
		buf->sortable = seglen;
	seg->first = false;
	braid_put_be32(out + 1, (uint32) vlen);
	if (vlen > 0)
		memcpy(out + 5, p, vlen);
	out[5 + vlen] = 0x00;
	len += 5 + (size_t) vlen + 1;
	if (more)
	{
		seg->length_at = len;
		seg->start = len + BRAID_COLLATED_LENGTH;
		len += BRAID_COLLATED_LENGTH;
	}
	return len;
}

/*
 * encode_fixed
 *		Encode a non-NULL fixed-width key of this kind at out (16 bytes of
 *		room); returns its length.
 */
static inline size_t
encode_fixed(BraidKeyKind kind, Datum d, uint8 *out)
{
	switch (kind)
	{
		case BRAID_KEY_INT2:
			return braid_enc_int16(DatumGetInt16(d), out);
		case BRAID_KEY_INT4:
		case BRAID_KEY_DATE:
			return braid_enc_int32(DatumGetInt32(d), out);
		case BRAID_KEY_INT8:
		case BRAID_KEY_INT64TIME:
			return braid_enc_int64(DatumGetInt64(d), out);
		case BRAID_KEY_OID:
			return braid_enc_uint32(DatumGetObjectId(d), out);
		case BRAID_KEY_FLOAT4:
			return braid_enc_float4(DatumGetFloat4(d), out);
		case BRAID_KEY_FLOAT8:
			return braid_enc_float8(DatumGetFloat8(d), out);
		case BRAID_KEY_BOOL:
			out[0] = DatumGetBool(d) ? 1 : 0;
			return 1;
		case BRAID_KEY_UUID:
			memcpy(out, DatumGetUUIDP(d)->data, UUID_LEN);
			return UUID_LEN;
		default:
			elog(ERROR, "unexpected braidsort key kind %d", (int) kind);
	}
	return 0;					/* keep compiler quiet */
}

/*
 * braid_encode_key
 *		Encode one row's sort columns into buf; returns the key length.
 *
 * Varlena values are detoasted in CurrentMemoryContext, which the caller
 * resets per row.
 */
size_t
braid_encode_key(const BraidKeyColumn *cols, int ncols,
				 const Datum *values, const bool *isnull,
				 BraidKeyBuffer *buf)
{
	size_t		len = 0;
	int			last_collated = -1;
	SegmentCursor seg = {0, BRAID_COLLATED_HEADER, true};

	for (int i = 0; i < ncols; i++)
		if (BRAID_KEY_IS_COLLATED(cols[i].kind))
			last_collated = i;
	if (last_collated >= 0)
	{
		reserve(buf, 0, BRAID_COLLATED_HEADER);
		len = BRAID_COLLATED_HEADER;
	}
	buf->sortable = 0;

	for (int i = 0; i < ncols; i++)
	{
		const BraidKeyColumn *col = &cols[i];
		Datum		d = values[i];
		uint8	   *out;
		size_t		n = 0;

		if (BRAID_KEY_IS_COLLATED(col->kind))
		{
			len = encode_collated(col, d, isnull[i], i < last_collated,
								  &seg, buf, len);
			continue;
		}

		if (isnull[i])
		{
			reserve(buf, len, 1);
			buf->data[len++] = col->nulls_first ? BRAID_NULL_FIRST_MARK : BRAID_NULL_LAST_MARK;
			continue;
		}

#ifdef USE_ICU
		if (col->kind == BRAID_KEY_TEXT_ICU || col->kind == BRAID_KEY_BPCHAR_ICU)
		{
			struct varlena *v = PG_DETOAST_DATUM_PACKED(d);
			const char *p = VARDATA_ANY(v);
			size_t		vlen = VARSIZE_ANY_EXHDR(v);

			/* bpchar compares without trailing spaces under any collation */
			if (col->kind == BRAID_KEY_BPCHAR_ICU)
				while (vlen > 0 && p[vlen - 1] == ' ')
					vlen--;
			reserve(buf, len, 1);
			buf->data[len] = BRAID_NOT_NULL_MARK;
			n = encode_icu((pg_locale_t) col->locale, p, vlen, buf, len + 1);
			out = buf->data + len + 1;
		}
		else
#endif
		if (col->kind == BRAID_KEY_NUMERIC)
		{
			struct varlena *v = PG_DETOAST_DATUM(d);

			reserve(buf, len, 1 + VARSIZE(v) + 8);
			out = buf->data + len;
			*out++ = BRAID_NOT_NULL_MARK;
			n = encode_numeric(v, out);
		}
		else if (col->kind == BRAID_KEY_BYTEA || col->kind == BRAID_KEY_TEXT ||
				 col->kind == BRAID_KEY_BPCHAR)
		{
			struct varlena *v = PG_DETOAST_DATUM_PACKED(d);
			const uint8 *p = (const uint8 *) VARDATA_ANY(v);
			size_t		vlen = VARSIZE_ANY_EXHDR(v);

			if (col->kind == BRAID_KEY_BPCHAR)
			{
				/* bpchar compares without trailing spaces (bcTruelen) */
				while (vlen > 0 && p[vlen - 1] == ' ')
					vlen--;
			}
			reserve(buf, len, 1 + 2 * vlen + 2);
			out = buf->data + len;
			*out++ = BRAID_NOT_NULL_MARK;
			if (col->kind == BRAID_KEY_BYTEA)
				n = braid_enc_binary_bytes(p, vlen, out);
			else
				n = braid_enc_cstring_bytes(p, vlen, out);
		}
		else
		{
			reserve(buf, len, 1 + 16);
			out = buf->data + len;
			*out++ = BRAID_NOT_NULL_MARK;
			n = encode_fixed(col->kind, d, out);
		}
		if (col->descending)
			braid_invert_bytes(out, n);
		len += 1 + n;
	}
	if (last_collated < 0)
		buf->sortable = len;
	return len;
}

/*
 * mem_then_len: memcmp, then the shorter first: the order of encodings.
 */
static inline int
mem_then_len(const uint8 *a, size_t la, const uint8 *b, size_t lb)
{
	int			c = memcmp(a, b, Min(la, lb));

	return c != 0 ? c : (la > lb) - (la < lb);
}

/*
 * braid_compare_collated
 *		Order two full keys with collated columns (among cols[0..ncols);
 *		layout in the file header): the memcmp-ordered heads, then for each
 *		collated column -- both values not null -- the strings as
 *		PostgreSQL's varstr_cmp() orders them: strcoll_l(), and strcmp()
 *		when the collation calls different strings equal; then the segment
 *		after it.  Pure libc: safe on the sort threads.  memo (NULL: none)
 *		is a loser-tree node's memory of the last two strings it ordered by
 *		a collation (core/collmemo.h), which answers when they come again;
 *		it is the caller's, on one thread.
 */
int
braid_compare_collated(const uint8 *a, uint32 la, const uint8 *b, uint32 lb,
					   const BraidKeyColumn *cols, int ncols, BraidCollMemo *memo)
{
	uint32		ga = braid_get_be32(a),
				gb = braid_get_be32(b);
	const uint8 *ra = a + BRAID_COLLATED_HEADER,
			   *rb = b + BRAID_COLLATED_HEADER;
	int			c;

	c = mem_then_len(ra, ga, rb, gb);
	if (c != 0)
		return c;
	ra += ga;
	rb += gb;

	for (int i = 0; i < ncols; i++)
	{
		const BraidKeyColumn *col = &cols[i];
		uint32		sa,
					sb;
		bool		more = false;

		if (!BRAID_KEY_IS_COLLATED(col->kind))
			continue;

		/* equal segments so far: the same null mark, just before */
		sa = braid_get_be32(ra);
		sb = braid_get_be32(rb);
		ra += 4;
		rb += 4;
		if (ra[-5] == BRAID_NOT_NULL_MARK &&
			!(sa == sb && memcmp(ra, rb, sa) == 0))
		{
			/* both strings end in a zero byte */
			c = braid_coll_order(memo, i, (locale_t) col->locale,
								 (const char *) ra, sa, (const char *) rb, sb);
			return col->descending ? -c : c;
		}
		ra += sa + 1;
		rb += sb + 1;

		for (int j = i + 1; j < ncols; j++)
			if (BRAID_KEY_IS_COLLATED(cols[j].kind))
				more = true;
		if (!more)
			break;
		ga = braid_get_be32(ra);
		gb = braid_get_be32(rb);
		ra += BRAID_COLLATED_LENGTH;
		rb += BRAID_COLLATED_LENGTH;
		c = mem_then_len(ra, ga, rb, gb);
		if (c != 0)
			return c;
		ra += ga;
		rb += gb;
	}

	/* equal up to the last collated column: the later keys decide */
	return mem_then_len(ra, la - (ra - a), rb, lb - (rb - b));
}

/* as_sentence: a reason as an errdetail sentence (its first letter upper case) */
static char *
as_sentence(const char *why)
{
	char	   *s = pstrdup(why);

	s[0] = pg_toupper((unsigned char) s[0]);
	return s;
}

/*
 * braidsort_normalized_key(value anyelement, descending bool,
 *							nulls_first bool) returns bytea
 *
 * The normalized key braidsort would sort "value" by, using the type's
 * default ordering and the collation of the call.  Errors if braidsort has
 * no exact encoder for the type/collation.
 */
Datum
braidsort_normalized_key(PG_FUNCTION_ARGS)
{
	Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, 0);
	bool		descending;
	bool		nulls_first;
	TypeCacheEntry *typentry;
	Oid			sortop;
	BraidKeyColumn col;
	char	   *why = NULL;
	BraidKeyBuffer buf;
	Datum		value = PG_ARGISNULL(0) ? (Datum) 0 : PG_GETARG_DATUM(0);
	bool		isnull = PG_ARGISNULL(0);
	size_t		len;
	bytea	   *result;

	/*
	 * A NULL value has a key (where NULLs sort), and a NULL nulls_first is
	 * documented as ORDER BY's default; a NULL direction is neither, and
	 * gives NULL as a strict function would, not a guess.
	 */
	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	descending = PG_GETARG_BOOL(1);
	nulls_first = PG_ARGISNULL(2) ? descending : PG_GETARG_BOOL(2);
	if (!OidIsValid(argtype))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not determine the type of the value to encode")));

	typentry = lookup_type_cache(argtype, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	sortop = descending ? typentry->gt_opr : typentry->lt_opr;
	if (!OidIsValid(sortop))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("type %s has no default ordering", format_type_be(argtype))));

	if (braid_key_column_for(sortop, PG_GET_COLLATION(), nulls_first, &col, &why) &&
		BRAID_KEY_IS_COLLATED(col.kind))
	{
		why = psprintf("type %s under collation \"%s\" is ordered by strcoll(), not by its bytes",
					   format_type_be(argtype), get_collation_name(PG_GET_COLLATION()));
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("braidsort has no exact key encoder for type %s",
						format_type_be(argtype)),
				 errdetail("%s.", as_sentence(why)),
				 errhint("braidsort sorts such keys with the collation's comparator; they have no normalized key.")));
	}
	if (why != NULL)
	{
		Oid			opfamily;
		Oid			opcintype;
		BraidOrderDirection strategy;

		/*
		 * an enum's, array's, range's or composite's ordering is its
		 * pseudo-type operator class's: the detail names the value's type
		 */
		if (get_ordering_op_properties(sortop, &opfamily, &opcintype, &strategy) &&
			get_typtype(opcintype) == TYPTYPE_PSEUDO)
			why = psprintf("type %s has no exact key encoding", format_type_be(argtype));
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("braidsort has no exact key encoder for type %s",
						format_type_be(argtype)),
				 errdetail("%s.", as_sentence(why)),
				 errhint("Sorts on such keys are left to PostgreSQL's own sort.")));
	}

	buf.cap = 64;
	buf.data = palloc(buf.cap);
	len = braid_encode_key(&col, 1, &value, &isnull, &buf);

	result = (bytea *) palloc(VARHDRSZ + len);
	SET_VARSIZE(result, VARHDRSZ + len);
	memcpy(VARDATA(result), buf.data, len);
	PG_RETURN_BYTEA_P(result);
}
