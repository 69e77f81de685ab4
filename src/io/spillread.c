/*-------------------------------------------------------------------------
 *
 * spillread.c
 *	  Reading spill files: a block read under its own read grant, what a
 *	  read counts (per sort, per device, as the executor's temporary
 *	  blocks) and, on an emulated device, what it pays; and read scopes,
 *	  under which threads copy rows out of mappings.
 *
 * Reads go straight to a file's mapping (device.c maps it; the device is
 * byte-addressable).  A grant covers the device access only: a block read
 * (braid_spill_note_read, braid_spill_read_copy) loads or copies its lines
 * under a grant taken for just that block, and the caller decodes them
 * afterwards, holding nothing, so one session's CPU work never holds the
 * device from another's writes (iosched.c).
 *
 * src/io/spillread.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/instrument.h"
#include "miscadmin.h"

#include "core/emulate.h"
#include "io/device.h"
#include "io/iosched.h"

/*
 * Bytes this backend has read from spill files, ever, counted into the
 * executor's temporary blocks read (braid_temp_blocks).
 */
static uint64 temp_bytes_read = 0;

/*
 * braid_spill_count_read
 *		Count reading bytes [from, to) of a file, for reads whose emulated
 *		delay the reader threads pay themselves (braid_emulate_access).
 */
void
braid_spill_count_read(BraidSpillFile *f, size_t from, size_t to)
{
	if (to <= from)
		return;
	braid_spill_count_read_sum(f, to - from, braid_lines_spanned(from, to));
}

/*
 * braid_spill_count_read_sum
 *		Count reads of a file that add up to bytes bytes in lines lines
 *		(rows of a value log, located one by one and read together).
 */
void
braid_spill_count_read_sum(BraidSpillFile *f, uint64 bytes, uint64 lines)
{
	if (bytes == 0)
		return;
	f->stats->bytes_read += bytes;
	f->stats->lines_read += lines;
	pgBufferUsage.temp_blks_read += braid_temp_blocks(&temp_bytes_read, bytes);
	if (f->devslot >= 0)
	{
		BraidDeviceSlot *d = braid_sched_slot(f->devslot);

		pg_atomic_fetch_add_u64(&d->traffic.bytes_read, bytes);
		pg_atomic_fetch_add_u64(&d->traffic.lines_read, lines);
		if (!braid_sched_holds_read(f->devslot))
			pg_atomic_fetch_add_u64(&d->ungated_reads, 1);
	}
}

/*
 * touch_lines
 *		Load every 64-byte line of [p, p + len) into the CPU caches: on a
 *		device the loads are the read itself, made here, under the grant,
 *		rather than later by whatever decodes the bytes.
 */
static void
touch_lines(const char *p, size_t len)
{
	const volatile char *v = (const volatile char *) p;
	uintptr_t	first = (uintptr_t) p & ~(uintptr_t) 63;

	for (uintptr_t a = first; a < (uintptr_t) p + len; a += 64)
		(void) v[Max(a, (uintptr_t) p) - (uintptr_t) p];
}

/*
 * charge_read
 *		Count, and if emulating pay for, reading bytes [from, to) of a file
 *		(a read grant held).
 */
static void
charge_read(BraidSpillFile *f, size_t from, size_t to)
{
	uint64		lines = braid_lines_spanned(from, to);

	braid_spill_count_read(f, from, to);
	if (braid_emulate_read_ns <= 0 && braid_emulate_interference_ns <= 0)
		return;

	/*
	 * long emulated delays are paid in slices of at most about 50 ms, so that
	 * a cancel gets through
	 */
	while (lines > 0)
	{
		BraidEmulation em;
		uint64		per_line;
		uint64		slice;

		braid_device_emulation(f, &em);
		per_line = (uint64) Max(em.read_ns, 0) + (uint64) Max(em.interference_ns, 0);
		slice = Min(lines, Max((uint64) 50000000 / Max(per_line, 1), (uint64) 1));
		(void) braid_emulate_access(&em, slice, false);
		lines -= slice;
		if (lines > 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * braid_spill_note_read
 *		Read bytes [from, to) of a file through its mapping, under a read
 *		grant of its device taken for just this block: its lines are loaded
 *		(so that the caller then decodes them from the CPU caches, holding
 *		no grant), counted, and, if emulating, paid for.  Backend only.
 */
void
braid_spill_note_read(BraidSpillFile *f, size_t from, size_t to)
{
	Assert(f->persisted);
	if (to <= from)
		return;
	braid_sched_read_begin(&f->devslot, 1);
	touch_lines(f->base + from, to - from);
	charge_read(f, from, to);
	braid_sched_read_end(&f->devslot, 1);
}

/*
 * braid_spill_read_copy
 *		Copy bytes [from, from + len) of a file out of its mapping into dst,
 *		under a read grant of its device taken for just this copy.  Backend
 *		only.
 */
void
braid_spill_read_copy(BraidSpillFile *f, size_t from, void *dst, size_t len)
{
	Assert(f->persisted);
	if (len == 0)
		return;
	braid_sched_read_begin(&f->devslot, 1);
	memcpy(dst, f->base + from, len);
	charge_read(f, from, from + len);
	braid_sched_read_end(&f->devslot, 1);
}

/*
 * braid_read_scope_add
 *		Include a file's device in a read scope (before it begins).
 */
void
braid_read_scope_add(BraidReadScope *scope, const BraidSpillFile *f)
{
	if (f == NULL || f->devslot < 0)
		return;
	for (int i = 0; i < scope->nslots; i++)
		if (scope->slots[i] == f->devslot)
			return;
	Assert(scope->nslots < BRAID_MAX_DEVICES);
	scope->slots[scope->nslots++] = f->devslot;
}

/*
 * braid_read_scope_begin
 *		Wait for read grants on every device of the scope; reads of those
 *		files' mappings may follow until braid_read_scope_end.
 */
void
braid_read_scope_begin(BraidReadScope *scope)
{
	braid_sched_read_begin(scope->slots, scope->nslots);
}

/* braid_read_scope_end: give the scope's read grants back. */
void
braid_read_scope_end(BraidReadScope *scope)
{
	braid_sched_read_end(scope->slots, scope->nslots);
	scope->nslots = 0;
}
