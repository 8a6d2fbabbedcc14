/* SPDX-License-Identifier: MIT */
/*
 * peer.c - loading a peer allocator at run time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/*
 * jemalloc keeps about 2.6 KiB of initial-exec TLS, more than the surplus
 * that glibc reserves for libraries opened later (dlopen fails with "cannot
 * allocate memory in static TLS block").  The tunable enlarges the surplus;
 * glibc reads it only at start-up, hence the re-execution.
 */
#define TLS_TUNABLE "glibc.rtld.optional_static_tls"
#define TLS_SETTING TLS_TUNABLE "=16384"

void peer_tls_reexec(char **argv)
{
	const char *t = getenv("GLIBC_TUNABLES");
	if (t && strstr(t, TLS_TUNABLE))
		return;
	char buf[2048];
	snprintf(buf, sizeof(buf), "%s%s" TLS_SETTING, t ? t : "", t ? ":" : "");
	setenv("GLIBC_TUNABLES", buf, 1);
	execv("/proc/self/exe", argv);
	/* No re-execution: carry on, jemalloc will report why it is missing. */
}

int peer_load(const char *lib, const char *const *names, void **fns, size_t n,
	      const char **why)
{
	static char msg[512];
	/* LOCAL: the peer's malloc replaces nobody's; DEEPBIND: the peer's
	 * own calls to malloc reach its own.  Never closed: an allocator
	 * cannot be unloaded while threads may hold its caches. */
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (!h) {
		snprintf(msg, sizeof(msg), "%s", dlerror());
		*why = msg;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		fns[i] = dlsym(h, names[i]);
		if (!fns[i]) {
			snprintf(msg, sizeof(msg), "%s: no symbol %s", lib, names[i]);
			*why = msg;
			return -1;
		}
	}
	return 0;
}
