#include "vision/image.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/check.h"
#include "stb_image.h"
#include "stb_image_resize.h"
#include "stb_image_write.h"

namespace tern::vision {

Image Image::black(int width, int height, int channels) {
  TERN_CHECK(width > 0 && height > 0 && channels > 0 &&
                 int64_t{width} * height <= kMaxImagePixels,
             InvalidArgument, "Image: expected a positive size up to {} pixels, but got {}x{}x{}",
             kMaxImagePixels, width, height, channels);
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.assign(size_t(width) * height * channels, 0);
  return image;
}

Image load_image(const std::string& path) {
  std::error_code ec;
  TERN_CHECK(!std::filesystem::is_directory(path, ec), IOError,
             "cannot read image '{}': it is a directory", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    TERN_THROW(IOError, "cannot open image '{}': {}", path, std::strerror(errno));
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    TERN_THROW(IOError, "cannot read image '{}': {}", path, std::strerror(errno));
  }
  return load_image_from_memory(bytes.data(), bytes.size(), path);
}

Image load_image_from_memory(const void* data, size_t size, const std::string& name) {
  TERN_CHECK(size > 0, IOError, "cannot decode image '{}': the file is empty", name);
  TERN_CHECK(size <= size_t{INT32_MAX}, IOError,
             "cannot decode image '{}': {} bytes is over stb_image's 2 GiB limit", name, size);
  const auto* bytes = static_cast<const stbi_uc*>(data);
  const int len = static_cast<int>(size);
  int w = 0, h = 0, file_channels = 0;
  if (!stbi_info_from_memory(bytes, len, &w, &h, &file_channels)) {
    TERN_THROW(IOError, "cannot decode image '{}': {}", name, stbi_failure_reason());
  }
  TERN_CHECK(int64_t{w} * h <= kMaxImagePixels, IOError,
             "cannot decode image '{}': {}x{} is over the limit of {} pixels", name, w, h,
             kMaxImagePixels);
  stbi_uc* pixels = stbi_load_from_memory(bytes, len, &w, &h, &file_channels, 3);
  if (pixels == nullptr) {
    TERN_THROW(IOError, "cannot decode image '{}': {}", name, stbi_failure_reason());
  }
  Image image;
  image.width = w;
  image.height = h;
  image.channels = 3;
  image.pixels.assign(pixels, pixels + size_t(w) * h * 3);
  stbi_image_free(pixels);
  return image;
}

void save_image(const Image& image, const std::string& path, int jpeg_quality) {
  TERN_CHECK(image.width > 0 && image.height > 0 &&
                 image.pixels.size() == size_t(image.width) * image.height * image.channels,
             InvalidArgument, "cannot save image '{}': the image is empty or inconsistent ({}x{}x{}, {} bytes)",
             path, image.width, image.height, image.channels, image.pixels.size());
  TERN_CHECK(image.channels == 1 || image.channels == 3 || image.channels == 4, InvalidArgument,
             "cannot save image '{}': expected 1, 3 or 4 channels, but got {}", path,
             image.channels);
  std::string ext;
  if (size_t dot = path.find_last_of('.'); dot != std::string::npos &&
                                           path.find_last_of('/') + 1 <= dot) {
    ext = path.substr(dot);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) {
      return static_cast<char>(std::tolower(c));
    });
  }
  int ok = 0;
  errno = 0;
  if (ext == ".jpg" || ext == ".jpeg") {
    ok = stbi_write_jpg(path.c_str(), image.width, image.height, image.channels,
                        image.pixels.data(), std::clamp(jpeg_quality, 1, 100));
  } else if (ext == ".png") {
    ok = stbi_write_png(path.c_str(), image.width, image.height, image.channels,
                        image.pixels.data(), image.width * image.channels);
  } else if (ext == ".bmp") {
    ok = stbi_write_bmp(path.c_str(), image.width, image.height, image.channels,
                        image.pixels.data());
  } else {
    TERN_THROW(InvalidArgument,
               "cannot save image '{}': unsupported extension '{}' (expected .jpg, .jpeg, .png "
               "or .bmp)",
               path, ext);
  }
  if (!ok) {
    TERN_THROW(IOError, "cannot write image '{}': {}", path,
               errno != 0 ? std::strerror(errno) : "the encoder failed");
  }
}

FloatImage resize(const Image& image, int width, int height) {
  TERN_CHECK(image.width > 0 && image.height > 0 &&
                 image.pixels.size() == size_t(image.width) * image.height * image.channels,
             InvalidArgument, "resize: expected a non-empty image, but got {}x{}x{} ({} bytes)",
             image.width, image.height, image.channels, image.pixels.size());
  TERN_CHECK(width > 0 && height > 0 && int64_t{width} * height <= kMaxImagePixels,
             InvalidArgument, "resize: expected a positive size up to {} pixels, but got {}x{}",
             kMaxImagePixels, width, height);
  const int c = image.channels;
  std::vector<float> src(image.pixels.begin(), image.pixels.end());
  FloatImage out;
  out.width = width;
  out.height = height;
  out.channels = c;
  out.pixels.resize(size_t(width) * height * c);
  const int ok = stbir_resize_float_generic(
      src.data(), image.width, image.height, image.width * c * int(sizeof(float)),
      out.pixels.data(), width, height, width * c * int(sizeof(float)), c,
      STBIR_ALPHA_CHANNEL_NONE, 0, STBIR_EDGE_CLAMP, STBIR_FILTER_TRIANGLE,
      STBIR_COLORSPACE_LINEAR, nullptr);
  TERN_CHECK(ok != 0, InvalidArgument, "resize: stb_image_resize failed for {}x{} -> {}x{}",
             image.width, image.height, width, height);
  return out;
}

namespace {

void fill(Image& image, int x0, int y0, int x1, int y1, Color color) {
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, image.width - 1);
  y1 = std::min(y1, image.height - 1);
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      uint8_t* p = image.at(x, y);
      p[0] = color.r;
      if (image.channels >= 3) {
        p[1] = color.g;
        p[2] = color.b;
      }
    }
  }
}

// Rounds to int, saturating so that huge or non-finite coordinates cannot overflow.
int to_pixel(float v) {
  if (!(v > -1e6f)) return -1000000;
  if (v > 1e6f) return 1000000;
  return static_cast<int>(std::lround(v));
}

}  // namespace

void draw_rect(Image& image, float x1, float y1, float x2, float y2, Color color, int thickness) {
  int left = to_pixel(std::min(x1, x2)), right = to_pixel(std::max(x1, x2));
  int top = to_pixel(std::min(y1, y2)), bottom = to_pixel(std::max(y1, y2));
  const int t = std::max(thickness, 1) - 1;
  fill(image, left, top, right, std::min(top + t, bottom), color);
  fill(image, left, std::max(bottom - t, top), right, bottom, color);
  fill(image, left, top, std::min(left + t, right), bottom, color);
  fill(image, std::max(right - t, left), top, right, bottom, color);
}

void draw_circle(Image& image, float cx, float cy, float radius, Color color) {
  if (!(radius >= 0) || !std::isfinite(cx) || !std::isfinite(cy)) return;
  const int x0 = to_pixel(cx - radius), x1 = to_pixel(cx + radius);
  const int y0 = to_pixel(cy - radius), y1 = to_pixel(cy + radius);
  const float r2 = radius * radius;
  for (int y = std::max(y0, 0); y <= std::min(y1, image.height - 1); ++y) {
    for (int x = std::max(x0, 0); x <= std::min(x1, image.width - 1); ++x) {
      const float dx = float(x) - cx, dy = float(y) - cy;
      if (dx * dx + dy * dy <= r2) fill(image, x, y, x, y, color);
    }
  }
}

void draw_point(Image& image, float x, float y, Color color) {
  const float radius = std::max(2.0f, float(std::min(image.width, image.height)) / 250.0f);
  draw_circle(image, x, y, radius, color);
}

}  // namespace tern::vision
