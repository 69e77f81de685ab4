/*-------------------------------------------------------------------------
 *
 * plancost.h
 *	  What the planner's statistics say about a Sort (plancost.c).
 *
 * src/plancost.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PLANCOST_H
#define BRAID_PLANCOST_H

#include "postgres.h"

#include "nodes/plannodes.h"

#include "costmodel.h"

/*
 * The sort keys of a Sort, as braidsort will encode them.
 */
typedef struct BraidKeys
{
	int			keylen;			/* bytes of key prefix per entry */
	bool		has_var;		/* a key may exceed the prefix */
	bool		collated;		/* a key is ordered by a libc collation */
	bool		numeric_first;	/* the first key is a numeric */
	int			collated_key;	/* which key is collated, if one is */
} BraidKeys;

extern double braid_plan_value_bytes(Expr *expr, Oid relid);
extern void braid_plan_cost_input(Sort *sort, Plan *child, Oid relid, double table_pages,
								  bool table_cached, const BraidKeys *keys, int processes,
								  BraidCostInput *cost);

#endif							/* BRAID_PLANCOST_H */
