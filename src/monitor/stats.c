/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Cumulative statistics across backends, the scheduler's state and
 *	  where this session spills, as SQL functions behind the views
 *	  braidsort.stats, braidsort.scheduler and braidsort.spill_location.
 *
 * Counters live in shared memory (io/shmem.h) as atomics, so counting costs a
 * backend one atomic add per sort, never a lock.  They start at zero when
 * the server starts and after braidsort.stats_reset().
 *
 * src/monitor/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/sysmacros.h>

#include "commands/tablespace.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "io/devprofile.h"
#include "io/iosched.h"
#include "io/spillspace.h"
#include "monitor/stats.h"

PG_FUNCTION_INFO_V1(braidsort_stats);
PG_FUNCTION_INFO_V1(braidsort_stats_reset);
PG_FUNCTION_INFO_V1(braidsort_stats_reset_time);
PG_FUNCTION_INFO_V1(braidsort_scheduler);
PG_FUNCTION_INFO_V1(braidsort_spill_location);

static const char *const decline_names[BRAID_NUM_DECLINES] = {
	"declined_bounded",
	"declined_key",
	"declined_plan_shape",
	"declined_cost",
	"declined_statement",
};

static const char *const join_mode_names[BRAID_NUM_JOIN_MODES] = {
	"joins_grace",
	"joins_hybrid",
	"joins_segmented",
	"joins_lazy",
};

static const char *const method_names[BRAID_NUM_METHODS] = {
	"sorts_onepass",
	"sorts_mergepass",
	"sorts_hybrid",
	"sorts_segment",
	"sorts_lazy",
};

/*
 * Set while braidsort.sort_modes() or join_modes() plans its query: that
 * plan only shows what braidsort would do, and a Sort it leaves to
 * PostgreSQL there is no decline of a statement's Sort.
 */
bool		braid_stats_declines_paused = false;

/* braid_stats_count_decline: one Sort left to PostgreSQL, for this reason. */
void
braid_stats_count_decline(BraidDecline why)
{
	if (braid_shared != NULL && !braid_stats_declines_paused)
		pg_atomic_fetch_add_u64(&braid_shared->declines[why], 1);
}

/* braid_stats_count_sort: one finished sort. */
void
braid_stats_count_sort(BraidMethod method, bool value_log, uint64 rows,
					   uint64 value_bytes_avoided)
{
	if (braid_shared == NULL)
		return;
	pg_atomic_fetch_add_u64(&braid_shared->sorts[method], 1);
	if (value_log)
		pg_atomic_fetch_add_u64(&braid_shared->sorts_value_log, 1);
	pg_atomic_fetch_add_u64(&braid_shared->rows_sorted, rows);
	pg_atomic_fetch_add_u64(&braid_shared->value_bytes_avoided, value_bytes_avoided);
}

/*
 * braid_stats_count_adaptive: one sort taken adaptively (sort_adaptive.c),
 * which stayed PostgreSQL's tuplesort, switched to braidsort's path (then
 * also counted by braid_stats_count_sort when it finishes), or outgrew
 * work_mem but was left to PostgreSQL's external sort by the cost model
 * (declined).
 */
void
braid_stats_count_adaptive(BraidAdaptivePath path, bool declined)
{
	if (braid_shared == NULL)
		return;
	if (declined)
		pg_atomic_fetch_add_u64(&braid_shared->adaptive_declined, 1);
	else
		pg_atomic_fetch_add_u64(path == BRAID_ADAPTIVE_SWITCHED ? &braid_shared->adaptive_switched :
								&braid_shared->adaptive_stayed, 1);
}

/* braid_stats_count_join: one finished BraidJoin, in this BraidJoinMode. */
void
braid_stats_count_join(int mode, uint64 rows)
{
	if (braid_shared == NULL || mode < 0 || mode >= BRAID_NUM_JOIN_MODES)
		return;
	pg_atomic_fetch_add_u64(&braid_shared->joins[mode], 1);
	pg_atomic_fetch_add_u64(&braid_shared->join_rows, rows);
}

/* require_shared: the functions need braidsort's shared memory. */
static void
require_shared(void)
{
	if (braid_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("braidsort shared memory is not initialized"),
				 errhint("Add braidsort to shared_preload_libraries and restart the server.")));
}

/*
 * braid_device_label
 *		How a device is named in views: its tablespace and major:minor.
 */
static char *
device_label(const BraidDeviceSlot *d)
{
	char	   *spc = get_tablespace_name(d->spcoid);

	return psprintf("%s (dev %u:%u)", spc ? spc : "?",
					major((dev_t) d->dev), minor((dev_t) d->dev));
}

/* put_row: one (scope, counter, value) row. */
static void
put_row(ReturnSetInfo *rsinfo, const char *scope, const char *counter, uint64 value)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = CStringGetTextDatum(scope);
	values[1] = CStringGetTextDatum(counter);
	values[2] = Int64GetDatum((int64) value);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * braidsort_stats
 *		SQL: braidsort.stats() returns setof (scope, counter, value): the
 *		counters of all backends, "global" or per device.
 */
Datum
braidsort_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			ndev;

	require_shared();
	InitMaterializedSRF(fcinfo, 0);

	for (int i = 0; i < BRAID_NUM_METHODS; i++)
		put_row(rsinfo, "global", method_names[i],
				pg_atomic_read_u64(&braid_shared->sorts[i]));
	put_row(rsinfo, "global", "sorts_value_log",
			pg_atomic_read_u64(&braid_shared->sorts_value_log));
	put_row(rsinfo, "global", "adaptive_stayed",
			pg_atomic_read_u64(&braid_shared->adaptive_stayed));
	put_row(rsinfo, "global", "adaptive_switched",
			pg_atomic_read_u64(&braid_shared->adaptive_switched));
	put_row(rsinfo, "global", "adaptive_declined",
			pg_atomic_read_u64(&braid_shared->adaptive_declined));
	put_row(rsinfo, "global", "rows_sorted",
			pg_atomic_read_u64(&braid_shared->rows_sorted));
	put_row(rsinfo, "global", "value_bytes_avoided",
			pg_atomic_read_u64(&braid_shared->value_bytes_avoided));
	for (int i = 0; i < BRAID_NUM_JOIN_MODES; i++)
		put_row(rsinfo, "global", join_mode_names[i],
				pg_atomic_read_u64(&braid_shared->joins[i]));
	put_row(rsinfo, "global", "rows_joined",
			pg_atomic_read_u64(&braid_shared->join_rows));
	for (int i = 0; i < BRAID_NUM_DECLINES; i++)
		put_row(rsinfo, "global", decline_names[i],
				pg_atomic_read_u64(&braid_shared->declines[i]));
	put_row(rsinfo, "global", "orphan_files_removed",
			pg_atomic_read_u64(&braid_shared->orphans_removed));
	put_row(rsinfo, "global", "spill_tablespace_fallbacks",
			pg_atomic_read_u64(&braid_shared->spill_tablespace_fallbacks));

	LWLockAcquire(braid_shared->lock, LW_SHARED);
	ndev = braid_shared->ndevices;
	LWLockRelease(braid_shared->lock);
	for (int i = 0; i < ndev; i++)
	{
		BraidDeviceSlot *d = &braid_shared->devices[i];
		char	   *label = device_label(d);

		put_row(rsinfo, label, "files", pg_atomic_read_u64(&d->traffic.files));
		put_row(rsinfo, label, "bytes_written", pg_atomic_read_u64(&d->traffic.bytes_written));
		put_row(rsinfo, label, "bytes_read", pg_atomic_read_u64(&d->traffic.bytes_read));
		put_row(rsinfo, label, "lines_written", pg_atomic_read_u64(&d->traffic.lines_written));
		put_row(rsinfo, label, "lines_read", pg_atomic_read_u64(&d->traffic.lines_read));
	}
	return (Datum) 0;
}

/*
 * braidsort_stats_reset
 *		SQL: braidsort.stats_reset() zeroes the counters (superuser only,
 *		unless granted).
 */
Datum
braidsort_stats_reset(PG_FUNCTION_ARGS)
{
	require_shared();
	for (int i = 0; i < BRAID_NUM_METHODS; i++)
		pg_atomic_write_u64(&braid_shared->sorts[i], 0);
	for (int i = 0; i < BRAID_NUM_DECLINES; i++)
		pg_atomic_write_u64(&braid_shared->declines[i], 0);
	for (int i = 0; i < BRAID_NUM_JOIN_MODES; i++)
		pg_atomic_write_u64(&braid_shared->joins[i], 0);
	pg_atomic_write_u64(&braid_shared->join_rows, 0);
	pg_atomic_write_u64(&braid_shared->sorts_value_log, 0);
	pg_atomic_write_u64(&braid_shared->adaptive_stayed, 0);
	pg_atomic_write_u64(&braid_shared->adaptive_switched, 0);
	pg_atomic_write_u64(&braid_shared->adaptive_declined, 0);
	pg_atomic_write_u64(&braid_shared->rows_sorted, 0);
	pg_atomic_write_u64(&braid_shared->value_bytes_avoided, 0);
	pg_atomic_write_u64(&braid_shared->orphans_removed, 0);
	pg_atomic_write_u64(&braid_shared->spill_tablespace_fallbacks, 0);
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
	{
		BraidDeviceTraffic *t = &braid_shared->devices[i].traffic;

		pg_atomic_write_u64(&t->files, 0);
		pg_atomic_write_u64(&t->bytes_written, 0);
		pg_atomic_write_u64(&t->bytes_read, 0);
		pg_atomic_write_u64(&t->lines_written, 0);
		pg_atomic_write_u64(&t->lines_read, 0);
		pg_atomic_write_u64(&braid_shared->devices[i].ungated_reads, 0);
		braid_clock_reset_counters(&braid_shared->devices[i].clock);
	}
	LWLockAcquire(braid_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < BRAID_MAX_DEVICES; i++)
	{
		BraidDeviceSlot *d = &braid_shared->devices[i];

		d->read_grants = d->write_grants = 0;
		d->waits = d->phase_switches = d->overlaps = 0;
	}
	LWLockRelease(braid_shared->lock);
	pg_atomic_write_u64(&braid_shared->stats_reset, (uint64) GetCurrentTimestamp());
	PG_RETURN_VOID();
}

/*
 * braidsort_stats_reset_time
 *		SQL: braidsort.stats_reset_time(), when the counters last started:
 *		the server's start or the last stats_reset() (as
 *		pg_stat_statements_info's stats_reset).
 */
Datum
braidsort_stats_reset_time(PG_FUNCTION_ARGS)
{
	require_shared();
	PG_RETURN_TIMESTAMPTZ((TimestampTz) pg_atomic_read_u64(&braid_shared->stats_reset));
}

/*
 * braidsort_scheduler
 *		SQL: braidsort.scheduler() returns one row per spill device: the
 *		phase gate's current state and cumulative counters.
 */
Datum
braidsort_scheduler(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static const char *const phase_names[] = {"idle", "read", "write", "profile"};
	BraidDeviceSlot *copy;
	int			ndev;

	require_shared();
	InitMaterializedSRF(fcinfo, 0);

	/* copy under the lock, then build rows (catalog lookups) without it */
	copy = palloc(sizeof(BraidDeviceSlot) * BRAID_MAX_DEVICES);
	LWLockAcquire(braid_shared->lock, LW_SHARED);
	ndev = braid_shared->ndevices;
	memcpy(copy, braid_shared->devices, sizeof(BraidDeviceSlot) * ndev);
	LWLockRelease(braid_shared->lock);

	for (int i = 0; i < ndev; i++)
	{
		BraidDeviceSlot *d = &copy[i];
		BraidDeviceClock *clock = &braid_shared->devices[i].clock;
		Datum		values[20];
		bool		nulls[20] = {0};
		char	   *spc = get_tablespace_name(d->spcoid);
		bool		idle = d->readers == 0 && d->writers == 0 && d->profilers == 0;
		int			c = 0;

		values[c++] = CStringGetTextDatum(psprintf("%u:%u", major((dev_t) d->dev),
												   minor((dev_t) d->dev)));
		if (spc)
			values[c++] = CStringGetTextDatum(spc);
		else
			nulls[c++] = true;
		values[c++] = CStringGetTextDatum(braid_io_policy == BRAID_IO_OVERLAP ?
										  "overlap" : "interference_aware");
		values[c++] = CStringGetTextDatum(idle ? "idle" : phase_names[d->phase]);
		values[c++] = Int32GetDatum(d->readers);
		values[c++] = Int32GetDatum(d->writers);
		values[c++] = Int32GetDatum(d->writer_threads);
		values[c++] = Int32GetDatum(d->waiting_readers);
		values[c++] = Int32GetDatum(d->waiting_writers);
		values[c++] = Int32GetDatum(braid_sched_device_write_cap(i));
		values[c++] = Int64GetDatum((int64) d->read_grants);
		values[c++] = Int64GetDatum((int64) d->write_grants);
		values[c++] = Int64GetDatum((int64) d->waits);
		values[c++] = Int64GetDatum((int64) d->phase_switches);
		values[c++] = Int64GetDatum((int64) d->overlaps);
		values[c++] = Int32GetDatum(d->profilers);
		values[c++] = Int64GetDatum((int64) pg_atomic_read_u64(&braid_shared->devices[i].ungated_reads));
		/* the emulated device's clock (absent before 0.4: not returned) */
		values[c++] = Float8GetDatum((double) braid_clock_counter(&clock->reserved_ns) / 1e6);
		values[c++] = Float8GetDatum((double) braid_clock_counter(&clock->queued_ns) / 1e6);
		values[c++] = Int64GetDatum((int64) braid_clock_counter(&clock->interfered_lines));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * braidsort_spill_location
 *		SQL: where this session's spill files go (the view
 *		braidsort.spill_location), one row: braidsort.spill_tablespace as
 *		set, the tablespace spills go to and why not the one set, its
 *		temporary directory, the device (st_dev) and its free space, and
 *		the device's stored profile: whether it is used in this session,
 *		and whether it found persistent memory (braid_spill_device: the
 *		directory may not exist before the first spill).
 */
Datum
braidsort_spill_location(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[8];
	bool		nulls[8] = {0};
	Oid			spc = braid_spill_tablespace_guess();
	char	   *why = braid_spill_setting_problem();
	char		dir[MAXPGPATH];
	char	   *name = get_tablespace_name(spc);
	dev_t		dev;
	double		free_bytes;
	bool		found = braid_spill_device(spc, &dev, &free_bytes);
	BraidProfile profile;
	int			status;

	InitMaterializedSRF(fcinfo, 0);
	memset(&profile, 0, sizeof(profile));
	TempTablespacePath(dir, spc);
	status = braid_sched_profile_status(spc, &profile);

	values[0] = CStringGetTextDatum(braid_spill_tablespace ? braid_spill_tablespace : "");
	nulls[0] = braid_spill_tablespace == NULL || braid_spill_tablespace[0] == '\0';
	values[1] = name ? CStringGetTextDatum(name) : (Datum) 0;
	nulls[1] = name == NULL;
	values[2] = why ? CStringGetTextDatum(why) : (Datum) 0;
	nulls[2] = why == NULL;
	values[3] = CStringGetTextDatum(dir);
	if (found)
	{
		values[4] = CStringGetTextDatum(psprintf("%u:%u", major(dev), minor(dev)));
		values[5] = Int64GetDatum((int64) (free_bytes / (1024 * 1024)));
	}
	nulls[4] = nulls[5] = !found;
	values[6] = CStringGetTextDatum(status == BRAID_PROFILE_IN_USE ? "in use" :
									status == BRAID_PROFILE_OTHER_EMULATION ?
									"other emulation" : "none");
	values[7] = BoolGetDatum(profile.media == BRAID_MEDIA_PMEM);
	nulls[7] = status == BRAID_PROFILE_NONE || profile.media == BRAID_MEDIA_UNKNOWN;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
