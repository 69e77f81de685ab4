/*-------------------------------------------------------------------------
 *
 * runfile.h
 *	  IndexMap runs: on the spill device, in memory, or made on demand.
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
 * A run: front-coded records of <key, ref> in key order (core/runrecord.h), in
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

#endif							/* BRAID_RUNFILE_H */
