// Pad (ONNX Pad-2/11/13): constant, reflect and edge padding, negative pads crop,
// every dtype (elements are copied bit for bit; Pad-2's float `value` is cast to the data's
// dtype). Kernel: kernels/reference/pad.h.
#include "kernels/reference/pad.h"

#include <algorithm>
#include <cstring>

#include "kernels/reference/elementwise.h"
#include "ops/op_args.h"
#include "ops/registry.h"
#include "ops/parallel.h"

namespace tern::ops {

namespace {

using kernels::ref::PadMode;

/// Pad: Y[d] = X[d] + pads[d] + pads[rank + d] along each dim d, with pads =
/// [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (negative values crop).
///   opset < 11: pads (required) and value (default 0) are attributes;
///   opset >= 11: pads is an int64 input, constant_value an optional scalar input.
/// mode: constant (default), reflect or edge; reflect and edge need at least one element
/// left (after cropping) along each dim they pad. A negative pad crops at most the whole
/// dim. ModelError for a bad mode or missing pads, ShapeError for pads of the wrong
/// length, a pad that crops more than its dim, a negative output size or an output size
/// that overflows int64; UnsupportedOpError for the opset-18 axes input and pads of a
/// dtype other than int64; InvalidArgument for a constant_value whose dtype is not
/// the data's.
class PadOp final : public Op {
 public:
  PadOp(const Attrs& a, const OpContext& ctx) : Op(ctx) {
    const std::string mode = a.get_enum("mode", "constant", {"constant", "reflect", "edge"});
    mode_ = mode == "reflect" ? PadMode::kReflect
            : mode == "edge"  ? PadMode::kEdge
                              : PadMode::kConstant;
    if (ctx.opset < 11) {
      pads_attr_ = a.require_ints("pads");
      value_attr_ = a.get_float("value", 0.0f);
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    TERN_CHECK(inputs.size() < 4 || !inputs[3].present, UnsupportedOpError,
               "{}: the axes input (Pad-18) is not supported", where());
    if (context().opset >= 11 && has_input(inputs, 2)) {
      check_same_dtype(inputs[2].dtype, inputs[0].dtype, where(), 2, "constant_value", 0, "data");
      TERN_CHECK(shape_numel(inputs[2].shape) <= 1, InvalidArgument,
                 "{}: expected constant_value to be one value, but got shape {}", where(),
                 shape_str(inputs[2].shape));
    }
    const std::vector<int64_t> pads = read_pads(inputs);
    const Shape& x = inputs[0].shape;
    const size_t rank = x.size();
    Shape y(rank);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t pb = pads[d], pe = pads[rank + d];
      // Each side crops at most the whole dim, so -pb and -pe cannot overflow below, and
      // the kernel's sum x + pb + pe (same order) is known to fit.
      TERN_CHECK(pb >= -x[d] && pe >= -x[d], ShapeError,
                 "{}: pads {} crop more than the {} elements of dim {} (input {})", where(), pads,
                 x[d], d, shape_str(x));
      y[d] = checked_add(checked_add(x[d], pb, where(), "output dim {} (input dim + pads)", d), pe,
                         where(), "output dim {} (input dim + pads)", d);
      TERN_CHECK(y[d] >= 0, ShapeError,
                 "{}: pads {} crop more than the {} elements of dim {} (input {})", where(), pads,
                 x[d], d, shape_str(x));
      const int64_t kept = x[d] - std::max<int64_t>(0, -pb) - std::max<int64_t>(0, -pe);
      TERN_CHECK(mode_ == PadMode::kConstant || kept > 0 || (pb <= 0 && pe <= 0), ShapeError,
                 "{}: {} padding of dim {} needs at least one input element, but input {} "
                 "with pads {} leaves none",
                 where(), mode_ == PadMode::kReflect ? "reflect" : "edge", d, shape_str(x), pads);
    }
    checked_numel(y, where());
    return {TensorType{inputs[0].dtype, y}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    const std::vector<InferInput> info = infer_inputs_from(inputs);
    const std::vector<int64_t> pads = read_pads(info);
    Tensor& y = outputs[0];
    if (y.numel() == 0) return;
    const int rank = x.rank();
    // The fill value as one element of the data's dtype.
    const DType dt = x.dtype();
    const int elem = static_cast<int>(dtype_size(dt));
    alignas(8) unsigned char value[8] = {};
    if (ctx_.opset >= 11 && has_input(inputs, 2) && inputs[2].numel() == 1) {
      std::memcpy(value, inputs[2].contiguous().raw_data(), elem);  // infer() checked dtype
    } else {
      kernels::ref::cast(1, DType::kFloat32, &value_attr_, 0, dt, value);
    }
    if (rank == 0) {  // a scalar has nothing to pad
      std::memcpy(y.raw_data(), x.raw_data(), elem);
      return;
    }
    kernels::ref::PadParams p;
    p.rank = rank;
    p.in_shape = x.shape().data();
    p.pad_begin = pads.data();
    p.pad_end = pads.data() + rank;
    p.mode = mode_;
    const void* xd = x.raw_data();
    void* yd = y.raw_data();
    const int64_t rows = y.numel() / y.shape().back();
    parallel_ranges(rows, ctx.num_threads, [&](int64_t begin, int64_t end) {
      kernels::ref::pad_any(p, elem, xd, yd, value, begin, end);
    });
  }

 private:
  std::vector<int64_t> read_pads(std::span<const InferInput> inputs) const {
    std::vector<int64_t> pads = pads_attr_;
    if (ctx_.opset >= 11) {
      TERN_CHECK(inputs.size() > 1 && inputs[1].present, ModelError,
                 "{}: the input pads is required from opset 11", where());
      const Tensor& t = require_value(inputs, 1);
      check_dtype(t.dtype(), {DType::kInt64}, where(), 1, "pads");
      pads = t.to_int64_vector();
    }
    const size_t rank = inputs[0].shape.size();
    TERN_CHECK(pads.size() == 2 * rank, ShapeError,
               "{}: expected pads with {} values (begin and end for each of the {} dims of "
               "{}), but got {}",
               where(), 2 * rank, rank, shape_str(inputs[0].shape), pads.size());
    return pads;
  }

  PadMode mode_;
  std::vector<int64_t> pads_attr_;
  float value_attr_ = 0.0f;
};

}  // namespace

void register_pad(OpRegistry& r) { r.add(make_schema<PadOp>("Pad", 1, 4)); }

}  // namespace tern::ops
