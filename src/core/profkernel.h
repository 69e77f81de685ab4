/*-------------------------------------------------------------------------
 *
 * profkernel.h
 *	  Device microbenchmark kernel: read and write bandwidth and latency of
 *	  a mapped region, sequential or random, with several threads.
 *
 * Pure C (pthreads, libpmem): no PostgreSQL calls, usable from the unit
 * tests.
 *
 * src/core/profkernel.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PROFKERNEL_H
#define BRAID_PROFKERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/emulate.h"

typedef enum BraidProfOp
{
	BRAID_PROF_SEQ_READ,		/* sequential reads, access_size chunks */
	BRAID_PROF_RAND_READ,		/* random reads of access_size bytes at
								 * access_size-aligned offsets */
	BRAID_PROF_SEQ_WRITE,		/* sequential non-temporal writes (pmem_memcpy
								 * with
								 * PMEM_F_MEM_NONTEMPORAL|PMEM_F_MEM_NODRAIN,
								 * pmem_drain at end of each thread) */
	BRAID_PROF_RAND_WRITE,		/* random non-temporal writes of access_size
								 * bytes at aligned offsets */
	BRAID_PROF_READ_UNDER_WRITE /* sequential read bandwidth of `threads`
								 * reader threads while one extra writer
								 * thread does sequential NT writes to a
								 * disjoint half of the region; reports the
								 * readers' bandwidth */
} BraidProfOp;

typedef struct BraidProfResult
{
	double		mb_per_s;		/* MB (1e6 bytes) per second, all threads
								 * together */
	double		ns_per_access;	/* wall ns per access per thread:
								 * seconds*1e9*threads/accesses */
	uint64_t	accesses;		/* accesses done by all measured threads */
	uint64_t	bytes;			/* bytes moved by all measured threads */
	double		seconds;		/* wall time of the measurement */
	double		cpu_share;		/* of the threads' wall time, the part on a
								 * CPU or in an emulated delay (0..1): below
								 * min(1, CPUs / threads), other work took
								 * CPUs from the measurement */
} BraidProfResult;

/*
 * Measure op on the mapped region [base, base+size) with `threads` threads
 * (1..64, 1..63 for READ_UNDER_WRITE, whose writer is one more; the calling
 * thread is one of them, via braid_pool_run from pool.h), running for about
 * `seconds` seconds of wall time (each thread checks the clock every few
 * hundred accesses and stops when the deadline passes or *cancel becomes
 * non-zero; cancel may be NULL).
 * em: how accesses are charged (emulate.h), exactly as braidsort's device
 * layer emulates slower devices, so that a profile taken with emulation on
 * shows the emulated device: each batch of accesses reserves its lines'
 * time on em->clock and the thread sleeps until the reservation ends; the
 * readers of READ_UNDER_WRITE pay em->interference_ns per line as well, as
 * reads under a writer.  NULL: nothing emulated.
 * Returns 0 on success, -1 on bad arguments (size too small for the access
 * size/threads, access_size 0, threads out of range, seconds not in
 * [0, 1e6], NULL base or out, unknown op) or if a buffer cannot be
 * allocated.
 */
extern int	braid_profile_measure(char *base, size_t size, BraidProfOp op,
								  size_t access_size, int threads, double seconds,
								  const BraidEmulation *em,
								  volatile int *cancel, BraidProfResult *out);

extern double braid_profile_cpus(void);

/* "seq_read", "rand_read", "seq_write", "rand_write", "read_under_write" */
extern const char *braid_profile_op_name(BraidProfOp op);

#endif							/* BRAID_PROFKERNEL_H */
