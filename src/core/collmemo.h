/*-------------------------------------------------------------------------
 *
 * collmemo.h
 *	  The order of two strings by a collation, remembered per loser-tree
 *	  node: a merge of collated keys asks the same question many times.
 *
 * Merging runs whose keys have a collated column (runmerge.c's loser tree,
 * keys.c's braid_compare_collated) compares strings by strcoll_l(), which
 * costs ~100-300 ns in a UTF-8 locale, where equal strings cost a memcmp.
 * Runs of a sort by a column with few distinct values a run (a name, a
 * status) keep the same string for many records in a row, and when a run's
 * record replaces the one just returned its matches up the tree meet the
 * same losers as before: the same two strings, compared again.  So each
 * node of the tree keeps the last two strings it compared by the
 * collation (up to BRAID_COLL_MEMO_STRING bytes each) and their order, and
 * answers from it when the two strings come again, in either order: two
 * memcmp() calls instead of a strcoll_l().
 *
 * The memo holds a pure function of its two strings and the column (its
 * collation); which records or runs they came from does not matter, so no
 * record can get a wrong answer from it.
 *
 * Pure C (libc only, no PostgreSQL calls): unit-tested in
 * test/unit/test_collmemo.c.
 *
 * src/core/collmemo.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_COLLMEMO_H
#define BRAID_COLLMEMO_H

#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * Longer strings are compared, not remembered: names, codes and statuses
 * fit, and a node's memo is 104 bytes, beside the BRAID_MERGE_RUN_BYTES
 * (16 kB) the merge's fan-in allows each reader, which does not count it.
 */
#define BRAID_COLL_MEMO_STRING	48

typedef struct BraidCollMemo
{
	bool		valid;			/* a comparison is remembered */
	int8_t		order;			/* a against b: -1 or 1 (0: equal bytes) */
	uint8_t		la;				/* the strings' lengths (no terminator) */
	uint8_t		lb;
	int32_t		column;			/* whose collation ordered them */
	char		a[BRAID_COLL_MEMO_STRING];
	char		b[BRAID_COLL_MEMO_STRING];
} BraidCollMemo;

/*
 * braid_coll_order
 *		-1, 0 or 1: string a (la bytes, then a zero byte) against b by the
 *		collation loc, then by their bytes where it calls different strings
 *		equal, as PostgreSQL's varstr_cmp() orders them.  With a memo (may be
 *		NULL) an order it holds for the same two strings of the same column
 *		is returned without calling strcoll_l(), and any other is stored.
 */
static inline int
braid_coll_order(BraidCollMemo *memo, int column, locale_t loc,
				 const char *a, uint32_t la, const char *b, uint32_t lb)
{
	int			c;

	if (memo != NULL && memo->valid && memo->column == column)
	{
		if (memo->la == la && memo->lb == lb &&
			memcmp(memo->a, a, la) == 0 && memcmp(memo->b, b, lb) == 0)
			return memo->order;
		if (memo->la == lb && memo->lb == la &&
			memcmp(memo->a, b, lb) == 0 && memcmp(memo->b, a, la) == 0)
			return -memo->order;
	}
	c = strcoll_l(a, b, loc);
	if (c == 0)
		c = strcmp(a, b);
	c = (c > 0) - (c < 0);
	if (memo != NULL && la <= BRAID_COLL_MEMO_STRING && lb <= BRAID_COLL_MEMO_STRING)
	{
		memo->valid = true;
		memo->order = (int8_t) c;
		memo->column = column;
		memo->la = (uint8_t) la;
		memo->lb = (uint8_t) lb;
		memcpy(memo->a, a, la);
		memcpy(memo->b, b, lb);
	}
	return c;
}

#endif							/* BRAID_COLLMEMO_H */
