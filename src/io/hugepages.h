/*-------------------------------------------------------------------------
 *
 * hugepages.h
 *	  Huge-page advice for shared buffers (hugepages.c).
 *
 * src/io/hugepages.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BRAID_HUGEPAGES_H
#define BRAID_HUGEPAGES_H

extern bool braid_advise_huge_pages_on;

extern void braid_advise_huge_pages(void);

#endif							/* BRAID_HUGEPAGES_H */
