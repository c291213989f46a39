#include "ops/broadcast.h"

#include <cstdint>
#include <string>
#include <vector>

#include "base/check.h"
#include "kernels/reference/elementwise.h"
#include "ops/parallel.h"

namespace tern::ops {

Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& where) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // i counts from the right: dim -(i+1).
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    TERN_CHECK(da == db || da == 1 || db == 1, ShapeError,
               "{}: inputs of shape {} and {} are not broadcastable (dim -{} is {} in one and {} "
               "in the other; expected equal dims or a 1)",
               where, shape_str(a), shape_str(b), i + 1, da, db);
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_shapes(std::span<const Shape> shapes, const std::string& where) {
  Shape out;
  for (const Shape& s : shapes) out = broadcast_shape(out, s, where);
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  }
  return true;
}

StridedOperand StridedOperand::of(const Tensor& t) {
  StridedOperand op;
  op.data = const_cast<void*>(t.raw_data());
  op.shape = t.shape();
  op.strides = t.strides();
  op.elem_size = static_cast<int>(dtype_size(t.dtype()));
  return op;
}

BroadcastIterator::BroadcastIterator(std::span<const StridedOperand> operands) {
  TERN_CHECK(!operands.empty() && operands.size() <= kMaxOperands, InvalidArgument,
             "BroadcastIterator: expected 1 to {} operands, but got {}", kMaxOperands,
             operands.size());
  num_operands_ = static_cast<int>(operands.size());
  const auto& out = operands[0];
  const int out_rank = static_cast<int>(out.shape.size());
  TERN_CHECK(out.strides.size() == out.shape.size(), InvalidArgument,
             "BroadcastIterator: output has {} dims but {} strides", out.shape.size(),
             out.strides.size());

  // Element strides of every operand over the output's dims (0 where it broadcasts).
  // Dims of size 1 are dropped right away: they never move a pointer.
  std::array<std::array<int64_t, kMaxDims>, kMaxOperands> stride{};
  std::array<int64_t, kMaxDims> shape{};
  int rank = 0;
  numel_ = 1;
  for (int d = 0; d < out_rank; ++d) numel_ *= out.shape[d];
  planes_ = out_rank >= 3 ? out.shape[0] * out.shape[1] : 1;
  for (int k = 0; k < num_operands_; ++k) {
    const auto& op = operands[k];
    const int r = static_cast<int>(op.shape.size());
    TERN_CHECK(op.strides.size() == op.shape.size(), InvalidArgument,
               "BroadcastIterator: operand {} has {} dims but {} strides", k, op.shape.size(),
               op.strides.size());
    bool fits = r <= out_rank;
    for (int i = 0; fits && i < r; ++i) {
      fits = op.shape[i] == 1 || op.shape[i] == out.shape[out_rank - r + i];
    }
    TERN_CHECK(fits, ShapeError,
               "BroadcastIterator: operand {} of shape {} does not broadcast to {}", k,
               shape_str(Shape(op.shape.begin(), op.shape.end())),
               shape_str(Shape(out.shape.begin(), out.shape.end())));
    data_[k] = static_cast<char*>(op.data);
  }
  for (int d = 0; d < out_rank; ++d) {
    if (out.shape[d] == 1) continue;
    TERN_CHECK(rank < kMaxDims, InvalidArgument,
               "BroadcastIterator: more than {} dims of size > 1 are not supported (shape {})",
               kMaxDims, shape_str(Shape(out.shape.begin(), out.shape.end())));
    shape[rank] = out.shape[d];
    for (int k = 0; k < num_operands_; ++k) {
      const auto& op = operands[k];
      const int lead = out_rank - static_cast<int>(op.shape.size());
      const int dk = d - lead;
      stride[k][rank] = (dk < 0 || op.shape[dk] == 1) ? 0 : op.strides[dk];
    }
    ++rank;
  }

  // Merge dim d into its inner neighbour when every operand steps over dim d exactly as a
  // continuation of that neighbour. Walk from the inside out, storing the merged dims at
  // the end of shape_ / byte_stride_ (still in elements here).
  rank_ = 0;
  for (int d = rank - 1; d >= 0; --d) {
    bool merge = rank_ > 0;
    for (int k = 0; merge && k < num_operands_; ++k) {
      const int j = kMaxDims - rank_;  // innermost-first scratch position of the last kept dim
      merge = stride[k][d] == byte_stride_[k][j] * shape_[j];
    }
    if (merge) {
      shape_[kMaxDims - rank_] *= shape[d];
    } else {
      ++rank_;
      shape_[kMaxDims - rank_] = shape[d];
      for (int k = 0; k < num_operands_; ++k) byte_stride_[k][kMaxDims - rank_] = stride[k][d];
    }
  }
  // The merged dims were stored at the end of the arrays, outermost first; move them to
  // the front, turning element strides into byte strides.
  if (rank_ == 0) {
    rank_ = 1;
    shape_[0] = numel_ == 0 ? 0 : 1;
    for (int k = 0; k < num_operands_; ++k) byte_stride_[k][0] = 0;
  } else {
    const int first = kMaxDims - rank_;
    for (int i = 0; i < rank_; ++i) {
      shape_[i] = shape_[first + i];
      for (int k = 0; k < num_operands_; ++k) byte_stride_[k][i] = byte_stride_[k][first + i];
    }
  }
  for (int k = 0; k < num_operands_; ++k) {
    inner_stride_[k] = byte_stride_[k][rank_ - 1];
    const int64_t es = operands[k].elem_size;
    for (int i = 0; i < rank_; ++i) byte_stride_[k][i] *= es;
  }
}

namespace {

// Whether copy_share copies the walk of `it` a row of short runs per call.
bool by_rows(const BroadcastIterator& it) { return it.rank() > 1 && it.inner_size() < kShortRun; }

// Thread t's share of nt of one pair's copy (element size es): by rows for short runs,
// else a contiguous fraction of the walk (`contiguous`) or for_each_share's bands.
void copy_share(const BroadcastIterator& it, int es, bool contiguous, int64_t t, int64_t nt) {
  if (by_rows(it)) {
    const int64_t runs = it.num_runs();
    it.for_each_rows(
        runs * t / nt, runs * (t + 1) / nt,
        [&](char* const* p, const int64_t* s, int64_t n, const int64_t* rb, int64_t m) {
          kernels::ref::copy_rows(m, n, es, p[1], s[1], rb[1], p[0], s[0], rb[0]);
        });
    return;
  }
  const auto copy = [&](char* const* p, const int64_t* s, int64_t n) {
    kernels::ref::copy(n, es, p[1], s[1], p[0], s[0]);
  };
  if (contiguous) {
    it.for_each(it.numel() * t / nt, it.numel() * (t + 1) / nt, copy);
  } else {
    it.for_each_share(t, nt, copy);
  }
}

// Threads for copying `total` elements: at least kDefaultGrain each.
int copy_threads(int64_t total, int num_threads) {
  const int64_t by_grain = std::max<int64_t>(1, total / BroadcastIterator::kDefaultGrain);
  return static_cast<int>(std::min<int64_t>(std::max(num_threads, 1), by_grain));
}

void check_pair(const StridedOperand& dst, const StridedOperand& src, const char* what, size_t k) {
  TERN_CHECK(dst.elem_size == src.elem_size, InvalidArgument,
             "{}: element sizes differ ({} and {} bytes){}", what, dst.elem_size, src.elem_size,
             k == SIZE_MAX ? std::string() : fmt::format(" in pair {}", k));
}

// The iterators of copy_strided_parts' pairs, and whether they take contiguous fractions.
struct Parts {
  std::vector<BroadcastIterator> its;
  std::vector<int> elem_sizes;
  bool contiguous = false;
  int64_t total = 0;

  // Thread t's share of nt of every pair.
  void share(int64_t t, int64_t nt) const {
    for (size_t k = 0; k < its.size(); ++k) copy_share(its[k], elem_sizes[k], contiguous, t, nt);
  }
};

Parts make_parts(std::span<const StridedOperand> dsts, std::span<const StridedOperand> srcs) {
  TERN_CHECK(dsts.size() == srcs.size(), InvalidArgument,
             "copy_strided_parts: {} destinations but {} sources", dsts.size(), srcs.size());
  Parts parts;
  parts.its.reserve(dsts.size());
  for (size_t k = 0; k < dsts.size(); ++k) {
    check_pair(dsts[k], srcs[k], "copy_strided_parts", k);
    parts.elem_sizes.push_back(dsts[k].elem_size);
    const BroadcastIterator& it = parts.its.emplace_back(BroadcastIterator{dsts[k], srcs[k]});
    parts.total += it.numel();
    parts.contiguous = parts.contiguous || (it.numel() > 0 && by_rows(it));
  }
  return parts;
}

}  // namespace

void copy_strided(const StridedOperand& dst, const StridedOperand& src, int num_threads) {
  check_pair(dst, src, "copy_strided", SIZE_MAX);
  const BroadcastIterator it{dst, src};
  const int es = dst.elem_size;
  const int chunks = copy_threads(it.numel(), num_threads);
  if (chunks <= 1) {
    copy_share(it, es, false, 0, 1);
    return;
  }
  parallel_run(chunks, [&](int64_t t, int64_t nt) { copy_share(it, es, false, t, nt); });
}

void copy_strided_parts(std::span<const StridedOperand> dsts, std::span<const StridedOperand> srcs,
                        int num_threads) {
  const Parts parts = make_parts(dsts, srcs);
  const int chunks = copy_threads(parts.total, num_threads);
  if (chunks <= 1) {
    parts.share(0, 1);
    return;
  }
  parallel_run(chunks, [&](int64_t t, int64_t nt) { parts.share(t, nt); });
}

void copy_strided_parts_share(std::span<const StridedOperand> dsts,
                              std::span<const StridedOperand> srcs, int64_t t, int64_t nt) {
  const Parts parts = make_parts(dsts, srcs);
  TERN_CHECK(nt >= 1 && t >= 0 && t < nt, InvalidArgument,
             "copy_strided_parts_share: share {} of {}", t, nt);
  parts.share(t, nt);
}

}  // namespace tern::ops
