// tern: the command-line tool. Every failure prints one line "tern: <kind>: <message>" on
// stderr and exits with 1 (2 for a mistake in the command line); nothing escapes main.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "tern/session.h"
#include "tern/status.h"

namespace {

void print_error(const std::string& kind, const std::string& message) {
  std::fprintf(stderr, "tern: %s: %s\n", kind.c_str(), tern::cli::one_line(message).c_str());
  std::fflush(stderr);
}

int run_cli(int argc, char** argv) {
  CLI::App app{"tern: a CNN inference engine for CPUs (ONNX models in, tensors and faces out)",
               "tern"};
  app.set_version_flag("--version", std::string("tern ") + tern::version());
  app.require_subcommand(1);
  app.fallthrough(false);
  std::vector<tern::cli::Command> commands = {
      tern::cli::add_info(app),  tern::cli::add_inspect(app),  tern::cli::add_run(app),
      tern::cli::add_bench(app), tern::cli::add_roofline(app), tern::cli::add_detect_faces(app),
      tern::cli::add_demo(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    bool any_parsed = false;
    for (const tern::cli::Command& c : commands) any_parsed |= c.app->parsed();
    if (!any_parsed && argc >= 2 && argv[1][0] != '-') {
      std::string names;
      for (const tern::cli::Command& c : commands) {
        if (!names.empty()) names += ", ";
        names += c.app->get_name();
      }
      print_error("usage error", std::string("unknown command '") + argv[1] +
                                     "' (commands: " + names + "; run 'tern --help' for usage)");
      return 2;
    }
    std::string hint = "run 'tern --help' for usage";
    for (const tern::cli::Command& c : commands) {
      if (c.app->parsed()) hint = "run 'tern " + c.app->get_name() + " --help' for usage";
    }
    print_error("usage error", std::string(e.what()) + " (" + hint + ")");
    return 2;
  }
  for (const tern::cli::Command& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  print_error("usage error", "no command given (run 'tern --help' for usage)");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const tern::cli::UsageError& e) {
    print_error("usage error", e.what());
    return 2;
  } catch (const tern::Error& e) {
    print_error(e.kind(), e.what());
  } catch (const std::bad_alloc&) {
    print_error("error", "out of memory");
  } catch (const std::exception& e) {
    print_error("error", e.what());
  } catch (...) {
    print_error("error", "unknown exception");
  }
  return 1;
}
