/*-------------------------------------------------------------------------
 *
 * heapinput.h
 *	  Inputs braidsort may read again: refetched by heap TID, or rescanned.
 *
 * src/plan/heapinput.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_HEAPINPUT_H
#define BRAID_HEAPINPUT_H

#include "nodes/plannodes.h"

extern bool braid_reads_changing_header(Node *node);
extern Oid	braid_scanned_table(PlannedStmt *stmt, Plan *child, char **why);
extern bool braid_heap_tid_input(PlannedStmt *stmt, Plan *child, Oid *relid,
								 double *table_pages, bool *table_cached, char **why);
extern bool braid_heap_rescannable(Plan *child);
extern Plan *braid_serial_seqscan(PlannedStmt *stmt, Plan *parallel_scan, double whole_rows,
								  double *cpu_cost);

#endif							/* BRAID_HEAPINPUT_H */
