/*-------------------------------------------------------------------------
 *
 * iosched.h
 *	  The per-device I/O phase gate, and pool sizing from device profiles.
 *
 * Each spill device (a filesystem, by st_dev) has a slot in shared memory
 * (shmem.h) with its phase gate and counters.
 *
 * src/io/iosched.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_IOSCHED_H
#define BRAID_IOSCHED_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"

#include "core/emulate.h"
#include "io/shmem.h"

/* braidsort.io_policy */
#define BRAID_IO_INTERFERENCE_AWARE 0
#define BRAID_IO_OVERLAP			1


extern int	braid_io_policy;
extern int	braid_read_threads;
extern int	braid_write_threads;

/* devices */
extern int	braid_sched_device(Oid spcoid, const char *dir);
extern BraidDeviceSlot *braid_sched_slot(int slot);

/* the phase gate */
extern void braid_sched_read_begin(const int *slots, int nslots);
extern void braid_sched_read_end(const int *slots, int nslots);
extern void braid_sched_write_begin(int slot, int threads);
extern int	braid_sched_write_threads_granted(void);
extern void braid_sched_write_end(int slot);
extern void braid_sched_profile_begin(int slot);
extern void braid_sched_profile_end(int slot);
extern void braid_sched_release_all(void);
extern bool braid_sched_holds_read(int slot);
extern bool braid_sched_holds_any_read(void);

/* pool sizing from the profile */
extern int	braid_sched_write_thread_count_for(Oid spcoid);
extern int	braid_sched_device_write_cap(int slot);
extern int	braid_sched_read_thread_count_for(Oid spcoid);
extern int	braid_profile_best_threads(const BraidProfile *p, int op, double *mbps);

/*
 * Interference a profile must show for the gate to keep a device's reads
 * and writes apart (and for device_summary's "I"): reads alone at least
 * this many times as fast as under a writer.  (Its "D", writes that stop
 * scaling, decides whether the gate caps writers' threads.)
 */
#define BRAID_INTERFERENCE_MIN	1.15

extern double braid_profile_interference(const BraidProfile *p);
extern bool braid_profile_interferes(const BraidProfile *p);
extern bool braid_profile_write_constrained(const BraidProfile *p, bool *measured);
extern const BraidProfileRow *braid_profile_row(const BraidProfile *p, int op,
												int size, int threads);
extern double braid_sched_spill_ns_per_byte(Oid spcoid);
extern bool braid_sched_spill_line_ns(Oid spcoid, double *write_ns, double *read_ns);

/* whether a tablespace's stored profile is used (braid_sched_profile_status) */
#define BRAID_PROFILE_NONE				0	/* none stored */
#define BRAID_PROFILE_IN_USE			1	/* taken under the emulation in
											 * force */
#define BRAID_PROFILE_OTHER_EMULATION	2	/* stored, not used: taken under
											 * other emulation settings */

extern bool braid_sched_profile_matches(const BraidProfile *p);
extern int	braid_sched_profile_status(Oid spcoid, BraidProfile *copy);

#endif							/* BRAID_IOSCHED_H */
