/*-------------------------------------------------------------------------
 *
 * spillspace.c
 *	  Where spill files go: the spill tablespace, and its room.
 *
 * braidsort.spill_tablespace names the tablespace on the spill device.  A
 * spill file goes there if the role may create in it, as for
 * temp_tablespaces; else, or if the setting is empty, to the session's
 * temp_tablespaces, else the database's default tablespace
 * (spill_tablespace_resolve).  The planner and the device profiler ask the
 * same question without moving temp_tablespaces' round-robin
 * (braid_spill_tablespace_guess), and the planner how much room the device
 * has (braid_spill_has_room).  The files themselves are device.c's.
 *
 * src/io/spillspace.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/pg_tablespace_d.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/syscache.h"

#include "compat.h"
#include "io/shmem.h"
#include "io/spillspace.h"

/* braidsort.spill_tablespace (defined with the others in guc.c) */
char	   *braid_spill_tablespace = NULL;

/*
 * braid_check_spill_tablespace
 *		GUC check hook, as check_temp_tablespaces() does it.  In an
 *		interactive SET a tablespace that does not exist, or one the current
 *		user may not create in (unless it is the database's default, which
 *		needs no privilege), is an error now rather than at the next sort.
 *		ALTER ROLE/DATABASE ... SET (PGC_S_TEST) only gets a NOTICE for a
 *		tablespace that does not exist, and the privilege of whoever runs it
 *		is checked as for temp_tablespaces.  Values from postgresql.conf,
 *		ALTER SYSTEM or a role's or database's defaults are taken on faith:
 *		they apply to roles with and without the privilege, and the
 *		tablespace may be dropped later, so each sort resolves the setting
 *		when it spills (spill_tablespace_resolve) and falls back silently.
 *		Names can only be checked inside a transaction; a parallel worker
 *		takes the value its leader checked.
 */
bool
braid_check_spill_tablespace(char **newval, void **extra, GucSource source)
{
	Oid			spc;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!IsTransactionState() || !OidIsValid(MyDatabaseId) ||
		InitializingParallelWorker)
		return true;
	if (source < PGC_S_INTERACTIVE)
		return true;
	spc = get_tablespace_oid(*newval, true);
	if (!OidIsValid(spc))
	{
		if (source == PGC_S_TEST)
		{
			ereport(NOTICE,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("tablespace \"%s\" does not exist", *newval)));
			return true;
		}
		GUC_check_errdetail("Tablespace \"%s\" does not exist.", *newval);
		return false;
	}
	if (spc == GLOBALTABLESPACE_OID)
	{
		/*
		 * The shared catalogs' tablespace (temp_tablespaces accepts it, and
		 * fd.c sends its files to the default tablespace instead): refused,
		 * so that the setting says where spill files go.
		 */
		GUC_check_errdetail("Temporary files are never placed in tablespace \"%s\".", *newval);
		return false;
	}
	if (spc != MyDatabaseTableSpace)
	{
		AclResult	aclresult = braid_tablespace_aclcheck(spc, GetUserId(), ACL_CREATE);

		if (aclresult != ACLCHECK_OK)
			aclcheck_error(aclresult, OBJECT_TABLESPACE, *newval);
	}
	return true;
}

/*
 * The OID braidsort.spill_tablespace last named, kept across statements:
 * every sort the planner costs asks where its spill files would go, and
 * get_tablespace_oid() reads pg_tablespace each time (no syscache is keyed
 * by a tablespace's name).  Forgotten when pg_tablespace changes (a
 * tablespace created, dropped or renamed) and when the setting does.
 */
static char spill_name_cached[NAMEDATALEN];
static Oid	spill_oid_cached = InvalidOid;
static bool spill_cache_valid = false;
static bool spill_cache_watched = false;

/*
 * spill_cache_forget
 *		Syscache callback: pg_tablespace changed.
 */
static void
spill_cache_forget(Datum arg, int cacheid, uint32 hashvalue)
{
	spill_cache_valid = false;
}

/*
 * spill_tablespace_oid
 *		get_tablespace_oid(name, true), from the cache when name is the one
 *		looked up last.  Inside a transaction.
 */
static Oid
spill_tablespace_oid(const char *name)
{
	Oid			spc;

	if (spill_cache_valid && strcmp(name, spill_name_cached) == 0)
		return spill_oid_cached;
	if (!spill_cache_watched)
	{
		CacheRegisterSyscacheCallback(TABLESPACEOID, spill_cache_forget, (Datum) 0);
		spill_cache_watched = true;
	}
	spc = get_tablespace_oid(name, true);
	/* a name too long for a tablespace is never one: not worth keeping */
	if (strlen(name) < NAMEDATALEN)
	{
		strlcpy(spill_name_cached, name, NAMEDATALEN);
		spill_oid_cached = spc;
		spill_cache_valid = true;
	}
	return spc;
}

/*
 * The statement whose fallback from braidsort.spill_tablespace was last
 * reported (see spill_tablespace_resolve): a sort writes many files, but
 * the DEBUG1 message and the counter come once per statement and process.
 */
static LocalTransactionId fallback_lxid = InvalidLocalTransactionId;
static TimestampTz fallback_stmt = 0;

/*
 * The braidsort.spill_tablespace value this backend last warned about (see
 * warn_unusable): empty when none.
 */
static char warned_setting[NAMEDATALEN];

/*
 * warn_unusable
 *		Say once per session, as a WARNING, that braidsort.spill_tablespace
 *		names a tablespace this role cannot spill to, and where spill files
 *		go instead: a typo in a server-wide setting would otherwise send
 *		every spill to another device without a word where a DBA looks
 *		(the client and the server log).  Again only when the setting
 *		changes.  Not in parallel workers, whose leader has said it.
 */
static void
warn_unusable(Oid wanted, Oid instead)
{
	char	   *instead_name;
	bool		missing = !OidIsValid(wanted);
	bool global = wanted == GLOBALTABLESPACE_OID;

	/* (the copy keeps NAMEDATALEN - 1 bytes: compare as many) */
	if (IsParallelWorker() ||
		strncmp(warned_setting, braid_spill_tablespace, NAMEDATALEN - 1) == 0)
		return;
	strlcpy(warned_setting, braid_spill_tablespace, NAMEDATALEN);
	instead_name = get_tablespace_name(instead);
	ereport(WARNING,
			(errcode(missing ? ERRCODE_UNDEFINED_OBJECT :
					 global ? ERRCODE_INVALID_PARAMETER_VALUE :
					 ERRCODE_INSUFFICIENT_PRIVILEGE),
			 missing ?
			 errmsg("tablespace \"%s\" named by braidsort.spill_tablespace does not exist",
					braid_spill_tablespace) :
			 global ?
			 errmsg("tablespace \"%s\" named by braidsort.spill_tablespace cannot hold spill files",
					braid_spill_tablespace) :
			 errmsg("permission denied for tablespace \"%s\" named by braidsort.spill_tablespace",
					braid_spill_tablespace),
			 errdetail("Spill files go to tablespace \"%s\" instead.",
					   instead_name ? instead_name : "?"),
			 missing || global ?
			 errhint("Set braidsort.spill_tablespace to the tablespace on the spill device.") :
			 errhint("Grant CREATE on tablespace \"%s\" to role \"%s\", or set braidsort.spill_tablespace for the role to a tablespace it may use.",
					 braid_spill_tablespace, GetUserNameFromId(GetUserId(), false))));
}

/*
 * spill_tablespace_usable
 *		May the current user spill to tablespace "wanted" (the setting's)?
 *		As for temp_tablespaces: it exists, is not pg_global, and the user
 *		may create in it or it is the database's default.
 */
static bool
spill_tablespace_usable(Oid wanted)
{
	return OidIsValid(wanted) && wanted != GLOBALTABLESPACE_OID &&
		(wanted == MyDatabaseTableSpace ||
		 braid_tablespace_aclcheck(wanted, GetUserId(), ACL_CREATE) == ACLCHECK_OK);
}

/*
 * spill_tablespace_resolve
 *		Where spill files go: braidsort.spill_tablespace, if set and usable
 *		by the current user, else what an empty setting gives:
 *		temp_tablespaces (PrepareTempTablespaces() keeps only those the
 *		user may use), else the database's default tablespace.  Usable
 *		means, as for temp_tablespaces, that it exists and that the user
 *		may create in it or it is the database's default.  A setting that
 *		is not usable (made server-wide for roles without the privilege, or
 *		naming a tablespace dropped since) is no error: with "report", the
 *		fallback is logged at DEBUG1 and counted (spill_tablespace_fallbacks
 *		in braidsort.stats), once per statement.  Outside a transaction,
 *		where the catalogs cannot be read, the database's default.
 */
static Oid
spill_tablespace_resolve(bool report)
{
	Oid			spc = InvalidOid;
	Oid			wanted = InvalidOid;
	bool		unusable = false;

	if (!IsTransactionState())
		return MyDatabaseTableSpace;
	if (braid_spill_tablespace != NULL && braid_spill_tablespace[0] != '\0')
	{
		wanted = spill_tablespace_oid(braid_spill_tablespace);
		if (!spill_tablespace_usable(wanted))
			unusable = true;
		else
			spc = wanted;
	}
	if (!OidIsValid(spc))
	{
		PrepareTempTablespaces();
		if (report)
			spc = GetNextTempTableSpace();
		else
		{
			/*
			 * A guess (planning, costing) must not move the round-robin over
			 * temp_tablespaces that PostgreSQL's own temporary files and the
			 * next spill file take their turns from: peek at the first.
			 */
			Oid			first;

			if (GetTempTablespaces(&first, 1) > 0)
				spc = first;
		}
		if (!OidIsValid(spc))
			spc = MyDatabaseTableSpace;
	}

	if (unusable)
		warn_unusable(wanted, spc);
	if (unusable && report &&
		(fallback_lxid != BRAID_MY_LXID ||
		 fallback_stmt != GetCurrentStatementStartTimestamp()))
	{
		char	   *instead = get_tablespace_name(spc);

		fallback_lxid = BRAID_MY_LXID;
		fallback_stmt = GetCurrentStatementStartTimestamp();
		if (braid_shared != NULL)
			pg_atomic_fetch_add_u64(&braid_shared->spill_tablespace_fallbacks, 1);
		ereport(DEBUG1,
				(wanted == GLOBALTABLESPACE_OID ?
				 errmsg("braidsort.spill_tablespace \"%s\" cannot hold spill files, spilling to tablespace \"%s\" instead",
						braid_spill_tablespace, instead ? instead : "?") :
				 errmsg("braidsort.spill_tablespace \"%s\" is not usable by this role, spilling to tablespace \"%s\" instead",
						braid_spill_tablespace, instead ? instead : "?"),
				 wanted == GLOBALTABLESPACE_OID ?
				 errdetail("Temporary files are never placed in tablespace \"%s\".",
						   braid_spill_tablespace) :
				 OidIsValid(wanted) ?
				 errdetail("Role \"%s\" has no CREATE privilege on tablespace \"%s\".",
						   GetUserNameFromId(GetUserId(), false),
						   braid_spill_tablespace) :
				 errdetail("Tablespace \"%s\" does not exist.",
						   braid_spill_tablespace)));
	}
	return spc;
}

/*
 * braid_spill_setting_problem
 *		Why braidsort.spill_tablespace is not where this session's spill
 *		files go, for the view braidsort.spill_location: NULL if the
 *		setting is empty or usable (see spill_tablespace_resolve), else a
 *		palloc'd reason.
 */
char *
braid_spill_setting_problem(void)
{
	Oid			wanted;

	if (!IsTransactionState() || braid_spill_tablespace == NULL ||
		braid_spill_tablespace[0] == '\0')
		return NULL;
	wanted = spill_tablespace_oid(braid_spill_tablespace);
	if (spill_tablespace_usable(wanted))
		return NULL;
	if (!OidIsValid(wanted))
		return psprintf("tablespace \"%s\" does not exist", braid_spill_tablespace);
	if (wanted == GLOBALTABLESPACE_OID)
		return psprintf("tablespace \"%s\" cannot hold spill files", braid_spill_tablespace);
	return psprintf("role \"%s\" has no CREATE privilege on tablespace \"%s\"",
					GetUserNameFromId(GetUserId(), false), braid_spill_tablespace);
}

/*
 * braid_spill_tablespace_next
 *		Where the next spill file goes (reporting a fallback).
 */
Oid
braid_spill_tablespace_next(void)
{
	return spill_tablespace_resolve(true);
}

/*
 * braid_spill_tablespace_guess
 *		The tablespace spill files are expected to go to, for planning and
 *		profiling: the same rule as for the files themselves (so the cost
 *		model looks at the device that will be used), without reporting a
 *		fallback.  Never an error.
 */
Oid
braid_spill_tablespace_guess(void)
{
	return spill_tablespace_resolve(false);
}

/*
 * braid_spill_device
 *		The file system of tablespace spc's temporary directory: its device
 *		(st_dev) and free bytes; false when it cannot tell.  The directory
 *		may not exist yet (it is made at the first spill): its nearest
 *		parent, two levels up at most, tells.
 */
bool
braid_spill_device(Oid spc, dev_t *dev, double *free_bytes)
{
	char		path[MAXPGPATH];
	struct stat st;
	struct statvfs fs;

	TempTablespacePath(path, spc);
	for (int up = 0; up < 3 && path[0] != '\0'; up++)
	{
		if (stat(path, &st) == 0 && statvfs(path, &fs) == 0)
		{
			*dev = st.st_dev;
			*free_bytes = (double) fs.f_bavail * (double) fs.f_frsize;
			return true;
		}
		get_parent_directory(path);
	}
	return false;
}

/*
 * braid_spill_free_bytes
 *		Free bytes on the file system spill files are expected to go to
 *		(braid_spill_tablespace_guess), for the planner: false when it
 *		cannot tell.
 */
bool
braid_spill_free_bytes(double *bytes)
{
	dev_t		dev;

	return braid_spill_device(braid_spill_tablespace_guess(), &dev, bytes);
}

/*
 * braid_spill_has_room
 *		Has the spill device room for the bytes a sort or a join ("what")
 *		expects to hold on it at once?  Its free space as the planner sees
 *		it (concurrent queries may take some by the time this one runs);
 *		true when nothing is to be written or the file system cannot tell,
 *		otherwise false with *why.
 */
bool
braid_spill_has_room(double bytes, const char *what, char **why)
{
	double		free_bytes;

	if (bytes <= 0 || !braid_spill_free_bytes(&free_bytes) || bytes <= free_bytes)
		return true;
	*why = psprintf("the spill device has %.0f MB free, and the %s may write %.0f MB to it",
					free_bytes / (1024 * 1024), what, bytes / (1024 * 1024));
	return false;
}
