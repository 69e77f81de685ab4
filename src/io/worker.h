/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  The "braidsort scheduler" background worker (worker.c).
 *
 * src/io/worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_WORKER_H
#define BRAID_WORKER_H

extern void braid_worker_register(void);

#endif							/* BRAID_WORKER_H */
