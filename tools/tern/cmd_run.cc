// `tern run MODEL --input NAME=FILE ... [--output-dir DIR] [--threads N]`: run a model on
// tensors from .npy or ONNX TensorProto (.pb) files.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>

#include "base/check.h"
#include "base/file_io.h"
#include "base/npy.h"
#include "cli_util.h"
#include "commands.h"
#include "onnx/loader.h"
#include "tern/session.h"

namespace tern::cli {
namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  int threads = 0;
  std::vector<std::string> disabled_passes;
  bool tune = false;
};

// Reads a .npy or .pb tensor file, by extension.
Tensor read_tensor_file(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".npy") return npy::read(path);
  if (ext == ".pb") return onnx::load_tensor_proto_file(path);
  throw UsageError(fmt::format(
      "--input: cannot tell the format of '{}': expected a .npy or .pb (ONNX TensorProto) file",
      path));
}

// The model's input names for messages: "'a', 'b'" ("none" for no input).
std::string input_names(const Session& session) {
  std::string names;
  for (const TensorInfo& in : session.inputs()) {
    names += fmt::format("{}'{}'", names.empty() ? "" : ", ", in.name);
  }
  return names.empty() ? "none" : names;
}

// Binds each --input value to a graph input: NAME=FILE when NAME is one of the model's
// input names (the longest that matches, so names may hold '='); otherwise, for a model
// with one input, the whole value is the file (its name may hold '=').
std::vector<NamedTensor> read_inputs(const Session& session, const std::vector<std::string>& args) {
  std::vector<NamedTensor> feeds;
  for (const std::string& arg : args) {
    std::string name;
    for (const TensorInfo& in : session.inputs()) {
      if (arg.size() > in.name.size() && arg.compare(0, in.name.size(), in.name) == 0 &&
          arg[in.name.size()] == '=' && in.name.size() >= name.size()) {
        name = in.name;
      }
    }
    std::string file;
    const size_t eq = arg.find('=');
    if (!name.empty()) {
      file = arg.substr(name.size() + 1);
    } else if (session.inputs().size() == 1) {
      name = session.inputs()[0].name;
      file = arg;
      std::error_code ec;
      TERN_CHECK(eq == std::string::npos || std::filesystem::exists(file, ec), InvalidArgument,
                 "--input '{}': the model has no input named '{}' (its input is '{}') and there "
                 "is no file of that whole name",
                 arg, arg.substr(0, eq), name);
    } else {
      TERN_THROW(InvalidArgument,
                 "--input '{}': expected NAME=FILE with NAME one of the model's inputs ({})", arg,
                 input_names(session));
    }
    feeds.push_back({name, read_tensor_file(file)});
  }
  return feeds;
}

void print_summary(const NamedTensor& out) {
  const Tensor& t = out.tensor;
  fmt::print("{}: {} {}\n", out.name, dtype_name(t.dtype()), shape_str(t.shape()));
  if (t.numel() == 0) {
    fmt::print("  (no elements)\n");
    return;
  }
  const std::vector<float> v = t.to_float_vector();
  double sum = 0;
  float lo = v[0], hi = v[0];
  size_t nan = 0;
  for (float x : v) {
    if (std::isnan(x)) {
      ++nan;
      continue;
    }
    sum += x;
    lo = std::isnan(lo) ? x : std::min(lo, x);
    hi = std::isnan(hi) ? x : std::max(hi, x);
  }
  const size_t finite = v.size() - nan;
  fmt::print("  min {:.6g}  max {:.6g}  mean {:.6g}{}\n", lo, hi,
             finite ? sum / double(finite) : 0.0, nan ? fmt::format("  NaN x {}", nan) : "");
  const size_t shown = std::min<size_t>(v.size(), 8);
  std::string first;
  for (size_t i = 0; i < shown; ++i) first += fmt::format("{}{:.6g}", i ? ", " : "", v[i]);
  fmt::print("  first values: [{}{}]\n", first, v.size() > shown ? ", ..." : "");
}

int run_run(const RunOptions& opt) {
  SessionOptions options;
  options.num_threads = opt.threads;
  options.disabled_passes = opt.disabled_passes;
  options.tune = opt.tune;
  Session session(opt.model, options);
  std::vector<NamedTensor> feeds = read_inputs(session, opt.inputs);

  const auto start = std::chrono::steady_clock::now();
  std::vector<NamedTensor> outputs = session.run(feeds);
  const double ms = ms_since(start);

  if (opt.output_dir.empty()) {
    for (const NamedTensor& out : outputs) print_summary(out);
  } else {
    std::error_code ec;
    std::filesystem::create_directories(opt.output_dir, ec);
    TERN_CHECK(!ec && std::filesystem::is_directory(opt.output_dir), IOError,
               "cannot create output directory '{}': {}", opt.output_dir,
               ec ? ec.message() : "a file of that name exists");
    std::set<std::string> used;
    for (const NamedTensor& out : outputs) {
      // Two names may sanitize alike ("a/b", "a_b"): never overwrite an output just written.
      const std::string sanitized = sanitize_file_name(out.name);
      std::string base = sanitized;
      for (int k = 2; used.count(base); ++k) base = sanitized + "_" + std::to_string(k);
      used.insert(base);
      const std::string path = (std::filesystem::path(opt.output_dir) / (base + ".npy")).string();
      npy::write(path, out.tensor);
      fmt::print("{}: {} {} -> {}\n", out.name, dtype_name(out.tensor.dtype()),
                 shape_str(out.tensor.shape()), path);
    }
  }
  fmt::print("run: {:.2f} ms with {} thread{} (a first run: includes planning)\n", ms,
             session.num_threads(), session.num_threads() == 1 ? "" : "s");
  return 0;
}

}  // namespace

Command add_run(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run",
      "Run a model on .npy or ONNX TensorProto (.pb) inputs; print a summary of each output or "
      "write OUTPUT.npy files");
  sub->add_option("MODEL", opt->model, "ONNX model file")->required();
  sub->add_option("-i,--input", opt->inputs,
                  "NAME=FILE: a .npy or .pb tensor for input NAME (repeatable); for a "
                  "one-input model also FILE alone (read as NAME=FILE only when NAME is the "
                  "input's name)")
      ->allow_extra_args(false);
  sub->add_option("-d,--output-dir", opt->output_dir,
                  "Write each output to DIR/<name>.npy, the output's name with characters "
                  "outside [A-Za-z0-9._-] replaced by _ (when two names become the same, the "
                  "later gets _2, _3, ... before .npy); DIR is created if missing");
  sub->add_option("-t,--threads", opt->threads, "Threads (0 = one per core)")
      ->check(CLI::Range(0, 1024));
  add_disable_pass_option(*sub, opt->disabled_passes);
  add_tune_option(*sub, opt->tune);
  return {sub, [opt] { return run_run(*opt); }};
}

}  // namespace tern::cli
