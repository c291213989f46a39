// The run loop shared by the one-input elementwise ops (Relu, Sigmoid, ..., Clip): walk
// an input of any strides with the broadcast iterator and apply a typed kernel to each
// run, writing a contiguous output of the same shape and dtype.
#pragma once

#include <string>

#include "ops/broadcast.h"
#include "ops/op_args.h"

namespace tern::ops {

/// y = f(x) elementwise, for an x whose dtype is one of Ts. `make_kernel` is called once
/// as make_kernel.template operator()<T>() for x's dtype T and returns the per-run
/// function kernel(int64_t n, const T* x, int64_t x_stride, T* y) (y contiguous), e.g.
///   run_unary<float, int32_t>(x, y, where(), threads, [&]<typename T>() {
///     return [](int64_t n, const T* x, int64_t sx, T* y) { kernels::ref::clip<T>(...); };
///   });
/// Does nothing for an undefined y (an omitted output); throws InvalidArgument for a
/// non-contiguous y and UnsupportedOpError for a dtype outside Ts.
template <typename... Ts, typename MakeKernel>
void run_unary(const Tensor& x, Tensor& y, const std::string& where, int num_threads,
               MakeKernel&& make_kernel) {
  if (!y.defined()) return;
  check_contiguous_output(y, where);
  const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(x)};
  visit_dtype<Ts...>(y.dtype(), where, [&]<typename T>() {
    const auto kernel = make_kernel.template operator()<T>();
    it.parallel_for_each(num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
      kernel(n, reinterpret_cast<const T*>(p[1]), s[1], reinterpret_cast<T*>(p[0]));
    });
  });
}

}  // namespace tern::ops
