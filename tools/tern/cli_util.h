// Helpers shared by the tern subcommands: usage errors, --shape parsing, file names,
// number formatting, timing, peak memory.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tern/session.h"

namespace tern::cli {

/// A mistake in the command line itself (bad syntax, conflicting options): exit code 2.
/// Problems with what the files contain are tern::Error (exit code 1).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses dims written "1x3x320x320" (',' also separates). Throws UsageError naming
/// `what` (e.g. "--shape input=...") for an empty, negative or non-numeric dim.
Shape parse_dims(const std::string& text, const std::string& what);

/// Parses repeated `--shape NAME=DIMS` values into a map. Throws UsageError for a value
/// without '=' or with bad dims, or a name given twice.
std::map<std::string, Shape> parse_shape_args(const std::vector<std::string>& args);

/// Concrete shapes for every input of `session`: the --shape value if given (checked
/// against the declared rank and fixed dims), else the declared shape when it has no
/// symbolic dim. Throws InvalidArgument for a --shape name that is no input, a rank or
/// fixed-dim mismatch, and, when `required`, an input left symbolic (naming it, its
/// declared dims and the --shape to give). Inputs left symbolic are omitted otherwise.
std::map<std::string, Shape> resolve_input_shapes(const Session& session,
                                                  const std::map<std::string, Shape>& given,
                                                  bool required);

/// `name` with every character outside [A-Za-z0-9._-] replaced by '_' ("a/b:0" ->
/// "a_b_0"). With ".npy" appended it is always a file name inside the output folder: no
/// '/', and ".", ".." or "" become "..npy", "...npy" or ".npy".
std::string sanitize_file_name(const std::string& name);

/// 1234567 -> "1,234,567".
std::string group_digits(int64_t value);

/// Milliseconds of wall-clock time since `start`.
double ms_since(std::chrono::steady_clock::time_point start);

/// Peak resident memory of this process (VmHWM of /proc/self/status) in MiB; -1 if
/// unavailable.
double peak_memory_mb();

/// Replaces line breaks in `text` by "; " so an error stays on one line.
std::string one_line(const std::string& text);

/// Adds `--disable-pass NAME` (repeatable) to `cmd`, collecting the names in `names`
/// (checked when the session is created: an unknown name is an InvalidArgument that
/// lists the passes).
void add_disable_pass_option(CLI::App& cmd, std::vector<std::string>& names);

/// Adds `--tune` (SessionOptions::tune) to `cmd`.
void add_tune_option(CLI::App& cmd, bool& tune);

/// One line on what `--tune` did for a plan ("tuned: 12 layers measured, 5 from the cache
/// FILE"), prefixed by `label`, plus a warning line when the cache could not be used;
/// nothing when nothing was tuned.
void print_tuning(const char* label, const PlanInfo& plan);

/// One line on winograd's extra memory for a plan ("winograd: 8 layers; transformed weights
/// N bytes (...4x the packed 3x3 weights they replace); workspace K bytes per thread"), prefixed by
/// `label`; nothing when no layer runs winograd.
void print_winograd(const char* label, const PlanInfo& plan);

/// Writes `text` to the file at `path` (created or replaced). Throws IOError naming the
/// file when it cannot be written.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace tern::cli
