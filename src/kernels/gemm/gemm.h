// Register-blocked matrix multiply (Highway, dispatched at run time): the kernel of Gemm,
// MatMul, FusedGemm and FusedMatMul, and of FusedConv's `gemm` algorithm (a 1x1 conv
// from NCHW to NCHW is W [M, C] x X [C, H*W]; a k x k stride-1 conv is the implicit GEMM
// W [M, C*kH*kW] x (X shifted by each tap)). See README.md in this folder.
#pragma once

#include <cstdint>

#include "kernels/reference/epilogue.h"
#include "kernels/reference/fused_conv.h"
#include "kernels/reference/gemm.h"
#include "kernels/work_grid.h"

namespace tern::kernels {

/// What f32_gemm adds besides alpha * (A B)[i, j] and beta * y[i, j]: a per-row bias (a
/// conv's output channel; it starts the accumulator, so alpha would scale it: only with
/// alpha = 1), then the epilogue (residual z[i, j] at z + i * ldy + j, activation). Every
/// field is optional.
struct GemmOutput {
  const ref::Epilogue* e = nullptr;  ///< nullptr: no residual, no activation
  const float* row_bias = nullptr;   ///< [M] or nullptr
  const float* z = nullptr;          ///< [M, N] with Y's ldy; read only when e->residual
};

/// Whether f32_gemm computes `p`: B stored as [K, N] (no trans_b; pack-weights transposes
/// a constant B^T once at plan time), any A layout.
bool gemm_supported(const ref::GemmParams& p);

/// Work items of one product: a grid of chunks of rows (outer) x panels of columns
/// (inner), row-chunk major. f32_gemm computes any sub-range of [0, items()), so callers
/// split it across threads; a 1-row product (a fully connected layer on one image) still
/// has one item per panel of columns, and a 1x1 conv's panels are regions of its image
/// (ops::parallel_grid's spatial split).
WorkGrid gemm_work(const ref::GemmParams& p);

/// y = epilogue(alpha * op(A) B + beta * y + row_bias) (row_bias only with alpha = 1)
/// for items [begin, end) of
/// gemm_work(p) (layouts: ref::GemmParams; y must not overlap A, B or z). A tile holds R
/// rows x V vectors of columns in registers over all of K (AVX-512 and NEON 6 x 4, AVX2
/// and SSE4 4 x 3): per k it loads V vectors of B's row k and broadcasts R elements of A.
/// A panel's columns are taken one tile width at a time, so the K x (V lanes) strip of B
/// stays in L1 or L2 while every row tile of the chunk reads it. Columns past the last
/// whole vector run the same tile on a zero-padded copy of B's tail. Requires
/// gemm_supported(p).
void f32_gemm(const ref::GemmParams& p, const float* a, const float* b, float* y,
              const GemmOutput& out, int64_t begin, int64_t end);

/// Whether f32_conv_gemm computes `p`: a 2-D (or 1-D) conv with stride 1 and one group
/// from NCHW to NCHW on OIHW weights; any kernel size, padding and dilation (a 3-D one
/// only when its depth is 1, without depth padding).
bool conv_gemm_supported(const ref::FusedConvParams& p);

/// Bands of output rows per image that f32_conv_gemm aims for (ops::parallel_grid's
/// spatial split wants 8 per thread at 2 threads).
inline constexpr int64_t kConvGemmBandsPerImage = 16;

/// Work items of one image of f32_conv_gemm: chunks of 48 (AVX2, SSE4: 32) output
/// channels (outer) x bands of output rows (inner): about kConvGemmBandsPerImage, fewer
/// where a band must hold a tile's worth of vectors (rows narrower than a tile), more
/// where a band's input rows would pass 256 KiB.
WorkGrid conv_gemm_work(const ref::FusedConvParams& p);

/// Items [begin, end) of conv_gemm_work(p) of one image: y = epilogue(conv(x, w) + bias,
/// z), the conv as an implicit GEMM (the GEMM of the im2col lowering without building its
/// matrix, as cuDNN's IMPLICIT_GEMM: Chetlur et al., "cuDNN: Efficient Primitives for Deep
/// Learning", 2014): Y [M, OH * OW] = W [M, C * kH * kW]
/// x B, where B's row (c, kh, kw) is input plane c shifted by that tap, with the pixels
/// along the vectors (every lane holds an output whatever M is: ppocr's 96 -> 24 3x3
/// convs). Each item copies its band's input rows, zero-padded for the conv's padding and
/// to whole vectors, into a per-thread buffer ([C, band rows + (kH - 1) * dilation,
/// OW rounded up to vectors + (kW - 1) * dilation]); the register tiles of f32_gemm then
/// read every tap as a plain vector load, and a row's last, partial vector is stored
/// lane-exact. Each item copies its band (a call's consecutive items are different bands);
/// with more output channels than a chunk, each chunk copies the band again. The tiles take
/// K in cache passes of input channels, and read w packed per call and chunk into row tiles
/// (a per-thread buffer of up to 48 x C * kH * kW floats). x: [C, H, W]; w: [M,
/// C, kH, kW]; bias: [M] or nullptr; z, y: [M, OH, OW] (z read when p.epilogue.residual). Requires
/// conv_gemm_supported(p).
void f32_conv_gemm(const ref::FusedConvParams& p, const float* x, const float* w, const float* bias,
                   const float* z, float* y, int64_t begin, int64_t end);

}  // namespace tern::kernels
