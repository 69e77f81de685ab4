/*-------------------------------------------------------------------------
 *
 * iosched.c
 *	  The interference-aware I/O phase gate.
 *
 * Byte-addressable devices lose read bandwidth when writes run at the same
 * time, and their writes stop scaling after a few threads (WiscSort's
 * "I" and "D" properties).  WiscSort scheduled one sort's reads and writes
 * so they never overlap; braidsort does it for every backend at once: each
 * spill device (a filesystem, told apart by st_dev) has a phase gate in
 * shared memory, and every braidsort read or write of spill data happens
 * under a grant of that gate.
 *
 * Under braidsort.io_policy = interference_aware, a device is at any time
 * either in a read phase (any number of readers) or in a write phase
 * (writers whose threads add up to at most the profiled optimum).  When
 * the other kind is waiting, the current phase admits nobody new, drains,
 * and the gate passes to the waiters: phases alternate, so neither kind
 * can starve the other.  Under io_policy = overlap every request is
 * granted at once (the interference-unaware baseline).  A device whose
 * profile shows that its reads do not slow down under writes has its reads
 * and writes overlap under interference_aware too, and one whose writes
 * scale has no cap on writers: there waiting could only cost.  Either way
 * a running device profile (profile.c) holds the device alone.  What the
 * device's profile says, the gate reads through devprofile.c.
 *
 * A grant covers a device access only: a block read out of a spill file's
 * mapping, a span written into it, or reader threads copying rows out of
 * a value log (device.c, spillread.c).  The CPU work around them -- merging, encoding,
 * gathering heap rows -- holds no grant, so one session's CPU work never
 * keeps another's writes off the device.  Grants never span a call into
 * the executor or user code, so a backend can always finish what it
 * holds.  A backend takes the read grants it needs one device at a time in
 * a fixed order, and gives them all up while it writes, so no two backends
 * can wait for each other.  An error or cancel releases whatever the backend held or waited
 * for (transaction and subtransaction abort, and backend exit).
 *
 * src/io/iosched.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"

#include "compat.h"
#include "io/progress.h"
#include "io/devprofile.h"
#include "io/iosched.h"

int			braid_io_policy = BRAID_IO_OVERLAP;
int			braid_read_threads = 0;
int			braid_write_threads = 0;

/* What this backend holds.  Read grants nest; a write suspends them. */
static int	read_depth[BRAID_MAX_DEVICES];
static bool read_granted[BRAID_MAX_DEVICES];
static int	write_slot = -1;
static int	write_threads_held = 0;
static int	profile_slot = -1;

/* What this backend is waiting for (undone if the wait is cancelled). */
static int	waiting_phase = BRAID_PHASE_IDLE;
static int	waiting_slot = -1;

static bool cleanup_registered = false;

/* the gate's named wait event, once registered (17+) */
static uint32 gate_wait_event = 0;

/* braid_sched_slot: the device slot with this index. */
BraidDeviceSlot *
braid_sched_slot(int slot)
{
	Assert(slot >= 0 && slot < BRAID_MAX_DEVICES);
	return &braid_shared->devices[slot];
}

/*
 * note_tablespace
 *		Tablespace spcoid is used through device slot d now: the one last
 *		used, and one of the tablespaces its profiles may come from
 *		(braid_sched_device_profile); of more than BRAID_DEVICE_TABLESPACES, the
 *		first noted is forgotten.  Lock held.
 */
static void
note_tablespace(BraidDeviceSlot *d, Oid spcoid)
{
	d->spcoid = spcoid;
	for (int i = 0; i < d->ntablespaces; i++)
		if (d->tablespaces[i] == spcoid)
			return;
	if (d->ntablespaces == BRAID_DEVICE_TABLESPACES)
	{
		memmove(&d->tablespaces[0], &d->tablespaces[1],
				sizeof(Oid) * (BRAID_DEVICE_TABLESPACES - 1));
		d->ntablespaces--;
	}
	d->tablespaces[d->ntablespaces++] = spcoid;
}

/*
 * braid_sched_device
 *		The slot of the device holding directory "dir" (reached through
 *		tablespace spcoid), allocated on first use.  -1 if every slot is
 *		taken: that device's I/O then runs without a gate (and a WARNING
 *		says so once).
 */
int
braid_sched_device(Oid spcoid, const char *dir)
{
	struct stat st;
	uint64		dev;
	int			slot = -1;
	static bool warned = false;

	if (braid_shared == NULL)
		return -1;
	if (stat(dir, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat directory \"%s\": %m", dir)));
	dev = (uint64) st.st_dev;

	LWLockAcquire(braid_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < braid_shared->ndevices; i++)
	{
		if (braid_shared->devices[i].dev == dev)
		{
			slot = i;
			break;
		}
	}
	if (slot < 0 && braid_shared->ndevices < BRAID_MAX_DEVICES)
	{
		slot = braid_shared->ndevices++;
		braid_shared->devices[slot].in_use = true;
		braid_shared->devices[slot].dev = dev;
	}
	if (slot >= 0)
		note_tablespace(&braid_shared->devices[slot], spcoid);
	LWLockRelease(braid_shared->lock);

	if (slot < 0 && !warned)
	{
		warned = true;
		ereport(WARNING,
				(errmsg("braidsort cannot schedule I/O on more than %d spill devices",
						BRAID_MAX_DEVICES),
				 errdetail("Spill I/O to the device of \"%s\" runs without its I/O gate.",
						   dir)));
	}
	return slot;
}

/* ---------------------------------------------------------------------
 * The phase gate
 * ---------------------------------------------------------------------
 */

/*
 * What the profile in force says of each device slot, as this backend last
 * worked it out: the profile (by tablespace and time taken) it came from,
 * so that a grant rescans the profile's rows only when another profile is
 * in force.
 */
typedef struct ProfileVerdict
{
	Oid			spcoid;
	int64		taken_at;
	bool		interferes;		/* WiscSort's "I" */
	bool		constrained;	/* WiscSort's "D" */
} ProfileVerdict;

static ProfileVerdict verdicts[BRAID_MAX_DEVICES];

/*
 * gate_rules
 *		Which of interference_aware's rules apply to device d: keeping
 *		reads and writes apart (*apart) where its reads slow down under
 *		writes, and capping writers' threads (*capped) where its writes stop
 *		scaling.  The profile that says so is the device's
 *		(braid_sched_device_profile: the newest of its tablespaces' profiles taken
 *		under this backend's emulation), whichever of its tablespaces a
 *		sort spills through.  A rule a profile shows not to be needed would
 *		only cost; without a profile, or where it did not measure the
 *		property, the rule applies.  Lock held.
 */
static void
gate_rules(BraidDeviceSlot *d, bool *apart, bool *capped)
{
	const BraidProfile *p;
	ProfileVerdict *v = &verdicts[d - braid_shared->devices];

	*apart = *capped = false;
	if (braid_io_policy != BRAID_IO_INTERFERENCE_AWARE)
		return;
	p = braid_sched_device_profile(d);
	if (p == NULL)
	{
		*apart = *capped = true;
		return;
	}
	if (v->spcoid != p->spcoid || v->taken_at != p->taken_at)
	{
		v->spcoid = p->spcoid;
		v->taken_at = p->taken_at;
		v->interferes = braid_profile_interferes(p);
		v->constrained = braid_profile_write_constrained(p, NULL);
	}
	*apart = v->interferes;
	*capped = v->constrained;
}

/*
 * can_read: may a new reader enter this device now (apart: keeping reads
 * and writes apart)?  (Lock held.)
 */
static bool
can_read(BraidDeviceSlot *d, bool apart)
{
	if (d->profilers > 0 || d->waiting_profilers > 0)
		return false;
	if (!apart)
		return true;
	if (d->writers > 0)
		return false;
	/* writers are waiting: let this read phase drain and pass the gate */
	if (d->waiting_writers > 0 && (d->readers > 0 || d->phase == BRAID_PHASE_READ))
		return false;
	return true;
}

/*
 * write_cap
 *		Writer threads a device takes at once: braidsort.write_threads, or
 *		the profiled optimum in the device's profile (braid_sched_device_profile).
 */
static int
write_cap(BraidDeviceSlot *d)
{
	return braid_sched_write_threads_of(braid_sched_device_profile(d));
}

/*
 * braid_sched_device_write_cap
 *		write_cap of the device slot with this index (braidsort.devices).
 *		Called without the lock (a torn read of a profile's rows only skews
 *		the number shown).
 */
int
braid_sched_device_write_cap(int slot)
{
	return write_cap(braid_sched_slot(slot));
}

/*
 * can_write
 *		May a writer with this many threads enter now (capped: writers'
 *		threads are capped; apart: reads and writes are kept apart)?  (Lock
 *		held.)
 */
static bool
can_write(BraidDeviceSlot *d, bool capped, bool apart, int threads)
{
	if (d->profilers > 0 || d->waiting_profilers > 0)
		return false;
	if (capped && d->writers > 0 && d->writer_threads + threads > write_cap(d))
		return false;
	if (!apart)
		return true;
	if (d->readers > 0)
		return false;
	/* readers are waiting: let this write phase drain and pass the gate */
	if (d->waiting_readers > 0 && (d->writers > 0 || d->phase == BRAID_PHASE_WRITE))
		return false;
	return true;
}

/* can_profile: a profile needs the device to itself.  (Lock held.) */
static bool
can_profile(BraidDeviceSlot *d)
{
	return d->readers == 0 && d->writers == 0 && d->profilers == 0;
}

/* enter_phase: count a grant of "phase" on d.  (Lock held.) */
static void
enter_phase(BraidDeviceSlot *d, int phase, int threads)
{
	if (d->phase != phase && d->phase != BRAID_PHASE_IDLE)
		d->phase_switches++;
	d->phase = phase;
	switch (phase)
	{
		case BRAID_PHASE_READ:
			if (d->writers > 0)
				d->overlaps++;
			d->readers++;
			d->read_grants++;
			break;
		case BRAID_PHASE_WRITE:
			if (d->readers > 0)
				d->overlaps++;
			d->writers++;
			d->writer_threads += threads;
			d->write_grants++;
			break;
		case BRAID_PHASE_PROFILE:
			d->profilers++;
			break;
	}
}

/* set_waiting: add delta to the waiting count of "phase" on d.  (Lock held.) */
static void
set_waiting(BraidDeviceSlot *d, int phase, int delta)
{
	if (phase == BRAID_PHASE_READ)
		d->waiting_readers += delta;
	else if (phase == BRAID_PHASE_WRITE)
		d->waiting_writers += delta;
	else
		d->waiting_profilers += delta;
}

/*
 * undo_waiting
 *		Forget that this backend waits (after a grant, or a cancelled wait).
 *		Lock held.
 */
static void
undo_waiting(void)
{
	if (waiting_slot >= 0)
		set_waiting(&braid_shared->devices[waiting_slot], waiting_phase, -1);
	waiting_slot = -1;
	waiting_phase = BRAID_PHASE_IDLE;
}

/* abort_cleanup: (sub)transaction abort releases whatever was held. */
static void
xact_cleanup(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		braid_sched_release_all();
}

/* subxact_cleanup: the same for a subtransaction abort. */
static void
subxact_cleanup(SubXactEvent event, SubTransactionId mySubid,
				SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		braid_sched_release_all();
}

/* exit_cleanup: backend exit releases whatever was held. */
static void
exit_cleanup(int code, Datum arg)
{
	braid_sched_release_all();
}

/* register_cleanup: once per backend, before the first grant. */
static void
register_cleanup(void)
{
	if (cleanup_registered)
		return;
	RegisterXactCallback(xact_cleanup, NULL);
	RegisterSubXactCallback(subxact_cleanup, NULL);
	before_shmem_exit(exit_cleanup, (Datum) 0);
	cleanup_registered = true;
}

/*
 * acquire
 *		Wait until "phase" can be granted on the slot, then take it.
 */
static void
acquire(int slot, int phase, int threads)
{
	BraidDeviceSlot *d;
	bool		waited = false;

	if (braid_shared == NULL)
		return;
	register_cleanup();
	d = &braid_shared->devices[slot];

	ConditionVariablePrepareToSleep(&braid_shared->gate_cv);
	for (;;)
	{
		bool		apart;
		bool		capped;
		bool		ok;

		LWLockAcquire(braid_shared->lock, LW_EXCLUSIVE);
		gate_rules(d, &apart, &capped);
		if (phase == BRAID_PHASE_READ)
			ok = can_read(d, apart);
		else if (phase == BRAID_PHASE_WRITE)
			ok = can_write(d, capped, apart, threads);
		else
			ok = can_profile(d);
		if (ok)
		{
			undo_waiting();
			enter_phase(d, phase, threads);
		}
		else if (!waited)
		{
			waited = true;
			waiting_phase = phase;
			waiting_slot = slot;
			set_waiting(d, phase, 1);
			d->waits++;
		}
		LWLockRelease(braid_shared->lock);
		if (ok)
			break;

		/* braidsort.progress shows the wait (an abort clears it) */
		braid_progress_wait_begin(phase);

		/*
		 * a timeout too, so a lost wake-up costs a second, never a hang;
		 * pg_stat_activity shows the wait as BraidsortDeviceGate (17+)
		 */
		(void) ConditionVariableTimedSleep(&braid_shared->gate_cv, 1000,
										   braid_wait_event("BraidsortDeviceGate",
															&gate_wait_event));
	}
	ConditionVariableCancelSleep();
	if (waited)
		braid_progress_wait_end();
}

/*
 * release
 *		Give up "phase" on the slots and wake the waiters.
 */
static void
release(const int *slots, int nslots, int phase, int threads)
{
	if (braid_shared == NULL || nslots == 0)
		return;
	LWLockAcquire(braid_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < nslots; i++)
	{
		BraidDeviceSlot *d = &braid_shared->devices[slots[i]];

		if (phase == BRAID_PHASE_READ)
			d->readers--;
		else if (phase == BRAID_PHASE_WRITE)
		{
			d->writers--;
			d->writer_threads -= threads;
		}
		else
			d->profilers--;
		Assert(d->readers >= 0 && d->writers >= 0 && d->profilers >= 0);
	}
	LWLockRelease(braid_shared->lock);
	ConditionVariableBroadcast(&braid_shared->gate_cv);
}

/*
 * take_read_grants
 *		Hold a read grant on every device this backend's read scopes need.
 *		Devices are taken one at a time in slot order, each by a fair
 *		single-device acquisition: a backend never waits for a device while
 *		holding a higher one (it gives those back first), and writers hold
 *		nothing while they wait, so no cycle of waits can form, and a reader
 *		of several devices is not starved by the phases of each.
 */
static void
take_read_grants(void)
{
	int			lowest_needed = BRAID_MAX_DEVICES;
	int			highest_held = -1;

	for (int s = 0; s < BRAID_MAX_DEVICES; s++)
	{
		if (read_depth[s] > 0 && !read_granted[s] && s < lowest_needed)
			lowest_needed = s;
		if (read_granted[s])
			highest_held = s;
	}
	if (lowest_needed == BRAID_MAX_DEVICES)
		return;
	if (highest_held > lowest_needed)
	{
		int			held[BRAID_MAX_DEVICES];
		int			nheld = 0;

		for (int s = lowest_needed + 1; s < BRAID_MAX_DEVICES; s++)
			if (read_granted[s])
			{
				read_granted[s] = false;
				held[nheld++] = s;
			}
		release(held, nheld, BRAID_PHASE_READ, 0);
	}
	for (int s = 0; s < BRAID_MAX_DEVICES; s++)
	{
		if (read_depth[s] > 0 && !read_granted[s])
		{
			acquire(s, BRAID_PHASE_READ, 0);
			read_granted[s] = true;
		}
	}
}

/*
 * braid_sched_read_begin
 *		Enter a read phase on these devices (duplicates and -1 allowed).
 *		Nests: only the outermost begin on a device waits for its gate.  On
 *		an error (a cancelled wait) the abort clean-up gives back whatever
 *		was granted.
 */
void
braid_sched_read_begin(const int *slots, int nslots)
{
	for (int i = 0; i < nslots; i++)
		if (slots[i] >= 0)
			read_depth[slots[i]]++;
	take_read_grants();
}

/*
 * braid_sched_read_end
 *		Leave the read phase entered by the matching braid_sched_read_begin.
 */
void
braid_sched_read_end(const int *slots, int nslots)
{
	int			done[BRAID_MAX_DEVICES];
	int			ndone = 0;

	for (int i = 0; i < nslots; i++)
	{
		int			s = slots[i];

		if (s < 0 || read_depth[s] == 0)
			continue;
		if (--read_depth[s] == 0 && read_granted[s])
		{
			read_granted[s] = false;
			done[ndone++] = s;
		}
	}
	release(done, ndone, BRAID_PHASE_READ, 0);
}

/*
 * read_suspend
 *		Give back every read grant this backend holds, keeping its read
 *		scopes open (to take them again when a write ends): a backend
 *		holds nothing while it waits for a write grant.
 */
static void
read_suspend(void)
{
	int			held[BRAID_MAX_DEVICES];
	int			nheld = 0;

	if (braid_shared == NULL)
		return;
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
		if (read_granted[i])
		{
			read_granted[i] = false;
			held[nheld++] = i;
		}
	release(held, nheld, BRAID_PHASE_READ, 0);
}

/*
 * braid_sched_write_begin
 *		Enter a write phase on a device with this many writer threads.  Read
 *		grants this backend holds (say, a merge reading runs while writing
 *		its output) are given up until braid_sched_write_end.
 */
void
braid_sched_write_begin(int slot, int threads)
{
	if (slot < 0 || braid_shared == NULL)
		return;
	Assert(write_slot < 0);
	read_suspend();

	threads = Max(threads, 1);
	threads = Min(threads, write_cap(&braid_shared->devices[slot]));
	acquire(slot, BRAID_PHASE_WRITE, threads);
	write_slot = slot;
	write_threads_held = threads;
}

/*
 * braid_sched_write_end
 *		Leave the write phase; wait for the suspended read grants again.
 */
void
braid_sched_write_end(int slot)
{
	if (slot < 0 || braid_shared == NULL || write_slot != slot)
		return;
	write_slot = -1;
	release(&slot, 1, BRAID_PHASE_WRITE, write_threads_held);
	write_threads_held = 0;

	take_read_grants();
}

/* braid_sched_write_threads_granted: threads the current write grant allows. */
int
braid_sched_write_threads_granted(void)
{
	return Max(write_threads_held, 1);
}

/*
 * braid_sched_profile_begin
 *		Take a device for a profile: every other braidsort I/O on it waits.
 */
void
braid_sched_profile_begin(int slot)
{
	if (slot < 0 || braid_shared == NULL)
		return;
	acquire(slot, BRAID_PHASE_PROFILE, 0);
	profile_slot = slot;
}

/* braid_sched_profile_end: give the device back. */
void
braid_sched_profile_end(int slot)
{
	if (slot < 0 || braid_shared == NULL || profile_slot != slot)
		return;
	profile_slot = -1;
	release(&slot, 1, BRAID_PHASE_PROFILE, 0);
}

/*
 * braid_sched_holds_read
 *		Does this backend hold a read grant on the slot now?  (The device
 *		layer checks every counted read against it.)
 */
bool
braid_sched_holds_read(int slot)
{
	return slot >= 0 && read_granted[slot];
}

/*
 * braid_sched_holds_any_read
 *		Does this backend hold a read grant on any device now?
 */
bool
braid_sched_holds_any_read(void)
{
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
		if (read_granted[i])
			return true;
	return false;
}

/*
 * braid_sched_release_all
 *		Error, cancel or exit: give up every grant and wait of this backend.
 */
void
braid_sched_release_all(void)
{
	int			held[BRAID_MAX_DEVICES];
	int			nheld = 0;

	if (braid_shared == NULL)
		return;
	if (waiting_slot >= 0)
	{
		LWLockAcquire(braid_shared->lock, LW_EXCLUSIVE);
		undo_waiting();
		LWLockRelease(braid_shared->lock);
		/* the others may have been waiting for this waiter to go */
		ConditionVariableBroadcast(&braid_shared->gate_cv);
	}
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
	{
		if (read_granted[i])
			held[nheld++] = i;
		read_granted[i] = false;
		read_depth[i] = 0;
	}
	release(held, nheld, BRAID_PHASE_READ, 0);
	if (write_slot >= 0)
	{
		int			s = write_slot;

		write_slot = -1;
		release(&s, 1, BRAID_PHASE_WRITE, write_threads_held);
		write_threads_held = 0;
	}
	if (profile_slot >= 0)
	{
		int			s = profile_slot;

		profile_slot = -1;
		release(&s, 1, BRAID_PHASE_PROFILE, 0);
	}
}
