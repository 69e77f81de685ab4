/*-------------------------------------------------------------------------
 *
 * test_indexmap.c
 *	  Unit tests of src/core/indexmap.c, the IndexMap entry sort.
 *
 * braid_indexmap_sort yields a permutation of its input that is ordered by
 * the key prefix, for many sizes, key lengths, strides and key
 * distributions; it uses the tie-break callback correctly (only on equal
 * prefixes, O(n log n) calls on duplicates) and calls the interrupt hook
 * on large sorts; the threaded sort gives exactly the serial result.
 *
 * test/unit/test_indexmap.c
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include "core/indexmap.h"
#include "core/keycodec.h"

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

					/*
					 * the big size only with a stride-exact layout, to save
					 * time
					 */
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
 * indexmap: interrupt hook and threaded sort
 * ---------------------------------------------------------------------
 */

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

/* unit_indexmap: run the tests of this module, in order. */
void
unit_indexmap(void)
{
	test_entry_compare();
	test_sort_prefix();
	test_sort_tiebreak();
	test_tiebreak_duplicates();
	test_sort_interrupt_hook();
	test_sort_parallel();
	test_sort_parallel_uneven();
	test_sort_parallel_ties();
}
