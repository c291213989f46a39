// Binary elementwise ops with multidirectional (numpy) broadcasting: Add, Sub, Mul, Div,
// Mod, BitShift, Pow; and PRelu, whose slope broadcasts unidirectionally to X.
// Sources: ONNX Add-14, Sub-14, Mul-14, Div-14 (float32, float64, float16, bfloat16 and
// every integer type; integer Div truncates toward zero like C, a zero divisor is an
// InvalidArgument), Mod-13 (same dtypes; fmod = 0: integer remainder with the divisor's
// sign, fmod = 1: C fmod, required for floats; a zero integer divisor is InvalidArgument),
// BitShift-11 (uint8..uint64; a shift by >= the bit width gives 0), Pow-15 (base
// float32/float64/int32/int64; exponent float32/float64 or any integer type from opset 12,
// the base's dtype before; the result has the base's dtype), PRelu-16 (float32; every
// other numeric dtype from opset 16). Half types compute in float, rounded once.
// Integer arithmetic wraps, so int64 shape arithmetic is exact. Before opset 7 (Add-6 ...),
// broadcasting is opt-in (broadcast = 1) with an optional axis that aligns B inside A.
#include "kernels/binary/binary.h"

#include <algorithm>
#include <initializer_list>

#include "base/dtype_dispatch.h"
#include "kernels/reference/elementwise.h"
#include "ops/broadcast.h"
#include "ops/elementwise.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

using kernels::ref::BinaryKind;

// Runs below which a float op's walk stays with the reference run by run (walks_by_rows): a
// vector of NEON's and SSE4's.
constexpr int64_t kMinRowRun = 4;

// Whether a float op walks `it` a row of runs per call (kernels::f32_binary_rows) instead
// of a call per run: runs of kMinRowRun to kBinaryVectorMinRun - 1 elements, contiguous in
// every operand. A per-channel NCHWc operand against a map, [N or 1, Cb, 1, 1, c] against
// [N, Cb, H, W, c] (assign-layout's channel_broadcast, a squeeze-and-excitation scale), is
// H * W runs of c per (n, cb), each shorter than kBinaryVectorMinRun and so, one per call,
// through the reference: ppocr's SE Mul on 96 x 64 x 96 took 0.265 ms that way (`tern bench
// --per-layer`, 1 thread), 0.059 by rows, 0.048 in NCHW before. Runs of
// kBinaryVectorMinRun or more take a call each (f32_binary), split across threads in bands
// of every plane cut at any multiple of 16 elements, which rows of whole runs could not do
// for runs as long as a plane. The call (about 20 ns, kBinaryVectorMinRun) then still adds
// to each run of a few hundred elements, such as an attention mask's [1, 1, 1, 128]
// against [1, 12, 128, 128]: no model here has one, and it is not measured.
bool walks_by_rows(const BroadcastIterator& it) {
  if (it.rank() < 2 || it.inner_size() < kMinRowRun || it.inner_size() >= kBinaryVectorMinRun) {
    return false;
  }
  for (int k = 0; k < it.num_operands(); ++k) {
    if (it.inner_stride(k) != 1) return false;
  }
  return true;
}

class BinaryOp final : public Op {
 public:
  BinaryOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    // Before opset 7, B broadcasts only when broadcast = 1, aligned with A at `axis`
    // (default: B's dims match A's trailing dims, which numpy broadcasting also does).
    if (ctx.opset < 7 && attrs.get_int("broadcast", 0) != 0) {
      legacy_axis_ = attrs.get_int("axis", kNoAxis);
    }
    const std::string& t = ctx.op_type;
    if (t == "Add") {
      kind_ = BinaryKind::kAdd;
    } else if (t == "Sub") {
      kind_ = BinaryKind::kSub;
    } else if (t == "Mul") {
      kind_ = BinaryKind::kMul;
    } else if (t == "Div") {
      kind_ = BinaryKind::kDiv;
    } else if (t == "Mod") {
      const int64_t fmod = attrs.get_int("fmod", 0);
      TERN_CHECK(fmod == 0 || fmod == 1, ModelError, "{}: attribute 'fmod' is {} (expected 0 or 1)",
                 where(), fmod);
      kind_ = fmod == 1 ? BinaryKind::kFmod : BinaryKind::kMod;
    } else if (t == "BitShift") {
      const std::string dir = attrs.require_string("direction");
      TERN_CHECK(dir == "LEFT" || dir == "RIGHT", ModelError,
                 "{}: attribute 'direction' is '{}' (expected LEFT or RIGHT)", where(), dir);
      kind_ = dir == "LEFT" ? BinaryKind::kShiftLeft : BinaryKind::kShiftRight;
    } else if (t == "Pow") {
      is_pow_ = true;
    } else if (t == "PRelu") {
      kind_ = BinaryKind::kPRelu;
    } else {
      TERN_THROW(UnsupportedOpError, "{}: not a binary op", where());
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& a = inputs[0];
    InferInput b = inputs[1];
    b.shape = legacy_b_shape(a.shape, b.shape);
    const bool prelu = !is_pow_ && kind_ == BinaryKind::kPRelu;
    const char* a_name = prelu ? "X" : "A";
    const char* b_name = prelu ? "slope" : "B";
    if (prelu && context().opset < 16) {
      check_dtype(a.dtype, {DType::kFloat32}, where(), 0, a_name);
    } else if (is_pow_) {
      check_dtype(a.dtype, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64},
                  where(), 0, a_name);
    } else if (kind_ == BinaryKind::kShiftLeft || kind_ == BinaryKind::kShiftRight) {
      check_dtype(a.dtype, {DType::kUint8, DType::kUint16, DType::kUint32, DType::kUint64}, where(),
                  0, a_name);
    } else {
      check_dtype(a.dtype, kNumericTypes, where(), 0, a_name);
    }
    if (kind_ == BinaryKind::kMod && !is_pow_) {
      TERN_CHECK(!is_floating(a.dtype), ModelError,
                 "{}: {} inputs need attribute fmod = 1 (ONNX Mod-13), got fmod = 0", where(),
                 dtype_name(a.dtype));
    }
    if (is_pow_ && context().opset >= 12) {
      check_dtype(b.dtype,
                  {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kInt16, DType::kInt32,
                   DType::kInt64, DType::kUint8, DType::kUint16, DType::kUint32, DType::kUint64},
                  where(), 1, b_name);
    } else {
      check_same_dtype(b.dtype, a.dtype, where(), 1, b_name, 0, a_name);
    }
    if (prelu) {
      TERN_CHECK(broadcasts_to(b.shape, a.shape), ShapeError,
                 "{}: slope of shape {} does not broadcast to X of shape {} (expected each of "
                 "its right-aligned dims to be 1 or equal to X's)",
                 where(), shape_str(b.shape), shape_str(a.shape));
      return {TensorType{a.dtype, a.shape}};
    }
    return {TensorType{a.dtype, broadcast_shape(a.shape, b.shape, where())}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const Tensor& a = inputs[0];
    const Shape b_shape = legacy_b_shape(a.shape(), inputs[1].shape());
    const Tensor b =
        b_shape == inputs[1].shape() ? inputs[1] : inputs[1].contiguous().reshape(b_shape);
    const BroadcastIterator it{StridedOperand::of(y), StridedOperand::of(a), StridedOperand::of(b)};
    if (!is_pow_ && a.dtype() == DType::kFloat32 && kernels::f32_binary_supported(kind_, 1, 1) &&
        walks_by_rows(it)) {
      // Row strides in floats: every operand's bytes are a multiple of 4.
      it.parallel_for_each_rows(ctx.num_threads, [&](char* const* p, const int64_t*, int64_t n,
                                                     const int64_t* rb, int64_t m) {
        kernels::f32_binary_rows(kind_, m, n, reinterpret_cast<const float*>(p[1]), rb[1] / 4,
                                 reinterpret_cast<const float*>(p[2]), rb[2] / 4,
                                 reinterpret_cast<float*>(p[0]), rb[0] / 4);
      });
      return;
    }
    if (is_pow_) {
      visit_dtype<float, double, int32_t, int64_t>(a.dtype(), where(), [&]<typename TB>() {
        visit_dtype<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                    uint64_t>(b.dtype(), where(), [&]<typename TE>() {
          it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
            kernels::ref::pow<TB, TE>(n, reinterpret_cast<const TB*>(p[1]), s[1],
                                      reinterpret_cast<const TE*>(p[2]), s[2],
                                      reinterpret_cast<TB*>(p[0]));
          });
        });
      });
      return;
    }
    visit_dtype<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                uint16_t, uint32_t, uint64_t>(a.dtype(), where(), [&]<typename T>() {
      if constexpr (is_integer_element_v<T>) {
        if (kind_ == BinaryKind::kDiv || kind_ == BinaryKind::kMod || kind_ == BinaryKind::kFmod) {
          check_no_zero<T>(b);
        }
      }
      it.parallel_for_each(ctx.num_threads, [&](char* const* p, const int64_t* s, int64_t n) {
        binary_run<T>(kind_, n, reinterpret_cast<const T*>(p[1]), s[1],
                      reinterpret_cast<const T*>(p[2]), s[2], reinterpret_cast<T*>(p[0]));
      });
    });
  }

 private:
  static constexpr int64_t kNoAxis = INT64_MIN;

  // B's shape with trailing 1s so that it lines up with A at the legacy `axis` (opset < 7);
  // B's own shape otherwise.
  // PRelu before opset 7 takes a per-channel slope of shape [C] for X of shape [N, C, ...].
  Shape legacy_b_shape(const Shape& a, const Shape& b) const {
    if (kind_ == BinaryKind::kPRelu && !is_pow_ && context().opset < 7 && b.size() == 1 &&
        a.size() >= 2 && b[0] == a[1]) {
      Shape out(a.size() - 1, 1);
      out[0] = b[0];
      return out;
    }
    if (legacy_axis_ == kNoAxis) return b;
    const int64_t rank = static_cast<int64_t>(a.size());
    const int64_t axis = legacy_axis_ < 0 ? legacy_axis_ + rank : legacy_axis_;
    TERN_CHECK(axis >= 0 && axis <= rank - static_cast<int64_t>(b.size()), ShapeError,
               "{}: broadcast axis {} does not fit B of shape {} into A of shape {} (opset {} "
               "legacy broadcasting)",
               where(), legacy_axis_, shape_str(b), shape_str(a), context().opset);
    Shape out = b;
    out.resize(static_cast<size_t>(rank - axis), 1);
    return out;
  }

  // Integer division by zero is undefined in C++ (and ONNX): reject it up front.
  template <typename T>
  void check_no_zero(const Tensor& divisor) const {
    const Tensor c = divisor.contiguous();
    const T* d = c.data<T>();
    for (int64_t i = 0; i < c.numel(); ++i) {
      TERN_CHECK(d[i] != 0, InvalidArgument,
                 "{}: integer division by zero (element {} of the divisor of shape {} is 0)",
                 where(), i, shape_str(c.shape()));
    }
  }

  BinaryKind kind_ = BinaryKind::kAdd;
  bool is_pow_ = false;
  int64_t legacy_axis_ = kNoAxis;  ///< opset < 7 with broadcast = 1 and an axis
};

}  // namespace

void register_binary(OpRegistry& r) {
  for (const char* name : {"Add", "Sub", "Mul", "Div", "Mod", "BitShift", "Pow", "PRelu"}) {
    r.add(make_schema<BinaryOp>(name, 2, 2));
  }
}

}  // namespace tern::ops
