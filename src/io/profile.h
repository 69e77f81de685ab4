/*-------------------------------------------------------------------------
 *
 * profile.h
 *	  Device profiles: stored across restarts.
 *
 * src/io/profile.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PROFILE_H
#define BRAID_PROFILE_H

extern void braid_profiles_load(void);
extern void braid_profiles_save(void);

#endif							/* BRAID_PROFILE_H */
