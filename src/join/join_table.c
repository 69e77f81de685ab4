/*-------------------------------------------------------------------------
 *
 * join_table.c
 *	  BraidJoin's in-memory table: one partition's (or piece's) inner
 *	  entries, grouped by hash bucket.
 *
 * Entries are appended while a partition is loaded, then grouped in place
 * into power-of-two buckets by the low bits of their hash (partitions take
 * the high bits, so a partition's entries spread over every bucket), about
 * one or two entries a bucket: bucket b's entries are entries[offsets[b]]
 * up to entries[offsets[b + 1]] (joinbucket.c).  A probe reads the
 * bucket's two offsets (one cache line) and then its entries, side by side
 * (join_table_next_match in join_state.h).  The table's memory is its own
 * context, reset between rounds.
 *
 * src/join/join_table.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "join/join_state.h"

/* join_table_reset: empty the table and free its memory. */
void
join_table_reset(JoinTable *t)
{
	MemoryContextReset(t->cxt);
	t->entries = NULL;
	t->offsets = NULL;
	t->n = t->cap = t->mask = 0;
	t->built = false;
}

/*
 * join_table_reserve
 *		Make room for n entries at once (a round that knows its count), so
 *		that the array does not grow by doubling past what it needs.
 */
void
join_table_reserve(JoinTable *t, uint32 n)
{
	Assert(!t->built && t->n == 0);
	if (n <= t->cap)
		return;
	if (n >= PG_UINT32_MAX / 2 - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("braidsort join partition has too many rows")));
	t->entries = MemoryContextAllocHuge(t->cxt, sizeof(BraidJoinEntry) * (size_t) n);
	t->cap = n;
}

/* join_table_add: add an entry (before the table is built). */
void
join_table_add(JoinTable *t, const BraidJoinEntry *e)
{
	Assert(!t->built);
	if (t->n == t->cap)
	{
		uint32		cap = Max(t->cap * 2, 1024);

		/* up to the limit in one step, where the first pass evicts */
		if (t->grow_limit > t->n && cap > t->grow_limit)
			cap = t->grow_limit;
		if (t->n >= PG_UINT32_MAX / 2 - 1)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("braidsort join partition has too many rows")));
		t->entries = t->entries ?
			repalloc_huge(t->entries, sizeof(BraidJoinEntry) * (size_t) cap) :
			MemoryContextAllocHuge(t->cxt, sizeof(BraidJoinEntry) * (size_t) cap);
		t->cap = cap;
	}
	t->entries[t->n++] = *e;
}

/*
 * join_table_build
 *		Group the entries by bucket (braid_join_bucket_group, in place), one
 *		or two entries a bucket.
 */
void
join_table_build(JoinTable *t)
{
	uint32		nbuckets = Max(pg_nextpower2_32(Max(t->n, 1)) / 2, 1);

	t->mask = nbuckets - 1;
	t->offsets = MemoryContextAllocHuge(t->cxt, sizeof(uint32) * ((size_t) nbuckets + 1));
	braid_join_bucket_group(t->entries, t->n, t->mask, t->offsets);
	t->built = true;
	t->peak_bytes = Max(t->peak_bytes, sizeof(BraidJoinEntry) * (size_t) t->cap +
						sizeof(uint32) * ((size_t) nbuckets + 1));
}
