/*-------------------------------------------------------------------------
 *
 * join_parts.c
 *	  BraidJoin's partitions: which of them each input writes, their logs,
 *	  and lazy's decision to write the rest.
 *
 * Rows are split into k partitions (by hash, or by ranges of the first key:
 * partition_of in join_state.h).  The mode (core/joinmodel.c) decides
 * which partitions each input writes during the first pass; the others are
 * read again by rescanning the input for their round.  Lazy decides before
 * each round, by Viglas's read-over-write rule, whether that round's
 * rescans write the partitions after it.  Partition 0 is joined in memory
 * during the first pass unless its inner entries outgrow the memory, when
 * it is written out and joined like the others.  A partition's entries
 * are written to its log (io/partlog.c), a spill file tracked by resource
 * owner.
 *
 * src/join/join_parts.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "join/join_state.h"

/*
 * join_parts_setup
 *		The partitions of one execution (first fetch, or after a rescan):
 *		the mode's plan at the planned partition count, each side's logs
 *		(in the node's pass memory), partition 0 in memory.
 */
void
join_parts_setup(BraidJoinState *st)
{
	int			mi,
				mo;
	JoinSide   *sides[2] = {&st->outer, &st->inner};

	st->parts.k = Max(st->cfg.plan.partitions, 1);
	st->parts.resident = true;
	braid_jm_plan_sides(&st->cfg.model, st->cfg.mode, st->cfg.write_intensity, st->parts.k,
						&mi, &mo);
	for (int j = 0; j < 2; j++)
	{
		JoinSide   *s = sides[j];
		double		rows = s->is_outer ? st->cfg.plan.outer_rows : st->cfg.plan.inner_rows;
		int			m = s->is_outer ? mo : mi;

		/*
		 * processes partitioning the inner input together (join_shared.c):
		 * each writes its share of every partition, so reserves for that (the
		 * planner's room on the device counts one copy in all)
		 */
		if (!s->is_outer && st->cfg.plan.shared_inner && st->cfg.plan.pg_sharers > 1)
			rows /= st->cfg.plan.pg_sharers;

		s->parts.logs = palloc0(sizeof(BraidPartLog) * st->parts.k);
		s->parts.mat = palloc0(sizeof(bool) * st->parts.k);
		s->parts.writing = palloc0(sizeof(bool) * st->parts.k);
		s->parts.counts = palloc0(sizeof(uint64) * st->parts.k);
		for (int p = 0; p < st->parts.k; p++)
			braid_partlog_init(&s->parts.logs[p], st->passcxt, sizeof(BraidJoinEntry),
							   (size_t) (rows / st->parts.k * sizeof(BraidJoinEntry)),
							   &s->instr.dev);
		/* partitions 1..m are written by the first pass */
		for (int p = 1; p <= m && p < st->parts.k; p++)
			s->parts.writing[p] = true;
	}
	st->parts.lazy_fired = false;
	st->parts.lazy_round = -1;
}

/*
 * join_parts_release
 *		Remove every partition log (their memory goes with the node's pass
 *		memory).
 */
void
join_parts_release(BraidJoinState *st)
{
	JoinSide   *sides[2] = {&st->outer, &st->inner};

	for (int j = 0; j < 2; j++)
	{
		JoinSide   *s = sides[j];

		if (s->parts.logs)
			for (int p = 0; p < st->parts.k; p++)
				braid_partlog_reset(&s->parts.logs[p]);
		s->parts.logs = NULL;
	}
}

/* join_parts_log: append an entry to partition p's log of a side. */
void
join_parts_log(JoinSide *s, int p, uint32 hash, uint32 pos, uint64 ref)
{
	BraidJoinEntry e;

	e.hash = hash;
	e.pos = pos;
	e.ref = ref;
	braid_partlog_append(&s->parts.logs[p], &e);
}

/*
 * join_parts_finish_writing
 *		Close the logs a pass wrote; they now hold their partitions.
 */
void
join_parts_finish_writing(BraidJoinState *st, JoinSide *s)
{
	for (int p = 0; p < st->parts.k; p++)
		if (s->parts.writing[p])
		{
			braid_partlog_finish(&s->parts.logs[p]);
			s->parts.mat[p] = true;
			s->parts.writing[p] = false;
		}
}

/*
 * join_parts_evict_resident
 *		Partition 0's inner entries outgrew the table during the first pass:
 *		write them out and treat partition 0 as any other.
 */
void
join_parts_evict_resident(BraidJoinState *st)
{
	JoinTable  *t = &st->table;

	for (uint32 i = 0; i < t->n; i++)
		braid_partlog_append(&st->inner.parts.logs[0], &t->entries[i]);
	join_table_reset(t);
	st->parts.resident = false;
	st->instr.evicted = true;
	st->inner.parts.writing[0] = true;
	/* its outer rows: written when the outer input cannot be read again */
	st->outer.parts.writing[0] = !st->outer.can_rescan || st->cfg.mode == BRAID_JM_GRACE ||
		(st->parts.k > 1 && st->outer.parts.writing[1]);
	elog(DEBUG1, "braidsort: BraidJoin partition 0 outgrew %zu kB: written out",
		 st->cfg.budget / 1024);
}

/*
 * join_parts_round_needed
 *		Does partition p need a round?  Not when it has no inner rows and
 *		unmatched outer rows produce nothing (INNER, SEMI).
 */
bool
join_parts_round_needed(BraidJoinState *st, int p)
{
	if (p == 0 && st->parts.resident)
		return false;
	if (st->inner.parts.counts[p] == 0 &&
		(st->cfg.jointype == JOIN_INNER || st->cfg.jointype == JOIN_SEMI))
		return false;
	return true;
}

/*
 * join_parts_lazy_decide
 *		Lazy, before partition p's round: should its rescans write the rest?
 *		Marks the partitions after p each side rescans as being written.
 */
void
join_parts_lazy_decide(BraidJoinState *st, int p)
{
	int			round = st->parts.resident ? p : p + 1;
	bool		any = false;

	if (st->cfg.mode != BRAID_JM_LAZY || st->parts.lazy_fired)
		return;
	for (int q = p + 1; q < st->parts.k; q++)
		if (join_parts_round_needed(st, q) && (!st->inner.parts.mat[q] || !st->outer.parts.mat[q]))
			any = true;
	if (!any || !braid_jm_lazy_materialize(&st->cfg.model, st->parts.k, round, st->cfg.write_intensity))
		return;
	st->parts.lazy_fired = true;
	st->parts.lazy_round = p;
	for (int q = p + 1; q < st->parts.k; q++)
	{
		if (!join_parts_round_needed(st, q))
			continue;
		if (!st->inner.parts.mat[p] && !st->inner.parts.mat[q])
			st->inner.parts.writing[q] = true;
		if (!st->outer.parts.mat[p] && !st->outer.parts.mat[q])
			st->outer.parts.writing[q] = true;
	}
}
