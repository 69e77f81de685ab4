/*-------------------------------------------------------------------------
 *
 * join_node.h
 *	  The BraidJoin custom scan node (join_node.c).
 *
 * src/join/join_node.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_JOIN_NODE_H
#define BRAID_JOIN_NODE_H

extern void braid_join_exec_init(void);

#endif							/* BRAID_JOIN_NODE_H */
