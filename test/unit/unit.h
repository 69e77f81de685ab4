/*-------------------------------------------------------------------------
 *
 * unit.h
 *	  Shared reporting and helpers of braidsort's pure-C unit tests.
 *
 * The unit tests are one binary, test/unit/run_unit_tests, built from
 * unit_main.c (the list of modules and main), unit.c (this header's
 * functions) and one file per module under test:
 *
 *		test_keycodec.c		src/core/keycodec.h
 *		test_indexmap.c		src/core/indexmap.c
 *		test_pool.c			src/core/pool.c
 *		test_costmodel.c	src/core/costmodel.c
 *		test_profkernel.c	src/core/profkernel.c
 *		test_emulate.c		src/core/emulate.c
 *		test_sync.c			src/core/sync.h
 *		test_wlimit.c		src/core/wlimit.c
 *		test_joinmodel.c	src/core/joinmodel.c
 *		test_joinbucket.c	src/core/joinbucket.c
 *		test_vlogrow.c		src/core/vlogrow.h
 *		test_collrank.c		src/core/collrank.c
 *		test_collmemo.c		src/core/collmemo.h
 *		test_runrecord.c	src/core/runrecord.h
 *
 * Each module file has one entry point, unit_<module>(), that runs its
 * tests in a fixed order.  No test framework: a group of related
 * assertions is a Check, reported as one TAP line ("ok N - ..." or
 * "not ok N - ...", with the first failures as "#" diagnostics); main
 * prints the plan line and a summary "unit: N passed, M failed" at the end.
 *
 * Every module starts from the same fixed seed of a xorshift64* generator,
 * so every run is identical, and a module's data do not depend on which
 * other modules ran before it (run_unit_tests takes module names).
 *
 * test/unit/unit.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_UNIT_H
#define BRAID_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * TAP reporting
 * ---------------------------------------------------------------------
 */

/*
 * A group of related assertions reported as one TAP test.  Only the first
 * MAX_DIAG failures are kept as diagnostics.
 */
#define MAX_DIAG 4
typedef struct Check
{
	long		asserts;
	long		failures;
	char		diag[MAX_DIAG][400];
} Check;

/* check_init: start a new group of assertions. */
extern void check_init(Check *c);

/* check_that: record one assertion; on failure keep a formatted diagnostic. */
extern bool check_that(Check *c, bool cond, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* check_report: print the TAP line (and diagnostics) of a group. */
extern void check_report(const Check *c, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* unit_tests_run, unit_tests_failed: TAP tests reported so far. */
extern int	unit_tests_run;
extern int	unit_tests_failed;

/* ---------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------
 */

/* rng_reset: back to the fixed seed (done before each module). */
extern void rng_reset(void);

/* rng_next: next 64-bit pseudo-random value (xorshift64*). */
extern uint64_t rng_next(void);

/* rng_below: pseudo-random value in [0, n); n > 0. */
extern uint64_t rng_below(uint64_t n);

/* sign: -1, 0 or 1 for an int comparison result. */
extern int	sign(int v);

/* cmp_bytes: memcmp order with a length tie-break (byteacmp semantics). */
extern int	cmp_bytes(const uint8_t *a, size_t la, const uint8_t *b, size_t lb);

/* hex: render bytes as hex into buf (truncated), for diagnostics. */
extern const char *hex(const uint8_t *p, size_t len, char *buf, size_t bufsize);

/* xmalloc: malloc that never returns NULL (size 0 allowed). */
extern void *xmalloc(size_t size);

/*
 * Random byte strings, used by the keycodec tests and as the full keys of
 * the IndexMap tie-break tests.
 */
#define MAX_STR 24

/* A raw byte string of up to MAX_STR bytes. */
typedef struct ByteStr
{
	size_t		len;
	uint8_t		b[MAX_STR];
} ByteStr;

/*
 * rand_bytestr: random string over an alphabet stressing the escape
 * (0x00, 0x01, 0xFE, 0xFF); with_nul=false excludes 0x00.
 */
extern void rand_bytestr(ByteStr *s, bool with_nul);

/* ---------------------------------------------------------------------
 * Modules: each runs its tests, in order
 * ---------------------------------------------------------------------
 */

extern void unit_keycodec(void);
extern void unit_indexmap(void);
extern void unit_pool(void);
extern void unit_costmodel(void);
extern void unit_profkernel(void);
extern void unit_emulate(void);
extern void unit_sync(void);
extern void unit_wlimit(void);
extern void unit_joinmodel(void);
extern void unit_joinbucket(void);
extern void unit_vlogrow(void);
extern void unit_collrank(void);
extern void unit_collmemo(void);
extern void unit_runrecord(void);

#endif							/* BRAID_UNIT_H */
