#include "tern/tensor.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>

#include "base/check.h"
#include "base/float16.h"

namespace tern {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kInt8: return 1;
    case DType::kUint8: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kFloat64: return 8;
    case DType::kInt16: return 2;
    case DType::kUint16: return 2;
    case DType::kUint32: return 4;
    case DType::kUint64: return 8;
    case DType::kBFloat16: return 2;
    case DType::kString: return sizeof(std::string);
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kFloat16: return "float16";
    case DType::kInt8: return "int8";
    case DType::kUint8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kFloat64: return "float64";
    case DType::kInt16: return "int16";
    case DType::kUint16: return "uint16";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kBFloat16: return "bfloat16";
    case DType::kString: return "string";
  }
  return "?";
}

bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kFloat64 ||
         t == DType::kBFloat16;
}

std::string layout_name(Layout layout) {
  switch (layout.kind) {
    case LayoutKind::kPlain: return "plain";
    case LayoutKind::kNCHW: return "NCHW";
    case LayoutKind::kNHWC: return "NHWC";
    case LayoutKind::kNCHWc: return fmt::format("NCHW{}c", layout.block);
  }
  return "?";
}

std::string shape_str(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    TERN_CHECK(d >= 0, ShapeError, "shape {}: dims must be >= 0", shape_str(shape));
    // The overflow flag of the multiply, not a division per dim: tensors are sized per run.
    if (__builtin_mul_overflow(n, d, &n)) {
      TERN_THROW(ShapeError, "shape {}: element count overflows int64", shape_str(shape));
    }
  }
  return n;
}

// ---- Storage -------------------------------------------------------------------------

// Blocks of at least kHugePage bytes start on a 2 MiB boundary, and the kernel is asked to
// back them with transparent huge pages (Debian's default is "madvise": only regions that
// ask get them). The hardware prefetchers stop at 4 KiB page boundaries and each 4 KiB
// page takes a TLB entry; the models' larger tensors (an arena of 12 MB, activations of
// 2 to 10 MB) are read row by row, in several planes at once. Alternated over 7 rounds at
// 1 thread on a Zen 4: UltraFace RFB-640 and ppocr took 0.98 of their time, SqueezeNet
// 0.985, the smaller models 1.00. The block's bytes round up to whole huge pages.
constexpr size_t kHugePage = size_t{2} << 20;

std::shared_ptr<Storage> Storage::allocate(size_t bytes, bool zero) {
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  TERN_CHECK(p != nullptr, InvalidArgument, "out of memory allocating {} bytes", bytes);
#ifdef MADV_HUGEPAGE
  // Advice only: where the kernel has no huge pages to give, the block keeps 4 KiB pages.
  if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  if (zero) std::memset(p, 0, rounded == 0 ? align : rounded);
  return std::shared_ptr<Storage>(new Storage(p, bytes, [](void* q) { std::free(q); }));
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t bytes,
                                       std::function<void(void*)> release) {
  return std::shared_ptr<Storage>(new Storage(data, bytes, std::move(release)));
}

Storage::~Storage() {
  if (release_) release_(data_);
}

// ---- Tensor --------------------------------------------------------------------------

namespace {

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

int normalize_dim(int d, int rank, const char* what) {
  const int r = d < 0 ? d + rank : d;
  TERN_CHECK(r >= 0 && r < rank, InvalidArgument, "{}: dim {} is out of range for rank {}",
             what, d, rank);
  return r;
}

template <typename Fn>
void for_each_offset(const Shape& shape, const Shape& strides, int64_t base, Fn&& fn) {
  const int64_t n = shape_numel(shape);
  if (n == 0) return;
  const size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t off = base;
  for (int64_t i = 0; i < n; ++i) {
    fn(off);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

double load_as_double(const void* base, DType t, int64_t i) {
  switch (t) {
    case DType::kFloat32: return static_cast<const float*>(base)[i];
    case DType::kFloat16: return half_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::kBFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::kFloat64: return static_cast<const double*>(base)[i];
    case DType::kInt16: return static_cast<const int16_t*>(base)[i];
    case DType::kUint16: return static_cast<const uint16_t*>(base)[i];
    case DType::kUint32: return static_cast<const uint32_t*>(base)[i];
    case DType::kUint64: return static_cast<double>(static_cast<const uint64_t*>(base)[i]);
    case DType::kString:
      TERN_THROW(InvalidArgument, "a string tensor has no numeric values");
    case DType::kInt8: return static_cast<const int8_t*>(base)[i];
    case DType::kUint8: return static_cast<const uint8_t*>(base)[i];
    case DType::kInt32: return static_cast<const int32_t*>(base)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(base)[i]);
    case DType::kBool: return static_cast<const uint8_t*>(base)[i] != 0;
  }
  return 0;
}

}  // namespace

Tensor Tensor::empty(DType dtype, const Shape& shape) {
  const int64_t n = shape_numel(shape);
  TERN_CHECK(n <= std::numeric_limits<int64_t>::max() / static_cast<int64_t>(dtype_size(dtype)),
             ShapeError, "tensor of shape {} is too large to allocate", shape_str(shape));
  Tensor t;
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  if (dtype == DType::kString) {
    // Objects, not bytes: construct n empty strings, destroy them with the storage.
    std::shared_ptr<Storage> raw = Storage::allocate(bytes);
    void* p = raw->data();
    for (int64_t i = 0; i < n; ++i) new (static_cast<std::string*>(p) + i) std::string();
    t.storage_ = Storage::wrap(p, bytes, [raw, n](void* q) {
      for (int64_t i = 0; i < n; ++i) std::destroy_at(static_cast<std::string*>(q) + i);
    });
  } else {
    t.storage_ = Storage::allocate(bytes);
  }
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  return t;
}

Tensor Tensor::zeros(DType dtype, const Shape& shape) {
  Tensor t = empty(dtype, shape);
  if (dtype == DType::kString) return t;  // already empty strings
  std::memset(t.storage_->data(), 0, t.nbytes());
  return t;
}

Tensor Tensor::from_blob(void* data, DType dtype, const Shape& shape, const Shape& strides) {
  TERN_CHECK(data != nullptr || shape_numel(shape) == 0, InvalidArgument,
             "from_blob: data is null for a tensor of shape {}", shape_str(shape));
  TERN_CHECK(strides.empty() || strides.size() == shape.size(), InvalidArgument,
             "from_blob: {} strides given for a rank-{} shape", strides.size(), shape.size());
  for (int64_t s : strides) {
    TERN_CHECK(s >= 0, InvalidArgument, "from_blob: strides must be >= 0, but got {}",
               fmt::join(strides, ", "));
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.strides_ = strides.empty() ? contiguous_strides(shape) : strides;
  // The extent the view can reach, so storage().bytes() is meaningful.
  int64_t span = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) { span = 0; break; }
    span += (shape[i] - 1) * t.strides_[i];
  }
  t.storage_ = Storage::wrap(data, static_cast<size_t>(span) * dtype_size(dtype));
  return t;
}

Tensor Tensor::from_vector(const std::vector<float>& values, const Shape& shape) {
  TERN_CHECK(static_cast<int64_t>(values.size()) == shape_numel(shape), ShapeError,
             "from_vector: {} values for shape {}", values.size(), shape_str(shape));
  Tensor t = empty(DType::kFloat32, shape);
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

Tensor Tensor::from_vector_i64(const std::vector<int64_t>& values, const Shape& shape) {
  TERN_CHECK(static_cast<int64_t>(values.size()) == shape_numel(shape), ShapeError,
             "from_vector_i64: {} values for shape {}", values.size(), shape_str(shape));
  Tensor t = empty(DType::kInt64, shape);
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

Tensor Tensor::scalar_f32(float v) { return from_vector({v}, {}); }
Tensor Tensor::scalar_i64(int64_t v) { return from_vector_i64({v}, {}); }

int64_t Tensor::dim(int d) const { return shape_[normalize_dim(d, rank(), "Tensor::dim")]; }

int64_t Tensor::numel() const { return defined() ? shape_numel(shape_) : 0; }

size_t Tensor::nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 0) return true;  // no elements: any strides describe them
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

void Tensor::check_dtype(DType expected) const {
  TERN_CHECK(defined(), InvalidArgument, "tensor is empty (no storage)");
  TERN_CHECK(dtype_ == expected, InvalidArgument, "expected a {} tensor, but got {}",
             dtype_name(expected), dtype_name(dtype_));
}

void* Tensor::raw_data() {
  if (!defined()) return nullptr;
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

const void* Tensor::raw_data() const { return const_cast<Tensor*>(this)->raw_data(); }

Tensor Tensor::slice(int dim, int64_t start, int64_t end, int64_t step) const {
  const int d = normalize_dim(dim, rank(), "slice");
  TERN_CHECK(0 <= start && start <= end && end <= shape_[d] && step >= 1, InvalidArgument,
             "slice: expected 0 <= start <= end <= {} and step >= 1 on dim {}, but got "
             "start {}, end {}, step {}",
             shape_[d], d, start, end, step);
  Tensor t = *this;
  t.offset_ += start * strides_[d];
  t.shape_[d] = (end - start + step - 1) / step;
  t.strides_[d] *= step;
  return t;
}

Tensor Tensor::permute(const std::vector<int>& perm) const {
  TERN_CHECK(static_cast<int>(perm.size()) == rank(), InvalidArgument,
             "permute: expected {} dims, but got {}", rank(), perm.size());
  std::vector<bool> seen(perm.size(), false);
  Tensor t = *this;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    const int p = normalize_dim(perm[i], rank(), "permute");
    TERN_CHECK(!seen[p], InvalidArgument, "permute: dim {} repeated in {}", p, perm);
    seen[p] = true;
    t.shape_[i] = shape_[p];
    t.strides_[i] = strides_[p];
    identity = identity && p == static_cast<int>(i);
  }
  if (!identity) t.layout_ = Layout{};  // dims moved: the layout tag no longer holds
  return t;
}

Tensor Tensor::transpose(int a, int b) const {
  std::vector<int> perm(rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[normalize_dim(a, rank(), "transpose")], perm[normalize_dim(b, rank(), "transpose")]);
  return permute(perm);
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape out = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TERN_CHECK(infer < 0, ShapeError, "reshape: more than one -1 in {}", shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      TERN_CHECK(out[i] >= 0, ShapeError, "reshape: invalid dim {} in {}", out[i], shape_str(shape));
      known *= out[i];
    }
  }
  if (infer >= 0) {
    TERN_CHECK(known != 0 && numel() % known == 0, ShapeError,
               "reshape: cannot infer -1 in {} for {} elements", shape_str(shape), numel());
    out[infer] = numel() / known;
  }
  TERN_CHECK(shape_numel(out) == numel(), ShapeError,
             "reshape: expected {} elements to match {}, but the new shape {} has {}", numel(),
             shape_str(shape_), shape_str(out), shape_numel(out));
  TERN_CHECK(is_contiguous(), ShapeError,
             "reshape: the tensor of shape {} is not contiguous; call contiguous() first",
             shape_str(shape_));
  Tensor t = *this;
  t.shape_ = out;
  t.strides_ = contiguous_strides(out);
  t.layout_ = Layout{};
  return t;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor t = empty(dtype_, shape_);
  t.copy_from(*this);
  t.layout_ = layout_;
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  TERN_CHECK(src.dtype_ == dtype_ && src.shape_ == shape_, InvalidArgument,
             "copy_from: expected a {} tensor of shape {}, but got {} of shape {}",
             dtype_name(dtype_), shape_str(shape_), dtype_name(src.dtype_), shape_str(src.shape_));
  if (dtype_ == DType::kString) {  // objects: assign element by element, never memcpy
    std::vector<int64_t> dst_offsets;
    for_each_offset(shape_, strides_, 0, [&](int64_t o) { dst_offsets.push_back(o); });
    const auto* s = static_cast<const std::string*>(src.raw_data());
    auto* d = static_cast<std::string*>(raw_data());
    size_t i = 0;
    for_each_offset(src.shape_, src.strides_, 0, [&](int64_t o) { d[dst_offsets[i++]] = s[o]; });
    return;
  }
  const size_t es = dtype_size(dtype_);
  if (is_contiguous() && src.is_contiguous()) {
    std::memmove(raw_data(), src.raw_data(), nbytes());
    return;
  }
  // Walk both views in row-major order; the destination offsets in lock-step.
  std::vector<int64_t> dst_offsets;
  dst_offsets.reserve(static_cast<size_t>(numel()));
  for_each_offset(shape_, strides_, 0, [&](int64_t o) { dst_offsets.push_back(o); });
  char* dst = static_cast<char*>(raw_data());
  const char* s = static_cast<const char*>(src.raw_data());
  size_t i = 0;
  for_each_offset(src.shape_, src.strides_, 0, [&](int64_t o) {
    std::memcpy(dst + dst_offsets[i++] * static_cast<int64_t>(es), s + o * static_cast<int64_t>(es), es);
  });
}

double Tensor::item_as_double(const std::vector<int64_t>& index) const {
  TERN_CHECK(static_cast<int>(index.size()) == rank(), InvalidArgument,
             "item: expected {} indices, but got {}", rank(), index.size());
  int64_t off = 0;
  for (int i = 0; i < rank(); ++i) {
    TERN_CHECK(index[i] >= 0 && index[i] < shape_[i], InvalidArgument,
               "item: index {} out of range for dim {} of size {}", index[i], i, shape_[i]);
    off += index[i] * strides_[i];
  }
  return load_as_double(raw_data(), dtype_, off);
}

std::vector<float> Tensor::to_float_vector() const {
  std::vector<float> out;
  out.reserve(static_cast<size_t>(numel()));
  const void* base = raw_data();
  for_each_offset(shape_, strides_, 0,
                  [&](int64_t o) { out.push_back(static_cast<float>(load_as_double(base, dtype_, o))); });
  return out;
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(numel()));
  const void* base = raw_data();
  for_each_offset(shape_, strides_, 0, [&](int64_t o) {
    if (dtype_ == DType::kInt64) {
      out.push_back(static_cast<const int64_t*>(base)[o]);
    } else if (dtype_ == DType::kUint64) {  // exact (wraps above INT64_MAX), not via double
      out.push_back(static_cast<int64_t>(static_cast<const uint64_t*>(base)[o]));
    } else {
      out.push_back(static_cast<int64_t>(load_as_double(base, dtype_, o)));
    }
  });
  return out;
}

}  // namespace tern
