// Classification losses: NegativeLogLikelihoodLoss (ONNX NegativeLogLikelihoodLoss-13, same
// semantics as -12) and SoftmaxCrossEntropyLoss (ONNX SoftmaxCrossEntropyLoss-13 / -12).
//
// Shapes: scores or log-probabilities X [N, C, d1, ..., dk] (k >= 0), targets T
// [N, d1, ..., dk] (int32/int64, each in [0, C) or equal to ignore_index), optional
// per-class weights W [C]. The loss of element (n, d) is -W[t] * X[n, t, d] with t = T[n, d]
// (W = 1 without weights; 0 where t == ignore_index). reduction "none" gives [N, d1..dk],
// "sum" the sum, "mean" (default) the sum divided by the sum of the weights used (the count
// of elements not ignored, without W). SoftmaxCrossEntropyLoss first takes log_softmax of
// the scores over axis 1 and can return it as a second output. Dtypes: float32, float64,
// float16 (sums in double). A target outside [0, C) that is not ignore_index is an
// InvalidArgument naming its position.
#include <cmath>
#include <optional>

#include "base/dtype_dispatch.h"
#include "base/float16.h"
#include "ops/op_args.h"
#include "ops/registry.h"

namespace tern::ops {

namespace {

template <typename T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return half_to_float(v.bits);
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16{float_to_half(static_cast<float>(v))};
  } else {
    return static_cast<T>(v);
  }
}

class LossOp final : public Op {
 public:
  LossOp(const Attrs& attrs, const OpContext& ctx) : Op(ctx) {
    softmax_ = ctx.op_type == "SoftmaxCrossEntropyLoss";
    const std::string reduction = attrs.get_string("reduction", "mean");
    TERN_CHECK(reduction == "none" || reduction == "sum" || reduction == "mean", ModelError,
               "{}: reduction is '{}' (expected none, sum or mean)", where(), reduction);
    reduction_ = reduction;
    if (attrs.has("ignore_index")) ignore_index_ = attrs.get_int("ignore_index", 0);
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const InferInput& x = inputs[0];
    const InferInput& t = inputs[1];
    const char* x_name = softmax_ ? "scores" : "input";
    check_dtype(x.dtype, {DType::kFloat32, DType::kFloat64, DType::kFloat16}, where(), 0, x_name);
    check_dtype(t.dtype, {DType::kInt32, DType::kInt64}, where(), 1,
                softmax_ ? "labels" : "target");
    TERN_CHECK(x.shape.size() >= 2 && t.shape.size() == x.shape.size() - 1, ShapeError,
               "{}: expected {} of shape [N, C, d1..dk] and targets [N, d1..dk], got {} and {}",
               where(), x_name, shape_str(x.shape), shape_str(t.shape));
    Shape want = x.shape;
    want.erase(want.begin() + 1);
    TERN_CHECK(t.shape == want, ShapeError, "{}: targets have shape {}, expected {} (from {} {})",
               where(), shape_str(t.shape), shape_str(want), x_name, shape_str(x.shape));
    if (has_input(inputs, 2)) {
      check_same_dtype(inputs[2].dtype, x.dtype, where(), 2, "weights", 0, x_name);
      TERN_CHECK(inputs[2].shape == Shape{x.shape[1]}, ShapeError,
                 "{}: weights have shape {}, expected [{}] (one per class)", where(),
                 shape_str(inputs[2].shape), x.shape[1]);
    }
    std::vector<TensorType> out = {TensorType{x.dtype, reduction_ == "none" ? want : Shape{}}};
    if (softmax_) out.push_back(TensorType{x.dtype, x.shape});  // log_prob
    return out;
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    (void)ctx;
    const Tensor x = inputs[0].contiguous();
    const std::vector<int64_t> targets = inputs[1].to_int64_vector();
    const int64_t n = x.dim(0), c = x.dim(1);
    const int64_t inner = n == 0 || c == 0 ? 0 : x.numel() / (n * c);
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, Float16>) {
        const T* xs = static_cast<const T*>(x.raw_data());
        // Log-probabilities: X itself, or log_softmax over the class axis.
        std::vector<double> logp(static_cast<size_t>(x.numel()));
        for (int64_t i = 0; i < x.numel(); ++i) logp[i] = to_double(xs[i]);
        if (softmax_) log_softmax(logp, n, c, inner);
        if (outputs.size() > 1 && outputs[1].defined()) {
          T* lp = static_cast<T*>(outputs[1].raw_data());
          for (int64_t i = 0; i < x.numel(); ++i) lp[i] = from_double<T>(logp[i]);
        }
        std::vector<double> weights;
        if (has_input(inputs, 2)) {
          const Tensor w = inputs[2].contiguous();
          for (int64_t k = 0; k < c; ++k)
            weights.push_back(to_double(static_cast<const T*>(w.raw_data())[k]));
        }
        std::vector<double> loss(static_cast<size_t>(n * inner));
        double weight_sum = 0;
        for (int64_t b = 0; b < n; ++b) {
          for (int64_t d = 0; d < inner; ++d) {
            const int64_t t = targets[b * inner + d];
            if (ignore_index_ && t == *ignore_index_) {
              loss[b * inner + d] = 0;
              continue;
            }
            TERN_CHECK(t >= 0 && t < c, InvalidArgument,
                       "{}: target {} at flat position {} is outside [0, {}) and is not "
                       "ignore_index",
                       where(), t, b * inner + d, c);
            const double w = weights.empty() ? 1.0 : weights[t];
            loss[b * inner + d] = -w * logp[(b * c + t) * inner + d];
            weight_sum += w;
          }
        }
        Tensor& y = outputs[0];
        T* out = static_cast<T*>(y.raw_data());
        if (reduction_ == "none") {
          for (size_t i = 0; i < loss.size(); ++i) out[i] = from_double<T>(loss[i]);
          return;
        }
        double total = 0;
        for (double v : loss) total += v;
        out[0] = from_double<T>(reduction_ == "sum" ? total : total / weight_sum);
      } else {
        TERN_THROW(UnsupportedOpError, "{}: dtype {} is not supported", where(),
                   dtype_name(x.dtype()));
      }
    });
  }

 private:
  // In place: v[b, :, d] <- v[b, :, d] - log(sum(exp(v[b, :, d]))), max-shifted.
  static void log_softmax(std::vector<double>& v, int64_t n, int64_t c, int64_t inner) {
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t d = 0; d < inner; ++d) {
        double m = -INFINITY;
        for (int64_t k = 0; k < c; ++k) m = std::max(m, v[(b * c + k) * inner + d]);
        double s = 0;
        for (int64_t k = 0; k < c; ++k) s += std::exp(v[(b * c + k) * inner + d] - m);
        const double lse = m + std::log(s);
        for (int64_t k = 0; k < c; ++k) v[(b * c + k) * inner + d] -= lse;
      }
    }
  }

  bool softmax_ = false;
  std::string reduction_;
  std::optional<int64_t> ignore_index_;
};

}  // namespace

void register_loss(OpRegistry& r) {
  r.add(make_schema<LossOp>("NegativeLogLikelihoodLoss", 2, 3));
  r.add(make_schema<LossOp>("SoftmaxCrossEntropyLoss", 2, 3, 1, 2));
}

}  // namespace tern::ops
