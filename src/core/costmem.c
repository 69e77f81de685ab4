/*-------------------------------------------------------------------------
 *
 * costmem.c
 *	  What a sort holds: the IndexMap's bytes and its split of the budget
 *	  with the full keys kept aside, the runs it writes and their merge
 *	  passes, a value log's rows, and what the sort puts on the spill
 *	  device at once.
 *
 * These are the sizes both the sort's time estimate (costmodel.c) and the
 * late gather's (costgather.c) start from, and the runtime sizes its
 * IndexMap, runs and fan-in by the same rules (sort/sort_map.c,
 * sort/sort_runs.c, sort/sort_merge.c).
 *
 * Pure C (no PostgreSQL calls).
 *
 * src/core/costmem.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>

#include "core/costmem.h"
#include "core/vlogrow.h"

/*
 * PostgreSQL's sort holds, per row, a SortTuple (24 bytes) and a palloc'd
 * MinimalTuple (16-byte header + the row), which the allocator rounds up to
 * a power of two and prefixes with a 16-byte chunk header.
 */
#define PG_SORTTUPLE_BYTES	24.0
#define PG_MINTUPLE_HEADER	16.0
#define PG_CHUNK_HEADER		16.0

/*
 * The overflow store's memory for a full key (sort/sort_overflow.c): its arena grows
 * by doubling (three quarters used, on average), and a key found by TID
 * (not a collated one, whose entry says where it is) takes 2 to 4 slots of
 * 20 bytes in a table kept at most half full.
 */
#define BRAID_OVF_ARENA_SLACK	(4.0 / 3.0)
#define BRAID_OVF_SLOT_BYTES	60.0

/*
 * braid_cost_split_key_memory
 *		A row's full key of full_key_bytes (0: none kept) once the budget is
 *		split between entries and keys (braid_cost_split_entries): the
 *		store's growth then stops at its share, which it fills, so its bytes
 *		and, unless collated, its slots (the table at most half full).
 */
double
braid_cost_split_key_memory(double full_key_bytes, bool collated)
{
	if (full_key_bytes <= 0)
		return 0;
	return full_key_bytes + (collated ? 0 : BRAID_OVF_SLOT_BYTES);
}

/*
 * braid_cost_full_key_memory
 *		A row's full key in the overflow store beside the IndexMap while it
 *		grows: its bytes in the arena (with the doubling's slack) and,
 *		unless collated, its slots.
 */
double
braid_cost_full_key_memory(const BraidCostInput *in)
{
	return braid_cost_split_key_memory(in->full_key_bytes * BRAID_OVF_ARENA_SLACK,
									   in->collated);
}

/*
 * braid_cost_indexmap_bytes
 *		Bytes of the IndexMap for the whole input: its entries and the full
 *		keys kept beside them.
 */
double
braid_cost_indexmap_bytes(const BraidCostInput *in)
{
	return in->rows * (in->entry_bytes + braid_cost_full_key_memory(in));
}

/* braid_cost_pg_sort_bytes: memory PostgreSQL's sort would need in memory. */
double
braid_cost_pg_sort_bytes(const BraidCostInput *in)
{
	double		width = in->sort_width < 8 ? 8 : in->sort_width;
	double		chunk = 8;

	while (chunk < PG_MINTUPLE_HEADER + width)
		chunk *= 2;
	return in->rows * (PG_SORTTUPLE_BYTES + chunk + PG_CHUNK_HEADER);
}

/* braid_cost_is_onepass: does the IndexMap fit the budget (by TID)? */
bool
braid_cost_is_onepass(const BraidCostInput *in)
{
	return braid_cost_indexmap_bytes(in) <= in->budget_bytes;
}

/*
 * braid_cost_map_budget
 *		The IndexMap's share of the budget: all of it gathering by TID; half
 *		with a value log, which keeps rows in the other half until it spills
 *		(sort/sort_map.c braid_map_grow).
 */
double
braid_cost_map_budget(const BraidCostInput *in, BraidGatherFrom from)
{
	return from == BRAID_FROM_VALUE_LOG ? in->budget_bytes / 2 : in->budget_bytes;
}

/* braid_cost_spills: will the IndexMap spill runs, gathering from "from"? */
bool
braid_cost_spills(const BraidCostInput *in, BraidGatherFrom from)
{
	return braid_cost_indexmap_bytes(in) > braid_cost_map_budget(in, from);
}

/*
 * braid_cost_spills_rows
 *		braid_cost_spills for "rows" rows of in's shape (a shared sort's
 *		leader, which takes every process's entries).
 */
bool
braid_cost_spills_rows(const BraidCostInput *in, BraidGatherFrom from, double rows)
{
	BraidCostInput all = *in;

	all.rows = rows;
	return braid_cost_spills(&all, from);
}

/* vlog_row_bytes: a row's bytes in the value log's memory. */
double
braid_cost_vlog_row_bytes(const BraidCostInput *in)
{
	return in->row_bytes > 0 ? in->row_bytes : in->tuple_bytes;
}

/*
 * A row the log writes once it is on the device takes fewer bytes there
 * (vlogrow.h, packed): its first 10 bytes and its alignment (3.5 bytes on
 * average) left out, a 1- or 2-byte length put in front.
 */
#define BRAID_VLOG_PACKED_SAVING	12.0

/*
 * vlog_memory_share
 *		What a value log keeps in memory: half the budget, at most
 *		valuelog.c's limit.
 */
static double
vlog_memory_share(const BraidCostInput *in)
{
	double		in_memory = in->budget_bytes / 2;

	return in_memory > (double) BRAID_VLOG_MAX_MEMORY ? (double) BRAID_VLOG_MAX_MEMORY : in_memory;
}

/*
 * braid_cost_vlog_on_device
 *		Does a value log of the input outgrow its memory share and go to
 *		the spill device?
 */
bool
braid_cost_vlog_on_device(const BraidCostInput *in)
{
	return in->rows * braid_cost_vlog_row_bytes(in) > vlog_memory_share(in);
}

/*
 * braid_cost_vlog_device_bytes
 *		The bytes a value log on the device holds: the rows it kept in
 *		memory, written whole when it moved there (its first segment), and
 *		the others packed.  With "reserved", the space its segments reserve
 *		instead: the packed rows' segments up to the last, whole.
 */
double
braid_cost_vlog_device_bytes(const BraidCostInput *in, bool reserved)
{
	double		row = braid_cost_vlog_row_bytes(in);
	double		total = in->rows * row;
	double		in_memory = vlog_memory_share(in);
	double		packed = row - BRAID_VLOG_PACKED_SAVING;
	double		rest;

	if (in_memory > total)
		in_memory = total;
	if (packed < 1.0)
		packed = 1.0;
	rest = (total - in_memory) * packed / (row > 1.0 ? row : 1.0);
	return in_memory + (reserved ? braid_vlog_reserved_bytes(rest) : rest);
}

/*
 * braid_cost_device_bytes
 *		About how many bytes one process's sort gathering from "from" holds
 *		on the spill device at once, as a MergePass (the write-limited modes
 *		write less): its runs (each entry and full key at most its size in
 *		memory; twice, when an intermediate pass writes new runs before the
 *		old ones go), the merged refs a random-access sort writes, and a
 *		value log beyond its share of the budget (the space its segments
 *		reserve, vlogrow.h).
 */
double
braid_cost_device_bytes(const BraidCostInput *in, BraidGatherFrom from)
{
	double		bytes = 0;

	if (braid_cost_spills(in, from))
		bytes += in->rows * (in->entry_bytes + in->full_key_bytes) *
			(braid_cost_merge_passes(in, from) > 1 ? 2 : 1) +
			in->rows * 8.0;		/* the merged refs (8 bytes a row), for random
								 * access */
	if (from == BRAID_FROM_VALUE_LOG && braid_cost_vlog_on_device(in))
		bytes += braid_cost_vlog_device_bytes(in, true);
	return bytes;
}

/*
 * braid_cost_shared_device_bytes
 *		What the processes of a shared sort (sort/sort_shared.c), each
 *		sorting "in", leave on the spill device until the query ends,
 *		sorting "from": each one's entries written as runs whether they
 *		outgrow the budget or not (twice where the merging process's merge
 *		of all of their runs takes an intermediate pass, which writes new
 *		runs before the old ones go), and, from a value log, all of its log,
 *		moved to the device however small.
 */
double
braid_cost_shared_device_bytes(const BraidCostInput *in, BraidGatherFrom from, int processes)
{
	BraidCostInput all = *in;
	double		bytes;

	all.rows = in->rows * processes;
	bytes = in->rows * (in->entry_bytes + in->full_key_bytes) *
		(braid_cost_merge_passes(&all, from) > 1 ? 2 : 1) + in->rows * 8.0;
	if (from == BRAID_FROM_VALUE_LOG)
		bytes += braid_cost_vlog_device_bytes(in, true);
	return bytes * processes;
}

/*
 * braid_cost_merge_readers
 *		How many run readers a quarter of a budget of budget_bytes holds,
 *		each its cursor and a key buffer of up to twice key_bytes; at least
 *		2, at most BRAID_MAX_FANIN.
 */
int
braid_cost_merge_readers(double budget_bytes, double key_bytes)
{
	double		readers = budget_bytes / 4 /
		(BRAID_MERGE_READER_BYTES + 2 * (key_bytes > 0 ? key_bytes : 0));

	if (readers < 2)
		return 2;
	if (readers > BRAID_MAX_FANIN)
		return BRAID_MAX_FANIN;
	return (int) readers;
}

/*
 * braid_cost_merge_fanin
 *		How many runs one merge takes at once within a budget of
 *		budget_bytes (sort_merge.c) when its longest key (or, planning, its
 *		keys) takes key_bytes: BRAID_MERGE_RUN_BYTES each, and with long
 *		keys no more readers than a quarter of the budget holds (each its
 *		cursor and a key buffer of up to twice the key); at least 2, at
 *		most BRAID_MAX_FANIN.
 */
int
braid_cost_merge_fanin(double budget_bytes, double key_bytes)
{
	double		fanin = budget_bytes / BRAID_MERGE_RUN_BYTES;
	double		readers = braid_cost_merge_readers(budget_bytes, key_bytes);

	if (readers < fanin)
		fanin = readers;

	if (fanin < 2)
		return 2;
	if (fanin > BRAID_MAX_FANIN)
		return BRAID_MAX_FANIN;
	return (int) fanin;
}

/*
 * The keys' room once the budget is split: their expected memory (the
 * average so far, for a room's worth of entries) this many times over,
 * which covers the store's growth by doubling and keys a little longer
 * than the average ...
 */
#define BRAID_SPLIT_KEY_MARGIN		4.0
/*
 * ... but no less than this share of the room, nor than the store's first
 * arena (4 kB) and slots (64) with room to grow once ...
 */
#define BRAID_SPLIT_KEY_LEAST		(1.0 / 64.0)
#define BRAID_SPLIT_KEY_LEAST_BYTES	8192.0
/* ... and no more than these, with the average trusted or not */
#define BRAID_SPLIT_KEY_MOST_TRUSTED	(1.0 / 8.0)
#define BRAID_SPLIT_KEY_MOST_UNTRUSTED	0.5

/*
 * braid_cost_split_entries
 *		Once full keys kept aside would take the entries and the keys past
 *		"room" bytes: how many entries of "stride" bytes to keep to, the
 *		keys (key_memory bytes an entry, on average) having the rest.  As
 *		many as room holds with their keys, less the keys' room: their
 *		expected memory with a margin, at least 1/64 of room and 8 kB
 *		(the store's smallest, growing once), at most half
 *		of it until the average is "trusted" (taken over a room's worth of
 *		entries at least: a few odd keys could mislead it) and an eighth
 *		after; until then, at least a quarter of room in entries; at least
 *		2.  Rare long keys (a random 10-byte bytea key with four zero
 *		bytes, which its encoding escapes) so cost the entries 1/64 of room, not
 *		an eighth or half of it: hybrid's last budget-full, which they
 *		share, stays in memory.  The runtime's (sort/sort_runs.c
 *		braid_runs_put, sort/sort_select.c make_candidate_room) and the
 *		model's.
 */
double
braid_cost_split_entries(double key_memory, double room, double stride, bool trusted)
{
	double		keys = key_memory > 0 ? key_memory : 0;
	double		reserve = keys * BRAID_SPLIT_KEY_MARGIN * (room / stride);
	double		reserve_most = room * (trusted ? BRAID_SPLIT_KEY_MOST_TRUSTED :
									   BRAID_SPLIT_KEY_MOST_UNTRUSTED);
	double		most;
	double		least = trusted ? 2 : floor(room / 4 / stride);
	double		entries = floor(room / (stride + keys));

	if (reserve < room * BRAID_SPLIT_KEY_LEAST)
		reserve = room * BRAID_SPLIT_KEY_LEAST;
	if (reserve < BRAID_SPLIT_KEY_LEAST_BYTES)
		reserve = BRAID_SPLIT_KEY_LEAST_BYTES;
	if (reserve > reserve_most)
		reserve = reserve_most;
	most = floor((room - reserve) / stride);
	if (entries > most)
		entries = most;
	if (entries < least)
		entries = least;
	return entries < 2 ? 2 : entries;
}

/*
 * braid_cost_split_rows
 *		How many rows "room" bytes hold: all entries without full keys kept
 *		aside, else split between entries and keys
 *		(braid_cost_split_entries), the entries' share or fewer if their
 *		keys fill the rest first.
 */
double
braid_cost_split_rows(double key_memory, double room, double stride, bool trusted)
{
	double		entries;
	double		by_keys;

	if (key_memory <= 0)
		return floor(room / stride) < 1 ? 1 : floor(room / stride);
	entries = braid_cost_split_entries(key_memory, room, stride, trusted);
	by_keys = floor((room - entries * stride) / key_memory);
	return by_keys < entries ? (by_keys < 1 ? 1 : by_keys) : entries;
}

/*
 * braid_cost_budget_rows
 *		How many of an input's "rows" rows "room" bytes hold at once, each
 *		an entry of "stride" bytes and key_memory bytes of full key kept
 *		aside (braid_cost_split_key_memory): all that fit before the key
 *		store (growing by doubling) would pass the room, if the input does;
 *		else those of a split budget (braid_cost_split_rows), the fewer of
 *		a trusted and an untrusted split.  Hybrid's last budget-full and
 *		the write-limited model's.
 */
double
braid_cost_budget_rows(double rows, double key_memory, double room, double stride)
{
	double		unsplit;
	double		trusted;
	double		untrusted;

	if (key_memory <= 0)
		return braid_cost_split_rows(0, room, stride, true);
	unsplit = floor(room / (stride + key_memory * BRAID_OVF_ARENA_SLACK));
	if (rows <= unsplit)
		return unsplit < 1 ? 1 : unsplit;
	trusted = braid_cost_split_rows(key_memory, room, stride, true);
	untrusted = braid_cost_split_rows(key_memory, room, stride, false);
	return trusted < untrusted ? trusted : untrusted;
}

/*
 * braid_cost_runs_written
 *		How many runs a spilled sort writes: the IndexMap's share of the
 *		budget each, which, once full keys have filled it, is split between
 *		entries and full keys (braid_cost_split_entries), a run ending when
 *		either share is full.
 */
double
braid_cost_runs_written(const BraidCostInput *in, BraidGatherFrom from)
{
	double		keys = braid_cost_split_key_memory(in->full_key_bytes, in->collated);

	if (keys > 0)
		return in->rows / braid_cost_split_rows(keys, braid_cost_map_budget(in, from), in->entry_bytes,
												true);
	return braid_cost_indexmap_bytes(in) / braid_cost_map_budget(in, from);
}

/*
 * braid_cost_merge_passes
 *		How many times a spilled sort's runs are read (the last merge
 *		included) and all but the last time written again: runs_written,
 *		merged braid_cost_merge_fanin at a time.  1 for a sort that does
 *		not spill.
 */
double
braid_cost_merge_passes(const BraidCostInput *in, BraidGatherFrom from)
{
	double		runs = braid_cost_runs_written(in, from);
	double		fanin = braid_cost_merge_fanin(in->budget_bytes, in->full_key_bytes);
	double		passes = 1;

	/* (counted, not logarithms: exact at powers of the fan-in) */
	for (double reach = fanin; reach < runs && passes < 64; reach *= fanin)
		passes++;
	return passes;
}
