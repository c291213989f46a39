// DepthToSpace (DCR, CRD) and SpaceToDepth (src/ops/depth_to_space.cc) against index
// formulas written here, over blocksizes, odd dims and dtypes; round trip and errors.
#include <gtest/gtest.h>

#include <vector>

#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::run_op;

TEST(DepthToSpaceOp, DcrAndCrdMatchFormula) {
  for (int64_t b : {1, 2, 3}) {
    for (bool crd : {false, true}) {
      const int64_t n = 2, oc = 3, h = 3, w = 5, c = oc * b * b;
      const Tensor x = test::random_tensor<float>({n, c, h, w}, 7);
      AttrMap attrs = AttrMap().i("blocksize", b);
      if (crd) attrs.s("mode", "CRD");
      const Tensor y = run_op("DepthToSpace", attrs, {x}, 13)[0];
      ASSERT_EQ(y.shape(), (Shape{n, oc, h * b, w * b}));
      const auto xv = x.to_float_vector(), yv = y.to_float_vector();
      for (int64_t in = 0; in < n; ++in)
        for (int64_t ic = 0; ic < oc; ++ic)
          for (int64_t ih = 0; ih < h; ++ih)
            for (int64_t i = 0; i < b; ++i)
              for (int64_t iw = 0; iw < w; ++iw)
                for (int64_t j = 0; j < b; ++j) {
                  const int64_t src_c = crd ? ic * b * b + i * b + j : (i * b + j) * oc + ic;
                  const float want = xv[((in * c + src_c) * h + ih) * w + iw];
                  const float got = yv[((in * oc + ic) * h * b + ih * b + i) * w * b + iw * b + j];
                  ASSERT_EQ(got, want) << b << crd;
                }
    }
  }
}

TEST(SpaceToDepthOp, InvertsDcrForEveryDtype) {
  const Tensor x = test::random_tensor<int32_t>({1, 2, 4, 6}, 3, -100, 100);
  const Tensor s = run_op("SpaceToDepth", AttrMap().i("blocksize", 2), {x}, 13)[0];
  ASSERT_EQ(s.shape(), (Shape{1, 8, 2, 3}));
  // s[0, (i*2 + j) * 2 + c, h, w] = x[0, c, h*2 + i, w*2 + j]
  const auto xv = x.to_int64_vector(), sv = s.to_int64_vector();
  EXPECT_EQ(sv[((1 * 2 + 0) * 2 + 1) * 6 + 1 * 3 + 2], xv[(1 * 4 + 3) * 6 + 4]);
  const Tensor back = run_op("DepthToSpace", AttrMap().i("blocksize", 2), {s}, 13)[0];
  EXPECT_EQ(back.to_int64_vector(), xv);
  EXPECT_EQ(back.dtype(), DType::kInt32);
}

TEST(DepthToSpaceOp, Errors) {
  const Tensor x = test::random_tensor<float>({1, 3, 2, 2}, 1);
  expect_error<ShapeError>([&] { run_op("DepthToSpace", AttrMap().i("blocksize", 2), {x}); },
                           {"DepthToSpace 'test_node'", "divisible"});
  expect_error<ShapeError>([&] { run_op("SpaceToDepth", AttrMap().i("blocksize", 3), {x}); },
                           {"SpaceToDepth 'test_node'", "divisible"});
  expect_error<ShapeError>(
      [&] {
        run_op("SpaceToDepth", AttrMap().i("blocksize", 1), {test::f32({1, 2}, {2})});
      },
      {"SpaceToDepth 'test_node'", "4-D"});
  expect_error<ModelError>([&] { test::make_op("DepthToSpace", AttrMap().i("blocksize", 0)); },
                           {"DepthToSpace 'test_node'", "blocksize"});
  expect_error<ModelError>(
      [&] { test::make_op("DepthToSpace", AttrMap().i("blocksize", 2).s("mode", "XYZ")); },
      {"DepthToSpace 'test_node'", "mode"});
}

}  // namespace
}  // namespace tern
