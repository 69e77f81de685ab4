/*-------------------------------------------------------------------------
 *
 * braidsort.c
 *	  Module entry point: preload check, parameters, hooks.
 *
 * braidsort replaces PostgreSQL Sort nodes after planning, so it must be in
 * every backend from the start: loading it later (LOAD, or CREATE
 * EXTENSION without preloading) is refused.
 *
 * src/braidsort.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "guc.h"
#include "io/hugepages.h"
#include "io/worker.h"
#include "join/join_node.h"
#include "plan/planner.h"
#include "sort/sort_node.h"
#include "monitor/instr.h"
#include "io/profile.h"
#include "io/progress.h"
#include "io/shmem.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(braidsort_version);

void		_PG_init(void);

/*
 * _PG_init
 *		Refuse to load outside shared_preload_libraries, then define the
 *		parameters, request shared memory, register the scheduler worker
 *		and the custom scan, and install the planner hook.
 */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("braidsort must be loaded via shared_preload_libraries"),
				 errhint("Add braidsort to shared_preload_libraries in postgresql.conf and restart the server.")));

	braid_define_gucs();
	braid_shmem_init();
	braid_shmem_add(NULL, NULL, braid_profiles_load);
	braid_shmem_add(NULL, NULL, braid_advise_huge_pages);
	braid_shmem_add(braid_progress_shmem_request, braid_progress_shmem_init, NULL);
	braid_shmem_add(braid_instr_shmem_request, braid_instr_shmem_init, NULL);
	braid_worker_register();
	braid_sort_exec_init();
	braid_join_exec_init();
	braid_planner_init();
}

/*
 * braidsort_version
 *		SQL: braidsort.version(), the version of the library this server
 *		loaded (the extension's, as braidsort.control said when it was
 *		built): a library installed later is loaded at the next restart.
 */
Datum
braidsort_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(BRAID_VERSION));
}
