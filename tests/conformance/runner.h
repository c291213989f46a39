// The ONNX backend conformance runner: runs the cases of Debian's libonnx-testdata
// (/usr/share/libonnx-testdata/data/{node,pytorch-converted,pytorch-operator,simple}/<case>/
// with model.onnx and test_data_set_*/input_*.pb, output_*.pb) through tern's public
// Session API and compares every output with the expected TensorProto.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tern/tensor.h"

namespace tern::conformance {

/// What happened to one case. kBadData: the case contradicts itself (an input file's shape
/// differs from the static shape its own model declares for that input), so no engine that
/// checks input shapes can pass it; it is listed in the report, not run.
enum class Status { kPassed, kFailed, kUnsupported, kBadData };

/// "passed", "failed", "unsupported", "bad test data".
const char* status_name(Status s);

/// The result of one case (all of its test data sets).
struct CaseResult {
  std::string suite;  ///< "node", "pytorch-converted", ...
  std::string name;   ///< the case folder, e.g. "test_abs"
  std::string op;     ///< report group: the op type ("Abs"), "Softmax (expanded)", "Add + Mul"
  Status status = Status::kFailed;
  std::string message;  ///< why it failed, or tern's error for an unsupported case
  double seconds = 0;   ///< wall time of load + all runs
};

/// Comparison tolerances: floats pass when |actual - expected| <= atol + rtol * |expected|
/// (NaN matches NaN, infinities must be equal); integers, bools and strings exactly.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

/// The tolerance for an output of `dtype`: the rtol 1e-3, atol 1e-5, except for
/// bfloat16, whose own precision is coarser: 8 significant bits, so one unit in the last
/// place is up to 2^-7 of the value. ONNX leaves the rounding of float -> bfloat16 open
/// (its 1.12 test data truncates, tern rounds to nearest even, as ONNX Runtime and PyTorch
/// do); both land within one unit, so bfloat16 gets rtol 2^-7.
Tolerance tolerance_for(DType dtype);

/// Compares `actual` with `expected`. Returns "" when they match, else a one-line reason
/// naming the first mismatching element (flat index, both values) or the dtype/shape.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, const Tolerance& tol);

/// The report group of a case folder: see CaseResult::op.
std::string case_op_label(const std::filesystem::path& case_dir);

/// Runs one case folder. Never throws: errors become kFailed, kUnsupported or kBadData.
/// A case is kUnsupported when the model uses an op type tern does not register, or
/// a non-tensor value type (sequence, optional, map) or complex numbers; the message is
/// tern's own error.
CaseResult run_case(const std::filesystem::path& case_dir, const std::string& suite);

/// Every case folder of `suite` under `data_dir`, sorted by name. Throws IOError when the
/// folder does not exist.
std::vector<std::filesystem::path> list_cases(const std::filesystem::path& data_dir,
                                              const std::string& suite);

/// The markdown report: totals per suite, then per op type passed / failed / unsupported,
/// then the failing and unsupported cases with their messages.
std::string markdown_report(const std::vector<CaseResult>& results,
                            const std::string& data_dir);

}  // namespace tern::conformance
