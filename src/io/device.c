/*-------------------------------------------------------------------------
 *
 * device.c
 *	  Spill files on the byte-addressable spill device, through libpmem.
 *
 * braidsort spills IndexMap runs (keys and refs), and the rows themselves
 * where they go through a value log that outgrows memory (valuelog.c).  A
 * spill file lives in the temporary-files directory of the spill tablespace
 * (braidsort.spill_tablespace if the role may create in it, as for
 * temp_tablespaces; else, or if it is empty, the session's
 * temp_tablespaces, else the database's default tablespace), named like
 * PostgreSQL's own temporary files (pgsql_tmp<pid>.braid<n>), so
 * pg_ls_tmpdir() shows it and the server's start-up clean-up removes it
 * after a crash.  It is also accounted like one: its traffic as the
 * executor's temporary blocks (EXPLAIN (BUFFERS), pg_stat_statements), and
 * when it goes, in pg_stat_database and under log_temp_files.
 *
 * Files are created at their final size with pmem_map_file(PMEM_FILE_CREATE),
 * which reserves the space with posix_fallocate() before anything is mapped:
 * a full device is an ordinary error at creation, never a SIGBUS on a store
 * to an unbacked page (which would take the server through crash recovery).
 * Writes are sequential, staged in DRAM and copied out in 4 kB-aligned
 * chunks with non-temporal stores; on persistent memory a file is drained
 * before it is read back, and on any other filesystem it is never synced
 * (braid_spill_finish).  Reads go straight to the mapping: the device is
 * byte-addressable (spillread.c).
 *
 * Every byte and every 64-byte line moved is counted per sort, and
 * braidsort.emulate_read_ns / braidsort.emulate_write_ns charge time per
 * line, to emulate slower or asymmetric devices on a tmpfs: an access
 * reserves its time on the device's clock in shared memory, which has
 * braidsort.emulate_parallelism lanes and is shared by every backend and
 * thread, and sleeps until its reservation ends (emulate.c).
 * braidsort.emulate_interference_ns adds a delay per line read that starts
 * while a write to the same device is reserved or granted (BRAID's
 * read/write interference, which a tmpfs does not have).
 *
 * Every flush of staged bytes happens under a write grant of the device's
 * phase gate, and every read of spill data under a read grant (but the
 * reads a gather helper makes ahead of the merge: see sort_gather.c), so
 * under braidsort.io_policy = interference_aware no read and write of any
 * two backends overlap on one device.  A grant covers the device access:
 * a block read (braid_spill_note_read, braid_spill_read_copy: spillread.c) brings its
 * lines in from the device and is charged under its own short grant, and
 * the caller decodes it afterwards, holding nothing; reader threads that
 * copy rows out of a mapping run under the backend's read scope
 * (braid_read_scope_begin).  So one session's CPU work (merging, encoding,
 * gathering heap rows) never holds the device from another's writes.
 * Traffic is also added to the device's cumulative counters in shared
 * memory (braidsort.stats).
 *
 * Every live file is on a backend-wide list, tagged with the resource owner
 * that created it: the executor node closes its files when it ends; an
 * error, a cancel or an abort releases the resource owner, whose callback
 * closes whatever that owner still had; backend exit closes everything.
 * temp_file_limit applies to braidsort's spill files (counted separately
 * from PostgreSQL's own temporary files).
 *
 * src/io/device.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <libpmem.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/pg_tablespace_d.h"
#include "commands/tablespace.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "compat.h"
#include "core/emulate.h"
#include "core/pool.h"
#include "io/device.h"
#include "io/devprofile.h"
#include "io/iosched.h"
#include "io/spillspace.h"

/*
 * Staging buffer per file: each flush is one write grant of the device's
 * phase gate (iosched.c), split among the writer threads when large enough.
 * It lives only while the file is being written.
 */
#define SPILL_STAGE_BYTES	(1024 * 1024)
#define SPILL_THREAD_MIN	(256 * 1024)	/* bytes per extra writer thread */
#define SPILL_ALIGN			4096

static BraidSpillFile *live_files = NULL;
static uint64 live_bytes = 0;
static uint32 file_counter = 0;
static bool callbacks_registered = false;

/* called at backend exit before the files go (braid_spill_on_exit) */
static BraidSpillExitHook exit_hooks[4];
static int	nexit_hooks = 0;

/*
 * Bytes this backend has written to spill files, ever: the executor's
 * temporary-block counters (pgBufferUsage) take whole BLCKSZ blocks of
 * them, so that many small writes add up to the exact count (reads:
 * spillread.c).
 */
static uint64 temp_bytes_written = 0;

static BraidSpillFile *spill_create(Oid spc, size_t size, BraidDeviceStats *stats,
									bool optional, const char *full_hint);

/*
 * braid_release_callback
 *		Resource owner release: close the files the released owner created.
 *		On commit that means the node leaked them, which is a bug: warn.
 */
static void
braid_release_callback(ResourceReleasePhase phase, bool isCommit,
					   bool isTopLevel, void *arg)
{
	BraidSpillFile *f = live_files;

	if (phase != RESOURCE_RELEASE_AFTER_LOCKS)
		return;
	while (f != NULL)
	{
		BraidSpillFile *next = f->next;

		if (f->owner == CurrentResourceOwner)
		{
			if (isCommit)
				elog(WARNING, "braidsort: spill file \"%s\" was not closed", f->path);
			braid_spill_close(f);
		}
		f = next;
	}
}

/*
 * braid_exit_callback
 *		Backend exit removes every live file, once no helper thread can be
 *		reading or writing a mapping (a merge ahead during a gather, a run
 *		coded during the build).
 */
static void
braid_exit_callback(int code, Datum arg)
{
	for (int i = 0; i < nexit_hooks; i++)
		exit_hooks[i] ();
	/* no helper thread may still be coding a run into a file's mapping */
	braid_pool_quiesce();
	while (live_files != NULL)
		braid_spill_close(live_files);
}

/*
 * braid_spill_on_exit
 *		Have "hook" called at backend exit before any spill file goes: a
 *		module whose helper threads may read a spill file's mapping stops
 *		them there (the gather's merge-ahead, tid_gather_copy.c).  The
 *		order of before_shmem_exit callbacks depends on what the backend
 *		did first, so this is not left to them.
 */
void
braid_spill_on_exit(BraidSpillExitHook hook)
{
	for (int i = 0; i < nexit_hooks; i++)
		if (exit_hooks[i] == hook)
			return;
	if (nexit_hooks == lengthof(exit_hooks))
		elog(ERROR, "braidsort: too many spill exit hooks");
	exit_hooks[nexit_hooks++] = hook;
}

/*
 * register_callbacks
 *		The first file of the backend: have its files closed by resource
 *		owner release and at backend exit.
 */
static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterResourceReleaseCallback(braid_release_callback, NULL);
	before_shmem_exit(braid_exit_callback, (Datum) 0);
	callbacks_registered = true;
}

/*
 * link_file
 *		Put a file mapped with "mapped" bytes on the backend's list of live
 *		files, tagged with the current resource owner.
 */
static void
link_file(BraidSpillFile *f, size_t mapped, int is_pmem, BraidDeviceStats *stats)
{
	f->size = mapped;
	f->is_pmem = (is_pmem != 0);
	f->persisted = true;
	f->stats = stats;
	f->owner = CurrentResourceOwner;
	f->next = live_files;
	if (live_files)
		live_files->prev = f;
	live_files = f;
}

/*
 * unlink_file
 *		Take a file off the backend's list of live files.
 */
static void
unlink_file(BraidSpillFile *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else
		live_files = f->next;
	if (f->next)
		f->next->prev = f->prev;
}

/*
 * braid_spill_create
 *		Create, reserve and map a spill file of "size" bytes (rounded up to
 *		4 kB).  Its traffic is counted in *stats.
 */
BraidSpillFile *
braid_spill_create(size_t size, BraidDeviceStats *stats)
{
	return spill_create(braid_spill_tablespace_next(), size, stats, false, NULL);
}

/*
 * braid_spill_create_in
 *		Create, reserve and map a scratch file of "size" bytes (rounded up
 *		to 4 kB) in tablespace spc's temporary directory, checking CREATE
 *		privilege as for temp_tablespaces, for a caller that writes it
 *		through its mapping (profile_device): such writes are not counted,
 *		so the file is reported at its full size when closed.  Its own
 *		traffic, if any, is counted in *stats.  full_hint is the hint of the
 *		error raised when the device has no room for it.
 */
BraidSpillFile *
braid_spill_create_in(Oid spc, size_t size, BraidDeviceStats *stats,
					  const char *full_hint)
{
	BraidSpillFile *f;

	/*
	 * As for temp_tablespaces, only the database's default tablespace needs
	 * no privilege.  (Spill files go where spill_tablespace_resolve() has
	 * checked, as PostgreSQL's own temporary files do.)
	 */
	if (spc != MyDatabaseTableSpace)
	{
		AclResult	aclresult = braid_tablespace_aclcheck(spc, GetUserId(), ACL_CREATE);

		if (aclresult != ACLCHECK_OK)
			aclcheck_error(aclresult, OBJECT_TABLESPACE, get_tablespace_name(spc));
	}
	f = spill_create(spc, size, stats, false, full_hint);

	f->scratch = true;
	return f;
}

/*
 * braid_spill_try_create
 *		Like braid_spill_create(), for a file the sort can do without: NULL
 *		instead of an error when the tablespace's directory cannot be made,
 *		temp_file_limit would be exceeded, or the device has no room.
 */
BraidSpillFile *
braid_spill_try_create(size_t size, BraidDeviceStats *stats)
{
	return spill_create(braid_spill_tablespace_next(), size, stats, true, NULL);
}

/*
 * spill_create
 *		Create, reserve and map a file in tablespace spc, which the caller
 *		has checked the user may use; with "optional", every failure returns
 *		NULL (leaving nothing behind) instead of raising an error.  full_hint,
 *		if not NULL, replaces a sort's hint when the device is full.
 */
static BraidSpillFile *
spill_create(Oid spc, size_t size, BraidDeviceStats *stats, bool optional,
			 const char *full_hint)
{
	char		dir[MAXPGPATH];
	BraidSpillFile *f;
	size_t		mapped = 0;
	int			is_pmem = 0;
	int			devslot;

	size = TYPEALIGN(SPILL_ALIGN, Max(size, (size_t) SPILL_ALIGN));

	if (temp_file_limit >= 0 &&
		(live_bytes + size) / 1024 > (uint64) temp_file_limit)
	{
		if (optional)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("temporary file size exceeds temp_file_limit (%dkB)",
						temp_file_limit),
				 errdetail("braidsort needed a spill file of %zu bytes.", size)));
	}

	register_callbacks();

	TempTablespacePath(dir, spc);
	if (MakePGDirectory(dir) < 0 && errno != EEXIST)
	{
		int			save_errno = errno;
		char	   *spcname;

		if (optional)
			return NULL;
		/* ENOENT: the tablespace's own directory is gone (a tmpfs rebooted) */
		spcname = IsTransactionState() ? get_tablespace_name(spc) : NULL;
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", dir),
				 save_errno == ENOENT && spcname != NULL ?
				 errhint("The directory of tablespace \"%s\" is missing: recreate it (after a tmpfs was emptied, see braidsort's README), or use another tablespace.",
						 spcname) : 0));
	}
	if (optional)
	{
		struct stat stbuf;

		/* braid_sched_device() raises an error if it cannot stat dir */
		if (stat(dir, &stbuf) != 0)
			return NULL;
	}
	devslot = braid_sched_device(spc, dir);

	f = MemoryContextAllocZero(TopMemoryContext, sizeof(BraidSpillFile));
	f->spcoid = spc;
	f->devslot = devslot;

	/*
	 * A name of another process's file: a parallel sort's worker leaves its
	 * runs to its leader (sort_shared.c), and a process that ended may have
	 * had this one's pid.  Take the next name; that file is not this one's to
	 * remove.
	 */
	for (int tries = 0;; tries++)
	{
		snprintf(f->path, sizeof(f->path), "%s/%s%d.braid%u",
				 dir, PG_TEMP_FILE_PREFIX, MyProcPid, file_counter++);
		f->base = pmem_map_file(f->path, size, PMEM_FILE_CREATE | PMEM_FILE_EXCL,
								0600, &mapped, &is_pmem);
		if (f->base != NULL || errno != EEXIST || tries >= 1000)
			break;
	}
	if (f->base == NULL)
	{
		int			save_errno = errno;
		char		path[MAXPGPATH];

		strlcpy(path, f->path, sizeof(path));
		if (save_errno != EEXIST)
			(void) unlink(path);
		pfree(f);
		if (optional)
			return NULL;
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write braidsort spill file \"%s\": %m", path),
				 errdetail("Reserving %zu bytes on the spill device failed: %s",
						   size, pmem_errormsg()),
				 save_errno == ENOSPC && full_hint ? errhint("%s", full_hint) :
				 save_errno == ENOSPC ?
				 errhint("The spill device is full. Free space on it, point braidsort.spill_tablespace "
						 "at a larger tablespace, or give sorts (braidsort.work_mem) and hash joins "
						 "(work_mem) more memory so that they spill less.") :
				 save_errno == ENOMEM ?
				 errhint("Too many spill files are mapped at once (see vm.max_map_count); raise "
						 "braidsort.work_mem so that sorts write fewer runs.") : 0));
	}
	link_file(f, mapped, is_pmem, stats);
	live_bytes += f->size;
	stats->files++;
	if (devslot >= 0)
		pg_atomic_fetch_add_u64(&braid_sched_slot(devslot)->traffic.files, 1);
	return f;
}

/* One writer thread's share of a flush. */
typedef struct FlushTask
{
	char	   *dst;			/* where the staged bytes go */
	const char *src;
	size_t		len;
	size_t		slice;			/* bytes per thread, 4 kB-aligned */
	size_t		file_off;		/* offset of dst in the file (line counts) */
	BraidEmulation em;			/* how the writes are charged */
} FlushTask;

/*
 * flush_task
 *		A writer thread: copy its slice with non-temporal stores, drain its
 *		own stores, and pay the emulated write latency of its lines.  Pure
 *		C: it runs on a pool thread.
 */
static void
flush_task(void *arg, int worker)
{
	FlushTask  *t = (FlushTask *) arg;
	size_t		from = (size_t) worker * t->slice;
	size_t		to = Min(t->len, from + t->slice);

	if (from >= to)
		return;
	pmem_memcpy(t->dst + from, t->src + from, to - from,
				PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_NODRAIN);
	pmem_drain();
	if (braid_emulation_active(&t->em))
		(void) braid_emulate_access(&t->em,
									braid_lines_spanned(t->file_off + from, t->file_off + to),
									true);
}

/*
 * count_written
 *		The len bytes after what the file had are written: count them (per
 *		sort and per device) and move the file's end past them.
 */
static void
count_written(BraidSpillFile *f, size_t len)
{
	uint64		lines = braid_lines_spanned(f->written, f->written + len);

	f->stats->bytes_written += len;
	f->stats->lines_written += lines;
	pgBufferUsage.temp_blks_written += braid_temp_blocks(&temp_bytes_written, len);
	if (f->devslot >= 0)
	{
		BraidDeviceTraffic *t = &braid_sched_slot(f->devslot)->traffic;

		pg_atomic_fetch_add_u64(&t->bytes_written, len);
		pg_atomic_fetch_add_u64(&t->lines_written, lines);
	}
	f->written += len;
	f->persisted = false;
}

/*
 * write_span
 *		Copy len bytes from src to the file's end with non-temporal stores,
 *		under a write grant of the device, on as many writer threads as the
 *		grant allows and the size is worth.
 */
static void
write_span(BraidSpillFile *f, const char *src, size_t len)
{
	FlushTask	task;
	int			threads;

	if (len == 0)
		return;
	if (f->written + len > f->size)
		elog(ERROR, "braidsort: spill file \"%s\" overflow", f->path);

	task.dst = f->base + f->written;
	task.src = src;
	task.len = len;
	task.file_off = f->written;
	braid_device_emulation(f, &task.em);
	threads = (int) Min((size_t) Min(braid_sched_write_thread_count_for(f->spcoid),
									 braid_pool_max_threads),
						Max(len / SPILL_THREAD_MIN, (size_t) 1));

	braid_sched_write_begin(f->devslot, threads);
	if (f->devslot >= 0)
		threads = Min(threads, braid_sched_write_threads_granted());
	task.slice = TYPEALIGN(SPILL_ALIGN, (task.len + threads - 1) / threads);
	threads = (int) ((task.len + task.slice - 1) / task.slice);
	braid_pool_run(threads, flush_task, &task);
	braid_sched_write_end(f->devslot);

	count_written(f, len);
}

/*
 * flush_stage
 *		Write the staged bytes to the file (write_span).
 */
static void
flush_stage(BraidSpillFile *f)
{
	if (f->staged == 0)
		return;
	write_span(f, f->stage, f->staged);
	f->staged = 0;
}

/*
 * braid_spill_write_direct
 *		Append bytes the caller has staged itself (a block of a join
 *		partition's entries), without the file's own staging buffer: many
 *		files written at once then hold only their callers' small buffers.
 */
void
braid_spill_write_direct(BraidSpillFile *f, const void *data, size_t len)
{
	flush_stage(f);
	write_span(f, data, len);
}

/*
 * braid_spill_write
 *		Append bytes to a file (sequential writes only).
 */
void
braid_spill_write(BraidSpillFile *f, const void *data, size_t len)
{
	const char *p = data;

	if (f->stage == NULL)
		f->stage = MemoryContextAlloc(TopMemoryContext, SPILL_STAGE_BYTES);
	while (len > 0)
	{
		size_t		n = Min(len, (size_t) SPILL_STAGE_BYTES - f->staged);

		memcpy(f->stage + f->staged, p, n);
		f->staged += n;
		p += n;
		len -= n;
		if (f->staged == SPILL_STAGE_BYTES)
		{
			flush_stage(f);
			CHECK_FOR_INTERRUPTS();
		}
	}
}

/*
 * braid_spill_fill_begin
 *		Append len bytes that writer threads store in place: flush what is
 *		staged, take a write grant for up to *threads writers (set to what
 *		was granted, at least 1), and return where the bytes go, in the
 *		file's mapping.  Each writer calls braid_spill_fill_done() on the
 *		part it wrote; then the backend calls braid_spill_fill_end().
 */
uint8 *
braid_spill_fill_begin(BraidSpillFile *f, size_t len, int *threads)
{
	int			want;

	flush_stage(f);
	if (f->written + len > f->size)
		elog(ERROR, "braidsort: spill file \"%s\" overflow", f->path);
	want = Max(Min(Min(*threads, braid_sched_write_thread_count_for(f->spcoid)),
				   braid_pool_max_threads), 1);
	braid_sched_write_begin(f->devslot, want);
	if (f->devslot >= 0)
		want = Min(want, braid_sched_write_threads_granted());
	*threads = Max(want, 1);
	braid_device_emulation(f, &f->fill_em);
	return (uint8 *) f->base + f->written;
}

/*
 * braid_spill_fill_done
 *		A writer thread has stored bytes [from, to) of the current fill:
 *		flush them from the CPU caches on persistent memory, and pay their
 *		emulated write latency.  Pure C: runs on pool threads.
 */
void
braid_spill_fill_done(const BraidSpillFile *f, size_t from, size_t to)
{
	if (from >= to)
		return;
	if (f->is_pmem)
	{
		pmem_flush(f->base + f->written + from, to - from);
		pmem_drain();
	}
	if (braid_emulation_active(&f->fill_em))
		(void) braid_emulate_access(&f->fill_em,
									braid_lines_spanned(f->written + from, f->written + to),
									true);
}

/*
 * braid_spill_fill_end
 *		The writers are done with a fill of len bytes: release the grant and
 *		count the bytes as written.
 */
void
braid_spill_fill_end(BraidSpillFile *f, size_t len)
{
	braid_sched_write_end(f->devslot);
	count_written(f, len);
}

/*
 * braid_spill_finish
 *		Flush everything written, so it can be read back.
 */
void
braid_spill_finish(BraidSpillFile *f)
{
	flush_stage(f);
	/* written once: the staging buffer is not needed any more */
	if (f->stage)
	{
		pfree(f->stage);
		f->stage = NULL;
	}
	if (f->persisted)
		return;

	/*
	 * On persistent memory the stores, flushed as each fill completed, are
	 * drained.  Anywhere else nothing is synced: the file is mapped shared,
	 * so every later read of it, through this mapping or another process's,
	 * sees the page cache, and a temporary file needs no durability
	 * (PostgreSQL never syncs its own).  An msync() would force every run to
	 * the disk of an ordinary filesystem while the query waits.
	 */
	if (f->is_pmem)
		pmem_drain();
	f->persisted = true;
}

/*
 * braid_device_emulation
 *		How accesses to f are charged now, for braid_emulate_access: its
 *		device's clock (none if the device has no slot in shared memory),
 *		the emulate_* settings, and whether a writer holds a write grant on
 *		the device (read without the lock: a stale answer only shifts one
 *		delay).  Called by the backend, which hands the result to its
 *		threads: they read no GUC.
 */
void
braid_device_emulation(const BraidSpillFile *f, BraidEmulation *em)
{
	BraidDeviceSlot *d = f->devslot >= 0 ? braid_sched_slot(f->devslot) : NULL;

	em->clock = d ? &d->clock : NULL;
	em->lanes = braid_emulate_parallelism;
	em->read_ns = braid_emulate_read_ns;
	em->write_ns = braid_emulate_write_ns;
	em->interference_ns = braid_emulate_interference_ns;
	em->writing = braid_emulate_interference_ns > 0 && d != NULL && d->writers > 0;
}

/*
 * report_temp_file
 *		Report a spill file that is gone as PostgreSQL reports a temporary
 *		file (fd.c, ReportTemporaryFileUsage): in pg_stat_database's
 *		temp_files and temp_bytes, and in the server log under
 *		log_temp_files.
 *
 * The size is what the file holds: the bytes written to it.  PostgreSQL
 * reports a temporary file's size on disk, which for its own files is the
 * same thing, since they grow as they are written.  A spill file is
 * reserved whole when created, so its size on disk is its reservation: a
 * run's is its coded size rounded up to 4 kB, but a value log segment is
 * reserved for rows it may never get, and a file removed after an error or
 * a cancel may hold nothing.  The bytes written are what pg_stat_database
 * documents temp_bytes to be (data written to temporary files), and the
 * same traffic as the sort's Device Bytes Written and the temp blocks
 * written of the executor's buffer usage, so the numbers agree with each
 * other.  (temp_file_limit, which guards the space, counts reservations.)
 * A scratch file written through its mapping (profile_device) has no such
 * count, but it is written whole: it is reported at its full size.
 *
 * Safe on every path that closes files: on an abort the resource owner's
 * callback runs where fd.c closes its own temporary files (after locks);
 * at backend exit braid_exit_callback, registered by the first spill file,
 * long after pgstat_initialize() registered pgstat's shutdown hook in
 * BaseInit(), runs before it (before_shmem_exit callbacks run in reverse),
 * as fd.c's own clean-up of temporary files (InitTemporaryFileAccess) does.
 * Reporting comes last in braid_spill_close(), so that a failure to report
 * cannot leave a file half closed.
 */
static void
report_temp_file(const char *path, uint64 size)
{
	pgstat_report_tempfile((size_t) size);
	if (log_temp_files >= 0 && size / 1024 >= (uint64) log_temp_files)
		ereport(LOG,
				(errmsg("temporary file: path \"%s\", size %lu",
						path, (unsigned long) size)));
}

/*
 * braid_spill_name
 *		A file's name in its tablespace's temporary directory, which
 *		braid_spill_open_foreign takes in another process.
 */
const char *
braid_spill_name(const BraidSpillFile *f)
{
	const char *slash = strrchr(f->path, '/');

	return slash != NULL ? slash + 1 : f->path;
}

/*
 * braid_spill_hand_over
 *		Rename a finished file for another process of the same query to read
 *		and its leader to remove (sort_shared.c, join_shared.c) as
 *		pgsql_tmp<leader_pid>.braid.p<part>.<query>.<node>.<n> (query: the
 *		Gather's segment handle, unique among a leader's parallel queries
 *		at once; node: the plan node's), so that the background worker's
 *		clean-up, which removes the files of processes that are gone, keeps
 *		it while the leader lives, and no process started after this one
 *		ends can take its name.  It stays this process's until
 *		braid_spill_disown.
 */
void
braid_spill_hand_over(BraidSpillFile *f, int leader_pid, uint32 query, int part, int node,
					  uint32 n)
{
	char		path[MAXPGPATH];
	const char *slash = strrchr(f->path, '/');
	int			dirlen = slash != NULL ? (int) (slash - f->path) : 0;

	snprintf(path, sizeof(path), "%.*s/%s%d.braid.p%d.%x.%d.%u",
			 dirlen, f->path, PG_TEMP_FILE_PREFIX, leader_pid, part, query, node, n);
	if (rename(f->path, path) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rename braidsort spill file \"%s\" to \"%s\": %m",
						f->path, path)));
	strlcpy(f->path, path, sizeof(f->path));
}

/*
 * braid_spill_open_foreign
 *		Map, to read it, a spill file another process of the same query
 *		wrote and finished (braid_spill_finish): the file "name" in
 *		tablespace spc's temporary directory, "written" bytes of it.  Its
 *		reads are counted in *stats, as this process's own files' are.  It
 *		stays its writer's: braid_spill_close() unmaps it here, and its
 *		writer removes it (a parallel sort's participants keep theirs until
 *		the process that reads them says it is done, sort_shared.c).  A
 *		name that is not a spill file's is refused: it comes from shared
 *		memory.
 */
BraidSpillFile *
braid_spill_open_foreign(Oid spc, const char *name, size_t written, BraidDeviceStats *stats)
{
	char		dir[MAXPGPATH];
	char		path[MAXPGPATH];
	BraidSpillFile *f;
	struct stat stbuf;
	int			devslot;
	int			fd;
	void	   *base;

	if (strncmp(name, PG_TEMP_FILE_PREFIX, strlen(PG_TEMP_FILE_PREFIX)) != 0 ||
		strchr(name, '/') != NULL || strstr(name, ".braid") == NULL)
		elog(ERROR, "braidsort: \"%s\" is not a spill file", name);
	register_callbacks();
	TempTablespacePath(dir, spc);
	devslot = braid_sched_device(spc, dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);

	/* (allocated first: nothing may fail between the mapping and its record) */
	f = MemoryContextAllocZero(TopMemoryContext, sizeof(BraidSpillFile));

	/* read-only: nothing here may change another process's file */
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		pfree(f);
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open braidsort spill file \"%s\" of a parallel worker: %m", path)));
	}
	if (fstat(fd, &stbuf) != 0)
	{
		int			save_errno = errno;

		CloseTransientFile(fd);
		pfree(f);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat braidsort spill file \"%s\" of a parallel worker: %m", path)));
	}
	if ((size_t) stbuf.st_size < written)
	{
		CloseTransientFile(fd);
		pfree(f);
		elog(ERROR, "braidsort: spill file \"%s\" of a parallel worker holds %zu bytes, not %zu",
			 path, (size_t) stbuf.st_size, written);
	}
	base = written > 0 ? mmap(NULL, (size_t) stbuf.st_size, PROT_READ, MAP_SHARED, fd, 0) : NULL;
	if (base == MAP_FAILED)
	{
		int			save_errno = errno;

		CloseTransientFile(fd);
		pfree(f);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not map braidsort spill file \"%s\" of a parallel worker: %m", path)));
	}
	CloseTransientFile(fd);

	strlcpy(f->path, path, sizeof(f->path));
	f->base = base;
	f->spcoid = spc;
	f->devslot = devslot;
	f->written = written;
	f->foreign = true;
	link_file(f, base != NULL ? (size_t) stbuf.st_size : 0, 0, stats);
	return f;
}

/*
 * forget_file
 *		Unmap a file and take it off this backend's list; remove it from the
 *		device too unless "keep", and report it as a temporary file.
 *		Another process's file is only unmapped (braid_spill_open_foreign).
 */
static void
forget_file(BraidSpillFile *f, bool keep)
{
	char		path[MAXPGPATH];
	uint64		size;

	if (f->base)
		(void) pmem_unmap(f->base, f->size);
	unlink_file(f);
	if (f->foreign)
	{
		pfree(f);
		return;
	}
	if (!keep && unlink(f->path) != 0 && errno != ENOENT)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not remove braidsort spill file \"%s\": %m", f->path)));
	live_bytes -= f->size;
	strlcpy(path, f->path, sizeof(path));
	size = f->scratch ? f->size : f->written;
	if (f->stage)
		pfree(f->stage);
	pfree(f);
	report_temp_file(path, size);
}

/*
 * braid_spill_disown
 *		Let a finished file outlive this process, for another to read and
 *		remove (a parallel sort's participant hands its runs to the one that
 *		merges them, sort_shared.c): unmapped and forgotten here, reported
 *		as this process's temporary file, but left on the device.
 */
void
braid_spill_disown(BraidSpillFile *f)
{
	if (f == NULL)
		return;
	Assert(!f->foreign);
	braid_spill_finish(f);
	forget_file(f, true);
}

/*
 * braid_spill_close
 *		Unmap and remove a file; it is gone from the device afterwards, and
 *		reported as a temporary file.  Another process's file is only
 *		unmapped (braid_spill_open_foreign).
 */
void
braid_spill_close(BraidSpillFile *f)
{
	if (f == NULL)
		return;
	forget_file(f, false);
}
