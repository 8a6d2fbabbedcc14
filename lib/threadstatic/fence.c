/* SPDX-License-Identifier: MIT */
/*
 * fence.c - membarrier registration and the heavy fence (fence.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "fence.h"

#ifdef __linux__
# include <linux/membarrier.h>
#endif

enum { FENCE_MPROTECT, FENCE_MEMBARRIER, FENCE_MEMBARRIER_RSEQ };

static pthread_once_t fence_once = PTHREAD_ONCE_INIT;
static int fence_kind = FENCE_MPROTECT;
static pthread_mutex_t page_lock = PTHREAD_MUTEX_INITIALIZER;
static char *page;

#ifdef __linux__
static int membarrier(int cmd, unsigned flags)
{
	return (int)syscall(__NR_membarrier, cmd, flags, 0);
}
#endif

static void fence_register(void)
{
#ifdef __linux__
	int cmds = membarrier(MEMBARRIER_CMD_QUERY, 0);
	if (cmds < 0)
		return;
	bool expedited = (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
			 membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0;
	if (expedited)
		fence_kind = FENCE_MEMBARRIER;
	if ((cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) &&
	    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0) == 0)
		fence_kind = FENCE_MEMBARRIER_RSEQ;
#endif
}

bool lfp_fence_init(void)
{
	pthread_once(&fence_once, fence_register);
	return fence_kind == FENCE_MEMBARRIER_RSEQ;
}

/* Changing a page's protection makes the kernel flush its TLB entry on every
 * CPU that may cache it (an IPI to each CPU running this process), and the
 * interrupt orders that CPU's earlier memory accesses before its later ones. */
static void fence_mprotect(void)
{
	pthread_mutex_lock(&page_lock);
	if (!page) {
		void *m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		page = m == MAP_FAILED ? NULL : m;
	}
	if (page) {
		mprotect(page, 1, PROT_READ | PROT_WRITE);
		*(volatile char *)page = 0;	/* the page must be in the TLB */
		mprotect(page, 1, PROT_READ);
	}
	pthread_mutex_unlock(&page_lock);
}

void lfp_fence_heavy(void)
{
	lfp_fence_init();
#ifdef __linux__
	if (fence_kind == FENCE_MEMBARRIER_RSEQ &&
	    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0) == 0)
		return;
	if (fence_kind >= FENCE_MEMBARRIER && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0)
		return;
#endif
	fence_mprotect();
}

const char *lfp_fence_kind(void)
{
	lfp_fence_init();
	static const char *const names[] = { "mprotect", "membarrier", "membarrier-rseq" };
	return names[fence_kind];
}
