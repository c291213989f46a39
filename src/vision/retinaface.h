// RetinaFace face detection (MobileNet-0.25 backbone): preprocessing, prior boxes,
// decoding, NMS and the 5 landmarks, as ../shared/models/MANIFEST.md describes for
// retinaface_mnet025.onnx and as biubug6/Face-Detector-1MB-with-landmark (commit
// 2b075657, detect.py, data/config.py cfg_mnet, layers/functions/prior_box.py,
// utils/box_utils.py, utils/nms/py_cpu_nms.py) implements them.
//
//   tern::Session session("retinaface_mnet025.onnx");
//   tern::vision::Image photo = tern::vision::load_image("faces.jpg");
//   for (const tern::vision::Face& f : tern::vision::detect_faces(session, photo)) { ... }
#pragma once

#include <array>
#include <vector>

#include "tern/session.h"
#include "tern/tensor.h"
#include "vision/image.h"

namespace tern::vision {

/// A box as corners x1, y1, x2, y2 (pixels unless said otherwise).
using Box = std::array<float, 4>;

/// One detected face, in pixels of the original photo.
struct Face {
  Box box{};
  /// Face probability, conf[:, 1] of the model (softmax already applied), in [0, 1].
  float score = 0;
  /// (x, y) of the left eye, right eye, nose, left and right mouth corner.
  std::array<std::array<float, 2>, 5> landmarks{};
};

/// One prior (anchor) box: centre and size as fractions of the network input width and
/// height (cx, w in units of W; cy, h in units of H).
struct PriorBox {
  float cx = 0, cy = 0, w = 0, h = 0;
};

/// Options of detect_faces() and retinaface_decode(). Defaults are the repo's
/// (detect.py), except `threshold`, its display threshold (vis_thres).
struct RetinaFaceOptions {
  /// Long side of the network input in pixels: the photo is resized, aspect ratio kept,
  /// so that its longer side is `size` (the repo uses 320 or 640).
  int size = 640;
  /// Zero-pad the input bottom/right to size x size (the reference cases do; the repo
  /// does not). Padding changes no box coordinate, only the prior grid.
  bool pad_to_square = false;
  /// Faces returned: score >= threshold, applied after NMS (the repo's vis_thres).
  float threshold = 0.6f;
  /// Candidates entering NMS: score > confidence_threshold (the repo's default 0.02).
  float confidence_threshold = 0.02f;
  /// At most this many best candidates enter NMS (repo: 5000).
  int top_k = 5000;
  /// NMS drops a box whose IoU with a kept, higher-scoring box is > nms_iou (repo: 0.4).
  float nms_iou = 0.4f;
  /// At most this many boxes are kept after NMS (repo: 750).
  int keep_top_k = 750;
};

/// The network input made from a photo, and how it maps back.
struct RetinaFaceInput {
  /// [1, 3, H, W] float32, NCHW, channels B, G, R minus the mean (104, 117, 123); the
  /// padding (if any) is 0.
  Tensor tensor;
  /// Resize factor: network pixels = photo pixels * scale (= size / long side).
  float scale = 1;
  /// Size of the resized photo inside the input (H x W is larger when padded).
  int resized_width = 0;
  int resized_height = 0;
};

/// Min sizes and steps of retinaface_mnet025 (cfg_mnet of the repo's data/config.py).
inline constexpr int kRetinaFaceSteps[3] = {8, 16, 32};
inline constexpr int kRetinaFaceMinSizes[3][2] = {{10, 20}, {32, 64}, {128, 256}};
/// Variances of the box encoding (cfg_mnet 'variance').
inline constexpr float kRetinaFaceVariance[2] = {0.1f, 0.2f};
/// Mean subtracted from the B, G, R channels.
inline constexpr float kRetinaFaceMeanBgr[3] = {104.0f, 117.0f, 123.0f};

/// The prior boxes for an input_height x input_width network input, in the order of the
/// model's outputs: for each level k (step 8, 16, 32), each row i < ceil(H / step), each
/// column j < ceil(W / step), each min size m of the level: ((j + 0.5) * step / W,
/// (i + 0.5) * step / H, m / W, m / H); not clipped. Count 2 * sum_k ceil(H/s_k) *
/// ceil(W/s_k): 4200 for 320x320, 2860 for 212x320 (H x W). Source: MANIFEST
/// "decoding", repo layers/functions/prior_box.py. Throws InvalidArgument unless
/// both sizes are positive.
std::vector<PriorBox> retinaface_priors(int input_height, int input_width);

/// Makes the network input for `image` (RGB): resize with PIL's 8-bit antialiased
/// bilinear filter (resize_u8) so that the long side is `size` and the short side
/// round(short * size / long), RGB -> BGR, float32, subtract kRetinaFaceMeanBgr, NCHW, and
/// with `pad_to_square` zero-pad bottom/right to size x size. Source: MANIFEST "input" and
/// the reference cases' case.json "preprocess" (PIL 9.4 resize of the decoded JPEG; tern's
/// JPEG decoder differs from libjpeg by a level or two on some pixels). Throws
/// InvalidArgument for an empty or non-RGB image or a size outside 1..16384.
RetinaFaceInput retinaface_preprocess(const Image& image, int size, bool pad_to_square);

/// IoU of two boxes. `offset` 0: continuous coordinates, area (x2 - x1) * (y2 - y1);
/// `offset` 1: the repo's py_cpu_nms convention of inclusive pixel corners, area
/// (x2 - x1 + 1) * (y2 - y1 + 1). Empty overlap gives 0; two empty boxes give 0.
float box_iou(const Box& a, const Box& b, float offset = 0);

/// Greedy non-maximum suppression as the repo's py_cpu_nms: visit boxes by descending
/// score (ties: lower index first), keep one, drop every later box whose IoU with it
/// (offset 1, see box_iou) is > iou_threshold. Returns the kept indices, best first.
/// Throws InvalidArgument when the vector sizes differ.
std::vector<size_t> nms(const std::vector<Box>& boxes, const std::vector<float>& scores,
                        float iou_threshold);

/// Decodes raw model outputs into faces in pixels of the original photo.
///
/// loc [1, N, 4] (or [N, 4]), conf [1, N, 2], landms [1, N, 10], float32, any strides,
/// for an input_height x input_width network input (padding included), N =
/// retinaface_priors(input_height, input_width).size(). Per prior p: centre =
/// p.cxcy + loc[0:2] * 0.1 * p.wh, size = p.wh * exp(loc[2:4] * 0.2), corners = centre
/// -/+ size / 2, landmark n = p.cxcy + landms[2n:2n+2] * 0.1 * p.wh, all times (W, H)
/// and divided by `scale` (RetinaFaceInput::scale); score = conf[:, 1]. Then, as the
/// repo's detect.py: keep score > confidence_threshold, the top_k best, NMS (nms_iou),
/// the first keep_top_k, and finally score >= threshold. Returns faces best first.
/// Throws ShapeError when a tensor's shape does not match the priors (naming it and the
/// expected shape), InvalidArgument for a wrong dtype or scale <= 0.
std::vector<Face> retinaface_decode(const Tensor& loc, const Tensor& conf, const Tensor& landms,
                                    int input_height, int input_width, float scale,
                                    const RetinaFaceOptions& options = {});

/// Wall-clock time of each detect_faces() stage, in milliseconds.
struct DetectTimings {
  double preprocess_ms = 0;
  double run_ms = 0;
  double postprocess_ms = 0;
};

/// Detects the faces in `image` (RGB) with a RetinaFace session (one float32 input
/// [1, 3, H, W]; outputs named loc, conf, landms, or else those three in that order):
/// retinaface_preprocess(image, options.size, options.pad_to_square), session.run(),
/// retinaface_decode(). Returns faces in pixels of `image`, best first; fills `timings`
/// if given. Throws InvalidArgument when the session does not look like RetinaFace, and
/// whatever Session::run throws.
std::vector<Face> detect_faces(Session& session, const Image& image,
                               const RetinaFaceOptions& options = {},
                               DetectTimings* timings = nullptr);

/// Draws each face on `image` (pixels of that image): its box in green, lines
/// max(2, min(width, height) / 300) pixels wide, its score above the box, and the
/// landmarks as dots in the repo's colors (left eye red, right eye yellow, nose magenta,
/// left mouth corner green, right mouth corner blue).
void draw_faces(Image& image, const std::vector<Face>& faces);

}  // namespace tern::vision
