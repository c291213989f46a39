// tern_conformance: runs the ONNX backend test cases (Debian's libonnx-testdata) through
// tern and reports passed / failed / unsupported. Exit code 1 when any case fails.
//
//   tern_conformance [--data DIR] [--suite node]... [--filter TEXT] [--report FILE] [-v]
//
// DIR defaults to $TERN_ONNX_TESTDATA, else /usr/share/libonnx-testdata/data.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>

#include "conformance/runner.h"

using tern::conformance::CaseResult;
using tern::conformance::Status;

int main(int argc, char** argv) {
  CLI::App app{"ONNX backend conformance for tern"};
  std::string data = "/usr/share/libonnx-testdata/data";
  if (const char* env = std::getenv("TERN_ONNX_TESTDATA"); env && *env) data = env;
  std::vector<std::string> suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  std::string filter;
  std::string report;
  bool verbose = false;
  app.add_option("--data", data, "the libonnx-testdata data folder");
  app.add_option("--suite", suites, "folders to run (default: all four)");
  app.add_option("--filter", filter, "only cases whose name contains this text");
  app.add_option("--report", report, "write the markdown report to this file");
  app.add_flag("-v,--verbose", verbose, "print every case, not only failures");
  CLI11_PARSE(app, argc, argv);

  std::vector<CaseResult> results;
  try {
    for (const auto& suite : suites) {
      for (const auto& dir : tern::conformance::list_cases(data, suite)) {
        if (!filter.empty() && dir.filename().string().find(filter) == std::string::npos) continue;
        CaseResult r = tern::conformance::run_case(dir, suite);
        if (verbose || r.status == Status::kFailed || r.status == Status::kBadData) {
          fmt::print("{:<11} {}/{} [{}] {:.2f}s {}\n", tern::conformance::status_name(r.status),
                     suite, r.name, r.op, r.seconds, r.message);
        }
        results.push_back(std::move(r));
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  int counts[4] = {0, 0, 0, 0};
  for (const auto& r : results) ++counts[static_cast<int>(r.status)];
  fmt::print("{} cases: {} passed, {} failed, {} unsupported, {} bad test data\n", results.size(),
             counts[0], counts[1], counts[2], counts[3]);
  if (!report.empty()) {
    std::ofstream out(report, std::ios::binary);
    out << tern::conformance::markdown_report(results, data);
    if (!out) {
      fmt::print(stderr, "error: cannot write '{}'\n", report);
      return 2;
    }
    fmt::print("report written to {}\n", report);
  }
  return counts[1] == 0 ? 0 : 1;
}
