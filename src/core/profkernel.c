/*-------------------------------------------------------------------------
 *
 * profkernel.c
 *	  Device microbenchmark kernel: read and write bandwidth and latency of
 *	  a mapped region, sequential or random, with several threads.
 *
 * Each thread repeats one kind of access (a read that sums the bytes, or a
 * non-temporal pmem_memcpy) in batches of at most 256 accesses or 64 KiB,
 * whichever comes first.  After each batch it reserves the emulated delay
 * of the lines it touched on the device's clock and sleeps until the
 * reservation ends (emulate.c: threads beyond the device's lanes queue),
 * then stops once the deadline has passed or the caller cancelled.
 * Sequential threads each walk their own slice of the region, wrapping
 * around; random threads pick aligned offsets anywhere in it with a private
 * xorshift64 generator.
 *
 * The threads run inside a PostgreSQL backend, so they only touch memory
 * and call libc and libpmem: every buffer is allocated by the caller before
 * they start and freed after they have been joined.
 *
 * Pure C (pthreads, libpmem).
 *
 * src/core/profkernel.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* sched_getaffinity, CPU_COUNT */
#endif
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpmem.h>

#include "core/emulate.h"
#include "core/pool.h"
#include "core/profkernel.h"
#include "core/sync.h"

#define PROF_MAX_THREADS	64	/* braid_pool_run's limit */
#define PROF_BATCH_ACCESSES 256 /* accesses between clock checks */
#define PROF_BATCH_BYTES	65536	/* ... or fewer, to stay near 64 KiB */
#define PROF_WRITE_FLAGS	(PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_NODRAIN)

/* One thread's counters and buffer, on its own cache line. */
typedef struct ProfThread
{
	char	   *src;			/* write source, access_size bytes, or NULL */
	uint64_t	accesses;		/* accesses done */
	uint64_t	bytes;			/* bytes moved */
	volatile uint64_t sink;		/* sum of the bytes read: keeps reads alive */
	int64_t		wall_ns;		/* how long the thread ran */
	int64_t		busy_ns;		/* of which on a CPU or in an emulated delay */
}			__attribute__((aligned(64))) ProfThread;

/* Everything the threads share; read-only while they run, but for counters. */
typedef struct ProfRun
{
	char	   *base;
	size_t		size;
	BraidProfOp op;
	size_t		access_size;
	int			threads;		/* measured threads (readers for RUW) */
	size_t		batch;			/* accesses per batch */
	int64_t		deadline_ns;	/* CLOCK_MONOTONIC time to stop at */
	BraidEmulation em;			/* how accesses are charged */
	volatile int *cancel;
	int			readers_left;	/* RUW: readers still running (atomic) */
	ProfThread	th[PROF_MAX_THREADS];
} ProfRun;

/*
 * alloc_aligned
 *		size bytes aligned to a cache line, or NULL.  posix_memalign rather
 *		than aligned_alloc, which C99 builds (PGXS) do not declare.
 */
static void *
alloc_aligned(size_t size)
{
	void	   *p;

	if (posix_memalign(&p, 64, size) != 0)
		return NULL;
	return p;
}

/* xorshift64: next value of a thread's private generator (never zero). */
static inline uint64_t
xorshift64(uint64_t *state)
{
	uint64_t	x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/*
 * read_chunk
 *		Sum the n bytes at p as 8-byte words (plus a byte tail), with four
 *		independent sums so loads are not serialised behind one add chain.
 *		The result depends on every byte, so the reads cannot be dropped.
 */
static uint64_t
read_chunk(const char *p, size_t n)
{
	uint64_t	s0 = 0,
				s1 = 0,
				s2 = 0,
				s3 = 0;
	uint64_t	w[4];
	size_t		i = 0;

	for (; i + 32 <= n; i += 32)
	{
		memcpy(w, p + i, 32);
		s0 += w[0];
		s1 += w[1];
		s2 += w[2];
		s3 += w[3];
	}
	for (; i + 8 <= n; i += 8)
	{
		memcpy(w, p + i, 8);
		s0 += w[0];
	}
	for (; i < n; i++)
		s1 += (unsigned char) p[i];
	return s0 ^ s1 ^ s2 ^ s3;
}

/*
 * thread_cpu_ns
 *		CPU time of the calling thread, in nanoseconds: what it got of a
 *		CPU, against the wall time it ran, tells whether other work took
 *		the CPUs from the measurement.
 */
static int64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * prof_worker
 *		One thread's measurement loop (a BraidTask).  For READ_UNDER_WRITE,
 *		workers 0..threads-1 read the first half of the region and worker
 *		`threads` writes the second half until every reader has finished.
 *		braid_pool_run_concurrent starts workers in order and stops at the
 *		first failure, so when the writer runs, all readers run too and it
 *		will see them end.  Besides its accesses and bytes, a thread counts
 *		its wall time and the part of it on a CPU or in an emulated delay.
 */
static void
prof_worker(void *arg, int worker)
{
	ProfRun    *run = (ProfRun *) arg;
	ProfThread *me = &run->th[worker];
	size_t		as = run->access_size;
	bool		ruw = run->op == BRAID_PROF_READ_UNDER_WRITE;
	bool		ruw_writer = ruw && worker == run->threads;
	bool		writes = ruw_writer || run->op == BRAID_PROF_SEQ_WRITE ||
		run->op == BRAID_PROF_RAND_WRITE;
	bool		seq = run->op != BRAID_PROF_RAND_READ &&
		run->op != BRAID_PROF_RAND_WRITE;
	BraidEmulation em = run->em;
	char	   *area = run->base;
	size_t		len = run->size;
	size_t		slots;
	size_t		pos = 0;
	uint64_t	rng = UINT64_C(0x9E3779B97F4A7C15) * (uint64_t) (worker + 1);
	uint64_t	acc = 0;
	uint64_t	lines = 0;
	int64_t		start_ns;
	int64_t		cpu_start_ns;
	int64_t		slept_ns = 0;

	/* this thread's area: a half for RUW, then its own slice if sequential */
	if (ruw)
	{
		len = run->size / 2;
		if (ruw_writer)
		{
			area += len;
			len = run->size - len;
		}
	}
	if (seq)
	{
		int			parts = ruw_writer ? 1 : run->threads;
		int			part = ruw_writer ? 0 : worker;

		len = len / (size_t) parts / as * as;
		area += (size_t) part * len;
	}
	slots = len / as;
	if (rng == 0)
		rng = 1;
	/* the readers of READ_UNDER_WRITE always read under the writer */
	if (ruw && !ruw_writer)
		em.writing = true;
	start_ns = braid_emulate_now_ns();
	cpu_start_ns = thread_cpu_ns();

	for (;;)
	{
		int64_t		now;
		int64_t		before;

		if (run->cancel != NULL && *run->cancel != 0)
			break;
		for (size_t i = 0; i < run->batch; i++)
		{
			char	   *p;

			if (seq)
			{
				p = area + pos;
				pos += as;
				if (pos >= len)
					pos = 0;
			}
			else
				p = area + (size_t) (xorshift64(&rng) % slots) * as;

			if (writes)
				pmem_memcpy(p, me->src, as, PROF_WRITE_FLAGS);
			else
				acc += read_chunk(p, as);
			lines += braid_lines_spanned((uintptr_t) p, (uintptr_t) p + as);
		}
		me->accesses += run->batch;
		me->bytes += run->batch * as;
		me->sink = acc;

		/* pay the emulated delay owed for this batch, then check the clock */
		before = braid_emulate_now_ns();
		now = braid_emulate_access(&em, lines, writes);
		slept_ns += now - before;
		lines = 0;
		if (ruw_writer)
		{
			if (braid_load_acquire(&run->readers_left) == 0)
				break;
		}
		else if (now >= run->deadline_ns)
			break;
	}

	if (writes)
		pmem_drain();
	me->wall_ns = braid_emulate_now_ns() - start_ns;
	me->busy_ns = thread_cpu_ns() - cpu_start_ns + slept_ns;
	if (ruw && !ruw_writer)
		braid_fetch_sub_acq_rel(&run->readers_left, 1);
}

/*
 * braid_profile_measure
 *		Measure one kind of access on [base, base+size); see profkernel.h.
 *		Validates the arguments, allocates the writers' source buffers, runs
 *		the threads for about `seconds`, and sums the measured threads.
 */
int
braid_profile_measure(char *base, size_t size, BraidProfOp op,
					  size_t access_size, int threads, double seconds,
					  const BraidEmulation *em,
					  volatile int *cancel, BraidProfResult *out)
{
	ProfRun    *run;
	bool		ruw = op == BRAID_PROF_READ_UNDER_WRITE;
	int			nworkers = ruw ? threads + 1 : threads;
	size_t		area = ruw ? size / 2 : size;
	size_t		bufsize;
	int			ran;
	int			measured;
	int64_t		start;
	int			rc = 0;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (base == NULL || out == NULL || access_size == 0 ||
		(int) op < (int) BRAID_PROF_SEQ_READ ||
		(int) op > (int) BRAID_PROF_READ_UNDER_WRITE ||
		threads < 1 || nworkers > PROF_MAX_THREADS ||
		!(seconds >= 0.0 && seconds <= 1e6) ||
		area / (size_t) threads < access_size)
		return -1;

	run = alloc_aligned(sizeof(ProfRun));
	if (run == NULL)
		return -1;
	memset(run, 0, sizeof(ProfRun));
	run->base = base;
	run->size = size;
	run->op = op;
	run->access_size = access_size;
	run->threads = threads;
	run->batch = PROF_BATCH_BYTES / access_size;
	if (run->batch > PROF_BATCH_ACCESSES)
		run->batch = PROF_BATCH_ACCESSES;
	if (run->batch < 1)
		run->batch = 1;
	if (em != NULL)
		run->em = *em;			/* else all zero: nothing emulated */
	if (run->em.lanes < 1)
		run->em.lanes = 1;
	run->cancel = cancel;
	run->readers_left = threads;

	/* every writing thread copies from its own buffer, allocated here */
	bufsize = (access_size + 63) / 64 * 64;
	for (int w = 0; w < nworkers; w++)
	{
		if (op == BRAID_PROF_SEQ_WRITE || op == BRAID_PROF_RAND_WRITE ||
			(ruw && w == threads))
		{
			run->th[w].src = alloc_aligned(bufsize);
			if (run->th[w].src == NULL)
			{
				rc = -1;
				goto done;
			}
			memset(run->th[w].src, 0x5A + w, bufsize);
		}
	}

	start = braid_emulate_now_ns();
	run->deadline_ns = start + (int64_t) (seconds * 1e9);
	ran = braid_pool_run_concurrent(nworkers, prof_worker, run);
	out->seconds = (double) (braid_emulate_now_ns() - start) / 1e9;

	/* workers 0..ran-1 ran; for RUW the writer (last) is not measured */
	measured = ran < threads ? ran : threads;
	for (int w = 0; w < measured; w++)
	{
		out->accesses += run->th[w].accesses;
		out->bytes += run->th[w].bytes;
	}
	/* every thread that ran competed for the CPUs, RUW's writer too */
	{
		int64_t		wall = 0,
					busy = 0;

		for (int w = 0; w < ran; w++)
		{
			wall += run->th[w].wall_ns;
			busy += run->th[w].busy_ns < run->th[w].wall_ns ?
				run->th[w].busy_ns : run->th[w].wall_ns;
		}
		out->cpu_share = wall > 0 ? (double) busy / (double) wall : 1.0;
	}
	if (out->seconds > 0.0)
		out->mb_per_s = (double) out->bytes / 1e6 / out->seconds;
	if (out->accesses > 0)
		out->ns_per_access = out->seconds * 1e9 * measured / (double) out->accesses;

done:
	for (int w = 0; w < nworkers; w++)
		free(run->th[w].src);
	free(run);
	return rc;
}

/*
 * quota_cpus
 *		The CPUs a cgroup CPU quota allows at directory dir of a cgroup file
 *		system and its parents up to root (v2: cpu.max "QUOTA PERIOD" or
 *		"max PERIOD"; v1: cpu.cfs_quota_us and cpu.cfs_period_us, -1 for
 *		none): the tightest, or 0 if none is set or readable.
 */
static double
quota_cpus(const char *root, const char *path, bool v2)
{
	char		dir[4096];
	double		best = 0;

	if (snprintf(dir, sizeof(dir), "%s%s", root, path) >= (int) sizeof(dir))
		return 0;
	for (;;)
	{
		char		file[4200];
		FILE	   *f;
		long long	quota = -1,
					period = 0;
		char	   *slash;

		if (v2)
		{
			snprintf(file, sizeof(file), "%s/cpu.max", dir);
			if ((f = fopen(file, "r")) != NULL)
			{
				if (fscanf(f, "%lld %lld", &quota, &period) != 2)
					quota = -1;
				fclose(f);
			}
		}
		else
		{
			snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir);
			if ((f = fopen(file, "r")) != NULL)
			{
				if (fscanf(f, "%lld", &quota) != 1)
					quota = -1;
				fclose(f);
			}
			snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
			if ((f = fopen(file, "r")) != NULL)
			{
				if (fscanf(f, "%lld", &period) != 1)
					period = 0;
				fclose(f);
			}
		}
		if (quota > 0 && period > 0 &&
			(best == 0 || (double) quota / period < best))
			best = (double) quota / period;
		if (strlen(dir) <= strlen(root) || (slash = strrchr(dir, '/')) == NULL ||
			slash < dir + strlen(root))
			break;
		*slash = '\0';
	}
	return best;
}

/* has_cpu_controller: "cpu" is one of a cgroup v1 hierarchy's controllers. */
static bool
has_cpu_controller(const char *controllers)
{
	const char *p = controllers;

	while (*p != '\0')
	{
		size_t		n = strcspn(p, ",");

		if (n == 3 && strncmp(p, "cpu", 3) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

/*
 * braid_profile_cpus
 *		The CPUs this process may run on at once: those of its CPU affinity
 *		mask, fewer if a cgroup CPU quota (a container's CPU limit) allows
 *		less.  A profile's threads cannot get more than this, and getting
 *		less than their share of it means other work took CPUs (see
 *		BraidProfResult.cpu_share).  Linux; elsewhere the online CPUs.
 */
double
braid_profile_cpus(void)
{
	double		cpus = (double) sysconf(_SC_NPROCESSORS_ONLN);
	FILE	   *f;
	char		line[4096];

#ifdef __linux__
	{
		cpu_set_t	set;

		if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
			cpus = CPU_COUNT(&set);
	}
#endif
	if ((f = fopen("/proc/self/cgroup", "r")) != NULL)
	{
		while (fgets(line, sizeof(line), f) != NULL)
		{
			char	   *path = strchr(line, ':');
			char	   *controllers = path ? path + 1 : NULL;
			double		quota = 0;

			if (controllers == NULL || (path = strchr(controllers, ':')) == NULL)
				continue;
			*path++ = '\0';
			path[strcspn(path, "\n")] = '\0';
			if (strcmp(path, "/") == 0)
				path = "";
			if (controllers[0] == '\0')
				quota = quota_cpus("/sys/fs/cgroup", path, true);
			else if (has_cpu_controller(controllers))
			{
				char		root[4200];

				snprintf(root, sizeof(root), "/sys/fs/cgroup/%s", controllers);
				quota = quota_cpus(root, path, false);
			}
			if (quota > 0 && quota < cpus)
				cpus = quota;
		}
		fclose(f);
	}
	/* a quota may allow less than one CPU (a 500m container limit) */
	return cpus < 0.01 ? 0.01 : cpus;
}

/* braid_profile_op_name: the short name of an op, as shown to users. */
const char *
braid_profile_op_name(BraidProfOp op)
{
	switch (op)
	{
		case BRAID_PROF_SEQ_READ:
			return "seq_read";
		case BRAID_PROF_RAND_READ:
			return "rand_read";
		case BRAID_PROF_SEQ_WRITE:
			return "seq_write";
		case BRAID_PROF_RAND_WRITE:
			return "rand_write";
		case BRAID_PROF_READ_UNDER_WRITE:
			return "read_under_write";
	}
	return "unknown";
}
