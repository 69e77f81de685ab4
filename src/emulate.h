/*-------------------------------------------------------------------------
 *
 * emulate.h
 *	  Emulated device latency, and counting the 64-byte lines an access
 *	  touches.
 *
 * Byte-addressable memory is accessed, and charged, by 64-byte lines.  A
 * tmpfs standing in for a slower device (persistent memory, CXL memory)
 * emulates its latency by making whoever touched the lines wait
 * lines x the per-line delay (braidsort.emulate_read_ns and friends).
 * Today the wait spins (sleeps are far too coarse for sub-microsecond
 * delays).
 *
 * Pure C, no PostgreSQL calls: used by the spill files (device.c), the
 * value log's reader threads (sort_vlog.c) and the device profiler's
 * kernel (profkernel.c), all on pool threads as well as backends.
 *
 * src/emulate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_EMULATE_H
#define BRAID_EMULATE_H

#include <stddef.h>
#include <stdint.h>

#define BRAID_LINE_BYTES	64

/* braid_lines_spanned: 64-byte lines touched by bytes [from, to). */
static inline uint64_t
braid_lines_spanned(uintptr_t from, uintptr_t to)
{
	if (to <= from)
		return 0;
	return (uint64_t) ((to - 1) / BRAID_LINE_BYTES - from / BRAID_LINE_BYTES + 1);
}

extern int64_t braid_emulate_now_ns(void);
extern int64_t braid_emulate_wait_ns(uint64_t ns);
extern void braid_emulate_lines(uint64_t lines, int ns_per_line);

#endif							/* BRAID_EMULATE_H */
