/*-------------------------------------------------------------------------
 *
 * sort_node.h
 *	  The BraidSort custom scan node (sort_node.c).
 *
 * src/sort/sort_node.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_SORT_NODE_H
#define BRAID_SORT_NODE_H

extern void braid_sort_exec_init(void);

#endif							/* BRAID_SORT_NODE_H */
