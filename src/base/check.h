// Checks that throw tern's typed errors with formatted messages.
//
//   TERN_CHECK(x.rank() == 4, ShapeError,
//              "Conv '{}': expected a 4-D input, but got rank {}", name, x.rank());
//
// The message should say where (node, input, file), what was expected and what was
// found. TERN_THROW throws unconditionally.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tern/status.h"

#define TERN_THROW(ErrorType, ...) throw ::tern::ErrorType(::fmt::format(__VA_ARGS__))

#define TERN_CHECK(cond, ErrorType, ...)  \
  do {                                    \
    if (!(cond)) [[unlikely]] {           \
      TERN_THROW(ErrorType, __VA_ARGS__); \
    }                                     \
  } while (0)

namespace tern {

/// Re-throws the tern::Error `e` as the same type with `prefix` put before its message
/// (how the runtime adds "node 'x' (Conv)" to an error raised inside a kernel).
[[noreturn]] void rethrow_with_prefix(const Error& e, const std::string& prefix);

}  // namespace tern
