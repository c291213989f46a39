// `tern inspect MODEL [--shape NAME=DIMS ...] [--passes] [--dot FILE] [--disable-pass NAME ...]`:
// what a model is made of and, with shapes, the plan tern compiles for it.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli_util.h"
#include "commands.h"
#include "tern/session.h"

namespace tern::cli {
namespace {

struct InspectOptions {
  std::string model;
  std::vector<std::string> shapes;
  bool passes = false;
  std::string dot_file;
  std::vector<std::string> disabled_passes;
  bool tune = false;
};

void print_signature(const char* title, const std::vector<TensorInfo>& infos) {
  fmt::print("{}:\n", title);
  size_t width = 4;
  for (const TensorInfo& t : infos) width = std::max(width, t.name.size());
  for (const TensorInfo& t : infos) {
    fmt::print("  {:<{}}  {:<8} {}\n", t.name, width, dtype_name(t.dtype), declared_shape_str(t));
  }
  if (infos.empty()) fmt::print("  (none)\n");
}

std::string shapes_text(const LayerInfo& layer) {
  if (layer.output_shapes.empty()) return "?";
  std::string s;
  for (size_t k = 0; k < layer.output_shapes.size(); ++k) {
    s += fmt::format("{}{}", s.empty() ? "" : " ", shape_str(layer.output_shapes[k]));
    if (k < layer.layouts.size() && layer.layouts[k] != "plain")
      s += fmt::format(" {}", layer.layouts[k]);
  }
  return s;
}

void print_layers(const std::vector<LayerInfo>& layers) {
  size_t name_width = 4, op_width = 2, algo_width = 9, shape_width = 12;
  int64_t total_macs = 0;
  for (const LayerInfo& l : layers) {
    total_macs += l.macs;
    name_width = std::max(name_width, l.name.size());
    op_width = std::max(op_width, l.op_type.size());
    algo_width = std::max(algo_width, l.algorithm.size());
    shape_width = std::max(shape_width, shapes_text(l).size());
  }
  name_width = std::min<size_t>(name_width, 56);
  // algorithm: the kernel the select-algorithm pass chose (FusedConv), blank for ops with
  // one kernel.
  fmt::print("  {:>4}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>13}\n", "#", "name", name_width, "op",
             op_width, "algorithm", algo_width, "output shape", shape_width, "MACs");
  int index = 0;
  for (const LayerInfo& l : layers) {
    fmt::print("  {:>4}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>13}\n", ++index, l.name, name_width,
               l.op_type, op_width, l.algorithm, algo_width, shapes_text(l), shape_width,
               l.macs ? group_digits(l.macs) : "");
  }
  fmt::print("total: {:.3f} GMACs ({} multiply-accumulates)\n", double(total_macs) * 1e-9,
             group_digits(total_macs));
}

void print_plan_summary(const PlanInfo& info) {
  fmt::print("plan:       {} nodes in the model, {} after the passes\n", info.nodes_before,
             info.nodes_after);
  fmt::print(
      "memory:     arena {} bytes for {} intermediates ({} in place, {} in Concat slices); sum "
      "of all intermediate sizes {} bytes\n",
      group_digits(info.arena_bytes), info.arena_values, info.in_place_values, info.slice_values,
      group_digits(info.intermediate_bytes));
  fmt::print("weights:    {} bytes, of which {} packed at plan time\n",
             group_digits(info.weight_bytes), group_digits(info.packed_weight_bytes));
  print_winograd("winograd:   ", info);
  print_tuning("tuned:      ", info);
}

int run_inspect(const InspectOptions& opt) {
  const std::map<std::string, Shape> given = parse_shape_args(opt.shapes);
  SessionOptions options;
  options.disabled_passes = opt.disabled_passes;
  options.tune = opt.tune;
  Session session(opt.model, options);
  const std::map<std::string, Shape> shapes = resolve_input_shapes(session, given, false);
  fmt::print("model:      {}\n", opt.model);
  fmt::print("format:     ONNX IR version {}, opset {}, producer '{}'\n", session.ir_version(),
             session.opset(), session.producer());
  fmt::print("parameters: {}\n", group_digits(session.parameter_count()));
  print_signature("inputs", session.inputs());
  print_signature("outputs", session.outputs());

  const std::map<std::string, int> histogram = session.op_histogram();
  std::vector<std::pair<std::string, int>> ops(histogram.begin(), histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  int nodes = 0;
  size_t op_width = 2;
  for (const auto& [op, count] : ops) {
    nodes += count;
    op_width = std::max(op_width, op.size());
  }
  fmt::print("ops:        {} nodes, {} op types\n", nodes, ops.size());
  for (const auto& [op, count] : ops) fmt::print("  {:<{}}  {:>5}\n", op, op_width, count);

  if (shapes.size() < session.inputs().size()) {
    std::string missing;
    for (const TensorInfo& in : session.inputs()) {
      if (!shapes.count(in.name))
        missing += fmt::format("{}{}", missing.empty() ? "" : ", ", in.name);
    }
    fmt::print("layers:     give --shape for {} (symbolic dims) to list layer shapes and MACs\n",
               missing);
    return 0;
  }
  std::string bound;
  for (const auto& [name, shape] : shapes) {
    bound += fmt::format("{}{}={}", bound.empty() ? "" : ", ", name, shape_str(shape));
  }
  fmt::print("layers for {}:\n", bound);
  if (opt.passes) {
    for (const PassTrace& t : session.trace_passes(shapes)) {
      if (t.pass == "(model)") {
        fmt::print("-- the model as loaded:\n{}", t.listing);
      } else if (t.changes == 0) {
        fmt::print("-- after {}: no change\n", t.pass);
      } else {
        fmt::print("-- after {} ({} change{}):\n{}", t.pass, t.changes, t.changes == 1 ? "" : "s",
                   t.listing);
      }
    }
  }
  const PlanInfo info = session.plan_info(shapes);
  const std::vector<LayerInfo>& layers = info.layers;
  print_layers(layers);
  print_plan_summary(info);
  if (!opt.dot_file.empty()) {
    write_text_file(opt.dot_file, session.plan_dot(shapes));
    fmt::print("wrote the plan as Graphviz DOT to {}\n", opt.dot_file);
  }
  // The graph outputs' shapes for these input shapes.
  fmt::print("outputs for {}:\n", bound);
  size_t width = 4;
  for (const TensorInfo& out : session.outputs()) width = std::max(width, out.name.size());
  for (const TensorInfo& out : session.outputs()) {
    std::string shape = "? (known only at run time)";
    for (const LayerInfo& l : layers) {
      for (size_t k = 0; k < l.outputs.size() && k < l.output_shapes.size(); ++k) {
        if (l.outputs[k] == out.name) shape = shape_str(l.output_shapes[k]);
      }
    }
    fmt::print("  {:<{}}  {}\n", out.name, width, shape);
  }
  return 0;
}

}  // namespace

Command add_inspect(CLI::App& app) {
  auto opt = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand(
      "inspect",
      "Show a model's inputs, outputs, opset, op histogram and parameter count; with shapes "
      "for its symbolic inputs, the compiled plan: every layer's kernel (algorithm), output shape, "
      "layout and MACs, "
      "node counts and arena bytes");
  sub->add_option("MODEL", opt->model, "ONNX model file")->required();
  sub->add_option("--shape", opt->shapes,
                  "Shape of an input, NAME=DIMS such as input=1x3x320x320 (repeatable)")
      ->allow_extra_args(false);
  sub->add_flag("--passes", opt->passes,
                "Print the graph before the passes and after each one (op, name, shapes, layout)");
  sub->add_option("--dot", opt->dot_file, "Write the compiled plan as Graphviz DOT to FILE");
  add_disable_pass_option(*sub, opt->disabled_passes);
  add_tune_option(*sub, opt->tune);
  return {sub, [opt] { return run_inspect(*opt); }};
}

}  // namespace tern::cli
