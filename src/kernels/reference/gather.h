// Reference Gather kernel (ONNX Gather-13): picks slices of `data` along one axis.
//
// Data contract: data is contiguous [outer, axis_size, inner] with elements of
// `elem_size` bytes; indices is a contiguous array of num_indices values in
// [-axis_size, axis_size - 1] (negative counts from the end; the caller checks the
// range); out is contiguous [outer, num_indices, inner]. No allocation, no threads.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

struct GatherParams {
  int64_t outer = 1;
  int64_t axis_size = 1;
  int64_t num_indices = 0;
  int64_t inner = 1;
  int elem_size = 4;  ///< bytes per element (any dtype)
};

/// out[o, j, :] = data[o, indices[j], :]. TIndex = int32_t or int64_t.
template <typename TIndex>
void gather(const GatherParams& p, const void* data, const TIndex* indices, void* out);

}  // namespace tern::kernels::ref
