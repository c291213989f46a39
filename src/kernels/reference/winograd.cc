#include "kernels/reference/winograd.h"

#include <algorithm>
#include <vector>

#include "base/check.h"

namespace tern::kernels::ref {

namespace {

constexpr int64_t kP = kWinogradPatch;

// out[i][j] = sum_k sum_l L[i][k] in[k][l] R[j][l] for L (rows x 6) and R (cols x 6), in
// float, skipping zero coefficients: the left product first, then the right one.
template <int64_t Rows, int64_t Cols, int64_t K>
void sandwich(const double (&l)[Rows][K], const float (&in)[K][K], const double (&r)[Cols][K],
              float (&out)[Rows][Cols]) {
  float t[Rows][K];
  for (int64_t i = 0; i < Rows; ++i) {
    for (int64_t j = 0; j < K; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k)
        if (l[i][k] != 0) s += static_cast<float>(l[i][k]) * in[k][j];
      t[i][j] = s;
    }
  }
  for (int64_t i = 0; i < Rows; ++i) {
    for (int64_t j = 0; j < Cols; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k)
        if (r[j][k] != 0) s += t[i][k] * static_cast<float>(r[j][k]);
      out[i][j] = s;
    }
  }
}

}  // namespace

bool winograd_applicable(const FusedConvParams& p) {
  const ConvParams& c = p.conv;
  return c.in.d == 1 && c.out.d == 1 && c.kernel.d == 1 && c.kernel.h == 3 && c.kernel.w == 3 &&
         c.stride.h == 1 && c.stride.w == 1 && c.dilation.h >= 1 && c.dilation.w >= 1 &&
         c.groups == 1;
}

int64_t WinogradAxis::valid(int64_t t) const {
  const int64_t first = output(t, 0);
  if (first >= out) return 0;
  return std::min<int64_t>(kWinogradTile, (out - first + dilation - 1) / dilation);
}

WinogradAxis winograd_axis(int64_t out, int64_t dilation, int64_t pad) {
  TERN_CHECK(out >= 0 && dilation >= 1, InvalidArgument,
             "winograd_axis: expected out >= 0 and dilation >= 1, but got {} and {}", out,
             dilation);
  WinogradAxis a;
  a.dilation = dilation;
  a.pad = pad;
  a.out = out;
  const int64_t per_phase = (out + dilation - 1) / dilation;
  a.tiles = dilation * ((per_phase + kWinogradTile - 1) / kWinogradTile);
  return a;
}

Tensor winograd_transform_weights(const Tensor& packed) {
  TERN_CHECK(packed.dtype() == DType::kFloat32 && packed.rank() == 5 && packed.dim(2) == 3 &&
                 packed.dim(3) == 3,
             InvalidArgument,
             "winograd_transform_weights: expected packed float32 weights [Mb, C, 3, 3, c], but "
             "got {} {}",
             dtype_name(packed.dtype()), shape_str(packed.shape()));
  const Tensor src = packed.contiguous();
  const int64_t mb = src.dim(0), cin = src.dim(1), c = src.dim(4);
  Tensor u = Tensor::zeros(DType::kFloat32, {kWinogradPoints, mb, cin, c});
  const float* s = src.data<float>();
  float* d = u.data<float>();
  for (int64_t b = 0; b < mb; ++b) {
    for (int64_t ci = 0; ci < cin; ++ci) {
      for (int64_t l = 0; l < c; ++l) {
        const float* g = s + (b * cin + ci) * 9 * c + l;  // g[(kh * 3 + kw) * c]
        double t[kP][3];                                   // G g
        for (int64_t i = 0; i < kP; ++i)
          for (int64_t j = 0; j < 3; ++j)
            t[i][j] = kWinogradG[i][0] * g[j * c] + kWinogradG[i][1] * g[(3 + j) * c] +
                      kWinogradG[i][2] * g[(6 + j) * c];
        for (int64_t i = 0; i < kP; ++i) {
          for (int64_t j = 0; j < kP; ++j) {
            const double v = t[i][0] * kWinogradG[j][0] + t[i][1] * kWinogradG[j][1] +
                             t[i][2] * kWinogradG[j][2];
            d[(((i * kP + j) * mb + b) * cin + ci) * c + l] = static_cast<float>(v);
          }
        }
      }
    }
  }
  return u;
}

void f32_winograd_conv(const FusedConvParams& p, const float* x, const float* u, const float* bias,
                       const float* z, float* y, int64_t oc_begin, int64_t oc_end) {
  const ConvParams& c = p.conv;
  const int64_t cin = c.in_channels, m = c.out_channels;
  const int64_t h = c.in.h, w = c.in.w, oh = c.out.h, ow = c.out.w, plane = oh * ow;
  const int64_t xb = p.x_block, yb = p.y_block, wb = p.w_block;
  const int64_t mb = (m + wb - 1) / wb;
  const Epilogue& e = p.epilogue;
  auto x_at = [&](int64_t ci, int64_t r, int64_t col) {
    if (r < 0 || r >= h || col < 0 || col >= w) return 0.0f;
    return x[((ci / xb * h + r) * w + col) * xb + ci % xb];
  };
  auto y_off = [&](int64_t oc, int64_t pix) { return ((oc / yb) * plane + pix) * yb + oc % yb; };
  const WinogradAxis ah = winograd_axis(oh, c.dilation.h, c.pad_begin.h);
  const WinogradAxis aw = winograd_axis(ow, c.dilation.w, c.pad_begin.w);
  std::vector<float> v(kWinogradPoints * cin);  // the tile's B^T d B, [36][C]
  for (int64_t th = 0; th < ah.tiles; ++th) {
    for (int64_t tw = 0; tw < aw.tiles; ++tw) {
      for (int64_t ci = 0; ci < cin; ++ci) {
        float d[kP][kP], t[kP][kP];
        for (int64_t i = 0; i < kP; ++i)
          for (int64_t j = 0; j < kP; ++j) d[i][j] = x_at(ci, ah.input(th, i), aw.input(tw, j));
        sandwich(kWinogradBT, d, kWinogradBT, t);
        for (int64_t i = 0; i < kWinogradPoints; ++i) v[i * cin + ci] = t[i / kP][i % kP];
      }
      for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
        float mm[kP][kP], out[4][4];
        if (oc < m) {
          for (int64_t i = 0; i < kWinogradPoints; ++i) {
            const float* ui = u + ((i * mb + oc / wb) * cin) * wb + oc % wb;
            float s = 0.0f;
            for (int64_t ci = 0; ci < cin; ++ci) s += ui[ci * wb] * v[i * cin + ci];
            mm[i / kP][i % kP] = s;
          }
          sandwich(kWinogradAT, mm, kWinogradAT, out);
        }
        for (int64_t i = 0; i < ah.valid(th); ++i) {
          for (int64_t j = 0; j < aw.valid(tw); ++j) {
            const int64_t off = y_off(oc, ah.output(th, i) * ow + aw.output(tw, j));
            if (oc >= m) {
              y[off] = 0.0f;
              continue;
            }
            float val = out[i][j] + (bias ? bias[oc] : 0.0f);
            if (e.residual && e.residual_before_activation) val += z[off];
            val = activate(e, val);
            if (e.residual && !e.residual_before_activation) val += z[off];
            y[off] = val;
          }
        }
      }
    }
  }
}

}  // namespace tern::kernels::ref
