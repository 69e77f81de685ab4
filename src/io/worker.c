/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The "braidsort scheduler" background worker.
 *
 * The worker is registered at preload and runs for the server's life.  At
 * start, and every minute after, it removes spill files orphaned by
 * backends that are gone (a backend killed with SIGKILL never runs its
 * clean-up; PostgreSQL's own start-up clean-up of temporary files only runs
 * at server start and, with remove_temp_files_after_crash, after a crash
 * restart).  A spill file is named pgsql_tmp<pid>.braid<n>: it is an orphan
 * when no live backend has that pid.
 *
 * The phase gate itself needs no process: backends arbitrate through shared
 * memory (iosched.c).  If the worker dies it is restarted after
 * BRAID_WORKER_RESTART_SECONDS; a SIGTERM (pg_terminate_backend) also makes
 * it exit and come back, like a crash, since sorts rely on its clean-up.
 *
 * Follows contrib/pg_prewarm's autoprewarm worker: signals, latch,
 * postmaster death.
 *
 * src/io/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dirent.h>
#include <unistd.h>

#include "catalog/pg_tablespace_d.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"

#include "compat.h"
#include "io/worker.h"
#include "io/shmem.h"

#define BRAID_WORKER_RESTART_SECONDS	5
#define BRAID_ORPHAN_SCAN_MS			(60 * 1000)

PGDLLEXPORT void braid_worker_main(Datum main_arg);

/* the worker's named wait event, once registered (17+) */
static uint32 main_wait_event = 0;

/*
 * braid_worker_register
 *		Register the worker (called from _PG_init, at preload).
 */
void
braid_worker_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BRAID_WORKER_RESTART_SECONDS;
	strcpy(worker.bgw_library_name, "braidsort");
	strcpy(worker.bgw_function_name, "braid_worker_main");
	strcpy(worker.bgw_name, "braidsort scheduler");
	strcpy(worker.bgw_type, "braidsort scheduler");
	RegisterBackgroundWorker(&worker);
}

/*
 * orphan_pid
 *		If name is a braidsort spill file (pgsql_tmp<pid>.braid<n>), its
 *		pid; else 0.
 */
static int
orphan_pid(const char *name)
{
	size_t		plen = strlen(PG_TEMP_FILE_PREFIX);
	const char *p;
	char	   *end;
	long		pid;

	if (strncmp(name, PG_TEMP_FILE_PREFIX, plen) != 0)
		return 0;
	p = name + plen;
	pid = strtol(p, &end, 10);
	if (end == p || pid <= 0 || strncmp(end, ".braid", 6) != 0)
		return 0;
	return (int) pid;
}

/*
 * scan_temp_dir
 *		Remove the orphaned spill files of one pgsql_tmp directory; returns
 *		how many.
 */
static int
scan_temp_dir(const char *dir)
{
	DIR		   *d;
	struct dirent *de;
	int			removed = 0;

	d = AllocateDir(dir);
	if (d == NULL)
		return 0;				/* no temporary files there yet */
	while ((de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		int			pid = orphan_pid(de->d_name);
		char		path[MAXPGPATH];

		if (pid == 0 || BackendPidGetProc(pid) != NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) == 0)
			removed++;
		else if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not remove orphaned braidsort spill file \"%s\": %m", path)));
	}
	FreeDir(d);
	return removed;
}

/*
 * braid_remove_orphans
 *		Scan the default tablespace's and every other tablespace's
 *		temporary directory; returns the number of files removed.
 */
static int
braid_remove_orphans(void)
{
	char		path[MAXPGPATH];
	DIR		   *spcdir;
	struct dirent *de;
	int			removed;

	snprintf(path, sizeof(path), "base/%s", PG_TEMP_FILES_DIR);
	removed = scan_temp_dir(path);

	spcdir = AllocateDir("pg_tblspc");
	while ((de = ReadDirExtended(spcdir, "pg_tblspc", LOG)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "pg_tblspc/%s/%s/%s",
				 de->d_name, TABLESPACE_VERSION_DIRECTORY, PG_TEMP_FILES_DIR);
		removed += scan_temp_dir(path);
	}
	FreeDir(spcdir);

	if (removed > 0)
	{
		if (braid_shared)
			pg_atomic_fetch_add_u64(&braid_shared->orphans_removed, removed);
		ereport(LOG,
				(errmsg("braidsort scheduler removed %d orphaned spill file%s",
						removed, removed == 1 ? "" : "s")));
	}
	return removed;
}

/*
 * braid_worker_main
 *		Entry point of the worker: clean up, then wait on the latch for
 *		signals, postmaster death and the next scan.
 */
void
braid_worker_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	/* no database: only to appear in pg_stat_activity */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	ereport(LOG, (errmsg("braidsort scheduler started")));
	(void) braid_remove_orphans();

	while (!ShutdownRequestPending)
	{
		/*
		 * pg_stat_activity shows the idle worker as BraidsortSchedulerMain
		 * (17+)
		 */
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 BRAID_ORPHAN_SCAN_MS,
						 braid_wait_event("BraidsortSchedulerMain", &main_wait_event));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (!ShutdownRequestPending)
			(void) braid_remove_orphans();
	}

	/*
	 * exit code 1: the postmaster starts the worker again (unless shutting
	 * down)
	 */
	proc_exit(1);
}
