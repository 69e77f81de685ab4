/*-------------------------------------------------------------------------
 *
 * planner.h
 *	  The planner hook (planner.c).
 *
 * src/plan/planner.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PLANNER_H
#define BRAID_PLANNER_H

extern void braid_planner_init(void);

#endif							/* BRAID_PLANNER_H */
