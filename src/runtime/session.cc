#include "tern/session.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_set>

#include "base/check.h"
#include "base/cpu.h"
#include "base/thread_pool.h"
#include "onnx/loader.h"
#include "ops/registry.h"
#include "runtime/plan.h"

namespace tern {

struct Session::Impl {
  SessionOptions options;
  int num_threads = 1;
  ir::Graph graph;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  // Plans by input shapes, most recently used last; at most kMaxPlans are kept so a
  // stream of ever-new image sizes does not grow memory without bound.
  static constexpr size_t kMaxPlans = 8;
  std::vector<std::unique_ptr<runtime::Plan>> plans;

  void init();
  std::vector<ops::TensorType> check_input_shapes(const std::vector<Shape>& shapes,
                                                  const std::vector<DType>* dtypes) const;
  runtime::Plan& plan_for(const std::vector<ops::TensorType>& types);
  passes::PipelineOptions pipeline_options() const;
  std::vector<ops::TensorType> types_for(const std::map<std::string, Shape>& shapes) const;
  // Binds `feeds` to the graph inputs by name (graph input order) and finds or builds
  // their plan; throws what run() documents.
  std::vector<const Tensor*> bind(const std::vector<NamedTensor>& feeds, runtime::Plan** plan);
};

namespace {

TensorInfo info_of(const ir::Value& v) {
  TensorInfo info;
  info.name = v.name;
  info.dtype = v.dtype;
  info.has_shape = v.has_shape;
  for (const ir::Dim& d : v.dims) {
    info.shape.push_back(d.value);
    info.dim_names.push_back(d.value >= 0 ? "" : d.param);
  }
  return info;
}

}  // namespace

std::string declared_shape_str(const TensorInfo& info) {
  if (!info.has_shape) return "(any)";
  std::string s = "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (i) s += ", ";
    if (info.shape[i] >= 0) {
      s += std::to_string(info.shape[i]);
    } else {
      s += info.dim_names[i].empty() ? "?" : info.dim_names[i];
    }
  }
  return s + "]";
}

void Session::Impl::init() {
  TERN_CHECK(options.num_threads >= 0, InvalidArgument,
             "SessionOptions.num_threads must be >= 0 (0 = one per core), but got {}",
             options.num_threads);
  num_threads = options.num_threads > 0 ? options.num_threads : available_processors();
  passes::check_pass_names(options.disabled_passes);
  graph.topological_order();  // throws ModelError on a cycle
  // Every op is created once now, so an unsupported op or a bad attribute fails at load
  // time; each plan creates its own ops for the graph its passes produce.
  const auto& registry = ops::OpRegistry::global();
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    const ops::OpSchema* schema = registry.find(node.op_type);
    TERN_CHECK(schema != nullptr, UnsupportedOpError,
               "node '{}' uses op '{}' (opset {}), which tern does not support", node.name,
               node.op_type, graph.opset);
    ops::OpContext ctx{node.name, node.op_type, graph.opset, static_cast<int>(node.outputs.size())};
    ops::Attrs attrs(node.attrs, node.op_type + " '" + node.name + "'");
    (void)schema->create(attrs, ctx);
  }
  for (int v : graph.inputs) {
    TensorInfo info = info_of(graph.values[v]);
    inputs.push_back(std::move(info));
  }
  for (int v : graph.outputs) outputs.push_back(info_of(graph.values[v]));
}

std::vector<ops::TensorType> Session::Impl::check_input_shapes(
    const std::vector<Shape>& shapes, const std::vector<DType>* dtypes) const {
  std::vector<ops::TensorType> types(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& info = inputs[i];
    const Shape& shape = shapes[i];
    if (dtypes) {
      TERN_CHECK((*dtypes)[i] == info.dtype, InvalidArgument,
                 "input '{}': expected dtype {}, but got {}", info.name, dtype_name(info.dtype),
                 dtype_name((*dtypes)[i]));
    }
    if (!info.has_shape) {  // the model declares no shape: any shape is accepted
      types[i] = ops::TensorType{info.dtype, shape};
      continue;
    }
    TERN_CHECK(shape.size() == info.shape.size(), ShapeError,
               "input '{}': expected rank {} (shape {}), but got rank {} (shape {})", info.name,
               info.shape.size(), declared_shape_str(info), shape.size(), shape_str(shape));
    for (size_t d = 0; d < shape.size(); ++d) {
      TERN_CHECK(shape[d] >= 0, ShapeError, "input '{}': dim {} is negative ({})", info.name, d,
                 shape[d]);
      TERN_CHECK(info.shape[d] < 0 || info.shape[d] == shape[d], ShapeError,
                 "input '{}': expected shape {}, but got {} (dim {} must be {})", info.name,
                 declared_shape_str(info), shape_str(shape), d, info.shape[d]);
    }
    types[i] = ops::TensorType{info.dtype, shape};
  }
  return types;
}

runtime::Plan& Session::Impl::plan_for(const std::vector<ops::TensorType>& types) {
  std::vector<Shape> key;
  for (const auto& t : types) key.push_back(t.shape);
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i]->input_shapes == key) {
      std::rotate(plans.begin() + i, plans.begin() + i + 1, plans.end());  // now most recent
      return *plans.back();
    }
  }
  auto plan = runtime::build_plan(graph, types, ops::ExecContext{num_threads},
                                  options.max_tensor_bytes, pipeline_options());
  if (plans.size() == kMaxPlans) plans.erase(plans.begin());  // least recently used
  plans.push_back(std::move(plan));
  return *plans.back();
}

passes::PipelineOptions Session::Impl::pipeline_options() const {
  passes::PipelineOptions p;
  p.disabled = options.disabled_passes;
  p.tune = options.tune;
  p.tune_cache = options.tune_cache;
#ifdef NDEBUG
  p.verify = options.verify_passes;
#else
  p.verify = true;  // debug builds check the graph after every pass
#endif
  return p;
}

std::vector<ops::TensorType> Session::Impl::types_for(
    const std::map<std::string, Shape>& input_shapes) const {
  for (const auto& [name, shape] : input_shapes) {
    bool known = false;
    for (const TensorInfo& info : inputs) known = known || info.name == name;
    TERN_CHECK(known, InvalidArgument, "no graph input is named '{}'; inputs are: {}", name, [&] {
      std::vector<std::string> names;
      for (const TensorInfo& info : inputs) names.push_back(info.name);
      return fmt::format("{}", fmt::join(names, ", "));
    }());
  }
  std::vector<Shape> shapes;
  for (const TensorInfo& info : inputs) {
    auto it = input_shapes.find(info.name);
    TERN_CHECK(it != input_shapes.end(), InvalidArgument, "input '{}' (shape {}) needs a shape",
               info.name, declared_shape_str(info));
    shapes.push_back(it->second);
  }
  return check_input_shapes(shapes, nullptr);
}

std::vector<std::string> pass_names() { return passes::pass_names(); }

// ---- Session ----------------------------------------------------------------------------

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Session::Session(const std::string& path, const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->graph = onnx::load_model_file(
      path, onnx::LoadLimits{options.max_tensor_bytes, options.max_model_bytes});
  impl->init();
  impl_ = std::move(impl);
}

Session Session::from_memory(const void* data, size_t size, const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->graph = onnx::load_model(
      data, size, onnx::LoadLimits{options.max_tensor_bytes, options.max_model_bytes});
  impl->init();
  return Session(std::move(impl));
}

Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs; }
int Session::num_threads() const { return impl_->num_threads; }
int Session::opset() const { return impl_->graph.opset; }
int64_t Session::ir_version() const { return impl_->graph.ir_version; }
std::string Session::producer() const { return impl_->graph.producer; }

std::map<std::string, int> Session::op_histogram() const {
  std::map<std::string, int> h;
  for (const ir::Node& n : impl_->graph.nodes) ++h[n.op_type];
  return h;
}

int64_t Session::parameter_count() const {
  int64_t n = impl_->graph.parameter_count();
  for (const ir::Node& node : impl_->graph.nodes) {
    if (node.op_type != "Constant") continue;
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type == ir::Attribute::Type::kTensor) n += attr.t.numel();
    }
  }
  return n;
}

std::vector<LayerInfo> Session::describe(const std::map<std::string, Shape>& input_shapes) {
  return plan_info(input_shapes).layers;
}

PlanInfo Session::plan_info(const std::map<std::string, Shape>& input_shapes) {
  return impl_->plan_for(impl_->types_for(input_shapes)).info;
}

std::string Session::plan_dot(const std::map<std::string, Shape>& input_shapes) {
  return passes::program_dot(impl_->plan_for(impl_->types_for(input_shapes)).program);
}

std::vector<PassTrace> Session::trace_passes(const std::map<std::string, Shape>& input_shapes) {
  const Impl& s = *impl_;
  passes::Program p =
      passes::make_program(s.graph, s.types_for(input_shapes), ops::ExecContext{s.num_threads},
                           s.options.max_tensor_bytes, simd_float_lanes());
  std::vector<PassTrace> trace;
  trace.push_back({"(model)", 0, passes::dump_program(p)});
  passes::PipelineOptions options = s.pipeline_options();
  options.after_pass = [&](const passes::Pass& pass, int changes, const passes::Program& now) {
    trace.push_back({pass.name(), changes, passes::dump_program(now)});
  };
  passes::run_pipeline(p, options);
  return trace;
}

std::vector<const Tensor*> Session::Impl::bind(const std::vector<NamedTensor>& feeds,
                                               runtime::Plan** plan_out) {
  Impl& s = *this;
  // Bind the caller's tensors to graph inputs by name.
  std::vector<const Tensor*> bound(s.inputs.size(), nullptr);
  for (const NamedTensor& feed : feeds) {
    size_t i = 0;
    while (i < s.inputs.size() && s.inputs[i].name != feed.name) ++i;
    if (i == s.inputs.size()) {
      std::vector<std::string> names;
      for (const TensorInfo& info : s.inputs) names.push_back(info.name);
      TERN_THROW(InvalidArgument, "no graph input is named '{}'; the model's inputs are: {}",
                 feed.name, fmt::join(names, ", "));
    }
    TERN_CHECK(bound[i] == nullptr, InvalidArgument, "input '{}' is given more than once",
               feed.name);
    TERN_CHECK(feed.tensor.defined(), InvalidArgument, "input '{}' is an empty tensor", feed.name);
    bound[i] = &feed.tensor;
  }
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    TERN_CHECK(bound[i] != nullptr, InvalidArgument, "input '{}' (shape {}) was not given",
               s.inputs[i].name, declared_shape_str(s.inputs[i]));
    shapes.push_back(bound[i]->shape());
    dtypes.push_back(bound[i]->dtype());
  }
  *plan_out = &s.plan_for(s.check_input_shapes(shapes, &dtypes));
  return bound;
}

std::vector<NamedTensor> Session::run(const std::vector<NamedTensor>& feeds) {
  Impl& s = *impl_;
  const ir::Graph& g = s.graph;
  runtime::Plan* plan = nullptr;
  const std::vector<const Tensor*> bound = s.bind(feeds, &plan);
  std::vector<Tensor> outputs =
      runtime::execute(*plan, bound, ops::ExecContext{s.num_threads}, s.options.max_tensor_bytes);
  std::vector<NamedTensor> result;
  for (size_t i = 0; i < g.outputs.size(); ++i)
    result.push_back({g.values[g.outputs[i]].name, std::move(outputs[i])});
  return result;
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Profile Session::profile(const std::vector<NamedTensor>& feeds, int runs) {
  TERN_CHECK(runs >= 1, InvalidArgument, "Session::profile: runs must be >= 1, but got {}", runs);
  Impl& s = *impl_;
  runtime::Plan* plan = nullptr;
  const std::vector<const Tensor*> bound = s.bind(feeds, &plan);
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };

  Profile result;
  result.num_threads = s.num_threads;
  const std::vector<LayerInfo>& layers = plan->info.layers;  // one per step, same order
  TERN_CHECK(layers.size() == plan->steps.size(), ModelError,
             "internal: the plan has {} steps but describes {} layers", plan->steps.size(),
             layers.size());
  for (const LayerInfo& layer : layers) result.layers.push_back({layer, {}, 0});
  runtime::StepClock clock;
  Clock::time_point origin;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    if (r == 0) origin = start;
    runtime::execute(*plan, bound, ops::ExecContext{s.num_threads}, s.options.max_tensor_bytes,
                     &clock);
    const auto end = Clock::now();
    result.runs.push_back({ms(origin, start), ms(start, end)});
    for (size_t i = 0; i < plan->steps.size(); ++i)
      result.layers[i].runs.push_back(
          {ms(origin, clock.start[i]), ms(clock.start[i], clock.end[i])});
  }
  std::vector<double> times;
  for (const TimedSpan& t : result.runs) times.push_back(t.ms);
  result.median_run_ms = median_of(times);
  for (LayerProfile& layer : result.layers) {
    times.clear();
    for (const TimedSpan& t : layer.runs) times.push_back(t.ms);
    layer.median_ms = median_of(times);
  }
  return result;
}

const char* version() { return TERN_VERSION; }

}  // namespace tern
