// tern/tensor.h: strided tensors over shared, 64-byte aligned storage.
//
// A Tensor is storage + dtype + shape + strides (in elements) + storage offset, as in
// PyTorch: slice, permute, transpose and reshape (of contiguous data) return views that
// share the storage, without copying. A layout tag records how an activation is laid
// out (NCHW, NHWC or channel-blocked NCHWc) for the layout passes of later issues.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "tern/status.h"

namespace tern {

/// Element types. Values match nothing external; convert with onnx::to_dtype().
enum class DType : uint8_t {
  kFloat32,
  kFloat16,
  kInt8,
  kUint8,
  kInt32,
  kInt64,
  kBool,
  kFloat64,
  kInt16,
  kUint16,
  kUint32,
  kUint64,
  kBFloat16,
  /// std::string elements (ONNX STRING). Only Cast, CastLike, Identity, Constant, Shape and
  /// Size accept them; feeding strings to another op throws UnsupportedOpError.
  kString,
};

/// An IEEE 754 binary16 element, kept as its bits (arithmetic goes through float;
/// see base/float16.h for the conversions).
struct Float16 {
  uint16_t bits = 0;
};
/// A bfloat16 element (the upper half of a float32), kept as its bits.
struct BFloat16 {
  uint16_t bits = 0;
};

/// Bytes per element of `t` (bool is stored as one byte, 0 or 1; a string element is a
/// std::string object, whose characters live on the heap).
size_t dtype_size(DType t);
/// Lower-case name: "float32", "float16", "bfloat16", "float64", "int8", "int16", "int32",
/// "int64", "uint8", "uint16", "uint32", "uint64", "bool", "string".
const char* dtype_name(DType t);
/// True for float16, bfloat16, float32 and float64.
bool is_floating(DType t);

/// Memory layout of a 4-D activation. kNCHWc splits channels into blocks of `block`
/// (4 NEON, 8 AVX2, 16 AVX-512), each block stored as H x W x block; channels are
/// zero-padded up to a multiple of `block`. Non-image tensors are kPlain (row-major).
enum class LayoutKind : uint8_t { kPlain, kNCHW, kNHWC, kNCHWc };

/// A layout tag: kind plus the channel block size (only meaningful for kNCHWc).
struct Layout {
  LayoutKind kind = LayoutKind::kPlain;
  int block = 0;
  bool operator==(const Layout&) const = default;
};
/// "plain", "NCHW", "NHWC" or "NCHW16c".
std::string layout_name(Layout layout);

using Shape = std::vector<int64_t>;
/// "[1, 3, 320, 320]".
std::string shape_str(const Shape& shape);
/// Product of the dims (1 for a scalar). Throws ShapeError on a negative dim or overflow.
int64_t shape_numel(const Shape& shape);

/// A block of bytes, 64-byte aligned when tern allocates it; or a caller's buffer that
/// tern only borrows (the deleter then does nothing, or what the caller asked).
class Storage {
 public:
  /// Allocates `bytes` (rounded up to 64), 64-byte aligned, zero-filled when `zero`;
  /// blocks of 2 MiB or more are 2 MiB aligned, rounded up to whole 2 MiB and advised
  /// for transparent huge pages (madvise MADV_HUGEPAGE, where the platform has it).
  /// Throws InvalidArgument if the allocation fails.
  static std::shared_ptr<Storage> allocate(size_t bytes, bool zero = false);
  /// Wraps a caller's buffer without copying; `release` runs when the last tensor using
  /// it dies (pass nullptr to only borrow: the caller keeps the buffer alive).
  static std::shared_ptr<Storage> wrap(void* data, size_t bytes,
                                       std::function<void(void*)> release = nullptr);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// First byte of the block (64-byte aligned when tern allocated it).
  void* data() const { return data_; }
  /// Bytes the block holds: the requested size for allocate(); for a wrapped caller
  /// buffer, the extent the wrapping view can reach.
  size_t bytes() const { return bytes_; }

 private:
  Storage(void* data, size_t bytes, std::function<void(void*)> release)
      : data_(data), bytes_(bytes), release_(std::move(release)) {}
  void* data_;
  size_t bytes_;
  std::function<void(void*)> release_;
};

/// An n-dimensional strided view of a Storage.
///
/// Copying a Tensor copies the view, not the data (shared ownership of the storage).
/// Element accessors check the dtype; views check their arguments and throw
/// InvalidArgument or ShapeError with the expected and actual values.
class Tensor {
 public:
  /// An empty tensor (no storage, rank 0, numel 0). defined() is false.
  Tensor() = default;

  /// A new contiguous tensor, 64-byte aligned, uninitialized.
  static Tensor empty(DType dtype, const Shape& shape);
  /// A new contiguous tensor filled with zeros.
  static Tensor zeros(DType dtype, const Shape& shape);
  /// A view of a caller's buffer (zero-copy). `strides` in elements (>= 0); empty =
  /// contiguous. The caller keeps `data` alive and unchanged while the tensor is used.
  /// Throws InvalidArgument for a null buffer, a stride count != rank, negative strides.
  static Tensor from_blob(void* data, DType dtype, const Shape& shape,
                          const Shape& strides = {});
  /// A contiguous float32 / int64 tensor holding `values` (tests, small constants).
  static Tensor from_vector(const std::vector<float>& values, const Shape& shape);
  static Tensor from_vector_i64(const std::vector<int64_t>& values, const Shape& shape);
  /// A rank-0 tensor holding one value.
  static Tensor scalar_f32(float v);
  static Tensor scalar_i64(int64_t v);

  /// False for a default-constructed tensor (no storage).
  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  /// Dims, outermost first.
  const Shape& shape() const { return shape_; }
  /// Element (not byte) distance between neighbours along each dim.
  const Shape& strides() const { return strides_; }
  /// Index of element 0 of this view in the storage, in elements.
  int64_t offset() const { return offset_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  /// Size of dim `d`; negative `d` counts from the end. Throws InvalidArgument.
  int64_t dim(int d) const;
  /// Number of elements (1 for rank 0; 0 when undefined or when a dim is 0).
  int64_t numel() const;
  /// numel() * dtype_size(): bytes of the elements this view covers if contiguous.
  size_t nbytes() const;
  /// True when the elements are dense in row-major order (strides of size-1 dims are
  /// ignored; a tensor with no elements is contiguous).
  bool is_contiguous() const;
  /// The layout tag (kPlain unless set). slice() keeps it; permute() (other than the
  /// identity) and reshape() reset it to kPlain, since dims no longer mean the same.
  Layout layout() const { return layout_; }
  void set_layout(Layout layout) { layout_ = layout; }
  /// The shared storage (views of one tensor share it).
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  /// Pointer to element 0 of the view (storage + offset). Checks the dtype.
  template <typename T>
  T* data();
  template <typename T>
  const T* data() const;
  void* raw_data();
  const void* raw_data() const;

  /// View of [start, end) with `step` along `dim` (negative indices are not resolved
  /// here: 0 <= start <= end <= dim size, step >= 1). Shares storage.
  Tensor slice(int dim, int64_t start, int64_t end, int64_t step = 1) const;
  /// View with dims reordered: result dim i is this dim perm[i]. Shares storage.
  Tensor permute(const std::vector<int>& perm) const;
  /// View with dims a and b swapped. Shares storage.
  Tensor transpose(int a, int b) const;
  /// View with a new shape of equal numel; one dim may be -1 (inferred). The data must
  /// be contiguous (throws ShapeError otherwise; call contiguous() first).
  Tensor reshape(const Shape& shape) const;
  /// This tensor if contiguous, else a contiguous copy.
  Tensor contiguous() const;
  /// A contiguous deep copy.
  Tensor clone() const;
  /// Copies `src` (same dtype and shape, any strides) into this tensor's elements.
  void copy_from(const Tensor& src);

  /// Element at a multi-index converted to double (tests and printing; slow).
  double item_as_double(const std::vector<int64_t>& index) const;
  /// All elements converted to float / int64, in row-major order (tests, small tensors).
  std::vector<float> to_float_vector() const;
  std::vector<int64_t> to_int64_vector() const;

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  Layout layout_;

  void check_dtype(DType expected) const;
};

/// Maps a C++ element type to its DType (float, double, Float16, BFloat16, the fixed-width
/// integers, bool).
template <typename T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }
template <> constexpr DType dtype_of<Float16>() { return DType::kFloat16; }
template <> constexpr DType dtype_of<BFloat16>() { return DType::kBFloat16; }
template <> constexpr DType dtype_of<int16_t>() { return DType::kInt16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::kUint16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::kUint32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::kUint64; }
template <> constexpr DType dtype_of<std::string>() { return DType::kString; }
template <> constexpr DType dtype_of<int8_t>() { return DType::kInt8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUint8; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }

template <typename T>
T* Tensor::data() {
  check_dtype(dtype_of<T>());
  return static_cast<T*>(raw_data());
}
template <typename T>
const T* Tensor::data() const {
  check_dtype(dtype_of<T>());
  return static_cast<const T*>(raw_data());
}

}  // namespace tern
