// Winograd F(4x4, 3x3) on NCHWc; see winograd_conv.h and README.md.
//
// One work item is a group of up to kTiles 4x4 output tiles (and a chunk of output
// blocks), in three steps that keep the data
// of one step in L1/L2 (the paper's tile-by-tile flow, with the GEMM batched over tiles):
//   1. input transform: for each tile and input block, the 6x6 patch of c-channel vectors
//      (positions outside the image are zero vectors, so no padded copy exists) becomes
//      B^T d B, stored as V[point][input block][tile][c];
//   2. for each of the 36 points, a GEMM: M[tile][output block][point] = sum over the
//      input channels of V (broadcast) * U (c output channels): the register tile of the
//      direct kernel (B output blocks x R tiles; AVX-512/NEON 4x6, 3x8, 2x12, 1x12;
//      AVX2 4x3, 3x4, 2x6, 1x12; derivation in kernels/simd/register_tile-inl.h). The R
//      broadcasts of one channel are c floats apart (compile-time offsets). Per point the
//      weights of a chunk (B * C vectors) and V (C * kTiles floats) stay in L1;
//   3. output transform: A^T m A of each tile and output block, plus the bias, residual
//      and activation in registers, then the one store per output pixel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/winograd/winograd_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target re-includes this file once per target; these follow it.
#include <new>

#include "hwy/aligned_allocator.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/reference/winograd.h"
#include "kernels/simd/epilogue-inl.h"
#include "kernels/simd/register_tile-inl.h"
#include "kernels/winograd/winograd_conv.h"

HWY_BEFORE_NAMESPACE();
namespace tern::kernels::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

static_assert(!HWY_HAVE_SCALABLE, "tern's NCHWc kernels need a fixed vector width");


// Tiles per group at most (the workspace's size): a multiple of every register tile's R
// (so only an image's last group has a remainder), and small enough that V and M of one
// group stay in L2.
constexpr int64_t kTiles = kWinogradGroupTiles;
constexpr int64_t kPoints = ref::kWinogradPoints;

// One convolution, one image.
struct Wino {
  const float* x;
  const float* u;
  const float* bias;
  OutputTarget out;
  int64_t c, cin, cblocks, mblocks;
  int64_t h, w, oh, ow;
  ref::WinogradAxis ah, aw;  // where the tiles lie along H and W (dilation d: outputs d apart)
  int64_t tiles;
};

Wino resolve(const ref::FusedConvParams& p, const float* x, const float* u, const float* bias,
             const float* z, float* y) {
  const ref::ConvParams& cp = p.conv;
  Wino k;
  k.x = x;
  k.u = u;
  k.bias = bias;
  k.out = output_target(p, z, y);
  k.c = p.w_block;
  k.cin = cp.in_channels;
  k.cblocks = (cp.in_channels + k.c - 1) / k.c;
  k.mblocks = (cp.out_channels + k.c - 1) / k.c;
  k.h = cp.in.h;
  k.w = cp.in.w;
  k.oh = cp.out.h;
  k.ow = cp.out.w;
  k.ah = ref::winograd_axis(k.oh, cp.dilation.h, cp.pad_begin.h);
  k.aw = ref::winograd_axis(k.ow, cp.dilation.w, cp.pad_begin.w);
  k.tiles = k.ah.tiles * k.aw.tiles;
  return k;
}

// Floats of one item's workspace: V [36][cblocks][kTiles][c] then M [kTiles][mblocks][36][c].
int64_t workspace_floats(const Wino& k) { return kPoints * kTiles * (k.cblocks + k.mblocks) * k.c; }

// B^T d of six vectors (one column or row of the patch), as add/sub/FMA chains.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void InputTransform6(D d, const V (&i)[6], V (&o)[6]) {
  const V two = hn::Set(d, 2.0f), four = hn::Set(d, 4.0f), five = hn::Set(d, 5.0f);
  const V t = hn::NegMulAdd(four, i[2], i[4]);  // d4 - 4 d2
  const V s = hn::NegMulAdd(four, i[1], i[3]);  // d3 - 4 d1
  const V t2 = hn::Sub(i[4], i[2]);
  const V s2 = hn::Mul(two, hn::Sub(i[3], i[1]));
  o[0] = hn::MulAdd(four, i[0], hn::NegMulAdd(five, i[2], i[4]));
  o[1] = hn::Add(t, s);
  o[2] = hn::Sub(t, s);
  o[3] = hn::Add(t2, s2);
  o[4] = hn::Sub(t2, s2);
  o[5] = hn::MulAdd(four, i[1], hn::NegMulAdd(five, i[3], i[5]));
}

// A^T m of six vectors.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void OutputTransform6(D d, const V (&m)[6], V (&o)[4]) {
  const V a = hn::Add(m[1], m[2]), b = hn::Sub(m[1], m[2]);
  const V c = hn::Add(m[3], m[4]), e = hn::Sub(m[3], m[4]);
  o[0] = hn::Add(hn::Add(m[0], a), c);
  o[1] = hn::MulAdd(hn::Set(d, 2.0f), e, b);
  o[2] = hn::MulAdd(hn::Set(d, 4.0f), c, a);
  o[3] = hn::Add(hn::MulAdd(hn::Set(d, 8.0f), e, b), m[5]);
}

// Step 1 for tiles [t0, t0 + n) of the image into v. Input block by input block, and
// within a block tile by tile, so that a tile's stores go to the lines right after the
// previous tile's in each point's V (36 streams; tile-major order interleaved the blocks:
// 36 x cblocks) and its patch overlaps the previous tile's; the columns a later tile adds
// are prefetched, the input plane being larger than L1 (80 x 80 x 16 floats on RetinaFace
// 640). Measured in README.md ("How it computes").
void TransformInput(const Wino& k, int64_t t0, int64_t n, float* v) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t c = k.c;
  const int64_t dh = k.ah.dilation, dw = k.aw.dilation;  // patch points' spacing
  const int64_t point_stride = k.cblocks * kTiles * c;   // floats between two points' V
  for (int64_t cb = 0; cb < k.cblocks; ++cb) {
    const float* xb = k.x + cb * k.h * k.w * c;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t th = (t0 + t) / k.aw.tiles, tw = (t0 + t) % k.aw.tiles;
      const int64_t r0 = k.ah.input(th, 0), c0 = k.aw.input(tw, 0);
      const bool inside = r0 >= 0 && r0 + 5 * dh < k.h && c0 >= 0 && c0 + 5 * dw < k.w;
      float* vt = v + (cb * kTiles + t) * c;
      if (inside && c0 + 9 * dw < k.w) {
        // The 4 columns after the patch: the new ones of tile t + dw, the next of this
        // phase (tiles run phase-fastest, ref::WinogradAxis: 4 outputs on, dw apart).
        const float* xp = xb + (r0 * k.w + c0 + 6 * dw) * c;
        for (int i = 0; i < 6; ++i) {
          for (int j = 0; j < 4; ++j) hwy::Prefetch(xp + (i * dh * k.w + j * dw) * c);
        }
      }
      V rows[6][6];  // B^T d: rows[i][j]
      HWY_UNROLL(6) for (int j = 0; j < 6; ++j) {
        V col[6], out[6];
        const int64_t cc = c0 + j * dw;
        if (inside) {
          const float* xc = xb + (r0 * k.w + cc) * c;
          HWY_UNROLL(6) for (int i = 0; i < 6; ++i) col[i] = hn::LoadU(d, xc + i * dh * k.w * c);
        } else {
          HWY_UNROLL(6) for (int i = 0; i < 6; ++i) {
            const int64_t r = r0 + i * dh;
            col[i] = r >= 0 && r < k.h && cc >= 0 && cc < k.w
                         ? hn::LoadU(d, xb + (r * k.w + cc) * c)
                         : hn::Zero(d);
          }
        }
        InputTransform6(d, col, out);
        HWY_UNROLL(6) for (int i = 0; i < 6; ++i) rows[i][j] = out[i];
      }
      HWY_UNROLL(6) for (int i = 0; i < 6; ++i) {
        V out[6];
        InputTransform6(d, rows[i], out);
        HWY_UNROLL(6) for (int j = 0; j < 6; ++j) {
          hn::StoreU(out[j], d, vt + (i * 6 + j) * point_stride);
        }
      }
    }
  }
}

// Step 2 for one point: B output blocks from ob0 x R tiles from t0.
// v: V of the point at tile t0 ([cblocks][kTiles][c]); u: U of the point at block ob0
// ([mblocks][C][c]); m: M at (t0, ob0, point).
template <int B, int R>
HWY_NOINLINE void GemmTile(const Wino& k, const float* v, const float* u, float* m) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int64_t c = static_cast<int64_t>(hn::MaxLanes(d));
  // HWY_UNROLL on every loop over acc, as in kernels/direct's TileImpl: without it GCC kept
  // acc on the stack outside the FMA loop (AVX2's 2 x 6 tile: 12 vector stores to start
  // the sums, 18.7 % of the tile's samples on stack accesses in UltraFace RFB 640, Zen 3).
  V acc[B][R];
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) acc[b][r] = hn::Zero(d);
  }
  const int64_t u_ob = k.cin * c;  // floats between two output blocks' weights
  for (int64_t cb = 0; cb < k.cblocks; ++cb) {
    const float* vs = v + cb * kTiles * c;
    const float* us = u + cb * c * c;
    const int64_t n = std::min(c, k.cin - cb * c);
    for (int64_t l = 0; l < n; ++l, ++vs, us += c) {
      V wv[B];
      HWY_UNROLL(16) for (int b = 0; b < B; ++b) wv[b] = hn::LoadU(d, us + b * u_ob);
      HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
        const V xv = hn::Set(d, vs[r * c]);
        HWY_UNROLL(16) for (int b = 0; b < B; ++b) acc[b][r] = hn::MulAdd(wv[b], xv, acc[b][r]);
      }
    }
  }
  HWY_UNROLL(16) for (int b = 0; b < B; ++b) {
    HWY_UNROLL(16) for (int r = 0; r < R; ++r) {
      hn::StoreU(acc[b][r], d, m + (r * k.mblocks + b) * kPoints * c);
    }
  }
}

// GemmTile<B, r> for a run-time r in [1, kTileMaxPixels<B>].
template <int B, int R = 1>
HWY_INLINE void GemmTileN(int64_t r, const Wino& k, const float* v, const float* u, float* m) {
  if constexpr (R <= kTileMaxPixels<B>) {
    if (r == R) return GemmTile<B, R>(k, v, u, m);
    GemmTileN<B, R + 1>(r, k, v, u, m);
  }
}

// Step 2 for all points, output blocks [ob0, ob0 + B), tiles [0, n).
template <int B>
void Gemm(const Wino& k, int64_t ob0, int64_t n, const float* v, float* m) {
  const int64_t c = k.c;
  constexpr int64_t kR = kTileMaxPixels<B>;
  for (int64_t pt = 0; pt < kPoints; ++pt) {
    const float* vp = v + pt * k.cblocks * kTiles * c;
    const float* up = k.u + ((pt * k.mblocks + ob0) * k.cin) * c;
    float* mp = m + (ob0 * kPoints + pt) * c;
    const int64_t m_tile = k.mblocks * kPoints * c;
    int64_t t = 0;
    for (; t + kR <= n; t += kR) GemmTile<B, kR>(k, vp + t * c, up, mp + t * m_tile);
    if (t < n) GemmTileN<B>(n - t, k, vp + t * c, up, mp + t * m_tile);
  }
}

template <int B = 1>
void GemmN(int64_t blocks, const Wino& k, int64_t ob0, int64_t n, const float* v, float* m) {
  if constexpr (B <= kTileMaxBlocks) {
    if (blocks == B) return Gemm<B>(k, ob0, n, v, m);
    GemmN<B + 1>(blocks, k, ob0, n, v, m);
  }
}

// Step 3 for tiles [t0, t0 + n) and output blocks [ob0, ob1) from m, with activation A
// (kNone with kGeneral: StoreOutput's path for any y layout and activation).
// The loops over the tile's vectors are unrolled (HWY_UNROLL) so that GCC keeps the 24
// vectors of A^T m in registers (on targets with 32), and the activation is chosen once
// per call, not per vector: with StoreOutput per vector and the vectors on the stack, the
// transform took 19 % of SqueezeNet's winograd layers' time in conv_bench (perf), the
// GEMM 55 %. Block by block, and tile by tile within a block: each tile's rows continue
// the previous tile's in one output plane (tile-major order wrote to every block's plane
// in turn; measured in README.md).
template <ref::Activation A, bool kGeneral>
HWY_NOINLINE void TransformOutputAs(const Wino& k, int64_t t0, int64_t n, int64_t ob0, int64_t ob1,
                                    const float* m) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t c = k.c;
  const ref::Epilogue e = *k.out.e;  // a copy: the stores below may alias anything
  float* const y = k.out.y;
  const float* const z = k.out.z;
  const int64_t plane = k.out.plane;
  const int64_t row_step = k.ah.dilation * k.ow, col_step = k.aw.dilation;
  for (int64_t ob = ob0; ob < ob1; ++ob) {
    for (int64_t t = 0; t < n; ++t) {
      const int64_t th = (t0 + t) / k.aw.tiles, tw = (t0 + t) % k.aw.tiles;
      const int64_t rows = k.ah.valid(th), cols = k.aw.valid(tw);
      const int64_t pix0 = k.ah.output(th, 0) * k.ow + k.aw.output(tw, 0);
      const float* mp = m + (t * k.mblocks + ob) * kPoints * c;
      const V bias = LoadBias(d, k.bias, k.out.channels, ob);
      const int64_t valid = k.out.channels - ob * c;
      V part[4][6];  // A^T m: part[i][j]
      HWY_UNROLL(6) for (int j = 0; j < 6; ++j) {
        V col[6], out[4];
        HWY_UNROLL(6) for (int i = 0; i < 6; ++i) col[i] = hn::LoadU(d, mp + (i * 6 + j) * c);
        OutputTransform6(d, col, out);
        HWY_UNROLL(4) for (int i = 0; i < 4; ++i) part[i][j] = out[i];
      }
      HWY_UNROLL(4) for (int i = 0; i < 4; ++i) {
        if (i == rows) break;
        V out[4];
        OutputTransform6(d, part[i], out);
        const int64_t pix = pix0 + i * row_step;
        HWY_UNROLL(4) for (int j = 0; j < 4; ++j) {
          if (j == cols) break;
          V v = hn::Add(out[j], bias);
          if constexpr (kGeneral) {
            StoreOutput(d, k.out, ob, pix + j * col_step, v);
          } else {
            const int64_t off = (ob * plane + pix + j * col_step) * c;
            hn::StoreU(FinishAs<A>(d, e, v, e.residual ? z + off : z, valid), d, y + off);
          }
        }
      }
    }
  }
}

// Step 3: TransformOutputAs for y's layout and activation.
void TransformOutput(const Wino& k, int64_t t0, int64_t n, int64_t ob0, int64_t ob1,
                     const float* m) {
  if (k.out.y_block != k.c || needs_scalar_activation(*k.out.e)) {
    return TransformOutputAs<ref::Activation::kNone, true>(k, t0, n, ob0, ob1, m);
  }
  WithActivation(k.out.e->activation, [&](auto a) HWY_ATTR {
    TransformOutputAs<decltype(a)::value, false>(k, t0, n, ob0, ob1, m);
  });
}

}  // namespace

bool WinogradSupported(const ref::FusedConvParams& p) {
  const hn::ScalableTag<float> d;
  const int64_t c = static_cast<int64_t>(hn::Lanes(d));
  if (c < 4 || p.w_block != c || p.x_block != c) return false;
  if (p.y_block != 1 && p.y_block != c) return false;
  if (p.y_nhwc) return false;  // NHWC output: the direct kernel and the reference
  return ref::winograd_applicable(p);
}

// Output-block chunks per tile group (one work item each).
int64_t chunks(const Wino& k) { return (k.mblocks + kTileMaxBlocks - 1) / kTileMaxBlocks; }

WorkGrid WinogradWork(const ref::FusedConvParams& p, int64_t group_tiles) {
  HWY_ASSERT(group_tiles >= 1 && group_tiles <= kTiles);
  const Wino k = resolve(p, nullptr, nullptr, nullptr, nullptr, nullptr);
  return {1, (k.tiles + group_tiles - 1) / group_tiles * chunks(k)};
}

int64_t WinogradGroupTiles(const ref::FusedConvParams& p, int threads) {
  if (threads <= 1) return kTiles;
  const Wino k = resolve(p, nullptr, nullptr, nullptr, nullptr, nullptr);
  for (int64_t g : {kTiles, kTiles / 2}) {
    if ((k.tiles + g - 1) / g * chunks(k) >= 2 * int64_t{threads}) return g;
  }
  return kTiles / 4;
}

int64_t WinogradWorkspaceBytes(const ref::FusedConvParams& p) {
  return workspace_floats(resolve(p, nullptr, nullptr, nullptr, nullptr, nullptr)) *
         int64_t{sizeof(float)};
}

void WinogradConv(const ref::FusedConvParams& p, const float* x, const float* u, const float* bias,
                  const float* z, float* y, int64_t group_tiles, int64_t begin, int64_t end) {
  // The caller checked winograd_conv_supported on this target (see DirectConv).
  HWY_ASSERT(hn::Lanes(hn::ScalableTag<float>()) == static_cast<size_t>(p.w_block));
  HWY_ASSERT(group_tiles >= 1 && group_tiles <= kTiles);
  const Wino k = resolve(p, x, u, bias, z, y);
  // One workspace per thread, grown to the largest layer and kept: the plan's threads
  // are tern's persistent pool (base/thread_pool.h).
  // V and M start on a cache line (Highway's 64-byte alignment), so that each vector store
  // of the transforms writes one line: from a std::vector's 16-byte alignment, every one
  // of them wrote two.
  thread_local hwy::AlignedFreeUniquePtr<float[]> workspace;
  thread_local int64_t capacity = 0;
  const int64_t floats = workspace_floats(k);
  if (capacity < floats) {
    capacity = 0;  // the old buffer goes first
    workspace = hwy::AllocateAligned<float>(static_cast<size_t>(floats));
    if (workspace == nullptr) throw std::bad_alloc();
    capacity = floats;
  }
  float* v = workspace.get();
  float* m = v + kPoints * kTiles * k.cblocks * k.c;
  // Items are (tile group, chunk of output blocks), group major: a thread's consecutive
  // items of one group share its input transform, done once.
  const int64_t per_group = chunks(k);
  int64_t transformed = -1;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t group = item / per_group;
    const int64_t t0 = group * group_tiles;
    const int64_t n = std::min(group_tiles, k.tiles - t0);
    if (group != transformed) {
      TransformInput(k, t0, n, v);
      transformed = group;
    }
    const int64_t ob = item % per_group * kTileMaxBlocks;
    const int64_t blocks = std::min<int64_t>(kTileMaxBlocks, k.mblocks - ob);
    GemmN(blocks, k, ob, n, v, m);
    TransformOutput(k, t0, n, ob, ob + blocks, m);
  }
}

}  // namespace tern::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "base/cpu.h"

namespace tern::kernels {

HWY_EXPORT(WinogradSupported);
HWY_EXPORT(WinogradWork);
HWY_EXPORT(WinogradGroupTiles);
HWY_EXPORT(WinogradWorkspaceBytes);
HWY_EXPORT(WinogradConv);

bool winograd_conv_supported(const ref::FusedConvParams& p) {
  apply_simd_target_env();
  return HWY_DYNAMIC_DISPATCH(WinogradSupported)(p);
}

bool winograd_conv_preferred(const ref::FusedConvParams& p) {
  if (!winograd_conv_supported(p) || p.conv.in_channels < kWinogradMinChannels ||
      p.conv.out_channels < kWinogradMinChannels) {
    return false;
  }
  // An NCHW output (a detection head, which the dot or the direct kernel writes NHWC for
  // the Transpose after it: fuse-transpose) takes winograd from kWinogradMinHeadChannels
  // output channels only, whatever the block (README.md).
  if (p.y_block != p.w_block && p.conv.out_channels < kWinogradMinHeadChannels) return false;
  // The tiles the layer runs (ref::WinogradAxis: a dilated axis's phases each round up to
  // whole tiles). A dilated layer computing more than twice its outputs (an 8x8 output
  // at dilation 5 runs 5 x 5 tiles: 400 positions, more multiplications than direct's)
  // stays on direct.
  const ref::ConvParams& cp = p.conv;
  const int64_t tiles = ref::winograd_axis(cp.out.h, cp.dilation.h, cp.pad_begin.h).tiles *
                        ref::winograd_axis(cp.out.w, cp.dilation.w, cp.pad_begin.w).tiles;
  const bool dilated = cp.dilation.h > 1 || cp.dilation.w > 1;
  if (dilated && tiles * ref::kWinogradTile * ref::kWinogradTile > 2 * cp.out.h * cp.out.w) {
    return false;
  }
  // Each transformed weight (36 per 3x3 filter, 4x the direct kernel's bytes) serves every
  // 4x4 tile once: 2 FLOP per 4 bytes per tile. Weights past L2 stream from L3 or DRAM on
  // every run; with fewer than 12 tiles the layer then waits on memory and gains little
  // from a second thread (ResNet-18's layer4: README.md, "When it is chosen").
  // Winograd is applicable only with groups == 1.
  const int64_t padded_out = (p.conv.out_channels + p.w_block - 1) / p.w_block * p.w_block;
  const int64_t weight_bytes = 36 * p.conv.in_channels * padded_out * int64_t{sizeof(float)};
  return tiles >= kWinogradMinStreamedTiles || weight_bytes <= kWinogradCachedWeightBytes;
}

WorkGrid winograd_conv_work(const ref::FusedConvParams& p, int64_t group_tiles) {
  return HWY_DYNAMIC_DISPATCH(WinogradWork)(p, group_tiles);
}

int64_t winograd_group_tiles(const ref::FusedConvParams& p, int threads) {
  return HWY_DYNAMIC_DISPATCH(WinogradGroupTiles)(p, threads);
}

int64_t winograd_conv_workspace_bytes(const ref::FusedConvParams& p) {
  return HWY_DYNAMIC_DISPATCH(WinogradWorkspaceBytes)(p);
}

void f32_winograd_conv(const ref::FusedConvParams& p, const float* x, const float* u,
                       const float* bias, const float* z, float* y, int64_t group_tiles,
                       int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(WinogradConv)(p, x, u, bias, z, y, group_tiles, begin, end);
}

}  // namespace tern::kernels
#endif  // HWY_ONCE
