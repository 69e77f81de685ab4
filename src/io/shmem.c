/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  Setting up braidsort's shared memory.
 *
 * braidsort's own area (BraidShared, shmem.h) is reserved and created
 * here; modules with shared state of their own register it with
 * braid_shmem_add() from _PG_init, and their callbacks run from the same
 * hooks, so that the area and its lock are set up before any of them, and
 * this file imports none of them.
 *
 * src/io/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "io/shmem.h"

#define BRAID_MAX_SHMEM_USERS 8

typedef struct BraidShmemUser
{
	BraidShmemCallback request;
	BraidShmemCallback attach;
	BraidShmemCallback created;
} BraidShmemUser;

BraidShared *braid_shared = NULL;

static BraidShmemUser users[BRAID_MAX_SHMEM_USERS];
static int	nusers = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * braid_shmem_add
 *		Register a module's shared state (from _PG_init).
 */
void
braid_shmem_add(BraidShmemCallback request, BraidShmemCallback attach,
				BraidShmemCallback created)
{
	if (nusers >= BRAID_MAX_SHMEM_USERS)
		elog(ERROR, "braidsort: too many users of shared memory");
	users[nusers].request = request;
	users[nusers].attach = attach;
	users[nusers].created = created;
	nusers++;
}

/*
 * braid_shmem_request
 *		shmem_request_hook: reserve the shared area and its lock, and what
 *		the registered modules need.
 */
static void
braid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(BraidShared)));
	RequestNamedLWLockTranche("braidsort", 1);
	for (int i = 0; i < nusers; i++)
		if (users[i].request)
			users[i].request();
}

/*
 * shared_init
 *		A new shared area: empty slots and zeroed counters.
 */
static void
shared_init(BraidShared *shared)
{
	memset(shared, 0, sizeof(BraidShared));
	shared->lock = &(GetNamedLWLockTranche("braidsort"))->lock;
	ConditionVariableInit(&shared->gate_cv);
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
	{
		BraidDeviceTraffic *t = &shared->devices[i].traffic;

		pg_atomic_init_u64(&t->bytes_written, 0);
		pg_atomic_init_u64(&t->bytes_read, 0);
		pg_atomic_init_u64(&t->lines_written, 0);
		pg_atomic_init_u64(&t->lines_read, 0);
		pg_atomic_init_u64(&t->files, 0);
		pg_atomic_init_u64(&shared->devices[i].ungated_reads, 0);
	}
	for (int i = 0; i < BRAID_NUM_METHODS; i++)
		pg_atomic_init_u64(&shared->sorts[i], 0);
	for (int i = 0; i < BRAID_NUM_DECLINES; i++)
		pg_atomic_init_u64(&shared->declines[i], 0);
	for (int i = 0; i < BRAID_NUM_JOIN_MODES; i++)
		pg_atomic_init_u64(&shared->joins[i], 0);
	pg_atomic_init_u64(&shared->join_rows, 0);
	pg_atomic_init_u64(&shared->join_held_blocks, 0);
	pg_atomic_init_u64(&shared->sorts_value_log, 0);
	pg_atomic_init_u64(&shared->adaptive_stayed, 0);
	pg_atomic_init_u64(&shared->adaptive_switched, 0);
	pg_atomic_init_u64(&shared->adaptive_declined, 0);
	pg_atomic_init_u64(&shared->rows_sorted, 0);
	pg_atomic_init_u64(&shared->value_bytes_avoided, 0);
	pg_atomic_init_u64(&shared->orphans_removed, 0);
	pg_atomic_init_u64(&shared->spill_tablespace_fallbacks, 0);
	pg_atomic_init_u64(&shared->stats_reset, (uint64) GetCurrentTimestamp());
}

/*
 * braid_shmem_startup
 *		shmem_startup_hook: create (or attach to) the shared area and the
 *		registered modules' state; when the postmaster creates it, run
 *		their "created" callbacks (loading the stored device profiles).
 */
static void
braid_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	braid_shared = ShmemInitStruct("braidsort", sizeof(BraidShared), &found);
	if (!found)
		shared_init(braid_shared);
	for (int i = 0; i < nusers; i++)
		if (users[i].attach)
			users[i].attach();
	LWLockRelease(AddinShmemInitLock);

	if (!found && !IsUnderPostmaster)
		for (int i = 0; i < nusers; i++)
			if (users[i].created)
				users[i].created();
}

/*
 * braid_shmem_init
 *		Install the shared-memory hooks (called from _PG_init).
 */
void
braid_shmem_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = braid_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = braid_shmem_startup;
}
