// Helpers for the elementwise / shape op tests: typed tensor builders, a deterministic
// random fill, a naive index-by-index broadcasting oracle, and error checks.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

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

/// Random values of type T: floats in [lo, hi), integers in [lo, hi]. Fixed seed per call
/// site (pass one) so failures reproduce.
template <typename T>
Tensor random_tensor(const Shape& shape, uint32_t seed, double lo = -4.0, double hi = 4.0) {
  std::mt19937 rng(seed);
  Tensor t = Tensor::empty(dtype_of<T>(), shape);
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      p[i] = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng));
    } else {
      p[i] = static_cast<T>(std::uniform_int_distribution<int64_t>(static_cast<int64_t>(lo),
                                                                   static_cast<int64_t>(hi))(rng));
    }
  }
  return t;
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

/// Expects `fn` to throw exactly ErrorType with a message containing every string in
/// `parts` (e.g. the node "Add 'test_node'" and the expectation).
template <typename ErrorType>
void expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception, but none was thrown";
  } catch (const ErrorType& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_THAT(msg, ::testing::HasSubstr(p));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a different exception type, but got: " << e.what();
  }
}

}  // namespace tern::test
