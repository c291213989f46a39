// Reference Winograd convolution F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016, section 4): each 4x4 output tile of a 3x3,
// stride-1 convolution is A^T [ sum_ci (G g G^T) . (B^T d B) ] A, where d is the tile's
// 6x6 input patch, g a 3x3 filter and "." the element-wise product: 36 multiplications
// per input channel instead of 144. Interpolation points 0, 1, -1, 2, -2 and infinity.
// A dilated filter's tile takes outputs (and its patch inputs) d apart (WinogradAxis).
// The plain-loop twin of kernels/winograd (the same transforms in the same order), and
// the fallback of FusedConv when a plan's winograd weights meet a SIMD target whose
// vectors are not their block.
#pragma once

#include <cstdint>

#include "kernels/reference/fused_conv.h"
#include "tern/tensor.h"

namespace tern::kernels::ref {

/// Output tile edge (4), input patch edge (6) and transformed points (36) of F(4x4, 3x3).
constexpr int64_t kWinogradTile = 4;
constexpr int64_t kWinogradPatch = 6;
constexpr int64_t kWinogradPoints = kWinogradPatch * kWinogradPatch;

/// The transforms (Lavin and Gray, section 4.2): V = B^T d B (kWinogradBT is B^T, 6x6),
/// U = G g G^T (kWinogradG is G, 6x3), Y = A^T M A (kWinogradAT is A^T, 4x6).
inline constexpr double kWinogradBT[6][6] = {
    {4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
    {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
inline constexpr double kWinogradG[6][3] = {{1.0 / 4, 0, 0},
                                            {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                            {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                            {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                            {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                            {0, 0, 1}};
inline constexpr double kWinogradAT[4][6] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};

/// Whether F(4x4, 3x3) computes convolution `p`: 2-D, 3x3, stride 1, one group (any
/// dilation, padding, extents and layouts).
bool winograd_applicable(const FusedConvParams& p);

/// Where F(4x4, 3x3)'s tiles lie along one axis (H or W) of an output of `out` positions,
/// for dilation `dilation` and leading padding `pad`. A dilated 3x3 filter's taps are d
/// apart, so a tile takes 4 outputs d apart (its 6-point input patch is d apart too): the
/// axis splits into d interleaved phases (positions p with p % d equal), each tiled by 4
/// like an undilated axis of ceil(out / d) positions. Tiles run phase-fastest, so
/// neighbouring tiles read neighbouring inputs; with d = 1 this is plain 4-point tiling.
/// RFB's branches (UltraFace, FD-1MB) use dilations 2, 3 and 5.
struct WinogradAxis {
  int64_t dilation = 1, pad = 0;
  int64_t out = 0;  ///< output positions
  /// dilation * ceil(ceil(out / dilation) / 4); a phase's last tile may be partial.
  int64_t tiles = 0;
  /// Position of point i of tile t: an output for i in 0 to 3 (positions >= out are not
  /// stored), the patch's points for i in 0 to 5 (input() subtracts the padding).
  int64_t output(int64_t t, int64_t i) const {
    return t % dilation + dilation * (kWinogradTile * (t / dilation) + i);
  }
  /// Input position of patch point i (0 to 5) of tile t (outside the input: zero).
  int64_t input(int64_t t, int64_t i) const { return output(t, i) - pad; }
  /// Points of tile t with an output position below `out` (0 to 4, a prefix).
  int64_t valid(int64_t t) const;
};

/// The tiling of one axis: `out` outputs, dilation >= 1, leading padding `pad`.
WinogradAxis winograd_axis(int64_t out, int64_t dilation, int64_t pad);

/// The winograd weights U = G g G^T of packed conv weights [ceil(M/c), C, 3, 3, c]
/// (pack_conv_weights with block c): [36, ceil(M/c), C, c], point (i, j) of the 6x6 at
/// [i * 6 + j], output channel m at [.., m / c, .., m % c]; padded lanes stay 0. Computed
/// in double and rounded once. Throws InvalidArgument when `packed` is not float32
/// [Mb, C, 3, 3, c].
Tensor winograd_transform_weights(const Tensor& packed);

/// Computes output channels [oc_begin, oc_end) of one image like f32_fused_conv, by
/// F(4x4, 3x3): x in p.x_block's layout, u = winograd_transform_weights(...) with block
/// p.w_block, bias [M] or nullptr, z and y in p.y_block's layout; padded output channels
/// (oc >= M, up to fused_conv_padded_channels) are written 0. Requires
/// winograd_applicable(p). The sums differ from the direct convolution's by rounding only
/// (the transforms have coefficients up to 25, so the error bound is larger: see
/// tests/kernels/winograd_conv_test.cc).
void f32_winograd_conv(const FusedConvParams& p, const float* x, const float* u, const float* bias,
                       const float* z, float* y, int64_t oc_begin, int64_t oc_end);

}  // namespace tern::kernels::ref
