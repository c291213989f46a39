// ConvChain (internal, domain "tern"): consecutive FusedConvs computed together in bands
// of output rows, so that each intermediate tensor exists only as a few rows in a small
// per-thread buffer that stays in cache: layer fusion (Alwani et al., "Fused-Layer CNN
// Accelerators", MICRO 2016; the line buffers of image pipelines). Created by the pass
// fuse-conv-chain for convs whose intermediates outgrow the L2 cache, never by a model.
//
// Why: UltraFace's and FD-1MB's first four layers (the first conv, a depthwise, a
// pointwise and a stride-2 depthwise conv, at 120 x 160) write and read 1.2 to 2.5 MB
// each. Through the memory hierarchy of a 2-vCPU Xeon (13 GB/s triad at one thread)
// they took 0.75 of the models' 2 ms, although their FMAs need about half of that.
//
// How: each thread takes a range of the last layer's output rows and walks it band by
// band. For a band, the rows every layer must produce follow from the next layer's
// window (input_rows), last layer first. Each intermediate layer keeps the rows it holds
// in its band buffer, which has room for a few bands: the new rows are computed after
// the ones the next band needs again (a 3x3 window's overlap), so no row is computed
// twice, and those move to the buffer's front only when the buffer is full. The kernels
// (kernels/direct, kernels/depthwise) compute a band as a conv of its own: the band's rows of the
// input, the padding that remains at the image's top or bottom, and channel blocks x_plane and
// y_plane pixels apart in the taller buffers.
#include "ops/conv_chain.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "base/cpu.h"
#include "kernels/depthwise/depthwise_conv.h"
#include "kernels/direct/direct_conv.h"
#include "ops/fused_conv.h"
#include "ops/op_args.h"
#include "ops/parallel.h"
#include "ops/registry.h"

namespace tern::ops {
namespace {

constexpr int64_t kMaxLayers = kConvChainMaxLayers;

// Rows [begin, end) of an image.
struct Rows {
  int64_t begin = 0, end = 0;
};

// The input rows that output rows `out` of conv `c` read (those inside the input).
Rows input_rows(const kernels::ref::ConvParams& c, Rows out) {
  const int64_t first = out.begin * c.stride.h - c.pad_begin.h;
  const int64_t last = (out.end - 1) * c.stride.h - c.pad_begin.h + (c.kernel.h - 1) * c.dilation.h;
  return {std::max<int64_t>(0, first), std::min(c.in.h, last + 1)};
}

// A float buffer of at least `floats` per thread, 64-byte aligned (the kernels' vector
// loads run at half speed across cache lines), kept for the thread's later calls.
float* thread_scratch(int64_t floats) {
  thread_local std::vector<float> buffer;
  const size_t n = static_cast<size_t>(floats) + 16;
  if (buffer.size() < n) buffer.resize(n);
  const auto addr = reinterpret_cast<uintptr_t>(buffer.data());
  return reinterpret_cast<float*>((addr + 63) & ~uintptr_t{63});
}

/// ConvChain: Y = L[n-1](... L[1](L[0](X))), each L[i] a FusedConv; only the last may add
/// a residual Z.
/// Inputs: X, then each layer's W and B (B may be omitted), then Z (optional: the last
/// layer's residual, Y's shape).
/// Attributes: layers (n, 2 to 16); names (n strings: the layers' node names, which
/// messages use); each layer's FusedConv attributes under "<i>." ("0.strides", ...);
/// band_rows (optional, >= 1): the last layer's output rows per band (default: the
/// most that keep a thread's band buffers within conv_chain_band_bytes(), and at least 2
/// where those fit conv_chain_grow_bytes()).
/// Every layer runs the direct or the depthwise kernel on NCHWc intermediates, writing no
/// NHWC output; where one does not (another SIMD target than the plan's, or a window with
/// output rows that read no input row: conv_rows_read_input), the layers run one after
/// the other on whole tensors instead (allocated per run).
/// Bands start at other rows with other thread counts and L2 sizes, and the kernels may
/// then split a band's rows into other tiles: results agree to float rounding.
/// run() keeps the banded call it prepared and reuses it for the same shapes, weights and
/// SIMD target (a step that reads the graph input is not bound).
/// Errors: ModelError for bad attributes, ShapeError (naming the layer) for shapes that
/// do not fit.
class ConvChainOp final : public Op {
 public:
  ConvChainOp(const Attrs& a, const OpContext& ctx) : Op(ctx) {
    const int64_t n = a.require_int("layers");
    TERN_CHECK(n >= 2 && n <= kMaxLayers, ModelError,
               "{}: attribute 'layers' must be in 2..{}, but got {}", where(), kMaxLayers, n);
    names_ = a.get_strings("names", {});
    TERN_CHECK(static_cast<int64_t>(names_.size()) == n, ModelError,
               "{}: attribute 'names' must name the {} layers, but it has {} names", where(), n,
               names_.size());
    band_rows_ = a.get_int("band_rows", 0);
    TERN_CHECK(!a.has("band_rows") || band_rows_ >= 1, ModelError,
               "{}: attribute 'band_rows' must be >= 1, but got {}", where(), band_rows_);
    for (int64_t i = 0; i < n; ++i) {
      const std::map<std::string, ir::Attribute> attrs = a.with_prefix(fmt::format("{}.", i));
      const OpContext layer{names_[i], "FusedConv", ctx.opset, 1};
      layers_.push_back(make_fused_conv(Attrs(attrs, "FusedConv '" + names_[i] + "'"), layer));
    }
  }

  std::vector<TensorType> infer(std::span<const InferInput> inputs) const override {
    const size_t n = layers_.size();
    TERN_CHECK(inputs.size() == 1 + 2 * n || inputs.size() == 2 + 2 * n, ShapeError,
               "{}: expected {} or {} inputs (X, each layer's W and B, and Z), but got {}", where(),
               1 + 2 * n, 2 + 2 * n, inputs.size());
    InferInput x = inputs[0];
    std::vector<TensorType> out;
    for (size_t i = 0; i < n; ++i) {
      std::vector<InferInput> in = {x, inputs[1 + 2 * i], inputs[2 + 2 * i]};
      if (i + 1 == n && inputs.size() == 2 + 2 * n) in.push_back(inputs[1 + 2 * n]);
      out = layers_[i]->infer(in);
      x = InferInput{true, out[0].dtype, out[0].shape, nullptr};
    }
    return out;
  }

  // A step that is not bound: the first chain of a model, whose X is the graph input and
  // moves with every run. The banded call prepared for the last run's shapes, weights and
  // SIMD target serves again with the new X, Z and Y: prepare() took about 10 us of every
  // run of UltraFace slim-320 (1.7 ms at one thread on Zen 4; `perf`).
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
           const ExecContext& ctx) const override {
    std::vector<Tensor> in;
    for (const Tensor& t : inputs) in.push_back(t.defined() ? t.contiguous() : t);
    CacheKey key = cache_key(in, outputs[0]);
    std::shared_ptr<const Cached> last;
    {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      last = cache_;
    }
    if (last && last->key == key) {
      Call c = last->call;
      c.x = in[0].data<float>();
      c.z = c.layers.back().p.epilogue.residual ? in.back().data<float>() : nullptr;
      c.y = outputs[0].data<float>();
      return launch(c, ctx);
    }
    auto fresh = std::make_shared<Cached>(Cached{prepare(in, outputs[0]), std::move(key)});
    launch(fresh->call, ctx);
    if (!fresh->call.banded) return;  // the fallback runs on the tensors themselves
    fresh->call.inputs.clear();       // keeps no tensor of this run alive
    fresh->call.output = Tensor();
    std::lock_guard<std::mutex> lock(cache_mutex_);
    cache_ = std::move(fresh);
  }

  // Prepared once for a plan's fixed buffers: a bound step runs only the kernels.
  BoundRun bind(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                const ExecContext&) const override {
    for (const Tensor& t : inputs) {
      if (t.defined() && !t.is_contiguous()) return {};
    }
    const std::vector<Tensor> in(inputs.begin(), inputs.end());
    auto call = std::make_shared<const Call>(prepare(in, outputs[0]));
    return [call](const ExecContext& ctx) { launch(*call, ctx); };
  }

  // The layers' multiply-accumulates (FusedConv::macs reads only X's and W's shapes).
  int64_t macs(std::span<const TensorType> inputs, std::span<const TensorType>) const override {
    int64_t total = 0;
    TensorType x = inputs[0];
    for (size_t i = 0; i < layers_.size(); ++i) {
      const TensorType& w = inputs[1 + 2 * i];
      const std::vector<InferInput> in = {InferInput{true, x.dtype, x.shape},
                                          InferInput{true, w.dtype, w.shape}, InferInput{}};
      const std::vector<TensorType> y = layers_[i]->infer(in);
      const std::vector<TensorType> xw = {x, w};
      const int64_t m = layers_[i]->macs(xw, y);
      total = m > INT64_MAX - total ? INT64_MAX : total + m;
      x = y[0];
    }
    return total;
  }

  // Whether prepare() picks the bands for these inputs (conv_chain_runs_in_bands).
  bool runs_in_bands(std::span<const Tensor> inputs) const {
    Tensor y = Tensor::empty(DType::kFloat32, infer(infer_inputs_from(inputs))[0].shape);
    return prepare(std::vector<Tensor>(inputs.begin(), inputs.end()), y).banded;
  }

 private:
  // One layer of a prepared call.
  struct Layer {
    kernels::ref::FusedConvParams p;  // the whole image's conv
    bool depthwise = false;
    const float* w = nullptr;
    const float* bias = nullptr;
    int64_t row_floats = 0;  // floats of one output row of one channel block (plane)
    int64_t planes = 0;      // output channel blocks (or planes, y_block 1)
    int64_t rows = 0;        // band buffer rows (all but the last layer)
    int64_t offset = 0;      // the band buffer's first float in the thread's scratch
  };

  struct Call {
    std::vector<Layer> layers;
    bool banded = false;  // false: the layers run one after the other (fallback)
    int64_t batch = 0, x_image = 0, y_image = 0;
    int64_t band_rows = 0;
    int64_t scratch_floats = 0;
    const float* x = nullptr;
    const float* z = nullptr;
    float* y = nullptr;
    // The fallback's operands.
    std::vector<Tensor> inputs;
    Tensor output;
    const ConvChainOp* op = nullptr;
  };

  Call prepare(const std::vector<Tensor>& inputs, Tensor& y) const {
    Call c;
    c.op = this;
    c.inputs = inputs;
    c.output = y;
    const size_t n = layers_.size();
    const bool residual = inputs.size() == 2 + 2 * n && inputs.back().defined();
    Shape x_shape = inputs[0].shape();
    c.banded = true;
    for (size_t i = 0; i < n; ++i) {
      const Tensor& w = inputs[1 + 2 * i];
      const Tensor& b = inputs[2 + 2 * i];
      const FusedConvLayer fl = fused_conv_layer(*layers_[i], x_shape, w.shape());
      Layer l;
      l.p = fl.params;
      l.p.epilogue.residual = residual && i + 1 == n;
      l.depthwise = fl.algorithm == "depthwise";
      l.w = w.data<float>();
      l.bias = b.defined() ? b.data<float>() : nullptr;
      l.row_floats = l.p.conv.out.w * l.p.y_block;
      l.planes = kernels::ref::fused_conv_padded_channels(l.p) / l.p.y_block;
      const kernels::ref::ConvParams& cp = l.p.conv;
      const bool intermediate = i + 1 < n;
      if (!conv_chain_band_algorithm(fl.algorithm) || !conv_rows_read_input(cp) || l.p.y_nhwc ||
          (intermediate && l.p.y_block == 1)) {
        c.banded = false;
      }
      std::vector<InferInput> in = {InferInput{true, DType::kFloat32, x_shape},
                                    InferInput{true, DType::kFloat32, w.shape()},
                                    InferInput{b.defined(), DType::kFloat32, b.shape()}};
      x_shape = layers_[i]->infer(in)[0].shape;
      c.layers.push_back(l);
    }
    c.batch = inputs[0].dim(0);
    c.x_image = c.batch == 0 ? 0 : inputs[0].numel() / c.batch;
    c.y_image = c.batch == 0 ? 0 : y.numel() / c.batch;
    c.x = inputs[0].data<float>();
    c.z = residual ? inputs.back().data<float>() : nullptr;
    c.y = y.data<float>();
    if (c.banded) plan_bands(c);
    return c;
  }

  // The band height: conv_chain_band_height, or the band_rows attribute.
  void plan_bands(Call& c) const {
    const size_t n = c.layers.size();
    const int64_t out_h = c.layers.back().p.conv.out.h;
    std::vector<kernels::ref::FusedConvParams> params;
    for (const Layer& l : c.layers) params.push_back(l.p);
    std::vector<int64_t> rows(n);
    const int64_t band =
        band_rows_ == 0 ? conv_chain_band_height(params) : std::min(band_rows_, out_h);
    c.band_rows = band;
    c.scratch_floats = conv_chain_band_rows(params, band, rows) / int64_t{sizeof(float)};
    int64_t offset = 0;
    for (size_t l = 0; l + 1 < n; ++l) {
      Layer& ly = c.layers[l];
      ly.rows = rows[l];
      ly.offset = offset;
      offset += (ly.rows * ly.row_floats * ly.planes + 15) / 16 * 16;
    }
  }

  static void launch(const Call& c, const ExecContext& ctx) {
    if (!c.banded) return c.op->run_layers(c, ctx);
    const int64_t out_h = c.layers.back().p.conv.out.h;
    // Ranges of rows per image: enough for every thread (one per image when the batch
    // has as many images as threads). With one image, each thread takes a contiguous
    // range of rows: the region the layers before and after the chain give the same
    // thread (parallel_grid's spatial split).
    const int64_t images = std::max<int64_t>(1, c.batch);
    const int64_t ranges = std::clamp<int64_t>((ctx.num_threads + images - 1) / images, 1,
                                               std::max<int64_t>(1, out_h));
    parallel_for(c.batch * ranges, ctx.num_threads, [&](int64_t i) {
      const int64_t img = i / ranges, t = i % ranges;
      const Rows rows{out_h * t / ranges, out_h * (t + 1) / ranges};
      if (rows.end > rows.begin) {
        run_rows(c, c.x + img * c.x_image, c.z ? c.z + img * c.y_image : nullptr,
                 c.y + img * c.y_image, rows);
      }
    });
  }

  // Output rows `rows` of the last layer of one image, band by band.
  static void run_rows(const Call& c, const float* x, const float* z, float* y, Rows rows) {
    const size_t n = c.layers.size();
    float* scratch = thread_scratch(c.scratch_floats);
    // Per intermediate: the rows its buffer holds, from buffer row `start` on.
    struct Held {
      Rows rows;
      int64_t start = 0;
      bool empty = true;
    };
    std::array<Held, kMaxLayers> held{};
    std::array<Rows, kMaxLayers> need{};
    for (int64_t a = rows.begin; a < rows.end; a += c.band_rows) {
      need[n - 1] = {a, std::min(rows.end, a + c.band_rows)};
      for (size_t l = n - 1; l > 0; --l) need[l - 1] = input_rows(c.layers[l].p.conv, need[l]);
      for (size_t l = 0; l < n; ++l) {
        const Layer& ly = c.layers[l];
        // The input: the image for the first layer, else the previous layer's buffer
        // (its row 0 is row `in_first` of that layer's output).
        const float* in = x;
        int64_t in_first = 0, x_plane = ly.p.conv.in.h * ly.p.conv.in.w;
        if (l > 0) {
          const Layer& prev = c.layers[l - 1];
          in = scratch + prev.offset;
          in_first = held[l - 1].rows.begin - held[l - 1].start;
          x_plane = prev.rows * ly.p.conv.in.w;
        }
        if (l + 1 == n) {
          compute(ly, need[l], in, in_first, x_plane, z, y, 0, ly.p.conv.out.h * ly.p.conv.out.w);
          continue;
        }
        float* buf = scratch + ly.offset;
        Held& h = held[l];
        if (h.empty || need[l].begin >= h.rows.end) {
          h.rows = {need[l].begin, need[l].begin};
          h.start = 0;
          h.empty = false;
        } else {
          h.start += need[l].begin - h.rows.begin;  // rows no longer needed are dropped
          h.rows.begin = need[l].begin;
        }
        if (h.start + need[l].end - h.rows.begin > ly.rows) {
          // The new rows would pass the buffer's end: the rows kept move to its front,
          // once every few bands (the buffer has room for kConvChainSlack bands).
          const int64_t keep = h.rows.end - h.rows.begin;
          for (int64_t b = 0; b < ly.planes; ++b) {
            float* block = buf + b * ly.rows * ly.row_floats;
            std::memmove(block, block + h.start * ly.row_floats,
                         static_cast<size_t>(keep * ly.row_floats) * sizeof(float));
          }
          h.start = 0;
        }
        if (need[l].end > h.rows.end) {
          compute(ly, {h.rows.end, need[l].end}, in, in_first, x_plane, nullptr, buf,
                  h.rows.begin - h.start, ly.rows * ly.p.conv.out.w);
          h.rows.end = need[l].end;
        }
      }
    }
  }

  // Output rows `out` of layer `ly` into y, whose first row is the layer's output row
  // y_first and whose blocks are y_plane pixels apart, from x, whose first row is input
  // row x_first and whose blocks are x_plane pixels apart: the kernel's conv over the
  // input rows these output rows read, with the padding left of the image's top.
  static void compute(const Layer& ly, Rows out, const float* x, int64_t x_first, int64_t x_plane,
                      const float* z, float* y, int64_t y_first, int64_t y_plane) {
    kernels::ref::FusedConvParams q = ly.p;
    kernels::ref::ConvParams& cp = q.conv;
    const Rows in = input_rows(ly.p.conv, out);
    cp.pad_begin.h = ly.p.conv.pad_begin.h + in.begin - out.begin * cp.stride.h;
    cp.in.h = in.end - in.begin;
    cp.out.h = out.end - out.begin;
    q.x_plane = x_plane;
    q.y_plane = y_plane;
    const float* xs = x + (in.begin - x_first) * cp.in.w * q.x_block;
    const int64_t y_offset = (out.begin - y_first) * ly.row_floats;
    const float* zs = z ? z + y_offset : nullptr;
    float* ys = y + y_offset;
    if (ly.depthwise) {
      const int64_t items = kernels::depthwise_conv_work(q).items();
      kernels::f32_depthwise_conv(q, xs, ly.w, ly.bias, zs, ys, 0, items);
    } else {
      // One call computes the band: rows keep full segments (min_units 1). Shortened for
      // threads that never split it, UltraFace RFB-640's 2-row bands of pointwise layers
      // ran in segments of one 12-pixel tile, each paying a row's setup: its second chain
      // took 1.02 to 1.10 times as long (Zen 4, --per-layer, 3 alternated runs).
      const int64_t items = kernels::direct_conv_work(q, 1).items();
      kernels::f32_direct_conv(q, xs, ly.w, ly.bias, zs, ys, 0, items, 1);
    }
  }

  // The fallback: each layer on whole tensors, through FusedConv's own run().
  void run_layers(const Call& c, const ExecContext& ctx) const {
    const size_t n = layers_.size();
    Tensor x = c.inputs[0];
    for (size_t i = 0; i < n; ++i) {
      std::vector<Tensor> in = {x, c.inputs[1 + 2 * i], c.inputs[2 + 2 * i]};
      if (i + 1 == n && c.inputs.size() == 2 + 2 * n) in.push_back(c.inputs.back());
      std::vector<Tensor> out = {c.output};
      if (i + 1 < n) {
        out[0] = Tensor::empty(DType::kFloat32, layers_[i]->infer(infer_inputs_from(in))[0].shape);
      }
      layers_[i]->run(in, out, ctx);
      x = out[0];
    }
  }

  // What a prepared call depends on besides X's, Z's and Y's addresses: every input's and
  // Y's shape ({-1} for an undefined input), the weights' and biases' addresses (null for
  // an undefined bias) and the SIMD target (simd_target_epoch: the layers' kernels and
  // blocks are chosen for it).
  struct CacheKey {
    std::vector<Shape> shapes;
    std::vector<const void*> params;
    int64_t epoch = 0;
    bool operator==(const CacheKey&) const = default;
  };
  struct Cached {
    Call call;  // banded: inputs and output empty (the kernels take the addresses only)
    CacheKey key;
  };

  CacheKey cache_key(const std::vector<Tensor>& inputs, const Tensor& y) const {
    CacheKey k;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      k.shapes.push_back(t.defined() ? t.shape() : Shape{-1});  // no dims is a scalar
      if (i >= 1 && i <= 2 * layers_.size())
        k.params.push_back(t.defined() ? t.raw_data() : nullptr);
    }
    k.shapes.push_back(y.shape());
    k.epoch = simd_target_epoch();
    return k;
  }

  std::vector<std::string> names_;
  int64_t band_rows_ = 0;
  std::vector<std::unique_ptr<Op>> layers_;
  mutable std::mutex cache_mutex_;
  mutable std::shared_ptr<const Cached> cache_;  // the last banded call (run)
};

}  // namespace

bool conv_chain_band_algorithm(const std::string& algorithm) {
  return algorithm == "direct-first" || algorithm == "pointwise" || algorithm == "direct" ||
         algorithm == "depthwise";
}

bool conv_rows_read_input(const kernels::ref::ConvParams& c) {
  if (c.out.h < 1) return true;
  const Rows first = input_rows(c, {0, 1}), last = input_rows(c, {c.out.h - 1, c.out.h});
  return first.end > first.begin && last.end > last.begin;
}

bool conv_chain_runs_in_bands(const Op& chain, std::span<const Tensor> inputs) {
  const auto* op = dynamic_cast<const ConvChainOp*>(&chain);
  TERN_CHECK(op != nullptr, InvalidArgument, "{} is no ConvChain", chain.where());
  return op->runs_in_bands(inputs);
}

int64_t conv_chain_band_bytes() { return l2_cache_bytes() / 2; }

int64_t conv_chain_band_height(std::span<const kernels::ref::FusedConvParams> layers) {
  TERN_CHECK(!layers.empty(), InvalidArgument, "conv_chain_band_height: no layers");
  const int64_t out_h = layers.back().conv.out.h;
  std::vector<int64_t> rows(layers.size());
  int64_t band = 1;
  while (band < out_h && conv_chain_band_rows(layers, band + 1, rows) <= conv_chain_band_bytes()) {
    ++band;
  }
  // Bands of one row pay each layer's call and row setup for every output row: 2 rows where
  // they fit in L2 (UltraFace RFB-640's first chain, whose rows are 640 input pixels wide:
  // 1.1 MB of band buffers).
  if (band == 1 && out_h > 1 && conv_chain_band_rows(layers, 2, rows) <= conv_chain_grow_bytes()) {
    band = 2;
  }
  return band;
}

int64_t conv_chain_grow_bytes() { return l2_cache_bytes(); }

int64_t conv_chain_band_rows(std::span<const kernels::ref::FusedConvParams> layers,
                             int64_t band_rows, std::span<int64_t> rows) {
  const size_t n = layers.size();
  int64_t need = band_rows, step = band_rows, bytes = 0;
  rows[n - 1] = 0;
  for (size_t l = n - 1; l > 0; --l) {
    const kernels::ref::ConvParams& next = layers[l].conv;
    const kernels::ref::FusedConvParams& p = layers[l - 1];
    // Rows of layer l - 1 a band reads, and how many of them are new in each band.
    need = std::min(p.conv.out.h,
                    (need - 1) * next.stride.h + (next.kernel.h - 1) * next.dilation.h + 1);
    step *= next.stride.h;
    rows[l - 1] = need + (kConvChainSlack - 1) * std::min(need, step);
    const int64_t planes = kernels::ref::fused_conv_padded_channels(p) / p.y_block;
    const int64_t floats = rows[l - 1] * p.conv.out.w * p.y_block * planes;
    bytes += (floats + 15) / 16 * 16 * int64_t{sizeof(float)};
  }
  return bytes;
}

void register_conv_chain(OpRegistry& r) {
  OpSchema s = make_schema<ConvChainOp>("ConvChain", 5, 2 + 2 * kMaxLayers);
  s.domain = kInternalDomain;
  r.add(std::move(s));
}

}  // namespace tern::ops
