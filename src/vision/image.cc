#include "vision/image.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>

#include "base/check.h"
#include "base/file_io.h"
#include "stb_easy_font.h"
#include "stb_image.h"
#include "stb_image_write.h"

namespace tern::vision {

Image Image::black(int width, int height, int channels) {
  TERN_CHECK(width > 0 && height > 0 && channels > 0 && int64_t{width} * height <= kMaxImagePixels,
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
  // stb_image takes an int length: files over 2 GiB are refused unread.
  const std::string bytes = read_file_bytes(path, "image", INT32_MAX);
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
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(bytes, len, &w, &h, &file_channels, 3), stbi_image_free);
  if (pixels == nullptr) {
    TERN_THROW(IOError, "cannot decode image '{}': {}", name, stbi_failure_reason());
  }
  Image image;
  image.width = w;
  image.height = h;
  image.channels = 3;
  image.pixels.assign(pixels.get(), pixels.get() + size_t(w) * h * 3);
  return image;
}

bool can_save_image_as(const std::string& path) {
  const std::string ext = lower_extension(path);
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp";
}

void save_image(const Image& image, const std::string& path, int jpeg_quality) {
  TERN_CHECK(image.width > 0 && image.height > 0 &&
                 image.pixels.size() == size_t(image.width) * image.height * image.channels,
             InvalidArgument,
             "cannot save image '{}': the image is empty or inconsistent ({}x{}x{}, {} bytes)",
             path, image.width, image.height, image.channels, image.pixels.size());
  TERN_CHECK(image.channels == 1 || image.channels == 3 || image.channels == 4, InvalidArgument,
             "cannot save image '{}': expected 1, 3 or 4 channels, but got {}", path,
             image.channels);
  const std::string ext = lower_extension(path);
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

namespace {

// The taps of a 1-D antialiased triangle (bilinear) filter from in_size to out_size
// samples, computed the way PIL's precompute_coeffs does (Pillow src/libImaging/Resample.c):
// output sample o is centred at c = (o + 0.5) * in_size / out_size in input coordinates;
// when shrinking the triangle widens by the factor s = in_size / out_size (support s),
// else s = 1; the taps are the input samples x in [int(c - s + 0.5), int(c + s + 0.5))
// cut to the image, with weights max(0, 1 - |x + 0.5 - c| / s) normalized to sum 1.
// Taps outside the image are dropped (not clamped), which keeps borders unbiased.
struct Taps {
  int max_taps = 0;
  std::vector<int> first;      // first input sample of each output sample
  std::vector<int> count;      // number of taps of each output sample
  std::vector<float> weights;  // out_size x max_taps, normalized
};

Taps triangle_taps(int in_size, int out_size) {
  const double scale = double(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter_scale;  // the triangle's support (1) times filter_scale
  Taps taps;
  taps.max_taps = int(std::ceil(support)) * 2 + 1;
  taps.first.resize(size_t(out_size));
  taps.count.resize(size_t(out_size));
  taps.weights.assign(size_t(out_size) * taps.max_taps, 0.0f);
  std::vector<double> w(size_t(taps.max_taps));
  for (int o = 0; o < out_size; ++o) {
    const double center = (o + 0.5) * scale;
    const int lo = std::max(0, int(center - support + 0.5));
    const int hi = std::min(in_size, int(center + support + 0.5));
    double sum = 0;
    for (int x = lo; x < hi; ++x) {
      w[size_t(x - lo)] = std::max(0.0, 1.0 - std::fabs((x - center + 0.5) / filter_scale));
      sum += w[size_t(x - lo)];
    }
    taps.first[size_t(o)] = lo;
    taps.count[size_t(o)] = hi - lo;
    for (int x = lo; x < hi; ++x) {
      taps.weights[size_t(o) * taps.max_taps + (x - lo)] =
          static_cast<float>(sum != 0 ? w[size_t(x - lo)] / sum : 0.0);
    }
  }
  return taps;
}

// Rounds to the nearest 0..255 level, as PIL's 8-bit resampling stores each pass.
inline float quantize8(float v) { return std::clamp(std::floor(v + 0.5f), 0.0f, 255.0f); }

// Two separable passes, horizontal then vertical (PIL's order), each rounded to 8 bits
// when `round_passes`.
FloatImage resize_passes(const Image& image, int width, int height, bool round_passes) {
  TERN_CHECK(image.width > 0 && image.height > 0 && image.channels > 0 &&
                 image.pixels.size() == size_t(image.width) * image.height * image.channels,
             InvalidArgument, "resize: expected a non-empty image, but got {}x{}x{} ({} bytes)",
             image.width, image.height, image.channels, image.pixels.size());
  TERN_CHECK(width > 0 && height > 0 && int64_t{width} * height <= kMaxImagePixels, InvalidArgument,
             "resize: expected a positive size up to {} pixels, but got {}x{}", kMaxImagePixels,
             width, height);
  const int c = image.channels;
  const size_t in_row = size_t(image.width) * c, out_row = size_t(width) * c;

  // Horizontal: image.height rows of `width` pixels.
  std::vector<float> mid(size_t(image.height) * out_row);
  if (width == image.width) {
    std::copy(image.pixels.begin(), image.pixels.end(), mid.begin());
  } else {
    const Taps h = triangle_taps(image.width, width);
    for (int y = 0; y < image.height; ++y) {
      const uint8_t* src = image.pixels.data() + size_t(y) * in_row;
      float* dst = mid.data() + size_t(y) * out_row;
      for (int x = 0; x < width; ++x) {
        const float* w = h.weights.data() + size_t(x) * h.max_taps;
        const uint8_t* s = src + size_t(h.first[size_t(x)]) * c;
        for (int ch = 0; ch < c; ++ch) {
          float acc = 0;
          for (int t = 0; t < h.count[size_t(x)]; ++t) acc += w[t] * float(s[t * c + ch]);
          dst[size_t(x) * c + ch] = round_passes ? quantize8(acc) : acc;
        }
      }
    }
  }

  // Vertical: each output row is a weighted sum of whole input rows (contiguous inner loop).
  FloatImage out;
  out.width = width;
  out.height = height;
  out.channels = c;
  if (height == image.height) {
    out.pixels = std::move(mid);
    return out;
  }
  out.pixels.assign(size_t(height) * out_row, 0.0f);
  const Taps v = triangle_taps(image.height, height);
  for (int y = 0; y < height; ++y) {
    float* dst = out.pixels.data() + size_t(y) * out_row;
    const float* w = v.weights.data() + size_t(y) * v.max_taps;
    for (int t = 0; t < v.count[size_t(y)]; ++t) {
      const float* src = mid.data() + size_t(v.first[size_t(y)] + t) * out_row;
      for (size_t i = 0; i < out_row; ++i) dst[i] += w[t] * src[i];
    }
    if (round_passes) {
      for (size_t i = 0; i < out_row; ++i) dst[i] = quantize8(dst[i]);
    }
  }
  return out;
}

}  // namespace

FloatImage resize(const Image& image, int width, int height) {
  return resize_passes(image, width, height, false);
}

Image resize_u8(const Image& image, int width, int height) {
  FloatImage f = resize_passes(image, width, height, true);
  Image out;
  out.width = f.width;
  out.height = f.height;
  out.channels = f.channels;
  out.pixels.assign(f.pixels.begin(), f.pixels.end());  // already whole 0..255 values
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
  const int t = std::clamp(thickness, 1, 1 << 20) - 1;
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

namespace {

// `text` with every character stb_easy_font has no glyph for (outside ' '..'~', '\n'
// included) replaced by '?': the font indexes its tables by character code.
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c < 32 || c > 126) c = '?';
  }
  return out;
}

}  // namespace

TextSize text_size(const std::string& text, int scale) {
  std::string copy = printable(text);
  const int s = std::max(scale, 1);
  return {stb_easy_font_width(copy.data()) * s, stb_easy_font_height(copy.data()) * s};
}

void draw_text(Image& image, float x, float y, const std::string& text, Color color, int scale) {
  if (text.empty() || !std::isfinite(x) || !std::isfinite(y)) return;
  // stb_easy_font emits axis-aligned quads of 4 vertices {x, y, z, rgba}: 16 bytes each.
  struct Vertex {
    float x, y, z;
    unsigned char rgba[4];
  };
  std::vector<Vertex> vertices(text.size() * 4 * 64);  // far more quads than any glyph has
  std::string copy = printable(text);
  unsigned char rgba[4] = {color.r, color.g, color.b, 255};
  const int quads = stb_easy_font_print(0, 0, copy.data(), rgba, vertices.data(),
                                        int(vertices.size() * sizeof(Vertex)));
  const float s = float(std::max(scale, 1));
  for (int q = 0; q < quads; ++q) {
    const Vertex* v = &vertices[size_t(q) * 4];
    const float qx0 = std::min(v[0].x, v[2].x), qx1 = std::max(v[0].x, v[2].x);
    const float qy0 = std::min(v[0].y, v[2].y), qy1 = std::max(v[0].y, v[2].y);
    // The quad covers [qx0, qx1) x [qy0, qy1) in font pixels.
    fill(image, to_pixel(x + qx0 * s), to_pixel(y + qy0 * s), to_pixel(x + qx1 * s) - 1,
         to_pixel(y + qy1 * s) - 1, color);
  }
}

void draw_point(Image& image, float x, float y, Color color) {
  const float radius = std::max(2.0f, float(std::min(image.width, image.height)) / 250.0f);
  draw_circle(image, x, y, radius, color);
}

}  // namespace tern::vision
