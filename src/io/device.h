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

/* The devices a stretch of reads touches (see braid_read_scope_begin). */
typedef struct BraidReadScope
{
	int			nslots;
	int			slots[16];		/* BRAID_MAX_DEVICES */
} BraidReadScope;

extern char *braid_spill_tablespace;
extern int	braid_emulate_read_ns;
extern int	braid_emulate_write_ns;
extern int	braid_emulate_interference_ns;
extern int	braid_emulate_parallelism;

extern BraidSpillFile *braid_spill_create(size_t size, BraidDeviceStats *stats);
extern BraidSpillFile *braid_spill_try_create(size_t size, BraidDeviceStats *stats);
extern BraidSpillFile *braid_spill_create_in(Oid spc, size_t size, BraidDeviceStats *stats,
											 const char *full_hint);
extern Oid	braid_spill_tablespace_guess(void);
extern bool braid_spill_free_bytes(double *bytes);
extern bool braid_spill_has_room(double bytes, const char *what, char **why);
extern void braid_spill_write(BraidSpillFile *f, const void *data, size_t len);
extern void braid_spill_write_direct(BraidSpillFile *f, const void *data, size_t len);
extern uint8 *braid_spill_fill_begin(BraidSpillFile *f, size_t len, int *threads);
extern void braid_spill_fill_done(const BraidSpillFile *f, size_t from, size_t to);
extern void braid_spill_fill_end(BraidSpillFile *f, size_t len);
extern void braid_spill_finish(BraidSpillFile *f);
extern void braid_spill_note_read(BraidSpillFile *f, size_t from, size_t to);
extern void braid_spill_count_read(BraidSpillFile *f, size_t from, size_t to);
extern void braid_device_emulation(const BraidSpillFile *f, BraidEmulation *em);
extern void braid_spill_close(BraidSpillFile *f);
extern void braid_read_scope_add(BraidReadScope *scope, const BraidSpillFile *f);
extern void braid_read_scope_begin(BraidReadScope *scope);
extern void braid_read_scope_end(BraidReadScope *scope);
extern bool braid_check_spill_tablespace(char **newval, void **extra, GucSource source);

#endif							/* BRAID_DEVICE_H */
