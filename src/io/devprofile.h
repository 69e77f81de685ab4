/*-------------------------------------------------------------------------
 *
 * devprofile.h
 *	  What a device's stored profile says: the gate's rules, pool sizes,
 *	  spill costs.
 *
 * src/io/devprofile.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_DEVPROFILE_H
#define BRAID_DEVPROFILE_H

#include "postgres.h"

#include "io/shmem.h"

/* pool sizing from the profile */
extern int	braid_sched_write_threads_of(const BraidProfile *p);
extern int	braid_sched_write_thread_count_for(Oid spcoid);
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

/* the profile a device slot's gate follows */
extern const BraidProfile *braid_sched_device_profile(const BraidDeviceSlot *d);

#endif							/* BRAID_DEVPROFILE_H */
