// The register tiles of the NCHWc GEMM-like loops (kernels/direct, kernels/winograd): a
// tile is B output-channel blocks x R pixels (or Winograd tiles), B * R accumulator
// vectors kept in registers over the whole reduction, fed by B weight loads and R
// broadcasts per input channel.
//   - AVX-512 (Sapphire Rapids): FMA latency 4 cycles, 2 FMAs per cycle, so at least 8
//     independent accumulators keep both FMA ports busy; 32 zmm registers leave room for
//     24 accumulators + B weight vectors + 1 broadcast input. Tiles: 4x6, 3x8, 2x12, 1x12.
//     More output blocks per tile means fewer loads per FMA (B + R loads feed B * R FMAs).
//   - NEON (Cortex-A72): FMLA latency 7 (4 when chained into the accumulator), 2 per
//     cycle: 8 to 14 independent accumulators are needed; 32 q registers: the same tiles
//     as AVX-512 (the paper's 2 rows x 4 pixels is 8 accumulators with c = 4 lanes).
//   - AVX2 and SSE4: FMA latency 4 (Zen, Skylake; 5 on Haswell), 2 per cycle, so 8 to 10
//     accumulators; 16 registers: at most 12 accumulators + B weights + 1 broadcast.
//     Tiles: 3x4, 2x6, 1x12, and on AVX2 4x3 too (17 vectors: the compiler folds the
//     fourth block's weight load into its FMAs as a memory operand). AMD Zen 4 issues
//     about one 256-bit broadcast per cycle, so the tiles with fewer broadcasts per FMA
//     run faster: in a harness of 64 input channels in L1, 1x12, 2x6, 3x4 and 4x3 reached
//     65, 79, 99 and 104 GFLOP/s against AVX-512's 4x6 at 108 to 113 (best of 5 runs on a
//     noisy host). With 4x3, AVX2's chunks of 4 blocks (32 output channels) are one chunk
//     instead of 2 + 2 in 2x6 tiles (not for an NCHW input, whose 4x3 tile with unrolled
//     taps spilled: kernels/direct's resolve); UltraFace RFB-320 and RetinaFace 640 under
//     TERN_SIMD_TARGET=AVX2 took 0.95 to 0.97 of their time (medians of 6 alternated
//     `tern bench` runs, with the dot kernel's AVX2 rule). SSE4 (no FMA, so a multiply and
//     an add with a temporary) keeps 3 blocks.
//
// Per-target header: include it after hwy/highway.h inside a foreach_target translation
// unit (the include guard toggles with HWY_TARGET_TOGGLE, as Highway's -inl.h headers do).
#if defined(TERN_KERNELS_SIMD_REGISTER_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TERN_KERNELS_SIMD_REGISTER_TILE_INL_H_
#undef TERN_KERNELS_SIMD_REGISTER_TILE_INL_H_
#else
#define TERN_KERNELS_SIMD_REGISTER_TILE_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX2
/// Output-channel blocks per register tile at most.
inline constexpr int kTileMaxBlocks = 4;
/// Pixels (R) of a register tile of B output blocks at most.
template <int B>
inline constexpr int kTileMaxPixels = B == 1   ? 12
                                      : B == 2 ? 6
                                      : B == 3 ? 4
                                               : 3;
/// Vector registers of the target.
inline constexpr int kVectorRegisters = 16;
#elif HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline constexpr int kTileMaxBlocks = 3;
template <int B>
inline constexpr int kTileMaxPixels = B == 1   ? 12
                                      : B == 2 ? 6
                                               : 4;
inline constexpr int kVectorRegisters = 16;
#else
inline constexpr int kTileMaxBlocks = 4;
template <int B>
inline constexpr int kTileMaxPixels = B == 1 ? 12 : B == 2 ? 12 : B == 3 ? 8 : 6;
// AVX-512 and AArch64's NEON: 32 registers. Also EMU128 and the scalar target, whose
// "vectors" are arrays: there the counts only shape the loops (the scalar target runs
// no tile).
inline constexpr int kVectorRegisters = 32;
#endif

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
