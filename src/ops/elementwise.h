// The run loop shared by the one-input elementwise ops (Relu, Sigmoid, ..., Clip): walk
// an input of any strides with the broadcast iterator and apply a typed kernel to each
// run, writing a contiguous output of the same shape and dtype; and the kernel choice of
// the binary arithmetic ops (Add ... PRelu, Sum, Max, Min, Mean) for one such run.
#pragma once

#include <string>
#include <type_traits>

#include "kernels/binary/binary.h"
#include "kernels/reference/elementwise.h"
#include "ops/broadcast.h"
#include "ops/op_args.h"

namespace tern::ops {

/// Shortest run that binary_run gives the vector kernel. Its call (dispatch, tail through
/// buffers) costs about 20 ns: runs of 8192 floats cut into runs of 2 took 94 us against the
/// reference's 18, runs of 16 4.0 to 4.2 against 2.7, runs of 64 1.15 to 1.6 against 1.2 to
/// 2.4, runs of 8192 0.86 against 1.13 (Mul, Zen 4, one thread).
inline constexpr int64_t kBinaryVectorMinRun = 64;

/// y[i] = f(a[i * a_stride], b[i * b_stride]) for i in [0, n), y contiguous: one run of a
/// binary op's broadcast iterator. Float runs of at least kBinaryVectorMinRun elements
/// whose operands are contiguous or broadcast (kernels::f32_binary_supported) take the
/// vector kernel (kernels/binary), which gives the same bits; everything else
/// ref::binary<T>. UltraFace's box decoding (eight float ops on [1, 4420, 2] with a
/// same-shape or a scalar operand) took half as long (kernels/binary/README.md).
template <typename T>
void binary_run(kernels::ref::BinaryKind kind, int64_t n, const T* a, int64_t a_stride, const T* b,
                int64_t b_stride, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    if (n >= kBinaryVectorMinRun && kernels::f32_binary_supported(kind, a_stride, b_stride)) {
      return kernels::f32_binary(kind, n, a, a_stride, b, b_stride, y);
    }
  }
  kernels::ref::binary<T>(kind, n, a, a_stride, b, b_stride, y);
}

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
