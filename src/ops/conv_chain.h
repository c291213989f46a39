// tern.ConvChain's band buffers (ops/conv_chain.cc), which the pass fuse-conv-chain
// sizes chains by.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/reference/fused_conv.h"
#include "tern/tensor.h"

namespace tern::ops {

class Op;

/// Layers a chain holds at most.
inline constexpr int64_t kConvChainMaxLayers = 16;

/// Whether FusedConv algorithm `algorithm` ("direct-first", "pointwise", "direct",
/// "depthwise", ...) runs a kernel that computes a band of rows inside a taller image
/// (FusedConvParams::x_plane / y_plane): the layers a chain may hold.
bool conv_chain_band_algorithm(const std::string& algorithm);

/// Whether every output row of conv `c` reads at least one input row (no row lies wholly
/// in the padding): a band of rows is then a conv of its own (ConvChain computes layers
/// whose rows do not one after the other instead).
bool conv_rows_read_input(const kernels::ref::ConvParams& c);

/// Whether ConvChain op `chain` computes these inputs (X, each layer's W and B, Z) in
/// bands, rather than one layer after the other (a layer whose kernel cannot compute a
/// band on the SIMD target in use, or conv_rows_read_input false). For tests and tools.
/// Throws as the op's infer() does, and InvalidArgument when `chain` is no ConvChain.
bool conv_chain_runs_in_bands(const Op& chain, std::span<const Tensor> inputs);

/// Bytes of band buffers per thread a chain's bands take at most (but 2-row bands, which
/// may take conv_chain_grow_bytes()): half of the L2 cache (l2_cache_bytes), the rest left
/// for the weights and for the first layer's input and the last layer's output streaming
/// through. On the 2 MiB L2 of an Emerald Rapids
/// Xeon, UltraFace slim-320's first four layers took 0.95 of their time with this
/// budget and 1.0 with a quarter of L2 (bands of 4 rows of its last layer did not fit,
/// so the chain stopped at 3 layers).
int64_t conv_chain_band_bytes();

/// Bytes of band buffers per thread up to which the pass still grows a chain: the whole
/// L2 cache. The op's bands (the most rows within conv_chain_band_bytes, at least 2 rows
/// where they fit this budget, and 1 row even past it) may then be lower than kConvChainMinBandRows
/// rows, which still beat writing the next intermediate to memory and reading it back. On the
/// Emerald Rapids Xeon (2 MiB L2), against growing only while the bands fit half of L2 (9
/// alternated rounds, 1 thread): RetinaFace 640 x 640 0.875, UltraFace RFB-640 0.935 (its 9.8 MB
/// output of the first three layers now stays in the chain), MobileNetV2 0.965, the others 0.98
/// to 1.0; 2 threads 0.97 to 0.99. Spending the whole L2 on the op's bands as well made UltraFace
/// slim-320 1.03x slower (taller bands, no longer chain).
int64_t conv_chain_grow_bytes();

/// Output rows of the last layer per band that must fit conv_chain_grow_bytes() for the
/// pass to grow a chain: each layer adds its window's rows to every earlier layer's
/// band, and past this, the per-band work (a kernel call per layer, the rows kept
/// between bands) and the bands' spill out of L2 outweigh what the chain saves (one
/// chain of 8 layers on UltraFace RFB-640 without this rule: 3.9 to 6.0 ms against 5.05
/// for the layers alone).
inline constexpr int64_t kConvChainMinBandRows = 4;

/// Bytes per image of an output that the pass takes into a chain (the next layer joins)
/// even where only bands of 1 row fit conv_chain_grow_bytes(): written out, it would go
/// to memory and come back (at 20 GB/s, 1 ms for 10 MB), which costs more than the 1-row
/// bands' calls and row moves. On a Zen 4 (1 MiB L2), UltraFace RFB-640's first chain
/// stopped before the stride-2 depthwise conv that reads its 9.8 MB output, and
/// RetinaFace 640's before its 6.6 MB one. With this rule, alternated over 7 rounds at 1
/// thread, RFB-640 took 0.95 of its time, RetinaFace 640 0.98 and MobileNetV2 (4.8 MB
/// expansions) 0.98, the others 1.00. Smaller outputs stayed in that machine's L3
/// between two layers: chains of 1-row bands over them ran slower than the layers alone.
inline constexpr int64_t kConvChainSpillBytes = 4 * 1024 * 1024;

/// Band buffer rows of each intermediate layer of a ConvChain over `layers` (whole-image
/// parameters, in order) for bands of `band_rows` output rows of the last one: the rows a
/// band reads of it (the next layer's window over the rows that layer produces) plus the
/// rows of kConvChainSlack - 1 further bands, so that the rows kept for the next band
/// move to the buffer's front only once every kConvChainSlack bands. rows[i] is layer
/// i's (0 for the last layer, which writes Y). Returns the bytes of all buffers, each
/// rounded up to 64.
int64_t conv_chain_band_rows(std::span<const kernels::ref::FusedConvParams> layers,
                             int64_t band_rows, std::span<int64_t> rows);

/// Output rows of the last layer per band that ConvChain takes for `layers` (whole-image
/// parameters, in order) without a band_rows attribute: the most whose band buffers
/// (conv_chain_band_rows) fit conv_chain_band_bytes(), at least 2 where those fit
/// conv_chain_grow_bytes(), and at least 1; at most the last layer's output height.
/// Throws InvalidArgument when `layers` is empty.
int64_t conv_chain_band_height(std::span<const kernels::ref::FusedConvParams> layers);

/// Bands a buffer holds (see conv_chain_band_rows): a move of the kept rows every band
/// took 13 % of UltraFace RFB-640's time with 1-row bands.
inline constexpr int64_t kConvChainSlack = 3;

}  // namespace tern::ops
