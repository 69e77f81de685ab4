/*-------------------------------------------------------------------------
 *
 * emulate.h
 *	  Emulated spill devices: a shared device clock that accesses reserve
 *	  time on, and counting the 64-byte lines an access touches.
 *
 * Byte-addressable memory is accessed, and charged, by 64-byte lines.  A
 * tmpfs standing in for a slower device (persistent memory, CXL memory)
 * emulates it with a model of a shared device rather than a delay per
 * caller: each spill device has a clock (BraidDeviceClock, in braidsort's
 * shared memory) with a few lanes, its internal parallelism.  An access of
 * n lines reserves n x the per-line delay on the lane that is free first,
 * starting when that lane is free (or now), and the caller sleeps until its
 * reservation ends, spinning only for the last microseconds.  Reads and
 * writes of every backend and thread share the clock, so that sessions
 * compete for the device, not for CPUs, and a read whose reservation
 * starts while a write reservation has not ended pays the interference
 * delay per line as well (BRAID's read/write interference, which DRAM does
 * not have).
 *
 * Pure C, no PostgreSQL calls: used by the spill files (device.c), the
 * value log's reader threads (sort_vlog.c) and the device profiler's
 * kernel (profkernel.c), all on pool threads as well as backends.  The
 * clock is updated with atomic compare-and-swap only.
 *
 * src/core/emulate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_EMULATE_H
#define BRAID_EMULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BRAID_LINE_BYTES	64

/* Most lanes (internal parallelism) an emulated device can have. */
#define BRAID_CLOCK_MAX_LANES 64

/*
 * A device's clock, in CLOCK_MONOTONIC nanoseconds (the same for every
 * process).  All zero is a valid, idle clock.
 */
typedef struct BraidDeviceClock
{
	uint64_t	lane_free[BRAID_CLOCK_MAX_LANES];	/* when each lane's last
													 * reservation ends */
	uint64_t	writes_until;	/* when the latest write reservation ends */
	uint64_t	reserved_ns;	/* device time reserved, ever */
	uint64_t	queued_ns;		/* time accesses waited for a free lane */
	uint64_t	interfered_lines;	/* lines read that paid interference */
} BraidDeviceClock;

/*
 * How a caller's accesses are charged: the device's clock (NULL: a device
 * of its own, nothing shared) and the settings in force, copied by the
 * backend from its GUCs so that pool threads read no GUC.
 */
typedef struct BraidEmulation
{
	BraidDeviceClock *clock;
	int			lanes;			/* 1..BRAID_CLOCK_MAX_LANES */
	int			read_ns;		/* per line read */
	int			write_ns;		/* per line written */
	int			interference_ns;	/* per line read overlapping a write */
	bool		writing;		/* the caller knows of a writer now (the
								 * device's phase gate): reads interfere even
								 * if writes cost no device time */
} BraidEmulation;

/* braid_lines_spanned: 64-byte lines touched by bytes [from, to). */
static inline uint64_t
braid_lines_spanned(uintptr_t from, uintptr_t to)
{
	if (to <= from)
		return 0;
	return (uint64_t) ((to - 1) / BRAID_LINE_BYTES - from / BRAID_LINE_BYTES + 1);
}

/* braid_emulation_active: does any access under em cost device time? */
static inline bool
braid_emulation_active(const BraidEmulation *em)
{
	return em->read_ns > 0 || em->write_ns > 0 || em->interference_ns > 0;
}

/* The braidsort.emulate_* settings: read by backends only. */
extern int	braid_emulate_read_ns;
extern int	braid_emulate_write_ns;
extern int	braid_emulate_interference_ns;
extern int	braid_emulate_parallelism;

extern int64_t braid_emulate_now_ns(void);
extern int64_t braid_emulate_wait_ns(uint64_t ns);
extern int64_t braid_emulate_sleep_until(int64_t until_ns);
extern int64_t braid_emulate_access(const BraidEmulation *em, uint64_t lines,
									bool write);
extern uint64_t braid_clock_counter(const uint64_t *counter);
extern void braid_clock_reset_counters(BraidDeviceClock *clock);
extern int64_t braid_clock_reserve(BraidDeviceClock *clock, int lanes,
								   int64_t now, uint64_t lines, int ns_per_line,
								   int interference_ns, bool write,
								   bool writing);

#endif							/* BRAID_EMULATE_H */
