/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  braidsort's shared memory: what it holds, and how modules add theirs.
 *
 * One area (BraidShared) holds a slot per spill device (a filesystem, by
 * st_dev) with its phase gate (iosched.c) and traffic counters, the stored
 * device profiles (profile.c), and the cumulative statistics of
 * braidsort.stats (stats.c).  Other modules with shared state of their own
 * (progress.c, instr.c) register it with braid_shmem_add(), so that this
 * file depends on none of them.
 *
 * src/io/shmem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SHMEM_H
#define BRAID_SHMEM_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"

#include "core/emulate.h"

#define BRAID_MAX_DEVICES		16
#define BRAID_MAX_PROFILE_ROWS	256

/* What a gate holder does on the device. */
#define BRAID_PHASE_IDLE	0
#define BRAID_PHASE_READ	1
#define BRAID_PHASE_WRITE	2
#define BRAID_PHASE_PROFILE 3

/* One measurement of a device profile (a row of profile_device()). */
typedef struct BraidProfileRow
{
	int			op;				/* BraidProfOp */
	int			access_size;
	int			threads;
	double		mb_per_s;
	double		ns_per_access;
} BraidProfileRow;

/* A stored device profile and what follows from it. */
typedef struct BraidProfile
{
	bool		valid;
	char		media;			/* BRAID_MEDIA_* */
	Oid			spcoid;			/* tablespace profiled */
	uint64		dev;			/* its st_dev */
	int64		taken_at;		/* TimestampTz */
	int			emulate_read_ns;	/* emulation in force when taken */
	int			emulate_write_ns;
	int			nrows;
	int			emulate_interference_ns;
	int			emulate_parallelism;	/* lanes; -1: not recorded (a profile
										 * file of braidsort 0.7) */
	BraidProfileRow rows[BRAID_MAX_PROFILE_ROWS];
} BraidProfile;

/* What a profiled tablespace's files were mapped as (BraidProfile.media). */
#define BRAID_MEDIA_UNKNOWN	0	/* a profile file of braidsort 0.7 */
#define BRAID_MEDIA_PMEM	1	/* persistent memory (libpmem's is_pmem) */
#define BRAID_MEDIA_OTHER	2	/* any other file system */

/* Cumulative per-device traffic (braidsort.stats). */
typedef struct BraidDeviceTraffic
{
	pg_atomic_uint64 bytes_written;
	pg_atomic_uint64 bytes_read;
	pg_atomic_uint64 lines_written;
	pg_atomic_uint64 lines_read;
	pg_atomic_uint64 files;
} BraidDeviceTraffic;

/* Tablespaces a device slot remembers having been used through. */
#define BRAID_DEVICE_TABLESPACES 8

/* A spill device: its phase gate, counters and profile. */
typedef struct BraidDeviceSlot
{
	bool		in_use;
	uint64		dev;			/* st_dev of the filesystem */
	Oid			spcoid;			/* tablespace it was last used through */
	/* tablespaces used through it since start-up, the latest last */
	Oid			tablespaces[BRAID_DEVICE_TABLESPACES];
	int			ntablespaces;
	/* phase gate, protected by BraidShared.lock */
	int			phase;			/* BRAID_PHASE_*: current or last phase */
	int			readers;		/* backends holding a read grant */
	int			writers;		/* backends holding a write grant */
	int			writer_threads; /* threads those writers write with */
	int			profilers;
	int			waiting_readers;
	int			waiting_writers;
	int			waiting_profilers;
	uint64		read_grants;
	uint64		write_grants;
	uint64		waits;
	uint64		phase_switches;
	uint64		overlaps;		/* grants that overlapped the other kind */
	pg_atomic_uint64 ungated_reads; /* reads counted without a read grant (a
									 * bug if ever non-zero) */
	BraidDeviceTraffic traffic;
	/* the emulated device's clock (emulate.c), updated without the lock */
	BraidDeviceClock clock;
} BraidDeviceSlot;

/* Decline reasons counted in braidsort.stats. */
typedef enum BraidDecline
{
	BRAID_DECLINE_BOUNDED,		/* a LIMIT may bound the Sort */
	BRAID_DECLINE_KEY,			/* a key has no exact encoder, or is too wide */
	BRAID_DECLINE_SHAPE,		/* plan shape braidsort cannot take */
	BRAID_DECLINE_COST,			/* the cost model prefers PostgreSQL's sort */
	BRAID_DECLINE_STATEMENT,	/* statement kind (FOR UPDATE, DML, ...) */
	BRAID_NUM_DECLINES
} BraidDecline;

/* Sort methods counted in braidsort.stats. */
typedef enum BraidMethod
{
	BRAID_METHOD_ONEPASS,
	BRAID_METHOD_MERGEPASS,
	BRAID_METHOD_HYBRID,		/* the write-limited modes */
	BRAID_METHOD_SEGMENT,
	BRAID_METHOD_LAZY,
	BRAID_NUM_METHODS
} BraidMethod;

/* BraidJoin's modes counted in braidsort.stats (as BraidJoinMode). */
#define BRAID_NUM_JOIN_MODES	4

typedef struct BraidShared
{
	LWLock	   *lock;			/* slots, gates and profiles */
	ConditionVariable gate_cv;	/* broadcast whenever a grant is released */
	int			ndevices;
	BraidDeviceSlot devices[BRAID_MAX_DEVICES];
	BraidProfile profiles[BRAID_MAX_DEVICES];	/* by tablespace */
	/* cumulative statistics */
	pg_atomic_uint64 sorts[BRAID_NUM_METHODS];
	pg_atomic_uint64 sorts_value_log;
	pg_atomic_uint64 adaptive_stayed;	/* adaptive sorts left to tuplesort */
	pg_atomic_uint64 adaptive_switched; /* ... and switched to braidsort */
	pg_atomic_uint64 adaptive_declined; /* ... or left to PostgreSQL's
										 * external sort by the cost model */
	pg_atomic_uint64 rows_sorted;
	pg_atomic_uint64 value_bytes_avoided;
	pg_atomic_uint64 declines[BRAID_NUM_DECLINES];
	pg_atomic_uint64 joins[BRAID_NUM_JOIN_MODES];
	pg_atomic_uint64 join_rows; /* input rows of both sides */
	pg_atomic_uint64 join_held_blocks;	/* buffers BraidJoins keep pinned
										 * (join_rows.c), at most a quarter of
										 * shared buffers */
	pg_atomic_uint64 orphans_removed;
	pg_atomic_uint64 spill_tablespace_fallbacks;	/* statements that could
													 * not use the setting */
	pg_atomic_uint64 stats_reset;	/* TimestampTz */
} BraidShared;

extern BraidShared *braid_shared;

/*
 * A module's shared state: "request" reserves it (shmem_request_hook),
 * "attach" creates or attaches to it (shmem_startup_hook, under
 * AddinShmemInitLock), "created" runs once after the postmaster created
 * braidsort's area (outside the lock).  Any may be NULL.
 */
typedef void (*BraidShmemCallback) (void);

extern void braid_shmem_add(BraidShmemCallback request, BraidShmemCallback attach,
							BraidShmemCallback created);
extern void braid_shmem_init(void);

#endif							/* BRAID_SHMEM_H */
