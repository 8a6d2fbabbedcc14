// SPDX-License-Identifier: MIT
// cxx.cc - lfpool from C++ (lfpool.hpp): a pool of messages shared by
// threads, each message a std::unique_ptr that goes back to the pool when
// dropped, and a std::vector whose buffers come from an array pool.
#include <lfpool.hpp>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

struct message {
	int id;
	std::string text;
	message(int i, std::string t) : id(i), text(std::move(t)) {}
};

int main()
{
	// ThreadStatic: any thread may make, and drop, messages.
	lfpool::object_pool<message, lfpool::ThreadStatic> messages;
	std::vector<lfpool::object_pool<message>::pointer> inbox;
	for (int i = 0; i < 4; i++)
		inbox.push_back(messages.make(i, "hello " + std::to_string(i)));
	std::thread reader([&inbox] {
		for (const auto &m : inbox)
			std::printf("%d: %s\n", m->id, m->text.c_str());
		inbox.clear();	// ~message runs, each object goes back
	});
	reader.join();

	// A vector of doubles in buffers of a single-threaded array pool.
	lfpool::array_pool<lfpool::Pool> buffers;
	std::vector<double, lfpool::allocator<double>> samples{lfpool::allocator<double>(buffers)};
	for (int i = 0; i < 1000; i++)
		samples.push_back(i * 0.5);
	std::printf("%zu samples, last %.1f\n", samples.size(), samples.back());
	return messages.stats().live == 0 ? 0 : 1;
}
