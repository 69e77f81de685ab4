/*-------------------------------------------------------------------------
 *
 * runfile.h
 *	  IndexMap runs on the spill device and their k-way merge (MergePass).
 *
 * src/sort/runfile.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_RUNFILE_H
#define BRAID_RUNFILE_H

#include "postgres.h"

#include "io/device.h"

struct BraidRun;

/*
 * Refill a virtual run whose records are exhausted: set run->mem,
 * run->nrecords and run->bytes to its next chunk of records (front-coded
 * afresh, in key order after the last chunk's); false when there are no
 * more.  Called by the merge on the backend only.
 */
typedef bool (*BraidRunRefill) (struct BraidRun *run, void *arg);

/*
 * A run: front-coded records of <key, ref> in key order (see runfile.c), in
 * one spill file -- or in memory (mem, file NULL): the part of a
 * write-limited sort that is never written -- or in chunks made on demand
 * (refill: the write-limited sorts' selection passes).  Only keys and refs:
 * values are never written.
 */
typedef struct BraidRun
{
	BraidSpillFile *file;
	uint8	   *mem;			/* the records, when not in a file */
	uint64		nrecords;
	size_t		bytes;
	BraidRunRefill refill;		/* virtual run: makes the next chunk */
	void	   *refill_arg;
	uint64		ref_add;		/* added to each ref read: another process's
								 * run, whose value log refs name its segments
								 * (sort_shared.c), else 0 */
	size_t		released;		/* mem given back up to this offset as the
								 * final merge read past it ... */
	size_t		given_back;		/* ... which is this many bytes (whole 2 MB
								 * units only: braid_merger_release_read) */
} BraidRun;

/* Where a run writer finds the full key and the ref of an IndexMap entry. */
typedef const uint8 *(*BraidKeyOf) (const uint8 *entry, uint32 *len,
									uint64 *ref, void *arg);

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

extern BraidRun *braid_run_write(const uint8 *entries, size_t n, uint32 stride,
								 BraidKeyOf key_of, void *arg, int threads,
								 BraidDeviceStats *stats);
extern size_t braid_run_size(const uint8 *entries, size_t n, uint32 stride,
							 BraidKeyOf key_of, void *arg);
extern void braid_run_code(const uint8 *entries, size_t n, uint32 stride,
						   BraidKeyOf key_of, void *arg,
						   const BraidSpillFile *file, uint8 *dst,
						   const bool *stop);
extern BraidRun *braid_run_in_memory(const uint8 *entries, size_t n, uint32 stride,
									 BraidKeyOf key_of, void *arg);
extern void braid_run_set_memory(BraidRun *run, const uint8 *entries, size_t n,
								 uint32 stride, BraidKeyOf key_of, void *arg);
extern void braid_run_close(BraidRun *run);
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

#endif							/* BRAID_RUNFILE_H */
