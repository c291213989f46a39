// DepthToSpace (ONNX -1/11/13; mode DCR default, CRD from opset 11) and SpaceToDepth
// (ONNX -1/13), every dtype: pure data movement, one output row at a time.
#include <cstring>
#include <vector>

#include "ops/op_args.h"
#include "ops/parallel.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

/// DepthToSpace / SpaceToDepth of a 4-D X [N, C, H, W] with attribute blocksize b >= 1:
///   DepthToSpace: Y [N, C / b^2, H * b, W * b]; C must be divisible by b^2.
///     DCR: Y[n, c, h*b + i, w*b + j] = X[n, (i*b + j) * C/b^2 + c, h, w]
///     CRD: Y[n, c, h*b + i, w*b + j] = X[n, c * b^2 + i*b + j, h, w]
///   SpaceToDepth: Y [N, C * b^2, H / b, W / b] (the inverse of DCR); H, W divisible by b.
/// ShapeError for another rank or an indivisible dim.
class SpaceDepthOp final : public Op {
 public:
  SpaceDepthOp(const Attrs& a, const OpContext& ctx)
      : Op(ctx), to_space_(ctx.op_type == "DepthToSpace"), block_(a.require_int("blocksize")) {
    TERN_CHECK(block_ >= 1, ModelError, "{}: attribute 'blocksize' must be >= 1, but got {}",
               where(), block_);
    if (to_space_) crd_ = a.get_enum("mode", "DCR", {"DCR", "CRD"}) == "CRD";
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const Shape& x = inputs[0].shape;
    TERN_CHECK(x.size() == 4, ShapeError, "{}: expected a 4-D input [N, C, H, W], but got {}",
               where(), shape_str(x));
    const int64_t b = block_;
    const int64_t bb = checked_mul(b, b, where(), "blocksize^2");
    if (to_space_) {
      TERN_CHECK(x[1] % bb == 0, ShapeError,
                 "{}: channels {} are not divisible by blocksize^2 = {}", where(), x[1], bb);
      return {TensorType{inputs[0].dtype,
                         {x[0], x[1] / bb, checked_mul(x[2], b, where(), "output height"),
                          checked_mul(x[3], b, where(), "output width")}}};
    }
    TERN_CHECK(x[2] % b == 0 && x[3] % b == 0, ShapeError,
               "{}: height {} and width {} must be divisible by blocksize {}", where(), x[2], x[3],
               b);
    return {
        TensorType{inputs[0].dtype,
                   {x[0], checked_mul(x[1], bb, where(), "output channels"), x[2] / b, x[3] / b}}};
  }

  // Row by row: an output row of DepthToSpace interleaves b input rows (element j of
  // every group of b from input row j), and SpaceToDepth splits a row the same way back.
  // (A permuted copy through Tensor::copy_from, whose innermost run is b elements, took
  // 6.7 ms for ppocr's [1, 96, 64, 96] -> [1, 24, 128, 192].)
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    const Tensor x = inputs[0].contiguous();
    Tensor& y = outputs[0];
    const size_t elem = dtype_size(x.dtype());
    if (x.dtype() == DType::kString) {
      run_strings(x, y);
      return;
    }
    const char* xd = static_cast<const char*>(x.raw_data());
    char* yd = static_cast<char*>(y.raw_data());
    // The space side [n, oc, sh, sw] (sh = h * b rows of sw = w * b) and the depth side
    // [n, oc * b * b, h, w] (the channel of block offset (i, j) per mode).
    const Tensor& space = to_space_ ? y : x;
    const Tensor& depth = to_space_ ? x : y;
    const int64_t b = block_, n = space.dim(0), oc = space.dim(1), h = depth.dim(2),
                  w = depth.dim(3);
    const int64_t dc = depth.dim(1);
    const auto depth_channel = [&](int64_t c, int64_t i, int64_t j) {
      return crd_ ? c * b * b + i * b + j : (i * b + j) * oc + c;
    };
    parallel_ranges(n * oc * h, ctx.num_threads, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> rows(static_cast<size_t>(b));  // byte offsets of the depth rows
      for (int64_t r = begin; r < end; ++r) {
        const int64_t row = r % h, c = r / h % oc, img = r / (h * oc);
        for (int64_t i = 0; i < b; ++i) {
          const int64_t space_row = (((img * oc + c) * h * b + row * b + i) * w * b) * elem;
          for (int64_t j = 0; j < b; ++j) {
            rows[j] = (((img * dc + depth_channel(c, i, j)) * h + row) * w) * elem;
          }
          if (to_space_) {
            interleave(xd, rows.data(), b, w, elem, yd + space_row);
          } else {
            deinterleave(xd + space_row, b, w, elem, yd, rows.data());
          }
        }
      }
    });
  }

 private:
  // out[k * b + j] = (base + rows[j])[k] for k < w, j < b (elements of `elem` bytes).
  static void interleave(const char* base, const int64_t* rows, int64_t b, int64_t w,
                         size_t elem, char* out) {
    if (elem == 4 && b == 2) {
      const float* a = reinterpret_cast<const float*>(base + rows[0]);
      const float* c = reinterpret_cast<const float*>(base + rows[1]);
      float* o = reinterpret_cast<float*>(out);
      for (int64_t k = 0; k < w; ++k) {
        o[2 * k] = a[k];
        o[2 * k + 1] = c[k];
      }
      return;
    }
    for (int64_t k = 0; k < w; ++k) {
      for (int64_t j = 0; j < b; ++j) {
        std::memcpy(out + (k * b + j) * elem, base + rows[j] + k * elem, elem);
      }
    }
  }

  // (base + rows[j])[k] = in[k * b + j]: the inverse of interleave.
  static void deinterleave(const char* in, int64_t b, int64_t w, size_t elem, char* base,
                           const int64_t* rows) {
    for (int64_t k = 0; k < w; ++k) {
      for (int64_t j = 0; j < b; ++j) {
        std::memcpy(base + rows[j] + k * elem, in + (k * b + j) * elem, elem);
      }
    }
  }

  // Strings are objects: the permuted copy (Tensor::copy_from copies them as strings).
  void run_strings(const Tensor& x, Tensor& y) const {
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
    if (to_space_) {
      const int64_t oc = c / (b * b);
      if (crd_) {
        const Tensor v = x.reshape({n, oc, b, b, h, w}).permute({0, 1, 4, 2, 5, 3});
        y.reshape({n, oc, h, b, w, b}).copy_from(v);
      } else {
        const Tensor v = x.reshape({n, b, b, oc, h, w}).permute({0, 3, 4, 1, 5, 2});
        y.reshape({n, oc, h, b, w, b}).copy_from(v);
      }
    } else {
      const Tensor v = x.reshape({n, c, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4});
      y.reshape({n, b, b, c, h / b, w / b}).copy_from(v);
    }
  }

  bool to_space_;
  bool crd_ = false;
  int64_t block_;
};

}  // namespace

void register_depth_to_space(OpRegistry& r) {
  r.add(make_schema<SpaceDepthOp>("DepthToSpace", 1, 1));
  r.add(make_schema<SpaceDepthOp>("SpaceToDepth", 1, 1));
}

}  // namespace tern::ops
