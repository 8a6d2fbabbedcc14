/* SPDX-License-Identifier: MIT */
/*
 * qemu_exec.c - tests/aarch64.sh preloads this into the Criterion tests
 * that it runs under qemu-aarch64 (user mode).  Criterion starts each
 * test in a worker process that forks and execs the test program again
 * (BoxFort's execve of /proc/self/exe); under qemu-user that execve is
 * the host kernel's, which cannot start an aarch64 program without
 * binfmt_misc (absent in containers).  This execve starts it through the
 * same emulator ($LFPOOL_QEMU), keeping its argv[0] (qemu's -0) and this
 * preload (passed with -E and dropped from the environment: the host's
 * loader would refuse an aarch64 library with a warning).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_ARGS 64
#define MAX_ENV 256

int execve(const char *path, char *const argv[], char *const envp[])
{
	const char *qemu = getenv("LFPOOL_QEMU"), *preload = getenv("LD_PRELOAD");
	static char env_arg[4096];
	char *args[MAX_ARGS + 8], *env[MAX_ENV + 1];
	int n = 0, e = 0;

	if (!qemu || !preload || strlen(preload) + sizeof("LD_PRELOAD=") > sizeof(env_arg))
		return (int)syscall(SYS_execve, path, argv, envp);
	strcpy(env_arg, "LD_PRELOAD=");
	strcat(env_arg, preload);
	args[n++] = (char *)qemu;
	args[n++] = "-E";
	args[n++] = env_arg;
	args[n++] = "-0";
	args[n++] = argv[0] ? argv[0] : (char *)path;
	args[n++] = (char *)path;
	for (int i = 1; argv[0] && argv[i] && n < MAX_ARGS; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	for (int i = 0; envp[i] && e < MAX_ENV; i++)
		if (strncmp(envp[i], "LD_PRELOAD=", 11) != 0)
			env[e++] = envp[i];
	env[e] = NULL;
	return (int)syscall(SYS_execve, qemu, args, env);
}
