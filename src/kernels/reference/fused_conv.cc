#include "kernels/reference/fused_conv.h"

#include <algorithm>

#include "base/check.h"

namespace tern::kernels::ref {

namespace {

// Where the weights of one output channel keep (input channel ic, tap): at
// w_oc[ic * ic_step + tap * tap_step]. OIHW: taps adjacent; packed with block c: c apart;
// OHWI: input channels adjacent.
struct WeightSteps {
  int64_t ic_step, tap_step;
};

WeightSteps weight_steps(const FusedConvParams& p) {
  const int64_t taps = p.conv.kernel.size(), cg = p.conv.in_channels / p.conv.groups;
  if (p.w_ohwi) return {1, cg};
  return {taps * p.w_block, p.w_block};
}

// Output positions per accumulator chunk: a row of up to kChunk outputs is accumulated in
// a local array (1 KiB, in L1) over every input channel and tap, then goes through the
// epilogue once. This keeps the strided NCHWc accesses of y out of the inner loop.
constexpr int64_t kChunk = 256;

// acc[i] += sum over the taps (kd, kh, kw) and the input channels ch0 + ic (ic < cin) of
// w[ic * ws.ic_step + tap * ws.tap_step] * x[channel ch0 + ic at the position the tap of output
// (od, oh, ow0 + i) reads], for i in [0, n); taps that land in the padding are skipped.
// x: one input image, channel ch at x + (ch / xs) * xs * in_plane + ch % xs, element s of
// a channel at [s * xs]. Taps outermost, so each tap's valid range is computed once per
// row rather than once per input channel.
void accumulate_row(const ConvParams& c, int64_t od, int64_t oh, int64_t ow0, int64_t n,
                    const float* x, int64_t ch0, int64_t cin, int64_t xs, const float* w,
                    WeightSteps ws, float* acc) {
  const int64_t in_plane = c.in.size();
  const int64_t step = c.stride.w * xs;
  for (int64_t kd = 0; kd < c.kernel.d; ++kd) {
    const int64_t id = od * c.stride.d + kd * c.dilation.d - c.pad_begin.d;
    if (id < 0 || id >= c.in.d) continue;
    for (int64_t kh = 0; kh < c.kernel.h; ++kh) {
      const int64_t ih = oh * c.stride.h + kh * c.dilation.h - c.pad_begin.h;
      if (ih < 0 || ih >= c.in.h) continue;
      for (int64_t kw = 0; kw < c.kernel.w; ++kw) {
        const int64_t off = kw * c.dilation.w - c.pad_begin.w;
        const Range r = valid_range(c.out.w, c.stride.w, off, c.in.w);
        const int64_t begin = std::max(r.begin, ow0), end = std::min(r.end, ow0 + n);
        if (begin >= end) continue;
        const int64_t tap = (kd * c.kernel.h + kh) * c.kernel.w + kw;
        // Offset of the first input element this tap reads, within a channel.
        const int64_t first = ((id * c.in.h + ih) * c.in.w + begin * c.stride.w + off) * xs;
        float* a = acc + (begin - ow0);
        const int64_t len = end - begin;
        for (int64_t ic = 0; ic < cin; ++ic) {
          const int64_t ch = ch0 + ic;
          const float* xp = x + (ch / xs) * xs * in_plane + ch % xs + first;
          const float wv = w[ic * ws.ic_step + tap * ws.tap_step];
          for (int64_t i = 0; i < len; ++i) a[i] += wv * xp[i * step];
        }
      }
    }
  }
}

// Largest y block the whole-block path handles (its accumulator is kBlockChunk x c).
constexpr int64_t kMaxLanes = 16;
constexpr int64_t kBlockChunk = 32;

// The output channels of NCHWc block `ob` computed together, lanes innermost: when every
// lane reads the same input channel (one group spans the block) the input value is
// broadcast to the c lanes; for a depthwise conv on an NCHWc input with the same block,
// lane l reads lane l of the matching input block. The weights of the c lanes of one
// (input channel, tap) are adjacent when packed with block c, cg * taps apart in OIHW and
// OHWI.
// Sums in the order of the per-channel path (taps, then input channels), so both paths
// give the same floats. Returns false (nothing written) for other geometries.
bool block_of_channels(const FusedConvParams& p, const float* x, const float* w, const float* bias,
                       const float* z, float* y, int64_t ob) {
  const ConvParams& c = p.conv;
  const int64_t lanes = p.y_block, xs = p.x_block, wb = p.w_block;
  const int64_t cg = c.in_channels / c.groups, mg = c.out_channels / c.groups;
  const int64_t taps = c.kernel.size(), in_plane = c.in.size(), out_plane = c.out.size();
  const int64_t oc0 = ob * lanes;
  const int64_t used = std::min(lanes, c.out_channels - oc0);  // lanes with a channel
  const bool shared = c.groups == 1 || mg % lanes == 0;
  const bool depthwise = cg == 1 && mg == 1 && xs == lanes;
  if (lanes > kMaxLanes || used <= 0 || (!shared && !depthwise) || (wb != 1 && wb != lanes))
    return false;
  // Weight (oc0 + l, ic, tap) at w_blk[l * lane_step + ic * ws.ic_step + tap * ws.tap_step].
  const WeightSteps ws = weight_steps(p);
  const float* w_blk = w + ob * cg * taps * lanes;
  const int64_t lane_step = wb == 1 ? cg * taps : 1;
  const int64_t ch0 = shared ? oc0 / mg * cg : 0;
  float* y_blk = y + ob * lanes * out_plane;
  const float* z_blk = p.epilogue.residual ? z + ob * lanes * out_plane : nullptr;
  const int64_t step = c.stride.w;

  for (int64_t od = 0; od < c.out.d; ++od) {
    for (int64_t oh = 0; oh < c.out.h; ++oh) {
      const int64_t row = (od * c.out.h + oh) * c.out.w;
      for (int64_t ow0 = 0; ow0 < c.out.w; ow0 += kBlockChunk) {
        const int64_t n = std::min(kBlockChunk, c.out.w - ow0);
        float acc[kBlockChunk * kMaxLanes];  // [position][lane]
        for (int64_t i = 0; i < n; ++i)
          for (int64_t l = 0; l < lanes; ++l)
            acc[i * lanes + l] = l < used && bias ? bias[oc0 + l] : 0.0f;
        for (int64_t kd = 0; kd < c.kernel.d; ++kd) {
          const int64_t id = od * c.stride.d + kd * c.dilation.d - c.pad_begin.d;
          if (id < 0 || id >= c.in.d) continue;
          for (int64_t kh = 0; kh < c.kernel.h; ++kh) {
            const int64_t ih = oh * c.stride.h + kh * c.dilation.h - c.pad_begin.h;
            if (ih < 0 || ih >= c.in.h) continue;
            for (int64_t kw = 0; kw < c.kernel.w; ++kw) {
              const int64_t off = kw * c.dilation.w - c.pad_begin.w;
              const Range r = valid_range(c.out.w, step, off, c.in.w);
              const int64_t begin = std::max(r.begin, ow0), end = std::min(r.end, ow0 + n);
              if (begin >= end) continue;
              const int64_t tap = (kd * c.kernel.h + kh) * c.kernel.w + kw;
              // Spatial offset of the first input element this tap reads.
              const int64_t first = (id * c.in.h + ih) * c.in.w + begin * step + off;
              for (int64_t ic = 0; ic < cg; ++ic) {
                const float* wv = w_blk + ic * ws.ic_step + tap * ws.tap_step;
                float wl[kMaxLanes];
                for (int64_t l = 0; l < used; ++l) wl[l] = wv[l * lane_step];
                for (int64_t l = used; l < lanes; ++l) wl[l] = 0.0f;
                float* a = acc + (begin - ow0) * lanes;
                if (depthwise) {  // lane l reads lane l of input block ob
                  const float* xp = x + ob * lanes * in_plane + first * lanes;
                  for (int64_t o = 0; o < end - begin; ++o)
                    for (int64_t l = 0; l < lanes; ++l)
                      a[o * lanes + l] += wl[l] * xp[o * step * lanes + l];
                } else {
                  const int64_t ch = ch0 + ic;
                  const float* xp = x + (ch / xs) * xs * in_plane + ch % xs + first * xs;
                  for (int64_t o = 0; o < end - begin; ++o) {
                    const float xv = xp[o * step * xs];
                    for (int64_t l = 0; l < lanes; ++l) a[o * lanes + l] += wl[l] * xv;
                  }
                }
              }
            }
          }
        }
        const int64_t at = (row + ow0) * lanes;
        for (int64_t l = 0; l < used; ++l)
          f32_epilogue(p.epilogue, n, acc + l, lanes, nullptr, 0, z_blk ? z_blk + at + l : nullptr,
                       lanes, y_blk + at + l, lanes);
        for (int64_t i = 0; i < n; ++i)  // padded lanes
          for (int64_t l = used; l < lanes; ++l) y_blk[at + i * lanes + l] = 0.0f;
      }
    }
  }
  return true;
}

}  // namespace

void f32_fused_conv(const FusedConvParams& p, const float* x, const float* w, const float* bias,
                    const float* z, float* y, int64_t oc_begin, int64_t oc_end) {
  const ConvParams& c = p.conv;
  TERN_CHECK(p.x_plane == 0 && p.y_plane == 0, InvalidArgument,
             "the reference fused conv computes whole images: x_plane and y_plane must be 0, "
             "but got {} and {}",
             p.x_plane, p.y_plane);
  const int64_t out_plane = c.out.size();
  const int64_t taps = c.kernel.size();
  const int64_t cin_per_group = c.in_channels / c.groups;
  const int64_t cout_per_group = c.out_channels / c.groups;
  const int64_t xs = p.x_block, ys = p.y_block, wb = p.w_block;

  if (xs == 1 && ys == 1 && wb == 1 && !p.y_nhwc && !p.w_ohwi) {
    // All plain: the NCHW kernel (four input channels per pass), then the epilogue.
    for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
      f32_conv_nchw(c, x, w, bias, y, oc, oc + 1);
      float* yc = y + oc * out_plane;
      const float* zc = p.epilogue.residual ? z + oc * out_plane : nullptr;
      f32_epilogue(p.epilogue, out_plane, yc, 1, nullptr, 0, zc, 1, yc, 1);
    }
    return;
  }

  for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
    // A whole NCHWc block at once where the geometry allows it.
    if (ys > 1 && oc % ys == 0 && oc + ys <= oc_end &&
        block_of_channels(p, x, w, bias, z, y, oc / ys)) {
      oc += ys - 1;
      continue;
    }
    // Channel oc of y: element s (a row-major spatial offset) at yc[s * y_step].
    const int64_t y_step = p.y_nhwc ? c.out_channels : ys;
    float* yc = p.y_nhwc ? y + oc : y + (oc / ys) * ys * out_plane + oc % ys;
    if (oc >= c.out_channels) {  // a padded lane of an NCHWc output
      for (int64_t s = 0; s < out_plane; ++s) yc[s * ys] = 0.0f;
      continue;
    }
    const float* zc = p.epilogue.residual ? z + (yc - y) : nullptr;
    const float b = bias ? bias[oc] : 0.0f;
    const int64_t group = oc / cout_per_group;
    // Weight (oc, ic, tap) at w_oc[ic * ws.ic_step + tap * ws.tap_step].
    const float* w_oc = w + (oc / wb) * cin_per_group * taps * wb + oc % wb;
    const WeightSteps ws = weight_steps(p);
    for (int64_t od = 0; od < c.out.d; ++od) {
      for (int64_t oh = 0; oh < c.out.h; ++oh) {
        const int64_t row = (od * c.out.h + oh) * c.out.w;
        for (int64_t ow0 = 0; ow0 < c.out.w; ow0 += kChunk) {
          const int64_t n = std::min(kChunk, c.out.w - ow0);
          float acc[kChunk];
          std::fill(acc, acc + n, b);
          accumulate_row(c, od, oh, ow0, n, x, group * cin_per_group, cin_per_group, xs, w_oc, ws,
                         acc);
          const int64_t at = (row + ow0) * y_step;
          f32_epilogue(p.epilogue, n, acc, 1, nullptr, 0, zc ? zc + at : nullptr, y_step, yc + at,
                       y_step);
        }
      }
    }
  }
}

Tensor pack_conv_weights(const Tensor& oihw, int block) {
  TERN_CHECK(oihw.dtype() == DType::kFloat32 && oihw.rank() >= 3 && block >= 1, InvalidArgument,
             "pack_conv_weights: expected float32 weights [M, C/g, k...] and block >= 1, but "
             "got {} {} and block {}",
             dtype_name(oihw.dtype()), shape_str(oihw.shape()), block);
  const Tensor src = oihw.contiguous();
  const int64_t m = src.dim(0);
  const int64_t inner = src.numel() / std::max<int64_t>(m, 1);  // C/g * taps
  const int64_t blocks = (m + block - 1) / block;
  Shape shape = src.shape();
  shape[0] = blocks;
  shape.push_back(block);
  Tensor packed = Tensor::zeros(DType::kFloat32, shape);
  const float* s = src.data<float>();
  float* d = packed.data<float>();
  for (int64_t oc = 0; oc < m; ++oc) {
    float* dst = d + (oc / block) * inner * block + oc % block;
    for (int64_t i = 0; i < inner; ++i) dst[i * block] = s[oc * inner + i];
  }
  return packed;
}

Tensor ohwi_conv_weights(const Tensor& oihw) {
  TERN_CHECK(oihw.dtype() == DType::kFloat32 && oihw.rank() >= 3, InvalidArgument,
             "ohwi_conv_weights: expected float32 weights [M, C/g, k...], but got {} {}",
             dtype_name(oihw.dtype()), shape_str(oihw.shape()));
  const Tensor src = oihw.contiguous();
  const int64_t m = src.dim(0), cg = src.dim(1);
  const int64_t taps = src.numel() / std::max<int64_t>(m * cg, 1);
  const Shape oihw_shape = src.shape();
  Shape shape = {m};
  shape.insert(shape.end(), oihw_shape.begin() + 2, oihw_shape.end());  // k...
  shape.push_back(cg);
  Tensor out = Tensor::empty(DType::kFloat32, shape);
  const float* s = src.data<float>();
  float* d = out.data<float>();
  for (int64_t oc = 0; oc < m; ++oc)
    for (int64_t ic = 0; ic < cg; ++ic)
      for (int64_t t = 0; t < taps; ++t)
        d[(oc * taps + t) * cg + ic] = s[(oc * cg + ic) * taps + t];
  return out;
}

}  // namespace tern::kernels::ref
