/*-------------------------------------------------------------------------
 *
 * sort_map.c
 *	  The IndexMap of a sort in memory: its entries, the full keys kept
 *	  aside, the budget they share, and the sort in place.
 *
 * An entry is <key prefix, ref>, cfg.stride bytes.  A key longer than the
 * prefix, or any key with a collated column, keeps its full encoding in
 * the overflow store (sort_overflow.c), and its ref carries the "key
 * truncated" flag: two entries with equal prefixes are then ordered by
 * their full keys (braid_map_tiebreak), and a run stores the full key
 * (braid_map_entry_key_of).  Under a libc collation the prefixes are first
 * rewritten with each string's rank among its key's distinct strings
 * (core/collrank.c), so that the radix sort orders them.
 *
 * This module is the IndexMap's one home: every stage that fills, sorts,
 * empties or lends it (BUILD's strategies, RUNS and its pipe, the selection
 * passes, the GATHER that takes its refs) calls the functions below, which
 * keep the entries and their full keys within the budget they share:
 *
 *	- the entries grow by doubling within braid_map_budget(), all of the
 *	  budget or half of it beside a value log (braid_map_grow);
 *	- the full keys take what the entries leave, until keeping one would
 *	  push the total over the budget: from then on the entries keep to a
 *	  share sized from the average full key seen so far in the sort, or
 *	  over its last entries where that is higher (braid_map_split_budget,
 *	  braid_map_split_entries), their keys to the rest (the store's limit,
 *	  braid_map_split_limit);
 *	- EXPLAIN's IndexMap Memory is their peak (braid_map_note_peak).
 *
 * The tie-break, the full keys' lookups and the run writer's key_of run on
 * sort threads as well: pure lookups, no PostgreSQL calls.
 *
 * src/sort/sort_map.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "core/collmemo.h"
#include "core/collrank.h"
#include "core/costmodel.h"
#include "core/pool.h"
#include "plan/keys.h"
#include "sort/sort_state.h"

/*
 * The recent average of the split (braid_map_split_entries): over about
 * the last window's entries (the counts halve as they pass it), trusted
 * from this many on.
 */
#define BRAID_SPLIT_RECENT_WINDOW	65536.0
#define BRAID_SPLIT_RECENT_LEAST	1024.0

/*
 * braid_map_reset
 *		An empty IndexMap, its memory gone with the sort's context: when the
 *		node's path is set up, and when a rescan sorts again.
 */
void
braid_map_reset(BraidSortState *st)
{
	BraidIndexMap *m = &st->path->map;

	m->entries = NULL;
	m->nentries = 0;
	m->capacity = 0;
	m->any_truncated = false;
	m->longest_key = 0;
	m->keys_split = false;
	m->split_cap = 0;
	m->entries_seen = 0;
	m->key_memory_seen = 0;
	m->recent_seen = 0;
	m->recent_key_memory = 0;
	braid_ovf_init(&m->ovf, st->sortcxt);
}

/*
 * braid_map_budget
 *		The IndexMap's share of the budget, its entries' and their full
 *		keys': all of it, or half beside a value log (which keeps its rows
 *		in the other half until it spills).
 */
size_t
braid_map_budget(const BraidSortState *st)
{
	return st->cfg.value_log ? st->cfg.budget / 2 : st->cfg.budget;
}

/*
 * braid_map_note_peak
 *		EXPLAIN's IndexMap Memory: the entries' room and the full keys kept
 *		aside, at their largest.
 */
void
braid_map_note_peak(BraidSortState *st)
{
	st->instr.peak_map_bytes = Max(st->instr.peak_map_bytes,
								   st->path->map.capacity * st->cfg.stride +
								   braid_ovf_bytes(&st->path->map.ovf));
}

/*
 * braid_map_note_key
 *		Count an entry made or offered, its full key of len bytes kept
 *		aside or not ("aside"), in the averages braid_map_split_entries uses.
 */
void
braid_map_note_key(BraidSortState *st, size_t len, bool aside)
{
	BraidIndexMap *m = &st->path->map;
	double		memory = aside ? braid_cost_split_key_memory((double) len, st->cfg.collated) : 0;

	m->entries_seen += 1;
	m->key_memory_seen += memory;
	if (m->recent_seen >= BRAID_SPLIT_RECENT_WINDOW)
	{
		m->recent_seen /= 2;
		m->recent_key_memory /= 2;
	}
	m->recent_seen += 1;
	m->recent_key_memory += memory;
}

/*
 * braid_map_split_entries
 *		How many entries to keep to once the full keys kept aside share
 *		"room" bytes with them (braid_cost_split_entries): from the
 *		average memory of the full keys of every entry made or offered so
 *		far in this sort, not of those held now (after a run or a pass
 *		there are none, or one), trusted once a room's worth of entries
 *		was seen; or from that of the last entries, where it is higher:
 *		long keys coming after many short ones (rows loaded later) move the
 *		whole sort's average too slowly, and the keys' room it sizes (as
 *		little as 1/64 of room for rare long keys) would end many runs
 *		early.
 */
size_t
braid_map_split_entries(const BraidSortState *st, size_t room)
{
	const BraidIndexMap *m = &st->path->map;
	double		key_memory = m->entries_seen > 0 ? m->key_memory_seen / m->entries_seen : 0;
	bool		trusted = m->entries_seen >= (double) (room / st->cfg.stride);

	if (m->recent_seen >= BRAID_SPLIT_RECENT_LEAST)
		key_memory = Max(key_memory, m->recent_key_memory / m->recent_seen);

	return (size_t) braid_cost_split_entries(key_memory, (double) room,
											 (double) st->cfg.stride, trusted);
}

/*
 * braid_map_split_limit
 *		The key store's limit once the budget is split: what the entries'
 *		room leaves (no more than split_cap of them).  Again whenever that
 *		room changes: grown, or whole again after a pipe's halves.
 */
static void
braid_map_split_limit(BraidSortState *st)
{
	st->path->map.ovf.limit = braid_map_budget(st) -
		Min(st->path->map.capacity, st->path->map.split_cap) * st->cfg.stride;
}

/*
 * braid_map_split_budget
 *		The entries' share of the IndexMap's budget, now that full keys kept
 *		aside share it: at most split_cap (braid_map_split_entries), and no
 *		more than the entries already have room for (sized from the row
 *		estimate, or grown) while the keys can take the rest, which is the
 *		key store's limit.  At a run's start, with no entry held (and the
 *		IndexMap whole, not in a pipe's halves), the room grows to a larger
 *		split_cap (the first split, from few keys, may have been smaller)
 *		while more rows than it holds are expected ("left": rows still
 *		expected; "whole": the IndexMap is not in a pipe's halves).
 */
void
braid_map_split_budget(BraidSortState *st, double left, bool whole)
{
	st->path->map.keys_split = true;
	st->path->map.split_cap = braid_map_split_entries(st, braid_map_budget(st));
	if (st->path->map.nentries == 0 && st->path->map.entries != NULL && whole &&
		st->path->map.split_cap > st->path->map.capacity && left * 1.05 > (double) st->path->map.capacity)
		braid_map_resize(st, Max((size_t) Min((double) st->path->map.split_cap,
											  Max(left * 1.05, 1.0)),
								 st->path->map.capacity));
	braid_map_split_limit(st);
}

/*
 * braid_map_key_bytes_after
 *		The full keys' memory once a key of len bytes is kept aside, as the
 *		overflow store grows (by doubling): checked before it is kept.
 */
size_t
braid_map_key_bytes_after(const BraidSortState *st, size_t len)
{
	return braid_ovf_bytes_after(&st->path->map.ovf, len, !st->cfg.collated);
}

/*
 * braid_map_set_key_limit
 *		The bytes the full keys kept aside keep to (0: no limit), where a
 *		selection pass sizes its own room instead of the build's budget.
 */
void
braid_map_set_key_limit(BraidSortState *st, size_t limit)
{
	st->path->map.ovf.limit = limit;
}

/*
 * braid_map_grow
 *		Make room for more entries within the budget; false if none left.
 */
bool
braid_map_grow(BraidSortState *st)
{
	size_t		newcap;

	if (st->path->map.capacity == 0)
		newcap = (size_t) Max(Min(st->cfg.est_rows * 1.05, 1e12), 1024.0);
	else
		newcap = st->path->map.capacity * 2;
	return braid_map_reserve(st, newcap);
}

/*
 * braid_map_reserve
 *		Room for "want" entries in all, or as many as the budget leaves;
 *		false if that is no more than the IndexMap has.  (braid_map_grow
 *		doubles it; a shared sort's emitter makes room at once for the
 *		entries the other processes hand it, sort_shared.c.)
 */
bool
braid_map_reserve(BraidSortState *st, size_t want)
{
	size_t		used = braid_ovf_bytes(&st->path->map.ovf);
	size_t		map = braid_map_budget(st);
	size_t		room = map > used ? map - used : 0;
	size_t		limit;
	size_t		newcap;

	/*
	 * Within the IndexMap's budget (braid_map_budget), full encodings of long
	 * keys take what the entries leave; once they would push the total over
	 * it, the build splits it from then on (split_cap entries at most, the
	 * keys the rest).
	 */
	limit = room / st->cfg.stride;
	if (st->path->map.keys_split)
		limit = Min(limit, st->path->map.split_cap);

	newcap = Min(want, limit);
	if (newcap <= st->path->map.capacity)
		return false;

	if (st->path->map.entries == NULL)
	{
		st->path->map.entries = MemoryContextAllocHuge(st->sortcxt, newcap * st->cfg.stride);

		/*
		 * A helper faults the fresh pages in ahead of the scan, which then
		 * finds them mapped instead of taking a page fault every 4 kB.
		 */
		braid_prefault_start(st->path->map.entries, newcap * st->cfg.stride, st->cfg.threads);
	}
	else
		st->path->map.entries = repalloc_huge(st->path->map.entries, newcap * st->cfg.stride);
	st->path->map.capacity = newcap;
	if (st->path->map.keys_split)
		braid_map_split_limit(st);
	return true;
}

/*
 * braid_map_resize
 *		Give the IndexMap room for "cap" entries, keeping those it holds
 *		(no more than cap).
 */
void
braid_map_resize(BraidSortState *st, size_t cap)
{
	Assert(st->path->map.nentries <= cap);
	/* a helper may still be faulting the entries' pages in */
	braid_prefault_end();
	st->path->map.capacity = cap;
	st->path->map.entries = repalloc_huge(st->path->map.entries, cap * st->cfg.stride);
}

/*
 * braid_map_alloc
 *		A fresh IndexMap of "cap" entries, empty (a selection pass's
 *		candidates): what it held goes.
 */
void
braid_map_alloc(BraidSortState *st, size_t cap)
{
	BraidIndexMap *m = &st->path->map;

	if (m->entries != NULL)
		pfree(m->entries);
	m->entries = MemoryContextAllocHuge(st->sortcxt, cap * st->cfg.stride);
	m->capacity = cap;
	m->nentries = 0;
	/* EXPLAIN's IndexMap Memory: the candidates' room is the IndexMap */
	st->instr.peak_map_bytes = Max(st->instr.peak_map_bytes, cap * st->cfg.stride);
}

/*
 * braid_map_place
 *		Put one entry <key prefix, ref> at the end of the IndexMap, which has
 *		room for it, keeping the full key aside when the prefix is not all
 *		of it; returns the entry.  "sortable" is the key's memcmp-ordered
 *		head (BraidKeyBuffer.sortable), used with a collated key.
 */
uint8 *
braid_map_place(BraidSortState *st, const uint8 *key, size_t len,
				size_t sortable, uint64 ref)
{
	uint8	   *entry = st->path->map.entries + st->path->map.nentries * st->cfg.stride;

	Assert(st->path->map.nentries < st->path->map.capacity);
	if (len > st->path->map.longest_key)
		st->path->map.longest_key = (uint32) len;
	if (st->cfg.collated)
	{
		/*
		 * Only the memcmp-ordered part goes in the prefix (equal parts tie,
		 * and the tie-break compares strings); the full key is kept aside.
		 */
		size_t		head = Min(sortable, (size_t) st->cfg.radix_keylen);
		uint64		loc = braid_ovf_append(&st->path->map.ovf, key, len);

		memcpy(entry, key + BRAID_COLLATED_HEADER, head);
		memset(entry + head, 0, st->cfg.radix_keylen - head);
		/* the full key's place, read by every comparison (no lookup) */
		memcpy(entry + st->cfg.radix_keylen, &loc, sizeof(loc));
		ref |= BRAID_REF_TRUNCATED;
		st->path->map.any_truncated = true;
	}
	else if (len <= st->cfg.keylen)
	{
		memcpy(entry, key, len);
		memset(entry + len, 0, st->cfg.keylen - len);
	}
	else
	{
		memcpy(entry, key, st->cfg.keylen);
		ref |= BRAID_REF_TRUNCATED;
		st->path->map.any_truncated = true;
		braid_ovf_put(&st->path->map.ovf, ref, key, len);
	}
	braid_entry_set_ref(entry, st->cfg.keylen, ref);
	st->path->map.nentries++;
	return entry;
}

/*
 * entry_full_key
 *		An entry's key as a byte string that orders correctly against any
 *		other: the full key if truncated, else the zero-padded prefix (safe
 *		because encodings are prefix-free).
 */
static const uint8 *
entry_full_key(const BraidSortState *st, const uint8 *entry, uint32 *len)
{
	uint64		ref = braid_entry_ref(entry, st->cfg.keylen);

	if (st->cfg.collated)
	{
		uint64		loc;

		memcpy(&loc, entry + st->cfg.radix_keylen, sizeof(loc));
		return braid_ovf_at(&st->path->map.ovf, loc, len);
	}
	if (ref & BRAID_REF_TRUNCATED)
	{
		const uint8 *full = braid_ovf_get(&st->path->map.ovf, ref, len);

		if (full != NULL)
			return full;
	}
	*len = st->cfg.keylen;
	return entry;
}

/*
 * braid_map_full_key
 *		An IndexMap entry's full key (see entry_full_key): what a selection
 *		pass compares and copies.
 */
const uint8 *
braid_map_full_key(const BraidSortState *st, const uint8 *entry, uint32 *len)
{
	return entry_full_key(st, entry, len);
}

/*
 * braid_map_tiebreak
 *		IndexMap tie-break for entries with equal prefixes: compare full
 *		keys, memcmp then length.  Pure lookups, no PostgreSQL calls on the
 *		success path.
 */
int
braid_map_tiebreak(const uint8 *a, const uint8 *b, void *arg)
{
	const BraidSortState *st = (const BraidSortState *) arg;
	uint32		la,
				lb;
	const uint8 *ka,
			   *kb;
	int			c;

	if (((braid_entry_ref(a, st->cfg.keylen) | braid_entry_ref(b, st->cfg.keylen)) &
		 BRAID_REF_TRUNCATED) == 0)
		return 0;
	ka = entry_full_key(st, a, &la);
	kb = entry_full_key(st, b, &lb);
	if (st->cfg.collated)
		return braid_compare_collated(ka, la, kb, lb, st->cfg.keys, st->cfg.nkeys, NULL);
	c = memcmp(ka, kb, Min(la, lb));
	if (c == 0)
		c = (la > lb) - (la < lb);
	return c;
}

/* rank_key_of: an entry's full key, for collrank.c. */
static const uint8 *
rank_key_of(const uint8 *entry, uint32 *len, void *arg)
{
	return entry_full_key((const BraidSortState *) arg, entry, len);
}

/* rank_interrupts: collrank.c's hook for query cancel. */
static void
rank_interrupts(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/* rank_alloc, rank_free: collrank.c's memory, in the sort's context. */
static void *
rank_alloc(size_t size, void *arg)
{
	return MemoryContextAllocExtended((MemoryContext) arg, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
rank_free(void *ptr, void *arg)
{
	pfree(ptr);
}

/*
 * rank_prefixes
 *		Before the IndexMap of a sort with keys under a libc collation is
 *		sorted: rewrite the prefixes with each string's rank among the
 *		distinct strings of its key (collrank.c), so that the radix sort
 *		orders them and strcoll_l() runs once per pair of distinct strings
 *		sorted, not per pair of entries.  The dictionaries take at most
 *		1/BRAID_RANK_MEMORY_SHARE of the budget, for the moment of the
 *		sort; keys with more distinct strings stay compared by the
 *		tie-break.  The rewritten prefixes order only within this sort:
 *		callers that compare prefixes with others later (the selection
 *		passes) do not rank.  True if equal prefixes are now equal keys:
 *		the sort needs no tie-break.
 */
static bool
rank_prefixes(BraidSortState *st)
{
	BraidRankKey keys[BRAID_RANK_MAX_KEYS];
	BraidRankSpec spec;
	BraidRankResult result;
	int			nkeys = 0;

	StaticAssertStmt(BRAID_RANK_LAYOUT_LENGTH == BRAID_COLLATED_LENGTH,
					 "collrank.c reads the layout of keys.c");
	if (!st->cfg.collated || !st->cfg.rank_collated ||
		st->path->map.nentries < BRAID_RANK_MIN_ENTRIES)
		return false;
	for (int i = 0; i < st->cfg.nkeys; i++)
	{
		if (!BRAID_KEY_IS_COLLATED(st->cfg.keys[i].kind))
			continue;
		if (nkeys == BRAID_RANK_MAX_KEYS)
			return false;
		keys[nkeys].locale = (locale_t) st->cfg.keys[i].locale;
		keys[nkeys].descending = st->cfg.keys[i].descending;
		nkeys++;
	}
	spec.prefix_len = st->cfg.radix_keylen;
	spec.stride = st->cfg.stride;
	spec.nkeys = nkeys;
	spec.keys = keys;
	spec.memory_cap = st->cfg.budget / BRAID_RANK_MEMORY_SHARE;
	spec.threads = st->cfg.threads;
	spec.key_of = rank_key_of;
	spec.key_arg = st;
	spec.alloc = rank_alloc;
	spec.free = rank_free;
	spec.alloc_arg = st->sortcxt;
	spec.xfrm = NULL;
	spec.interrupt_check = rank_interrupts;
	spec.interrupt_arg = NULL;
	braid_rank_prefixes(st->path->map.entries, st->path->map.nentries, &spec, &result);

	st->instr.rank_tried = true;
	st->instr.ranked_keys = Max(st->instr.ranked_keys, result.keys_ranked);
	st->instr.peak_rank_bytes = Max(st->instr.peak_rank_bytes, result.peak_bytes);
	return result.exact;
}

/*
 * braid_map_collated_compare
 *		The merge order of full keys with collated columns: a
 *		BraidKeyCompare, whose memo (a BraidCollMemo a node, or NULL) keeps
 *		the node's last two strings ordered by the collation.
 */
int
braid_map_collated_compare(const uint8 *a, uint32 la, const uint8 *b, uint32 lb,
						   void *arg, void *memo)
{
	const BraidSortState *st = (const BraidSortState *) arg;

	return braid_compare_collated(a, la, b, lb, st->cfg.keys, st->cfg.nkeys,
								  (BraidCollMemo *) memo);
}

/*
 * braid_map_entry_key_of
 *		Full key and ref of an IndexMap entry, for the run writer.
 */
const uint8 *
braid_map_entry_key_of(const uint8 *entry, uint32 *len, uint64 *ref, void *arg)
{
	BraidSortState *st = (BraidSortState *) arg;
	const uint8 *key = entry_full_key(st, entry, len);

	*ref = braid_entry_ref(entry, st->cfg.keylen) & ~BRAID_REF_TRUNCATED;

	/*
	 * Runs store keys without trailing zero bytes (prefix padding and
	 * terminators).  For encodings that are prefix-free up to zero padding
	 * this keeps memcmp-then-length order: where two keys first differ, at
	 * most one of them can have run out into stripped zeros, and that one is
	 * the smaller either way.
	 */
	if (!st->cfg.collated)		/* (collated keys are parsed, not compared) */
		while (*len > 0 && key[*len - 1] == 0)
			(*len)--;
	return key;
}

/* check_interrupts: the radix sort's hook for query cancel. */
static void
check_interrupts(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * braid_map_sort
 *		Sort the IndexMap in place; with "rank", collated keys by their
 *		ranks first (rank_prefixes), when nothing compares the
 *		prefixes with others' after the sort: entries whose ranked prefixes
 *		hold their whole keys need no tie-break.
 */
void
braid_map_sort(BraidSortState *st, bool rank)
{
	BraidSortSpec spec;
	bool		exact = rank && rank_prefixes(st);

	spec.keylen = st->cfg.radix_keylen;
	spec.stride = st->cfg.stride;
	spec.tiebreak = st->path->map.any_truncated && !exact ? braid_map_tiebreak : NULL;
	spec.tiebreak_arg = st;
	spec.interrupt_check = check_interrupts;
	spec.interrupt_arg = NULL;
	braid_indexmap_sort_parallel(st->path->map.entries, st->path->map.nentries, &spec, st->cfg.threads);
	st->instr.sort_threads = st->cfg.threads;
}

/*
 * braid_map_clear
 *		Empty the IndexMap for the next run or pass: its memory stays, its
 *		full keys go (written to a run, or dropped).
 */
void
braid_map_clear(BraidSortState *st)
{
	st->path->map.nentries = 0;
	st->path->map.any_truncated = false;
	braid_ovf_free(&st->path->map.ovf);
}

/*
 * braid_map_keep_first
 *		Keep only the first n candidates (sorted), with a fresh overflow
 *		store holding just their full keys (what the dropped ones and the
 *		rejected candidates left there goes).
 */
void
braid_map_keep_first(BraidSortState *st, size_t n)
{
	BraidOverflow fresh;
	uint8	   *e = st->path->map.entries;
	uint32		stride = st->cfg.stride;
	bool		any = false;

	st->path->map.nentries = n;
	if (!st->path->map.any_truncated)
		return;
	braid_ovf_init(&fresh, st->sortcxt);
	fresh.limit = st->path->map.ovf.limit;
	for (size_t i = 0; i < n; i++)
	{
		uint8	   *entry = e + i * stride;
		uint64		ref = braid_entry_ref(entry, st->cfg.keylen);
		uint32		len;
		const uint8 *full;

		if ((ref & BRAID_REF_TRUNCATED) == 0)
			continue;
		/* from the old store, which the entry still points into */
		full = braid_map_full_key(st, entry, &len);
		if (st->cfg.collated)
		{
			uint64		loc = braid_ovf_append(&fresh, full, len);

			memcpy(entry + st->cfg.radix_keylen, &loc, sizeof(loc));
		}
		else
			braid_ovf_put(&fresh, ref, full, len);
		any = true;
	}
	braid_ovf_free(&st->path->map.ovf);
	st->path->map.ovf = fresh;
	st->path->map.any_truncated = any;
}

/*
 * braid_map_free
 *		The IndexMap's memory goes (its entries are coded elsewhere, or the
 *		gather no longer needs them); the key store's limit stays.
 */
void
braid_map_free(BraidSortState *st)
{
	BraidIndexMap *m = &st->path->map;

	braid_map_clear(st);
	if (m->entries)
		pfree(m->entries);
	m->entries = NULL;
	m->capacity = 0;
}

/*
 * braid_map_halve
 *		The pipe begins (sort_runs.c): the build fills the IndexMap half at
 *		a time from now on.  Returns its allocation and, in *full, its whole
 *		capacity, for braid_map_next_half and braid_map_whole.
 */
uint8 *
braid_map_halve(BraidSortState *st, size_t *full)
{
	*full = st->path->map.capacity;
	st->path->map.capacity = *full / 2;
	return st->path->map.entries;
}

/*
 * braid_map_next_half
 *		The half being filled went to a helper as a run: fill "half" now,
 *		empty (the pipe's halves hold no key kept aside).
 */
void
braid_map_next_half(BraidSortState *st, uint8 *half)
{
	st->path->map.entries = half;
	st->path->map.nentries = 0;
	st->path->map.any_truncated = false;
}

/*
 * braid_map_whole
 *		The pipe ends: the whole allocation ("base", "full" entries) again,
 *		the entries of the half being filled moved to its start.
 */
void
braid_map_whole(BraidSortState *st, uint8 *base, size_t full)
{
	BraidIndexMap *m = &st->path->map;

	if (m->entries != base)
		memmove(base, m->entries, m->nentries * st->cfg.stride);
	m->entries = base;
	m->capacity = full;
	/* the whole IndexMap again: the full keys' limit follows */
	if (m->keys_split)
		braid_map_split_limit(st);
}

/*
 * braid_map_take_refs
 *		After a OnePass sort only the refs are needed (for the gather,
 *		rewinds, backward scans and mark/restore): pack them, truncation
 *		flags cleared, at the front of the IndexMap, whose full keys go.
 *		Returns them; *block is the IndexMap's allocation in bytes, whose
 *		tail beyond the refs the gather may use as its arena.  NULL if there
 *		is no IndexMap.
 */
uint64 *
braid_map_take_refs(BraidSortState *st, size_t *block)
{
	BraidIndexMap *m = &st->path->map;
	uint64	   *refs = (uint64 *) m->entries;

	*block = m->capacity * st->cfg.stride;
	if (m->entries == NULL)
		return NULL;

	/* entry i starts at i * stride >= 8 * (i + 1) for i >= 1: no overlap */
	for (size_t i = 0; i < m->nentries; i++)
		refs[i] = braid_entry_ref(m->entries + i * st->cfg.stride, st->cfg.keylen) &
			~BRAID_REF_TRUNCATED;
	braid_ovf_free(&m->ovf);
	m->any_truncated = false;
	return refs;
}
