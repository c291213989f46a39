// Broadcasting for elementwise ops, and the one iterator that walks broadcast and strided
// operands (ONNX "Broadcasting in ONNX"; the idea of ATen's TensorIterator).
//
// The iterator knows nothing about arithmetic: it lines up an output and up to three
// inputs, drops size-1 dims, merges dims that are contiguous for every operand, and
// hands runs along the innermost dim to a kernel function together with one pointer and
// one element stride per operand. A kernel sees at most a handful of stride patterns
// (1 = contiguous, 0 = broadcast scalar, anything else = strided view) and can keep its
// inner loop simple and vectorizable:
//
//   BroadcastIterator it({StridedOperand::of(out), StridedOperand::of(a), StridedOperand::of(b)});
//   it.parallel_for_each(threads, [&](char* const* p, const int64_t* s, int64_t n) {
//     binary_run<float>(kind, n, (const float*)p[1], s[1], (const float*)p[2], s[2],
//                       (float*)p[0]);  // ops/elementwise.h
//   });
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "ops/parallel.h"
#include "tern/tensor.h"

namespace tern::ops {

/// Multidirectional (numpy) broadcast of `a` and `b`: shapes are aligned at the right,
/// missing leading dims count as 1, and each pair of dims must be equal or contain a 1
/// (the result takes the other; 1 with 0 gives 0). Throws ShapeError
/// "{where}: inputs of shape [2, 3] and [4] are not broadcastable (dim -1 is 3 in one and 4
/// in the other)". Source: ONNX docs/Broadcasting.md.
Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& where);

/// broadcast_shape() folded over every shape (Sum, Max, Min); no shapes give a scalar.
Shape broadcast_shapes(std::span<const Shape> shapes, const std::string& where);

/// True when `from` broadcasts unidirectionally to `to` (ONNX "unidirectional
/// broadcasting", e.g. PRelu's slope): rank(from) <= rank(to) and each right-aligned dim of
/// `from` is 1 or equal to the dim of `to`.
bool broadcasts_to(const Shape& from, const Shape& to);

/// One operand of a BroadcastIterator: a strided view given by a pointer to its element 0,
/// its shape and its strides in elements (may be 0 or negative), and its element size.
/// The spans only need to live while the iterator is being constructed.
struct StridedOperand {
  void* data = nullptr;
  std::span<const int64_t> shape;
  std::span<const int64_t> strides;
  int elem_size = 0;

  /// The operand for a whole tensor (inputs are only read, hence the const overload).
  static StridedOperand of(const Tensor& t);
};

/// Walks an output and up to three inputs that broadcast to it, in the output's
/// row-major order, as runs along the innermost (merged) dim.
///
/// operands[0] is the output: any strides, no broadcasting (no zero strides). Every other
/// operand must broadcast unidirectionally to the output's shape. Construction does not
/// allocate; iterating calls fn(char* const* ptrs, const int64_t* strides, int64_t n) once
/// per run, where ptrs[k] points at operand k's first element of the run and strides[k] is
/// its step in elements (0 for a broadcast operand). With a contiguous output strides[0]
/// is 1, except in a run of length 1.
class BroadcastIterator {
 public:
  static constexpr int kMaxOperands = 4;
  /// Dims left after dropping size-1 dims and merging contiguous ones.
  static constexpr int kMaxDims = 16;
  /// Elements per thread below which parallel_for_each stays on one thread.
  static constexpr int64_t kDefaultGrain = 32 * 1024;

  /// Throws ShapeError when an input does not broadcast to the output, and
  /// InvalidArgument for more than kMaxOperands operands or kMaxDims merged dims.
  explicit BroadcastIterator(std::span<const StridedOperand> operands);
  BroadcastIterator(std::initializer_list<StridedOperand> operands)
      : BroadcastIterator(std::span<const StridedOperand>(operands.begin(), operands.size())) {}

  /// Elements of the output (0 when a dim is 0: the iterator then calls nothing).
  int64_t numel() const { return numel_; }
  int num_operands() const { return num_operands_; }
  /// Number of dims after merging (>= 1; tests and diagnostics).
  int rank() const { return rank_; }
  /// Length of one full run (the merged innermost dim).
  int64_t inner_size() const { return shape_[rank_ - 1]; }
  /// Element stride of operand k along the merged innermost dim.
  int64_t inner_stride(int k) const { return inner_stride_[k]; }

  /// Calls fn on the runs that cover output elements [begin, end) (row-major indices,
  /// 0 <= begin <= end <= numel()); a run never crosses `begin` or `end`.
  template <typename Fn>
  void for_each(int64_t begin, int64_t end, Fn&& fn) const;

  /// Runs in the whole walk: numel() / inner_size() (0 when numel() is 0).
  int64_t num_runs() const { return numel_ == 0 ? 0 : numel_ / shape_[rank_ - 1]; }

  /// Calls fn(char* const* ptrs, const int64_t* strides, int64_t n,
  /// const int64_t* row_bytes, int64_t m) on runs [begin, end) (run indices in row-major
  /// order, 0 <= begin <= end <= num_runs()): each call covers m consecutive runs along
  /// the second-innermost merged dim (1 run when there is none); run i of operand k
  /// starts at ptrs[k] + i * row_bytes[k] and holds n elements strides[k] apart. For
  /// kernels whose runs are short (a last axis of 2 or 4), which would spend more time
  /// per call than per element with for_each.
  template <typename Fn>
  void for_each_rows(int64_t begin, int64_t end, Fn&& fn) const;

  /// for_each(0, numel()) on at most `num_threads` threads, at least `grain` elements per
  /// thread. An output of rank >= 3 is split spatially: its planes (dims 0 and 1, image
  /// and channel or channel block: [N, C, H, W] or NCHWc's [N, C/c, H, W, c]) are each cut
  /// into the same contiguous fractions (cut at multiples of 16 elements, so that bands
  /// share no cache line when the plane's size is such a multiple), thread t taking
  /// fraction t of every plane: for one image, about the rows the convolutions' split(H)
  /// gives thread t (ops/parallel.h), so each thread mostly reads what it wrote in the
  /// layer before, from its own core's caches. Other outputs, and planes of fewer than
  /// kMinPlaneShare elements per thread, go in contiguous chunks of the whole.
  template <typename Fn>
  void parallel_for_each(int num_threads, Fn&& fn, int64_t grain = kDefaultGrain) const;

  /// Thread t's share (0 <= t < nt) of parallel_for_each's split among nt threads: fn on
  /// the runs of fraction t of every plane, or of the whole (see there). For callers that
  /// run several walks in one parallel region (copy_strided_parts).
  template <typename Fn>
  void for_each_share(int64_t t, int64_t nt, Fn&& fn) const;

  /// for_each_rows(0, num_runs()) on at most `num_threads` threads, at least `grain`
  /// elements per thread, split much as parallel_for_each splits elements but at whole runs
  /// (for_each_rows_share): for kernels of short runs that take a row of them per call
  /// (binary ops on NCHWc blocks, ops/binary.cc).
  template <typename Fn>
  void parallel_for_each_rows(int num_threads, Fn&& fn, int64_t grain = kDefaultGrain) const;

  /// Thread t's share (0 <= t < nt) of parallel_for_each_rows' split among nt threads:
  /// for_each_rows on fraction t of every plane's runs where a plane is whole runs and
  /// holds kMinPlaneShare elements per thread, else on fraction t of all runs. The cuts fall
  /// between runs, so that the bands of two threads may share a cache line where a run is
  /// not a multiple of 64 bytes (for_each_share cuts at multiples of 16 elements).
  template <typename Fn>
  void for_each_rows_share(int64_t t, int64_t nt, Fn&& fn) const;

  /// Elements of a plane per thread below which parallel_for_each splits the whole instead.
  static constexpr int64_t kMinPlaneShare = 256;

 private:
  using Index = std::array<int64_t, kMaxDims>;
  using Pointers = std::array<char*, kMaxOperands>;

  /// Coordinates idx[0..top] of the row-major index `pos` over dims 0..top, and the
  /// operands' pointers base there (for_each's and for_each_rows' starting point).
  void seek(int64_t pos, int top, Index& idx, Pointers& base) const {
    base = data_;
    for (int d = top; d >= 0; --d) {
      idx[d] = pos % shape_[d];
      pos /= shape_[d];
      for (int k = 0; k < num_operands_; ++k) base[k] += idx[d] * byte_stride_[k][d];
    }
  }
  /// Threads for a parallel walk of numel() elements: at most num_threads, at least
  /// `grain` elements each (1 when the walk is empty).
  int threads_for(int num_threads, int64_t grain) const {
    const int64_t by_grain = std::max<int64_t>(1, numel_ / std::max<int64_t>(grain, 1));
    return static_cast<int>(std::min<int64_t>(std::max(num_threads, 1), by_grain));
  }
  /// Advances dims 0..top of (idx, base) by one step of dim top (an odometer with carry).
  void step(int top, Index& idx, Pointers& base) const {
    for (int d = top; d >= 0; --d) {
      for (int k = 0; k < num_operands_; ++k) base[k] += byte_stride_[k][d];
      if (++idx[d] < shape_[d]) break;
      for (int k = 0; k < num_operands_; ++k) base[k] -= byte_stride_[k][d] * shape_[d];
      idx[d] = 0;
    }
  }

  int num_operands_ = 0;
  int rank_ = 1;
  int64_t numel_ = 0;
  int64_t planes_ = 1;  // the output's dims 0 and 1 when its rank is >= 3 (else 1)
  std::array<char*, kMaxOperands> data_{};
  std::array<int64_t, kMaxDims> shape_{};
  /// byte_stride_[k][d]: bytes operand k moves when dim d advances by one.
  std::array<std::array<int64_t, kMaxDims>, kMaxOperands> byte_stride_{};
  std::array<int64_t, kMaxOperands> inner_stride_{};
};

// ---- implementation -------------------------------------------------------------------

template <typename Fn>
void BroadcastIterator::for_each(int64_t begin, int64_t end, Fn&& fn) const {
  if (begin >= end) return;
  const int last = rank_ - 1;
  const int64_t inner = shape_[last];
  Index idx{};
  Pointers base;
  seek(begin / inner, last - 1, idx, base);  // the first run's outer coordinates
  int64_t off = begin % inner;
  Pointers ptrs{};
  while (true) {
    const int64_t n = std::min(inner - off, end - begin);
    for (int k = 0; k < num_operands_; ++k) ptrs[k] = base[k] + off * byte_stride_[k][last];
    fn(static_cast<char* const*>(ptrs.data()), static_cast<const int64_t*>(inner_stride_.data()),
       n);
    begin += n;
    if (begin >= end) break;
    off = 0;
    step(last - 1, idx, base);  // the next run
  }
}

template <typename Fn>
void BroadcastIterator::for_each_rows(int64_t begin, int64_t end, Fn&& fn) const {
  if (begin >= end) return;
  const int last = rank_ - 1;
  const int64_t inner = shape_[last];
  std::array<int64_t, kMaxOperands> row_bytes{};
  if (rank_ == 1) {  // a single run
    fn(static_cast<char* const*>(data_.data()), static_cast<const int64_t*>(inner_stride_.data()),
       inner, static_cast<const int64_t*>(row_bytes.data()), end - begin);
    return;
  }
  const int mid = last - 1;
  for (int k = 0; k < num_operands_; ++k) row_bytes[k] = byte_stride_[k][mid];
  Index idx{};
  Pointers base;
  seek(begin, mid, idx, base);  // the first run's coordinates over dims 0 .. mid
  while (true) {
    const int64_t m = std::min(shape_[mid] - idx[mid], end - begin);
    fn(static_cast<char* const*>(base.data()), static_cast<const int64_t*>(inner_stride_.data()),
       inner, static_cast<const int64_t*>(row_bytes.data()), m);
    begin += m;
    if (begin >= end) break;
    // The call reached the end of dim mid: rewind it and carry into the outer dims.
    for (int k = 0; k < num_operands_; ++k) base[k] -= idx[mid] * row_bytes[k];
    idx[mid] = 0;
    step(mid - 1, idx, base);
  }
}

template <typename Fn>
void BroadcastIterator::for_each_share(int64_t t, int64_t nt, Fn&& fn) const {
  if (numel_ == 0) return;
  if (nt <= 1) return for_each(0, numel_, fn);
  const int64_t plane = numel_ / planes_;
  if (planes_ > 1 && plane / nt >= kMinPlaneShare) {
    const auto cut = [&](int64_t k) { return k >= nt ? plane : plane * k / nt / 16 * 16; };
    const int64_t begin = cut(t), end = cut(t + 1);
    for (int64_t p = 0; p < planes_; ++p) for_each(p * plane + begin, p * plane + end, fn);
    return;
  }
  for_each(numel_ * t / nt, numel_ * (t + 1) / nt, fn);
}

template <typename Fn>
void BroadcastIterator::parallel_for_each(int num_threads, Fn&& fn, int64_t grain) const {
  if (numel_ == 0) return;
  const int chunks = threads_for(num_threads, grain);
  if (chunks <= 1) {
    for_each(0, numel_, fn);
    return;
  }
  parallel_run(chunks, [&](int64_t t, int64_t nt) { for_each_share(t, nt, fn); });
}

template <typename Fn>
void BroadcastIterator::for_each_rows_share(int64_t t, int64_t nt, Fn&& fn) const {
  if (numel_ == 0) return;
  const int64_t runs = num_runs(), inner = shape_[rank_ - 1];
  const int64_t plane = numel_ / planes_;
  if (nt > 1 && planes_ > 1 && plane % inner == 0 && plane / nt >= kMinPlaneShare) {
    const int64_t per_plane = plane / inner;
    const int64_t begin = per_plane * t / nt, end = per_plane * (t + 1) / nt;
    for (int64_t p = 0; p < planes_; ++p) {
      for_each_rows(p * per_plane + begin, p * per_plane + end, fn);
    }
    return;
  }
  for_each_rows(runs * t / nt, runs * (t + 1) / nt, fn);
}

template <typename Fn>
void BroadcastIterator::parallel_for_each_rows(int num_threads, Fn&& fn, int64_t grain) const {
  if (numel_ == 0) return;
  const int chunks = threads_for(num_threads, grain);
  if (chunks <= 1) {
    for_each_rows(0, num_runs(), fn);
    return;
  }
  parallel_run(chunks, [&](int64_t t, int64_t nt) { for_each_rows_share(t, nt, fn); });
}

/// Copies `src` into `dst` element by element: src broadcasts unidirectionally to dst's
/// shape, both have any strides (0 or negative included) and the same element size (bytes).
/// Uses at most num_threads threads (32 Ki elements per thread at least). The one
/// copy loop of the data-movement ops (Slice, Transpose, Expand, Tile, Identity; Concat
/// and Split through copy_strided_parts).
/// Runs shorter than kShortRun elements (a Slice or Concat on a last axis of 2 or 4, as in
/// the detection models' box decoding) are copied a row of runs per call: one call per
/// 2-element run cost about 8 ns, 35 us for a [1, 4420, 2] Slice. Throws InvalidArgument
/// when the element sizes differ, and what BroadcastIterator throws.
void copy_strided(const StridedOperand& dst, const StridedOperand& src, int num_threads);

/// copy_strided() for several pairs (dsts[k] <- srcs[k]) in one parallel region, thread t
/// taking the same fraction of every pair: the parts of one Split or Concat, each about
/// the pixels the producing convolutions' split(H) gave thread t (ops/parallel.h), so that
/// each thread copies what it wrote. The thread count comes from all pairs' elements
/// together (BroadcastIterator::kDefaultGrain per thread). Which fraction (copy_share):
///   - When some pair goes by short runs (a split or concat near the innermost axis, such
///     as RetinaFace's NHWC heads [1, 80, 80, 32] cut into 8, 4 and 20 channels), every
///     pair's walk is in pixel order: thread t takes the t-th contiguous fraction of each
///     walk (of its runs, for the short-run pairs).
///   - Otherwise (long runs: whole rows or planes, such as a channel Concat of NCHWc
///     tensors) each pair takes its for_each_share (bands of every plane, or contiguous
///     chunks of the whole).
/// Before, each part was one copy_strided call split by its own size: the smaller parts
/// of RetinaFace's heads stayed on the calling thread, which read the other thread's half
/// from its core's caches and left the lines shared there for the next run's writes; at 2
/// threads its Split took 0.18 ms against 0.06 ms at 1 thread (RetinaFace 640x640, the
/// two vCPUs on different core complexes). Throws InvalidArgument when the spans differ in
/// length or a pair's element sizes differ, and what BroadcastIterator throws.
void copy_strided_parts(std::span<const StridedOperand> dsts, std::span<const StridedOperand> srcs,
                        int num_threads);

/// Thread t's share (0 <= t < nt) of copy_strided_parts(dsts, srcs, .) split among nt
/// threads, on the calling thread (for tests of the split; the copy itself builds its
/// iterators once). Throws what copy_strided_parts throws, and InvalidArgument unless
/// 0 <= t < nt.
void copy_strided_parts_share(std::span<const StridedOperand> dsts,
                              std::span<const StridedOperand> srcs, int64_t t, int64_t nt);

/// copy_strided's bound: runs of fewer elements go by rows (for_each_rows). 32: with 16,
/// the 20-float runs of RetinaFace's landmark heads (the Split of its merged head convs)
/// cost a call each; by rows (kernels::ref::copy_rows, a fixed-size move of 80 bytes per
/// row), that Split took 28.7 us against 57 at 640 x 640 and 7.0 against 14.6 at 320 x
/// 320 (op_bench, AMD Zen 4), 0.071 ms against 0.094 in the model at 640.
inline constexpr int64_t kShortRun = 32;

}  // namespace tern::ops
