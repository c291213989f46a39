// core_pingpong: the round trip of one cache line between two CPUs, in ns. Two threads,
// pinned to CPUs A and B, hand a counter back and forth (A writes an odd value and waits
// for the next even one, B the reverse); the time per hand-off and back is the latency of
// moving a modified line from one core's cache to the other's and back.
//
// Why it is here: on a virtual machine the two vCPUs a 2-thread run gets may share a core
// complex (a common L3) or sit in two; tern's 2-thread speed-up depends on it, because a
// layer's threads read what the other wrote at the split boundaries. On the development
// host (AMD EPYC Zen 5, 2 vCPUs) the round trip moved between about 110-160 ns and
// 440-585 ns within minutes, and RetinaFace 640x640 ran 1.65-1.91x and 1.28-1.65x faster
// at 2 threads than at 1 accordingly. Run it next to `tern bench` when a thread-scaling
// figure looks off.
//
//   build/release/bench/core_pingpong [CPU_A CPU_B [ROUND_TRIPS]]   (default 0 1 200000)
//
// Prints "cpu A <-> cpu B: N ns per round trip (median of 5 runs of R round trips)".
// Exits 1 with a message when a CPU cannot be pinned (not present, or not allowed).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// Pins the calling thread to `cpu`; false when the OS refuses.
bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// One run: `trips` round trips between cpu_a (this thread) and cpu_b; ns per round trip,
// or a negative value when pinning failed.
double run(int cpu_a, int cpu_b, long trips) {
  alignas(64) std::atomic<long> line{0};
  std::atomic<bool> pinned{true};
  std::thread other([&] {
    if (!pin_to(cpu_b)) pinned = false;
    for (long i = 0; i < trips; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1) {
        if (!pinned) return;
      }
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  if (!pin_to(cpu_a)) pinned = false;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < trips && pinned; ++i) {
    line.store(2 * i + 1, std::memory_order_release);
    while (line.load(std::memory_order_acquire) != 2 * i + 2) {
      if (!pinned) break;
    }
  }
  const auto end = std::chrono::steady_clock::now();
  other.join();
  if (!pinned) return -1.0;
  return std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(trips);
}

}  // namespace

int main(int argc, char** argv) {
  const int cpu_a = argc > 2 ? std::atoi(argv[1]) : 0;
  const int cpu_b = argc > 2 ? std::atoi(argv[2]) : 1;
  const long trips = argc > 3 ? std::atol(argv[3]) : 200000;
  if (argc == 2 || argc > 4 || trips <= 0 || cpu_a < 0 || cpu_b < 0 || cpu_a == cpu_b) {
    std::fprintf(stderr, "usage: core_pingpong [CPU_A CPU_B [ROUND_TRIPS]] (two different CPUs, "
                         "ROUND_TRIPS > 0)\n");
    return 1;
  }
  std::vector<double> ns;
  for (int r = 0; r < 5; ++r) {
    const double t = run(cpu_a, cpu_b, trips);
    if (t < 0) {
      std::fprintf(stderr, "core_pingpong: cannot pin threads to CPUs %d and %d\n", cpu_a, cpu_b);
      return 1;
    }
    ns.push_back(t);
  }
  std::sort(ns.begin(), ns.end());
  std::printf("cpu %d <-> cpu %d: %.1f ns per round trip (median of 5 runs of %ld round trips)\n",
              cpu_a, cpu_b, ns[2], trips);
  return 0;
}
