// Concatenation of NCHWc tensors along channels that do not fill whole blocks (Highway,
// dispatched at run time). See README.md in this folder; the reference twin is
// ref::f32_nchwc_copy_channels (kernels/reference/concat.h).
#pragma once

#include <cstdint>

#include "kernels/reference/concat.h"

namespace tern::kernels {

/// x's channels to channels [offset, offset + x_channels) of y (ref::ChannelCopy), pixels
/// [pixel_begin, pixel_end) of every image: what ref::f32_nchwc_copy_channels writes, bit
/// for bit; y's other lanes keep their values, x's padded lanes are loaded but never
/// stored. Where the block is the target's vector (c lanes), each x block goes per pixel
/// into one or two y blocks: a load, a lane table lookup (lane i takes x's lane i - offset
/// mod c) and a blend into y's lanes for each; elsewhere (a target of another width), the
/// reference's element loop.
void f32_nchwc_copy_channels(const ref::ChannelCopy& p, const float* x, float* y,
                             int64_t pixel_begin, int64_t pixel_end);

}  // namespace tern::kernels
