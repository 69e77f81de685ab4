/*-------------------------------------------------------------------------
 *
 * spillspace.h
 *	  Where spill files go: the spill tablespace, and its room
 *	  (spillspace.c).
 *
 * src/io/spillspace.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SPILLSPACE_H
#define BRAID_SPILLSPACE_H

#include <sys/types.h>

#include "utils/guc.h"

extern char *braid_spill_tablespace;

extern bool braid_check_spill_tablespace(char **newval, void **extra, GucSource source);
extern Oid	braid_spill_tablespace_next(void);
extern Oid	braid_spill_tablespace_guess(void);
extern char *braid_spill_setting_problem(void);
extern bool braid_spill_device(Oid spc, dev_t *dev, double *free_bytes);
extern bool braid_spill_free_bytes(double *bytes);
extern bool braid_spill_has_room(double bytes, const char *what, char **why);

#endif							/* BRAID_SPILLSPACE_H */
