// The error hierarchy, TERN_CHECK's messages, and rethrow_with_prefix keeping the type.
#include <gtest/gtest.h>

#include "base/check.h"

namespace tern {
namespace {

template <typename E>
void expect_prefixed(const E& original, const char* kind) {
  try {
    rethrow_with_prefix(original, "Conv 'c1': ");
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()), std::string("Conv 'c1': ") + original.what());
    EXPECT_STREQ(e.kind(), kind);
    return;
  } catch (...) {
    FAIL() << "rethrow_with_prefix changed the type of a " << kind;
  }
  FAIL() << "nothing thrown";
}

TEST(Errors, EveryKindIsATernErrorWithItsName) {
  EXPECT_STREQ(ModelError("x").kind(), "model error");
  EXPECT_STREQ(UnsupportedOpError("x").kind(), "unsupported op");
  EXPECT_STREQ(ShapeError("x").kind(), "shape error");
  EXPECT_STREQ(InvalidArgument("x").kind(), "invalid argument");
  EXPECT_STREQ(IOError("x").kind(), "I/O error");
  EXPECT_STREQ(Error("x").kind(), "error");
  EXPECT_THROW(throw ShapeError("x"), Error);
  EXPECT_THROW(throw IOError("x"), std::runtime_error);
}

TEST(Errors, RethrowWithPrefixKeepsTheType) {
  expect_prefixed(ModelError("bad attribute"), "model error");
  expect_prefixed(UnsupportedOpError("no such op"), "unsupported op");
  expect_prefixed(ShapeError("expected 64 channels, but got 32"), "shape error");
  expect_prefixed(InvalidArgument("bad"), "invalid argument");
  expect_prefixed(IOError("missing"), "I/O error");
  expect_prefixed(Error("plain"), "error");
}

TEST(Errors, CheckFormatsTheMessageOnlyOnFailure) {
  int formatted = 0;
  auto count = [&] {
    ++formatted;
    return 32;
  };
  EXPECT_NO_THROW(TERN_CHECK(true, ShapeError, "never {}", count()));
  EXPECT_EQ(formatted, 0);
  try {
    TERN_CHECK(1 + 1 == 3, ShapeError, "Conv '{}': expected input with {} channels, but got {}",
               "stage2.conv1", 64, count());
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "Conv 'stage2.conv1': expected input with 64 channels, but got 32");
  }
  EXPECT_EQ(formatted, 1);
}

}  // namespace
}  // namespace tern
