# braidsort: PGXS build.  "make && make install" builds and installs the
# extension; "make installcheck" runs the regression and TAP tests against a
# temporary server it starts itself; "make unittest" runs the pure-C tests.

MODULE_big = braidsort
OBJS = \
	src/braidsort.o \
	src/collrank.o \
	src/costmodel.o \
	src/device.o \
	src/emulate.o \
	src/explain.o \
	src/gather.o \
	src/gather_copy.o \
	src/guc.o \
	src/hugepages.o \
	src/indexmap.o \
	src/instr.o \
	src/iosched.o \
	src/join_node.o \
	src/join_pass.o \
	src/join_rows.o \
	src/join_table.o \
	src/join_plan.o \
	src/joinbucket.o \
	src/joinmodel.o \
	src/keys.o \
	src/merge.o \
	src/partlog.o \
	src/permissions.o \
	src/plancost.o \
	src/plandata.o \
	src/planner.o \
	src/pool.o \
	src/profile.o \
	src/profkernel.o \
	src/progress.o \
	src/shmem.o \
	src/sort_build.o \
	src/sort_gather.o \
	src/sort_keys.o \
	src/sort_merge.o \
	src/modes.o \
	src/sort_node.o \
	src/sort_runs.o \
	src/sort_vlog.o \
	src/sort_adaptive.o \
	src/sort_wlimit.o \
	src/stats.o \
	src/valuelog.o \
	src/wlimit.o \
	src/worker.o

EXTENSION = braidsort
# as in contrib: a base script and updates; CREATE EXTENSION runs the chain
DATA = braidsort--0.1.sql braidsort--0.1--0.3.sql braidsort--0.3--0.3.1.sql \
	braidsort--0.3.1--0.4.sql braidsort--0.4--0.5.sql
PGFILEDESC = "braidsort - key/TID sorts with late gather"

PG_CPPFLAGS = -I$(srcdir)/src
SHLIB_LINK = -lpmem -pthread

REGRESS = setup types plans exec_contract mergepass wlimit join offload valuelog threads keys_property collations adaptive sched monitor
REGRESS_OPTS = --temp-config=$(srcdir)/test/braidsort.conf --temp-instance=./tmp_regress \
	--no-locale --encoding=UTF8

TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

EXTRA_CLEAN = tmp_check tmp_regress test/unit/run_unit_tests

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies: rebuild every object when a header
# changes (a stale object would see another layout of shared structs)
$(OBJS): $(wildcard $(srcdir)/src/*.h)

# unit tests: one file per module under test (see test/unit/unit.h);
# "make unittest UNIT=indexmap" runs only the modules named
UNIT_SRCS = test/unit/unit_main.c test/unit/unit.c \
	test/unit/test_keycodec.c test/unit/test_indexmap.c test/unit/test_pool.c \
	test/unit/test_costmodel.c test/unit/test_profkernel.c test/unit/test_emulate.c \
	test/unit/test_sync.c test/unit/test_wlimit.c test/unit/test_joinmodel.c \
	test/unit/test_joinbucket.c test/unit/test_vlogrow.c test/unit/test_collrank.c \
	src/indexmap.c src/costmodel.c src/pool.c src/profkernel.c src/emulate.c src/wlimit.c \
	src/joinmodel.c src/joinbucket.c src/collrank.c

test/unit/run_unit_tests: $(UNIT_SRCS) test/unit/unit.h $(wildcard $(srcdir)/src/*.h)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -I$(srcdir)/src -o $@ $(UNIT_SRCS) -lpmem -lm -pthread

.PHONY: unittest
unittest: test/unit/run_unit_tests
	test/unit/run_unit_tests $(UNIT)
