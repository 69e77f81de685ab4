/*-------------------------------------------------------------------------
 *
 * test_runrecord.c
 *	  Unit tests of src/core/runrecord.h, the front-coded records of an
 *	  IndexMap run.
 *
 * Sorted random keys (sharing long prefixes, around the nibble's 15 and
 * the varints' boundaries) with refs whose low bits mostly repeat are
 * coded back to back as a run is; each record takes the size
 * braid_runrec_size says, at most the key's length plus
 * BRAID_RUNREC_OVERHEAD_MAX, and decodes, against the key before it, to
 * the same key and ref.
 *
 * test/unit/test_runrecord.c
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include "core/runrecord.h"

#define RUNREC_KEYS 4000
#define RUNREC_MAX_KEY 300

/* A key and ref of the test run. */
typedef struct RunrecEntry
{
	uint32_t	len;
	uint8_t		key[RUNREC_MAX_KEY];
	uint64_t	ref;
} RunrecEntry;

/* runrec_cmp: qsort's order of entries, memcmp then length. */
static int
runrec_cmp(const void *a, const void *b)
{
	const RunrecEntry *x = a;
	const RunrecEntry *y = b;

	return cmp_bytes(x->key, x->len, y->key, y->len);
}

/* runrec_random_key: a key of a length that stresses the nibbles. */
static void
runrec_random_key(RunrecEntry *e)
{
	static const uint32_t lens[] = {0, 1, 7, 8, 14, 15, 16, 30, 142, 143, 200, 299};
	uint32_t	prefix = (uint32_t) rng_below(RUNREC_MAX_KEY);

	e->len = rng_below(4) == 0 ? lens[rng_below(sizeof(lens) / sizeof(lens[0]))] :
		(uint32_t) rng_below(RUNREC_MAX_KEY);
	/* a common prefix of up to the whole key, then random bytes */
	for (uint32_t i = 0; i < e->len; i++)
		e->key[i] = i < prefix ? (uint8_t) (i * 7) : (uint8_t) rng_below(4);
}

/* runrec_random_ref: high 32 bits, middle 16, low 16 mostly repeating. */
static uint64_t
runrec_random_ref(uint64_t prev)
{
	uint64_t	low = rng_below(3) == 0 ? rng_below(65536) : (prev & 0xFFFF);
	uint64_t	high = rng_below(2) == 0 ? rng_below(200) : rng_next() >> 32;

	return high << 32 | rng_below(65536) << 16 | low;
}

/* test_runrecord_roundtrip: a run codes and decodes back to its entries. */
static void
test_runrecord_roundtrip(void)
{
	RunrecEntry *e = xmalloc(sizeof(RunrecEntry) * RUNREC_KEYS);
	uint8_t    *run = xmalloc((size_t) RUNREC_KEYS * (RUNREC_MAX_KEY + BRAID_RUNREC_OVERHEAD_MAX));
	uint8_t		key[RUNREC_MAX_KEY];
	size_t		at = 0;
	uint32_t	low = 0;
	Check		c;

	check_init(&c);
	for (int i = 0; i < RUNREC_KEYS; i++)
		runrec_random_key(&e[i]);
	qsort(e, RUNREC_KEYS, sizeof(RunrecEntry), runrec_cmp);
	/* refs in run order, so that low bits repeat from record to record */
	for (int i = 0; i < RUNREC_KEYS; i++)
		e[i].ref = runrec_random_ref(i > 0 ? e[i - 1].ref : 0);

	/* code: each record against the one before it, the first against none */
	for (int i = 0; i < RUNREC_KEYS; i++)
	{
		const uint8_t *prev = i > 0 ? e[i - 1].key : NULL;
		uint32_t	prev_len = i > 0 ? e[i - 1].len : 0;
		size_t		want = braid_runrec_size(prev, prev_len, low, e[i].key, e[i].len, e[i].ref);
		size_t		got = braid_runrec_put(run + at, prev, prev_len, low, e[i].key,
										   e[i].len, e[i].ref);

		check_that(&c, got == want && got <= e[i].len + BRAID_RUNREC_OVERHEAD_MAX,
				   "record %d (key of %u bytes): %zu bytes put, size says %zu", i,
				   e[i].len, got, want);
		/* the key shares with the previous one all it can, no more */
		{
			uint32_t	shared = 0;

			while (shared < prev_len && shared < e[i].len && prev[shared] == e[i].key[shared])
				shared++;
			check_that(&c, braid_runrec_shared(prev, prev_len, e[i].key, e[i].len) == shared,
					   "record %d: shares %u bytes, coder says %u", i, shared,
					   braid_runrec_shared(prev, prev_len, e[i].key, e[i].len));
		}
		low = (uint32_t) (e[i].ref & 0xFFFF);
		at += got;
	}

	/* decode in order, rebuilding each key from the one before */
	{
		size_t		end = at;
		uint32_t	keylen = 0;

		at = 0;
		low = 0;
		for (int i = 0; i < RUNREC_KEYS; i++)
		{
			uint32_t	shared,
						suffix;
			uint64_t	ref;
			size_t		n = braid_runrec_lengths(run + at, &shared, &suffix);

			if (!check_that(&c, n <= BRAID_RUNREC_LENGTHS_MAX && shared <= keylen &&
							shared + suffix <= RUNREC_MAX_KEY && at + n + suffix <= end,
							"record %d: lengths of %zu bytes, shared %u of %u, suffix %u",
							i, n, shared, keylen, suffix))
				break;
			at += n;
			memcpy(key + shared, run + at, suffix);
			at += suffix;
			keylen = shared + suffix;
			n = braid_runrec_ref(run + at, &low, &ref);
			check_that(&c, n <= BRAID_RUNREC_REF_MAX, "record %d: ref of %zu bytes", i, n);
			at += n;
			check_that(&c, keylen == e[i].len && memcmp(key, e[i].key, keylen) == 0,
					   "record %d: key of %u bytes read back as %u", i, e[i].len, keylen);
			check_that(&c, ref == e[i].ref, "record %d: ref %llx read back as %llx", i,
					   (unsigned long long) e[i].ref, (unsigned long long) ref);
		}
		check_that(&c, at == end, "run of %zu bytes, %zu read", end, at);
	}
	check_report(&c, "runrecord: %d sorted records code to their size and decode as they were",
				 RUNREC_KEYS);
	free(run);
	free(e);
}

/*
 * test_runrecord_bytes: records as the format lays them out, byte by byte
 * (a change of the format on the device fails here, whatever the coder and
 * the decoder agree on).
 */
static void
test_runrecord_bytes(void)
{
	static const uint8_t same_low[] = {0x22, 'c', 'd', 0x01, 0x05};
	static const uint8_t other_low[] = {0x22, 'c', 'd', 0x01, 0x04, 0x04};
	static const uint8_t long_key[] = {0x0F, 0x05};
	const uint8_t prev[] = "ab";
	const uint8_t key[] = "abcd";
	uint8_t		big[20];
	uint8_t		out[64];
	size_t		n;
	Check		c;

	check_init(&c);
	/* shares 2 bytes, 2 of suffix; block 1, line 2 (flag: same low bits) */
	n = braid_runrec_put(out, prev, 2, 5, key, 4, (UINT64_C(1) << 32) | (2 << 16) | 5);
	check_that(&c, n == sizeof(same_low) && memcmp(out, same_low, n) == 0,
			   "low bits as before: %zu bytes", n);
	/* low bits 7 after 5: no flag, zigzag(2) = 4 */
	n = braid_runrec_put(out, prev, 2, 5, key, 4, (UINT64_C(1) << 32) | (2 << 16) | 7);
	check_that(&c, n == sizeof(other_low) && memcmp(out, other_low, n) == 0,
			   "other low bits: %zu bytes", n);
	/* a first record of 20 zero bytes: suffix nibble 15, varint 5 */
	memset(big, 0, sizeof(big));
	n = braid_runrec_put(out, NULL, 0, 0, big, sizeof(big), 0);
	check_that(&c, n == sizeof(long_key) + sizeof(big) + 2 && memcmp(out, long_key, 2) == 0 &&
			   out[2 + sizeof(big)] == 0x00 && out[3 + sizeof(big)] == 0x01,
			   "a long first key: %zu bytes", n);
	check_report(&c, "runrecord: records laid out byte by byte as the format says");
}

/* test_runrecord_zigzag: small differences of either sign stay small. */
static void
test_runrecord_zigzag(void)
{
	Check		c;

	check_init(&c);
	for (int32_t v = -70000; v <= 70000; v++)
	{
		uint32_t	z = braid_runrec_zigzag(v);

		check_that(&c, braid_runrec_unzigzag(z) == v, "zigzag %d -> %u -> %d", v, z,
				   braid_runrec_unzigzag(z));
		check_that(&c, z <= 2 * (uint32_t) (v < 0 ? -v : v), "zigzag %d is %u", v, z);
	}
	check_report(&c, "runrecord: zigzag codes small differences small and inverts");
}

/* unit_runrecord: the module's tests. */
void
unit_runrecord(void)
{
	test_runrecord_roundtrip();
	test_runrecord_bytes();
	test_runrecord_zigzag();
}
