# braidsort: PGXS build.  "make && make install" builds and installs the
# extension; "make installcheck" runs the regression, isolation and TAP
# tests against temporary servers it starts itself; "make unittest" runs the
# pure-C tests.

MODULE_big = braidsort

# Sources by folder (docs/design.md): the module entry and its parameters at
# the top of src/, then the planner, the two executor nodes, what DBAs see,
# the device and shared memory, and the pure C core.  Every .c of these
# folders is built.
BRAID_DIRS = src src/plan src/sort src/join src/monitor src/io src/core
OBJS = $(patsubst %.c,%.o,$(sort $(foreach d,$(BRAID_DIRS),$(wildcard $(d)/*.c))))

EXTENSION = braidsort
# as in contrib: a base script and updates; CREATE EXTENSION runs the chain
DATA = braidsort--0.1.sql braidsort--0.1--0.3.sql braidsort--0.3--0.3.1.sql \
	braidsort--0.3.1--0.4.sql braidsort--0.4--0.5.sql braidsort--0.5--0.6.sql \
	braidsort--0.6--0.7.sql braidsort--0.7--0.7.1.sql
PGFILEDESC = "braidsort - key/TID sorts with late gather"

# the extension's version (braidsort.control), which the library reports
# (braidsort.version()) and every packaging file repeats (scripts/test.sh
# checks they agree)
BRAID_VERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(srcdir)/braidsort.control)
PG_CPPFLAGS = -I$(srcdir)/src -DBRAID_VERSION='"$(BRAID_VERSION)"'
SHLIB_LINK = -lpmem -pthread

REGRESS = setup types plans exec_contract mergepass wlimit join offload valuelog threads keys_property collations adaptive sched monitor majors
REGRESS_OPTS = --temp-config=$(srcdir)/test/braidsort.conf --temp-instance=./tmp_regress \
	--no-locale --encoding=UTF8

# isolation specs (test/isolation): sessions sorting at once on one
# device, step by step.  The full-device spec needs the tiny tmpfs that
# scripts/test.sh mounts (BRAID_TEST_TINY_DAX), whose path is written into
# a copy of the specs before they run.
ISOLATION = gate_reload gate_wait
ifneq ($(BRAID_TEST_TINY_DAX),)
ISOLATION += full_device
endif
ISOLATION_OPTS = --inputdir=isolation_input \
	--temp-config=$(srcdir)/test/braidsort.conf --temp-instance=./tmp_isolation \
	--no-locale --encoding=UTF8 --load-extension=braidsort
REGRESS_PREP = isolation_input

TAP_TESTS = 1
# The TAP tests that profile the device (a profile is not stored while
# other work takes the CPUs: the docs' examples do too), time sessions
# against each other or need the sort's helper threads to get ahead (002's
# merge-ahead) run alone, first (scripts/check-tree.py checks the first);
# the others (most of whose time is one CPU's work or waiting for a phase)
# PROVE_JOBS at a time, the longest first: test/prove_groups.sh, which
# stands in for prove.  PROVE_TESTS=... on the command line runs just
# those, one at a time.
TAP_ALONE = test/t/002_cancel.pl test/t/003_spill.pl test/t/004_scheduler.pl \
	test/t/005_concurrency.pl test/t/006_permissions.pl test/t/007_docs.pl \
	test/t/008_progress.pl test/t/009_temp_files.pl
TAP_LONGEST = test/t/012_random.pl test/t/013_cancel_points.pl \
	test/t/018_shared_cancel.pl test/t/010_wlimit_cancel.pl
PROVE_JOBS = 2
export PROVE_JOBS
ifndef PROVE_TESTS
PROVE_TESTS = --alone $(TAP_ALONE) --together $(TAP_LONGEST) \
	$(filter-out $(TAP_ALONE) $(TAP_LONGEST),$(sort $(wildcard test/t/*.pl)))
endif

EXTRA_CLEAN = tmp_check tmp_regress tmp_isolation isolation_input output_iso \
	test/unit/run_unit_tests

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# each TAP file's time in the log (after PGXS, which sets PROVE_FLAGS empty)
PROVE_FLAGS = --timer
# prove, in the two groups PROVE_TESTS names (see TAP_ALONE above)
BRAID_PROVE := $(PROVE)
PROVE = $(srcdir)/test/prove_groups.sh $(BRAID_PROVE)

# PGXS tracks no header dependencies: rebuild every object when a header
# changes (a stale object would see another layout of shared structs)
BRAID_HEADERS = $(foreach d,$(BRAID_DIRS),$(wildcard $(d)/*.h))
$(OBJS): $(BRAID_HEADERS)

# the isolation specs and their expected output, as pg_isolation_regress
# reads them (--inputdir), with the tiny device's path written in
.PHONY: isolation_input
isolation_input:
	rm -rf isolation_input
	mkdir -p isolation_input/specs isolation_input/expected
	for f in $(srcdir)/test/isolation/specs/*.spec; do \
		sed 's|@tiny_dax@|$(BRAID_TEST_TINY_DAX)|g' $$f > isolation_input/specs/$$(basename $$f) || exit 1; \
	done
	cp $(srcdir)/test/isolation/expected/*.out isolation_input/expected/

# unit tests: one file per module of the pure C core (see test/unit/unit.h),
# built with the whole core and without PostgreSQL; "make unittest
# UNIT=indexmap" runs only the modules named
UNIT_SRCS = $(sort $(wildcard test/unit/*.c)) $(sort $(wildcard src/core/*.c))

test/unit/run_unit_tests: $(UNIT_SRCS) test/unit/unit.h $(wildcard src/core/*.h)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -I$(srcdir)/src -o $@ $(UNIT_SRCS) -lpmem -lm -pthread

.PHONY: unittest
unittest: test/unit/run_unit_tests
	test/unit/run_unit_tests $(UNIT)

# pgindent over the sources, with PostgreSQL's typedefs and typedefs.list
# (scripts/indent.sh; "make indent INDENT_ARGS=--check" changes nothing)
.PHONY: indent
indent:
	PG_CONFIG=$(PG_CONFIG) bash $(srcdir)/scripts/indent.sh $(INDENT_ARGS)
