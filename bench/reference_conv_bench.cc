// The reference direct convolution on RetinaFace-mnet0.25 layer shapes at 320x320: the
// baseline every fast kernel of later issues is measured against. Reports GFLOP/s
// (2 FLOP per multiply-accumulate) as the "GFLOPs" counter.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <vector>

#include "kernels/reference/conv.h"

namespace {

using tern::kernels::ref::ConvParams;
using tern::kernels::ref::Dims3;

// in_channels, out_channels, groups, input H=W, kernel, stride, pad.
struct Layer {
  int64_t c, m, groups, in, k, stride, pad;
};

// Layers of retinaface_mnet025 at 1x3x320x320: the first 3x3 conv, a depthwise 3x3, a
// pointwise 1x1 of the backbone, and a 3x3 of the SSH context module.
const Layer kLayers[] = {
    {3, 8, 1, 320, 3, 2, 1},     // body.stage1.0: 3 -> 8, 3x3/2
    {32, 32, 32, 80, 3, 1, 1},   // stage1 depthwise 3x3 at 80x80
    {64, 64, 1, 40, 1, 1, 0},    // stage2 pointwise 1x1 at 40x40
    {64, 32, 1, 40, 3, 1, 1},    // ssh1.conv3X3 at 40x40
};

void BM_f32_conv_nchw_reference(benchmark::State& state) {
  const Layer& l = kLayers[state.range(0)];
  ConvParams p;
  p.in_channels = l.c;
  p.out_channels = l.m;
  p.groups = l.groups;
  p.in = Dims3{1, l.in, l.in};
  const int64_t out = (l.in + 2 * l.pad - l.k) / l.stride + 1;
  p.out = Dims3{1, out, out};
  p.kernel = Dims3{1, l.k, l.k};
  p.stride = Dims3{1, l.stride, l.stride};
  p.dilation = Dims3{1, 1, 1};
  p.pad_begin = Dims3{0, l.pad, l.pad};
  std::vector<float> x(l.c * l.in * l.in, 0.5f), w(l.m * (l.c / l.groups) * l.k * l.k, 0.25f),
      b(l.m, 0.1f), y(l.m * out * out);
  for (auto _ : state) {
    tern::kernels::ref::f32_conv_nchw(p, x.data(), w.data(), b.data(), y.data(), 0, l.m);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = 2.0 * l.m * out * out * (l.c / l.groups) * l.k * l.k;
  state.counters["GFLOPs"] =
      benchmark::Counter(flops * 1e-9 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  char label[96];  // snprintf: GCC 12 warns falsely (-Wrestrict) on std::string concatenation
  std::snprintf(label, sizeof label, "C%ld M%ld g%ld %ldx%ld k%ld s%ld", long(l.c), long(l.m),
                long(l.groups), long(l.in), long(l.in), long(l.k), long(l.stride));
  state.SetLabel(label);
}
BENCHMARK(BM_f32_conv_nchw_reference)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
