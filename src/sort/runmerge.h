/*-------------------------------------------------------------------------
 *
 * runmerge.h
 *	  Reading IndexMap runs and their k-way merge (MergePass).
 *
 * src/sort/runmerge.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_RUNMERGE_H
#define BRAID_RUNMERGE_H

#include "postgres.h"

#include "sort/runfile.h"

typedef struct BraidRunReader
{
	BraidRun   *run;
	size_t		pos;			/* next record */
	size_t		accounted;		/* bytes counted as read so far */
	uint64		remaining;
	uint32		prev_low;		/* low 16 bits of the previous ref */
	const uint8 *key;			/* current record's key (in keybuf) */
	uint32		keylen;
	uint64		ref;
	uint64		prefix;			/* first 8 key bytes, big-endian, zero padded */
	bool		done;			/* no current record: the run is exhausted */
	bool		defer_reads;	/* leave the accounting of reads to
								 * braid_merger_account() */
	uint8	   *keybuf;			/* the key, rebuilt from front coding */
	MemoryContext cxt;			/* where keybuf lives (the merger's) */
	size_t		keybuf_cap;
} BraidRunReader;

/*
 * Order of two full keys; NULL means memcmp, then length.  memo is the
 * loser-tree node's memo_bytes of zeroed memory for the comparator to
 * remember what it found there (NULL where there is none), owned by the
 * merger: comparisons at one node repeat (core/collmemo.h).
 */
typedef int (*BraidKeyCompare) (const uint8 *a, uint32 la, const uint8 *b,
								uint32 lb, void *arg, void *memo);

typedef struct BraidMerger
{
	BraidKeyCompare compare;
	void	   *compare_arg;
	size_t		memo_bytes;		/* each node's memo for the comparator */
	char	   *memos;			/* nreaders of them (node 0 unused) */
	int			nreaders;
	BraidRunReader *readers;
	int		   *tree;			/* loser tree: tree[0] the winner,
								 * tree[1..k-1] the loser of each match */
	bool		started;
} BraidMerger;

extern BraidMerger *braid_merger_begin(BraidRun **runs, int nruns,
									   BraidKeyCompare compare, void *compare_arg,
									   size_t memo_bytes);
extern bool braid_merger_next(BraidMerger *m, const uint8 **key, uint32 *keylen,
							  uint64 *ref);
extern int	braid_merger_try_next(BraidMerger *m, uint64 *ref);
extern void braid_merger_defer_reads(BraidMerger *m, bool defer);
extern void braid_merger_account(BraidMerger *m);
extern size_t braid_merger_release_read(BraidMerger *m);
extern void braid_merger_end(BraidMerger *m);
extern BraidRun *braid_merge_runs(BraidRun **runs, int nruns, BraidDeviceStats *stats,
								  BraidKeyCompare compare, void *compare_arg,
								  size_t memo_bytes);

#endif							/* BRAID_RUNMERGE_H */
