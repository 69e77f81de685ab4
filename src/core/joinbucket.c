/*-------------------------------------------------------------------------
 *
 * joinbucket.c
 *	  Group a partition's entries by hash bucket, in place.
 *
 * BraidJoin's in-memory table (join_table.c) is a partition's inner entries
 * grouped by bucket, with one offset a bucket: a probe reads its bucket's
 * two offsets (one cache line) and then the bucket's entries side by side,
 * where a chained table follows a link from entry to entry, a cache miss
 * each, and needs 4 bytes more an entry for the links.
 *
 * The grouping is an in-place counting sort (the "American flag"
 * permutation) that needs no memory beyond the offsets.  offsets[b] first
 * holds the end of bucket b's range (the counts summed up to b).  Going
 * through the buckets in order, each entry of bucket b's range still to be
 * placed either belongs to b (it stays, and the next one is looked at) or
 * to a later bucket c (the buckets before b are complete), and is swapped
 * with the entry just below c's end, which moves down: the entry swapped in
 * is looked at next.  When the entries kept from b's start up meet the ones
 * swapped in from its end down, b is complete: its start goes into
 * offsets[b], and bucket b + 1 begins after b's last entry.  Each swap
 * puts one entry in its final place: at most n swaps, and each entry is
 * looked at a few times at most.
 *
 * src/core/joinbucket.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "core/joinbucket.h"

/* braid_join_bucket_group: see joinbucket.h. */
void
braid_join_bucket_group(BraidJoinEntry *entries, uint32_t n, uint32_t mask,
						uint32_t *offsets)
{
	uint32_t	nbuckets = mask + 1;
	uint32_t   *end = offsets;
	uint32_t	pos = 0;

	memset(end, 0, sizeof(uint32_t) * ((size_t) nbuckets + 1));
	for (uint32_t i = 0; i < n; i++)
		end[entries[i].hash & mask]++;
	for (uint32_t b = 1; b < nbuckets; b++)
		end[b] += end[b - 1];

	for (uint32_t b = 0; b < nbuckets; b++)
	{
		uint32_t	start = pos;

		/* [pos, end[b]) is the part of b's range still to be placed */
		while (pos < end[b])
		{
			uint32_t	c = entries[pos].hash & mask;

			if (c == b)
				pos++;
			else
			{
				BraidJoinEntry moved = entries[pos];

				/* c > b: the buckets before b are complete */
				entries[pos] = entries[--end[c]];
				entries[end[c]] = moved;
			}
		}
		/* past the entries swapped into b's range from its end */
		while (pos < n && (entries[pos].hash & mask) == b)
			pos++;
		offsets[b] = start;
	}
	offsets[nbuckets] = n;
}
