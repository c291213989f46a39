// Template definitions for execute.h.
#pragma once

#include <new>
#include <string>

#include "base/check.h"

namespace tern::ops {

template <typename Fn>
auto with_node_context(const Op& op, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error& e) {
    const std::string where = op.where();
    if (std::string(e.what()).rfind(where, 0) == 0) throw;  // already names the node
    rethrow_with_prefix(e, where + ": ");
  } catch (const ValueNotKnown&) {
    throw;
  } catch (const std::bad_alloc&) {
    TERN_THROW(InvalidArgument, "{}: out of memory", op.where());
  } catch (const std::exception& e) {
    TERN_THROW(Error, "{}: {}", op.where(), e.what());
  }
}

}  // namespace tern::ops
