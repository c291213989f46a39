// Splitting an op's work items across the session's threads (tern's pool, base/thread_pool.h).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/work_grid.h"

namespace tern::ops {

/// Calls fn(begin, end) for one contiguous share of the work items [0, total) per thread,
/// on at most `num_threads` threads; the shares cover [0, total) exactly once and differ
/// in size by at most one item. With one thread (or total <= 1) it calls fn(0, total) on
/// the calling thread. Contiguous shares (rather than interleaved ones) keep the items a
/// kernel orders for cache reuse, such as one output block's rows, on one thread.
template <class Fn>
void parallel_ranges(int64_t total, int num_threads, Fn&& fn) {
  const int threads = static_cast<int>(std::min<int64_t>(num_threads, total));
  if (threads <= 1) {
    fn(int64_t{0}, total);
    return;
  }
  parallel_run(threads, [&](int64_t t, int64_t nt) { fn(total * t / nt, total * (t + 1) / nt); });
}

/// Calls fn(i) for every i in [0, n), on at most `num_threads` threads, each taking one
/// contiguous range of i (a static schedule).
template <class Fn>
void parallel_for(int64_t n, int num_threads, Fn&& fn) {
  parallel_ranges(n, num_threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

namespace detail {

/// One thread's share of parallel_blocks' units: the remaining range [front, back) packed
/// in one word (front << 32 | back), claimed from the front by its owner and from the
/// back by threads that finished their own share.
struct alignas(64) Share {
  std::atomic<uint64_t> range{0};
};

/// Claims units of `s` into [begin, end): from its front (the owner) half of what is left,
/// at least `block` (guided self-scheduling); from its back (a thief) up to `block`. False
/// when the share is empty.
inline bool claim(Share& s, int64_t block, bool front, int64_t& begin, int64_t& end) {
  uint64_t v = s.range.load(std::memory_order_relaxed);
  for (;;) {
    const int64_t f = static_cast<int64_t>(v >> 32), b = static_cast<int64_t>(v & 0xffffffffu);
    if (f >= b) return false;
    const int64_t nf = front ? std::min(b, f + std::max(block, (b - f + 1) / 2)) : f;
    const int64_t nb = front ? b : std::max(f, b - block);
    const uint64_t next = static_cast<uint64_t>(nf) << 32 | static_cast<uint64_t>(nb);
    if (s.range.compare_exchange_weak(v, next, std::memory_order_acq_rel)) {
      begin = front ? f : nb;
      end = front ? nf : b;
      return true;
    }
  }
}

}  // namespace detail

/// Blocks a thread's share of parallel_blocks is stolen in (and the least its owner
/// claims): small enough that a late thread leaves little to wait for, large enough that
/// claims (one atomic each) and the kernel's per-call setup stay negligible.
inline constexpr int64_t kBlocksPerShare = 8;

/// Calls fn(begin, end) for blocks [begin, end) of the units [0, units), which together
/// cover it exactly once, on at most `num_threads` threads. Thread t owns the t-th
/// contiguous share and works through it front to back, each claim half of what is left
/// of it (at least a block, 1/kBlocksPerShare of the share); a thread whose share is done
/// takes blocks from the back of the other shares (work stealing). A thread that starts
/// late (on the 2-vCPU development host the pool's worker finished its equal share of a
/// layer 15 to 50 us after the caller, in every layer of SqueezeNet) then delays the layer
/// by at most one block, while most units still run on the thread that owns their region.
/// Why halves: a call of fn runs every output-channel chunk of parallel_grid over its
/// units, and a depthwise call re-reads the window's rows above its first; in calls of one
/// block, RetinaFace's 40 x 40 and 20 x 20 depthwise layers ran no faster at 2 threads
/// than at 1 (a 20 x 20 layer of 16 blocks took 1.9 times as long in calls of 1 row as in
/// one call). Against blocks, the models took 0.83 to 1.02 of their time at 2 threads
/// (three alternated runs; all but SqueezeNet's 1.02 below 1); a worker stalled inside its
/// first claim may now hold up to half its share. One thread: fn(0, units).
template <class Fn>
void parallel_blocks(int64_t units, int num_threads, Fn&& fn) {
  const int threads = static_cast<int>(std::min<int64_t>(num_threads, units));
  if (threads <= 1 || units >= (int64_t{1} << 32)) {
    if (units > 0) fn(int64_t{0}, units);
    return;
  }
  constexpr int kStackShares = 16;
  detail::Share stack_shares[kStackShares];
  std::vector<detail::Share> heap_shares(threads > kStackShares ? threads : 0);
  detail::Share* shares = threads > kStackShares ? heap_shares.data() : stack_shares;
  for (int t = 0; t < threads; ++t) {
    const uint64_t f = static_cast<uint64_t>(units * t / threads);
    const uint64_t b = static_cast<uint64_t>(units * (t + 1) / threads);
    shares[t].range.store(f << 32 | b, std::memory_order_relaxed);
  }
  const int64_t block = std::max<int64_t>(1, units / threads / kBlocksPerShare);
  // The pool may run fewer threads than asked (busy, capped): shares without an owner are
  // taken by the others like any share's back.
  parallel_run(threads, [&](int t, int) {
    int64_t begin = 0, end = 0;
    while (detail::claim(shares[t], block, true, begin, end)) fn(begin, end);
    for (int k = 1; k < threads; ++k) {
      detail::Share& victim = shares[(t + k) % threads];
      while (detail::claim(victim, block, false, begin, end)) fn(begin, end);
    }
  });
}

/// Spatial units per thread below which parallel_grid splits the flat items instead: with
/// fewer, one unit more or less is a large share of a thread's work.
inline constexpr int64_t kMinSpatialUnitsPerThread = 8;

/// Calls fn(n, begin, end) for ranges [begin, end) of image n's items of a kernel's work
/// grid (ranges cover every item of every image in [0, batch) exactly once), on at most
/// `num_threads` threads. The images' spatial units (batch * g.inner, image major) are
/// split by parallel_blocks, and each block runs every outer index (output-channel chunk)
/// over it, chunk by chunk: a spatial split, the same region of the image in every layer,
/// so that a layer reads what the same thread wrote in the layer before, from its own
/// core's caches (the layout OneFlow's SBP calls split(H)). With fewer than
/// kMinSpatialUnitsPerThread units per thread, parallel_blocks over the flat items
/// instead. One thread: fn(n, 0, items) per image.
template <class Fn>
void parallel_grid(int64_t batch, kernels::WorkGrid g, int num_threads, Fn&& fn) {
  const int64_t items = g.items();
  const int threads = static_cast<int>(std::min<int64_t>(num_threads, batch * items));
  if (threads <= 1) {
    for (int64_t n = 0; n < batch && items > 0; ++n) fn(n, int64_t{0}, items);
    return;
  }
  const int64_t units = batch * g.inner;
  if (units >= kMinSpatialUnitsPerThread * threads) {
    parallel_blocks(units, threads, [&](int64_t u0, int64_t u1) {
      for (int64_t n = u0 / g.inner; n < batch && n * g.inner < u1; ++n) {
        const int64_t i0 = std::max<int64_t>(u0 - n * g.inner, 0);
        const int64_t i1 = std::min(u1 - n * g.inner, g.inner);
        for (int64_t o = 0; o < g.outer; ++o) fn(n, o * g.inner + i0, o * g.inner + i1);
      }
    });
    return;
  }
  parallel_blocks(batch * items, threads, [&](int64_t f0, int64_t f1) {
    for (int64_t f = f0; f < f1;) {
      const int64_t n = f / items, first = f % items;
      const int64_t last = std::min(items, first + (f1 - f));
      fn(n, first, last);
      f += last - first;
    }
  });
}

}  // namespace tern::ops
