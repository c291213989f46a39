#include "cli_util.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <set>

#include "base/check.h"

namespace tern::cli {

Shape parse_dims(const std::string& text, const std::string& what) {
  Shape dims;
  size_t pos = 0;
  while (true) {
    const size_t end = text.find_first_of("x,", pos);
    const std::string part = text.substr(pos, end == std::string::npos ? end : end - pos);
    int64_t v = -1;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 0) {
      throw UsageError(fmt::format(
          "{}: expected dims like 1x3x320x320 (non-negative integers separated by 'x'), but "
          "got '{}'",
          what, text));
    }
    dims.push_back(v);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return dims;
}

std::map<std::string, Shape> parse_shape_args(const std::vector<std::string>& args) {
  std::map<std::string, Shape> shapes;
  for (const std::string& arg : args) {
    const size_t eq = arg.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(
          fmt::format("--shape: expected NAME=DIMS such as input=1x3x320x320, but got '{}'", arg));
    }
    const std::string name = arg.substr(0, eq);
    if (shapes.count(name)) {
      throw UsageError(fmt::format("--shape: input '{}' is given twice", name));
    }
    shapes[name] = parse_dims(arg.substr(eq + 1), "--shape " + arg);
  }
  return shapes;
}

std::map<std::string, Shape> resolve_input_shapes(const Session& session,
                                                  const std::map<std::string, Shape>& given,
                                                  bool required) {
  std::set<std::string> names;
  std::string all;
  for (const TensorInfo& in : session.inputs()) {
    names.insert(in.name);
    all += fmt::format("{}'{}'", all.empty() ? "" : ", ", in.name);
  }
  for (const auto& [name, shape] : given) {
    TERN_CHECK(names.count(name), InvalidArgument,
               "--shape names input '{}', but the model's inputs are {}", name,
               all.empty() ? "none" : all);
  }
  std::map<std::string, Shape> shapes;
  for (const TensorInfo& in : session.inputs()) {
    auto it = given.find(in.name);
    if (it != given.end()) {
      const Shape& s = it->second;
      TERN_CHECK(s.size() == in.shape.size(), InvalidArgument,
                 "--shape {}: expected rank {} as declared ({}), but got {} dims", in.name,
                 in.shape.size(), declared_shape_str(in), s.size());
      for (size_t d = 0; d < s.size(); ++d) {
        TERN_CHECK(in.shape[d] < 0 || in.shape[d] == s[d], InvalidArgument,
                   "--shape {}: dim {} is fixed to {} by the model ({}), but got {}", in.name, d,
                   in.shape[d], declared_shape_str(in), s[d]);
      }
      shapes[in.name] = s;
      continue;
    }
    bool symbolic = false;
    for (int64_t d : in.shape) symbolic |= d < 0;
    if (!symbolic) {
      shapes[in.name] = in.shape;
      continue;
    }
    if (required) {
      std::string example;
      for (size_t d = 0; d < in.shape.size(); ++d) {
        if (d > 0) example += 'x';
        example += in.shape[d] >= 0 ? std::to_string(in.shape[d]) : std::string("N");
      }
      TERN_THROW(InvalidArgument,
                 "input '{}' has symbolic dims {}: give its shape with --shape {}={} (each N a "
                 "size)",
                 in.name, declared_shape_str(in), in.name, example);
    }
  }
  return shapes;
}

std::string sanitize_file_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

std::string group_digits(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  if (value < 0) out.insert(out.begin(), '-');
  return out;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

double peak_memory_mb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) {
      // "VmHWM:     12345 kB"
      return std::stod(line.substr(6)) / 1024.0;
    }
  }
  return -1;
}

std::string one_line(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') continue;
    if (text[i] == '\n') {
      if (i + 1 < text.size()) out += "; ";
    } else {
      out += text[i];
    }
  }
  return out;
}

void add_disable_pass_option(CLI::App& cmd, std::vector<std::string>& names) {
  cmd.add_option("--disable-pass", names,
                 fmt::format("Switch a graph pass off by name (repeatable): {}",
                             fmt::join(pass_names(), ", ")))
      ->allow_extra_args(false);
}

void add_tune_option(CLI::App& cmd, bool& tune) {
  cmd.add_flag("--tune", tune,
               "Measure the candidate kernels of layers that have several (direct or winograd "
               "for 3x3 stride-1 convolutions, dot or pointwise/direct for detection heads "
               "of other shapes) and run the fastest; cached in ~/.cache/tern/tune.json");
}

void print_tuning(const char* label, const PlanInfo& plan) {
  if (plan.tuned_measured + plan.tuned_cached == 0) return;
  fmt::print("{}{} layers measured, {} from the cache {}\n", label, plan.tuned_measured,
             plan.tuned_cached, plan.tune_cache.empty() ? "(none)" : plan.tune_cache);
  if (!plan.tune_warning.empty())
    fmt::print(stderr, "tern: warning: {}\n", one_line(plan.tune_warning));
}

void print_winograd(const char* label, const PlanInfo& plan) {
  if (plan.winograd_layers == 0) return;
  fmt::print(
      "{}{} layers; transformed weights {} bytes (F(4x4, 3x3): 36 values per filter and "
      "channel pair, 4x the packed 3x3 weights they replace); workspace {} bytes per thread\n",
      label, plan.winograd_layers, group_digits(plan.winograd_weight_bytes),
      group_digits(plan.winograd_workspace_bytes));
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  TERN_CHECK(out.good(), IOError, "cannot write '{}'", path);
}

}  // namespace tern::cli
