// SPDX-License-Identifier: MIT
// test_hpp.cc - lfpool.hpp, the C++17 header: object_pool's make,
// construct and destroy run constructors and destructors and give every
// object back (a constructor's exception too), in each flavour; errors are
// exceptions (or an empty pointer with errno from try_make); the
// allocator serves std::vector, std::basic_string and node containers from
// an array pool, and memory_resource std::pmr containers.  Built and run
// by tests/cxx-header.sh with g++ and clang++, plain and under ASan.
#include <lfpool.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <list>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static int failures;

#define CHECK(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			std::fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                 \
		}                                                                   \
	} while (0)

namespace {

int alive;	// Counted objects constructed and not yet destroyed.

struct counted {
	long value;
	std::string name;	// owns heap memory: ASan sees a missed destructor
	explicit counted(long v, const char *n = "counted") : value(v), name(n) { alive++; }
	counted(const counted &) = delete;
	~counted() { alive--; }
};

struct throws {
	explicit throws(bool fail)
	{
		if (fail)
			throw std::runtime_error("constructor failed");
	}
};

struct alignas(64) wide {
	unsigned char bytes[64];
};

template <class Flavour>
std::uint64_t live_of(const lfpool::object_pool<counted, Flavour> &p)
{
	return p.stats().live;
}

// make, construct and destroy on one flavour.
template <class Flavour>
void objects()
{
	lfpool::object_pool<counted, Flavour> pool;
	{
		auto a = pool.make(7, "seven");
		auto b = pool.make(8);
		CHECK(a->value == 7 && a->name == "seven" && b->value == 8);
		CHECK(alive == 2 && live_of(pool) == 2);
		CHECK(pool.owns(a.get()) && !pool.owns(&alive));
	}
	CHECK(alive == 0 && live_of(pool) == 0);
	counted *c = pool.construct(9);
	CHECK(c->value == 9 && alive == 1);
	pool.destroy(c);
	pool.destroy(nullptr);
	CHECK(alive == 0 && live_of(pool) == 0);

	// A moved pool keeps its objects' deleters valid.
	auto d = pool.make(10);
	lfpool::object_pool<counted, Flavour> moved(std::move(pool));
	CHECK(pool.native() == nullptr && moved.owns(d.get()));
	d.reset();
	CHECK(alive == 0 && live_of(moved) == 0);
	// Pooled objects of Pool and Concurrent are the pool's to trim;
	// ThreadStatic's stay in this thread's cache.
	if (!std::is_same<Flavour, lfpool::ThreadStatic>::value)
		CHECK(moved.trim(0) > 0);
	CHECK(moved.close() == 0 && moved.close() == 0);
}

// A constructor's exception gives the object back, and goes on.
template <class Flavour>
void constructor_throws()
{
	lfpool::object_pool<throws, Flavour> pool;
	bool caught = false;
	try {
		auto p = pool.make(true);
	} catch (const std::runtime_error &) {
		caught = true;
	}
	CHECK(caught);
	CHECK(pool.stats().live == 0);
	caught = false;
	try {
		pool.construct(true);
	} catch (const std::runtime_error &) {
		caught = true;
	}
	CHECK(caught && pool.stats().live == 0);
	auto ok = pool.make(false);
	CHECK(ok != nullptr && pool.stats().live == 1);
}

// At capacity: make throws ENOBUFS, try_make returns empty with errno.
template <class Flavour>
void capacity()
{
	lfpool_config cfg = lfpool_config();
	cfg.capacity = 1;
	lfpool::object_pool<counted, Flavour> pool(cfg);
	auto one = pool.make(1);
	int err = 0;
	try {
		pool.make(2);
	} catch (const std::system_error &e) {
		err = e.code().value();
	}
	CHECK(err == ENOBUFS);
	errno = 0;
	auto none = pool.try_make(3);
	CHECK(none == nullptr && errno == ENOBUFS && alive == 1);
	one.reset();
	CHECK(pool.try_make(4) != nullptr);
	CHECK(alive == 0);
}

// Objects made on one thread are deleted on others.
template <class Flavour>
void across_threads()
{
	lfpool::object_pool<counted, Flavour> pool;
	std::vector<typename lfpool::object_pool<counted, Flavour>::pointer> made;
	for (int i = 0; i < 100; i++)
		made.push_back(pool.make(i));
	std::thread t([&made] { made.clear(); });
	t.join();
	CHECK(alive == 0 && pool.stats().live == 0);
}

template <class Flavour>
void flavour(const char *name)
{
	int before = failures;
	objects<Flavour>();
	constructor_throws<Flavour>();
	capacity<Flavour>();
	std::printf("%s: %s\n", before == failures ? "ok" : "FAIL", name);
}

void config_errors()
{
	lfpool_config cfg = lfpool_config();
	cfg.obj_size = sizeof(counted) + 1;
	int err = 0;
	try {
		lfpool::object_pool<counted, lfpool::Pool> pool(cfg);
	} catch (const std::system_error &e) {
		err = e.code().value();
	}
	CHECK(err == EINVAL);
	lfpool::object_pool<wide, lfpool::Concurrent> wides;
	auto w = wides.make();
	CHECK(reinterpret_cast<std::uintptr_t>(w.get()) % 64 == 0);
}

template <class T>
using pool_vector = std::vector<T, lfpool::allocator<T>>;
using pool_string = std::basic_string<char, std::char_traits<char>, lfpool::allocator<char>>;

std::uint64_t array_live(const lfpool::array_pool<lfpool::ThreadStatic> &ap)
{
	lfpool_stats st;
	CHECK(lfpool_array_stats(ap.native(), 0, &st) == 0);
	return st.live;
}

void allocators()
{
	lfpool::array_pool<lfpool::ThreadStatic> ap;
	lfpool::allocator<int> ints(ap);
	{
		pool_vector<int> v(ints);
		for (int i = 0; i < 10000; i++)
			v.push_back(i);
		CHECK(v[9999] == 9999 && array_live(ap) == 1);
		pool_string s("a string well beyond the small-string buffer of any library",
			      lfpool::allocator<char>(ap));
		s += s;
		CHECK(s.size() == 118 && array_live(ap) == 2);
		std::list<int, lfpool::allocator<int>> l(ints);
		std::map<int, int, std::less<int>, lfpool::allocator<std::pair<const int, int>>> m(ints);
		for (int i = 0; i < 100; i++) {
			l.push_back(i);
			m[i] = i;
		}
		CHECK(l.size() == 100 && m.size() == 100 && array_live(ap) == 202);
		pool_vector<int> w(ints);
		w = v;
		CHECK(w.get_allocator() == ints && w.size() == v.size());
	}
	CHECK(array_live(ap) == 0);
	lfpool::array_pool<lfpool::Pool> other;
	CHECK(lfpool::allocator<int>(other) != ints);
	CHECK(lfpool::allocator<long>(ints) == ints);
	lfpool::allocator<wide> wides(ap);	// the pool's buffers: 16-byte aligned
	bool refused = false;
	try {
		wides.allocate(1);
	} catch (const std::bad_alloc &) {
		refused = true;
	}
	CHECK(refused);
	refused = false;
	try {
		ints.allocate(SIZE_MAX / 2);
	} catch (const std::bad_alloc &) {
		refused = true;
	}
	CHECK(refused);
#if defined(__cpp_lib_memory_resource)
	lfpool::memory_resource res(ap);
	{
		std::pmr::vector<std::pmr::string> names(&res);
		for (int i = 0; i < 100; i++)
			names.emplace_back(std::pmr::string(80, 'x'));
		CHECK(names[99].size() == 80 && array_live(ap) == 101);
		CHECK(res.is_equal(res) && !res.is_equal(*std::pmr::new_delete_resource()));
	}
	CHECK(array_live(ap) == 0);
	refused = false;
	try {
		(void)res.allocate(64, 4096);
	} catch (const std::bad_alloc &) {
		refused = true;
	}
	CHECK(refused);
#endif
	std::printf("%s: allocators\n", failures ? "FAIL" : "ok");
}

} // namespace

int main()
{
	flavour<lfpool::Pool>("Pool");
	flavour<lfpool::Concurrent>("Concurrent");
	flavour<lfpool::ThreadStatic>("ThreadStatic");
	across_threads<lfpool::Concurrent>();
	across_threads<lfpool::ThreadStatic>();
	config_errors();
	allocators();
	return failures == 0 ? 0 : 1;
}
