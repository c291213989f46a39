// Tensor and views (src/base/tensor.cc) and float16 conversion (src/base/float16.h).
#include "tern/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "base/float16.h"
#include "tern/status.h"

namespace tern {
namespace {

using ::testing::HasSubstr;

Tensor iota(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i);
  return t;
}

template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    for (const auto& p : parts) EXPECT_THAT(std::string(e.what()), HasSubstr(p));
  }
}

// ---- basics ---------------------------------------------------------------------------

TEST(Tensor, DTypeSizesAndNames) {
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kInt8), 1u);
  EXPECT_EQ(dtype_size(DType::kUint8), 1u);
  EXPECT_EQ(dtype_size(DType::kInt32), 4u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kBool), 1u);
  EXPECT_STREQ(dtype_name(DType::kFloat16), "float16");
  EXPECT_STREQ(dtype_name(DType::kBool), "bool");
  EXPECT_EQ(layout_name(Layout{LayoutKind::kNCHWc, 16}), "NCHW16c");
  EXPECT_EQ(shape_str({1, 3, 320, 320}), "[1, 3, 320, 320]");
  EXPECT_EQ(shape_str({}), "[]");
}

TEST(Tensor, EmptyZerosAndAlignment) {
  const Tensor undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_EQ(undefined.numel(), 0);
  const Tensor t = Tensor::zeros(DType::kInt32, {2, 3, 4});
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 96u);
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.offset(), 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  for (int32_t v : std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + 24)) {
    EXPECT_EQ(v, 0);
  }
  EXPECT_EQ(t.dim(-1), 4);
  EXPECT_EQ(t.dim(0), 2);
  expect_error<InvalidArgument>([&] { t.dim(3); }, {"dim 3", "rank 3"});
  const Tensor s = Tensor::scalar_f32(1.5f);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.to_float_vector(), (std::vector<float>{1.5f}));
}

// Blocks of 2 MiB or more start on a 2 MiB boundary (the huge pages they are advised
// for); bytes() stays the size asked for, and zeros() fills every byte of it.
TEST(Tensor, LargeBlocksAreHugePageAligned) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  for (const size_t bytes : {size_t{2} << 20, (size_t{5} << 20) + 12}) {
    const auto block = Storage::allocate(bytes, true);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block->data()) % kHuge, 0u) << bytes;
    EXPECT_EQ(block->bytes(), bytes);
    const auto* b = static_cast<const unsigned char*>(block->data());
    EXPECT_TRUE(std::all_of(b, b + bytes, [](unsigned char v) { return v == 0; })) << bytes;
  }
  const Tensor t = Tensor::zeros(DType::kFloat32, {1, 3, 480, 640});  // 3.7 MB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kHuge, 0u);
  // Below 2 MiB, 64 bytes as before.
  const auto small = Storage::allocate((size_t{2} << 20) - 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small->data()) % 64, 0u);
}

TEST(Tensor, ShapeNumelChecks) {
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({2, 0, 3}), 0);
  expect_error<ShapeError>([] { shape_numel({2, -1}); }, {"[2, -1]", ">= 0"});
  expect_error<ShapeError>([] { shape_numel({int64_t{1} << 32, int64_t{1} << 32}); }, {"overflow"});
  expect_error<ShapeError>([] { Tensor::from_vector({1, 2, 3}, {2, 2}); }, {"3 values", "[2, 2]"});
}

TEST(Tensor, DTypeChecksOnAccess) {
  Tensor t = Tensor::zeros(DType::kFloat32, {2});
  EXPECT_NE(t.data<float>(), nullptr);
  expect_error<InvalidArgument>([&] { t.data<int32_t>(); }, {"int32", "float32"});
  const Tensor c = t;
  expect_error<InvalidArgument>([&] { c.data<Float16>(); }, {"float16", "float32"});
  Tensor undefined;
  expect_error<InvalidArgument>([&] { undefined.data<float>(); }, {"empty"});
}

// ---- views share storage --------------------------------------------------------------

TEST(TensorView, SliceSharesStorage) {
  const Tensor t = iota({4, 6});
  const Tensor s = t.slice(1, 2, 5);
  EXPECT_EQ(s.shape(), (Shape{4, 3}));
  EXPECT_EQ(s.strides(), (Shape{6, 1}));
  EXPECT_EQ(s.storage(), t.storage());
  EXPECT_EQ(s.raw_data(), t.data<float>() + 2);
  EXPECT_FALSE(s.is_contiguous());
  EXPECT_EQ(s.to_float_vector(), (std::vector<float>{2, 3, 4, 8, 9, 10, 14, 15, 16, 20, 21, 22}));
  // Stepped slice of a slice.
  const Tensor st = t.slice(0, 1, 4, 2).slice(1, 0, 6, 4);
  EXPECT_EQ(st.shape(), (Shape{2, 2}));
  EXPECT_EQ(st.strides(), (Shape{12, 4}));
  EXPECT_EQ(st.to_float_vector(), (std::vector<float>{6, 10, 18, 22}));
  // Writes through a view land in the base tensor.
  Tensor w = t.slice(0, 3, 4);
  w.data<float>()[5] = -1.f;
  EXPECT_EQ(t.data<float>()[23], -1.f);
  expect_error<InvalidArgument>([&] { t.slice(1, 4, 7); }, {"start", "end", "7"});
  expect_error<InvalidArgument>([&] { t.slice(0, 0, 2, 0); }, {"step"});
}

TEST(TensorView, PermuteAndTransposeShareStorage) {
  const Tensor t = iota({2, 3, 4});
  const Tensor p = t.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Shape{1, 12, 4}));
  EXPECT_EQ(p.raw_data(), t.raw_data());
  EXPECT_EQ(p.item_as_double({3, 1, 2}), t.item_as_double({1, 2, 3}));
  const Tensor tr = t.transpose(0, -1);
  EXPECT_EQ(tr.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(tr.storage(), t.storage());
  EXPECT_EQ(tr.item_as_double({3, 2, 1}), 23.0);
  expect_error<InvalidArgument>([&] { t.permute({0, 0, 1}); }, {"repeated"});
  expect_error<InvalidArgument>([&] { t.permute({0, 1}); }, {"expected 3 dims"});
}

TEST(TensorView, ReshapeSharesStorageOfContiguousData) {
  const Tensor t = iota({2, 3, 4});
  const Tensor r = t.reshape({6, -1});
  EXPECT_EQ(r.shape(), (Shape{6, 4}));
  EXPECT_EQ(r.strides(), (Shape{4, 1}));
  EXPECT_EQ(r.raw_data(), t.raw_data());
  // A slice along the outermost dim is still contiguous: reshape keeps the offset.
  const Tensor tail = t.slice(0, 1, 2).reshape({12});
  EXPECT_EQ(tail.raw_data(), t.data<float>() + 12);
  EXPECT_EQ(tail.to_float_vector()[0], 12.f);
  expect_error<ShapeError>([&] { t.reshape({5, 5}); }, {"24", "[5, 5]", "25"});
  expect_error<ShapeError>([&] { t.reshape({-1, -1}); }, {"more than one -1"});
  expect_error<ShapeError>([&] { t.reshape({5, -1}); }, {"cannot infer"});
  expect_error<ShapeError>([&] { t.transpose(0, 1).reshape({24}); }, {"not contiguous"});
}

TEST(TensorView, IsContiguousIgnoresSizeOneDims) {
  const Tensor t = iota({3, 1, 4});
  // A size-1 dim may have any stride.
  const Tensor p = t.permute({1, 0, 2});
  EXPECT_EQ(p.shape(), (Shape{1, 3, 4}));
  EXPECT_TRUE(p.is_contiguous());
  EXPECT_FALSE(t.permute({2, 1, 0}).is_contiguous());
}

TEST(TensorView, ContiguousAndClone) {
  const Tensor t = iota({3, 4});
  // Already contiguous: the same view, no copy.
  const Tensor same = t.contiguous();
  EXPECT_EQ(same.raw_data(), t.raw_data());
  // A transposed view: a packed copy with the values in logical order.
  const Tensor tr = t.transpose(0, 1);
  const Tensor packed = tr.contiguous();
  EXPECT_NE(packed.storage(), t.storage());
  EXPECT_TRUE(packed.is_contiguous());
  EXPECT_EQ(packed.strides(), (Shape{3, 1}));
  EXPECT_EQ(packed.to_float_vector(), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // clone() always copies.
  Tensor c = t.clone();
  EXPECT_NE(c.raw_data(), t.raw_data());
  c.data<float>()[0] = 42.f;
  EXPECT_EQ(t.data<float>()[0], 0.f);
}

TEST(TensorView, CopyFromStrided) {
  const Tensor src = iota({2, 3}).transpose(0, 1);  // [3, 2]
  Tensor dst = Tensor::zeros(DType::kFloat32, {2, 3}).transpose(0, 1);
  dst.copy_from(src);
  EXPECT_EQ(dst.to_float_vector(), src.to_float_vector());
  Tensor wrong = Tensor::zeros(DType::kInt32, {3, 2});
  expect_error<InvalidArgument>([&] { wrong.copy_from(src); }, {"int32", "float32"});
}

TEST(Tensor, StringElementsAreObjects) {
  EXPECT_EQ(dtype_size(DType::kString), sizeof(std::string));
  EXPECT_STREQ(dtype_name(DType::kString), "string");
  Tensor t = Tensor::zeros(DType::kString, {2, 3});
  std::string* p = t.data<std::string>();
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(p[i].empty());
    // Long enough to live on the heap: a bytewise copy would double-free (ASan catches it).
    p[i] = std::string(40, static_cast<char>('a' + i));
  }
  const Tensor tr = t.transpose(0, 1);  // [[a, d], [b, e], [c, f]]
  const Tensor c = tr.contiguous();
  ASSERT_NE(c.raw_data(), t.raw_data());
  const std::string* q = c.data<std::string>();
  EXPECT_EQ(q[0], std::string(40, 'a'));
  EXPECT_EQ(q[1], std::string(40, 'd'));
  EXPECT_EQ(q[5], std::string(40, 'f'));
  p[0] = "changed";  // the copy owns its strings
  EXPECT_EQ(q[0], std::string(40, 'a'));
  expect_error<InvalidArgument>([&] { t.to_float_vector(); }, {"string"});
}

TEST(TensorView, FromBlobIsZeroCopy) {
  std::vector<float> buf = {1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from_blob(buf.data(), DType::kFloat32, {2, 3});
  EXPECT_EQ(t.raw_data(), buf.data());
  EXPECT_TRUE(t.is_contiguous());
  buf[4] = 50.f;  // the caller's writes are visible
  EXPECT_EQ(t.item_as_double({1, 1}), 50.0);
  t.data<float>()[0] = -1.f;  // and the tensor's writes reach the caller
  EXPECT_EQ(buf[0], -1.f);
  // Explicit strides: a column view of the same buffer.
  const Tensor col = Tensor::from_blob(buf.data() + 1, DType::kFloat32, {2}, {3});
  EXPECT_EQ(col.to_float_vector(), (std::vector<float>{2, 50}));
  expect_error<InvalidArgument>(
      [&] {
        Tensor::from_blob(buf.data(), DType::kFloat32, {2, 3}, {1});
      },
      {"strides"});
  expect_error<InvalidArgument>([] { Tensor::from_blob(nullptr, DType::kFloat32, {2}); }, {"null"});
}

TEST(Tensor, ItemAndVectorsAcrossDtypes) {
  const Tensor i = Tensor::from_vector_i64({int64_t{1} << 62, -3}, {2});
  EXPECT_EQ(i.to_int64_vector(), (std::vector<int64_t>{int64_t{1} << 62, -3}));
  Tensor h = Tensor::empty(DType::kFloat16, {2});
  h.data<Float16>()[0].bits = 0x3C00;  // 1.0
  h.data<Float16>()[1].bits = 0xC000;  // -2.0
  EXPECT_EQ(h.to_float_vector(), (std::vector<float>{1.f, -2.f}));
  Tensor b = Tensor::zeros(DType::kBool, {2});
  static_cast<uint8_t*>(b.raw_data())[1] = 1;
  EXPECT_EQ(b.to_int64_vector(), (std::vector<int64_t>{0, 1}));
  expect_error<InvalidArgument>([&] { i.item_as_double({2}); }, {"index 2"});
}

// ---- float16 --------------------------------------------------------------------------

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(float_to_half(0.f), 0x0000);
  EXPECT_EQ(float_to_half(-0.f), 0x8000);
  EXPECT_EQ(float_to_half(1.f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.f), 0xC000);
  EXPECT_EQ(float_to_half(0.5f), 0x3800);
  EXPECT_EQ(float_to_half(65504.f), 0x7BFF);
  EXPECT_EQ(float_to_half(std::ldexp(1.f, -14)), 0x0400);           // smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1.f, -24)), 0x0001);           // smallest subnormal
  EXPECT_EQ(float_to_half(1023.f * std::ldexp(1.f, -24)), 0x03FF);  // largest subnormal
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.f, -24));
  EXPECT_EQ(half_to_float(0x03FF), 1023.f * std::ldexp(1.f, -24));
  EXPECT_EQ(half_to_float(0x7BFF), 65504.f);
  EXPECT_EQ(half_to_float(0x8000), -0.f);
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(Float16, InfNaNAndOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_half(inf), 0x7C00);
  EXPECT_EQ(float_to_half(-inf), 0xFC00);
  EXPECT_EQ(half_to_float(0x7C00), inf);
  EXPECT_EQ(half_to_float(0xFC00), -inf);
  const uint16_t n = float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(n & 0x7C00, 0x7C00);
  EXPECT_NE(n & 0x03FF, 0);
  // A NaN whose payload lives only in the low float bits must stay NaN (not become inf).
  EXPECT_NE(float_to_half(bits_to_float(0x7F800001u)) & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(half_to_float(0xFC01)));
  // Overflow: 65519.99 rounds down to 65504, 65520 (the midpoint to 2^16) rounds to inf.
  EXPECT_EQ(float_to_half(65519.f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.f), 0x7C00);
  EXPECT_EQ(float_to_half(1e10f), 0x7C00);
  EXPECT_EQ(float_to_half(-1e10f), 0xFC00);
}

TEST(Float16, RoundsToNearestEven) {
  const float ulp1 = std::ldexp(1.f, -10);                                  // half ulp at 1.0
  EXPECT_EQ(float_to_half(1.f + ulp1 / 2), 0x3C00);                         // tie -> even
  EXPECT_EQ(float_to_half(1.f + 3 * ulp1 / 2), 0x3C02);                     // tie -> even
  EXPECT_EQ(float_to_half(1.f + ulp1 / 2 + std::ldexp(1.f, -20)), 0x3C01);  // above tie
  EXPECT_EQ(float_to_half(1.f + ulp1 / 2 - std::ldexp(1.f, -20)), 0x3C00);  // below tie
  // Subnormals: units of 2^-24.
  const float u = std::ldexp(1.f, -24);
  EXPECT_EQ(float_to_half(0.5f * u), 0x0000);  // tie -> even (0)
  EXPECT_EQ(float_to_half(0.51f * u), 0x0001);
  EXPECT_EQ(float_to_half(1.5f * u), 0x0002);  // tie -> even (2)
  EXPECT_EQ(float_to_half(2.5f * u), 0x0002);  // tie -> even (2)
  EXPECT_EQ(float_to_half(-1.5f * u), 0x8002);
  EXPECT_EQ(float_to_half(0.25f * u), 0x0000);
  EXPECT_EQ(float_to_half(-0.25f * u), 0x8000);  // keeps the sign of zero
  // 1023.5 units is a tie between the largest subnormal (odd) and the smallest normal.
  EXPECT_EQ(float_to_half(1023.5f * u), 0x0400);
}

TEST(Float16, EveryHalfRoundTripsExactly) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(float_to_half(f), h) << std::hex << h;
  }
}

// Independent oracle: round |f| to the half grid in double with nearbyint (ties to even
// in the default rounding mode); the grid step is 2^(e - 10) for normals, 2^-24 below.
double reference_round(float f) {
  const double a = std::fabs(static_cast<double>(f));
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const int exp = std::max(e - 1, -14);
  const double step = std::ldexp(1.0, exp - 10);
  double r = std::nearbyint(a / step) * step;
  if (r >= 65520.0) r = std::numeric_limits<double>::infinity();
  return std::copysign(r, f);
}

TEST(Float16, RandomFloatsMatchReferenceRounding) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<uint32_t> bits(0, 0xFFFFFFFFu);
  for (int i = 0; i < 200000; ++i) {
    // Random bit patterns, biased towards the half range by forcing the exponent.
    uint32_t b = bits(rng);
    const uint32_t exp = 101 + (b >> 24) % 42;  // 2^-26 .. 2^15
    b = (b & 0x807FFFFFu) | (exp << 23);
    const float f = bits_to_float(b);
    const double want = reference_round(f);
    const float got = half_to_float(float_to_half(f));
    ASSERT_EQ(static_cast<double>(got), want) << std::hexfloat << f;
    ASSERT_EQ(std::signbit(got), std::signbit(f));
  }
}

}  // namespace
}  // namespace tern
