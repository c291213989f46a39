#include "conformance/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/dtype_dispatch.h"
#include "base/file_io.h"
#include "base/float16.h"
#include "onnx/onnx.pb.h"
#include "onnx/tensor_proto.h"
#include "ops/registry.h"
#include "tern/session.h"

namespace tern::conformance {

namespace fs = std::filesystem;

const char* status_name(Status s) {
  switch (s) {
    case Status::kPassed:
      return "passed";
    case Status::kFailed:
      return "failed";
    case Status::kUnsupported:
      return "unsupported";
    case Status::kBadData:
      return "bad test data";
  }
  return "?";
}

Tolerance tolerance_for(DType dtype) {
  Tolerance tol;
  if (dtype == DType::kBFloat16) tol.rtol = 1.0 / 128;
  return tol;
}

namespace {

// Element i of a contiguous tensor as double (floats) for the tolerance test.
template <typename T>
double as_double(const T& v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return half_to_float(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return bfloat16_to_float(v.bits);
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
std::string value_str(const T& v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> ||
                std::is_floating_point_v<T>) {
    return fmt::format("{:.9g}", as_double(v));
  } else {
    return fmt::format("{}", v);
  }
}

bool close_enough(double a, double e, const Tolerance& tol) {
  if (std::isnan(e)) return std::isnan(a);
  if (std::isinf(e)) return a == e;
  if (!std::isfinite(a)) return false;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
}

}  // namespace

std::string compare_tensors(const Tensor& actual, const Tensor& expected, const Tolerance& tol) {
  if (actual.dtype() != expected.dtype()) {
    return fmt::format("dtype {} but expected {}", dtype_name(actual.dtype()),
                       dtype_name(expected.dtype()));
  }
  if (actual.shape() != expected.shape()) {
    return fmt::format("shape {} but expected {}", shape_str(actual.shape()),
                       shape_str(expected.shape()));
  }
  const Tensor a = actual.contiguous();
  const Tensor e = expected.contiguous();
  if (a.dtype() == DType::kString) {
    const auto* pa = a.data<std::string>();
    const auto* pe = e.data<std::string>();
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (pa[i] != pe[i]) {
        return fmt::format("first difference at flat index {}: got \"{}\", expected \"{}\"", i,
                           pa[i], pe[i]);
      }
    }
    return "";
  }
  return visit_dtype(a.dtype(), [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    const T* pa = static_cast<const T*>(a.raw_data());
    const T* pe = static_cast<const T*>(e.raw_data());
    int64_t bad = 0;
    int64_t first = -1;
    double max_err = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      bool ok;
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> ||
                    std::is_floating_point_v<T>) {
        const double x = as_double(pa[i]);
        const double y = as_double(pe[i]);
        ok = close_enough(x, y, tol);
        if (std::isfinite(x) && std::isfinite(y)) max_err = std::max(max_err, std::fabs(x - y));
      } else {
        ok = pa[i] == pe[i];
      }
      if (!ok) {
        if (first < 0) first = i;
        ++bad;
      }
    }
    if (bad == 0) return "";
    return fmt::format(
        "{} of {} elements differ; first at flat index {}: got {}, expected {} "
        "(max |diff| {:.3g}; rtol {}, atol {})",
        bad, a.numel(), first, value_str(pa[first]), value_str(pe[first]), max_err, tol.rtol,
        tol.atol);
  });
}

namespace {

::onnx::ModelProto read_model(const fs::path& path) {
  const std::string bytes = read_file_bytes(path.string(), "ONNX model", int64_t{1} << 31);
  ::onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) {
    throw IOError(fmt::format("'{}' is not a valid ONNX ModelProto", path.string()));
  }
  return m;
}

Tensor read_tensor(const fs::path& path) {
  const std::string bytes = read_file_bytes(path.string(), "test tensor", int64_t{1} << 31);
  ::onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) {
    throw IOError(fmt::format("'{}' is not a valid TensorProto", path.string()));
  }
  return onnx::decode_tensor(t, onnx::LoadLimits{}, path.filename().string());
}

// The op types of every node, in order (subgraphs of If/Loop are not looked into: a model
// with such an op is unsupported as a whole anyway).
std::vector<std::string> op_types(const ::onnx::ModelProto& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) {
    ops.push_back(n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type()
                                                                : n.domain() + "." + n.op_type());
  }
  return ops;
}

std::string label_from_ops(const std::vector<std::string>& ops) {
  if (ops.empty()) return "(no nodes)";
  std::set<std::string> distinct(ops.begin(), ops.end());
  if (distinct.size() > 1) distinct.erase("Constant");  // a Constant feeding the op under test
  std::string label;
  for (const auto& op : distinct) label += (label.empty() ? "" : " + ") + op;
  return label;
}

// Why tern cannot run the model at all, or "" when every op and value type is one tern
// claims: an op type it does not register, or a graph input/output that is not a tensor
// (sequence, optional, map) or holds complex numbers.
std::string unsupported_reason(const ::onnx::ModelProto& m) {
  const auto& registry = ops::OpRegistry::global();
  for (const auto& n : m.graph().node()) {
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (!default_domain || registry.find(n.op_type()) == nullptr) {
      return fmt::format("op {}{}", default_domain ? "" : n.domain() + ".", n.op_type());
    }
  }
  auto non_tensor = [](const ::onnx::ValueInfoProto& v) {
    return v.has_type() && !v.type().has_tensor_type();
  };
  for (const auto& v : m.graph().input()) {
    if (non_tensor(v)) return fmt::format("non-tensor input '{}'", v.name());
  }
  for (const auto& v : m.graph().output()) {
    if (non_tensor(v)) return fmt::format("non-tensor output '{}'", v.name());
  }
  // The complex types (14, 15) are element types tern has no dtype for.
  auto complex = [](const ::onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type()) return false;
    const int t = v.type().tensor_type().elem_type();
    return t == 14 || t == 15;
  };
  for (const auto& v : m.graph().input()) {
    if (complex(v)) return fmt::format("complex input '{}'", v.name());
  }
  for (const auto& v : m.graph().output()) {
    if (complex(v)) return fmt::format("complex output '{}'", v.name());
  }
  return "";
}

// ONNX's test generator saves bfloat16 tensors as UINT16 (numpy has no bfloat16): read such
// a tensor back as the bfloat16 bits it holds when the model declares bfloat16 there.
Tensor as_declared(Tensor t, DType declared) {
  if (declared == DType::kBFloat16 && t.dtype() == DType::kUint16) {
    Tensor b = Tensor::empty(DType::kBFloat16, t.shape());
    std::memcpy(b.raw_data(), t.contiguous().raw_data(), b.nbytes());
    return b;
  }
  return t;
}

// "" when every input file of every data set has the static dims the model declares for
// that input (dim_value > 0; symbolic dims match anything), else what contradicts.
std::string data_contradiction(const fs::path& case_dir, const ::onnx::ModelProto& m);

std::vector<fs::path> data_sets(const fs::path& case_dir) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(case_dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(e.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    const fs::path p = dir / fmt::format("{}_{}.pb", prefix, i);
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

// Runs every data set; returns "" when all outputs match, else the first failure.
std::string run_data_sets(const fs::path& case_dir) {
  Session session((case_dir / "model.onnx").string());
  const auto& inputs = session.inputs();
  const std::vector<fs::path> sets = data_sets(case_dir);
  if (sets.empty()) return "no test_data_set_* folder: nothing to compare";
  for (const fs::path& set : sets) {
    const std::vector<fs::path> in_files = numbered(set, "input");
    const std::vector<fs::path> out_files = numbered(set, "output");
    if (out_files.empty())
      return fmt::format("{}: no output_*.pb to compare", set.filename().string());
    if (in_files.size() > inputs.size()) {
      return fmt::format("{}: {} input files but the model has {} inputs", set.filename().string(),
                         in_files.size(), inputs.size());
    }
    std::vector<NamedTensor> feeds;
    for (size_t i = 0; i < in_files.size(); ++i) {
      feeds.push_back({inputs[i].name, as_declared(read_tensor(in_files[i]), inputs[i].dtype)});
    }
    const std::vector<NamedTensor> outs = session.run(feeds);
    if (outs.size() != out_files.size()) {
      return fmt::format("{}: {} outputs but {} expected", set.filename().string(), outs.size(),
                         out_files.size());
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      const Tensor expected = as_declared(read_tensor(out_files[i]), session.outputs()[i].dtype);
      const std::string why = compare_tensors(outs[i].tensor, expected, tolerance_for(expected.dtype()));
      if (!why.empty()) {
        return fmt::format("{}: output {} '{}': {}", set.filename().string(), i, outs[i].name, why);
      }
    }
  }
  return "";
}

std::string data_contradiction(const fs::path& case_dir, const ::onnx::ModelProto& m) {
  std::set<std::string> initializers;
  for (const auto& t : m.graph().initializer()) initializers.insert(t.name());
  std::vector<const ::onnx::ValueInfoProto*> inputs;
  for (const auto& v : m.graph().input()) {
    if (!initializers.count(v.name())) inputs.push_back(&v);
  }
  for (const fs::path& set : data_sets(case_dir)) {
    const std::vector<fs::path> files = numbered(set, "input");
    for (size_t i = 0; i < files.size() && i < inputs.size(); ++i) {
      const auto& type = inputs[i]->type();
      if (!type.has_tensor_type() || !type.tensor_type().has_shape()) continue;
      const auto& dims = type.tensor_type().shape().dim();
      const Tensor t = read_tensor(files[i]);
      bool ok = t.rank() == dims.size();
      for (int d = 0; ok && d < dims.size(); ++d) {
        if (dims[d].has_dim_value() && dims[d].dim_value() > 0) {
          ok = dims[d].dim_value() == t.shape()[d];
        }
      }
      if (!ok) {
        Shape declared;
        for (const auto& d : dims) declared.push_back(d.has_dim_value() ? d.dim_value() : -1);
        return fmt::format("{}/{} has shape {}, but the model declares input '{}' as {}",
                           set.filename().string(), files[i].filename().string(),
                           shape_str(t.shape()), inputs[i]->name(), shape_str(declared));
      }
    }
  }
  return "";
}

}  // namespace

std::string case_op_label(const fs::path& case_dir) {
  const std::string name = case_dir.filename().string();
  const std::string suffix = "_expanded";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const fs::path sibling =
        case_dir.parent_path() / name.substr(0, name.size() - suffix.size()) / "model.onnx";
    if (fs::exists(sibling)) {
      const std::vector<std::string> ops = op_types(read_model(sibling));
      if (ops.size() == 1) return ops[0] + " (expanded)";
    }
  }
  return label_from_ops(op_types(read_model(case_dir / "model.onnx")));
}

CaseResult run_case(const fs::path& case_dir, const std::string& suite) {
  CaseResult r;
  r.suite = suite;
  r.name = case_dir.filename().string();
  const auto start = std::chrono::steady_clock::now();
  std::string unsupported;
  std::string contradiction;
  try {
    r.op = case_op_label(case_dir);
    const ::onnx::ModelProto model = read_model(case_dir / "model.onnx");
    unsupported = unsupported_reason(model);
    if (unsupported.empty()) contradiction = data_contradiction(case_dir, model);
  } catch (const std::exception& e) {
    r.op = "(unreadable)";
    r.status = Status::kFailed;
    r.message = e.what();
    return r;
  }
  if (!contradiction.empty()) {
    r.status = Status::kBadData;
    r.message = contradiction;
    return r;
  }
  try {
    const std::string why = run_data_sets(case_dir);
    r.status = why.empty() ? Status::kPassed : Status::kFailed;
    r.message = why;
  } catch (const Error& e) {
    r.status = Status::kFailed;
    r.message = fmt::format("{}: {}", e.kind(), e.what());
  } catch (const std::exception& e) {
    r.status = Status::kFailed;
    r.message = fmt::format("exception: {}", e.what());
  }
  if (!unsupported.empty()) {
    // tern does not claim this model's ops or types: whatever happened is not a failure
    // (passing anyway would mean the check above is wrong, so keep that visible).
    if (r.status == Status::kPassed) {
      r.status = Status::kFailed;
      r.message = fmt::format("ran although it uses {}, which tern does not support", unsupported);
    } else {
      r.status = Status::kUnsupported;
      r.message = fmt::format("uses {}; tern said: {}", unsupported, r.message);
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::vector<fs::path> list_cases(const fs::path& data_dir, const std::string& suite) {
  const fs::path dir = data_dir / suite;
  if (!fs::is_directory(dir)) {
    throw IOError(
        fmt::format("conformance data folder '{}' does not exist (install Debian's "
                    "libonnx-testdata, or set TERN_ONNX_TESTDATA)",
                    dir.string()));
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

namespace {

struct Counts {
  int passed = 0, failed = 0, unsupported = 0, bad_data = 0;
  int total() const { return passed + failed + unsupported + bad_data; }
  void add(Status s) {
    if (s == Status::kPassed) ++passed;
    if (s == Status::kFailed) ++failed;
    if (s == Status::kUnsupported) ++unsupported;
    if (s == Status::kBadData) ++bad_data;
  }
};

// Markdown table cell: no pipes or newlines.
std::string cell(std::string s) {
  for (char& c : s) {
    if (c == '|') c = '/';
    if (c == '\n') c = ' ';
  }
  if (s.size() > 300) s = s.substr(0, 297) + "...";
  return s;
}

}  // namespace

std::string markdown_report(const std::vector<CaseResult>& results, const std::string& data_dir) {
  std::map<std::string, Counts> by_suite;
  std::map<std::string, Counts> by_op;
  Counts all;
  std::vector<std::string> suites;
  for (const auto& r : results) {
    if (!by_suite.count(r.suite)) suites.push_back(r.suite);
    by_suite[r.suite].add(r.status);
    by_op[r.op].add(r.status);
    all.add(r.status);
  }
  std::ostringstream md;
  md << "# ONNX backend conformance\n\n"
     << "Generated by `make conformance-report` (tests/conformance, `tern_conformance "
        "--report`); do not edit by hand.\n"
     << "Data: Debian's libonnx-testdata (ONNX 1.12 backend test cases), " << data_dir << ".\n"
     << "A case passes when every output of every test data set matches: same dtype and "
        "shape, floats within |got - want| <= 1e-5 + 1e-3 |want| (bfloat16: 1e-5 + 2^-7 |want|, "
        "one unit in its last place, since ONNX leaves its rounding open), integers, bools "
        "and strings exactly. "
        "A case is unsupported when its model uses an op type tern does not implement, or a "
        "non-tensor (sequence, optional, map) or complex value; the message is tern's own "
        "error. A case is bad test data when an input file's shape contradicts the static "
        "shape its own model declares for that input (tern, like ONNX Runtime, rejects such "
        "an input); those are listed at the end with the contradiction.\n\n";
  md << "## Totals\n\n| folder | cases | passed | failed | unsupported | bad test data |\n"
        "|---|---:|---:|---:|---:|---:|\n";
  for (const auto& s : suites) {
    const Counts& c = by_suite[s];
    md << fmt::format("| {} | {} | {} | {} | {} | {} |\n", s, c.total(), c.passed, c.failed,
                      c.unsupported, c.bad_data);
  }
  md << fmt::format("| **all** | **{}** | **{}** | **{}** | **{}** | **{}** |\n\n", all.total(),
                    all.passed, all.failed, all.unsupported, all.bad_data);
  md << "## Per op type\n\nMulti-node models are listed by their op types joined with `+`; "
        "`(expanded)` marks a case that spells an op out as a function body of simpler ops.\n\n"
     << "| op | cases | passed | failed | unsupported | bad test data |\n"
        "|---|---:|---:|---:|---:|---:|\n";
  for (const auto& [op, c] : by_op) {
    md << fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(op), c.total(), c.passed, c.failed,
                      c.unsupported, c.bad_data);
  }
  auto list = [&](Status want, const char* title) {
    md << "\n## " << title << "\n\n";
    int n = 0;
    for (const auto& r : results) {
      if (r.status != want) continue;
      if (n++ == 0) md << "| case | op | message |\n|---|---|---|\n";
      md << fmt::format("| {}/{} | {} | {} |\n", r.suite, r.name, cell(r.op), cell(r.message));
    }
    if (n == 0) md << "None.\n";
  };
  list(Status::kFailed, "Failed cases");
  list(Status::kUnsupported, "Unsupported cases");
  list(Status::kBadData, "Bad test data");
  return md.str();
}

}  // namespace tern::conformance
