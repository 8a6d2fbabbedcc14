// SPDX-License-Identifier: MIT
//
// tbb.cc - lfpool inside oneTBB: tbb::task_group and tbb::parallel_for
// bodies whose jobs are pooled closures and whose scratch objects come from
// a ThreadStatic pool, both through worker-index caches keyed by the arena
// slot the body runs in.  Binding a thread to its cache:
//
//	caches[i] = lfpool_ts_worker_cache(pool, i);	// i < arena.max_concurrency()
//	obj = lfpool_ts_cache_get(caches[tbb::this_task_arena::current_thread_index()]);
//	lfpool_ts_cache_put(caches[tbb::this_task_arena::current_thread_index()], obj);
//
// A slot has one thread at a time, so its cache has one user at a time, as
// lfpool/ts.h asks.  A TBB task runs to its end on one thread (a
// wait runs other tasks on the same stack), so a body may keep its slot's
// cache until it returns; look it up again after tbb::task::suspend, which
// may resume on another thread.  One arena only: the index is per arena.
//
// The same workloads run with the pools, with new/delete and with TBB's
// scalable_allocator, in turn, in one process.  The run fails unless every
// job ran once and every object came back (stats: live 0; the allocators:
// as many frees as allocations).  It is also the test that lfpool's headers
// work in a C++ program: it is compiled with warnings as errors.
//
// Usage: tbb [--threads N] [--depth N] [--items N] [--reps N] [--jsonl FILE]
#include <lfpool.h>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/scalable_allocator.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

constexpr std::size_t kCapture = 32;

// A job: a closure and its captured bytes, laid out as lfpool's closure
// pool lays them out, whichever allocator made it.
struct Job {
	lfpool_closure head;
	unsigned char capture[kCapture];
};
static_assert(offsetof(Job, capture) == sizeof(lfpool_closure), "capture follows the closure");

// A job's working memory, taken and returned by the job itself.
struct Scratch {
	std::uint64_t words[32];
};

enum Alloc { kLfpool, kNewDelete, kTbbmalloc, kAllocs };
const char *const kAllocName[kAllocs] = { "lfpool-worker", "new-delete", "tbbmalloc" };

// Per arena slot: its caches, and allocations minus frees of either kind.
struct alignas(64) Worker {
	lfpool_ts_cache *jobs = nullptr;
	lfpool_ts_cache *scratch = nullptr;
	std::int64_t out = 0;
};

Alloc alloc;
lfpool_closure_pool *job_pool;
lfpool_ts *scratch_pool;
std::vector<Worker> workers;	// one per slot of the arena

Worker &me()
{
	int slot = tbb::this_task_arena::current_thread_index();
	if (slot < 0 || static_cast<std::size_t>(slot) >= workers.size()) {
		std::fprintf(stderr, "tbb: arena slot %d outside 0..%zu\n", slot, workers.size());
		std::abort();
	}
	return workers[static_cast<std::size_t>(slot)];
}

[[noreturn]] void out_of_memory(const char *what)
{
	std::perror(what);
	std::exit(1);
}

lfpool_closure *job_new(lfpool_closure_fn fn, const void *cap, std::size_t size)
{
	Worker &w = me();
	lfpool_closure *c = nullptr;
	if (alloc == kLfpool)
		c = lfpool_closure_get_cache(job_pool, w.jobs, fn, cap, size);
	else if (alloc == kNewDelete)
		c = lfpool_closure_arm(&(new Job)->head, fn, cap, size);
	else
		c = lfpool_closure_arm(&tbb::scalable_allocator<Job>().allocate(1)->head, fn, cap, size);
	if (!c)
		out_of_memory("tbb: job");
	w.out++;
	return c;
}

void job_delete(lfpool_closure *c)
{
	Worker &w = me();
	w.out--;
	if (alloc == kLfpool)
		lfpool_closure_release_cache(w.jobs, c);
	else if (alloc == kNewDelete)
		delete reinterpret_cast<Job *>(c);
	else
		tbb::scalable_allocator<Job>().deallocate(reinterpret_cast<Job *>(c), 1);
}

// Run a job wherever it landed, and free it into this thread's cache.
void job_run(lfpool_closure *c)
{
	lfpool_closure_invoke(c, nullptr);
	job_delete(c);
}

Scratch *scratch_get()
{
	Worker &w = me();
	void *s;
	if (alloc == kLfpool)
		s = lfpool_ts_cache_get(w.scratch);
	else if (alloc == kNewDelete)
		s = new Scratch;
	else
		s = tbb::scalable_allocator<Scratch>().allocate(1);
	if (!s)
		out_of_memory("tbb: scratch");
	w.out++;
	return static_cast<Scratch *>(s);
}

void scratch_put(Scratch *s)
{
	Worker &w = me();
	w.out--;
	if (alloc == kLfpool)
		lfpool_ts_cache_put(w.scratch, s);
	else if (alloc == kNewDelete)
		delete s;
	else
		tbb::scalable_allocator<Scratch>().deallocate(s, 1);
}

// Some work on the scratch object, so that it is touched.
std::uint64_t mix(Scratch *s, std::uint64_t seed)
{
	std::uint64_t h = seed;
	for (unsigned i = 0; i < 8; i++) {
		s->words[i] = h;
		h = h * 0x9e3779b97f4a7c15ull + i;
	}
	return s->words[7];
}

// ---- task_group: a recursive tree, each child a pooled closure ----

struct TreeCap {
	int depth;
	std::uint64_t *nodes;	// where the subtree's node count goes
};

void tree_node(int depth, std::uint64_t *nodes);

void tree_job(void *cap, void *)
{
	const TreeCap *t = static_cast<const TreeCap *>(cap);
	tree_node(t->depth, t->nodes);
}

void tree_node(int depth, std::uint64_t *nodes)
{
	Scratch *s = scratch_get();
	std::uint64_t left = 0, right = 0;
	mix(s, static_cast<std::uint64_t>(depth));
	if (depth > 0) {
		TreeCap l = { depth - 1, &left }, r = { depth - 1, &right };
		lfpool_closure *a = job_new(tree_job, &l, sizeof(l));
		lfpool_closure *b = job_new(tree_job, &r, sizeof(r));
		tbb::task_group tg;
		tg.run([a] { job_run(a); });
		tg.run([b] { job_run(b); });
		tg.wait();
	}
	*nodes = 1 + left + right;
	scratch_put(s);
}

// ---- parallel_for: a job per index ----

std::unique_ptr<std::atomic<unsigned char>[]> hits;

struct ItemCap {
	std::size_t i;
};

void item_job(void *cap, void *)
{
	std::size_t i = static_cast<const ItemCap *>(cap)->i;
	Scratch *s = scratch_get();
	mix(s, i);
	hits[i].fetch_add(1, std::memory_order_relaxed);
	scratch_put(s);
}

// ---- driver ----

struct Options {
	int threads = 2, depth = 14, reps = 5;
	std::size_t items = 200000;
	const char *jsonl = nullptr;
};

int failures;

void check(bool ok, const char *what)
{
	if (!ok) {
		std::fprintf(stderr, "tbb: FAILED (%s): %s\n", kAllocName[alloc], what);
		failures++;
	}
}

// Both workloads once with allocator a, in the arena; returns jobs per second.
double run_once(tbb::task_arena &arena, Alloc a, const Options &o)
{
	alloc = a;
	for (std::size_t i = 0; i < o.items; i++)
		hits[i].store(0, std::memory_order_relaxed);
	std::uint64_t nodes = 0;
	auto t0 = std::chrono::steady_clock::now();
	arena.execute([&] {
		tree_node(o.depth, &nodes);
		tbb::parallel_for(tbb::blocked_range<std::size_t>(0, o.items),
				  [](const tbb::blocked_range<std::size_t> &r) {
					  for (std::size_t i = r.begin(); i != r.end(); ++i) {
						  ItemCap cap = { i };
						  job_run(job_new(item_job, &cap, sizeof(cap)));
					  }
				  });
	});
	std::chrono::duration<double> secs = std::chrono::steady_clock::now() - t0;
	check(nodes == (2ull << o.depth) - 1, "task_group tree: every node ran exactly once");
	std::size_t bad = 0;
	for (std::size_t i = 0; i < o.items; i++)
		bad += hits[i].load(std::memory_order_relaxed) != 1;
	check(bad == 0, "parallel_for: every index ran exactly once");
	// The tree's child jobs (the root ran inline) and one per index.
	return static_cast<double>((2ull << o.depth) - 2 + o.items) / secs.count();
}

void check_stats(const lfpool_stats &st, const char *what)
{
	std::printf("tbb: %s: created %llu, retained %llu, live %llu\n", what,
		    static_cast<unsigned long long>(st.created),
		    static_cast<unsigned long long>(st.retained),
		    static_cast<unsigned long long>(st.live));
	check(st.live == 0 && st.created == st.retained, what);
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	std::size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One line per allocator: ns per job (median, min, max) and jobs/s.
bool write_rows(const Options &o, const std::vector<double> (&rate)[kAllocs])
{
	std::FILE *f = std::fopen(o.jsonl, "a");
	if (!f) {
		std::perror(o.jsonl);
		return false;
	}
	for (int a = 0; a < kAllocs; a++) {
		double med = median(rate[a]);
		auto mm = std::minmax_element(rate[a].begin(), rate[a].end());
		std::fprintf(f, "{\"impl\":\"%s\",\"pattern\":\"jobs-tbb\",\"threads\":%d,"
			     "\"obj_size\":%zu,\"ns_per_op\":%.3f,\"min\":%.3f,\"max\":%.3f,"
			     "\"reps\":%d,\"jobs_per_s\":%.0f}\n",
			     kAllocName[a], o.threads, sizeof(Job), 1e9 / med, 1e9 / *mm.second,
			     1e9 / *mm.first, o.reps, med);
	}
	return std::fclose(f) == 0;
}

bool parse(int argc, char **argv, Options &o)
{
	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
			o.threads = std::atoi(argv[++i]);
		else if (!std::strcmp(argv[i], "--depth") && i + 1 < argc)
			o.depth = std::atoi(argv[++i]);
		else if (!std::strcmp(argv[i], "--items") && i + 1 < argc)
			o.items = std::strtoull(argv[++i], nullptr, 10);
		else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
			o.reps = std::atoi(argv[++i]);
		else if (!std::strcmp(argv[i], "--jsonl") && i + 1 < argc)
			o.jsonl = argv[++i];
		else
			return false;
	}
	if (o.threads < 1 || o.threads > static_cast<int>(LFPOOL_TS_WORKERS_MAX) || o.depth < 0 ||
	    o.depth > 24 || o.items == 0 || o.reps < 1) {
		std::fprintf(stderr, "tbb: bad option value\n");
		return false;
	}
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	if (!parse(argc, argv, o)) {
		std::fprintf(stderr, "usage: %s [--threads N] [--depth N] [--items N] [--reps N] "
			     "[--jsonl FILE]\n", argv[0]);
		return 2;
	}
	// o.threads in the arena even beyond the CPUs (oversubscribed runs).
	tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
					static_cast<std::size_t>(o.threads));
	tbb::task_arena arena(o.threads);
	arena.initialize();

	lfpool_config jc = lfpool_config();
	jc.obj_size = kCapture;
	jc.name = "jobs";
	lfpool_config sc = lfpool_config();
	sc.obj_size = sizeof(Scratch);
	sc.name = "scratch";
	job_pool = lfpool_closure_pool_create(LFPOOL_FLAVOUR_TS, &jc);
	scratch_pool = lfpool_ts_create(&sc);
	if (!job_pool || !scratch_pool)
		out_of_memory("tbb: pools");
	// Bind: slot i of each pool is arena slot i's cache.
	workers.resize(static_cast<std::size_t>(arena.max_concurrency()));
	for (std::size_t i = 0; i < workers.size(); i++) {
		unsigned slot = static_cast<unsigned>(i);
		workers[i].jobs = lfpool_ts_worker_cache(lfpool_closure_pool_ts(job_pool), slot);
		workers[i].scratch = lfpool_ts_worker_cache(scratch_pool, slot);
		if (!workers[i].jobs || !workers[i].scratch)
			out_of_memory("tbb: worker caches");
	}
	hits.reset(new std::atomic<unsigned char>[o.items]);

	// A warm-up run of each, then reps of all three, the first of each rep
	// rotating so that drift in the machine's load hits them alike.
	std::vector<double> rate[kAllocs];
	for (int a = 0; a < kAllocs; a++)
		run_once(arena, static_cast<Alloc>(a), o);
	for (int r = 0; r < o.reps; r++)
		for (int k = 0; k < kAllocs; k++) {
			Alloc a = static_cast<Alloc>((r + k) % kAllocs);
			rate[a].push_back(run_once(arena, a, o));
		}

	alloc = kLfpool;
	std::int64_t out = 0;
	for (const Worker &w : workers)
		out += w.out;
	check(out == 0, "every object allocated was freed (all three allocators)");
	lfpool_stats st;
	lfpool_closure_pool_stats(job_pool, &st);
	check_stats(st, "jobs: every closure came back");
	lfpool_ts_stats(scratch_pool, &st);
	check_stats(st, "scratch: every object came back");
	check(lfpool_closure_pool_destroy(job_pool) == 0 && lfpool_ts_destroy(scratch_pool) == 0,
	      "pools destroyed");

	std::printf("jobs-tbb: %d threads (arena of %d), tree depth %d, parallel_for of %zu jobs, "
		    "%d reps\n", o.threads, arena.max_concurrency(), o.depth, o.items, o.reps);
	std::printf("jobs-tbb: lfpool %.2f M jobs/s, new/delete %.2f M jobs/s, tbbmalloc %.2f M jobs/s\n",
		    median(rate[kLfpool]) / 1e6, median(rate[kNewDelete]) / 1e6,
		    median(rate[kTbbmalloc]) / 1e6);
	for (int a = kNewDelete; a < kAllocs; a++) {
		std::vector<double> ratio;
		for (int r = 0; r < o.reps; r++)
			ratio.push_back(rate[kLfpool][r] / rate[a][r]);
		auto mm = std::minmax_element(ratio.begin(), ratio.end());
		std::printf("jobs-tbb: ratio lfpool/%s %.2f (%.2f..%.2f)\n", kAllocName[a],
			    median(ratio), *mm.first, *mm.second);
	}
	if (o.jsonl && !write_rows(o, rate))
		return 1;
	return failures ? 1 : 0;
}
