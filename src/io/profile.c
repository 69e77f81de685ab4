/*-------------------------------------------------------------------------
 *
 * profile.c
 *	  Device profiling: braidsort.profile_device(), the stored profiles
 *	  (braidsort.device_profiles) and their BRAID summary
 *	  (braidsort.device_summary()).
 *
 * A profile is WiscSort's device microbenchmark (section 3.4) run on a
 * tablespace's device: sequential and random reads and writes at several
 * access sizes and thread counts, and read bandwidth while a writer runs.
 * The measurements themselves are pure C on pool threads (profkernel.c),
 * on a scratch file created like a spill file (so an error, a cancel or a
 * crash removes it).  While a profile runs it holds its device's phase
 * gate alone: other braidsort I/O there waits rather than distort it.
 *
 * The last profile of each tablespace is kept in shared memory, where the
 * pool sizes and the cost model read it, and in $PGDATA/braidsort_profiles,
 * written atomically after each profile and read back at server start;
 * braidsort.forget_profile() drops one.  A profile records the emulation
 * it was taken under, and is used only under the same (devprofile.c).  One
 * whose threads did not get the CPUs (other work ran) is not stored.
 *
 * src/io/profile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include "catalog/pg_tablespace_d.h"
#include "commands/tablespace.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "io/device.h"
#include "io/devprofile.h"
#include "io/iosched.h"
#include "io/profile.h"
#include "core/pool.h"
#include "core/profkernel.h"

PG_FUNCTION_INFO_V1(braidsort_profile_device);
PG_FUNCTION_INFO_V1(braidsort_device_profiles);
PG_FUNCTION_INFO_V1(braidsort_device_summary);
PG_FUNCTION_INFO_V1(braidsort_forget_profile);

#define PROFILE_FILE		"braidsort_profiles"
#define PROFILE_MAGIC		0x42524450	/* "BRDP" */
#define PROFILE_VERSION		2	/* 1: braidsort 0.7 and earlier */

/* Seconds per measurement: long enough to be steady, short enough to wait. */
#define PROFILE_SECONDS		0.1

/*
 * A measurement whose threads got less than this part of the CPUs they
 * could have had is taken again, up to PROFILE_TRIES times in all; if no
 * try gets it, the profile is not stored (see measure()).
 */
#define PROFILE_MIN_CPU_SHARE	0.8
#define PROFILE_TRIES			3

/*
 * The smallest scratch file: smaller ones would fit in the CPU caches and
 * measure those.
 */
#define PROFILE_MIN_SIZE_MB		16

/* The SQL DEFAULTs of profile_device(), also what a NULL argument means. */
#define PROFILE_DEFAULT_SIZE_MB		256
#define PROFILE_DEFAULT_MAX_THREADS	0

/* What a profile measures at each thread count (WiscSort 3.4). */
static const struct
{
	BraidProfOp op;
	int			size;
}			profile_plan[] =

{
	{BRAID_PROF_SEQ_READ, 4096},
	{BRAID_PROF_RAND_READ, 64},
	{BRAID_PROF_RAND_READ, 256},
	{BRAID_PROF_RAND_READ, 4096},
	{BRAID_PROF_SEQ_WRITE, 4096},
	{BRAID_PROF_RAND_WRITE, 64},
	{BRAID_PROF_RAND_WRITE, 256},
	{BRAID_PROF_RAND_WRITE, 4096},
	{BRAID_PROF_READ_UNDER_WRITE, 4096},
};

/*
 * A profile as braidsort 0.7 and earlier stored it (PROFILE_VERSION 1):
 * without the media, the interference and the lanes of the emulation.
 */
typedef struct BraidProfileV1
{
	bool		valid;
	Oid			spcoid;
	uint64		dev;
	int64		taken_at;
	int			emulate_read_ns;
	int			emulate_write_ns;
	int			nrows;
	BraidProfileRow rows[BRAID_MAX_PROFILE_ROWS];
} BraidProfileV1;

/*
 * read_profile
 *		Read one stored profile of file format "version" into p: false at
 *		the end of the file or on a damaged record.  A version 1 profile
 *		records no media (unknown), no interference delay (taken as 0; one
 *		taken with only emulate_interference_ns set thus passes for an
 *		unemulated one) and no lanes (-1, unknown: a profile taken under
 *		emulation then matches no emulation in force,
 *		braid_sched_profile_matches; lanes do not matter without).
 */
static bool
read_profile(FILE *file, uint32 version, BraidProfile *p)
{
	if (version == 1)
	{
		BraidProfileV1 old;

		if (fread(&old, sizeof(old), 1, file) != 1)
			return false;
		memset(p, 0, sizeof(*p));
		p->spcoid = old.spcoid;
		p->dev = old.dev;
		p->taken_at = old.taken_at;
		p->emulate_read_ns = old.emulate_read_ns;
		p->emulate_write_ns = old.emulate_write_ns;
		p->emulate_parallelism = -1;
		p->media = BRAID_MEDIA_UNKNOWN;
		p->nrows = old.nrows;
		if (old.nrows >= 0 && old.nrows <= BRAID_MAX_PROFILE_ROWS)
			memcpy(p->rows, old.rows, sizeof(BraidProfileRow) * old.nrows);
	}
	else if (fread(p, sizeof(BraidProfile), 1, file) != 1)
		return false;
	return p->nrows >= 0 && p->nrows <= BRAID_MAX_PROFILE_ROWS;
}

/*
 * braid_profiles_load
 *		Server start (postmaster, shared memory just created): read the
 *		stored profiles back, of this file format or the one before.  A
 *		missing file means no profiles; a damaged one is ignored with a LOG
 *		message.
 */
void
braid_profiles_load(void)
{
	FILE	   *file;
	uint32		header[3];
	int			n = 0;

	file = AllocateFile(PROFILE_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", PROFILE_FILE)));
		return;
	}
	if (fread(header, sizeof(header), 1, file) != 1 ||
		header[0] != PROFILE_MAGIC ||
		(header[1] != PROFILE_VERSION && header[1] != 1) ||
		header[2] > BRAID_MAX_DEVICES)
		goto bad;
	for (uint32 i = 0; i < header[2]; i++)
	{
		BraidProfile *p = &braid_shared->profiles[n];

		if (!read_profile(file, header[1], p))
			goto bad;
		p->valid = true;
		n++;
	}
	FreeFile(file);
	return;

bad:
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
		braid_shared->profiles[i].valid = false;
	ereport(LOG,
			(errmsg("ignoring damaged braidsort device profile file \"%s\"", PROFILE_FILE)));
	FreeFile(file);
}

/*
 * braid_profiles_save
 *		Write every stored profile to $PGDATA/braidsort_profiles, through a
 *		temporary file and a durable rename (a crash leaves the old file or
 *		the new one, never half of one).  The caller holds the lock.
 */
void
braid_profiles_save(void)
{
	const char *tmp = PROFILE_FILE ".tmp";
	FILE	   *file;
	uint32		header[3] = {PROFILE_MAGIC, PROFILE_VERSION, 0};

	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
		if (braid_shared->profiles[i].valid)
			header[2]++;

	file = AllocateFile(tmp, PG_BINARY_W);
	if (file == NULL)
		goto error;
	if (fwrite(header, sizeof(header), 1, file) != 1)
		goto error;
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
		if (braid_shared->profiles[i].valid &&
			fwrite(&braid_shared->profiles[i], sizeof(BraidProfile), 1, file) != 1)
			goto error;
	if (FreeFile(file) != 0)
	{
		file = NULL;
		goto error;
	}
	(void) durable_rename(tmp, PROFILE_FILE, ERROR);
	return;

error:
	{
		int			save_errno = errno;

		if (file)
			FreeFile(file);
		(void) unlink(tmp);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	}
}

/*
 * store_profile
 *		Keep p as tablespace p->spcoid's profile, in place of an older one
 *		(or of the oldest profile when all places are taken), and save; if
 *		the file cannot be written, shared memory keeps what it had too.
 */
static void
store_profile(const BraidProfile *p)
{
	BraidProfile *old = palloc(sizeof(BraidProfile));
	int			place = -1;

	LWLockAcquire(braid_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BRAID_MAX_DEVICES && place < 0; i++)
		if (braid_shared->profiles[i].valid && braid_shared->profiles[i].spcoid == p->spcoid)
			place = i;
	for (int i = 0; i < BRAID_MAX_DEVICES && place < 0; i++)
		if (!braid_shared->profiles[i].valid)
			place = i;
	if (place < 0)
	{
		place = 0;
		for (int i = 1; i < BRAID_MAX_DEVICES; i++)
			if (braid_shared->profiles[i].taken_at < braid_shared->profiles[place].taken_at)
				place = i;
	}
	memcpy(old, &braid_shared->profiles[place], sizeof(BraidProfile));
	memcpy(&braid_shared->profiles[place], p, sizeof(BraidProfile));
	braid_shared->profiles[place].valid = true;
	PG_TRY();
	{
		braid_profiles_save();
	}
	PG_CATCH();
	{
		/* the file keeps what it had: so does shared memory */
		memcpy(&braid_shared->profiles[place], old, sizeof(BraidProfile));
		LWLockRelease(braid_shared->lock);
		PG_RE_THROW();
	}
	PG_END_TRY();
	LWLockRelease(braid_shared->lock);
	/* sessions waiting at the gate apply the new profile's rules now */
	ConditionVariableBroadcast(&braid_shared->gate_cv);
}

/*
 * profile_tablespace
 *		The tablespace profile_device() measures: the one named, or for NULL
 *		where braidsort spills (braidsort.spill_tablespace, else the first
 *		of temp_tablespaces the role may use, else the database's default).
 */
static Oid
profile_tablespace(FunctionCallInfo fcinfo)
{
	if (!PG_ARGISNULL(0))
		return get_tablespace_oid(NameStr(*PG_GETARG_NAME(0)), false);

	/*
	 * A spill_tablespace that no longer exists sends braidsort's spills
	 * elsewhere (device.c); profiling that other tablespace in its place
	 * would store a profile the DBA did not ask for: say so instead.
	 */
	if (braid_spill_tablespace != NULL && braid_spill_tablespace[0] != '\0')
	{
		Oid			named = get_tablespace_oid(braid_spill_tablespace, true);

		if (!OidIsValid(named))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("tablespace \"%s\" does not exist", braid_spill_tablespace),
					 errdetail("braidsort.spill_tablespace names it, and no tablespace was given to profile."),
					 errhint("Set braidsort.spill_tablespace to an existing tablespace, or name the tablespace to profile.")));
		/* pg_global, set server-wide: check_profile_target says why not */
		if (named == GLOBALTABLESPACE_OID)
			return named;
	}
	return braid_spill_tablespace_guess();
}

/*
 * check_profile_target
 *		Refuse, with a message that says what to change, a profile that
 *		could not create its scratch file of size_mb in tablespace spc: a
 *		tablespace without temporary files, no CREATE privilege (checked as
 *		for temp_tablespaces: the database's default needs none), or a
 *		size that does not fit in the free space of the device (a device
 *		with less than the smallest size free cannot be profiled at all:
 *		said as such, not as a size_mb to choose).
 *
 * The free space is checked here, before anything is created, because
 * the scratch file's creation can only tell that the device is full,
 * not that it is size_mb that should shrink.  Another session filling the
 * device meanwhile still makes the creation itself fail.
 */
static void
check_profile_target(Oid spc, int size_mb)
{
	char		dir[MAXPGPATH];
	struct statvfs fs;
	uint64		free_mb;

	if (spc == GLOBALTABLESPACE_OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot profile tablespace \"%s\"", get_tablespace_name(spc)),
				 errdetail("Temporary files are never placed in pg_global."),
				 errhint("Profile pg_default, whose temporary files are in the same data directory.")));

	if (spc != MyDatabaseTableSpace &&
		braid_tablespace_aclcheck(spc, GetUserId(), ACL_CREATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for tablespace %s", get_tablespace_name(spc)),
				 errdetail("The profile creates a scratch file in the tablespace, which needs CREATE privilege on it."),
				 errhint("Grant CREATE on tablespace %s to role %s, or profile another tablespace.",
						 get_tablespace_name(spc), GetUserNameFromId(GetUserId(), false))));

	/* pgsql_tmp is made on first use; until then its parent tells the device */
	TempTablespacePath(dir, spc);
	if (statvfs(dir, &fs) != 0)
	{
		char	   *slash = strrchr(dir, '/');

		if (slash != NULL)
			*slash = '\0';
		if (statvfs(dir, &fs) != 0)
			return;				/* the scratch file's creation says what is
								 * wrong */
	}
	free_mb = (uint64) fs.f_bavail * fs.f_frsize / (1024 * 1024);
	if (free_mb < PROFILE_MIN_SIZE_MB)
		ereport(ERROR,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("cannot profile tablespace \"%s\": its device has %llu MB free",
						get_tablespace_name(spc), (unsigned long long) free_mb),
				 errdetail("A profile needs a scratch file of at least %d MB, so that it measures the device rather than the CPU caches.",
						   PROFILE_MIN_SIZE_MB),
				 errhint("Free space on the device, or profile it before it fills up.")));
	if ((uint64) size_mb > free_mb)
		ereport(ERROR,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("size_mb %d exceeds the free space on the device of tablespace \"%s\"",
						size_mb, get_tablespace_name(spc)),
				 errdetail("The device has %llu MB free.", (unsigned long long) free_mb),
				 errhint("Choose a smaller size_mb.")));
}

/*
 * measure
 *		Measure op on file f at access size "size" with "threads" threads,
 *		under the emulation in force on the device's own clock (the profile
 *		sees the emulated device): false if the file is too small for them.
 *		*share is what the threads got of the CPUs they could have had
 *		(BraidProfResult.cpu_share over min(1, cpus / threads), where cpus
 *		is what the process may use: braid_profile_cpus); below
 *		PROFILE_MIN_CPU_SHARE, other work took CPUs and the measurement is
 *		tried again, up to PROFILE_TRIES times in all, keeping the try
 *		whose threads got the most.
 */
static bool
measure(BraidSpillFile *f, BraidProfOp op, int size, int threads, double cpus,
		BraidProfResult *r, double *share)
{
	int			workers = op == BRAID_PROF_READ_UNDER_WRITE ? threads + 1 : threads;
	double		could = Min(1.0, cpus / workers);

	*share = -1.0;
	for (int try = 0; try < PROFILE_TRIES && *share < PROFILE_MIN_CPU_SHARE; try++)
	{
		BraidProfResult one;
		BraidEmulation em;
		double		got;

		CHECK_FOR_INTERRUPTS();
		braid_device_emulation(f, &em);
		if (braid_profile_measure(f->base, f->size, op, size, threads,
								  PROFILE_SECONDS, &em, NULL, &one) != 0)
			return false;
		got = Min(1.0, one.cpu_share / could);
		if (got > *share)
		{
			*share = got;
			*r = one;
		}
	}
	return true;
}

/*
 * braidsort_profile_device
 *		SQL: braidsort.profile_device(tablespace, size_mb, max_threads)
 *		returns one row per measurement, and stores the profile.  A NULL
 *		argument means its default (see the SQL declaration).
 */
Datum
braidsort_profile_device(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			spc;
	int			size_mb;
	int			max_threads;
	BraidDeviceStats stats = {0};
	BraidSpillFile *file;
	BraidProfile *profile;
	int			slot;
	double		cpus = braid_profile_cpus();
	double		busy_share = 1.0;
	BraidProfOp busy_op = BRAID_PROF_SEQ_READ;
	int			busy_threads = 0;

	if (braid_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("braidsort shared memory is not initialized")));

	/* NULL means the default, as when the argument is left out */
	size_mb = PG_ARGISNULL(1) ? PROFILE_DEFAULT_SIZE_MB : PG_GETARG_INT32(1);
	max_threads = PG_ARGISNULL(2) ? PROFILE_DEFAULT_MAX_THREADS : PG_GETARG_INT32(2);
	if (size_mb < PROFILE_MIN_SIZE_MB || size_mb > 65536)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("size_mb must be between %d and 65536", PROFILE_MIN_SIZE_MB),
				 errhint("The default, %d, is enough to measure a device.",
						 PROFILE_DEFAULT_SIZE_MB)));
	if (max_threads < 0 || max_threads > 32)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_threads must be between 0 and 32"),
				 errhint("0 profiles up to one thread per CPU, at most braidsort.max_backend_threads.")));
	if (max_threads == 0)
		max_threads = Min(braid_pool_cpus(), 32);
	/* a backend runs no more threads than braidsort.max_backend_threads */
	max_threads = Min(max_threads, braid_pool_max_threads);

	spc = profile_tablespace(fcinfo);
	check_profile_target(spc, size_mb);

	InitMaterializedSRF(fcinfo, 0);

	/* a scratch file like a spill file: removed on any error */
	file = braid_spill_create_in(spc, (size_t) size_mb * 1024 * 1024, &stats,
								 "Choose a smaller size_mb, or free space on the device.");
	slot = file->devslot;
	profile = palloc0(sizeof(BraidProfile));
	profile->spcoid = spc;
	profile->dev = slot >= 0 ? braid_sched_slot(slot)->dev : 0;
	profile->media = file->is_pmem ? BRAID_MEDIA_PMEM : BRAID_MEDIA_OTHER;
	profile->emulate_read_ns = braid_emulate_read_ns;
	profile->emulate_write_ns = braid_emulate_write_ns;
	profile->emulate_interference_ns = braid_emulate_interference_ns;
	profile->emulate_parallelism = braid_emulate_parallelism;

	braid_sched_profile_begin(slot);

	/* touch every page once, so no measurement pays for page faults */
	memset(file->base, 0x5a, file->size);

	for (int threads = 1; threads <= max_threads; threads++)
	{
		for (int i = 0; i < lengthof(profile_plan); i++)
		{
			BraidProfResult r = {0};
			Datum		values[5];
			bool		nulls[5] = {0};
			BraidProfileRow *row;
			double		share;

			CHECK_FOR_INTERRUPTS();
			/* reads under write run a writer beside the readers: one more */
			if (profile_plan[i].op == BRAID_PROF_READ_UNDER_WRITE &&
				threads + 1 > braid_pool_max_threads)
				continue;
			if (!measure(file, profile_plan[i].op, profile_plan[i].size, threads,
						 cpus, &r, &share))
				continue;		/* too many threads for the size: skip */
			if (share < PROFILE_MIN_CPU_SHARE && share < busy_share)
			{
				busy_share = share;
				busy_op = profile_plan[i].op;
				busy_threads = threads;
			}
			if (profile->nrows == BRAID_MAX_PROFILE_ROWS)
				break;
			row = &profile->rows[profile->nrows++];
			row->op = profile_plan[i].op;
			row->access_size = profile_plan[i].size;
			row->threads = threads;
			row->mb_per_s = r.mb_per_s;
			row->ns_per_access = r.ns_per_access;

			values[0] = CStringGetTextDatum(braid_profile_op_name(row->op));
			values[1] = Int32GetDatum(row->access_size);
			values[2] = Int32GetDatum(row->threads);
			values[3] = Float8GetDatum(row->mb_per_s);
			values[4] = Float8GetDatum(row->ns_per_access);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}

	braid_sched_profile_end(slot);
	braid_spill_close(file);

	if (profile->media == BRAID_MEDIA_OTHER)
		ereport(NOTICE,
				(errmsg("tablespace \"%s\" is not on persistent memory",
						get_tablespace_name(spc)),
				 errdetail("Its files are not mapped directly (DAX): the profile measures the page cache of an ordinary file system."),
				 errhint("Mount the spill device with -o dax to profile persistent memory.")));

	/*
	 * A profile measured with CPUs taken by other work would make the pools
	 * and the cost model plan for a slower device than there is: say so, and
	 * keep the profile stored before, if any.
	 */
	if (busy_share < PROFILE_MIN_CPU_SHARE)
	{
		ereport(WARNING,
				(errmsg("device profile of tablespace \"%s\" not stored: other work took the CPUs while it ran",
						get_tablespace_name(spc)),
				 errdetail_plural("Measuring %s with %d thread, the profile's threads ran %.0f%% of the time they could have, after %d tries.",
								  "Measuring %s with %d threads, the profile's threads ran %.0f%% of the time they could have, after %d tries.",
								  busy_threads,
								  braid_profile_op_name(busy_op), busy_threads,
								  busy_share * 100.0, PROFILE_TRIES),
				 errhint("Profile the device again while the server is idle.")));
		return (Datum) 0;
	}

	profile->taken_at = GetCurrentTimestamp();
	store_profile(profile);
	return (Datum) 0;
}

/*
 * braidsort_forget_profile
 *		SQL: braidsort.forget_profile(tablespace) drops the stored profile of
 *		a tablespace, in shared memory and in $PGDATA/braidsort_profiles:
 *		pool sizes and the cost model go back to their defaults for its
 *		device.  True if there was a profile to drop.
 */
Datum
braidsort_forget_profile(PG_FUNCTION_ARGS)
{
	Name		name = PG_GETARG_NAME(0);
	Oid			spc = get_tablespace_oid(NameStr(*name), false);
	bool		dropped[BRAID_MAX_DEVICES] = {0};
	bool		found = false;

	if (braid_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("braidsort shared memory is not initialized")));
	LWLockAcquire(braid_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
		if (braid_shared->profiles[i].valid && braid_shared->profiles[i].spcoid == spc)
		{
			braid_shared->profiles[i].valid = false;
			dropped[i] = found = true;
		}
	PG_TRY();
	{
		if (found)
			braid_profiles_save();
	}
	PG_CATCH();
	{
		/* the file keeps the profile: so does shared memory */
		for (int i = 0; i < BRAID_MAX_DEVICES; i++)
			if (dropped[i])
				braid_shared->profiles[i].valid = true;
		LWLockRelease(braid_shared->lock);
		PG_RE_THROW();
	}
	PG_END_TRY();
	LWLockRelease(braid_shared->lock);
	/* sessions waiting at the gate apply the rules without it now */
	if (found)
		ConditionVariableBroadcast(&braid_shared->gate_cv);
	PG_RETURN_BOOL(found);
}

/*
 * copy_profiles
 *		Snapshot the stored profiles (views build rows without the lock).
 */
static BraidProfile *
copy_profiles(void)
{
	BraidProfile *copy = palloc(sizeof(BraidProfile) * BRAID_MAX_DEVICES);

	if (braid_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("braidsort shared memory is not initialized")));
	LWLockAcquire(braid_shared->lock, LW_SHARED);
	memcpy(copy, braid_shared->profiles, sizeof(BraidProfile) * BRAID_MAX_DEVICES);
	LWLockRelease(braid_shared->lock);
	return copy;
}

/* tablespace_datum: the tablespace's name, or NULL if it was dropped. */
static Datum
tablespace_datum(Oid spc, bool *isnull)
{
	char	   *name = get_tablespace_name(spc);

	*isnull = (name == NULL);
	return name ? CStringGetTextDatum(name) : (Datum) 0;
}

/*
 * braidsort_device_profiles
 *		SQL: every stored measurement (the view braidsort.device_profiles),
 *		with the emulation, the media and whether this session uses the
 *		profile (taken under its emulation).  Declared by braidsort 0.7 and
 *		earlier with the first ten columns only: the rest are then left
 *		out (tuplestore_putvalues takes as many as the declaration has).
 */
Datum
braidsort_device_profiles(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BraidProfile *profiles = copy_profiles();

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
	{
		BraidProfile *p = &profiles[i];

		if (!p->valid)
			continue;
		for (int j = 0; j < p->nrows; j++)
		{
			Datum		values[14];
			bool		nulls[14] = {0};

			values[0] = tablespace_datum(p->spcoid, &nulls[0]);
			values[1] = CStringGetTextDatum(psprintf("%u:%u", major((dev_t) p->dev),
													 minor((dev_t) p->dev)));
			values[2] = TimestampTzGetDatum((TimestampTz) p->taken_at);
			values[3] = CStringGetTextDatum(braid_profile_op_name(p->rows[j].op));
			values[4] = Int32GetDatum(p->rows[j].access_size);
			values[5] = Int32GetDatum(p->rows[j].threads);
			values[6] = Float8GetDatum(p->rows[j].mb_per_s);
			values[7] = Float8GetDatum(p->rows[j].ns_per_access);
			values[8] = Int32GetDatum(p->emulate_read_ns);
			values[9] = Int32GetDatum(p->emulate_write_ns);
			/* 0.7.1's columns, if the SQL declaration has them */
			values[10] = Int32GetDatum(p->emulate_interference_ns);
			values[11] = Int32GetDatum(p->emulate_parallelism);
			nulls[11] = p->emulate_parallelism < 0;
			values[12] = BoolGetDatum(p->media == BRAID_MEDIA_PMEM);
			nulls[12] = p->media == BRAID_MEDIA_UNKNOWN;
			values[13] = BoolGetDatum(braid_sched_profile_matches(p));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

/*
 * braidsort_device_summary
 *		SQL: per profiled device, what its profile says (the BRAID model of
 *		WiscSort section 2.3):
 *		- lambda: write/read cost ratio, best sequential read bandwidth over
 *		  best sequential write bandwidth;
 *		- read_threads, write_threads: thread counts with the best
 *		  sequential bandwidth;
 *		- interference: single-thread read bandwidth alone over the same
 *		  while a writer runs (NULL, and so is I, shown "?" in braid, if the
 *		  profile did not measure reads under a writer);
 *		- B: a 64-byte random read costs under a quarter of a 4 kB one;
 *		- R: 4 kB random reads reach at least a quarter of sequential reads;
 *		- A: lambda of at least 1.5;
 *		- I: interference of at least BRAID_INTERFERENCE_MIN (1.15);
 *		- D: writes stop scaling before the most threads profiled, or scale
 *		  less than half as well as reads (NULL, "?" in braid, for a profile
 *		  of one thread count).
 */
Datum
braidsort_device_summary(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BraidProfile *profiles = copy_profiles();

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
	{
		BraidProfile *p = &profiles[i];
		Datum		values[14];
		bool		nulls[14] = {0};
		double		rd,
					wr;
		int			rt,
					wt;
		const BraidProfileRow *seq1,
				   *r64,
				   *r4k;
		double		lambda = 0,
					interference = 0;
		bool		b = false,
					r = false,
					a,
					in,
					d,
					measured;
		StringInfoData braid;

		if (!p->valid)
			continue;
		rt = braid_profile_best_threads(p, BRAID_PROF_SEQ_READ, &rd);
		wt = braid_profile_best_threads(p, BRAID_PROF_SEQ_WRITE, &wr);
		if (rd > 0 && wr > 0)
			lambda = rd / wr;
		seq1 = braid_profile_row(p, BRAID_PROF_SEQ_READ, 4096, 1);
		interference = braid_profile_interference(p);
		r64 = braid_profile_row(p, BRAID_PROF_RAND_READ, 64, 1);
		r4k = braid_profile_row(p, BRAID_PROF_RAND_READ, 4096, 1);
		if (r64 && r4k)
			b = r64->ns_per_access < 0.25 * r4k->ns_per_access;
		if (r4k && seq1)
			r = r4k->mb_per_s >= 0.25 * seq1->mb_per_s;
		a = lambda >= 1.5;
		in = interference >= BRAID_INTERFERENCE_MIN;
		/* (unmeasured: NULL and "?", and the gate applies its rule) */
		d = braid_profile_write_constrained(p, &measured);

		initStringInfo(&braid);
		appendStringInfoString(&braid, b ? "B" : "-");
		appendStringInfoString(&braid, r ? "R" : "-");
		appendStringInfoString(&braid, a ? "A" : "-");
		appendStringInfoString(&braid, interference == 0 ? "?" : in ? "I" : "-");
		appendStringInfoString(&braid, !measured ? "?" : d ? "D" : "-");

		values[0] = tablespace_datum(p->spcoid, &nulls[0]);
		values[1] = CStringGetTextDatum(psprintf("%u:%u", major((dev_t) p->dev),
												 minor((dev_t) p->dev)));
		values[2] = TimestampTzGetDatum((TimestampTz) p->taken_at);
		values[3] = Float8GetDatum(lambda);
		values[4] = Int32GetDatum(rt);
		values[5] = Int32GetDatum(wt);
		/* not measured (no reads under a writer): unknown, not "none" */
		values[6] = Float8GetDatum(interference);
		nulls[6] = (interference == 0);
		values[7] = BoolGetDatum(b);
		values[8] = BoolGetDatum(r);
		values[9] = BoolGetDatum(a);
		values[10] = BoolGetDatum(in);
		nulls[10] = (interference == 0);
		values[11] = BoolGetDatum(d);
		nulls[11] = !measured;
		values[12] = CStringGetTextDatum(braid.data);
		values[13] = Float8GetDatum(rd);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
