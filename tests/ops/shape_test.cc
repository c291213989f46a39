// Shape: full shape, opset-15 start/end (negative and clamped), any dtype, scalars.
// Size: element counts of several shapes and dtypes, and the folded value.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Shape, FullShapeAnyDtype) {
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt8, DType::kBool, DType::kInt64}) {
    const Tensor y = run1("Shape", {Tensor::zeros(t, {2, 3, 5, 7})});
    EXPECT_EQ(y.dtype(), DType::kInt64);
    EXPECT_EQ(y.shape(), (Shape{4}));
    EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{2, 3, 5, 7}));
  }
  const Tensor s = run1("Shape", {Tensor::scalar_f32(1.f)});
  EXPECT_EQ(s.shape(), (Shape{0}));
  // A strided view reports its own shape.
  EXPECT_EQ(
      run1("Shape", {Tensor::zeros(DType::kFloat32, {4, 6}).transpose(0, 1)}).to_int64_vector(),
      (std::vector<int64_t>{6, 4}));
}

TEST(Shape, StartEndFromOpset15) {
  const Tensor x = Tensor::zeros(DType::kFloat32, {2, 3, 5, 7});
  auto shape = [&](const AttrMap& a, int opset = 15) {
    return run1("Shape", {x}, a, opset).to_int64_vector();
  };
  EXPECT_EQ(shape(AttrMap().i("start", 1)), (std::vector<int64_t>{3, 5, 7}));
  EXPECT_EQ(shape(AttrMap().i("start", 1).i("end", 3)), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(shape(AttrMap().i("start", -2)), (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(shape(AttrMap().i("end", -1)), (std::vector<int64_t>{2, 3, 5}));
  // Out of range values clamp; end <= start is empty.
  EXPECT_EQ(shape(AttrMap().i("start", -10).i("end", 10)), (std::vector<int64_t>{2, 3, 5, 7}));
  EXPECT_EQ(shape(AttrMap().i("start", 3).i("end", 1)), (std::vector<int64_t>{}));
  // Before opset 15 the attributes do not exist: ignored.
  EXPECT_EQ(shape(AttrMap().i("start", 2), 13), (std::vector<int64_t>{2, 3, 5, 7}));
}

TEST(Size, ElementCountAnyDtypeAndFolded) {
  for (const Shape& shape : {Shape{}, Shape{0}, Shape{3, 4}, Shape{2, 1, 5}}) {
    for (DType t : {DType::kFloat32, DType::kInt8, DType::kBool}) {
      const Tensor y = run1("Size", {Tensor::empty(t, shape)});
      ASSERT_EQ(y.dtype(), DType::kInt64);
      ASSERT_EQ(y.shape(), Shape{});
      ASSERT_EQ(y.to_int64_vector(), (std::vector<int64_t>{shape_numel(shape)}));
    }
  }
  auto op = make_op("Size", {});
  ops::InferInput in;
  in.present = true;
  in.shape = {7, 3};
  const auto folded = op->fold_from_types(std::span<const ops::InferInput>(&in, 1));
  ASSERT_TRUE(folded.has_value());
  EXPECT_EQ((*folded)[0].to_int64_vector(), (std::vector<int64_t>{21}));
}

}  // namespace
}  // namespace tern::test
