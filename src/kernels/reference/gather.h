// Reference Gather kernel (ONNX Gather-13): picks slices of `data` along one axis.
//
// Data contract: data is contiguous [outer, axis_size, inner] with elements of
// `elem_size` bytes; indices is a contiguous array of num_indices values in
// [-axis_size, axis_size - 1] (negative counts from the end; the caller checks the
// range); out is contiguous [outer, num_indices, inner]. No allocation, no threads.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

/// The layout of one Gather: the data tensor seen as [outer, axis_size, inner] around the
/// gather axis (outer = product of the dims before it, inner = product of the dims after
/// it), and the output as [outer, num_indices, inner]. The op computes it from the data
/// shape, the axis and the indices' element count.
struct GatherParams {
  int64_t outer = 1;        ///< product of the data dims before the axis (1 for axis 0)
  int64_t axis_size = 1;    ///< data dim along the axis: valid indices are [-axis_size, axis_size)
  int64_t num_indices = 0;  ///< number of index values (indices may have any shape; flattened)
  int64_t inner = 1;        ///< product of the data dims after the axis (1 for the last axis)
  int elem_size = 4;        ///< bytes per element (any dtype; rows are copied as bytes)
};

/// out[o, j, :] = data[o, indices[j], :] (a negative index counts from the end). Copies
/// outer * num_indices rows of inner * elem_size bytes. TIndex = int32_t or int64_t.
template <typename TIndex>
void gather(const GatherParams& p, const void* data, const TIndex* indices, void* out);

}  // namespace tern::kernels::ref
