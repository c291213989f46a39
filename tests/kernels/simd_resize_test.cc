// The vector nearest resize (kernels/resize) against the reference
// (ref::f32_resize_nearest), bit for bit, on every SIMD target this machine can dispatch
// to: NCHW tensors resized along H and W by 1x, 2x, 3x, 4x and 8x, by fractions (5 -> 7,
// 24 -> 41) and down (16 -> 5, 37 -> 9), W from 1 to 37 (whole vectors, tails, rows shorter
// than a vector), index tables from the coordinate and rounding modes the op uses,
// arbitrary tables (lanes that go backwards), row ranges that start and end anywhere,
// rank 1, and elements of 3 to 20 floats (inner > 1: NCHWc's lanes). The last rows'
// vector loads must stay inside x: x ends where an inaccessible page begins.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/resize/resize.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::ResizeCoordMode;
using kernels::ref::ResizeNearestMode;
using kernels::ref::ResizeNearestParams;

// The index table of one dim resized from `in` to `out` as the op builds it.
std::vector<int64_t> table(int64_t in, int64_t out, ResizeCoordMode coord, ResizeNearestMode mode) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  std::vector<int64_t> t(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const double xo =
        kernels::ref::resize_source_coord(coord, o, scale, static_cast<double>(out), in);
    t[o] = kernels::ref::resize_nearest_index(mode, xo, scale, in);
  }
  return t;
}

// n floats that end where an inaccessible page begins: a load past x's end faults (the
// kernel's vector loads may pass their row, never x), in any build, not only under
// AddressSanitizer.
class EndsAtGuardPage {
 public:
  explicit EndsAtGuardPage(int64_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    size_ = (bytes + page - 1) / page * page + page;
    base_ = static_cast<char*>(
        mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    if (mprotect(base_ + size_ - page, page, PROT_NONE) != 0) {
      throw std::runtime_error("mprotect failed");
    }
    data_ = reinterpret_cast<float*>(base_ + size_ - page - bytes);
  }
  ~EndsAtGuardPage() { munmap(base_, size_); }
  EndsAtGuardPage(const EndsAtGuardPage&) = delete;
  EndsAtGuardPage& operator=(const EndsAtGuardPage&) = delete;
  float* data() const { return data_; }

 private:
  char* base_ = nullptr;
  size_t size_ = 0;
  float* data_ = nullptr;
};

struct Case {
  std::vector<int64_t> in, out;
  std::vector<std::vector<int64_t>> tables;
  int64_t inner = 1;
};

// Runs both on rows [begin, end) and expects the same bits everywhere (the sentinel
// outside the rows).
void check(const Case& k, int64_t begin, int64_t end, uint32_t seed) {
  const int rank = static_cast<int>(k.in.size());
  std::vector<const int64_t*> ptrs;
  for (const auto& t : k.tables) ptrs.push_back(t.data());
  const ResizeNearestParams p{rank, k.in.data(), k.out.data(), ptrs.data(), k.inner};
  int64_t x_size = k.inner, y_size = k.inner;
  for (int d = 0; d < rank; ++d) x_size *= k.in[d], y_size *= k.out[d];
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  EndsAtGuardPage buffer(x_size);
  float* x = buffer.data();
  for (int64_t i = 0; i < x_size; ++i) x[i] = u(rng);
  std::vector<float> want(static_cast<size_t>(y_size), test::kSentinel), got = want;
  kernels::ref::f32_resize_nearest(p, x, want.data(), begin, end);
  kernels::f32_resize_nearest(p, x, got.data(), begin, end);
  ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0);
}

// Rows of an NCHW case: every line along W.
int64_t rows(const Case& k) {
  int64_t r = 1;
  for (size_t d = 0; d + 1 < k.out.size(); ++d) r *= k.out[d];
  return r;
}

TEST(SimdResize, NearestNchwMatchesReferenceOnEveryTarget) {
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1},  {1, 8},   {3, 3},   {5, 10},  {6, 18},
                                               {4, 16}, {3, 24},  {5, 7},   {24, 41}, {16, 5},
                                               {37, 9}, {17, 34}, {37, 74}, {12, 96}, {48, 96}};
  const std::pair<ResizeCoordMode, ResizeNearestMode> modes[] = {
      {ResizeCoordMode::kHalfPixel, ResizeNearestMode::kRoundPreferFloor},
      {ResizeCoordMode::kAsymmetric, ResizeNearestMode::kFloor},
      {ResizeCoordMode::kAlignCorners, ResizeNearestMode::kRoundPreferCeil},
      {ResizeCoordMode::kAsymmetric, ResizeNearestMode::kSimple}};
  test::for_each_simd_target([&](const std::string&, int lanes) {
    uint32_t seed = static_cast<uint32_t>(lanes);
    for (auto [coord, mode] : modes) {
      for (auto [in_w, out_w] : sizes) {
        // [2, 3, H, W]: H resized 3 -> 7 (rows repeat), W as given.
        Case k{{2, 3, 3, in_w}, {2, 3, 7, out_w}, {}, 1};
        k.tables = {{0, 1}, {0, 1, 2}, table(3, 7, coord, mode), table(in_w, out_w, coord, mode)};
        SCOPED_TRACE(testing::Message()
                     << "W " << in_w << " -> " << out_w << ", modes " << static_cast<int>(coord)
                     << "/" << static_cast<int>(mode));
        const int64_t r = rows(k);
        check(k, 0, r, ++seed);
        check(k, 1, r - 1, ++seed);  // starts in a run of repeated rows
        check(k, r / 2, r, ++seed);
      }
    }
  });
}

TEST(SimdResize, NearestArbitraryTablesRank1AndNchwc) {
  test::for_each_simd_target([](const std::string&, int lanes) {
    // W 40 -> 40 with a table that runs backwards and jumps: no vector lies in one span.
    std::vector<int64_t> back(40);
    for (int64_t o = 0; o < 40; ++o) back[o] = (39 - o) * (o % 3 == 0 ? 1 : 0);
    check(Case{{2, 40}, {3, 40}, {{1, 0, 1}, back}, 1}, 0, 3, 1);
    // Mixed: the first vector's indices in one span, later ones not.
    std::vector<int64_t> mixed(64);
    for (int64_t o = 0; o < 64; ++o) mixed[o] = o < lanes ? o / 2 : 63 - o;
    check(Case{{1, 64}, {2, 64}, {{0, 0}, mixed}, 1}, 0, 2, 2);
    // Rank 1: one row.
    check(Case{{21},
               {42},
               {table(21, 42, ResizeCoordMode::kAsymmetric, ResizeNearestMode::kFloor)},
               1},
          0, 1, 3);
    // NCHWc: [1, 2, 3, 5] elements of `inner` floats (the op folds the lanes into inner):
    // whole vectors of the target (16, 8, 4 on AVX-512), 128-bit ones (12, 20), and the
    // reference's loop (3).
    for (int64_t inner : {16, 8, 4, 12, 20, 3}) {
      SCOPED_TRACE(testing::Message() << "inner " << inner);
      check(Case{{1, 2, 3, 5},
                 {1, 2, 6, 10},
                 {{0},
                  {0, 1},
                  table(3, 6, ResizeCoordMode::kHalfPixel, ResizeNearestMode::kFloor),
                  table(5, 10, ResizeCoordMode::kHalfPixel, ResizeNearestMode::kFloor)},
                 inner},
            1, 11, 4);
    }
  });
}

}  // namespace
}  // namespace tern
