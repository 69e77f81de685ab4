/*-------------------------------------------------------------------------
 *
 * join_pass.c
 *	  BraidJoin's passes: the first pass over both inputs, and the rounds
 *	  that join the partitions left.
 *
 * See join_node.c for the design.  The first pass reads the inner input
 * (partition 0 into the table, the other partitions' entries written or
 * dropped as the mode says: join_parts.c), then the outer input, probing
 * partition 0 with the row in hand (over a heap scan, a few rows behind the
 * scan: join_ring.c, so that the probes' cache misses overlap).  Each round
 * loads one partition's (piece's) inner entries, from its log or by a
 * rescan, and gives its outer rows, from its log or by a rescan; lazy
 * decides before each round whether its rescans write the rest.  The outer
 * rows are handed to the node's probe (join_pass_next_outer).
 *
 * src/join/join_pass.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

#include "guc.h"
#include "join/join_state.h"

/* budget_entries: the entries the table takes within the budget, and one. */
static uint32
budget_entries(const BraidJoinState *st)
{
	return (uint32) Min(st->cfg.budget / JOIN_TABLE_ENTRY_BYTES + 1, (size_t) PG_UINT32_MAX / 4);
}

static void load_round(BraidJoinState *st);

/*
 * shared_resident
 *		After the processes partitioned the inner input together
 *		(join_shared.c): partition 0 into the table from every process's
 *		log when it fits, else written out as when it outgrows the table
 *		(join_parts_evict_resident), its outer rows too where they cannot be
 *		read again; one partition where there are no inner rows.
 */
static void
shared_resident(BraidJoinState *st)
{
	uint64		total = 0;

	for (int p = 0; p < st->parts.k; p++)
		total += st->inner.parts.counts[p];
	if (total == 0)
	{
		/* every outer row is unmatched: no partition needed */
		st->parts.k = 1;
		st->parts.resident = true;
		join_table_reset(&st->table);
		join_table_build(&st->table);
		return;
	}
	if (join_table_bytes((uint32) Min(st->inner.parts.counts[0], (uint64) PG_UINT32_MAX / 4)) <=
		st->cfg.budget)
	{
		st->parts.resident = true;
		st->pass.round = 0;
		st->pass.piece = 0;
		st->pass.npieces = 1;
		load_round(st);
		return;
	}
	st->parts.resident = false;
	st->instr.evicted = true;
	st->outer.parts.writing[0] = !st->outer.can_rescan || st->cfg.mode == BRAID_JM_GRACE ||
		(st->parts.k > 1 && st->outer.parts.writing[1]);
	elog(DEBUG1, "braidsort: BraidJoin partition 0 outgrew %zu kB: written out",
		 st->cfg.budget / 1024);
}

/*
 * first_inner_pass
 *		Read the inner input once: partition 0 into the table, the others'
 *		entries into the logs the mode writes.  Processes partitioning
 *		together (join_shared.c) each write every entry of their share,
 *		partition 0's too, and load partition 0 from every process's log.
 */
static void
first_inner_pass(BraidJoinState *st)
{
	JoinSide   *s = &st->inner;
	bool		build = true;
	int			phase = 0;

	if (st->shared != NULL)
	{
		st->parts.resident = false;
		for (int p = 0; p < st->parts.k; p++)
			s->parts.writing[p] = true;
		phase = braid_join_shared_attach(st);
		build = phase == JOIN_SHARED_BUILDING;
		st->shared_pos_blocks = 0;
	}

	/*
	 * partition 0's entries go no further than the budget
	 * (join_parts_evict_resident)
	 */
	st->table.grow_limit = budget_entries(st);
	while (build)
	{
		TupleTableSlot *slot = ExecProcNode(s->ps);
		uint32		hash;
		int64		key = 0;
		uint64		ref;
		uint32		pos = 0;
		int			p;

		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		s->instr.rows++;
		if (!join_row_hash(s, slot, &hash, s->key_refs ? &key : NULL))
			continue;
		p = partition_of(st, s, hash);
		s->parts.counts[p]++;
		/* a value log keeps every row (a later pass may read it again) */
		if (!(p == 0 && st->parts.resident) && !s->parts.writing[p] && !side_has_vlog(s))
			continue;
		if (s->key_refs)
			ref = (uint64) key;
		else if (s->by_tid)
		{
			ref = join_row_heap_ref(s);
			pos = join_row_heap_pos(s);
		}
		else
			ref = join_row_vlog_ref(s, slot);
		if (p == 0 && st->parts.resident)
		{
			BraidJoinEntry e = {hash, pos, ref};

			join_table_add(&st->table, &e);
			if (join_table_bytes(st->table.n) > st->cfg.budget)
				join_parts_evict_resident(st);
		}
		else if (s->parts.writing[p])
			join_parts_log(s, p, hash, pos, ref);
	}
	if (st->shared != NULL)
	{
		if (build)
			braid_join_shared_publish(st);
		if (phase <= JOIN_SHARED_HOLDING)
			braid_join_shared_hold(st);
		braid_join_shared_collect(st);
		shared_resident(st);
		return;
	}
	if (side_has_vlog(s))
		braid_vlog_finish(&s->fetch.vlog);
	join_parts_finish_writing(st, s);

	/*
	 * No inner rows: every outer row is unmatched, no partition needed
	 * (nothing was written: partition 0, resident, is all there is).
	 */
	if (st->parts.resident)
	{
		uint64		total = 0;

		for (int p = 0; p < st->parts.k; p++)
			total += s->parts.counts[p];
		if (total == 0)
			st->parts.k = 1;
	}
	if (st->parts.resident)
		join_table_build(&st->table);
}

/*
 * load_round
 *		Fill the table with this round's inner entries (partition st->pass.round,
 *		piece st->pass.piece): from the partition's log, or by reading the inner
 *		input again (then also writing what lazy decided).
 */
static void
load_round(BraidJoinState *st)
{
	JoinSide   *s = &st->inner;
	int			p = st->pass.round;

	join_table_reset(&st->table);

	/*
	 * A whole partition's count is known: no room wasted by doubling.  A
	 * piece's is only about its share: its array doubles, but no further than
	 * the budget in its last step (past it, a skewed piece, it doubles
	 * again).
	 */
	st->table.grow_limit = budget_entries(st);
	if (st->pass.npieces == 1)
		join_table_reserve(&st->table, (uint32) Min(s->parts.counts[p], (uint64) PG_UINT32_MAX / 4));
	if (st->shared != NULL)
	{
		/*
		 * every process's entries (another's pos is good where this process
		 * pinned the page while its writer held it, braid_join_shared_hold:
		 * elsewhere its rows are found by line pointer)
		 */
		for (int proc = 0; proc < braid_join_shared_nprocs(st); proc++)
		{
			BraidPartLog log;
			BraidPartScan scan;
			bool		own;
			int			n;

			if (!braid_join_shared_open(st, proc, p, &log, &own))
				continue;
			braid_partlog_scan_begin(&log, &scan);
			while ((n = braid_partlog_read(&log, &scan, (char *) st->pass.chunk,
										   JOIN_READ_CHUNK)) > 0)
			{
				CHECK_FOR_INTERRUPTS();
				for (int i = 0; i < n; i++)
				{
					BraidJoinEntry *e = &st->pass.chunk[i];

					if (piece_of(st, e->hash) != st->pass.piece)
						continue;
					if (!own && braid_ref_block(e->ref) >= st->shared_pos_blocks)
						e->pos = 0;
					join_table_add(&st->table, e);
				}
			}
			braid_partlog_reset(&log);
		}
	}
	else if (s->parts.mat[p])
	{
		BraidPartScan scan;
		int			n;

		braid_partlog_scan_begin(&s->parts.logs[p], &scan);
		while ((n = braid_partlog_read(&s->parts.logs[p], &scan, (char *) st->pass.chunk,
									   JOIN_READ_CHUNK)) > 0)
		{
			CHECK_FOR_INTERRUPTS();
			for (int i = 0; i < n; i++)
				if (piece_of(st, st->pass.chunk[i].hash) == st->pass.piece)
					join_table_add(&st->table, &st->pass.chunk[i]);
		}
	}
	else
	{
		BraidVlogScan vscan;
		TupleTableSlot *slot;
		uint64		ref;

		join_row_reread_begin(s, &vscan);
		while ((slot = join_row_reread_next(st, s, &vscan, &ref)) != NULL)
		{
			uint32		hash;
			uint32		pos = 0;
			int64		key = 0;
			int			q;

			CHECK_FOR_INTERRUPTS();
			if (!join_row_hash(s, slot, &hash, s->key_refs ? &key : NULL))
				continue;
			if (s->key_refs)
				ref = (uint64) key;
			q = partition_of(st, s, hash);
			if (q == p)
			{
				if (piece_of(st, hash) == st->pass.piece)
				{
					BraidJoinEntry e;

					if (s->by_tid && !s->key_refs)
						pos = join_row_heap_pos(s);
					e.hash = hash;
					e.pos = pos;
					e.ref = ref;
					join_table_add(&st->table, &e);
				}
			}
			else if (s->parts.writing[q])
			{
				if (s->by_tid && !s->key_refs)
					pos = join_row_heap_pos(s);
				join_parts_log(s, q, hash, pos, ref);
			}
		}
		join_parts_finish_writing(st, s);
	}
	join_table_build(&st->table);
}

/*
 * join_pass_next_round
 *		Set up the next round (or piece of one): load its inner entries and
 *		start its outer rows.  False when every partition is done.
 */
bool
join_pass_next_round(BraidJoinState *st)
{
	JoinSide   *o = &st->outer;
	bool		first = st->pass.source == OUTER_FIRST_PASS;
	int			p;

	/* the pass that ended may have written partitions for lazy */
	join_parts_finish_writing(st, o);
	/* after the first pass, the outer value log is read back */
	if (first && side_has_vlog(o))
		braid_vlog_finish(&o->fetch.vlog);

	if (!first && st->pass.piece + 1 < st->pass.npieces)
		st->pass.piece++;
	else
	{
		/* the next partition that needs a round (0 if it left memory) */
		p = first && !st->parts.resident ? 0 : st->pass.round + 1;
		while (p < st->parts.k && !join_parts_round_needed(st, p))
			p++;
		if (p >= st->parts.k)
			return false;
		st->pass.round = p;
		st->pass.piece = 0;
		st->pass.npieces = (int) Min(Max(ceil((double) st->inner.parts.counts[p] *
											  JOIN_TABLE_ENTRY_BYTES / (double) st->cfg.budget),
										 1.0),
									 65536.0);
		join_parts_lazy_decide(st, p);
	}
	p = st->pass.round;
	st->instr.rounds++;
	load_round(st);

	/* the outer rows of the round */
	if (o->parts.mat[p])
	{
		st->pass.source = OUTER_LOG;
		braid_partlog_scan_begin(&o->parts.logs[p], &st->pass.scan);
		st->pass.chunk_n = st->pass.chunk_pos = 0;
	}
	else
	{
		st->pass.source = o->by_tid ? OUTER_CHILD : OUTER_VLOG;
		join_row_reread_begin(o, &st->pass.vscan);
	}
	return true;
}

/*
 * prefetch_ahead
 *		A round reading its outer entries: bring what the rows a few entries
 *		ahead will need into the cache while this one is joined (each a
 *		cache miss otherwise, the outer rows in block order, the inner ones
 *		anywhere).  Each stage needs what the one before brought in: the
 *		bucket and the outer row's line pointer, then the bucket's first
 *		entry and the outer tuple, then the inner tuple (or its line
 *		pointer, and then its tuple, when the entry does not say where it
 *		is).  Entries of the round's other pieces are skipped: they are not
 *		joined in this one.
 */
static void
prefetch_ahead(BraidJoinState *st)
{
	JoinSide   *o = &st->outer;
	const BraidJoinEntry *ahead;
	int			at = st->pass.chunk_pos;

	if (at + JOIN_PREFETCH_AHEAD < st->pass.chunk_n &&
		in_piece(st, (ahead = &st->pass.chunk[at + JOIN_PREFETCH_AHEAD])->hash))
	{
		join_table_prefetch(&st->table, ahead->hash, false);
		join_row_prefetch(o, ahead->ref, ahead->pos, false);
	}
	if (at + JOIN_PREFETCH_AHEAD / 2 < st->pass.chunk_n &&
		in_piece(st, (ahead = &st->pass.chunk[at + JOIN_PREFETCH_AHEAD / 2])->hash))
	{
		join_table_prefetch(&st->table, ahead->hash, true);
		join_row_prefetch(o, ahead->ref, ahead->pos, true);
	}
	if (st->cfg.exact_key)
		return;
	if (at + JOIN_PREFETCH_AHEAD / 4 < st->pass.chunk_n &&
		in_piece(st, st->pass.chunk[at + JOIN_PREFETCH_AHEAD / 4].hash))
		join_row_prefetch_match(&st->inner, &st->table, st->pass.chunk[at + JOIN_PREFETCH_AHEAD / 4].hash, false);
	if (at + JOIN_PREFETCH_AHEAD / 8 < st->pass.chunk_n &&
		in_piece(st, st->pass.chunk[at + JOIN_PREFETCH_AHEAD / 8].hash))
		join_row_prefetch_match(&st->inner, &st->table, st->pass.chunk[at + JOIN_PREFETCH_AHEAD / 8].hash, true);
}

/*
 * join_pass_next_outer
 *		The next outer row to probe with (set as probe->cur with its hash and
 *		first candidate); false when the current pass has no more.  The
 *		first pass also writes the other partitions' entries, and emits
 *		nothing for rows with NULL keys but sets them up as unmatched rows
 *		for LEFT and ANTI.
 */
bool
join_pass_next_outer(BraidJoinState *st, JoinProbe *probe)
{
	JoinSide   *s = &st->outer;

	for (;;)
	{
		TupleTableSlot *slot;
		uint64		ref = 0;
		uint32		hash;
		int			p;

		CHECK_FOR_INTERRUPTS();
		if (st->pass.source == OUTER_LOG)
		{
			BraidJoinEntry *e;
			uint32		first;

			if (st->pass.chunk_pos >= st->pass.chunk_n)
			{
				st->pass.chunk_n = braid_partlog_read(&s->parts.logs[st->pass.round], &st->pass.scan,
													  (char *) st->pass.chunk, JOIN_READ_CHUNK);
				st->pass.chunk_pos = 0;
				if (st->pass.chunk_n == 0)
					return false;
			}
			e = &st->pass.chunk[st->pass.chunk_pos++];

			prefetch_ahead(st);
			if (!in_piece(st, e->hash))
				continue;
			first = join_table_first_match(&st->table, e->hash);
			/* an inner or semi join needs the row only if its hash matches */
			if (first == JOIN_NO_ENTRY &&
				(st->cfg.jointype == JOIN_INNER || st->cfg.jointype == JOIN_SEMI))
				continue;
			probe->cur = join_row_fetch(st, s, e->ref, e->pos);
			/* exact keys: the row's key, compared with the inner entries' */
			if (st->cfg.exact_key && !join_row_hash(s, probe->cur, &hash, &probe->cur_key))
				elog(ERROR, "braidsort: outer row of a written partition has a NULL key");
			probe->cur_hash = e->hash;
			probe->cand = first;
			probe->matched = false;
			return true;
		}

		if (st->pass.source == OUTER_FIRST_PASS && st->ring.on)
			return join_ring_next(st, probe);
		if (st->pass.source == OUTER_FIRST_PASS)
		{
			slot = ExecProcNode(s->ps);
			if (TupIsNull(slot))
				return false;
			s->instr.rows++;
			if (!join_row_hash(s, slot, &hash, st->cfg.exact_key ? &probe->cur_key : NULL))
			{
				if (st->cfg.jointype == JOIN_LEFT || st->cfg.jointype == JOIN_ANTI)
				{
					probe->cur = slot;
					probe->cand = JOIN_NO_ENTRY;
					probe->matched = false;
					return true;
				}
				continue;
			}
			p = partition_of(st, s, hash);
			s->parts.counts[p]++;
			if (p == 0 && st->parts.resident)
			{
				probe->cur = slot;
				probe->cur_hash = hash;
				probe->cand = join_table_first_match(&st->table, hash);
				probe->matched = false;
				return true;
			}
			if (!join_parts_round_needed(st, p))
				continue;
			/* a value log keeps every row a later pass may read again */
			if (side_has_vlog(s))
				ref = join_row_vlog_ref(s, slot);
			if (s->parts.writing[p])
				join_parts_log(s, p, hash, s->by_tid ? join_row_heap_pos(s) : 0,
							   s->by_tid ? join_row_heap_ref(s) : ref);
			continue;
		}

		/* a rescan of the outer input, or a read of its value log */
		slot = join_row_reread_next(st, s, &st->pass.vscan, &ref);
		if (slot == NULL)
			return false;
		if (!join_row_hash(s, slot, &hash, st->cfg.exact_key ? &probe->cur_key : NULL))
			continue;			/* emitted by the first pass */
		p = partition_of(st, s, hash);
		if (p != st->pass.round)
		{
			if (s->parts.writing[p])
				join_parts_log(s, p, hash, s->by_tid ? join_row_heap_pos(s) : 0, ref);
			continue;
		}
		if (!in_piece(st, hash))
			continue;
		probe->cur = slot;
		probe->cur_hash = hash;
		probe->cand = join_table_first_match(&st->table, hash);
		probe->matched = false;
		return true;
	}
}

/*
 * join_pass_start
 *		The first fetch: read the inner input, then start the outer one.
 */
void
join_pass_start(BraidJoinState *st)
{
	INSTR_TIME_SET_CURRENT(st->instr.started);
	first_inner_pass(st);
	st->pass.source = OUTER_FIRST_PASS;

	/*
	 * Partition 0's outer rows of a heap scan are probed a few rows behind
	 * the scan (the ring), so that their cache misses overlap.
	 */
	join_ring_reset(st);
	st->ring.on = st->outer.by_tid && st->parts.resident && braid_join_read_ahead;
	st->pass.round = 0;
	st->pass.piece = 0;
	st->pass.npieces = 1;
}

/*
 * join_pass_setup
 *		One execution's buffer of entries read back from a log.
 */
void
join_pass_setup(BraidJoinState *st)
{
	st->pass.chunk = palloc(sizeof(BraidJoinEntry) * JOIN_READ_CHUNK);
}
