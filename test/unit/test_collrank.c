/*-------------------------------------------------------------------------
 *
 * test_collrank.c
 *	  Unit tests of src/core/collrank.c, the rank prefixes of collated keys.
 *
 * Keys are built in the collated layout of keys.c (heads, strings under
 * en_US.UTF-8, segments, later keys; 4-byte lengths), with repeats, NULLs,
 * case and accent variants, descending keys, one to three collated keys.  After
 * braid_rank_prefixes the rewritten prefixes never contradict a reference
 * comparison of the full keys (written here from the layout, as
 * braid_compare_collated orders it): prefix a < prefix b implies key a <
 * key b; so the IndexMap sort with the full comparison as tie-break yields
 * the reference order.  A memory cap too small for the first key's strings
 * leaves every prefix as it was; one that fits only the first key ranks
 * only it.
 *
 * test/unit/test_collrank.c
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include <locale.h>

#include "core/collrank.h"
#include "core/indexmap.h"
#include "core/keycodec.h"

#define KEY_ROOM 256

/* The keys of one test: their layout's parameters, then the keys. */
typedef struct TestKeys
{
	int			nkeys;			/* collated keys */
	BraidRankKey keys[3];
	uint8_t    *key;			/* n keys of KEY_ROOM bytes */
	uint32_t   *len;
} TestKeys;

static const char *const common[] = {
	"Smith", "smith", "Smíth", "O'Brien", "OBrien", "van der Berg", "Van Buren",
	"Émile", "emile", "Müller", "Muller", "de la Cruz", "", "a", "A", "ab", "Ab",
	"Østergaard", "St. John", "Jean-Luc", "jean luc", "Zoë", "zoe"
};

/* be32, rd32: the layout's lengths, big-endian. */
static void
be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) (v >> 24);
	p[1] = (uint8_t) (v >> 16);
	p[2] = (uint8_t) (v >> 8);
	p[3] = (uint8_t) v;
}

static uint32_t
rd32(const uint8_t *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* L: bytes of a head's or segment's length */
#define L BRAID_RANK_LAYOUT_LENGTH

/* The letters of random strings: the first tail_letters of them. */
static const char *const letters[] = {"a", "A", "b", "B", "é", "c", " ", "-"};

/*
 * random_string
 *		A string: often a common one (skewed), else a random one of 1 to 6
 *		of the first tail_letters letters, so there are both repeats and a
 *		tail; with tail_letters 0, always a random one of 8 to 12 letters
 *		(nearly all distinct).
 */
/* Put in front of every random string, if not NULL (long strings). */
static const char *case_lead;

static size_t random_tail(char *out, size_t tail_letters);

static size_t
random_string(char *out, size_t tail_letters)
{
	size_t		lead = case_lead ? strlen(case_lead) : 0;

	if (lead > 0)
		memcpy(out, case_lead, lead);
	return lead + random_tail(out + lead, tail_letters);
}

/* random_tail: random_string's string, without the lead. */
static size_t
random_tail(char *out, size_t tail_letters)
{
	size_t		ncommon = sizeof(common) / sizeof(common[0]);
	size_t		n;

	if (tail_letters > 0 && rng_below(100) < 70)
	{
		const char *s = common[rng_below(ncommon) * rng_below(ncommon) / ncommon];

		strcpy(out, s);
		return strlen(s);
	}
	n = tail_letters > 0 ? 1 + rng_below(6) : 8 + rng_below(5);
	out[0] = 0;
	for (size_t i = 0; i < n; i++)
		strcat(out, letters[rng_below(tail_letters > 0 ? tail_letters : 8)]);
	return strlen(out);
}

/* null_mark: a key's null mark (NULLs now and then, first or last). */
static uint8_t
null_mark(bool *isnull)
{
	uint64_t	r = rng_below(20);

	*isnull = r < 2;
	return r == 0 ? BRAID_NULL_FIRST_MARK : r == 1 ? BRAID_NULL_LAST_MARK :
		BRAID_NOT_NULL_MARK;
}

/*
 * build_key
 *		One key: [H][head: 0-1 random bytes + null mark] then per collated
 *		key [len][string][0], a segment of 1 fixed byte + the next null mark,
 *		and 2 bytes of later keys after the last.  The first key's random
 *		strings use tail_letters letters (fewer: fewer distinct strings),
 *		the others' 8.
 */
static uint32_t
build_key(uint8_t *k, int nkeys, bool with_head, size_t tail_letters)
{
	uint32_t	pos = L;
	uint32_t	seg_at = 0;
	bool		isnull;

	if (with_head)
		k[pos++] = (uint8_t) rng_below(3);
	k[pos++] = null_mark(&isnull);
	be32(k + seg_at, pos - L);
	for (int j = 0; j < nkeys; j++)
	{
		char		s[160];
		size_t		slen = isnull ? 0 : random_string(s, j == 0 ? tail_letters : 8);

		be32(k + pos, (uint32_t) slen);
		memcpy(k + pos + 4, s, slen);
		k[pos + 4 + slen] = 0;
		pos += 4 + (uint32_t) slen + 1;
		if (j < nkeys - 1)
		{
			seg_at = pos;
			pos += L;
			k[pos++] = (uint8_t) rng_below(2);
			k[pos++] = null_mark(&isnull);
			be32(k + seg_at, pos - seg_at - L);
		}
	}
	k[pos++] = (uint8_t) rng_below(4);
	k[pos++] = (uint8_t) rng_below(256);
	return pos;
}

/* mem_then_len: memcmp, then the shorter first. */
static int
mem_then_len(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int			c = memcmp(a, b, la < lb ? la : lb);

	return c != 0 ? sign(c) : (la > lb) - (la < lb);
}

/*
 * reference_compare
 *		The order of two full keys, read from the layout as
 *		braid_compare_collated reads it.
 */
static int
reference_compare(const TestKeys *tk, const uint8_t *a, uint32_t la,
				  const uint8_t *b, uint32_t lb)
{
	uint32_t	ga = rd32(a),
				gb = rd32(b);
	const uint8_t *ra = a + L,
			   *rb = b + L;
	int			c = mem_then_len(ra, ga, rb, gb);

	if (c != 0)
		return c;
	ra += ga;
	rb += gb;
	for (int j = 0; j < tk->nkeys; j++)
	{
		uint32_t	sa = rd32(ra);
		uint32_t	sb = rd32(rb);

		if (ra[-1] == BRAID_NOT_NULL_MARK)
		{
			c = strcoll_l((const char *) ra + 4, (const char *) rb + 4, tk->keys[j].locale);
			if (c == 0)
				c = strcmp((const char *) ra + 4, (const char *) rb + 4);
			c = sign(c);
			if (c != 0)
				return tk->keys[j].descending ? -c : c;
		}
		ra += 4 + sa + 1;
		rb += 4 + sb + 1;
		if (j == tk->nkeys - 1)
			break;
		ga = rd32(ra);
		gb = rd32(rb);
		c = mem_then_len(ra + L, ga, rb + L, gb);
		if (c != 0)
			return c;
		ra += L + ga;
		rb += L + gb;
	}
	return mem_then_len(ra, la - (ra - a), rb, lb - (rb - b));
}

/* Entries: [prefix][index of the key: 8][ref: 8]. */
typedef struct EntryArgs
{
	const TestKeys *tk;
	uint32_t	prefix_len;
} EntryArgs;

static uint64_t
entry_index(const uint8_t *entry, uint32_t prefix_len)
{
	uint64_t	i;

	memcpy(&i, entry + prefix_len, 8);
	return i;
}

static const uint8_t *
key_of(const uint8_t *entry, uint32_t *len, void *arg)
{
	const EntryArgs *ea = arg;
	uint64_t	i = entry_index(entry, ea->prefix_len);

	*len = ea->tk->len[i];
	return ea->tk->key + i * KEY_ROOM;
}

static int
full_tiebreak(const uint8_t *a, const uint8_t *b, void *arg)
{
	uint32_t	la,
				lb;
	const uint8_t *ka = key_of(a, &la, arg);
	const uint8_t *kb = key_of(b, &lb, arg);

	return reference_compare(((const EntryArgs *) arg)->tk, ka, la, kb, lb);
}

/*
 * test_alloc, test_free: collrank.c's memory, each block's size kept in
 * front of it, so that what is still held after a call can be checked.
 */
static size_t live_bytes;

static void *
test_alloc(size_t size, void *arg)
{
	char	   *p = malloc(size + 16);

	(void) arg;
	memcpy(p, &size, sizeof(size));
	live_bytes += size;
	return p + 16;
}

static void
test_free(void *p, void *arg)
{
	size_t		size;

	(void) arg;
	memcpy(&size, (char *) p - 16, sizeof(size));
	live_bytes -= size;
	free((char *) p - 16);
}

/*
 * The sort key transform run_case passes (NULL: strxfrm_l), its threads,
 * and its result.
 */
static size_t (*case_xfrm) (char *dst, const char *src, size_t n, locale_t locale);
static int	case_threads = 4;
static BraidRankResult case_result;

/* byte_xfrm: a "sort key" in byte order, which en_US.UTF-8 does not follow. */
static size_t
byte_xfrm(char *dst, const char *src, size_t n, locale_t locale)
{
	size_t		len = strlen(src);

	(void) locale;
	if (n > len)
		memcpy(dst, src, len + 1);
	return len;
}

/* reversed_xfrm: strxfrm_l's sort key with every byte inverted. */
static size_t
reversed_xfrm(char *dst, const char *src, size_t n, locale_t locale)
{
	size_t		len = strxfrm_l(dst, src, n, locale);

	if (n > len)
		for (size_t i = 0; i < len; i++)
			dst[i] = (char) (0xff - (uint8_t) dst[i]);
	return len;
}

/* long_xfrm: strxfrm_l's sort key with 2000 more bytes: past the buffer. */
static size_t
long_xfrm(char *dst, const char *src, size_t n, locale_t locale)
{
	char		real[1024];
	size_t		len = strxfrm_l(real, src, sizeof(real), locale);

	if (len >= sizeof(real))
		return len + 2000;		/* not in the test's strings */
	if (n > len + 2000)
	{
		memcpy(dst, real, len);
		memset(dst + len, 1, 2000);
		dst[len + 2000] = 0;
	}
	return len + 2000;
}

/*
 * run_case
 *		n keys, ranked with the given cap, checked for the prefix property
 *		and sorted; returns the distinct strings of the keys ranked.
 */
static size_t
run_case(Check *c, locale_t loc, size_t n, int nkeys, uint32_t prefix_len,
		 bool with_head, bool desc, size_t cap, size_t tail_letters,
		 int expect_ranked, int expect_exact)
{
	TestKeys	tk;
	EntryArgs	ea;
	BraidRankSpec spec;
	BraidRankResult result;
	BraidSortSpec sort = {0};
	uint32_t	stride = prefix_len + 16;
	uint8_t    *entries = xmalloc(n * stride);
	uint8_t    *before = xmalloc(n * stride);
	bool		prefix_ok = true,
				order_ok = true,
				same_refs = true;
	bool	   *seen = calloc(n, 1);

	tk.nkeys = nkeys;
	for (int j = 0; j < nkeys; j++)
	{
		tk.keys[j].locale = loc;
		tk.keys[j].descending = desc && j % 2 == 0;
	}
	tk.key = xmalloc(n * KEY_ROOM);
	tk.len = xmalloc(n * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
	{
		uint8_t    *e = entries + i * stride;
		uint32_t	head;
		uint64_t	ref;

		tk.len[i] = build_key(tk.key + i * KEY_ROOM, nkeys, with_head, tail_letters);
		/* the prefix as the build writes it: the head, zero-padded */
		head = rd32(tk.key + i * KEY_ROOM);
		memset(e, 0, prefix_len);
		memcpy(e, tk.key + i * KEY_ROOM + L, head < prefix_len ? head : prefix_len);
		ref = i;
		memcpy(e + prefix_len, &ref, 8);
		ref = i ^ 0x5555;
		memcpy(e + prefix_len + 8, &ref, 8);
	}
	memcpy(before, entries, n * stride);

	ea.tk = &tk;
	ea.prefix_len = prefix_len;
	spec.prefix_len = prefix_len;
	spec.stride = stride;
	spec.nkeys = nkeys;
	spec.keys = tk.keys;
	spec.memory_cap = cap;
	spec.threads = case_threads;	/* the distinct strings' sort, from 65536 */
	spec.key_of = key_of;
	spec.key_arg = &ea;
	spec.alloc = test_alloc;
	spec.free = test_free;
	spec.alloc_arg = NULL;
	spec.xfrm = case_xfrm;
	spec.interrupt_check = NULL;
	spec.interrupt_arg = NULL;
	live_bytes = 0;
	braid_rank_prefixes(entries, n, &spec, &result);
	case_result = result;
	check_that(c, live_bytes == 0, "n=%zu: %zu bytes of dictionaries still held", n,
			   live_bytes);

	check_that(c, result.keys_ranked == expect_ranked,
			   "n=%zu keys=%d prefix=%u cap=%zu: ranked %d keys, expected %d",
			   n, nkeys, prefix_len, cap, result.keys_ranked, expect_ranked);
	if (expect_exact >= 0)
		check_that(c, result.exact == (expect_exact == 1),
				   "n=%zu keys=%d prefix=%u: exact %d, expected %d", n, nkeys, prefix_len,
				   result.exact, expect_exact);
	if (result.keys_ranked == 0)
		check_that(c, memcmp(before, entries, n * stride) == 0,
				   "n=%zu: nothing ranked, yet prefixes changed", n);
	check_that(c, result.peak_bytes <= cap, "dictionaries took %zu bytes over a cap of %zu",
			   result.peak_bytes, cap);

	/* the property: prefix order never contradicts key order */
	for (int t = 0; t < 20000 && prefix_ok; t++)
	{
		size_t		i = rng_below(n),
					j = rng_below(n);
		const uint8_t *a = entries + i * stride,
				   *b = entries + j * stride;
		int			p = sign(memcmp(a, b, prefix_len));
		int			k = full_tiebreak(a, b, &ea);

		if (p == 0 && result.exact && k != 0)
			prefix_ok = check_that(c, false, "exact, yet equal prefixes of different keys");
		if (p != 0 && p != k)
		{
			char		ha[80],
						hb[80];

			prefix_ok = check_that(c, false, "prefixes %s < %s but keys compare %d",
								   hex(p < 0 ? a : b, prefix_len, ha, sizeof(ha)),
								   hex(p < 0 ? b : a, prefix_len, hb, sizeof(hb)), p < 0 ? k : -k);
		}
	}

	/* the sort: prefix, then the full keys (exact: the prefix alone) */
	sort.keylen = prefix_len;
	sort.stride = stride;
	sort.tiebreak = result.exact ? NULL : full_tiebreak;
	sort.tiebreak_arg = &ea;
	braid_indexmap_sort(entries, n, &sort);
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	idx = entry_index(entries + i * stride, prefix_len);

		if (idx >= n || seen[idx])
			same_refs = false;
		else
			seen[idx] = true;
		if (i > 0 && order_ok && full_tiebreak(entries + (i - 1) * stride, entries + i * stride, &ea) > 0)
			order_ok = check_that(c, false, "n=%zu keys=%d prefix=%u: out of order at %zu", n,
								  nkeys, prefix_len, i);
	}
	check_that(c, same_refs, "n=%zu: the sort lost or repeated entries", n);

	free(seen);
	free(entries);
	free(before);
	free(tk.key);
	free(tk.len);
	return result.strings;
}

/* unit_collrank: rank prefixes of keys under en_US.UTF-8. */
void
unit_collrank(void)
{
	Check		c;
	size_t		strings;
	locale_t	loc = newlocale(LC_COLLATE_MASK, "en_US.UTF-8", (locale_t) 0);

	check_init(&c);
	if (!check_that(&c, loc != (locale_t) 0, "locale en_US.UTF-8 is missing (scripts/install-deps.sh generates it)"))
	{
		check_report(&c, "collrank: the test locale exists");
		return;
	}
	check_that(&c, braid_rank_width(0) == 0 && braid_rank_width(1) == 0 &&
			   braid_rank_width(2) == 1 && braid_rank_width(256) == 1 &&
			   braid_rank_width(257) == 2 && braid_rank_width(65536) == 2 &&
			   braid_rank_width(65537) == 3 && braid_rank_width(1 << 24) == 3 &&
			   braid_rank_width((1 << 24) + 1) == 4, "rank widths");
	check_report(&c, "collrank: rank widths");

	check_init(&c);
	for (int nkeys = 1; nkeys <= 3; nkeys++)
		for (uint32_t prefix = 8; prefix <= 24; prefix += 8)
			for (int v = 0; v < 4; v++)
				run_case(&c, loc, 3000 + rng_below(2000), nkeys, prefix, v & 1, v & 2,
						 (size_t) 1 << 24, 8, nkeys, -1);
	check_report(&c, "collrank: ranked prefixes never contradict the collation, 1-3 keys, "
				 "heads, NULLs, DESC, prefixes of 8-24 bytes");

	check_init(&c);
	/* a few strings only (one byte of rank), many (two bytes) */
	strings = run_case(&c, loc, 60000, 1, 16, true, true, (size_t) 1 << 24, 8, 1, 1);
	check_that(&c, strings > 256 && strings <= 65536, "%zu strings: two bytes of rank", strings);
	/* nearly all distinct: three bytes of rank, sorted on four threads */
	strings = run_case(&c, loc, 100000, 1, 16, false, false, (size_t) 1 << 26, 0, 1, 1);
	check_that(&c, strings > 65536, "%zu strings: three bytes of rank", strings);
	/* the first key's few strings: one byte */
	run_case(&c, loc, 5000, 2, 8, false, false, (size_t) 1 << 24, 2, 2, -1);
	/* whole keys in the prefix, or not: exact or not */
	run_case(&c, loc, 5000, 2, 16, true, false, (size_t) 1 << 24, 8, 2, 1);
	run_case(&c, loc, 5000, 3, 8, true, false, (size_t) 1 << 24, 8, 3, 0);
	check_report(&c, "collrank: one, two and three bytes of rank; exact prefixes when whole "
				 "keys fit, sorted with no tie-break");

	check_init(&c);
	/* too small for the first key: nothing changes */
	run_case(&c, loc, 4000, 2, 16, false, false, 1024, 8, 0, 0);
	/* fewer entries than worth ranking: nothing changes */
	run_case(&c, loc, BRAID_RANK_MIN_ENTRIES - 1, 2, 16, false, false, (size_t) 1 << 24, 8, 0, 0);
	/* room for the first key's few strings, not the second's many */
	run_case(&c, loc, 20000, 2, 16, false, false, 64 * 1024, 2, 1, 0);

	/*
	 * ... and when the first key's strings grow after the second's took the
	 * room
	 */
	run_case(&c, loc, 20000, 2, 16, false, false, 96 * 1024, 3, 1, 0);
	check_report(&c, "collrank: the memory cap leaves keys unranked, in key order");

	check_init(&c);
	case_threads = 1;
	/* strxfrm_l presorts a key's strings where there are enough of them */
	run_case(&c, loc, 20000, 2, 16, true, true, (size_t) 1 << 24, 8, 2, -1);
	check_that(&c, case_result.presorted_keys == 2, "presorted %d keys of 2",
			   case_result.presorted_keys);
	/* a few strings only: compared */
	run_case(&c, loc, 5000, 1, 16, false, false, (size_t) 1 << 24, 2, 1, -1);
	check_that(&c, case_result.presorted_keys == 0 && case_result.strings < 256,
			   "%zu strings, presorted %d keys", case_result.strings,
			   case_result.presorted_keys);
	/* long strings alike in their first 64 bytes (cut inside an 'é'): ties */
	case_lead = "aééééééééééééééééééééééééééééééééééééééééééé";
	run_case(&c, loc, 20000, 1, 16, false, true, (size_t) 1 << 24, 8, 1, -1);
	check_that(&c, case_result.presorted_keys == 1, "long strings: presorted %d keys",
			   case_result.presorted_keys);
	case_lead = NULL;
	/* a transform that does not order as the collation: caught, compared */
	case_xfrm = byte_xfrm;
	run_case(&c, loc, 20000, 2, 16, true, false, (size_t) 1 << 24, 8, 2, -1);
	check_that(&c, case_result.presorted_keys == 0, "byte order: presorted %d keys",
			   case_result.presorted_keys);
	case_xfrm = reversed_xfrm;
	run_case(&c, loc, 20000, 1, 8, false, true, (size_t) 1 << 24, 8, 1, -1);
	check_that(&c, case_result.presorted_keys == 0, "reversed: presorted %d keys",
			   case_result.presorted_keys);
	/* sort keys longer than the transform's buffer: compared */
	case_xfrm = long_xfrm;
	run_case(&c, loc, 20000, 2, 16, false, false, (size_t) 1 << 24, 8, 2, -1);
	check_that(&c, case_result.presorted_keys == 0, "long sort keys: presorted %d keys",
			   case_result.presorted_keys);

	/*
	 * no memory for the presort's entries beside the dictionary (the same
	 * keys again, with a cap just under what the presort took): compared
	 */
	case_xfrm = NULL;
	rng_reset();
	run_case(&c, loc, 20000, 1, 16, false, false, (size_t) 1 << 24, 8, 1, -1);
	check_that(&c, case_result.presorted_keys == 1, "presorted %d keys of 1",
			   case_result.presorted_keys);
	rng_reset();
	run_case(&c, loc, 20000, 1, 16, false, false, case_result.peak_bytes - 1, 8, 1, -1);
	check_that(&c, case_result.presorted_keys == 0, "no room: presorted %d keys",
			   case_result.presorted_keys);
	/* on four threads the comparison sort is cheaper below ~2^14 strings */
	case_threads = 4;
	run_case(&c, loc, 20000, 1, 16, false, false, (size_t) 1 << 24, 8, 1, -1);
	check_that(&c, case_result.presorted_keys == 0 && case_result.strings < 16384,
			   "four threads, %zu strings: presorted %d keys", case_result.strings,
			   case_result.presorted_keys);
	check_that(&c, !braid_rank_presorts(255, 1) && braid_rank_presorts(256, 1) &&
			   !braid_rank_presorts(8192, 4) && braid_rank_presorts(1 << 14, 4) &&
			   !braid_rank_presorts((size_t) 1 << 26, 8),
			   "when strings are presorted");
	check_report(&c, "collrank: strings presorted by their sort keys (long strings cut), "
				 "checked by the collation: a wrong transform, sort keys past the buffer, "
				 "no memory and threads fall back to comparisons");
	freelocale(loc);
}
