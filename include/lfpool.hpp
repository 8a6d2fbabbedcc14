// SPDX-License-Identifier: MIT
/*
 * lfpool.hpp - C++17 over the C API of <lfpool.h>, header-only.
 *
 *   lfpool::object_pool<T, Flavour>  a pool of T: make() returns a
 *                                    std::unique_ptr whose deleter runs ~T
 *                                    and puts the object back; construct()
 *                                    and destroy() do the same by hand
 *   lfpool::Pool, Concurrent,        the flavour, a template argument (the
 *   ThreadStatic                     default is ThreadStatic)
 *   lfpool::array_pool<Flavour>      byte buffers in size classes
 *   lfpool::allocator<T>             a std::allocator-compatible adapter
 *                                    over an array pool (std::vector,
 *                                    std::basic_string, node containers)
 *   lfpool::memory_resource          a std::pmr::memory_resource over one
 *
 * Errors are exceptions: a pool that cannot be created throws
 * std::system_error with the errno of the C call; make() and construct()
 * throw std::system_error (ENOBUFS at capacity, ENOMEM) and let T's
 * constructor's exception through after giving the memory back;
 * allocator<T>::allocate throws std::bad_alloc, as allocators must.  The
 * try_make() form returns an empty pointer instead, errno set, for code
 * built without exceptions (T's constructor must not throw there).
 *
 * Thread safety is the flavour's (lfpool_pool(3), lfpool_concurrent(3),
 * lfpool_ts(3)): an object_pool<T, Pool> belongs to one thread at a time;
 * the others may be used, and their objects deleted, on any threads.  A
 * unique_ptr from make() holds the C pool, not the object_pool: it stays
 * valid when the object_pool is moved, and must not outlive it.
 *
 * The C hooks of lfpool_config (init, reset, fini) see raw bytes: T's
 * constructor and destructor run in make() and the deleter, not there.
 */
#ifndef LFPOOL_HPP
#define LFPOOL_HPP

#include <lfpool.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <system_error>
#include <type_traits>
#include <utility>

#if __has_include(<memory_resource>)
# include <memory_resource>
#endif

namespace lfpool {

namespace detail {
[[noreturn]] inline void throw_errno(const char *what)
{
	throw std::system_error(errno, std::generic_category(), what);
}
} // namespace detail

// The flavours: each names its C pool type and calls (lfpool_<fl>_*), for
// the templates below.
#define LFPOOL_HPP_FLAVOUR_(Name, fl, ID)								\
	struct Name {											\
		using handle = lfpool_##fl;								\
		static constexpr lfpool_flavour id = ID;						\
		static handle *create(const lfpool_config *c) { return lfpool_##fl##_create(c); }	\
		static int destroy(handle *h) { return lfpool_##fl##_destroy(h); }			\
		static void *get(handle *h) { return lfpool_##fl##_get(h); }				\
		static void put(handle *h, void *o) { lfpool_##fl##_put(h, o); }			\
		static int prewarm(handle *h, std::size_t n) { return lfpool_##fl##_prewarm(h, n); }	\
		static std::size_t trim(handle *h, std::size_t k) { return lfpool_##fl##_trim(h, k); }	\
		static void stats(const handle *h, lfpool_stats *st) { lfpool_##fl##_stats(h, st); }	\
		static bool owns(const handle *h, const void *p)					\
		{											\
			return lfpool_##fl##_owns(h, p) != 0;						\
		}											\
	}
LFPOOL_HPP_FLAVOUR_(Pool, pool, LFPOOL_FLAVOUR_POOL);
LFPOOL_HPP_FLAVOUR_(Concurrent, concurrent, LFPOOL_FLAVOUR_CONCURRENT);
LFPOOL_HPP_FLAVOUR_(ThreadStatic, ts, LFPOOL_FLAVOUR_TS);
#undef LFPOOL_HPP_FLAVOUR_

// Runs ~T and puts the object back into the C pool it holds.
template <class T, class Flavour>
struct pool_deleter {
	typename Flavour::handle *pool = nullptr;

	void operator()(T *obj) const noexcept
	{
		obj->~T();
		Flavour::put(pool, obj);
	}
};

template <class T, class Flavour = ThreadStatic>
class object_pool {
	static_assert(std::is_object<T>::value && !std::is_array<T>::value,
		      "object_pool<T>: T must be a complete object type, not an array");

public:
	using value_type = T;
	using flavour = Flavour;
	using handle = typename Flavour::handle;
	using deleter = pool_deleter<T, Flavour>;
	using pointer = std::unique_ptr<T, deleter>;

	// A pool of T per cfg: obj_size 0 (or sizeof(T)), align 0 means
	// alignof(T); hooks, capacity, prewarm, flags as in lfpool_config(3).
	// Throws std::system_error (EINVAL, ENOMEM).
	explicit object_pool(const lfpool_config &cfg = lfpool_config())
	{
		lfpool_config c = cfg;
		if (c.obj_size != 0 && c.obj_size != sizeof(T)) {
			errno = EINVAL;
			detail::throw_errno("lfpool::object_pool: obj_size is not sizeof(T)");
		}
		c.obj_size = sizeof(T);
		if (c.align == 0)
			c.align = alignof(T);
		pool_ = Flavour::create(&c);
		if (pool_ == nullptr)
			detail::throw_errno("lfpool::object_pool: create");
	}

	object_pool(const object_pool &) = delete;
	object_pool &operator=(const object_pool &) = delete;
	object_pool(object_pool &&o) noexcept : pool_(std::exchange(o.pool_, nullptr)) {}
	object_pool &operator=(object_pool &&o) noexcept
	{
		if (this != &o) {
			close();
			pool_ = std::exchange(o.pool_, nullptr);
		}
		return *this;
	}
	// Destroys the pool; every object must have been given back.
	~object_pool() { close(); }

	// Destroy the pool now: 0, or -1 with errno as the flavour's destroy
	// (ThreadStatic: EBUSY while explicit caches exist; the pool stays).
	int close() noexcept
	{
		if (pool_ == nullptr || Flavour::destroy(pool_) != 0)
			return pool_ == nullptr ? 0 : -1;
		pool_ = nullptr;
		return 0;
	}

	// A T constructed from args in a pooled object.
	template <class... Args>
	pointer make(Args &&...args)
	{
		return pointer(construct(std::forward<Args>(args)...), deleter{pool_});
	}

	// As make(), an empty pointer with errno set when the pool has no object.
	template <class... Args>
	pointer try_make(Args &&...args)
	{
		void *mem = Flavour::get(pool_);
		if (mem == nullptr)
			return pointer(nullptr, deleter{pool_});
		return pointer(build(mem, std::forward<Args>(args)...), deleter{pool_});
	}

	// As make(), a plain pointer: give it back with destroy().
	template <class... Args>
	T *construct(Args &&...args)
	{
		void *mem = Flavour::get(pool_);
		if (mem == nullptr)
			detail::throw_errno("lfpool::object_pool: get");
		return build(mem, std::forward<Args>(args)...);
	}

	// Run ~T and give obj back; nullptr: no-op.
	void destroy(T *obj) noexcept
	{
		if (obj != nullptr)
			deleter{pool_}(obj);
	}

	// Create n more objects (raw, unconstructed) ahead of use.
	void prewarm(std::size_t n)
	{
		if (Flavour::prewarm(pool_, n) != 0)
			detail::throw_errno("lfpool::object_pool: prewarm");
	}
	std::size_t trim(std::size_t keep = 0) noexcept { return Flavour::trim(pool_, keep); }
	lfpool_stats stats() const noexcept
	{
		lfpool_stats st;
		Flavour::stats(pool_, &st);
		return st;
	}
	bool owns(const void *p) const noexcept { return Flavour::owns(pool_, p); }
	// The C pool, for the rest of the flavour's API (caches, drain).
	handle *native() const noexcept { return pool_; }

private:
	handle *pool_ = nullptr;

	// Construct in mem; a constructor's exception puts mem back first.
	template <class... Args>
	T *build(void *mem, Args &&...args)
	{
		try {
			return ::new (mem) T(std::forward<Args>(args)...);
		} catch (...) {
			Flavour::put(pool_, mem);
			throw;
		}
	}
};

// Byte buffers in power-of-two size classes (lfpool_array(3)), each class
// a pool of Flavour.
template <class Flavour = ThreadStatic>
class array_pool {
public:
	using flavour = Flavour;

	// Throws std::system_error (EINVAL, ENOMEM).
	explicit array_pool(const lfpool_array_config &cfg = lfpool_array_config())
		: align_(cfg.align != 0 ? cfg.align : 16)
	{
		pool_ = lfpool_array_create(Flavour::id, &cfg);
		if (pool_ == nullptr)
			detail::throw_errno("lfpool::array_pool: create");
	}
	array_pool(const array_pool &) = delete;
	array_pool &operator=(const array_pool &) = delete;
	array_pool(array_pool &&o) noexcept
		: pool_(std::exchange(o.pool_, nullptr)), align_(o.align_) {}
	array_pool &operator=(array_pool &&o) noexcept
	{
		if (this != &o) {
			lfpool_array_destroy(pool_);
			pool_ = std::exchange(o.pool_, nullptr);
			align_ = o.align_;
		}
		return *this;
	}
	// Destroys every class: every buffer must have been given back.
	~array_pool() { lfpool_array_destroy(pool_); }

	// At least n bytes (*real: how many), or nullptr with errno.
	void *get(std::size_t n, std::size_t *real = nullptr) noexcept
	{
		return lfpool_array_get(pool_, n, real);
	}
	void put(void *buf) noexcept { lfpool_array_put(pool_, buf); }
	void put(void *buf, std::size_t n) noexcept { lfpool_array_put_sized(pool_, buf, n); }
	std::size_t trim(std::size_t keep = 0) noexcept { return lfpool_array_trim(pool_, keep); }
	// Every buffer's alignment (the config's align, 0: 16).
	std::size_t alignment() const noexcept { return align_; }
	lfpool_array *native() const noexcept { return pool_; }

private:
	lfpool_array *pool_ = nullptr;
	std::size_t align_ = 16;
};

namespace detail {
// n elements of size bytes each, within SIZE_MAX; else std::bad_alloc.
inline std::size_t array_bytes(std::size_t n, std::size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		throw std::bad_array_new_length();
	return n * size;
}

// A buffer of bytes aligned to align from ap; std::bad_alloc otherwise
// (the pool's failure, or an alignment above the pool's).
inline void *array_alloc(lfpool_array *ap, std::size_t pool_align, std::size_t bytes,
			 std::size_t align)
{
	if (align > pool_align)
		throw std::bad_alloc();
	void *p = lfpool_array_get(ap, bytes != 0 ? bytes : 1, nullptr);
	if (p == nullptr)
		throw std::bad_alloc();
	return p;
}
} // namespace detail

// A std::allocator-compatible adapter: allocate(n) takes a buffer of n
// objects from the array pool, deallocate(p, n) gives it back by size.
// Two allocators compare equal when they use the same array pool; the
// allocator follows a container on copy, move and swap.  Thread safety:
// the array pool's flavour's.
template <class T>
class allocator {
public:
	using value_type = T;
	using propagate_on_container_copy_assignment = std::true_type;
	using propagate_on_container_move_assignment = std::true_type;
	using propagate_on_container_swap = std::true_type;
	using is_always_equal = std::false_type;

	template <class Flavour>
	allocator(array_pool<Flavour> &pool) noexcept // NOLINT: implicit by design
		: pool_(pool.native()), align_(pool.alignment()) {}
	allocator(lfpool_array *pool, std::size_t align) noexcept : pool_(pool), align_(align) {}
	template <class U>
	allocator(const allocator<U> &o) noexcept : pool_(o.native()), align_(o.alignment()) {}

	T *allocate(std::size_t n)
	{
		std::size_t bytes = detail::array_bytes(n, sizeof(T));
		return static_cast<T *>(detail::array_alloc(pool_, align_, bytes, alignof(T)));
	}
	void deallocate(T *p, std::size_t n) noexcept
	{
		lfpool_array_put_sized(pool_, p, n * sizeof(T) != 0 ? n * sizeof(T) : 1);
	}

	lfpool_array *native() const noexcept { return pool_; }
	std::size_t alignment() const noexcept { return align_; }

private:
	lfpool_array *pool_;
	std::size_t align_;
};

template <class T, class U>
bool operator==(const allocator<T> &a, const allocator<U> &b) noexcept
{
	return a.native() == b.native();
}
template <class T, class U>
bool operator!=(const allocator<T> &a, const allocator<U> &b) noexcept
{
	return !(a == b);
}

#if defined(__cpp_lib_memory_resource)
// A std::pmr::memory_resource over an array pool: do_allocate throws
// std::bad_alloc for an alignment above the pool's (a
// std::pmr::polymorphic_allocator asks for alignof(T)).
class memory_resource : public std::pmr::memory_resource {
public:
	template <class Flavour>
	explicit memory_resource(array_pool<Flavour> &pool) noexcept
		: pool_(pool.native()), align_(pool.alignment()) {}

private:
	lfpool_array *pool_;
	std::size_t align_;

	void *do_allocate(std::size_t bytes, std::size_t align) override
	{
		return detail::array_alloc(pool_, align_, bytes, align);
	}
	void do_deallocate(void *p, std::size_t bytes, std::size_t) override
	{
		lfpool_array_put_sized(pool_, p, bytes != 0 ? bytes : 1);
	}
	bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override
	{
		return this == &o;	// no RTTI needed; a copy is another resource
	}
};
#endif

} // namespace lfpool

#endif
