#include "kernels/reference/gather.h"

#include <cstring>

namespace tern::kernels::ref {

template <typename TIndex>
void gather(const GatherParams& p, const void* data, const TIndex* indices, void* out) {
  const size_t row_bytes = static_cast<size_t>(p.inner) * static_cast<size_t>(p.elem_size);
  const char* src = static_cast<const char*>(data);
  char* dst = static_cast<char*>(out);
  for (int64_t o = 0; o < p.outer; ++o) {
    const char* block = src + o * p.axis_size * static_cast<int64_t>(row_bytes);
    for (int64_t j = 0; j < p.num_indices; ++j) {
      int64_t k = static_cast<int64_t>(indices[j]);
      if (k < 0) k += p.axis_size;
      std::memcpy(dst, block + k * static_cast<int64_t>(row_bytes), row_bytes);
      dst += row_bytes;
    }
  }
}

template void gather<int32_t>(const GatherParams&, const void*, const int32_t*, void*);
template void gather<int64_t>(const GatherParams&, const void*, const int64_t*, void*);

}  // namespace tern::kernels::ref
