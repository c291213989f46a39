#include "ops/registry.h"

#include "base/check.h"

namespace tern::ops {

// One registration function per op file (src/ops/<file>.cc defines register_<file>).
// This list is the one place that says which ops exist.
void register_conv(OpRegistry& r);            // Conv
void register_conv_transpose(OpRegistry& r);  // ConvTranspose
void register_batch_norm(OpRegistry& r);      // BatchNormalization
void register_pool(OpRegistry& r);            // MaxPool, AveragePool, Global{Average,Max}Pool,
                                              // MaxUnpool
void register_gemm(OpRegistry& r);            // Gemm
void register_matmul(OpRegistry& r);          // MatMul
void register_fused_conv(OpRegistry& r);      // tern.FusedConv (internal)
void register_conv_chain(OpRegistry& r);      // tern.ConvChain (internal)
void register_fused_matmul(OpRegistry& r);    // tern.FusedGemm, tern.FusedMatMul (internal)
void register_softmax(OpRegistry& r);         // Softmax, LogSoftmax, Hardmax
void register_norm(OpRegistry& r);            // InstanceNormalization, LayerNormalization,
                                              // MeanVarianceNormalization, LRN
void register_depth_to_space(OpRegistry& r);  // DepthToSpace, SpaceToDepth
void register_resize(OpRegistry& r);          // Resize, Upsample
void register_pad(OpRegistry& r);             // Pad
void register_unary(OpRegistry& r);           // Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish,
                                              // Tanh, Exp, Log, Sqrt, Neg, Abs, Sign, Erf, Elu,
                                              // Selu, Celu, Softplus, Softsign, ThresholdedRelu,
                                              // Reciprocal, Floor, Ceil, Round, Sin, Cos, Tan,
                                              // Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh,
                                              // Atanh, Shrink, IsNaN, IsInf
void register_clip(OpRegistry& r);            // Clip
void register_binary(OpRegistry& r);          // Add, Sub, Mul, Div, Mod, BitShift, Pow, PRelu
void register_variadic(OpRegistry& r);        // Max, Min, Sum, Mean
void register_compare(OpRegistry& r);         // Equal, Greater, GreaterOrEqual, Less, LessOrEqual
void register_logical(OpRegistry& r);         // And, Or, Xor, Not
void register_where(OpRegistry& r);           // Where
void register_reshape(OpRegistry& r);         // Reshape, Flatten, Squeeze, Unsqueeze
void register_transpose(OpRegistry& r);       // Transpose
void register_concat(OpRegistry& r);          // Concat
void register_split(OpRegistry& r);           // Split
void register_slice(OpRegistry& r);           // Slice
void register_shape(OpRegistry& r);           // Shape, Size
void register_gather(OpRegistry& r);          // Gather, GatherElements, GatherND
void register_cast(OpRegistry& r);            // Cast, CastLike
void register_constant(OpRegistry& r);        // Constant, ConstantOfShape
void register_identity(OpRegistry& r);        // Identity, Dropout
void register_reduce(OpRegistry& r);          // ReduceMean/Max/Min/Sum/Prod/L1/L2/SumSquare/
                                              // LogSum/LogSumExp, ArgMax, ArgMin
void register_expand(OpRegistry& r);          // Expand
void register_tile(OpRegistry& r);            // Tile
void register_range(OpRegistry& r);           // Range
void register_cumsum(OpRegistry& r);          // CumSum
void register_topk(OpRegistry& r);            // TopK
void register_non_max_suppression(OpRegistry& r);  // NonMaxSuppression
void register_einsum(OpRegistry& r);               // Einsum
void register_trilu(OpRegistry& r);                // Trilu, EyeLike
void register_nonzero(OpRegistry& r);              // NonZero, Compress
void register_onehot(OpRegistry& r);               // OneHot
void register_scatter(OpRegistry& r);              // ScatterElements, Scatter, ScatterND
void register_reverse_sequence(OpRegistry& r);     // ReverseSequence
void register_loss(OpRegistry& r);                 // NegativeLogLikelihoodLoss,
                                                   // SoftmaxCrossEntropyLoss
void register_reorder(OpRegistry& r);              // tern.Reorder (NCHW <-> NCHWc)
void register_scale_shift(OpRegistry& r);          // tern.ScaleShift (internal)

namespace {

OpRegistry build_registry() {
  OpRegistry r;
  register_conv(r);
  register_conv_transpose(r);
  register_batch_norm(r);
  register_pool(r);
  register_gemm(r);
  register_matmul(r);
  register_fused_conv(r);
  register_conv_chain(r);
  register_fused_matmul(r);
  register_softmax(r);
  register_norm(r);
  register_depth_to_space(r);
  register_resize(r);
  register_pad(r);
  register_unary(r);
  register_clip(r);
  register_binary(r);
  register_variadic(r);
  register_compare(r);
  register_logical(r);
  register_where(r);
  register_reshape(r);
  register_transpose(r);
  register_concat(r);
  register_split(r);
  register_slice(r);
  register_shape(r);
  register_gather(r);
  register_cast(r);
  register_constant(r);
  register_identity(r);
  register_reduce(r);
  register_expand(r);
  register_tile(r);
  register_range(r);
  register_cumsum(r);
  register_topk(r);
  register_non_max_suppression(r);
  register_einsum(r);
  register_trilu(r);
  register_nonzero(r);
  register_onehot(r);
  register_scatter(r);
  register_reverse_sequence(r);
  register_loss(r);
  register_reorder(r);
  register_scale_shift(r);
  return r;
}

}  // namespace

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry = build_registry();
  return registry;
}

namespace {
std::string registry_key(const std::string& domain, const std::string& op_type) {
  return domain.empty() ? op_type : domain + "." + op_type;
}
}  // namespace

void OpRegistry::add(OpSchema schema) {
  std::string key = registry_key(schema.domain, schema.op_type);
  TERN_CHECK(schemas_.count(key) == 0, InvalidArgument, "op '{}' registered twice", key);
  schemas_.emplace(std::move(key), std::move(schema));
}

const OpSchema* OpRegistry::find(const std::string& op_type) const {
  auto it = schemas_.find(op_type);
  return it == schemas_.end() ? nullptr : &it->second;
}

const OpSchema* OpRegistry::find(const std::string& domain, const std::string& op_type) const {
  auto it = schemas_.find(registry_key(domain, op_type));
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> out;
  for (const auto& [name, schema] : schemas_)
    if (schema.domain.empty()) out.push_back(name);
  return out;
}

std::vector<InferInput> infer_inputs_from(std::span<const Tensor> tensors) {
  std::vector<InferInput> out(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined()) continue;
    out[i].present = true;
    out[i].dtype = tensors[i].dtype();
    out[i].shape = tensors[i].shape();
    out[i].value = &tensors[i];
  }
  return out;
}

}  // namespace tern::ops
