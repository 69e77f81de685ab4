/*-------------------------------------------------------------------------
 *
 * sort_overflow.c
 *	  The overflow store: the full keys of IndexMap entries whose prefix is
 *	  not the whole key.
 *
 * An entry holds a fixed-width prefix of its normalized key.  A key longer
 * than the prefix keeps its full encoding here, keyed by the entry's TID
 * (braid_ovf_put), and its ref carries the "key truncated" flag
 * (core/refs.h): two entries with equal prefixes are then ordered by their
 * full keys, and a run written to the device stores the full key.  A
 * collated key (compared by its collation, not by memcmp) is always kept
 * here, appended (braid_ovf_append), and its entry records where, so that
 * comparisons need no lookup.  The IndexMap (sort_map.c) sizes the store
 * within the budget it shares with the entries: braid_ovf_bytes_after says
 * what a key would take before it is kept.
 *
 * The lookups (braid_ovf_get, braid_ovf_at) run on sort threads as well:
 * pure reads, no PostgreSQL calls.
 *
 * src/sort/sort_overflow.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "sort/sort_overflow.h"

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
 * braid_ovf_get
 *		The full key of a truncated entry, kept by braid_ovf_put, or NULL.
 *		Runs on sort threads: a pure lookup.
 */
const uint8 *
braid_ovf_get(const BraidOverflow *ovf, uint64 ref, uint32 *len)
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
 * braid_ovf_at
 *		The full key kept by braid_ovf_append at "loc" (what it returned).
 *		Runs on sort threads: a pure lookup.
 */
const uint8 *
braid_ovf_at(const BraidOverflow *ovf, uint64 loc, uint32 *len)
{
	if ((loc & 0xFFFFFF) == 0xFFFFFF)
	{
		uint64		len64;

		memcpy(&len64, ovf->arena + (loc >> 24), sizeof(len64));
		*len = (uint32) len64;
		return ovf->arena + (loc >> 24) + sizeof(len64);
	}
	*len = (uint32) (loc & 0xFFFFFF);
	return ovf->arena + (loc >> 24);
}
