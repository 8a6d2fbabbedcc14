/* SPDX-License-Identifier: MIT */
/*
 * report.c - the results of a run: tables on stdout, JSON lines in a file.
 */
#include <stdio.h>

#include "bench.h"

static bool same_group(const struct result *a, const struct result *b)
{
	return a->pattern == b->pattern && a->threads == b->threads &&
	       a->obj_size == b->obj_size;
}

/* Each lfpool flavour's time over each peer's: below 1, lfpool is faster. */
static void print_ratios(const struct result *res, size_t n, const struct result *g)
{
	printf("  %-20s", "lfpool/peer time");
	for (size_t p = 0; p < n; p++)
		if (same_group(&res[p], g) && !res[p].impl->lfpool)
			printf(" %10s", res[p].impl->name);
	printf("\n");
	for (size_t l = 0; l < n; l++) {
		if (!same_group(&res[l], g) || !res[l].impl->lfpool)
			continue;
		printf("  %-20s", res[l].impl->name);
		for (size_t p = 0; p < n; p++)
			if (same_group(&res[p], g) && !res[p].impl->lfpool)
				printf(" %10.2f", res[l].ns / res[p].ns);
		printf("\n");
	}
}

static void print_group(const struct result *res, size_t n, const struct result *g)
{
	printf("\n== %s, %zu B, %u thread%s: ns per get or put on each thread"
	       " (median of %u, min..max)\n", pattern_names[g->pattern], g->obj_size,
	       g->threads, g->threads > 1 ? "s" : "", g->reps);
	bool ours = false, peers = false;
	for (size_t i = 0; i < n; i++) {
		if (!same_group(&res[i], g))
			continue;
		printf("  %-20s %8.2f  (%.2f..%.2f)", res[i].impl->name, res[i].ns,
		       res[i].min, res[i].max);
		if (res[i].eliminated >= 0)
			printf("  eliminated %.4f %%, failed CAS %.4f per op",
			       100 * res[i].eliminated, res[i].cas_failed);
		printf("\n");
		ours |= res[i].impl->lfpool;
		peers |= !res[i].impl->lfpool;
	}
	if (ours && peers)
		print_ratios(res, n, g);
}

void report_tables(const struct result *res, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && !same_group(&res[j], &res[i]))
			j++;
		if (j == i)
			print_group(res, n, &res[i]);
	}
}

int report_jsonl(const char *path, const struct result *res, size_t n)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &res[i];
		fprintf(f, "{\"impl\":\"%s\",\"pattern\":\"%s\",\"threads\":%u,\"obj_size\":%zu,"
			"\"ns_per_op\":%.3f,\"min\":%.3f,\"max\":%.3f,\"reps\":%u,"
			"\"ops_per_rep\":%llu,\"mops_total\":%.2f",
			r->impl->name, pattern_names[r->pattern], r->threads, r->obj_size,
			r->ns, r->min, r->max, r->reps, (unsigned long long)r->ops,
			r->threads * 1e3 / r->ns);
		if (r->eliminated >= 0)
			fprintf(f, ",\"eliminated\":%.6f,\"cas_failed_per_op\":%.6f", r->eliminated,
				r->cas_failed);
		fprintf(f, "}\n");
	}
	return fclose(f);
}
