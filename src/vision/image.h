// 8-bit RGB images for the vision layer: decode (JPEG, PNG, BMP, ...) and encode (JPEG,
// PNG, BMP) with stb, antialiased resizing to float, and simple drawing for annotations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tern::vision {

/// An 8-bit image, row-major and interleaved: channel c of pixel (x, y) is
/// pixels[(y * width + x) * channels + c]. Images made by load_image() are RGB
/// (channels = 3) whatever the file holds (grey and alpha are converted).
struct Image {
  int width = 0;
  int height = 0;
  int channels = 3;
  std::vector<uint8_t> pixels;

  /// A black (all-zero) width x height x channels image.
  static Image black(int width, int height, int channels = 3);
  /// Pointer to channel 0 of pixel (x, y); no bounds check.
  uint8_t* at(int x, int y) { return pixels.data() + (size_t(y) * width + x) * channels; }
  const uint8_t* at(int x, int y) const {
    return pixels.data() + (size_t(y) * width + x) * channels;
  }
};

/// A float image with Image's layout (resize() fills it with unrounded 0..255 values).
struct FloatImage {
  int width = 0;
  int height = 0;
  int channels = 3;
  std::vector<float> pixels;
};

/// An RGB color for the drawing functions.
struct Color {
  uint8_t r = 0, g = 0, b = 0;
};

/// Images larger than this many pixels are refused before decoding (a hostile header must
/// not make tern allocate gigabytes).
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 27;

/// Reads and decodes the image file at `path` (whatever stb_image reads: JPEG, PNG, BMP,
/// GIF, TGA, PSD, HDR, PIC, PNM) into RGB. Throws IOError naming the file and the reason:
/// missing or unreadable file, not a regular file (a directory, FIFO, /dev/zero...), empty
/// file or one over 2 GiB (read_file_bytes() in base/file_io.h), or stb's failure reason
/// for corrupt or unsupported data; also for an image over kMaxImagePixels.
Image load_image(const std::string& path);

/// Decodes an encoded image held in memory into RGB. `name` is what error messages call
/// it (e.g. the file it came from). Throws IOError as load_image().
Image load_image_from_memory(const void* data, size_t size, const std::string& name = "<memory>");

/// Encodes `image` (1, 3 or 4 channels) to `path`, the format chosen by the extension
/// (case-insensitive): .jpg/.jpeg (quality `jpeg_quality`, 1..100), .png or .bmp.
/// Throws InvalidArgument for another extension or an empty image, IOError when the file
/// cannot be written.
void save_image(const Image& image, const std::string& path, int jpeg_quality = 92);

/// True when save_image() can encode to `path`'s extension (.jpg, .jpeg, .png, .bmp, any
/// case).
bool can_save_image_as(const std::string& path);

/// Resizes `image` to width x height with an antialiased triangle (bilinear) filter, as
/// PIL's Image.resize(BILINEAR) does (the resampling that made tern's reference inputs):
/// pixel centres aligned (output x samples input (x + 0.5) * in_w / out_w - 0.5), the
/// triangle widened by in/out when shrinking, taps beyond the border dropped and the rest
/// renormalized; horizontal pass, then vertical. The result is not rounded. Throws
/// InvalidArgument for an empty image or a non-positive size.
FloatImage resize(const Image& image, int width, int height);

/// resize() with each pass rounded to 8 bits, as PIL resizes an 8-bit image (equal to PIL
/// up to the rounding of its 22-bit fixed-point weights).
Image resize_u8(const Image& image, int width, int height);

/// Draws the outline of the box (x1, y1)-(x2, y2) (pixels, corners inclusive) with lines
/// `thickness` pixels wide, growing inward. Parts outside the image are clipped.
void draw_rect(Image& image, float x1, float y1, float x2, float y2, Color color,
               int thickness = 2);

/// Fills the disc of `radius` pixels around (cx, cy), clipped to the image.
void draw_circle(Image& image, float cx, float cy, float radius, Color color);

/// Width and height in pixels of `text` as draw_text() writes it at `scale`.
struct TextSize {
  int width = 0;
  int height = 0;
};
TextSize text_size(const std::string& text, int scale = 1);

/// Writes ASCII `text` with stb_easy_font's small segment font (about 7 pixels high),
/// magnified `scale` times, its top-left corner at (x, y); clipped to the image. One
/// line: other characters (control, non-ASCII) are drawn as '?'.
void draw_text(Image& image, float x, float y, const std::string& text, Color color, int scale = 1);

/// Marks one point: a disc of radius max(2, min(width, height) / 250).
void draw_point(Image& image, float x, float y, Color color);

}  // namespace tern::vision
