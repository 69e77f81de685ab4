/*-------------------------------------------------------------------------
 *
 * hugepages.c
 *	  Advising the kernel to back shared buffers with huge pages.
 *
 * BraidJoin reads its rows by TID straight from pages all over shared
 * buffers, a few rows a page at a time.  In 4 kB pages each such access
 * to a page the TLB does not cover (a few MB of it) waits for a page
 * walk, two levels of them in a virtual machine: at PostgreSQL's 64
 * batches 17% of BraidJoin's time here.  PostgreSQL's own huge_pages =
 * try maps shared memory in explicit huge pages only when the kernel has
 * enough of them reserved (vm.nr_hugepages).  Without them the kernel
 * can still back the shared mapping with transparent huge pages, when
 * /sys/kernel/mm/transparent_hugepage/shmem_enabled says "always", or
 * says "advise" and the range was advised so (MADV_HUGEPAGE).  This file
 * gives that advice for the buffer pool, once, in the postmaster, when
 * the shared memory is created (again after a crash); forked children
 * inherit it with the mapping (under EXEC_BACKEND they would not).  Under
 * any other setting the advice changes nothing.  With it, under
 * "advise", bench --join measured BraidJoin 1.21x faster than
 * PostgreSQL's 64 batches where it had been about even
 * (docs/benchmarks.md).
 *
 * Only whole huge pages inside the pool are advised (2 MB on x86-64, the
 * kernel's hpage_pmd_size): transparent huge pages cover nothing else,
 * and a mapping already in explicit huge pages can only be split at
 * their boundaries.
 *
 * src/io/hugepages.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "storage/bufmgr.h"

#include "io/hugepages.h"

/* braidsort.advise_huge_pages (defined with the others in guc.c) */
bool		braid_advise_huge_pages_on = true;

/* the size of a transparent huge page where the kernel does not say */
#define BRAID_HUGE_PAGE_SIZE	((uintptr_t) 2 * 1024 * 1024)
#define BRAID_HUGE_PAGE_SIZE_FILE "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

/*
 * huge_page_size
 *		The kernel's transparent huge page size (2 MB on x86-64, larger on
 *		kernels with larger base pages), or BRAID_HUGE_PAGE_SIZE.
 */
static uintptr_t
huge_page_size(void)
{
	FILE	   *f = fopen(BRAID_HUGE_PAGE_SIZE_FILE, "r");
	unsigned long size = 0;

	if (f != NULL)
	{
		if (fscanf(f, "%lu", &size) != 1)
			size = 0;
		fclose(f);
	}
	/* a power of two, or the default */
	if (size == 0 || (size & (size - 1)) != 0)
		return BRAID_HUGE_PAGE_SIZE;
	return (uintptr_t) size;
}

/*
 * braid_advise_huge_pages
 *		The shared memory was just created (a shmem "created" callback, in
 *		the postmaster): advise the kernel to back the whole huge pages
 *		inside the buffer pool with huge pages, when
 *		braidsort.advise_huge_pages is on.  A refusal (a kernel without
 *		transparent huge pages) is reported at DEBUG1 and otherwise
 *		ignored: it is only advice.
 */
void
braid_advise_huge_pages(void)
{
#ifdef MADV_HUGEPAGE
	uintptr_t	size;
	uintptr_t	start;
	uintptr_t	end;

	if (!braid_advise_huge_pages_on || BufferBlocks == NULL)
		return;
	size = huge_page_size();
	start = TYPEALIGN(size, (uintptr_t) BufferBlocks);
	end = TYPEALIGN_DOWN(size, (uintptr_t) BufferBlocks + (uintptr_t) NBuffers * BLCKSZ);
	if (end <= start)
		return;
	if (madvise((void *) start, end - start, MADV_HUGEPAGE) != 0)
		elog(DEBUG1, "braidsort: huge pages not advised for shared buffers: %m");
	else
		elog(DEBUG1, "braidsort: huge pages advised for %zu MB of shared buffers",
			 (size_t) ((end - start) >> 20));
#endif
}
