// Reductions: ReduceMean, ReduceMax, ReduceMin, ReduceSum, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp over a set of axes, and ArgMax / ArgMin
// over one. Sources: ONNX Reduce*-13 (axes attribute; keepdims, default 1; no axes = all
// axes), ReduceSum-13 and Reduce*-18 (axes become an optional int64 input, with
// noop_with_empty_axes: no axes then means identity), ArgMax-13 / ArgMin-13 (axis,
// keepdims, select_last_index from opset 12; int64 output). Dtypes: float32, float64,
// int32, int64. An empty reduction gives the kind's identity (0, 1, -inf for LogSum...).
//
// The input (made contiguous) is brought to the kernel form [outer, reduce, inner] by
// dropping size-1 dims and merging neighbours of the same kind (kept / reduced). For the
// kinds that compose (Sum, Mean, Max, Min, Prod) reduced blocks that are not adjacent take
// one pass each, innermost first, through scratch buffers (means are summed pass by pass
// and divided once at the end); the others (L1, L2, SumSquare, LogSum, LogSumExp) first
// permute the reduced dims to the end so one pass sees every reduced element.
#include "kernels/reference/reduce.h"

#include <algorithm>
#include <limits>

#include "ops/op_args.h"
#include "ops/registry.h"
#include "ops/parallel.h"

namespace tern::ops {

namespace {

using kernels::ref::ReduceKind;
using kernels::ref::ReduceParams;

/// A dim of the merged reduction layout.
struct Block {
  int64_t size;
  bool reduced;
};

/// The input dims with size-1 dims dropped and neighbours of the same kind merged.
std::vector<Block> merge_blocks(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<Block> blocks;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!blocks.empty() && blocks.back().reduced == reduced[d]) {
      blocks.back().size *= shape[d];
    } else {
      blocks.push_back(Block{shape[d], reduced[d]});
    }
  }
  return blocks;
}

class ReduceOp final : public Op {
 public:
  ReduceOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    static const std::pair<const char*, ReduceKind> kKinds[] = {
        {"ReduceMean", ReduceKind::kMean},     {"ReduceMax", ReduceKind::kMax},
        {"ReduceMin", ReduceKind::kMin},       {"ReduceSum", ReduceKind::kSum},
        {"ReduceProd", ReduceKind::kProd},     {"ReduceL1", ReduceKind::kL1},
        {"ReduceL2", ReduceKind::kL2},         {"ReduceSumSquare", ReduceKind::kSumSquare},
        {"ReduceLogSum", ReduceKind::kLogSum}, {"ReduceLogSumExp", ReduceKind::kLogSumExp}};
    bool found = false;
    for (const auto& [name, kind] : kKinds) {
      if (ctx.op_type == name) {
        kind_ = kind;
        found = true;
      }
    }
    TERN_CHECK(found, UnsupportedOpError, "{}: not a reduction", where());
    axes_from_input_ = ctx.opset >= (kind_ == ReduceKind::kSum ? 13 : 18);
    noop_with_empty_axes_ = axes_from_input_ && attrs.get_int("noop_with_empty_axes", 0) != 0;
    keepdims_ = attrs.get_int("keepdims", 1) != 0;
    if (!axes_from_input_) axes_attr_ = attrs.get_ints("axes", {});
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    check_dtype(x.dtype, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}, where(),
                0, "data");
    TERN_CHECK(axes_from_input_ || !has_input(inputs, 1), ModelError,
               "{}: takes one input at opset {} (axes is an attribute before opset {})", where(),
               ctx_.opset, kind_ == ReduceKind::kSum ? 13 : 18);
    const std::vector<bool> reduced = reduced_dims(inputs);
    return {TensorType{x.dtype, output_shape(x.shape, reduced)}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    Tensor& y = outputs[0];
    if (!y.defined()) return;
    check_contiguous_output(y, where());
    const Tensor x = inputs[0].contiguous();
    const std::vector<bool> reduced = reduced_dims(infer_inputs_from(inputs));
    visit_dtype<float, double, int32_t, int64_t>(
        x.dtype(), where(), [&]<typename T>() { reduce_typed<T>(x, reduced, y, ctx.num_threads); });
  }

 private:
  // Which input dims are reduced (all of them when no axes are given, none for the
  // ReduceSum-13 no-op).
  std::vector<bool> reduced_dims(std::span<const InferInput> inputs) const {
    const int rank = static_cast<int>(inputs[0].shape.size());
    std::vector<int64_t> axes = axes_attr_;
    if (axes_from_input_ && has_input(inputs, 1)) {
      axes = int_values(require_value(inputs, 1), where(), 1, "axes");
    }
    if (axes.empty()) return std::vector<bool>(rank, !noop_with_empty_axes_);
    std::vector<bool> reduced(rank, false);
    for (int a : normalize_axes(axes, rank, where())) reduced[a] = true;
    return reduced;
  }

  Shape output_shape(const Shape& in, const std::vector<bool>& reduced) const {
    Shape out;
    for (size_t d = 0; d < in.size(); ++d) {
      if (!reduced[d]) {
        out.push_back(in[d]);
      } else if (keepdims_) {
        out.push_back(1);
      }
    }
    return out;
  }

  template <typename T>
  void reduce_typed(const Tensor& x_in, const std::vector<bool>& reduced_in, Tensor& y,
                    int num_threads) const {
    T* out = y.data<T>();
    const int64_t out_n = y.numel();
    if (out_n == 0) return;
    if (x_in.numel() == 0) {
      // Every output element reduces an empty set: the kernel gives the identity.
      ReduceParams p;
      p.kind = kind_;
      p.outer = out_n;
      p.reduce = 0;
      kernels::ref::reduce<T>(p, nullptr, out);
      return;
    }
    Tensor x = x_in;
    std::vector<bool> reduced = reduced_in;
    std::vector<Block> blocks = merge_blocks(x.shape(), reduced);
    int reduced_blocks = 0;
    for (const Block& b : blocks) reduced_blocks += b.reduced ? 1 : 0;
    if (reduced_blocks > 1 && !kernels::ref::reduce_kind_composes(kind_)) {
      // Kept dims first, reduced dims last (each group in order): one reduced block.
      std::vector<int> perm;
      for (int pass = 0; pass < 2; ++pass) {
        for (int d = 0; d < x.rank(); ++d) {
          if (reduced[d] == (pass == 1)) perm.push_back(d);
        }
      }
      x = x.permute(perm).contiguous();
      reduced.assign(x.rank(), false);
      for (int d = 0; d < x.rank(); ++d) reduced[d] = reduced_in[perm[d]];
      blocks = merge_blocks(x.shape(), reduced);
    }
    const T* src = x.data<T>();
    int64_t count = 1;  // elements reduced into each output
    int passes = 0;
    for (const Block& b : blocks) passes += b.reduced ? 1 : 0;
    if (passes == 0) {  // only size-1 dims are reduced: each output reduces one element
      ReduceParams p;
      p.kind = kind_;
      p.outer = out_n;
      kernels::ref::reduce<T>(p, src, out);
      return;
    }
    // Innermost reduced block first; each pass removes one block.
    Tensor scratch[2];
    for (int pass = 0; pass < passes; ++pass) {
      int r = static_cast<int>(blocks.size()) - 1;
      while (!blocks[r].reduced) --r;
      ReduceParams p;
      // A mean over several passes sums in each and divides once at the end.
      p.kind = (passes == 1 || kind_ != ReduceKind::kMean) ? kind_ : ReduceKind::kSum;
      p.reduce = blocks[r].size;
      for (int i = 0; i < r; ++i) p.outer *= blocks[i].size;
      for (size_t i = r + 1; i < blocks.size(); ++i) p.inner *= blocks[i].size;
      count *= p.reduce;
      T* dst = out;
      if (pass + 1 < passes) {
        scratch[pass % 2] = Tensor::empty(dtype_of<T>(), {p.outer * p.inner});
        dst = scratch[pass % 2].template data<T>();
      }
      run_parallel(p, src, dst, num_threads);
      src = dst;
      blocks.erase(blocks.begin() + r);
    }
    if (kind_ == ReduceKind::kMean && passes > 1) {
      for (int64_t i = 0; i < out_n; ++i) out[i] = static_cast<T>(out[i] / static_cast<T>(count));
    }
  }

  // Splits the outer dim over threads (each chunk is an independent kernel call).
  template <typename T>
  static void run_parallel(const ReduceParams& p, const T* src, T* dst, int num_threads) {
    const int64_t work = p.outer * p.reduce * p.inner;
    const int chunks =
        static_cast<int>(std::min<int64_t>({static_cast<int64_t>(std::max(num_threads, 1)), p.outer,
                                            std::max<int64_t>(1, work >> 15)}));
    if (chunks <= 1) {
      kernels::ref::reduce<T>(p, src, dst);
      return;
    }
    parallel_ranges(p.outer, chunks, [&](int64_t o0, int64_t o1) {
      ReduceParams q = p;
      q.outer = o1 - o0;
      kernels::ref::reduce<T>(q, src + o0 * p.reduce * p.inner, dst + o0 * p.inner);
    });
  }

  ReduceKind kind_ = ReduceKind::kSum;
  bool keepdims_ = true;
  bool axes_from_input_ = false;
  bool noop_with_empty_axes_ = false;
  std::vector<int64_t> axes_attr_;
};

/// ArgMax and ArgMin (arg_min_).
class ArgMaxOp final : public Op {
 public:
  ArgMaxOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    axis_ = attrs.get_int("axis", 0);
    keepdims_ = attrs.get_int("keepdims", 1) != 0;
    select_last_ = ctx.opset >= 12 && attrs.get_int("select_last_index", 0) != 0;
    arg_min_ = ctx.op_type == "ArgMin";
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    check_dtype(x.dtype, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}, where(),
                0, "data");
    const int rank = static_cast<int>(x.shape.size());
    const int axis = normalize_axis(axis_, rank, where());
    TERN_CHECK(x.shape[axis] > 0, ShapeError,
               "{}: cannot take the index of an extreme over axis {} of size 0 (input shape {})",
               where(), axis, shape_str(x.shape));
    Shape out = x.shape;
    if (keepdims_) {
      out[axis] = 1;
    } else {
      out.erase(out.begin() + axis);
    }
    return {TensorType{DType::kInt64, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    Tensor& y = outputs[0];
    if (!y.defined() || y.numel() == 0) return;
    check_contiguous_output(y, where());
    const Tensor x = inputs[0].contiguous();
    const int axis = normalize_axis(axis_, x.rank(), where());
    kernels::ref::ArgMaxParams p;
    p.reduce = x.dim(axis);
    p.select_last_index = select_last_;
    p.arg_min = arg_min_;
    for (int d = 0; d < axis; ++d) p.outer *= x.dim(d);
    for (int d = axis + 1; d < x.rank(); ++d) p.inner *= x.dim(d);
    visit_dtype<float, double, int32_t, int64_t>(x.dtype(), where(), [&]<typename T>() {
      kernels::ref::argmax<T>(p, x.data<T>(), y.data<int64_t>());
    });
  }

 private:
  int64_t axis_ = 0;
  bool keepdims_ = true;
  bool select_last_ = false;
  bool arg_min_ = false;
};

}  // namespace

void register_reduce(OpRegistry& r) {
  for (const char* name :
       {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    r.add(make_schema<ReduceOp>(name, 1, 2));  // axes input: ReduceSum-13, the others -18
  }
  r.add(make_schema<ArgMaxOp>("ArgMax", 1, 1));
  r.add(make_schema<ArgMaxOp>("ArgMin", 1, 1));
}

}  // namespace tern::ops
