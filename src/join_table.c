/*-------------------------------------------------------------------------
 *
 * join_table.c
 *	  BraidJoin's in-memory table: one partition's (or piece's) inner
 *	  entries, chained by hash.
 *
 * Entries are appended while a partition is loaded, then chained into
 * power-of-two buckets by the low bits of their hash (partitions take the
 * high bits, so a partition's entries spread over every bucket).  A probe
 * follows a bucket's chain and stops at entries of the same hash
 * (join_table_first, join_table_next_match in join_state.h).  The table's
 * memory is its own context, reset between rounds.
 *
 * src/join_table.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "join_state.h"

/* join_table_reset: empty the table and free its memory. */
void
join_table_reset(JoinTable *t)
{
	MemoryContextReset(t->cxt);
	t->entries = NULL;
	t->next = NULL;
	t->buckets = NULL;
	t->n = t->cap = t->mask = 0;
	t->built = false;
}

/* join_table_add: add an entry (before the table is built). */
void
join_table_add(JoinTable *t, const BraidJoinEntry *e)
{
	Assert(!t->built);
	if (t->n == t->cap)
	{
		uint32		cap = Max(t->cap * 2, 1024);

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

/* join_table_build: chain the entries by hash into buckets. */
void
join_table_build(JoinTable *t)
{
	uint32		nbuckets = pg_nextpower2_32(Max(t->n, 1));

	t->next = MemoryContextAllocHuge(t->cxt, sizeof(uint32) * (size_t) Max(t->n, 1));
	t->buckets = MemoryContextAllocHuge(t->cxt, sizeof(uint32) * (size_t) nbuckets);
	memset(t->buckets, 0xFF, sizeof(uint32) * (size_t) nbuckets);
	t->mask = nbuckets - 1;
	for (uint32 i = 0; i < t->n; i++)
	{
		uint32		b = t->entries[i].hash & t->mask;

		t->next[i] = t->buckets[b];
		t->buckets[b] = i;
	}
	t->built = true;
	t->peak_bytes = Max(t->peak_bytes, sizeof(BraidJoinEntry) * (size_t) t->cap +
						sizeof(uint32) * ((size_t) t->n + nbuckets));
}
