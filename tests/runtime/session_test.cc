// Session: loading, input checks, zero-copy inputs, plans per shape, outputs that never
// alias plan constants or caller buffers. Uses the RetinaFace model kept in the repo
// (symbolic H and W), so it runs without ../shared.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "support/test_env.h"
#include "tern/session.h"

namespace tern {
namespace {

std::string repo_model() { return (test::source_dir() / "models/retinaface_mnet025.onnx").string(); }

// RetinaFace: priors = 2 * sum over steps (8, 16, 32) of ceil(H/s) * ceil(W/s).
int64_t num_priors(int64_t h, int64_t w) {
  int64_t n = 0;
  for (int64_t s : {8, 16, 32}) n += 2 * ((h + s - 1) / s) * ((w + s - 1) / s);
  return n;
}

// Conv MACs of RetinaFace-mnet0.25 at 1x3x320x320, from onnx shape inference (level sizes
// 40, 20, 10 filled in where it stops at Resize): 245.3 M, i.e. 0.49 GFLOP, a quarter of
// the 1.96 GFLOP MANIFEST.md gives at 640x640.
constexpr int64_t kRetinaFaceConvMacs320 = 245286400;

Tensor ramp(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>((i * 37) % 255) - 120.0f;
  return t;
}

class SessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { session_ = new Session(repo_model(), {.num_threads = 1}); }
  static void TearDownTestSuite() { delete session_; }
  static Session* session_;
};
Session* SessionTest::session_ = nullptr;

TEST_F(SessionTest, DescribesInputsAndOutputs) {
  ASSERT_EQ(session_->inputs().size(), 1u);
  const TensorInfo& in = session_->inputs()[0];
  EXPECT_EQ(in.name, "input");
  EXPECT_EQ(in.dtype, DType::kFloat32);
  EXPECT_EQ(in.shape, (Shape{1, 3, -1, -1}));
  EXPECT_EQ(in.dim_names[2], "height");
  EXPECT_EQ(in.dim_names[3], "width");
  ASSERT_EQ(session_->outputs().size(), 3u);
  EXPECT_EQ(session_->outputs()[0].name, "loc");
  EXPECT_EQ(session_->outputs()[1].name, "conf");
  EXPECT_EQ(session_->outputs()[2].name, "landms");
  EXPECT_EQ(session_->opset(), 13);
  EXPECT_EQ(session_->op_histogram().at("Conv"), 56);
  // 426,608 parameters per MANIFEST.md (initializers plus Constant nodes).
  EXPECT_GE(session_->parameter_count(), 423314);
}

TEST_F(SessionTest, SymbolicDimsTakeEachNewShape) {
  for (auto [h, w] : {std::pair<int64_t, int64_t>{32, 32}, {40, 72}, {33, 17}}) {
    auto out = session_->run({{"input", ramp({1, 3, h, w})}});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].tensor.shape(), (Shape{1, num_priors(h, w), 4})) << h << "x" << w;
    EXPECT_EQ(out[1].tensor.shape(), (Shape{1, num_priors(h, w), 2}));
    EXPECT_EQ(out[2].tensor.shape(), (Shape{1, num_priors(h, w), 10}));
    // conf is a softmax over 2 classes: each row sums to 1.
    const std::vector<float> conf = out[1].tensor.to_float_vector();
    for (size_t i = 0; i < conf.size(); i += 2) ASSERT_NEAR(conf[i] + conf[i + 1], 1.0f, 1e-5f);
  }
}

TEST_F(SessionTest, CachedPlanGivesTheSameResult) {
  Tensor x = ramp({1, 3, 40, 48});
  auto a = session_->run({{"input", x}});
  session_->run({{"input", ramp({1, 3, 32, 32})}});  // another plan in between
  auto b = session_->run({{"input", x}});
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].tensor.to_float_vector(), b[k].tensor.to_float_vector()) << a[k].name;
  }
}

TEST_F(SessionTest, InputIsZeroCopyAndNeverWritten) {
  std::vector<float> buf(1 * 3 * 32 * 32);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i % 97) - 40.0f;
  const std::vector<float> before = buf;
  Tensor view = Tensor::from_blob(buf.data(), DType::kFloat32, {1, 3, 32, 32});
  EXPECT_EQ(view.data<float>(), buf.data());
  auto out = session_->run({{"input", view}});
  EXPECT_EQ(buf, before);
  // Same values as a copy of the input.
  auto out2 = session_->run({{"input", view.clone()}});
  EXPECT_EQ(out[0].tensor.to_float_vector(), out2[0].tensor.to_float_vector());
}

TEST_F(SessionTest, NonContiguousInputViewIsAccepted) {
  Tensor big = ramp({1, 3, 32, 64});
  Tensor view = big.slice(3, 0, 64, 2);  // every other column: strided
  ASSERT_FALSE(view.is_contiguous());
  auto a = session_->run({{"input", view}});
  auto b = session_->run({{"input", view.contiguous()}});
  EXPECT_EQ(a[2].tensor.to_float_vector(), b[2].tensor.to_float_vector());
}

TEST_F(SessionTest, OutputsDoNotAliasAcrossRuns) {
  Tensor x = ramp({1, 3, 32, 32});
  auto a = session_->run({{"input", x}});
  const std::vector<float> expected = a[0].tensor.to_float_vector();
  std::memset(a[0].tensor.raw_data(), 0, a[0].tensor.nbytes());  // caller scribbles
  auto b = session_->run({{"input", x}});
  EXPECT_EQ(b[0].tensor.to_float_vector(), expected);
}

TEST_F(SessionTest, WrongInputName) {
  try {
    session_->run({{"image", ramp({1, 3, 32, 32})}});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'image'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("input"), std::string::npos) << e.what();
  }
}

TEST_F(SessionTest, MissingAndRepeatedInputs) {
  EXPECT_THROW(session_->run({}), InvalidArgument);
  EXPECT_THROW(session_->run({{"input", ramp({1, 3, 32, 32})}, {"input", ramp({1, 3, 32, 32})}}),
               InvalidArgument);
  EXPECT_THROW(session_->run({{"input", Tensor()}}), InvalidArgument);
}

TEST_F(SessionTest, WrongRank) {
  try {
    session_->run({{"input", ramp({3, 32, 32})}});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'input': expected rank 4"), std::string::npos)
        << e.what();
  }
}

TEST_F(SessionTest, WrongFixedDim) {
  try {
    session_->run({{"input", ramp({1, 4, 32, 32})}});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("dim 1 must be 3"), std::string::npos) << e.what();
  }
}

TEST_F(SessionTest, WrongDtype) {
  Tensor t = Tensor::zeros(DType::kInt64, {1, 3, 32, 32});
  try {
    session_->run({{"input", t}});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("expected dtype float32, but got int64"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(SessionTest, DescribeGivesShapesAndMacs) {
  auto layers = session_->describe({{"input", {1, 3, 320, 320}}});
  const PlanInfo info = session_->plan_info({{"input", {1, 3, 320, 320}}});
  EXPECT_EQ(info.nodes_before, 234);  // every node of the model
  EXPECT_EQ(layers.size(), static_cast<size_t>(info.nodes_after));  // what runs
  EXPECT_LT(info.nodes_after, info.nodes_before);  // the shape arithmetic is folded
  int64_t conv_macs = 0;  // only convolutions have MACs in RetinaFace
  for (const LayerInfo& l : layers) {
    ASSERT_EQ(l.output_shapes.size(), l.outputs.size()) << l.name;
    conv_macs += l.macs;
    if (l.outputs.size() == 1 && l.outputs[0] == "loc") {
      EXPECT_EQ(l.output_shapes.at(0), (Shape{1, 4200, 4}));
    }
  }
  EXPECT_EQ(conv_macs, kRetinaFaceConvMacs320);
  EXPECT_THROW(session_->describe({}), InvalidArgument);
  EXPECT_THROW(session_->describe({{"input", {1, 3, 320}}}), ShapeError);
}

TEST(SessionLoad, MissingFileIsIOError) {
  try {
    Session s("/nonexistent/model.onnx");
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.onnx"), std::string::npos);
  }
}

TEST(SessionLoad, FromMemoryEqualsFromFile) {
  std::ifstream f(repo_model(), std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Session a = Session::from_memory(bytes.data(), bytes.size(), {.num_threads = 1});
  bytes.assign(bytes.size(), 0);  // the session copied what it needs
  Session b(repo_model(), {.num_threads = 1});
  Tensor x = ramp({1, 3, 32, 32});
  EXPECT_EQ(a.run({{"input", x}})[1].tensor.to_float_vector(),
            b.run({{"input", x}})[1].tensor.to_float_vector());
}

// A model cannot make tern allocate without bound: every tensor, folded at plan time or
// computed at run time, is checked against max_tensor_bytes before allocation.
TEST(SessionLoad, TensorSizeLimitNamesTheNode) {
  SessionOptions opt;
  opt.num_threads = 1;
  opt.max_tensor_bytes = 300 * 1024;  // the weights fit (largest 256 KiB); 1x8x128x128 floats do not
  Session s(repo_model(), opt);
  try {
    s.run({{"input", ramp({1, 3, 256, 256})}});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("Conv '"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("over the limit of 307200"), std::string::npos)
        << e.what();
  }
}

TEST(SessionLoad, ManyShapesKeepFewPlansAndStayCorrect) {
  Session s(repo_model(), {.num_threads = 1});
  Tensor first = ramp({1, 3, 32, 32});
  const std::vector<float> expected = s.run({{"input", first}})[2].tensor.to_float_vector();
  for (int64_t w = 33; w < 45; ++w) s.run({{"input", ramp({1, 3, 32, w})}});  // evicts it
  EXPECT_EQ(s.run({{"input", first}})[2].tensor.to_float_vector(), expected);
}

TEST(SessionLoad, BadThreadCount) {
  EXPECT_THROW(Session(repo_model(), {.num_threads = -1}), InvalidArgument);
}

}  // namespace
}  // namespace tern
