// Helpers for the op tests: typed tensor builders, deterministic random tensors, a naive
// index-by-index broadcasting oracle and a one-output runner. Running ops, make_op and
// expect_error live in support/op_runner.h; the random generator and tolerances in
// kernels/ref_test_util.h.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/ref_test_util.h"
#include "support/op_runner.h"
#include "tern/tensor.h"

namespace tern::test {

/// A contiguous tensor of element type T holding `values`.
template <typename T>
Tensor make(const std::vector<T>& values, const Shape& shape) {
  Tensor t = Tensor::empty(dtype_of<T>(), shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  T* p = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

inline Tensor f32(const std::vector<float>& v, const Shape& s) { return make<float>(v, s); }
inline Tensor i32(const std::vector<int32_t>& v, const Shape& s) { return make<int32_t>(v, s); }
inline Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return make<int64_t>(v, s); }
/// A 1-D int64 tensor (shapes, axes, starts...).
inline Tensor i64v(const std::vector<int64_t>& v) {
  return make<int64_t>(v, {static_cast<int64_t>(v.size())});
}

/// Contiguous float tensor 0, 1, 2, ... (+ start).
inline Tensor iota_tensor(const Shape& shape, float start = 0.0f) {
  std::vector<float> v(shape_numel(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return Tensor::from_vector(v, shape);
}

/// Random values of type T from Lcg(seed): floats in [lo, hi), integers in [lo, hi].
/// Pass a fixed seed per call site so failures reproduce.
template <typename T>
Tensor random_tensor(const Shape& shape, uint32_t seed, double lo = -4.0, double hi = 4.0) {
  Lcg rng(seed);
  Tensor t = Tensor::empty(dtype_of<T>(), shape);
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      p[i] = static_cast<T>(rng.uniform_real(lo, hi));
    } else {
      p[i] = static_cast<T>(rng.uniform_int64(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
    }
  }
  return t;
}

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// Random bools from Lcg(seed), about half true.
inline Tensor random_bools(const Shape& shape, uint32_t seed) {
  const Tensor r = random_tensor<int32_t>(shape, seed, 0, 1);
  Tensor t = Tensor::empty(DType::kBool, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<bool>()[i] = r.data<int32_t>()[i] != 0;
  return t;
}

/// Plain float [N, C, D...] -> physical NCHWc [N, ceil(C/c), D..., c]; the padded lanes of
/// the last block get `fill` (NaN shows a kernel that reads them into a real channel).
inline Tensor to_nchwc(const Tensor& x, int64_t c, float fill) {
  const int64_t n = x.dim(0), channels = x.dim(1);
  const int64_t inner = x.numel() / (n * channels);
  const int64_t blocks = (channels + c - 1) / c;
  Shape shape = {n, blocks};
  for (int d = 2; d < x.rank(); ++d) shape.push_back(x.dim(d));
  shape.push_back(c);
  std::vector<float> v(static_cast<size_t>(n * blocks * inner * c), fill);
  const std::vector<float> xv = x.to_float_vector();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t k = 0; k < inner; ++k)
        v[((b * blocks + ch / c) * inner + k) * c + ch % c] = xv[(b * channels + ch) * inner + k];
  return Tensor::from_vector(v, shape);
}

/// Physical NCHWc [N, B, D..., c] -> plain [N, channels, D...]; the values of the padded
/// lanes (channels `channels` to B*c-1, in memory order: image, channel, position) are
/// appended to `padding` unless it is nullptr.
inline Tensor from_nchwc(const Tensor& y, int64_t channels, std::vector<float>* padding) {
  const int64_t n = y.dim(0), blocks = y.dim(1), c = y.dim(-1);
  const int64_t inner = y.numel() / (n * blocks * c);
  Shape shape = {n, channels};
  for (int d = 2; d < y.rank() - 1; ++d) shape.push_back(y.dim(d));
  const std::vector<float> yv = y.to_float_vector();
  std::vector<float> out(static_cast<size_t>(n * channels * inner));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < blocks * c; ++ch)
      for (int64_t k = 0; k < inner; ++k) {
        const float v = yv[((b * blocks + ch / c) * inner + k) * c + ch % c];
        if (ch < channels) {
          out[(b * channels + ch) * inner + k] = v;
        } else if (padding) {
          padding->push_back(v);
        }
      }
  return Tensor::from_vector(out, shape);
}

/// Calls fn(index) for every multi-index of `shape` in row-major order.
inline void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Shape idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

/// The element of `t` that output index `out_index` reads under numpy broadcasting
/// (right-aligned dims; size-1 dims read index 0), as double. The oracle for broadcasting.
inline double broadcast_read(const Tensor& t, const Shape& out_index) {
  const size_t lead = out_index.size() - t.shape().size();
  std::vector<int64_t> idx(t.shape().size());
  for (size_t d = 0; d < idx.size(); ++d) idx[d] = t.shape()[d] == 1 ? 0 : out_index[lead + d];
  return t.item_as_double(idx);
}

/// Runs op_type on inputs and returns output 0 (opset 13 unless given).
inline Tensor run1(const std::string& op_type, const std::vector<Tensor>& inputs,
                   const AttrMap& attrs = {}, int opset = 13, int threads = 1) {
  return run_op(op_type, attrs, inputs, opset, 1, threads)[0];
}

}  // namespace tern::test
