/*-------------------------------------------------------------------------
 *
 * unit_main.c
 *	  main of braidsort's unit tests: run every module, or those named.
 *
 *		run_unit_tests				every module, in the order below
 *		run_unit_tests indexmap pool	only these (as "make unittest
 *									UNIT=indexmap pool" does)
 *
 * Output is TAP: a "# module" comment before each module's tests, one
 * "ok N - ..." or "not ok N - ..." line per group of assertions, the plan
 * line "1..N" at the end, then "unit: N passed, M failed".  The exit
 * status is 0 only if every test passed (2 for an unknown module name).
 *
 * test/unit/unit_main.c
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

/* One module under test: its name, the source it tests, its entry point. */
typedef struct UnitModule
{
	const char *name;
	const char *source;
	void		(*run) (void);
} UnitModule;

static const UnitModule modules[] = {
	{"keycodec", "src/core/keycodec.h", unit_keycodec},
	{"indexmap", "src/core/indexmap.c", unit_indexmap},
	{"pool", "src/core/pool.c", unit_pool},
	{"costmodel", "src/core/costmodel.c", unit_costmodel},
	{"profkernel", "src/core/profkernel.c", unit_profkernel},
	{"emulate", "src/core/emulate.c", unit_emulate},
	{"sync", "src/core/sync.h", unit_sync},
	{"wlimit", "src/core/wlimit.c", unit_wlimit},
	{"joinmodel", "src/core/joinmodel.c", unit_joinmodel},
	{"joinbucket", "src/core/joinbucket.c", unit_joinbucket},
	{"vlogrow", "src/core/vlogrow.h", unit_vlogrow},
	{"collrank", "src/core/collrank.c", unit_collrank},
	{"collmemo", "src/core/collmemo.h", unit_collmemo},
	{"runrecord", "src/core/runrecord.h", unit_runrecord},
};

#define NUM_MODULES ((int) (sizeof(modules) / sizeof(modules[0])))

/* run_module: one module's tests, from the fixed seed. */
static void
run_module(const UnitModule *m)
{
	printf("# %s (%s)\n", m->name, m->source);
	fflush(stdout);
	rng_reset();
	m->run();
}

/* main: run the modules asked for, print the TAP plan and the summary. */
int
main(int argc, char **argv)
{
	bool		wanted[NUM_MODULES];

	for (int i = 0; i < NUM_MODULES; i++)
		wanted[i] = argc < 2;
	for (int a = 1; a < argc; a++)
	{
		bool		known = false;

		for (int i = 0; i < NUM_MODULES; i++)
			if (strcmp(argv[a], modules[i].name) == 0)
				wanted[i] = known = true;
		if (!known)
		{
			fprintf(stderr, "run_unit_tests: unknown module \"%s\"; modules are:", argv[a]);
			for (int i = 0; i < NUM_MODULES; i++)
				fprintf(stderr, " %s", modules[i].name);
			fprintf(stderr, "\n");
			return 2;
		}
	}

	for (int i = 0; i < NUM_MODULES; i++)
		if (wanted[i])
			run_module(&modules[i]);

	printf("1..%d\n", unit_tests_run);
	printf("unit: %d passed, %d failed\n", unit_tests_run - unit_tests_failed,
		   unit_tests_failed);
	return unit_tests_failed == 0 ? 0 : 1;
}
