/*-------------------------------------------------------------------------
 *
 * collrank.c
 *	  Rank prefixes: keys under a libc collation made radix-sortable within
 *	  one sort.
 *
 * A key under a libc collation has no byte encoding whose memcmp() order is
 * the collation's (keys.c), so its IndexMap prefix holds only the key's
 * memcmp-ordered head, and a sort by it is a quicksort calling strcoll_l()
 * in every comparison: n log n calls, each behind a load of the full key.
 * Yet the strings of one sort are mostly repeats (names, cities, statuses).
 * Within the entries sorted together, a string's rank among the distinct
 * strings of its key is an exact encoding: ranks order as the collation
 * does (strcoll_l(), then strcmp(), as braid_compare_collated() and
 * PostgreSQL's varstr_cmp()) over the strings present.  So before such a
 * sort:
 *
 *	1. one pass over the entries' full keys, in build order (the key store's
 *	   order, so mostly sequential), gathers each collated key's distinct
 *	   strings in a hash table;
 *	2. each key's distinct strings are sorted by the collation: d log d
 *	   strcoll_l() calls instead of n log n (with the IndexMap's own sort,
 *	   on the sort threads);
 *	3. a second pass rewrites each entry's prefix as the key's layout with
 *	   each collated string replaced by its big-endian rank, of one width
 *	   per key (braid_rank_width), truncated to the prefix, zero-padded:
 *
 *		[head][rank 1][segment 1][rank 2] ... [later keys]
 *
 * Heads, segments and later keys are prefix-free memcmp encodings (keys.c)
 * and a key's ranks all have one width, so memcmp() of two rewritten
 * prefixes never contradicts braid_compare_collated() on the full keys.
 * Equal prefixes still go to the caller's tie-break, which then mostly
 * finds equal strings (memcmp, no strcoll_l()) -- unless every key was
 * ranked and fitted whole in its prefix: then equal prefixes are equal keys
 * and the result says the sort needs no tie-break at all ("exact").  Ranks
 * mean nothing outside
 * the call: a rewritten prefix is only compared within the sort that
 * follows (runs and merges compare full keys).
 *
 * The dictionaries are bounded by the caller's memory cap.  A key whose
 * distinct strings would pass it is not ranked, nor are the keys after it
 * (their ranks would sit behind a string the prefix cannot order); with no
 * key ranked nothing is rewritten, and the caller sorts as before.
 *
 * Pure C and libc: no PostgreSQL calls; memory through the caller's
 * allocator, which returns NULL rather than failing.
 *
 * src/core/collrank.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "core/collrank.h"
#include "core/indexmap.h"
#include "core/keycodec.h"

/* Bytes of a head's or segment's length (keys.c): big-endian. */
#define LAYOUT_HEADER	BRAID_RANK_LAYOUT_LENGTH

/*
 * One distinct string: where it is in the caller's key store, and its first
 * 8 bytes, so that a lookup of a short string (most names) compares it
 * without a cache miss into the key store.  24 bytes, a multiple of 8, so
 * the IndexMap sort moves it a word at a time.
 */
typedef struct RankString
{
	const uint8_t *str;			/* followed by a zero byte */
	uint64_t	first;			/* first_word() */
	uint32_t	len;
	uint32_t	hash;
} RankString;

/*
 * One collated key's distinct strings; a string's rank is its position
 * once sorted.
 */
typedef struct RankDict
{
	RankString *strings;
	size_t		n;
	size_t		cap;
	uint32_t   *slots;			/* position + 1; 0 is empty */
	size_t		nslots;			/* a power of two, at least 2 n */
	uint32_t	width;			/* bytes of rank in the prefix */
} RankDict;

/* The collated layout of one full key, cut into its parts. */
typedef struct KeyParts
{
	const uint8_t *head;
	uint32_t	head_len;
	struct
	{
		const uint8_t *str;
		uint32_t	len;
		bool		null;
		const uint8_t *after;	/* the segment after it, or the later keys */
		uint32_t	after_len;
	}			key[BRAID_RANK_MAX_KEYS];
} KeyParts;

typedef struct RankState
{
	const BraidRankSpec *spec;
	RankDict	dict[BRAID_RANK_MAX_KEYS];
	size_t		bytes;			/* dictionary memory held */
	size_t		peak;
} RankState;

/*
 * parse_key
 *		Cut a full key in the collated layout of keys.c
 *
 *		[H: 4][head: H][length: 4][string 1][0x00][G1: 4][segment 1: G1] ...
 *		[length: 4][string n][0x00][later keys, to the end]
 *
 *		into its parts.  A key's null mark is the last byte of the head or
 *		segment before it.  False if the key is not in that layout (then
 *		nothing is ranked).
 */
static bool
parse_key(const uint8_t *key, uint32_t len, int nkeys, KeyParts *parts)
{
	const uint8_t *p = key;
	const uint8_t *end = key + len;
	const uint8_t *before;
	uint32_t	before_len;

	if (len < LAYOUT_HEADER)
		return false;
	parts->head_len = braid_get_be32(p);
	if (parts->head_len > len - LAYOUT_HEADER)
		return false;
	parts->head = p + LAYOUT_HEADER;
	p = parts->head + parts->head_len;
	before = parts->head;
	before_len = parts->head_len;
	for (int j = 0; j < nkeys; j++)
	{
		uint32_t	slen;

		if (before_len == 0 || end - p < 5)
			return false;
		slen = braid_get_be32(p);
		/* the string and its zero byte, which strcoll_l() reads to */
		if (slen > (size_t) (end - p) - 5 || p[4 + (size_t) slen] != 0)
			return false;
		parts->key[j].null = before[before_len - 1] != BRAID_NOT_NULL_MARK;
		parts->key[j].str = p + 4;
		parts->key[j].len = slen;
		p += 4 + (size_t) slen + 1;
		if (j < nkeys - 1)
		{
			if (end - p < LAYOUT_HEADER)
				return false;
			parts->key[j].after_len = braid_get_be32(p);
			if (parts->key[j].after_len > (size_t) (end - p) - LAYOUT_HEADER)
				return false;
			parts->key[j].after = p + LAYOUT_HEADER;
			p = parts->key[j].after + parts->key[j].after_len;
		}
		else
		{
			parts->key[j].after = p;
			parts->key[j].after_len = (uint32_t) (end - p);
		}
		before = parts->key[j].after;
		before_len = parts->key[j].after_len;
	}
	return true;
}

/* hash_string: a 32-bit hash of a short string, a word at a time. */
static inline uint32_t
hash_string(const uint8_t *s, uint32_t len)
{
	uint64_t	h = UINT64_C(0x9E3779B97F4A7C15) ^ len;
	uint64_t	w;

	while (len >= 8)
	{
		memcpy(&w, s, 8);
		h = (h ^ w) * UINT64_C(0xBF58476D1CE4E5B9);
		h ^= h >> 31;
		s += 8;
		len -= 8;
	}
	if (len > 0)
	{
		w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * UINT64_C(0xBF58476D1CE4E5B9);
		h ^= h >> 31;
	}
	h *= UINT64_C(0x94D049BB133111EB);
	h ^= h >> 29;
	return (uint32_t) (h >> 32);
}

/* first_word: a string's first 8 bytes, zero-padded. */
static inline uint64_t
first_word(const uint8_t *s, uint32_t len)
{
	uint64_t	w = 0;

	memcpy(&w, s, len < 8 ? len : 8);
	return w;
}

/* rank_alloc: memory within the cap, or NULL. */
static void *
rank_alloc(RankState *rs, size_t size)
{
	void	   *p;

	if (size > rs->spec->memory_cap - rs->bytes)
		return NULL;
	p = rs->spec->alloc(size, rs->spec->alloc_arg);
	if (p == NULL)
		return NULL;
	rs->bytes += size;
	if (rs->bytes > rs->peak)
		rs->peak = rs->bytes;
	return p;
}

/* rank_release: give back what rank_alloc gave. */
static void
rank_release(RankState *rs, void *p, size_t size)
{
	if (p == NULL)
		return;
	rs->spec->free(p, rs->spec->alloc_arg);
	rs->bytes -= size;
}

/* dict_release: forget a key's dictionary. */
static void
dict_release(RankState *rs, RankDict *d)
{
	rank_release(rs, d->strings, d->cap * sizeof(RankString));
	rank_release(rs, d->slots, d->nslots * sizeof(uint32_t));
	memset(d, 0, sizeof(*d));
}

/*
 * dict_slot
 *		The slot holding the string, or the empty slot where it would go.
 */
static inline size_t
dict_slot(const RankDict *d, const uint8_t *s, uint32_t len, uint32_t hash,
		  uint64_t first)
{
	size_t		mask = d->nslots - 1;
	size_t		i = hash & mask;

	while (d->slots[i] != 0)
	{
		const RankString *e = &d->strings[d->slots[i] - 1];

		if (e->hash == hash && e->len == len && e->first == first &&
			(len <= 8 || memcmp(e->str + 8, s + 8, len - 8) == 0))
			break;
		i = (i + 1) & mask;
	}
	return i;
}

/* dict_index: put every string in the slots again (they moved or grew). */
static void
dict_index(RankDict *d)
{
	memset(d->slots, 0, d->nslots * sizeof(uint32_t));
	for (size_t p = 0; p < d->n; p++)
	{
		size_t		i = d->strings[p].hash & (d->nslots - 1);

		while (d->slots[i] != 0)
			i = (i + 1) & (d->nslots - 1);
		d->slots[i] = (uint32_t) (p + 1);
	}
}

/*
 * dict_add
 *		Count a string among the key's distinct strings.  False if it is new
 *		and there is no memory for it.
 */
static bool
dict_add(RankState *rs, RankDict *d, const uint8_t *s, uint32_t len)
{
	uint32_t	hash = hash_string(s, len);
	uint64_t	first = first_word(s, len);
	size_t		i;

	if (d->nslots > 0)
	{
		i = dict_slot(d, s, len, hash, first);
		if (d->slots[i] != 0)
			return true;
	}
	if (d->n == UINT32_MAX - 1)
		return false;
	if (d->n == d->cap)
	{
		size_t		cap = d->cap > 0 ? d->cap * 2 : 256;
		RankString *grown = rank_alloc(rs, cap * sizeof(RankString));

		if (grown == NULL)
			return false;
		if (d->n > 0)
			memcpy(grown, d->strings, d->n * sizeof(RankString));
		rank_release(rs, d->strings, d->cap * sizeof(RankString));
		d->strings = grown;
		d->cap = cap;
	}
	if ((d->n + 1) * 2 > d->nslots)
	{
		size_t		nslots = d->nslots > 0 ? d->nslots * 2 : 1024;
		uint32_t   *grown = rank_alloc(rs, nslots * sizeof(uint32_t));

		if (grown == NULL)
			return false;
		rank_release(rs, d->slots, d->nslots * sizeof(uint32_t));
		d->slots = grown;
		d->nslots = nslots;
		dict_index(d);
	}
	i = dict_slot(d, s, len, hash, first);
	d->strings[d->n].str = s;
	d->strings[d->n].first = first;
	d->strings[d->n].len = len;
	d->strings[d->n].hash = hash;
	d->n++;
	d->slots[i] = (uint32_t) d->n;
	return true;
}

/* dict_rank: a string's rank (its position in the sorted dictionary). */
static inline uint32_t
dict_rank(const RankDict *d, const uint8_t *s, uint32_t len)
{
	return d->slots[dict_slot(d, s, len, hash_string(s, len), first_word(s, len))] - 1;
}

/*
 * string_order: two strings by the collation, then by their bytes where
 * it calls different strings equal (as PostgreSQL's varstr_cmp()).
 */
static inline int
string_order(const RankString *x, const RankString *y, const BraidRankKey *key)
{
	int			c = strcoll_l((const char *) x->str, (const char *) y->str, key->locale);

	if (c == 0)
		c = strcmp((const char *) x->str, (const char *) y->str);
	return c;
}

/*
 * compare_strings
 *		The IndexMap sort's comparator over RankStrings: the collation, then
 *		the bytes when it calls different strings equal (as
 *		braid_compare_collated).  Entries may sit on the sort's stack,
 *		unaligned: read them by memcpy.
 */
static int
compare_strings(const uint8_t *a, const uint8_t *b, void *arg)
{
	RankString	x,
				y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return string_order(&x, &y, (const BraidRankKey *) arg);
}

/* Entries between two calls of the interrupt hook. */
#define RANK_INTERRUPT_EVERY 65536

/* check_interrupts: the caller's hook, every RANK_INTERRUPT_EVERY entries. */
static inline void
check_interrupts(const BraidRankSpec *spec, size_t i)
{
	if (spec->interrupt_check != NULL && i % RANK_INTERRUPT_EVERY == RANK_INTERRUPT_EVERY - 1)
		spec->interrupt_check(spec->interrupt_arg);
}

/*
 * Presorting a key's distinct strings by their collation sort keys
 * (sort_by_xfrm): the first XFRM_PREFIX bytes of each string's
 * strxfrm_l(), radix-sorted, ties by the collation.  Measured on the
 * realistic workload's last names (12,000 distinct, en_US.UTF-8, this
 * machine's glibc): strxfrm_l ~280 ns a string (its whole sort key, ~58
 * bytes, of which the first 16 leave 6 ties in 12,000), a strcoll_l()
 * ~80-130 ns; a comparison sort makes ~13 of those a string, the presort
 * one transform and one check, on the calling thread, where the
 * comparison sort runs on the sort threads (braid_rank_presorts).
 */
#define XFRM_PREFIX			16
#define XFRM_BUFFER			1024

/*
 * A string's first XFRM_SOURCE bytes (cut back to a character's start)
 * are what is transformed: the transform costs a string's whole length,
 * and its first bytes are the first characters' weights.  Ties and the
 * check compare the whole strings, so a cut can only cost a tie-break.
 */
#define XFRM_SOURCE			64

/* A string's place in its dictionary, behind its sort key's first bytes. */
typedef struct XfrmEntry
{
	uint8_t		prefix[XFRM_PREFIX];
	uint64_t	pos;			/* in the IndexMap sort's "ref" place */
} XfrmEntry;

/* What the presort's tie-break compares: the strings of one dictionary. */
typedef struct XfrmTie
{
	const RankDict *dict;
	const BraidRankKey *key;
} XfrmTie;

/*
 * compare_positions
 *		The presort's tie-break: the strings of two XfrmEntries whose sort
 *		key prefixes are equal, by the collation.  Entries may sit on the
 *		sort's stack, unaligned: read their positions by memcpy.
 */
static int
compare_positions(const uint8_t *a, const uint8_t *b, void *arg)
{
	const XfrmTie *t = (const XfrmTie *) arg;
	uint64_t	pa,
				pb;

	memcpy(&pa, a + XFRM_PREFIX, sizeof(pa));
	memcpy(&pb, b + XFRM_PREFIX, sizeof(pb));
	return string_order(&t->dict->strings[pa], &t->dict->strings[pb], t->key);
}

/*
 * sort_by_xfrm
 *		Put a key's distinct strings in collation order by their sort keys
 *		(strxfrm_l, or the spec's stand-in), then check every neighbouring
 *		pair by the collation itself.  strxfrm_l() is meant to order as
 *		strcoll_l() does, but glibc has shipped locales where it did not
 *		(why PostgreSQL does not trust it for abbreviated keys): the check
 *		makes the order the collation's whatever the transform did, since
 *		a sequence whose neighbours are in order is sorted.  False, with
 *		the strings as they were, when it fails or memory runs out: the
 *		caller then sorts by comparisons.
 */
static bool
sort_by_xfrm(RankState *rs, RankDict *d, const BraidRankKey *key)
{
	const BraidRankSpec *spec = rs->spec;
	size_t		n = d->n;
	XfrmEntry  *x = rank_alloc(rs, n * sizeof(XfrmEntry));
	BraidSortSpec sort = {0};
	XfrmTie		tie;
	char		buf[XFRM_BUFFER];
	bool		ordered = true;

	if (x == NULL)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		const char *s = (const char *) d->strings[i].str;
		char		cut[XFRM_SOURCE + 1];
		size_t		need;

		check_interrupts(spec, i);
		if (d->strings[i].len > XFRM_SOURCE)
		{
			size_t		len = XFRM_SOURCE;

			/* not inside a UTF-8 character (harmless in other encodings) */
			while (len > 0 && ((uint8_t) s[len] & 0xC0) == 0x80)
				len--;
			memcpy(cut, s, len);
			cut[len] = 0;
			s = cut;
		}
		need = spec->xfrm ? spec->xfrm(buf, s, sizeof(buf), key->locale) :
			strxfrm_l(buf, s, sizeof(buf), key->locale);
		if (need >= sizeof(buf))
		{
			/* the buffer's contents are indeterminate: compare instead */
			rank_release(rs, x, n * sizeof(XfrmEntry));
			return false;
		}
		memset(x[i].prefix, 0, XFRM_PREFIX);
		memcpy(x[i].prefix, buf, need < XFRM_PREFIX ? need : XFRM_PREFIX);
		x[i].pos = i;
	}

	tie.dict = d;
	tie.key = key;
	sort.keylen = XFRM_PREFIX;
	sort.stride = sizeof(XfrmEntry);
	sort.tiebreak = compare_positions;
	sort.tiebreak_arg = &tie;
	sort.interrupt_check = spec->interrupt_check;
	sort.interrupt_arg = spec->interrupt_arg;
	braid_indexmap_sort_parallel((uint8_t *) x, n, &sort, spec->threads);

	for (size_t i = 1; i < n && ordered; i++)
	{
		check_interrupts(spec, i);
		ordered = string_order(&d->strings[x[i - 1].pos], &d->strings[x[i].pos], key) < 0;
	}

	/* the strings into their order: position i takes string x[i].pos */
	if (ordered)
		for (size_t i = 0; i < n; i++)
		{
			RankString	first = d->strings[i];
			size_t		j = i;

			if (x[i].pos == UINT64_MAX)
				continue;
			for (;;)
			{
				size_t		k = (size_t) x[j].pos;

				x[j].pos = UINT64_MAX;
				if (k == i)
				{
					d->strings[j] = first;
					break;
				}
				d->strings[j] = d->strings[k];
				j = k;
			}
		}
	rank_release(rs, x, n * sizeof(XfrmEntry));
	return ordered;
}

/* put_bytes: append to a prefix being written, as much as fits. */
static inline uint32_t
put_bytes(uint8_t *out, uint32_t pos, uint32_t room, const uint8_t *src, uint32_t len)
{
	uint32_t	n = len < room - pos ? len : room - pos;

	memcpy(out + pos, src, n);
	return pos + n;
}

/*
 * braid_rank_prefixes
 *		Rewrite the prefixes of n entries (see the file header), ranking the
 *		leading collated keys whose distinct strings fit the memory cap.
 *		Nothing is rewritten when none does, or the entries are too few.
 */
void
braid_rank_prefixes(uint8_t *entries, size_t n, const BraidRankSpec *spec,
					BraidRankResult *result)
{
	RankState	rs;
	KeyParts	parts;
	int			active = spec->nkeys;
	bool		exact = true;

	memset(result, 0, sizeof(*result));
	if (n < BRAID_RANK_MIN_ENTRIES || spec->nkeys < 1 ||
		spec->nkeys > BRAID_RANK_MAX_KEYS)
		return;
	memset(&rs, 0, sizeof(rs));
	rs.spec = spec;

	/* 1. each key's distinct strings */
	for (size_t i = 0; i < n && active > 0; i++)
	{
		uint32_t	len;
		const uint8_t *key = spec->key_of(entries + i * spec->stride, &len, spec->key_arg);

		check_interrupts(spec, i);
		if (key == NULL || !parse_key(key, len, spec->nkeys, &parts))
		{
			active = 0;
			break;
		}
		for (int j = 0; j < active; j++)
		{
			if (parts.key[j].null ||
				dict_add(&rs, &rs.dict[j], parts.key[j].str, parts.key[j].len))
				continue;

			/*
			 * Out of memory: the keys after this one give theirs up first (a
			 * key's rank is worth nothing without the earlier keys'), then
			 * this one, if it still does not fit.
			 */
			for (int k = active - 1; k > j; k--)
				dict_release(&rs, &rs.dict[k]);
			active = j + 1;
			if (dict_add(&rs, &rs.dict[j], parts.key[j].str, parts.key[j].len))
				continue;
			dict_release(&rs, &rs.dict[j]);
			active = j;
		}
	}

	/* 2. each key's strings in collation order: a string's rank is its place */
	for (int j = 0; j < active; j++)
	{
		RankDict   *d = &rs.dict[j];
		BraidSortSpec sort = {0};

		sort.keylen = 0;
		sort.stride = sizeof(RankString);
		sort.tiebreak = compare_strings;
		sort.tiebreak_arg = (void *) &spec->keys[j];
		if (d->n > 1)
		{
			if (braid_rank_presorts(d->n, spec->threads) &&
				sort_by_xfrm(&rs, d, &spec->keys[j]))
				result->presorted_keys++;
			else
				braid_indexmap_sort_parallel((uint8_t *) d->strings, d->n, &sort,
											 spec->threads);
			dict_index(d);
		}
		d->width = braid_rank_width(d->n);
		result->strings += d->n;
	}

	/*
	 * 3. the prefixes, with ranks in place of strings (each string looked up
	 * again: remembering its place from step 1 would take 4 bytes a key a row
	 * more, beyond the cap)
	 */
	for (size_t i = 0; i < n && active > 0; i++)
	{
		uint8_t    *entry = entries + i * spec->stride;
		uint32_t	len;
		const uint8_t *key = spec->key_of(entry, &len, spec->key_arg);
		uint32_t	room = spec->prefix_len;
		uint32_t	pos;
		size_t		whole;

		check_interrupts(spec, i);
		(void) parse_key(key, len, spec->nkeys, &parts);	/* as in step 1 */
		pos = put_bytes(entry, 0, room, parts.head, parts.head_len);
		whole = parts.head_len;
		for (int j = 0; j < active; j++)
		{
			const RankDict *d = &rs.dict[j];
			uint32_t	rank = 0;
			uint8_t		be[4];

			if (!parts.key[j].null && d->n > 1)
			{
				rank = dict_rank(d, parts.key[j].str, parts.key[j].len);
				if (spec->keys[j].descending)
					rank = (uint32_t) (d->n - 1) - rank;
			}
			braid_put_be32(be, rank);
			pos = put_bytes(entry, pos, room, be + 4 - d->width, d->width);
			pos = put_bytes(entry, pos, room, parts.key[j].after, parts.key[j].after_len);
			whole += d->width + parts.key[j].after_len;
		}
		memset(entry + pos, 0, room - pos);
		if (whole > room)
			exact = false;
	}

	result->keys_ranked = active;
	result->exact = active == spec->nkeys && exact;
	result->peak_bytes = rs.peak;
	for (int j = 0; j < spec->nkeys; j++)
		dict_release(&rs, &rs.dict[j]);
}
