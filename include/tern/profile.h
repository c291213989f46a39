// tern/profile.h: per-layer figures from Session::profile() and a Chrome trace of it.
//
//   tern::Profile p = session.profile(inputs, 10);
//   tern::Roofline roof = tern::load_or_measure_roofline();
//   for (const tern::LayerProfile& l : p.layers) {
//     tern::LayerStats s = tern::layer_stats(l.layer.macs, l.layer.bytes, l.median_ms, &roof,
//                                            p.num_threads);
//   }
//   std::string trace = tern::chrome_trace_json(p);  // chrome://tracing, ui.perfetto.dev
#pragma once

#include <cstdint>
#include <string>

#include "tern/roofline.h"
#include "tern/session.h"

namespace tern {

/// Speed of one layer (or a sum of layers) against the roofline.
struct LayerStats {
  double gflop = 0;         ///< 2 * MACs / 1e9
  double gflops = 0;        ///< gflop per second of `ms`; 0 when ms is 0
  double intensity = 0;     ///< arithmetic intensity, FLOP per byte moved; 0 when bytes is 0
  double bound_gflops = 0;  ///< min(peak, intensity * bandwidth of the memory level the
                            ///< bytes fit in, Roofline::bound_gflops) at the thread count;
                            ///< 0 when there is no roofline or no FLOP
  double roofline_pct = 0;  ///< 100 * gflops / bound_gflops; 0 when the bound is 0
  std::string bound;        ///< the ceiling that sets bound_gflops: "FMA" (the peak), or the
                            ///< memory level, "L2", "L3" or "DRAM"; "" when there is none
};

/// The figures of a layer doing `macs` multiply-accumulates over `bytes` bytes in `ms`
/// milliseconds on `threads` threads; `roofline` may be null (no bound then). The
/// bandwidth is that of the level `bytes` fit in (Roofline::memory_level).
LayerStats layer_stats(int64_t macs, int64_t bytes, double ms, const Roofline* roofline,
                       int threads);

/// `profile` in the Trace Event Format that chrome://tracing and Perfetto load: a JSON
/// object with "traceEvents" holding one complete ("ph": "X") event per profiled run and
/// one per plan step per run (ts and dur in microseconds from the first run's start; the
/// steps nest inside their run), with args op, algorithm, shape and gflop.
std::string chrome_trace_json(const Profile& profile);

}  // namespace tern
