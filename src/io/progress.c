/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  What each running BraidSort node is doing: braidsort.progress.
 *
 * Shared memory holds a row of BRAID_PROGRESS_NODES slots per backend
 * (indexed by backend id, so parallel workers have rows too).  A node
 * claims a slot of its own backend's row when its sort begins, updates it
 * at each phase change, every few thousand input rows, each run written,
 * merge pass and gather batch, and releases it when the node ends.  An
 * error releases it with the resource owner that was current when it was
 * claimed (the portal's, during execution), and backend exit with
 * everything else, so no slot outlives its node.  A backend running more
 * nodes than it has slots shows only the first few.
 *
 * Only the owning backend writes a slot, so updates take no lock: as for
 * PgBackendStatus, the writer increments the slot's change count before and
 * after each update, and a reader copies the slot until it sees the same,
 * even count on both sides of its copy.
 *
 * Rows show the backend's pid to every role, the rest only to roles with
 * the privileges of the backend's (session) user or of pg_read_all_stats,
 * as the pg_stat_progress_* views do.
 *
 * src/io/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_authid_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "io/progress.h"
#include "io/shmem.h"

PG_FUNCTION_INFO_V1(braidsort_progress);

/* One node's progress, written by its backend only. */
typedef struct BraidProgressSlot
{
	int			changecount;	/* odd while the owner writes */
	bool		in_use;
	int			pid;
	int			leader_pid;		/* 0 unless a parallel worker */
	Oid			userid;			/* the backend's session user */
	int			node;			/* plan_node_id */
	int			phase;			/* BraidProgressPhase */
	int			waiting;		/* BRAID_PHASE_* waited for, or IDLE */
	int			merge_passes;
	int64		rows_read;
	int64		rows_estimated;
	int64		runs;
	int64		batches;
	TimestampTz started;
} BraidProgressSlot;

/*
 * Bracket an update of a slot, as PGSTAT_BEGIN/END_WRITE_ACTIVITY do: the
 * critical section turns an error in between (there is no code in between
 * that could raise one) into a PANIC rather than leave the count odd.
 */
#define BEGIN_SLOT_WRITE(s) \
	do { \
		START_CRIT_SECTION(); \
		(s)->changecount++; \
		pg_write_barrier(); \
	} while (0)

#define END_SLOT_WRITE(s) \
	do { \
		pg_write_barrier(); \
		(s)->changecount++; \
		Assert(((s)->changecount & 1) == 0); \
		END_CRIT_SECTION(); \
	} while (0)

/* MaxBackends rows of BRAID_PROGRESS_NODES slots */
static BraidProgressSlot *progress_slots = NULL;

/* This backend's claims: generation 0 means free. */
static BraidProgressSlot *my_row = NULL;
static bool my_row_checked = false;
static uint64 claim_gen[BRAID_PROGRESS_NODES];
static ResourceOwner claim_owner[BRAID_PROGRESS_NODES];
static uint64 next_generation = 1;

/*
 * The node whose I/O the backend does now (its claim is made once it has
 * entered), and the claim shown waiting.
 */
static const BraidProgress *active = NULL;
static BraidProgress waiting = {-1, 0};

static bool callbacks_registered = false;

static const char *const phase_names[] = {
	"building",
	"writing run",
	"sorting",
	"merging",
	"gathering",
	"done",
	"selecting",
};

/* progress_size: bytes of the shared slots. */
static Size
progress_size(void)
{
	return mul_size(mul_size((Size) MaxBackends, BRAID_PROGRESS_NODES),
					sizeof(BraidProgressSlot));
}

/*
 * braid_progress_shmem_request
 *		Reserve the slots (from the shmem_request_hook, when MaxBackends is
 *		known).
 */
void
braid_progress_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(progress_size()));
}

/*
 * braid_progress_shmem_init
 *		Create or attach to the slots (from the shmem_startup_hook, with
 *		AddinShmemInitLock held).
 */
void
braid_progress_shmem_init(void)
{
	bool		found;

	progress_slots = ShmemInitStruct("braidsort progress", progress_size(), &found);
	if (!found)
		memset(progress_slots, 0, progress_size());
}

/* claimed: does p still hold the claim it was given? */
static inline bool
claimed(const BraidProgress *p)
{
	return p != NULL && p->slot >= 0 && claim_gen[p->slot] != 0 &&
		claim_gen[p->slot] == p->generation;
}

/* slot_of: the shared slot of a claim. */
static inline BraidProgressSlot *
slot_of(const BraidProgress *p)
{
	return &my_row[p->slot];
}

/*
 * release_slot
 *		Take a slot off the view and forget the claim.
 */
static void
release_slot(int i)
{
	BraidProgressSlot *s = &my_row[i];

	BEGIN_SLOT_WRITE(s);
	s->in_use = false;
	s->waiting = BRAID_PHASE_IDLE;
	END_SLOT_WRITE(s);
	claim_gen[i] = 0;
	claim_owner[i] = NULL;
	if (waiting.slot == i)
		waiting.slot = -1;
}

/*
 * progress_release_callback
 *		Resource owner release: the nodes whose claims the released owner
 *		made are gone (an error, or a portal dropped without ending them).
 *		After an abort no wait can be under way.
 */
static void
progress_release_callback(ResourceReleasePhase phase, bool isCommit,
						  bool isTopLevel, void *arg)
{
	if (phase != RESOURCE_RELEASE_AFTER_LOCKS || my_row == NULL)
		return;
	for (int i = 0; i < BRAID_PROGRESS_NODES; i++)
		if (claim_gen[i] != 0 && claim_owner[i] == CurrentResourceOwner)
			release_slot(i);
	if (!isCommit)
	{
		braid_progress_wait_end();
		active = NULL;
	}
}

/* progress_exit_callback: backend exit ends every node. */
static void
progress_exit_callback(int code, Datum arg)
{
	if (my_row == NULL)
		return;
	for (int i = 0; i < BRAID_PROGRESS_NODES; i++)
		if (claim_gen[i] != 0)
			release_slot(i);
}

/*
 * get_my_row
 *		This backend's slots, NULL if it has none (no shared memory, or no
 *		backend id).  The first time, clear whatever a previous backend
 *		with the same id might have left (it released its slots as it
 *		exited: this is only a safeguard).
 */
static BraidProgressSlot *
get_my_row(void)
{
	if (my_row_checked)
		return my_row;
	my_row_checked = true;
	if (progress_slots == NULL || braid_backend_index() < 0)
		return NULL;
	my_row = &progress_slots[braid_backend_index() * BRAID_PROGRESS_NODES];
	for (int i = 0; i < BRAID_PROGRESS_NODES; i++)
	{
		BraidProgressSlot *s = &my_row[i];

		if (s->in_use)
		{
			BEGIN_SLOT_WRITE(s);
			s->in_use = false;
			END_SLOT_WRITE(s);
		}
	}
	return my_row;
}

/*
 * braid_progress_start
 *		A node's sort begins (the first fetch, or a rescan that rebuilds):
 *		claim a slot unless it holds one, and show the build starting.  No
 *		slot left: the node is not shown (p->slot is -1).
 */
void
braid_progress_start(BraidProgress *p, int node, double rows_estimated)
{
	BraidProgressSlot *s;
	PGPROC	   *leader = MyProc ? MyProc->lockGroupLeader : NULL;
	int			leader_pid = (leader != NULL && leader != MyProc) ? leader->pid : 0;
	Oid			userid = GetSessionUserId();
	TimestampTz now;

	if (get_my_row() == NULL)
	{
		p->slot = -1;
		return;
	}
	if (!claimed(p))
	{
		int			i;

		for (i = 0; i < BRAID_PROGRESS_NODES; i++)
			if (claim_gen[i] == 0)
				break;
		if (i == BRAID_PROGRESS_NODES)
		{
			p->slot = -1;
			return;
		}
		if (!callbacks_registered)
		{
			RegisterResourceReleaseCallback(progress_release_callback, NULL);
			before_shmem_exit(progress_exit_callback, (Datum) 0);
			callbacks_registered = true;
		}
		claim_gen[i] = next_generation++;
		claim_owner[i] = CurrentResourceOwner;
		p->slot = i;
		p->generation = claim_gen[i];
	}

	now = GetCurrentTimestamp();
	s = slot_of(p);
	BEGIN_SLOT_WRITE(s);
	s->pid = MyProcPid;
	s->leader_pid = leader_pid;
	s->userid = userid;
	s->node = node;
	s->phase = BRAID_PROGRESS_BUILDING;
	s->waiting = BRAID_PHASE_IDLE;
	s->merge_passes = 0;
	s->rows_read = 0;
	/* plan_rows can be far beyond int64 (cross joins): clamp */
	s->rows_estimated = rows_estimated >= (double) PG_INT64_MAX ? PG_INT64_MAX :
		(int64) rint(rows_estimated);
	s->runs = 0;
	s->batches = 0;
	s->started = now;
	s->in_use = true;
	END_SLOT_WRITE(s);
}

/* braid_progress_set_phase: the node enters another phase. */
void
braid_progress_set_phase(const BraidProgress *p, BraidProgressPhase phase)
{
	BraidProgressSlot *s;

	if (!claimed(p))
		return;
	s = slot_of(p);
	BEGIN_SLOT_WRITE(s);
	s->phase = phase;
	END_SLOT_WRITE(s);
}

/* braid_progress_set_rows: rows taken from the input so far. */
void
braid_progress_set_rows(const BraidProgress *p, int64 rows_read)
{
	BraidProgressSlot *s;

	if (!claimed(p))
		return;
	s = slot_of(p);
	BEGIN_SLOT_WRITE(s);
	s->rows_read = rows_read;
	END_SLOT_WRITE(s);
}

/* braid_progress_add_run: one more run written. */
void
braid_progress_add_run(const BraidProgress *p)
{
	BraidProgressSlot *s;

	if (!claimed(p))
		return;
	s = slot_of(p);
	BEGIN_SLOT_WRITE(s);
	s->runs++;
	END_SLOT_WRITE(s);
}

/* braid_progress_add_merge_pass: a merge pass begins. */
void
braid_progress_add_merge_pass(const BraidProgress *p)
{
	BraidProgressSlot *s;

	if (!claimed(p))
		return;
	s = slot_of(p);
	BEGIN_SLOT_WRITE(s);
	s->merge_passes++;
	END_SLOT_WRITE(s);
}

/* braid_progress_set_batches: gather batches loaded by this sort so far. */
void
braid_progress_set_batches(const BraidProgress *p, int64 batches)
{
	BraidProgressSlot *s;

	if (!claimed(p))
		return;
	s = slot_of(p);
	BEGIN_SLOT_WRITE(s);
	s->batches = batches;
	END_SLOT_WRITE(s);
}

/* braid_progress_end: the node ends; its row goes away. */
void
braid_progress_end(BraidProgress *p)
{
	if (claimed(p))
		release_slot(p->slot);
	p->slot = -1;
	if (active == p)
		active = NULL;
}

/*
 * braid_progress_enter
 *		The backend's braidsort I/O is now the node's whose claim is *p (a
 *		wait for the device's gate shows on its row); returns the node's
 *		before, for braid_progress_leave.  Nodes nest: a node's input may
 *		hold another.  *p must last until then (it is the node's state).
 */
const BraidProgress *
braid_progress_enter(const BraidProgress *p)
{
	const BraidProgress *prev = active;

	active = p;
	return prev;
}

/* braid_progress_leave: back to the node before braid_progress_enter. */
void
braid_progress_leave(const BraidProgress *prev)
{
	active = prev;
}

/*
 * braid_progress_wait_begin
 *		The backend waits for the device's phase gate (iosched.c): show it
 *		on the active node's row, if any.
 */
void
braid_progress_wait_begin(int gate_phase)
{
	BraidProgressSlot *s;

	if (!claimed(active))
		return;
	s = slot_of(active);
	BEGIN_SLOT_WRITE(s);
	s->waiting = gate_phase;
	END_SLOT_WRITE(s);
	waiting = *active;
}

/* braid_progress_wait_end: the wait is over (granted, or an abort). */
void
braid_progress_wait_end(void)
{
	BraidProgressSlot *s;

	if (claimed(&waiting))
	{
		s = slot_of(&waiting);
		BEGIN_SLOT_WRITE(s);
		s->waiting = BRAID_PHASE_IDLE;
		END_SLOT_WRITE(s);
	}
	waiting.slot = -1;
}

/*
 * read_slot
 *		A consistent copy of a slot written by another backend.
 */
static void
read_slot(BraidProgressSlot *s, BraidProgressSlot *copy)
{
	for (;;)
	{
		int			before;
		int			after;

		before = s->changecount;
		pg_read_barrier();
		memcpy(copy, s, sizeof(*copy));
		pg_read_barrier();
		after = s->changecount;
		if (before == after && (before & 1) == 0)
			break;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * braidsort_progress
 *		SQL: braidsort.progress() returns one row per running BraidSort
 *		node (see braidsort--0.3--0.3.1.sql for the columns).
 */
Datum
braidsort_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		read_all;
	Size		n;

	if (progress_slots == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("braidsort shared memory is not initialized"),
				 errhint("Add braidsort to shared_preload_libraries and restart the server.")));
	InitMaterializedSRF(fcinfo, 0);

	read_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	n = (Size) MaxBackends * BRAID_PROGRESS_NODES;
	for (Size i = 0; i < n; i++)
	{
		BraidProgressSlot s;
		Datum		values[11];
		bool		nulls[11] = {0};
		int			c = 0;

		read_slot(&progress_slots[i], &s);
		if (!s.in_use)
			continue;

		values[c++] = Int32GetDatum(s.pid);
		if (!read_all && !has_privs_of_role(GetUserId(), s.userid))
		{
			/* as pg_stat_progress_*: the pid only */
			for (; c < 11; c++)
				nulls[c] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			continue;
		}
		if (s.leader_pid != 0)
			values[c++] = Int32GetDatum(s.leader_pid);
		else
			nulls[c++] = true;
		values[c++] = Int32GetDatum(s.node);
		values[c++] = CStringGetTextDatum(s.phase >= 0 && s.phase < (int) lengthof(phase_names) ?
										  phase_names[s.phase] : "?");
		values[c++] = Int64GetDatum(s.rows_read);
		values[c++] = Int64GetDatum(s.rows_estimated);
		values[c++] = Int64GetDatum(s.runs);
		values[c++] = Int32GetDatum(s.merge_passes);
		values[c++] = Int64GetDatum(s.batches);
		switch (s.waiting)
		{
			case BRAID_PHASE_READ:
				values[c++] = CStringGetTextDatum("io gate read");
				break;
			case BRAID_PHASE_WRITE:
				values[c++] = CStringGetTextDatum("io gate write");
				break;
			case BRAID_PHASE_PROFILE:
				values[c++] = CStringGetTextDatum("io gate profile");
				break;
			default:
				nulls[c++] = true;
				break;
		}
		values[c++] = TimestampTzGetDatum(s.started);
		Assert(c == 11);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
