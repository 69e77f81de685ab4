/*-------------------------------------------------------------------------
 *
 * test_collmemo.c
 *	  Unit tests of the merge's memo of collated comparisons
 *	  (src/core/collmemo.h).
 *
 * A memo must never change an answer: over random sequences of string
 * pairs (few distinct strings, so that pairs recur in both orders; strings
 * around the memo's length limit; a string and its prefix; strings the
 * collation calls equal but whose bytes differ) every order given with a
 * memo is the one strcoll_l()/strcmp() give without it.  It must answer
 * from memory where it can (checked by planting a wrong order in a memo
 * and seeing it come back, in both orders of the pair), not for another
 * column, and never for strings longer than it keeps.
 *
 * test/unit/test_collmemo.c
 *
 *-------------------------------------------------------------------------
 */
#include <locale.h>
#include <string.h>

#include "unit.h"
#include "core/collmemo.h"

/* order_plain: the order without a memo, as varstr_cmp() gives it. */
static int
order_plain(locale_t loc, const char *a, const char *b)
{
	int			c = strcoll_l(a, b, loc);

	if (c == 0)
		c = strcmp(a, b);
	return (c > 0) - (c < 0);
}

#define POOL 24
#define POOL_LEN 80

/*
 * make_pool: strings to draw pairs from: mixed case and accents (which
 * en_US.UTF-8 orders apart from their bytes), a string and its prefix,
 * lengths on both sides of BRAID_COLL_MEMO_STRING, and the empty string.
 */
static void
make_pool(char pool[POOL][POOL_LEN])
{
	static const char *fixed[] = {
		"", "a", "A", "ab", "Ab", "abc", "\xc3\xa9t\xc3\xa9", "ete", "Ete", "zz",
		"O'Brien", "obrien", "o brien", "Smith", "smith-jones", "SMITH"
	};
	int			i;

	for (i = 0; i < (int) (sizeof(fixed) / sizeof(fixed[0])); i++)
		strcpy(pool[i], fixed[i]);
	for (; i < POOL; i++)
	{
		/* around the limit: 40 to 60 bytes, a common start */
		int			len = BRAID_COLL_MEMO_STRING - 8 + (int) rng_below(20);

		memset(pool[i], 'm', len);
		pool[i][len] = '\0';
		pool[i][len - 1 - (int) rng_below(4)] = (char) ('a' + rng_below(26));
	}
}

/* unit_collmemo: the memo answers as the collation does, and remembers. */
void
unit_collmemo(void)
{
	Check		c;
	locale_t	loc = newlocale(LC_COLLATE_MASK, "en_US.UTF-8", (locale_t) 0);
	char		pool[POOL][POOL_LEN];
	BraidCollMemo memo[4];

	check_init(&c);
	if (!check_that(&c, loc != (locale_t) 0, "locale en_US.UTF-8 is missing (scripts/install-deps.sh generates it)"))
	{
		check_report(&c, "collmemo: the test locale exists");
		return;
	}
	make_pool(pool);
	memset(memo, 0, sizeof(memo));
	for (int i = 0; i < 200000; i++)
	{
		/* few pairs, recurring in both orders, on one of four memos */
		int			x = (int) rng_below(rng_below(4) == 0 ? POOL : 6);
		int			y = (int) rng_below(rng_below(4) == 0 ? POOL : 6);
		int			node = (int) rng_below(4);
		int			column = (int) rng_below(2);
		int			want = order_plain(loc, pool[x], pool[y]);
		int			got = braid_coll_order(&memo[node], column, loc,
										   pool[x], (uint32_t) strlen(pool[x]),
										   pool[y], (uint32_t) strlen(pool[y]));

		if (!check_that(&c, got == want, "\"%s\" against \"%s\": %d with the memo, %d without",
						pool[x], pool[y], got, want))
			break;
	}
	check_that(&c, braid_coll_order(NULL, 0, loc, "b", 1, "a", 1) == 1 &&
			   braid_coll_order(NULL, 0, loc, "a", 1, "b", 1) == -1 &&
			   braid_coll_order(NULL, 0, loc, "a", 1, "a", 1) == 0, "no memo");
	check_report(&c, "collmemo: orders with memos are the collation's, then the bytes' "
				 "(200,000 random pairs, four nodes, two columns)");

	/* it answers from memory: a planted order comes back, in both orders */
	check_init(&c);
	memset(memo, 0, sizeof(memo));
	check_that(&c, braid_coll_order(&memo[0], 3, loc, "Smith", 5, "Jones", 5) == 1 &&
			   memo[0].valid, "first comparison stored");
	memo[0].order = -1;			/* a wrong answer, to see it used */
	check_that(&c, braid_coll_order(&memo[0], 3, loc, "Smith", 5, "Jones", 5) == -1,
			   "the same pair is answered from the memo");
	check_that(&c, braid_coll_order(&memo[0], 3, loc, "Jones", 5, "Smith", 5) == 1,
			   "the swapped pair is answered from the memo, negated");
	check_that(&c, braid_coll_order(&memo[0], 4, loc, "Smith", 5, "Jones", 5) == 1,
			   "another column is not answered from it");
	check_that(&c, memo[0].column == 4 && memo[0].order == 1, "and replaces it");
	memo[0].order = -1;
	check_that(&c, braid_coll_order(&memo[0], 4, loc, "Smith", 5, "Jone", 4) == 1,
			   "a prefix of a remembered string is not the string");
	check_report(&c, "collmemo: a remembered pair is answered without the collation, "
				 "in either order, for its column only");

	/* strings longer than it keeps are compared every time */
	check_init(&c);
	{
		char		longa[BRAID_COLL_MEMO_STRING + 2];
		char		longb[BRAID_COLL_MEMO_STRING + 2];

		memset(longa, 'q', sizeof(longa) - 1);
		longa[sizeof(longa) - 1] = '\0';
		memcpy(longb, longa, sizeof(longb));
		longb[0] = 'p';
		memset(memo, 0, sizeof(memo));
		check_that(&c, braid_coll_order(&memo[1], 0, loc, longa, (uint32_t) strlen(longa),
										"p", 1) == 1 && !memo[1].valid,
				   "a string past the limit is not remembered");
		check_that(&c, braid_coll_order(&memo[1], 0, loc, "b", 1, "a", 1) == 1 &&
				   memo[1].valid, "short strings are");
		check_that(&c, braid_coll_order(&memo[1], 0, loc, longb, (uint32_t) strlen(longb),
										longa, (uint32_t) strlen(longa)) == -1 &&
				   memo[1].la == 1, "a long pair leaves the memo as it was");
	}
	check_report(&c, "collmemo: strings longer than BRAID_COLL_MEMO_STRING are compared, "
				 "not remembered");
	freelocale(loc);
}
