// tern/roofline.h: this machine's compute and memory ceilings, for the roofline model.
//
// The roofline model (Williams, Waterman and Patterson, "Roofline: an insightful visual
// performance model for multicore architectures", CACM 2009) bounds the speed of a layer
// doing F FLOP over B bytes by min(peak FLOP/s, F/B * bandwidth). tern measures the
// ceilings once per machine and caches them. The bandwidth is that of the memory level
// the layer's bytes fit in: L2, L3 or DRAM (the cache-aware roofline of Ilic, Pratas and
// Sousa, "Cache-aware roofline model", IEEE Computer Architecture Letters 2014), since a
// layer whose inputs the layer before just wrote reads them from cache, up to 4 times
// faster than from DRAM:
//
//   tern::Roofline r = tern::load_or_measure_roofline();
//   double bound = r.bound_gflops(/*intensity=*/4.0, /*threads=*/2, /*bytes=*/600000);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tern {

/// The measured ceilings for one thread count. Bandwidths are those of a streaming triad
/// (a[i] = b[i] + s * c[i], 12 bytes per element), GB/s (1e9 bytes), medians.
struct RooflinePoint {
  int threads = 1;          ///< threads that ran the kernels
  double gflops = 0;        ///< peak FP32 FMA throughput, GFLOP/s (one FMA = 2 FLOP), median
  double bandwidth = 0;     ///< DRAM: the triad over Roofline::stream_bytes
  double l2_bandwidth = 0;  ///< the triad over Roofline::l2_set_bytes(threads): L2-resident
  double l3_bandwidth = 0;  ///< the triad over Roofline::l3_set_bytes(threads): L3-resident
};

/// The memory level whose bandwidth bounds a layer (Roofline::memory_level).
enum class MemoryLevel { kL2, kL3, kDram };

/// "L2", "L3" or "DRAM".
const char* memory_level_name(MemoryLevel level);

/// The ceilings of this machine, for every thread count 1..num_cores.
struct Roofline {
  std::string cpu_model;     ///< /proc/cpuinfo's model name ("" if unknown)
  std::string target;        ///< the Highway target the FMA kernel ran on ("AVX3", "AVX2", ...)
  int num_cores = 1;         ///< logical cores the OS reports
  std::string measured_at;   ///< UTC time of the measurement, ISO 8601
  bool quick = false;        ///< measured in quick mode (small buffers, short runs: rough)
  int repetitions = 0;       ///< measurements per figure (the figures are their medians)
  int64_t stream_bytes = 0;  ///< bytes of the three DRAM triad arrays together
  int64_t l2_bytes = 0;      ///< one core's L2 cache when measured (l2_cache_bytes)
  int64_t l3_bytes = 0;      ///< the L3 cache the OS reported (all cores), 0 if none
  std::vector<RooflinePoint> points;  ///< threads 1..num_cores, in order

  /// The point for `threads`, clamped to 1..num_cores (more threads than cores cannot
  /// go faster). Throws InvalidArgument when there are no points.
  const RooflinePoint& at(int threads) const;
  /// Whether l2_bytes and every point's cache bandwidths are known (not in an entry that
  /// an older tern cached: memory_level() is then always DRAM).
  bool has_cache_figures() const;
  /// `threads` clamped to 1..the points (1..num_cores before there are any), as at() does.
  int clamped_threads(int threads) const;
  /// Bytes of the L2 triad's three arrays together at `threads` (clamped_threads): half
  /// of each thread's L2, so that they stay in it. Each thread is taken to run on a core
  /// of its own, with its own L2 (num_cores counts logical CPUs: SMT siblings share one).
  int64_t l2_set_bytes(int threads) const;
  /// The most bytes a layer may move on `threads` threads to be bound by L2: the threads'
  /// L2 caches, l2_bytes each (memory_level).
  int64_t l2_level_bytes(int threads) const;
  /// Bytes of the L3 triad's arrays at `threads`: 8 L2 caches per thread (the L3 slice of
  /// a core is 2 to 4 MiB on current x86 servers, shared with other tenants on a cloud
  /// VM), at most half of the L3 when the OS reports one but at least 2 L2 caches per
  /// thread (past the L2s, so that the figure is not L2's), and at most
  /// kRooflineMaxL3SetBytes (with more, L3 never bounds a layer: L2 does up to the L2s).
  int64_t l3_set_bytes(int threads) const;
  /// The level a layer moving `bytes` bytes (inputs, weights and outputs) on `threads`
  /// threads is bound by: L2 up to l2_level_bytes(threads) (the threads' L2 caches: a layer
  /// whose bytes fit stays there, whereas the triad that measures it fills half), L3 up
  /// to l3_set_bytes(threads), else DRAM (also when bytes <= 0, unknown, or the roofline
  /// has no cache figures).
  MemoryLevel memory_level(int64_t bytes, int threads) const;
  /// That level's bandwidth at `threads`, GB/s; a cache level never below the levels
  /// beyond it (figures measured at different times may say otherwise).
  double bandwidth_gbps(int64_t bytes, int threads) const;
  /// The levels' bandwidths at `threads` and the bytes each covers, for a report:
  /// "L2 up to 1.05 MB 108.1 GB/s, L3 up to 8.39 MB 88.8 GB/s, DRAM 15.1 GB/s" (MB = 1e6
  /// bytes); "DRAM 15.1 GB/s" without cache figures. Throws InvalidArgument like at().
  std::string levels_text(int threads) const;
  /// The roofline bound in GFLOP/s of a layer with arithmetic intensity `flop_per_byte`
  /// (FLOP per byte moved) over `bytes` bytes on `threads` threads: min(peak, intensity *
  /// bandwidth_gbps(bytes, threads)); bytes = 0 takes DRAM's bandwidth.
  double bound_gflops(double flop_per_byte, int threads, int64_t bytes = 0) const;
};

/// How to measure.
struct RooflineOptions {
  /// Small buffers (32 MB instead of 256 MB), ~2 ms per kernel run and 3 repetitions:
  /// for tests and CI. The figures are rough (the buffers may partly fit in cache).
  bool quick = false;
  /// Measurements per figure; 0 = 7 (3 in quick mode).
  int repetitions = 0;
  /// Re-measure even when the cache has an entry for this machine.
  bool force = false;
  /// The cache file; "" = roofline_cache_path().
  std::string cache_path;
};

/// Measures the ceilings now (about 1-2 s per thread count; quick mode a few ms).
/// FLOP/s: every thread runs 12 independent FMA chains on SIMD registers (the best
/// Highway target, chosen at run time). Bandwidth: a[i] = b[i] + s * c[i] over three
/// float arrays split evenly over the threads, counted as 12 bytes per element (two
/// reads, one write; the STREAM convention): for DRAM once over stream_bytes
/// (RooflineOptions::quick decides it), for L2 and L3 many times over l2_set_bytes and
/// l3_set_bytes, each thread over its own part, which stays in its caches. Throws
/// std::bad_alloc when the buffers cannot be allocated.
Roofline measure_roofline(const RooflineOptions& options = {});

/// "$XDG_CACHE_HOME/tern/roofline.json", else "$HOME/.cache/tern/roofline.json"; "" when
/// neither variable is set (nothing is cached then).
std::string roofline_cache_path();

/// The key of this machine's entry in the cache: CPU model, Highway target and core
/// count, e.g. "Intel(R) Xeon(R) Processor|AVX3|2".
std::string roofline_cache_key();

/// The entry for `key` in the cache file at `path`. Returns false when the file does not
/// exist or has no entry for `key`. An entry an older tern wrote has no cache figures
/// (l2_bytes, l3_bytes and the points' l2 and l3 bandwidths stay 0: has_cache_figures()). Throws
/// IOError naming the file when it cannot be read, was written by another tern (another
/// file version) or is corrupt (not JSON, or an entry with missing, mistyped or
/// out-of-range fields).
bool read_roofline_cache(const std::string& path, const std::string& key, Roofline* out);

/// Stores `roofline` under `key` in the cache file at `path` (created with its folders;
/// other keys' entries are kept, a corrupt file or one of another version is replaced). Written to
/// a temporary file and renamed, so readers never see half a file. Throws IOError when it cannot.
void write_roofline_cache(const std::string& path, const std::string& key,
                          const Roofline& roofline);

/// Where load_or_measure_roofline() got its figures.
struct RooflineSource {
  std::string cache_path;   ///< the cache file used ("" when there is none)
  bool from_cache = false;  ///< read from the cache (else measured now)
  /// A problem that did not stop it, e.g. "cache '...' is corrupt (...); re-measured" or
  /// "could not write the cache: ..."; "" when none.
  std::string warning;
};

/// A re-measured figure (the peak, or the DRAM, L2 or L3 bandwidth, at any thread count)
/// below this fraction of the cached one keeps the cached figures (load_or_measure_roofline).
inline constexpr double kRooflineDropFraction = 0.8;

/// The largest L3 triad set (Roofline::l3_set_bytes): 64 MiB, which bounds the buffers
/// and the time of a measurement on machines with many cores and no L3 reported.
inline constexpr int64_t kRooflineMaxL3SetBytes = int64_t{64} << 20;

/// This machine's roofline: the cached entry for roofline_cache_key() if there is one
/// (and not options.force), else measured now and written to the cache. With
/// options.force, a measurement with a figure below kRooflineDropFraction of the cached
/// entry's (a busy machine; only against an entry measured in the same mode, quick or
/// not) is not written: the cached figures are returned (source->from_cache) and
/// `source->warning` names the figure and the file to delete to replace them. An entry
/// an older tern wrote (no cache figures: has_cache_figures() is false) is measured again
/// even without options.force; the new entry keeps each of its peak and DRAM figures that
/// the new measurement falls far below (with a warning), and a quick measurement leaves
/// an older full one as it is (returned, DRAM bounding every layer). A corrupt
/// cache file, or one of another version, is not an error here: the cache is derived data, so it is
/// re-measured and replaced, and `source->warning` says so (as it does when the cache cannot be
/// written). Throws only what measure_roofline() throws.
Roofline load_or_measure_roofline(const RooflineOptions& options = {},
                                  RooflineSource* source = nullptr);

}  // namespace tern
