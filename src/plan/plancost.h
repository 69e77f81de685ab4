/*-------------------------------------------------------------------------
 *
 * plancost.h
 *	  What the planner's statistics say about a Sort (plancost.c).
 *
 * src/plan/plancost.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_PLANCOST_H
#define BRAID_PLANCOST_H

#include "postgres.h"

#include "nodes/plannodes.h"
#include "utils/relcache.h"

#include "core/costmodel.h"
#include "core/wlimit.h"

/*
 * The sort keys of a Sort, as braidsort will encode them.
 */
typedef struct BraidKeys
{
	int			keylen;			/* bytes of key prefix per entry */
	bool		has_var;		/* a key may exceed the prefix */
	bool		collated;		/* a key is ordered by a libc collation */
	bool		numeric_first;	/* the first key is a numeric */
	bool		abbreviated_first;	/* ... is a bytea or a C-collated string
									 * (BRAID_KEY_IS_ABBREVIATED) */
	int			collated_key;	/* the first collated key, if there is one */
	double		encoded_bytes;	/* estimated bytes of a row's whole encoded
								 * key (what a run record front-codes) */
	double		full_key_bytes; /* estimated bytes a row of full keys kept
								 * beside its entry (sort/sort_map.c): the
								 * whole key with a collated key, or where the
								 * average key outgrows the prefix; else 0 */
} BraidKeys;

extern bool braid_table_cached(Relation rel, double table_pages);
extern double braid_plan_value_bytes(Expr *expr, Oid relid);
extern void braid_plan_cost_input(Sort *sort, Plan *child, Oid relid, double table_pages,
								  bool table_cached, const BraidKeys *keys, int processes,
								  BraidCostInput *cost);
extern Expr *braid_sort_input_expr(Plan *child, Expr *expr);
extern bool braid_plan_key_histogram(Oid relid, Expr *expr, double *correlation,
									 double *mcv_share, Datum **values, int *nvalues);
extern void braid_tlist_ties(const AttrNumber *keycols, List *tlist, List *indextlist,
							 Oid relid, BraidCostInput *cost);
extern void braid_table_ties(Relation rel, const AttrNumber *keyattnos, BraidCostInput *cost);
extern double braid_table_correlation(Relation rel, AttrNumber attno);
extern double braid_plan_spill_ns_per_byte(void);
extern void braid_plan_spill_line_ns(double *write_ns, double *read_ns);
extern char *braid_ms_text(double ms);
extern char *braid_cost_margin_text(const BraidCostEstimate *est);
extern void braid_plan_wl_input(BraidWlInput *in, double rows, uint32 stride, uint32 keylen,
								double key_bytes, double key_memory, size_t budget, int fanin,
								bool can_reread,
								bool value_log, double select_collated_ns);
extern BraidWlMode braid_plan_sort_mode(double rows, int keylen, double key_bytes,
										double key_memory, bool value_log,
										bool can_reread, double gather_bytes,
										double gather_pass_ms, double select_collated_ns,
										BraidWlEstimate est[BRAID_WL_NMODES],
										double *share);

extern double braid_parallel_divisor(int num_workers);
extern bool braid_sort_has_room(const BraidCostInput *in, BraidGatherFrom from,
								double shared_rows, char **why);

#endif							/* BRAID_PLANCOST_H */
