// Per-layer figures and the Chrome trace of a Session::profile() (tern/profile.h).
#include "tern/profile.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace tern {

LayerStats layer_stats(int64_t macs, int64_t bytes, double ms, const Roofline* roofline,
                       int threads) {
  LayerStats s;
  const double flop = 2.0 * static_cast<double>(macs);
  s.gflop = flop / 1e9;
  if (ms > 0) s.gflops = s.gflop / (ms / 1e3);
  if (bytes > 0) s.intensity = flop / static_cast<double>(bytes);
  if (roofline && !roofline->points.empty() && flop > 0) {
    s.bound_gflops = roofline->bound_gflops(s.intensity, threads, bytes);
    if (s.bound_gflops > 0) {  // 0 when bytes is unknown (0): no intensity
      s.bound = s.bound_gflops < roofline->at(threads).gflops
                    ? memory_level_name(roofline->memory_level(bytes, threads))
                    : "FMA";
    }
  }
  if (s.bound_gflops > 0) s.roofline_pct = 100.0 * s.gflops / s.bound_gflops;
  return s;
}

std::string chrome_trace_json(const Profile& profile) {
  using nlohmann::json;
  json events = json::array();
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "tern"}}}});
  events.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"tid", 1},
                    {"args", {{"name", fmt::format("plan ({} threads)", profile.num_threads)}}}});
  for (size_t r = 0; r < profile.runs.size(); ++r) {
    events.push_back({{"name", fmt::format("run {}", r + 1)},
                      {"cat", "run"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", profile.runs[r].start_ms * 1e3},
                      {"dur", profile.runs[r].ms * 1e3}});
  }
  for (const LayerProfile& l : profile.layers) {
    std::vector<std::string> shapes;
    for (const Shape& s : l.layer.output_shapes) shapes.push_back(shape_str(s));
    const json args = {{"op", l.layer.op_type},
                       {"algorithm", l.layer.algorithm},
                       {"shape", fmt::format("{}", fmt::join(shapes, " "))},
                       {"gflop", 2.0 * static_cast<double>(l.layer.macs) / 1e9}};
    for (size_t r = 0; r < l.runs.size(); ++r) {
      json e = {{"name", l.layer.name.empty() ? l.layer.op_type : l.layer.name},
                {"cat", l.layer.op_type},
                {"ph", "X"},
                {"pid", 1},
                {"tid", 1},
                {"ts", l.runs[r].start_ms * 1e3},
                {"dur", l.runs[r].ms * 1e3},
                {"args", args}};
      e["args"]["run"] = r + 1;
      events.push_back(std::move(e));
    }
  }
  const json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return trace.dump(1) + "\n";
}

}  // namespace tern
