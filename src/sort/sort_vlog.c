/*-------------------------------------------------------------------------
 *
 * sort_vlog.c
 *	  VALUE LOG: sorted rows read back from the value log.
 *
 * When the input is not a heap scan, each row was appended to the value
 * log (valuelog.c) and the IndexMap points into it.  Rows held in memory
 * are emitted in place.  Rows on the spill device, or behind a merge, are
 * read a window at a time (BRAID_LOG_WINDOW_ROWS): the window's refs are
 * taken (from the merge, or the merged refs file, whose blocks are read
 * under short grants of their own), then, under one read grant of the
 * log's devices, its rows are copied out of the log's mapping by the
 * device's reader threads, so that neither the merge nor rows emitted one
 * at a time -- and whatever the plan above does with them -- hold a grant.
 *
 * src/sort/sort_vlog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "executor/tuptable.h"
#include "utils/memutils.h"

#include "io/device.h"
#include "io/devprofile.h"
#include "core/emulate.h"
#include "core/pool.h"
#include "sort/sort_state.h"

/* The copy of a value log window by the reader threads. */
typedef struct LogCopyTask
{
	MinimalTuple *src;			/* rows in the log's mapping */
	uint32	   *len;			/* their t_len, with WINDOW_PACKED */
	size_t	   *off;			/* their places in the arena */
	char	   *arena;
	int			n;
	int			nthreads;
	BraidEmulation em;			/* how the reads are charged */
} LogCopyTask;

/* in a window's len: the row is stored packed (vlogrow.h) */
#define WINDOW_PACKED	0x80000000U

/*
 * log_copy_task
 *		A reader thread: copy its share of the window's rows out of the
 *		mapped value log (unpacking the packed ones) and pay their emulated
 *		read delay.  Pure C: it runs on a pool thread.
 */
static void
log_copy_task(void *arg, int worker)
{
	LogCopyTask *t = (LogCopyTask *) arg;
	int			from = (int) ((int64) t->n * worker / t->nthreads);
	int			to = (int) ((int64) t->n * (worker + 1) / t->nthreads);
	uint64		lines = 0;

	for (int i = from; i < to; i++)
	{
		uintptr_t	a = (uintptr_t) t->src[i];
		size_t		stored;

		/* rows are scattered over the log: start fetching a few ahead */
		if (i + 8 < to)
			__builtin_prefetch(t->src[i + 8]);
		stored = braid_vlog_row_copy(t->src[i], (t->len[i] & WINDOW_PACKED) != 0,
									 t->len[i] & ~WINDOW_PACKED, t->arena + t->off[i]);
		lines += braid_lines_spanned(a, a + stored);
	}
	if (braid_emulation_active(&t->em))
		(void) braid_emulate_access(&t->em, lines, false);
}

/*
 * load_log_window
 *		Value log mode, when rows come back through spill-device reads (a
 *		value log on the device, or merged runs): fetch the window of rows
 *		holding sort position pos.  The window's refs are taken first, and
 *		its rows then copied out of the log under one read grant, so that
 *		rows emitted one at a time -- and whatever the plan above does with
 *		them -- hold no grant.  A streaming merge only moves forward.
 */
static void
load_log_window(BraidSortState *st, int64 pos)
{
	BraidReadScope scope = {0};
	uint64	   *seg_bytes = NULL;	/* what the copy reads of each segment */
	uint64	   *seg_lines = NULL;
	int64		first;
	int			n = 0;
	size_t		used = 0;
	bool		copy = st->path->vlog.on_device;
	instr_time	start;

	if (st->path->merge.merger)
	{
		first = st->win.first + st->win.n;
		if (pos != first)
			elog(ERROR, "braidsort: a streaming merge cannot go back to row " INT64_FORMAT, pos);
	}
	else
		first = pos - pos % BRAID_LOG_WINDOW_ROWS;

	if (st->win.tuple == NULL)
	{
		st->win.tuple = MemoryContextAlloc(st->gathercxt,
										   sizeof(MinimalTuple) * BRAID_LOG_WINDOW_ROWS);
		st->win.off = MemoryContextAlloc(st->gathercxt,
										 sizeof(size_t) * BRAID_LOG_WINDOW_ROWS);
		st->win.len = MemoryContextAlloc(st->gathercxt,
										 sizeof(uint32) * BRAID_LOG_WINDOW_ROWS);
	}
	st->win.n = 0;
	if (copy)
	{
		seg_bytes = palloc0(sizeof(uint64) * st->path->vlog.nsegs);
		seg_lines = palloc0(sizeof(uint64) * st->path->vlog.nsegs);
	}

	/* the window's refs in the merged refs file: one block read */
	if (st->path->merge.merger == NULL && st->path->out.refs_run && first < st->path->out.nrows)
		braid_spill_note_read(st->path->out.refs_run->file, first * sizeof(uint64),
							  Min(first + BRAID_LOG_WINDOW_ROWS, st->path->out.nrows) * sizeof(uint64));

	INSTR_TIME_SET_CURRENT(start);
	while (n < BRAID_LOG_WINDOW_ROWS)
	{
		uint64		ref;

		if (st->path->merge.merger)
		{
			const uint8 *key;
			uint32		keylen;

			if (!braid_merger_next(st->path->merge.merger, &key, &keylen, &ref))
				break;
		}
		else
		{
			if (first + n >= st->path->out.nrows)
				break;
			ref = st->path->out.refs[first + n];
		}
		if (copy)
		{
			BraidVlogRow row;
			size_t		alen;
			uint64		vref = ref & ~BRAID_REF_TRUNCATED;
			int			seg = braid_vlog_ref_seg(vref);

			/* where the row is; the reader threads copy it below */
			if (braid_vlog_ref_len(vref) != 0)
				braid_vlog_locate(&st->path->vlog, vref, &row);
			else
			{
				/* a long row: its length is read from the device */
				BraidReadScope one = {0};

				braid_read_scope_add(&one, braid_vlog_ref_file(&st->path->vlog, vref));
				braid_read_scope_begin(&one);
				braid_vlog_locate(&st->path->vlog, vref, &row);
				braid_read_scope_end(&one);
			}
			alen = MAXALIGN(row.len);
			seg_bytes[seg] += row.stored;
			seg_lines[seg] += braid_lines_spanned(row.pos, row.pos + row.stored);
			if (used + alen > st->win.cap)
			{
				size_t		cap = Max(Max(st->win.cap * 2, used + alen), (size_t) 65536);

				st->win.arena = st->win.arena ?
					repalloc_huge(st->win.arena, cap) :
					MemoryContextAllocHuge(st->gathercxt, cap);
				st->win.cap = cap;
			}
			st->win.tuple[n] = (MinimalTuple) row.src;	/* source, for now */
			st->win.len[n] = row.len | (row.packed ? WINDOW_PACKED : 0);
			st->win.off[n] = used;
			used += alen;
		}
		else
			st->win.tuple[n] = braid_vlog_get(&st->path->vlog, ref & ~BRAID_REF_TRUNCATED);
		n++;
	}

	/*
	 * the final merge runs here, window by window: count it as merge time
	 * (with the rows' places in the log, found on the way)
	 */
	if (st->path->merge.merger)
		st->instr.merge_stream_ms += braid_elapsed_ms(start);
	if (copy && n > 0)
	{
		LogCopyTask task;
		int			threads;

		/* the copies, on the device's reader threads */
		task.src = st->win.tuple;
		task.len = st->win.len;
		task.off = st->win.off;
		task.arena = st->win.arena;
		task.n = n;

		/*
		 * the copy is the device access: under a read grant of the log, and
		 * charged as the device is once granted (whether a writer is at work
		 * is seen after the wait for the gate, not before)
		 */
		for (int i = 0; i < st->path->vlog.nsegs; i++)
			braid_read_scope_add(&scope, st->path->vlog.segs[i]);
		braid_read_scope_begin(&scope);
		braid_device_emulation(st->path->vlog.segs[0], &task.em);
		threads = Min(braid_sched_read_thread_count_for(st->path->vlog.segs[0]->spcoid),
					  braid_pool_max_threads);
		/* threads pay for themselves on large windows, or a slow device */
		if (task.em.read_ns > 0 || task.em.interference_ns > 0)
			threads = Min(threads, n / 64);
		else
			threads = Min(threads, (int) (used / (256 * 1024)));
		task.nthreads = Max(threads, 1);
		for (int i = 0; i < st->path->vlog.nsegs; i++)
			braid_spill_count_read_sum(st->path->vlog.segs[i], seg_bytes[i], seg_lines[i]);
		braid_pool_run(task.nthreads, log_copy_task, &task);
		braid_read_scope_end(&scope);
	}
	if (copy)
	{
		pfree(seg_bytes);
		pfree(seg_lines);
	}

	if (copy)
		for (int i = 0; i < n; i++)
			st->win.tuple[i] = (MinimalTuple) (st->win.arena + st->win.off[i]);
	st->win.first = first;
	st->win.n = n;
	if (n == 0 || pos >= first + n)
		elog(ERROR, "braidsort: sorted row " INT64_FORMAT " is missing", pos);
}

/*
 * braid_vlog_emit
 *		Value log mode: the row at sort position pos, projected unless the
 *		node's output is its input's row.
 */
TupleTableSlot *
braid_vlog_emit(BraidSortState *st, int64 pos)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	MinimalTuple tuple;

	if (st->path->vlog.on_device || st->path->merge.merger || st->path->out.refs_run)
	{
		if (pos < st->win.first || pos >= st->win.first + st->win.n)
		{
			const BraidProgress *prev = braid_progress_enter(&st->mon.progress);
			instr_time	start;

			/* Gather Time: the windows' loads, less their merging */
			INSTR_TIME_SET_CURRENT(start);
			load_log_window(st, pos);
			st->instr.gather_ms += braid_elapsed_ms(start);
			braid_progress_leave(prev);
		}
		tuple = st->win.tuple[pos - st->win.first];
	}
	else
		tuple = braid_vlog_get(&st->path->vlog, st->path->out.refs[pos] & ~BRAID_REF_TRUNCATED);

	ExecStoreMinimalTuple(tuple, st->win.slot, false);
	/* the input's row as it is (plan/sort_plan.c: set_row_scan_tlist) */
	if (st->css.ss.ps.ps_ProjInfo == NULL)
		return st->win.slot;
	ResetExprContext(econtext);
	econtext->ecxt_outertuple = st->win.slot;
	return ExecProject(st->css.ss.ps.ps_ProjInfo);
}

/*
 * braid_vlog_window_reset
 *		No window loaded: the sorted rows are read from the first.
 */
void
braid_vlog_window_reset(BraidSortState *st)
{
	st->win.first = 0;
	st->win.n = 0;
}
