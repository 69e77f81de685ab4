/*-------------------------------------------------------------------------
 *
 * test_joinbucket.c
 *	  Unit tests of src/core/joinbucket.c, the grouping of BraidJoin's entries
 *	  by hash bucket.
 *
 * For empty, one-entry, random, all-in-one-bucket (heavy skew), half-empty
 * and sorted-backwards inputs at several bucket counts: every bucket's
 * entries lie between its offsets, the offsets rise from 0 to n, and the
 * entries are the same ones as before (a permutation: each one's ref is
 * unique and found once).
 *
 * test/unit/test_joinbucket.c
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include "core/joinbucket.h"

/* grouped_right: check one grouping of n entries (refs 0..n-1, shuffled). */
static void
grouped_right(Check *c, const char *what, BraidJoinEntry *e, uint32_t n, uint32_t mask)
{
	uint32_t   *offsets = xmalloc(sizeof(uint32_t) * ((size_t) mask + 2));
	unsigned char *seen = xmalloc(n + 1);
	uint64_t	before = 0,
				after = 0;
	bool		ok = true;

	for (uint32_t i = 0; i < n; i++)
		before += (uint64_t) e[i].hash * 3 + e[i].pos;
	braid_join_bucket_group(e, n, mask, offsets);
	ok &= check_that(c, offsets[0] == 0 && offsets[mask + 1] == n,
					 "%s: offsets run from %u to %u (n = %u)", what, offsets[0],
					 offsets[mask + 1], n);
	for (uint32_t b = 0; b <= mask && ok; b++)
	{
		ok &= check_that(c, offsets[b] <= offsets[b + 1], "%s: offsets fall at bucket %u", what, b);
		for (uint32_t i = offsets[b]; i < offsets[b + 1] && ok; i++)
			ok &= check_that(c, (e[i].hash & mask) == b,
							 "%s: entry %u (hash %u) in bucket %u", what, i, e[i].hash, b);
	}
	memset(seen, 0, n + 1);
	for (uint32_t i = 0; i < n && ok; i++)
	{
		ok &= check_that(c, e[i].ref < n && !seen[e[i].ref],
						 "%s: ref %llu lost or doubled", what, (unsigned long long) e[i].ref);
		if (ok)
			seen[e[i].ref] = 1;
		after += (uint64_t) e[i].hash * 3 + e[i].pos;
	}
	check_that(c, !ok || before == after, "%s: the entries changed", what);
	free(offsets);
	free(seen);
}

/* fill: n entries with refs 0..n-1 and hashes from the kind asked for. */
static void
fill(BraidJoinEntry *e, uint32_t n, int kind)
{
	for (uint32_t i = 0; i < n; i++)
	{
		e[i].ref = i;
		e[i].pos = (uint32_t) rng_next();
		switch (kind)
		{
			case 0:				/* random */
				e[i].hash = (uint32_t) rng_next();
				break;
			case 1:				/* one hash: every entry in one bucket */
				e[i].hash = 0xDEADBEEF;
				break;
			case 2:				/* even hashes only: half the buckets empty */
				e[i].hash = (uint32_t) rng_next() & ~1U;
				break;
			default:			/* falling hashes: every entry moves */
				e[i].hash = n - i;
				break;
		}
	}
}

/* test_joinbucket_group: groupings of many shapes are right. */
static void
test_joinbucket_group(void)
{
	static const uint32_t sizes[] = {0, 1, 2, 3, 7, 64, 1000, 4097, 100000};
	static const char *const kinds[] = {"random", "one hash", "even hashes", "falling"};
	Check		c;

	check_init(&c);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int kind = 0; kind < 4; kind++)
			for (uint32_t mask = 0; mask < 4096; mask = mask * 4 + 3)
			{
				uint32_t	n = sizes[s];
				BraidJoinEntry *e = xmalloc(sizeof(BraidJoinEntry) * ((size_t) n + 1));
				char		what[80];

				fill(e, n, kind);
				snprintf(what, sizeof(what), "%u %s entries, %u buckets", n, kinds[kind], mask + 1);
				grouped_right(&c, what, e, n, mask);
				free(e);
			}
	/* one bucket (mask 0), as an empty or tiny table has */
	{
		BraidJoinEntry e[5];

		fill(e, 5, 0);
		grouped_right(&c, "5 entries, 1 bucket", e, 5, 0);
	}
	check_report(&c, "joinbucket: entries grouped by bucket, offsets right, nothing lost");
}

/* unit_joinbucket: the grouping of BraidJoin's entries by bucket. */
void
unit_joinbucket(void)
{
	test_joinbucket_group();
}
