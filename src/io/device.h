/*-------------------------------------------------------------------------
 *
 * device.h
 *	  Spill files on the byte-addressable spill device, through libpmem.
 *
 * src/io/device.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_DEVICE_H
#define BRAID_DEVICE_H

#include "postgres.h"

#include "utils/guc.h"
#include "utils/resowner.h"

#include "core/emulate.h"
#include "io/spillspace.h"

/* Bytes and 64-byte lines moved to and from the spill device by one sort. */
typedef struct BraidDeviceStats
{
	uint64		bytes_written;
	uint64		bytes_read;
	uint64		lines_written;
	uint64		lines_read;
	uint64		files;
} BraidDeviceStats;

/* One spill file, mapped for its whole life. */
typedef struct BraidSpillFile
{
	char		path[MAXPGPATH];
	char	   *base;			/* mapping */
	size_t		size;			/* bytes reserved and mapped */
	size_t		written;		/* bytes written so far (sequentially) */
	bool		is_pmem;
	bool		scratch;		/* written through the mapping, uncounted
								 * (braid_spill_create_in) */
	bool		foreign;		/* another process's file, mapped to be read
								 * (braid_spill_open_foreign): closing it
								 * unmaps it, its owner removes it */
	Oid			spcoid;			/* tablespace it lives in */
	int			devslot;		/* its device's slot in shared memory, or -1 */
	bool		persisted;		/* drained/synced since the last write */
	BraidDeviceStats *stats;	/* where its traffic is counted */
	struct BraidSpillFile *next;	/* backend-wide list of live files */
	struct BraidSpillFile *prev;
	ResourceOwner owner;
	/* staging buffer while writing: bytes gather here, then are flushed */
	char	   *stage;
	size_t		staged;
	/* how the writer threads of the current fill are charged */
	BraidEmulation fill_em;
} BraidSpillFile;

/*
 * The devices a stretch of reads touches (see braid_read_scope_begin): a
 * value log window copied by reader threads, a join partition's block or
 * row copied out.
 */
typedef struct BraidReadScope
{
	int			nslots;
	int			slots[16];		/* BRAID_MAX_DEVICES */
} BraidReadScope;

/*
 * braid_temp_blocks
 *		Add len bytes to *total (the bytes this backend has ever written,
 *		device.c, or read, spillread.c) and return how many BLCKSZ blocks
 *		that completes: what the executor's buffer usage counts as
 *		temporary blocks, so that EXPLAIN (ANALYZE, BUFFERS) shows spill
 *		traffic as "temp read/written" and pg_stat_statements' temp_blks_*
 *		include it, as for PostgreSQL's own temporary files (a parallel
 *		worker's usage reaches its leader with the rest).  pgBufferUsage is
 *		the backend's: only the backend counts traffic, never a pool thread.
 */
static inline int64
braid_temp_blocks(uint64 *total, size_t len)
{
	uint64		before = *total / BLCKSZ;

	*total += len;
	return (int64) (*total / BLCKSZ - before);
}

/* device.c */
extern BraidSpillFile *braid_spill_create(size_t size, BraidDeviceStats *stats);
extern BraidSpillFile *braid_spill_try_create(size_t size, BraidDeviceStats *stats);
extern BraidSpillFile *braid_spill_create_in(Oid spc, size_t size, BraidDeviceStats *stats,
											 const char *full_hint);
extern void braid_spill_write(BraidSpillFile *f, const void *data, size_t len);
extern void braid_spill_write_direct(BraidSpillFile *f, const void *data, size_t len);
extern uint8 *braid_spill_fill_begin(BraidSpillFile *f, size_t len, int *threads);
extern void braid_spill_fill_done(const BraidSpillFile *f, size_t from, size_t to);
extern void braid_spill_fill_end(BraidSpillFile *f, size_t len);
extern void braid_spill_finish(BraidSpillFile *f);
extern void braid_device_emulation(const BraidSpillFile *f, BraidEmulation *em);
extern void braid_spill_close(BraidSpillFile *f);
extern BraidSpillFile *braid_spill_open_foreign(Oid spc, const char *name, size_t written,
												BraidDeviceStats *stats);
extern const char *braid_spill_name(const BraidSpillFile *f);
extern void braid_spill_disown(BraidSpillFile *f);
extern void braid_spill_hand_over(BraidSpillFile *f, int leader_pid, uint32 query, int part,
								  int node, uint32 n);

/* at backend exit, before any spill file goes (braid_spill_on_exit) */
typedef void (*BraidSpillExitHook) (void);
extern void braid_spill_on_exit(BraidSpillExitHook hook);

/* spillread.c */
extern void braid_spill_note_read(BraidSpillFile *f, size_t from, size_t to);
extern void braid_spill_read_copy(BraidSpillFile *f, size_t from, void *dst, size_t len);
extern void braid_spill_count_read(BraidSpillFile *f, size_t from, size_t to);
extern void braid_spill_count_read_sum(BraidSpillFile *f, uint64 bytes, uint64 lines);
extern void braid_read_scope_add(BraidReadScope *scope, const BraidSpillFile *f);
extern void braid_read_scope_begin(BraidReadScope *scope);
extern void braid_read_scope_end(BraidReadScope *scope);

#endif							/* BRAID_DEVICE_H */
