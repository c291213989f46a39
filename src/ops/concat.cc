// Concat: joins 1..N inputs of equal rank and dtype along `axis` (negative counts from the
// end); every other dim must match. Any dtype; inputs may be strided and may have size 0
// along the axis. Source: ONNX Concat-13.
//
// With the internal attributes `block` = c and `channels` = the inputs' logical channel
// counts (set by assign-layout), it joins float32 NCHWc inputs [N, ceil(C_k / c), H, W, c]
// along the logical channels into [N, ceil(sum C_k / c), H, W, c]: input k's channels
// go to channels [C_0 + .. + C_(k-1), ..) at any lane (kernels/concat), the padded lanes
// after the last channel are 0, and the inputs' padded lanes are not read. That is the
// Concat of maps whose channel counts are not multiples of c (ppocr's neck: four 24
// channel maps), which axis 1 of the 5-D tensors cannot join.
#include "kernels/concat/concat.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "ops/broadcast.h"
#include "ops/op_args.h"
#include "ops/parallel.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

class ConcatOp final : public Op {
 public:
  ConcatOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    axis_ = attrs.require_int("axis");
    channels_ = attrs.get_ints("channels", {});
    block_ = attrs.get_int("block", 0);
    TERN_CHECK(channels_.empty() ? block_ == 0 : block_ >= 1 && axis_ == 1, ModelError,
               "{}: attributes channels and block go together, with block >= 1 and axis 1 "
               "(NCHWc), got {} channel counts, block {} and axis {}",
               where(), channels_.size(), block_, axis_);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    TERN_CHECK(!inputs.empty() && inputs[0].present, ModelError, "{}: expected at least one input",
               where());
    if (!channels_.empty()) return {infer_blocked(inputs)};
    const InferInput& first = inputs[0];
    const int rank = static_cast<int>(first.shape.size());
    TERN_CHECK(rank > 0, ShapeError, "{}: cannot concatenate scalars (input 0 has rank 0)",
               where());
    const int axis = normalize_axis(axis_, rank, where());
    Shape out = first.shape;
    out[axis] = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const InferInput& in = inputs[i];
      TERN_CHECK(in.present, ModelError, "{}: input {} is missing", where(), i);
      check_same_dtype(in.dtype, first.dtype, where(), static_cast<int>(i), "inputs", 0, "inputs");
      bool fits = static_cast<int>(in.shape.size()) == rank;
      for (int d = 0; fits && d < rank; ++d) fits = d == axis || in.shape[d] == first.shape[d];
      TERN_CHECK(fits, ShapeError,
                 "{}: input {} of shape {} does not fit input 0 of shape {} (expected the same "
                 "rank and equal dims except on axis {})",
                 where(), i, shape_str(in.shape), shape_str(first.shape), axis);
      out[axis] = checked_add(out[axis], in.shape[axis], where(), "output dim {}", axis);
    }
    return {TensorType{first.dtype, out}};
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    if (!outputs[0].defined()) return;
    if (!channels_.empty()) return run_blocked(inputs, outputs[0], ctx.num_threads);
    // The inputs not already in place, copied in one parallel region (copy_strided_parts:
    // thread t copies the same fraction of every input, the pixels it wrote).
    const std::vector<Part> parts = parts_to_copy(inputs, outputs[0]);
    std::vector<StridedOperand> dst_ops, src_ops;
    for (const Part& part : parts) {
      dst_ops.push_back(StridedOperand::of(part.dst));
      src_ops.push_back(StridedOperand::of(*part.x));
    }
    copy_strided_parts(dst_ops, src_ops, ctx.num_threads);
  }

  // A plan whose inputs all sit in their slices of y (concat-slices) copies nothing: a
  // call that does nothing (run() still cost about 2 us to find that out, UltraFace's
  // score Concat of 4 inputs); otherwise run() each time.
  BoundRun bind(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                const ExecContext&) const override {
    if (!outputs[0].defined() || !channels_.empty() || !parts_to_copy(inputs, outputs[0]).empty())
      return {};
    return [](const ExecContext&) {};
  }

 private:
  // The NCHWc output type for channels_: every input float32 [N, ceil(C_k / c), H, W, c]
  // with the N, H and W of input 0.
  TensorType infer_blocked(std::span<const InferInput> inputs) const {
    TERN_CHECK(inputs.size() == channels_.size(), ModelError,
               "{}: {} inputs for {} entries of attribute channels", where(), inputs.size(),
               channels_.size());
    const Shape& first = inputs[0].shape;
    int64_t total = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const InferInput& in = inputs[i];
      TERN_CHECK(in.present, ModelError, "{}: input {} is missing", where(), i);
      check_dtype(in.dtype, {DType::kFloat32}, where(), static_cast<int>(i), "inputs");
      const int64_t ch = channels_[i];
      const bool fits = in.shape.size() == 5 && first.size() == 5 && ch >= 0 &&
                        in.shape[1] == (ch + block_ - 1) / block_ && in.shape[4] == block_ &&
                        in.shape[0] == first[0] && in.shape[2] == first[2] &&
                        in.shape[3] == first[3];
      TERN_CHECK(fits, ShapeError,
                 "{}: input {} of shape {} is not NCHWc [{}, {}, {}, {}, {}] for {} channels",
                 where(), i, shape_str(in.shape), first.empty() ? 0 : first[0],
                 (ch + block_ - 1) / block_, first.size() > 2 ? first[2] : 0,
                 first.size() > 3 ? first[3] : 0, block_, ch);
      total = checked_add(total, ch, where(), "channels");
    }
    return TensorType{DType::kFloat32,
                      {first[0], (total + block_ - 1) / block_, first[2], first[3], block_}};
  }

  // channels_' Concat: each thread takes a range of pixels of every input (runs of 16; at
  // least BroadcastIterator::kDefaultGrain elements of y per thread), then zeroes its
  // pixels' padded lanes after the last channel.
  void run_blocked(std::span<const Tensor> inputs, Tensor& y, int num_threads) const {
    const int64_t c = block_, n = y.dim(0), yb = y.dim(1), hw = y.dim(2) * y.dim(3);
    const int threads = static_cast<int>(std::clamp<int64_t>(
        y.numel() / BroadcastIterator::kDefaultGrain, 1, std::max(1, num_threads)));
    int64_t total = 0;
    for (int64_t ch : channels_) total += ch;
    std::vector<Tensor> xs;
    for (const Tensor& x : inputs) xs.push_back(x.contiguous());
    float* yd = y.data<float>();
    parallel_ranges((hw + 15) / 16, threads, [&](int64_t begin, int64_t end) {
      const int64_t s0 = begin * 16, s1 = std::min(end * 16, hw);
      int64_t offset = 0;
      for (size_t k = 0; k < xs.size(); ++k) {
        const kernels::ref::ChannelCopy p{n, hw, c, channels_[k], offset, yb};
        kernels::f32_nchwc_copy_channels(p, xs[k].data<float>(), yd, s0, s1);
        offset += channels_[k];
      }
      if (total % c == 0) return;
      for (int64_t i = 0; i < n; ++i) {
        float* last = yd + ((i * yb + yb - 1) * hw) * c;
        for (int64_t s = s0; s < s1; ++s)
          std::fill(last + s * c + total % c, last + (s + 1) * c, 0.0f);
      }
    });
  }

  // An input to copy and its slice of y.
  struct Part {
    const Tensor* x;
    Tensor dst;
  };

  // The inputs that are not already in their slices of y, which the plan may have had
  // their producers write into (concat-slices); empty inputs need nothing.
  std::vector<Part> parts_to_copy(std::span<const Tensor> inputs, Tensor& y) const {
    const int axis = normalize_axis(axis_, y.rank(), where());
    std::vector<Part> parts;
    int64_t offset = 0;
    for (const Tensor& x : inputs) {
      const int64_t len = x.dim(axis);
      if (len == 0) continue;
      Tensor dst = y.slice(axis, offset, offset + len);
      offset += len;
      if (dst.raw_data() == x.raw_data() && dst.is_contiguous() && x.is_contiguous()) continue;
      parts.push_back(Part{&x, std::move(dst)});
    }
    return parts;
  }

  int64_t axis_ = 0;
  std::vector<int64_t> channels_;  // NCHWc inputs' logical channels (empty: a plain Concat)
  int64_t block_ = 0;
};

}  // namespace

void register_concat(OpRegistry& r) { r.add(make_schema<ConcatOp>("Concat", 1, 1 << 16)); }

}  // namespace tern::ops
