/* SPDX-License-Identifier: MIT */
/*
 * options.c - the command line both stress programs share.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "stress.h"

/* Print the usage and exit with status. */
static void usage(const char *prog, int status)
{
	fprintf(status ? stderr : stdout,
		"usage: %s [--seconds S] [--threads N] [--seed N] [--min-ops N] [--only SCENARIO]\n"
		"  --seconds S    time per scenario and flavour (default 2; the negative\n"
		"                 control's time limit to catch the broken stack)\n"
		"  --threads N    worker threads (default 4, at most %d)\n"
		"  --seed N       seeds every random choice (default 1)\n"
		"  --min-ops N    fail unless gets + puts reach N in total\n"
		"  --only NAME    run only the scenario NAME\n"
		"  --progress     show the progress line (on stderr) even when stdout is\n"
		"                 not a terminal\n",
		prog, STRESS_MAX_THREADS);
	exit(status);
}

void parse_options(int argc, char **argv, struct options *opt, const char **only)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' }, { "threads", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'r' },    { "min-ops", required_argument, NULL, 'm' },
		{ "only", required_argument, NULL, 'o' },    { "progress", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*opt = (struct options){ .seconds = 2, .threads = 4, .seed = 1,
				 .progress = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) };
	*only = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': opt->seconds = strtod(optarg, NULL); break;
		case 't': opt->threads = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': opt->seed = strtoull(optarg, NULL, 0); break;
		case 'm': opt->min_ops = strtoull(optarg, NULL, 0); break;
		case 'o': *only = optarg; break;
		case 'p': opt->progress = true; break;
		case 'h': usage(argv[0], 0); break;
		default: usage(argv[0], 2);
		}
	}
	if (optind != argc || opt->seconds < 0 || opt->threads < 1 ||
	    opt->threads > STRESS_MAX_THREADS)
		usage(argv[0], 2);
}
