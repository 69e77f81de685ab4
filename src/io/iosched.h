/*-------------------------------------------------------------------------
 *
 * iosched.h
 *	  The per-device I/O phase gate.
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

/* the device's writers' cap (its profile's, see devprofile.h) */
extern int	braid_sched_device_write_cap(int slot);

#endif							/* BRAID_IOSCHED_H */
