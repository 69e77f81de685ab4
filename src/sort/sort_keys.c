/*-------------------------------------------------------------------------
 *
 * sort_keys.c
 *	  The full keys of IndexMap entries whose prefix is not the whole key.
 *
 * An entry holds a fixed-width prefix of its normalized key.  A key longer
 * than the prefix keeps its full encoding here, in an overflow store keyed
 * by the entry's TID, and its ref carries the "key truncated" flag
 * (refs.h): two entries with equal prefixes are then ordered by their full
 * keys (braid_sort_tiebreak), and a run written to the device stores the
 * full key (braid_sort_entry_key_of).  A collated key (compared by its
 * collation, not by memcmp) is always kept here, and its entry records
 * where, so that comparisons need no lookup.
 *
 * Everything but braid_ovf_put/braid_ovf_append runs on sort threads as
 * well: pure lookups, no PostgreSQL calls on the success path.
 *
 * src/sort/sort_keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "core/collrank.h"
#include "core/costmodel.h"
#include "plan/keys.h"
#include "sort/sort_state.h"

/* tid_key: a TID as a nonzero 64-bit hash key. */
static inline uint64
tid_key(uint64 ref)
{
	return (ref >> 16) + 1;
}

/* ovf_slot: home slot of a key. */
static inline size_t
ovf_slot(const BraidOverflow *ovf, uint64 key)
{
	return (size_t) ((key * UINT64CONST(0x9E3779B97F4A7C15)) >> 16) & (ovf->nslots - 1);
}

/*
 * braid_ovf_init
 *		An empty overflow store allocating in cxt.
 */
void
braid_ovf_init(BraidOverflow *ovf, MemoryContext cxt)
{
	memset(ovf, 0, sizeof(*ovf));
	ovf->cxt = cxt;
}

/* ovf_slot_bytes: the memory of nslots slots. */
static inline size_t
ovf_slot_bytes(size_t nslots)
{
	return nslots * (sizeof(uint64) * 2 + sizeof(uint32));
}

/* braid_ovf_bytes: memory held by the overflow store. */
size_t
braid_ovf_bytes(const BraidOverflow *ovf)
{
	return ovf_slot_bytes(ovf->nslots) + ovf->arena_cap;
}

/*
 * ovf_arena_for
 *		The arena's size once need more bytes are in it, beside slots of
 *		slot_bytes: doubled, but no further than the store's limit while
 *		the bytes fit within it (the last doubling would otherwise leave up
 *		to half of the room its owner gave it unused).
 */
static size_t
ovf_arena_for(const BraidOverflow *ovf, size_t need, size_t slot_bytes)
{
	size_t		want;

	if (ovf->arena_used + need <= ovf->arena_cap)
		return ovf->arena_cap;
	want = Max(Max(ovf->arena_cap * 2, ovf->arena_used + need), (size_t) 4096);
	if (ovf->limit > slot_bytes && want > ovf->limit - slot_bytes &&
		ovf->arena_used + need <= ovf->limit - slot_bytes)
		want = ovf->limit - slot_bytes;
	return want;
}

/*
 * ovf_slots_for_one_more
 *		The slots once one more key has one: the table at most half full.
 */
static size_t
ovf_slots_for_one_more(const BraidOverflow *ovf)
{
	if ((ovf->nused + 1) * 2 <= ovf->nslots)
		return ovf->nslots;
	return Max(ovf->nslots * 2, (size_t) 64);
}

/*
 * braid_ovf_bytes_after
 *		braid_ovf_bytes once a key of len bytes is kept: by braid_ovf_put
 *		(with_slot), else by braid_ovf_append; the arena and the slots grow
 *		as those functions grow them.
 */
size_t
braid_ovf_bytes_after(const BraidOverflow *ovf, size_t len, bool with_slot)
{
	size_t		need = len + (!with_slot && len >= 0xFFFFFF ? sizeof(uint64) : 0);
	size_t		slots = ovf_slot_bytes(with_slot ? ovf_slots_for_one_more(ovf) : ovf->nslots);

	return slots + ovf_arena_for(ovf, need, slots);
}

/*
 * braid_note_entry_key
 *		Count an entry made or offered, its full key of len bytes kept
 *		aside or not ("aside"), in the averages braid_split_entries uses.
 */
void
braid_note_entry_key(BraidSortState *st, size_t len, bool aside)
{
	st->build.entries_seen += 1;
	if (aside)
		st->build.key_memory_seen += braid_cost_split_key_memory((double) len, st->cfg.collated);
}

/*
 * braid_split_entries
 *		How many entries to keep to once the full keys kept aside share
 *		"room" bytes with them (braid_cost_split_entries): from the
 *		average memory of the full keys of every entry made or offered so
 *		far in this sort, not of those held now (after a run or a pass
 *		there are none, or one), trusted once a room's worth of entries
 *		was seen.
 */
size_t
braid_split_entries(const BraidSortState *st, size_t room)
{
	double		key_memory = st->build.entries_seen > 0 ?
		st->build.key_memory_seen / st->build.entries_seen : 0;
	bool		trusted = st->build.entries_seen >= (double) (room / st->cfg.stride);

	return (size_t) braid_cost_split_entries(key_memory, (double) room,
											 (double) st->cfg.stride, trusted);
}

/* ovf_insert_slot: place key/offset/len in the table (no growth). */
static void
ovf_insert_slot(BraidOverflow *ovf, uint64 key, uint64 off, uint32 len)
{
	size_t		i = ovf_slot(ovf, key);

	while (ovf->slot_tid[i] != 0 && ovf->slot_tid[i] != key)
		i = (i + 1) & (ovf->nslots - 1);
	if (ovf->slot_tid[i] == 0)
		ovf->nused++;
	ovf->slot_tid[i] = key;
	ovf->slot_off[i] = off;
	ovf->slot_len[i] = len;
}

/*
 * ovf_reserve
 *		Room for "need" more bytes in the overflow arena, beside slots of
 *		slot_bytes.
 */
static void
ovf_reserve(BraidOverflow *ovf, size_t need, size_t slot_bytes)
{
	if (ovf->arena_used + need > ovf->arena_cap)
	{
		size_t		cap = ovf_arena_for(ovf, need, slot_bytes);

		ovf->arena = ovf->arena ? repalloc_huge(ovf->arena, cap) :
			MemoryContextAllocHuge(ovf->cxt, cap);
		ovf->arena_cap = cap;
	}
}

/*
 * braid_ovf_put
 *		Remember the full key of the entry with this ref.
 */
void
braid_ovf_put(BraidOverflow *ovf, uint64 ref, const uint8 *key, size_t len)
{
	ovf_reserve(ovf, len, ovf_slot_bytes(ovf_slots_for_one_more(ovf)));
	if ((ovf->nused + 1) * 2 > ovf->nslots)
	{
		BraidOverflow old = *ovf;
		size_t		nslots = ovf_slots_for_one_more(&old);

		ovf->nslots = nslots;
		ovf->nused = 0;
		ovf->slot_tid = MemoryContextAllocHuge(ovf->cxt, sizeof(uint64) * nslots);
		ovf->slot_off = MemoryContextAllocHuge(ovf->cxt, sizeof(uint64) * nslots);
		ovf->slot_len = MemoryContextAllocHuge(ovf->cxt, sizeof(uint32) * nslots);
		memset(ovf->slot_tid, 0, sizeof(uint64) * nslots);
		for (size_t i = 0; i < old.nslots; i++)
			if (old.slot_tid[i] != 0)
				ovf_insert_slot(ovf, old.slot_tid[i], old.slot_off[i], old.slot_len[i]);
		if (old.nslots)
		{
			pfree(old.slot_tid);
			pfree(old.slot_off);
			pfree(old.slot_len);
		}
	}
	memcpy(ovf->arena + ovf->arena_used, key, len);
	ovf_insert_slot(ovf, tid_key(ref), ovf->arena_used, (uint32) len);
	ovf->arena_used += len;
}

/*
 * braid_ovf_append
 *		Keep a full key in the overflow arena only, for an entry that
 *		records where it is (collated keys); returns that place, the
 *		offset << 24 | the length (0xFFFFFF: the length is in front).
 */
uint64
braid_ovf_append(BraidOverflow *ovf, const uint8 *key, size_t len)
{
	uint64		off;

	bool		long_key = (len >= 0xFFFFFF);
	size_t		need = len + (long_key ? sizeof(uint64) : 0);

	ovf_reserve(ovf, need, ovf_slot_bytes(ovf->nslots));
	off = ovf->arena_used;
	if (long_key)
	{
		/* 16 MB or more: the length goes in front, the place says so */
		uint64		len64 = len;

		memcpy(ovf->arena + off, &len64, sizeof(len64));
		memcpy(ovf->arena + off + sizeof(len64), key, len);
		ovf->arena_used += need;
		return off << 24 | 0xFFFFFF;
	}
	memcpy(ovf->arena + off, key, len);
	ovf->arena_used += len;
	return off << 24 | (uint64) len;
}

/*
 * braid_ovf_free
 *		Forget every full key (after they were written to a run, or once the
 *		IndexMap is sorted and only refs remain); the limit stays.
 */
void
braid_ovf_free(BraidOverflow *ovf)
{
	size_t		limit = ovf->limit;

	if (ovf->nslots)
	{
		pfree(ovf->slot_tid);
		pfree(ovf->slot_off);
		pfree(ovf->slot_len);
	}
	if (ovf->arena)
		pfree(ovf->arena);
	braid_ovf_init(ovf, ovf->cxt);
	ovf->limit = limit;
}

/*
 * ovf_get
 *		The full key of a truncated entry.
 */
static const uint8 *
ovf_get(const BraidOverflow *ovf, uint64 ref, uint32 *len)
{
	uint64		key = tid_key(ref);
	size_t		i = ovf_slot(ovf, key);

	/* runs on sort threads: no errors here (every truncated entry has one) */
	while (ovf->slot_tid[i] != key)
	{
		if (ovf->slot_tid[i] == 0)
			return NULL;
		i = (i + 1) & (ovf->nslots - 1);
	}
	*len = ovf->slot_len[i];
	return ovf->arena + ovf->slot_off[i];
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
		if ((loc & 0xFFFFFF) == 0xFFFFFF)
		{
			uint64		len64;

			memcpy(&len64, st->build.ovf.arena + (loc >> 24), sizeof(len64));
			*len = (uint32) len64;
			return st->build.ovf.arena + (loc >> 24) + sizeof(len64);
		}
		*len = (uint32) (loc & 0xFFFFFF);
		return st->build.ovf.arena + (loc >> 24);
	}
	if (ref & BRAID_REF_TRUNCATED)
	{
		const uint8 *full = ovf_get(&st->build.ovf, ref, len);

		if (full != NULL)
			return full;
	}
	*len = st->cfg.keylen;
	return entry;
}

/*
 * braid_sort_full_key
 *		An IndexMap entry's full key (see entry_full_key): what a selection
 *		pass compares and copies.
 */
const uint8 *
braid_sort_full_key(const BraidSortState *st, const uint8 *entry, uint32 *len)
{
	return entry_full_key(st, entry, len);
}

/*
 * braid_sort_tiebreak
 *		IndexMap tie-break for entries with equal prefixes: compare full
 *		keys, memcmp then length.  Pure lookups, no PostgreSQL calls on the
 *		success path.
 */
int
braid_sort_tiebreak(const uint8 *a, const uint8 *b, void *arg)
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
		return braid_compare_collated(ka, la, kb, lb, st->cfg.keys, st->cfg.nkeys);
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
 * braid_sort_rank_prefixes
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
bool
braid_sort_rank_prefixes(BraidSortState *st)
{
	BraidRankKey keys[BRAID_RANK_MAX_KEYS];
	BraidRankSpec spec;
	BraidRankResult result;
	int			nkeys = 0;

	StaticAssertStmt(BRAID_RANK_LAYOUT_LENGTH == BRAID_COLLATED_LENGTH,
					 "collrank.c reads the layout of keys.c");
	if (!st->cfg.collated || !st->cfg.rank_collated ||
		st->build.nentries < BRAID_RANK_MIN_ENTRIES)
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
	spec.interrupt_check = rank_interrupts;
	spec.interrupt_arg = NULL;
	braid_rank_prefixes(st->build.entries, st->build.nentries, &spec, &result);

	st->instr.rank_tried = true;
	st->instr.ranked_keys = Max(st->instr.ranked_keys, result.keys_ranked);
	st->instr.peak_rank_bytes = Max(st->instr.peak_rank_bytes, result.peak_bytes);
	return result.exact;
}

/*
 * braid_sort_collated_compare
 *		The merge order of full keys whose last column is collated.
 */
int
braid_sort_collated_compare(const uint8 *a, uint32 la, const uint8 *b, uint32 lb, void *arg)
{
	const BraidSortState *st = (const BraidSortState *) arg;

	return braid_compare_collated(a, la, b, lb, st->cfg.keys, st->cfg.nkeys);
}

/*
 * braid_sort_entry_key_of
 *		Full key and ref of an IndexMap entry, for the run writer.
 */
const uint8 *
braid_sort_entry_key_of(const uint8 *entry, uint32 *len, uint64 *ref, void *arg)
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
	if (!st->cfg.collated)			/* (collated keys are parsed, not compared) */
		while (*len > 0 && key[*len - 1] == 0)
			(*len)--;
	return key;
}
