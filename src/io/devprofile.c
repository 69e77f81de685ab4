/*-------------------------------------------------------------------------
 *
 * devprofile.c
 *	  What a device's stored profile says to the rest of braidsort.
 *
 * profile.c measures a device and stores its profile in shared memory;
 * this file reads it back for its users: the phase gate (iosched.c) takes
 * its rules and its writers' cap from the profile of the device, the
 * thread pools their sizes and the planner its spill costs from that of
 * the tablespace.  A profile counts only in a backend whose emulation
 * settings (braidsort.emulate_*) are those it was taken under: otherwise
 * it describes another device, and everything here acts as if there were
 * none.
 *
 * src/io/devprofile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "compat.h"
#include "core/pool.h"
#include "core/profkernel.h"
#include "io/devprofile.h"
#include "io/iosched.h"

static const BraidProfile *find_profile(Oid spcoid);

/*
 * braid_sched_profile_matches
 *		Whether profile p was taken under the emulation in force in this
 *		backend (braidsort.emulate_*): only then does it describe the device
 *		this backend spills to.  Without emulation the lanes do not matter;
 *		a profile whose lanes were not recorded (-1) matches no emulation.
 */
bool
braid_sched_profile_matches(const BraidProfile *p)
{
	bool		emulated = p->emulate_read_ns != 0 || p->emulate_write_ns != 0 ||
		p->emulate_interference_ns != 0;

	return p->emulate_read_ns == braid_emulate_read_ns &&
		p->emulate_write_ns == braid_emulate_write_ns &&
		p->emulate_interference_ns == braid_emulate_interference_ns &&
		(!emulated || p->emulate_parallelism == braid_emulate_parallelism);
}

/*
 * find_stored_profile
 *		The stored profile of tablespace spcoid, in shared memory, whatever
 *		emulation it was taken under; NULL if none.  Callers hold the lock,
 *		or read a few numbers of it without (a torn read only skews a pool
 *		size or a cost estimate).
 */
static const BraidProfile *
find_stored_profile(Oid spcoid)
{
	if (braid_shared == NULL || !OidIsValid(spcoid))
		return NULL;
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
	{
		const BraidProfile *p = &braid_shared->profiles[i];

		if (p->valid && p->spcoid == spcoid)
			return p;
	}
	return NULL;
}

/*
 * find_profile
 *		The profile of tablespace spcoid that pool sizes and costs use: the
 *		stored one if it was taken under the emulation in force, else NULL,
 *		as if there were none (braid_sched_profile_status says why).
 */
static const BraidProfile *
find_profile(Oid spcoid)
{
	const BraidProfile *p = find_stored_profile(spcoid);

	return p != NULL && braid_sched_profile_matches(p) ? p : NULL;
}

/*
 * braid_sched_device_profile
 *		The profile of device slot d that its gate follows: of the profiles
 *		of tablespaces used through it since start-up (note_tablespace),
 *		taken on its file system (by st_dev: not before the tablespace's
 *		mount changed) under the emulation in force, the newest, so that
 *		two tablespaces on one file system with profiles of their own give
 *		the device one set of rules and one writers' cap, whichever was used
 *		last; where there is none, that of the tablespace last used on it.
 *		Lock held, or a few numbers read without (as find_stored_profile).
 */
const BraidProfile *
braid_sched_device_profile(const BraidDeviceSlot *d)
{
	const BraidProfile *best = NULL;

	if (braid_shared == NULL)
		return NULL;
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
	{
		const BraidProfile *p = &braid_shared->profiles[i];
		bool		used = false;

		if (!p->valid || p->dev != d->dev || !braid_sched_profile_matches(p) ||
			(best != NULL && p->taken_at <= best->taken_at))
			continue;
		for (int t = 0; t < d->ntablespaces && !used; t++)
			used = d->tablespaces[t] == p->spcoid;
		if (used)
			best = p;
	}
	return best != NULL ? best : find_profile(d->spcoid);
}

/*
 * braid_sched_profile_status
 *		Whether tablespace spcoid has a stored profile and whether this
 *		backend uses it (BRAID_PROFILE_*); with a stored profile and "copy"
 *		not NULL, a copy of it, taken under the lock.
 */
int
braid_sched_profile_status(Oid spcoid, BraidProfile *copy)
{
	const BraidProfile *p;
	int			status = BRAID_PROFILE_NONE;

	if (braid_shared == NULL)
		return status;
	LWLockAcquire(braid_shared->lock, LW_SHARED);
	p = find_stored_profile(spcoid);
	if (p != NULL)
	{
		status = braid_sched_profile_matches(p) ?
			BRAID_PROFILE_IN_USE : BRAID_PROFILE_OTHER_EMULATION;
		if (copy != NULL)
			memcpy(copy, p, sizeof(BraidProfile));
	}
	LWLockRelease(braid_shared->lock);
	return status;
}

/*
 * braid_sched_spill_ns_per_byte
 *		What writing a byte to tablespace spcoid's device and reading it back
 *		costs, from its stored profile (best sequential write and read
 *		bandwidth); 0 without a profile.
 */
double
braid_sched_spill_ns_per_byte(Oid spcoid)
{
	double		w,
				r;

	/* a line is 64 bytes */
	if (!braid_sched_spill_line_ns(spcoid, &w, &r))
		return 0;
	return (w + r) / 64.0;
}

/*
 * best_threads
 *		Thread count with the highest bandwidth for op at its largest
 *		measured access size; 0 if the profile has no such rows.  Reads
 *		the shared profile: the caller holds the lock, or owns a copy.
 */
int
braid_profile_best_threads(const BraidProfile *p, int op, double *mbps)
{
	int			best = 0;
	int			size = 0;
	double		bw = 0;

	for (int i = 0; i < p->nrows; i++)
		if (p->rows[i].op == op && p->rows[i].access_size > size)
			size = p->rows[i].access_size;
	for (int i = 0; i < p->nrows; i++)
	{
		const BraidProfileRow *r = &p->rows[i];

		if (r->op == op && r->access_size == size && r->mb_per_s > bw)
		{
			bw = r->mb_per_s;
			best = r->threads;
		}
	}
	if (mbps)
		*mbps = bw;
	return best;
}

/*
 * braid_profile_interference
 *		What profile p says writes do to reads: single-thread sequential read
 *		bandwidth (4 kB accesses) alone over the same while a writer runs;
 *		0 if the profile lacks either row.  Reads the shared profile: the
 *		caller holds the lock, or owns a copy.
 */
double
braid_profile_interference(const BraidProfile *p)
{
	const BraidProfileRow *alone = braid_profile_row(p, BRAID_PROF_SEQ_READ, 4096, 1);
	const BraidProfileRow *under = braid_profile_row(p, BRAID_PROF_READ_UNDER_WRITE, 4096, 1);

	if (!alone || !under || alone->mb_per_s <= 0 || under->mb_per_s <= 0)
		return 0;
	return alone->mb_per_s / under->mb_per_s;
}

/*
 * braid_profile_interferes
 *		Whether profile p shows read/write interference (WiscSort's "I"):
 *		reads under a writer at most 1/BRAID_INTERFERENCE_MIN as fast as
 *		alone.  A profile that could not measure it (0: no reads under a
 *		writer, as with max_threads = 1) counts as showing it, so that the
 *		gate still does what io_policy says.
 */
bool
braid_profile_interferes(const BraidProfile *p)
{
	double		ratio = braid_profile_interference(p);

	return ratio == 0 || ratio >= BRAID_INTERFERENCE_MIN;
}

/*
 * braid_profile_write_constrained
 *		Whether profile p shows that the device's writes stop scaling
 *		(WiscSort's "D"): the best write bandwidth at fewer threads than the
 *		most profiled, or writes scaling (4 kB accesses, one thread to the
 *		most) less than half as well as reads.  A profile of one thread
 *		count, or without those rows, cannot tell (*measured false, if not
 *		NULL), and counts as showing it.
 */
bool
braid_profile_write_constrained(const BraidProfile *p, bool *measured)
{
	int			maxt = 0;
	int			wt;
	const BraidProfileRow *r1,
			   *w1,
			   *rmax,
			   *wmax;

	for (int i = 0; i < p->nrows; i++)
		maxt = Max(maxt, p->rows[i].threads);
	wt = braid_profile_best_threads(p, BRAID_PROF_SEQ_WRITE, NULL);
	r1 = braid_profile_row(p, BRAID_PROF_SEQ_READ, 4096, 1);
	w1 = braid_profile_row(p, BRAID_PROF_SEQ_WRITE, 4096, 1);
	rmax = braid_profile_row(p, BRAID_PROF_SEQ_READ, 4096, maxt);
	wmax = braid_profile_row(p, BRAID_PROF_SEQ_WRITE, 4096, maxt);
	if (measured)
		*measured = false;
	if (maxt <= 1 || !r1 || !w1 || !rmax || !wmax ||
		r1->mb_per_s <= 0 || w1->mb_per_s <= 0)
		return true;
	if (measured)
		*measured = true;
	return wt < maxt ||
		(wmax->mb_per_s / w1->mb_per_s - 1) < 0.5 * (rmax->mb_per_s / r1->mb_per_s - 1);
}

/*
 * braid_profile_row
 *		The measurement of op at this access size and thread count in
 *		profile p; NULL if it has none.
 */
const BraidProfileRow *
braid_profile_row(const BraidProfile *p, int op, int size, int threads)
{
	for (int i = 0; i < p->nrows; i++)
		if (p->rows[i].op == op && p->rows[i].access_size == size &&
			p->rows[i].threads == threads)
			return &p->rows[i];
	return NULL;
}

/*
 * profile_threads
 *		Profiled best thread count of op for tablespace spcoid; 0 if there
 *		is no stored profile.  Called with or without the lock held (a
 *		torn read of one int is harmless for a pool size).
 */
static int
profile_threads(Oid spcoid, int op)
{
	const BraidProfile *p = find_profile(spcoid);

	return p ? braid_profile_best_threads(p, op, NULL) : 0;
}

/*
 * braid_sched_write_thread_count_for
 *		Writer threads for a device: braidsort.write_threads, else the
 *		profiled optimum, else 2 (writes rarely scale further, WiscSort 3.4).
 */
int
braid_sched_write_thread_count_for(Oid spcoid)
{
	return braid_sched_write_threads_of(find_profile(spcoid));
}

/*
 * braid_sched_write_threads_of
 *		Writer threads under profile p (NULL: none): braidsort.write_threads,
 *		else p's best, else 2.
 */
int
braid_sched_write_threads_of(const BraidProfile *p)
{
	int			n;

	if (braid_write_threads > 0)
		return braid_write_threads;
	n = p ? braid_profile_best_threads(p, BRAID_PROF_SEQ_WRITE, NULL) : 0;
	return n > 0 ? n : Min(2, braid_pool_cpus());
}

/*
 * braid_sched_read_thread_count_for
 *		Reader threads for a device: braidsort.read_threads, else the
 *		profiled optimum, else one per CPU (up to 8).
 */
int
braid_sched_read_thread_count_for(Oid spcoid)
{
	int			n;

	if (braid_read_threads > 0)
		return braid_read_threads;
	n = profile_threads(spcoid, BRAID_PROF_SEQ_READ);
	return n > 0 ? n : Min(braid_pool_cpus(), 8);
}

/*
 * braid_sched_spill_line_ns
 *		What a 64-byte line written to and read from tablespace spcoid's
 *		device costs (ns, at the best measured thread count), from its
 *		profile (find_profile: one taken under the emulation in force);
 *		false without one.
 */
bool
braid_sched_spill_line_ns(Oid spcoid, double *write_ns, double *read_ns)
{
	const BraidProfile *p;
	double		rd = 0,
				wr = 0;

	if (braid_shared == NULL)
		return false;
	LWLockAcquire(braid_shared->lock, LW_SHARED);
	p = find_profile(spcoid);
	if (p != NULL)
	{
		(void) braid_profile_best_threads(p, BRAID_PROF_SEQ_READ, &rd);
		(void) braid_profile_best_threads(p, BRAID_PROF_SEQ_WRITE, &wr);
	}
	LWLockRelease(braid_shared->lock);
	if (rd <= 0 || wr <= 0)
		return false;
	/* MB/s is bytes per microsecond: 64 bytes take 64000 / MB/s ns */
	*write_ns = 64000.0 / wr;
	*read_ns = 64000.0 / rd;
	return true;
}
