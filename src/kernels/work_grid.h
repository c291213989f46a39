// The shape of a kernel's work items, which the ops split across threads.
#pragma once

#include <cstdint>

namespace tern::kernels {

/// A kernel's work items of one image as a grid of `outer` x `inner` items, outer major
/// (item = o * inner + i): outer counts output-channel chunks (or channel blocks, or
/// planes), inner the spatial units of one chunk (output rows or row segments) in image
/// order, so that the same inner range [i0, i1) of every chunk covers the same region of
/// the image. ops::parallel_grid splits by that region (see there for why).
struct WorkGrid {
  int64_t outer = 1;
  int64_t inner = 0;

  /// outer * inner: the item count f32_*_conv's [begin, end) ranges index.
  int64_t items() const { return outer * inner; }
};

}  // namespace tern::kernels
