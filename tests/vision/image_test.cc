// Image decode/encode errors and round trips, the PIL-style resampler, and drawing.
#include "vision/image.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_env.h"
#include "tern/status.h"

namespace tern::vision {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The files of these tests go to one scratch folder, removed when the program exits.
fs::path temp_path(const std::string& name) {
  static const test::ScratchDir dir("vision");
  return dir.path() / name;
}

// Expects `fn` to throw ErrorT with every one of `parts` in its message.
template <typename ErrorT, typename Fn>
void expect_error(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception";
  } catch (const ErrorT& e) {
    for (const std::string& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

Image gradient(int w, int h) {
  Image img = Image::black(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.at(x, y);
      p[0] = uint8_t(x * 255 / std::max(w - 1, 1));
      p[1] = uint8_t(y * 255 / std::max(h - 1, 1));
      p[2] = uint8_t((x + y) % 256);
    }
  }
  return img;
}

// ---- loading errors ----

TEST(LoadImage, MissingFileIsIOErrorNamingIt) {
  const std::string path = temp_path("no_such_photo.jpg").string();
  expect_error<IOError>([&] { load_image(path); }, {path, "no such image file"});
}

TEST(LoadImage, GarbageBytesIsIOErrorNamingTheFileAndReason) {
  const fs::path path = temp_path("garbage.jpg");
  // Appended, not `string + literal`: GCC 12 warns falsely (-Warray-bounds) on the latter.
  std::string garbage(4096, '\x5a');
  garbage.append("not an image at all");
  test::write_bytes(path, garbage);
  expect_error<IOError>([&] { load_image(path.string()); },
                        {path.string(), "cannot decode image", "not of any known type"});
}

TEST(LoadImage, EmptyFileIsIOError) {
  const fs::path path = temp_path("empty.png");
  test::write_bytes(path, "");
  expect_error<IOError>([&] { load_image(path.string()); }, {path.string(), "empty"});
}

TEST(LoadImage, DirectoryIsIOError) {
  const fs::path dir = temp_path("a_directory.jpg");
  fs::create_directories(dir);
  expect_error<IOError>([&] { load_image(dir.string()); },
                        {dir.string(), "not a regular file", "directory"});
}

// /dev/zero never ends: load_image must refuse it at once, not read until memory runs out.
TEST(LoadImage, DevZeroIsIOError) {
  if (!fs::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  expect_error<IOError>([&] { load_image("/dev/zero"); },
                        {"'/dev/zero'", "not a regular file", "character device"});
}

TEST(LoadImage, TruncatedPngIsIOError) {
  const fs::path full = temp_path("full.png"), cut = temp_path("truncated.png");
  save_image(gradient(64, 48), full.string());
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 200u);
  test::write_bytes(cut, bytes.substr(0, bytes.size() / 2));
  expect_error<IOError>([&] { load_image(cut.string()); }, {cut.string()});
}

TEST(LoadImage, FromMemoryNamesTheGivenName) {
  const std::string junk = "GIF89a but not really";
  expect_error<IOError>([&] { load_image_from_memory(junk.data(), junk.size(), "my-buffer"); },
                        {"my-buffer"});
  expect_error<IOError>([&] { load_image_from_memory(junk.data(), 0, "nothing"); },
                        {"nothing", "empty"});
}

// ---- decoding and encoding ----

TEST(LoadImage, DemoPhotoDecodesAsRgb) {
  const fs::path path = test::source_dir() / "assets" / "faces9.jpg";
  if (!fs::exists(path)) GTEST_SKIP() << path << " missing";
  const Image img = load_image(path.string());
  EXPECT_EQ(img.width, 1024);
  EXPECT_EQ(img.height, 768);
  EXPECT_EQ(img.channels, 3);
  ASSERT_EQ(img.pixels.size(), 1024u * 768u * 3u);
  // Same bytes through the in-memory path.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(load_image_from_memory(bytes.data(), bytes.size()).pixels, img.pixels);
}

TEST(SaveImage, PngRoundTripIsExact) {
  const Image img = gradient(37, 23);
  const fs::path path = temp_path("roundtrip.PNG");  // extension is case-insensitive
  save_image(img, path.string());
  const Image back = load_image(path.string());
  EXPECT_EQ(back.width, 37);
  EXPECT_EQ(back.height, 23);
  EXPECT_EQ(back.pixels, img.pixels);
}

TEST(SaveImage, GreyPngLoadsAsRgb) {
  Image grey = Image::black(5, 4, 1);
  for (size_t i = 0; i < grey.pixels.size(); ++i) grey.pixels[i] = uint8_t(i * 10);
  const fs::path path = temp_path("grey.png");
  save_image(grey, path.string());
  const Image back = load_image(path.string());
  ASSERT_EQ(back.channels, 3);
  for (int i = 0; i < 20; ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(back.pixels[size_t(i) * 3 + c], uint8_t(i * 10));
  }
}

TEST(SaveImage, JpegRoundTripIsClose) {
  const Image img = gradient(64, 64);
  const fs::path path = temp_path("roundtrip.jpg");
  save_image(img, path.string(), 95);
  const Image back = load_image(path.string());
  ASSERT_EQ(back.pixels.size(), img.pixels.size());
  double sum = 0;
  for (size_t i = 0; i < img.pixels.size(); ++i) {
    sum += std::abs(int(back.pixels[i]) - int(img.pixels[i]));
  }
  // A smooth image at quality 95 loses about a level on average.
  EXPECT_LT(sum / double(img.pixels.size()), 3.0);
}

TEST(SaveImage, Errors) {
  const Image img = gradient(4, 4);
  expect_error<InvalidArgument>([&] { save_image(img, temp_path("x.gif").string()); },
                                {"x.gif", "unsupported extension '.gif'"});
  expect_error<InvalidArgument>([&] { save_image(img, temp_path("noext").string()); },
                                {"unsupported extension"});
  const std::string bad = (temp_path("missing_dir") / "sub" / "out.png").string();
  expect_error<IOError>([&] { save_image(img, bad); }, {bad});
  expect_error<InvalidArgument>([&] { save_image(Image{}, temp_path("e.png").string()); },
                                {"empty"});
}

// ---- resampling ----

Image row_image(const std::vector<uint8_t>& values) {
  Image img = Image::black(int(values.size()), 1, 1);
  img.pixels = values;
  return img;
}

TEST(Resize, ShrinkByTwoHandChecked) {
  // 4 -> 2: scale 2, triangle support 2. Output 0 is centred at 1.0 and takes inputs
  // 0, 1, 2 with weights 0.75, 0.75, 0.25 (input -1 lies outside and is dropped);
  // output 1 is centred at 3.0 and takes inputs 1, 2, 3 with 0.25, 0.75, 0.75.
  const FloatImage out = resize(row_image({0, 100, 200, 40}), 2, 1);
  ASSERT_EQ(out.pixels.size(), 2u);
  EXPECT_NEAR(out.pixels[0], (0.75 * 0 + 0.75 * 100 + 0.25 * 200) / 1.75, 1e-4);
  EXPECT_NEAR(out.pixels[1], (0.25 * 100 + 0.75 * 200 + 0.75 * 40) / 1.75, 1e-4);
  // The 8-bit variant rounds: 71.43 -> 71, 117.14 -> 117.
  const Image u8 = resize_u8(row_image({0, 100, 200, 40}), 2, 1);
  EXPECT_EQ(u8.pixels, (std::vector<uint8_t>{71, 117}));
}

TEST(Resize, GrowByTwoIsBilinear) {
  // 2 -> 4: centres 0.25, 0.75, 1.25, 1.75 in input pixels; support 1.
  const FloatImage out = resize(row_image({0, 100}), 4, 1);
  ASSERT_EQ(out.pixels.size(), 4u);
  EXPECT_NEAR(out.pixels[0], 0, 1e-4);
  EXPECT_NEAR(out.pixels[1], 25, 1e-4);
  EXPECT_NEAR(out.pixels[2], 75, 1e-4);
  EXPECT_NEAR(out.pixels[3], 100, 1e-4);
}

TEST(Resize, VerticalMatchesHorizontal) {
  Image column = Image::black(1, 4, 1);
  column.pixels = {0, 100, 200, 40};
  const FloatImage v = resize(column, 1, 2);
  const FloatImage h = resize(row_image({0, 100, 200, 40}), 2, 1);
  ASSERT_EQ(v.pixels.size(), 2u);
  EXPECT_NEAR(v.pixels[0], h.pixels[0], 1e-5);
  EXPECT_NEAR(v.pixels[1], h.pixels[1], 1e-5);
}

TEST(Resize, ConstantStaysConstantAtOddRatios) {
  Image img = Image::black(45, 34);
  std::fill(img.pixels.begin(), img.pixels.end(), uint8_t{77});
  for (auto [w, h] : {std::pair{32, 25}, {7, 3}, {90, 68}, {1, 1}, {45, 20}}) {
    const FloatImage out = resize(img, w, h);
    ASSERT_EQ(out.pixels.size(), size_t(w) * h * 3);
    for (float v : out.pixels) ASSERT_NEAR(v, 77.0f, 1e-3) << w << "x" << h;
  }
}

// 1-D weights of a resize from n to m samples, read off impulse responses:
// w[o][i] = resize(impulse at i)[o] / 100.
std::vector<std::vector<double>> weights_1d(int n, int m) {
  std::vector<std::vector<double>> w(static_cast<size_t>(m),
                                     std::vector<double>(static_cast<size_t>(n), 0.0));
  for (int i = 0; i < n; ++i) {
    std::vector<uint8_t> impulse(size_t(n), 0);
    impulse[size_t(i)] = 100;
    const FloatImage r = resize(row_image(impulse), m, 1);
    for (int o = 0; o < m; ++o) w[size_t(o)][size_t(i)] = r.pixels[size_t(o)] / 100.0;
  }
  return w;
}

TEST(Resize, TwoDimensionalIsSeparable) {
  // 9x5 -> 4x3 must equal sum_y wy[oy][y] * sum_x wx[ox][x] * I(x, y) with the 1-D
  // weights of 9 -> 4 and 5 -> 3 (shrinking both ways, odd ratios).
  const int w = 9, h = 5, ow = 4, oh = 3;
  Image img = Image::black(w, h, 1);
  for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = uint8_t((i * 37 + 11) % 256);
  const auto wx = weights_1d(w, ow), wy = weights_1d(h, oh);
  const FloatImage out = resize(img, ow, oh);
  for (int oy = 0; oy < oh; ++oy) {
    for (int ox = 0; ox < ow; ++ox) {
      double expect = 0;
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          expect += wy[size_t(oy)][size_t(y)] * wx[size_t(ox)][size_t(x)] * img.at(x, y)[0];
        }
      }
      EXPECT_NEAR(out.pixels[size_t(oy) * ow + size_t(ox)], expect, 1e-3) << ox << "," << oy;
    }
  }
  // Each 1-D row of weights sums to 1 and spans at most 2 * ceil(9 / 4) + 1 taps.
  for (const auto& row : wx) {
    double sum = 0;
    int taps = 0;
    for (double v : row) {
      sum += v;
      taps += v != 0;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
    EXPECT_LE(taps, 7);
  }
}

TEST(Resize, Errors) {
  expect_error<InvalidArgument>([] { resize(Image{}, 4, 4); }, {"resize", "non-empty"});
  expect_error<InvalidArgument>([] { resize(gradient(4, 4), 0, 4); }, {"resize", "0x4"});
}

// ---- drawing ----

int count_set(const Image& img) {
  int n = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) n += img.at(x, y)[0] != 0;
  }
  return n;
}

TEST(Draw, RectOutline) {
  Image img = Image::black(10, 10);
  draw_rect(img, 2, 2, 6, 5, Color{255, 10, 20}, 1);
  EXPECT_EQ(img.at(2, 2)[0], 255);
  EXPECT_EQ(img.at(2, 2)[1], 10);
  EXPECT_EQ(img.at(2, 2)[2], 20);
  EXPECT_EQ(img.at(6, 5)[0], 255);
  EXPECT_EQ(img.at(4, 2)[0], 255);
  EXPECT_EQ(img.at(2, 4)[0], 255);
  EXPECT_EQ(img.at(4, 3)[0], 0);  // interior
  EXPECT_EQ(img.at(7, 5)[0], 0);  // outside
  EXPECT_EQ(img.at(1, 2)[0], 0);
  EXPECT_EQ(count_set(img), 2 * 5 + 2 * 2);  // 5x4 outline: 14 pixels
}

TEST(Draw, ThickRectGrowsInwardAndClips) {
  Image img = Image::black(10, 10);
  draw_rect(img, 1, 1, 8, 8, Color{9, 9, 9}, 2);
  EXPECT_EQ(img.at(2, 2)[0], 9);
  EXPECT_EQ(img.at(3, 3)[0], 0);
  EXPECT_EQ(img.at(0, 0)[0], 0);
  Image clipped = Image::black(10, 10);
  draw_rect(clipped, -5, -5, 4, 4, Color{1, 1, 1}, 1);  // only the right/bottom sides show
  EXPECT_EQ(clipped.at(4, 0)[0], 1);
  EXPECT_EQ(clipped.at(0, 4)[0], 1);
  EXPECT_EQ(count_set(clipped), 5 + 5 - 1);
  draw_rect(clipped, NAN, 0, 1e30f, -1e30f, Color{1, 1, 1}, 3);  // must not crash
}

TEST(Draw, CircleAndPoint) {
  Image img = Image::black(11, 11);
  draw_circle(img, 5, 5, 2, Color{200, 0, 0});
  EXPECT_EQ(img.at(5, 5)[0], 200);
  EXPECT_EQ(img.at(7, 5)[0], 200);
  EXPECT_EQ(img.at(5, 3)[0], 200);
  EXPECT_EQ(img.at(8, 5)[0], 0);
  EXPECT_EQ(img.at(7, 7)[0], 0);  // distance 2.83 > 2
  EXPECT_EQ(count_set(img), 13);  // lattice points with x^2 + y^2 <= 4
  Image edge = Image::black(4, 4);
  draw_point(edge, 0, 0, Color{5, 5, 5});  // radius 2, clipped to the corner
  EXPECT_EQ(edge.at(0, 0)[0], 5);
  EXPECT_EQ(edge.at(2, 0)[0], 5);
  EXPECT_EQ(edge.at(2, 2)[0], 0);
  draw_circle(edge, NAN, 1, 3, Color{5, 5, 5});  // ignored
}

TEST(Draw, TextStaysInItsBox) {
  Image img = Image::black(60, 30);
  const TextSize size = text_size("0.99", 2);
  EXPECT_GT(size.width, 10);
  EXPECT_GT(size.height, 8);
  draw_text(img, 5, 5, "0.99", Color{255, 255, 255}, 2);
  int inside = 0, outside = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      const bool in = x >= 5 && x < 5 + size.width && y >= 5 && y < 5 + size.height;
      (in ? inside : outside) += img.at(x, y)[0] != 0;
    }
  }
  EXPECT_GT(inside, 20);
  EXPECT_EQ(outside, 0);
  // Characters without a glyph are drawn as '?' (the font indexes tables by code).
  Image a = Image::black(60, 30), b = Image::black(60, 30);
  draw_text(a, 1, 1, "x\x01\xff\n", Color{1, 2, 3});
  draw_text(b, 1, 1, "x???", Color{1, 2, 3});
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_EQ(text_size("\x80\x80", 1).width, text_size("??", 1).width);
}

}  // namespace
}  // namespace tern::vision
