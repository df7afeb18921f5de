// Reference block-scale ops with F8_128x4 scales: the executor stores and reads
// such scales in cuDNN / cuBLASLt's 128x4 tiles. Checked against the documented
// formula, written out independently in layout_128x4.h: where every logical scale
// of a quantize lands (row-wise and column-wise blocks, batches, padding holding
// the zero bit pattern), that a dequantize reads each scale from its tile position,
// and that quantize -> dequantize through swizzled buffers equals the NONE path
// exactly and reproduces X within half a quantization step. NONE-reordered scales
// keep the plain strided layout (compared element for element).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "harness.h"
#include "layout_128x4.h"

using namespace opgraph;
using namespace opgraph::harness;
namespace lay = opgraph::layout_128x4;

namespace {

// A distinct exponent per logical block index k (wraps after 221 blocks).
int exponent_of(std::int64_t k) { return static_cast<int>(k % 221) - 120; }

// X of `dims` whose blocks of `block` along `axis` have amax exactly 448 * 2^e (e from
// exponent_of of the block's row-major index over the scale's logical dims), every
// other element random in (-amax, amax); the amax element sits at a random spot.
Array blocks_with_known_amax(const Dims& dims, std::size_t axis, std::int64_t block, std::uint64_t seed) {
  Array x = random_array(dims, seed, -1.0, 1.0);
  Dims logical = dims;
  logical[axis] /= block;
  std::mt19937_64 rng(seed + 1);
  std::int64_t k = 0;
  std::vector<std::int64_t> xi(dims.size());
  reference::for_each_index(logical, [&](std::span<const std::int64_t> idx) {
    const double amax = 448.0 * std::ldexp(1.0, exponent_of(k++));
    const std::int64_t peak = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(block));
    std::copy(idx.begin(), idx.end(), xi.begin());
    for (std::int64_t j = 0; j < block; ++j) {
      xi[axis] = idx[axis] * block + j;
      double& v = x[x.offset(xi)];
      v = j == peak ? (rng() % 2 ? amax : -amax) : reference::round_to(DataType::FLOAT, v * amax);
    }
  });
  return x;
}

// Checks that the buffer held as `s` (dims `padded`, strides `st`) stores 2^exponent_of(k)
// for the k-th logical scale of `logical` at the documented position, the E8M0 zero
// pattern (2^-127) everywhere else, and that the NONE-reordered `plain` holds the same
// scales at their plain row-major positions.
void expect_scales_in_tiles(const Array& s, const Array& plain, const Dims& logical, const Dims& padded, const Dims& st,
                            std::size_t blocked_axis) {
  ASSERT_EQ(s.dims, padded);
  ASSERT_EQ(plain.dims, logical);
  const std::int64_t span = s.numel();
  const std::vector<double> flat = lay::storage(s, st, span);
  std::set<std::int64_t> hit;
  std::int64_t k = 0, bad = 0;
  reference::for_each_index(logical, [&](std::span<const std::int64_t> idx) {
    const double want = std::ldexp(1.0, exponent_of(k));
    const std::int64_t off = lay::offset(idx, padded, st, blocked_axis);
    hit.insert(off);
    if (flat[static_cast<std::size_t>(off)] != want && bad++ < 5)
      ADD_FAILURE() << "scale " << k << " at element " << off << ": " << flat[static_cast<std::size_t>(off)]
                    << ", want " << want;
    EXPECT_EQ(plain[k], want) << "NONE scale " << k;
    ++k;
  });
  EXPECT_EQ(static_cast<std::int64_t>(hit.size()), k) << "two logical scales share a position";
  for (std::int64_t off = 0; off < span; ++off)
    if (!hit.count(off) && flat[static_cast<std::size_t>(off)] != std::ldexp(1.0, -127) && bad++ < 10)
      ADD_FAILURE() << "padding element " << off << " holds " << flat[static_cast<std::size_t>(off)];
  EXPECT_EQ(bad, 0);
}

// `x` quantized twice with `a` into `elem` data: y with its scale s in the
// F8_128x4 tiles, y0 with its scale s0 in the plain layout; all four outputs.
struct TwoLayouts {
  TensorPtr y, s, y0, s0;
};
TwoLayouts quantize_in_both_layouts(OpGraph& g, const TensorPtr& x, const Attributes& a, DataType elem) {
  auto [y, s] = g.block_scale_quantize(x, a);
  y->set_data_type(elem).set_output(true).set_name("y");
  s->set_reordering_type(TensorReordering::F8_128x4).set_output(true).set_name("s");
  auto [y0, s0] = g.block_scale_quantize(x, a);
  y0->set_data_type(elem).set_output(true).set_name("y0");
  s0->set_output(true).set_name("s0");
  return {y, s, y0, s0};
}

}  // namespace

TEST(BlockScale128x4Ref, OracleMatchesHandDerivedPositions) {
  // [256, 8] scales: two row tiles of two column tiles each.
  EXPECT_EQ(lay::element(0, 0, 8), 0);
  EXPECT_EQ(lay::element(0, 3, 8), 3);      // columns of a row are adjacent
  EXPECT_EQ(lay::element(1, 0, 8), 16);     // rows 0..31 are 16 elements apart
  EXPECT_EQ(lay::element(32, 0, 8), 4);     // the next group of 32 rows shares those 16
  EXPECT_EQ(lay::element(127, 3, 8), 511);  // last entry of the first tile
  EXPECT_EQ(lay::element(0, 4, 8), 512);    // the next column tile follows
  EXPECT_EQ(lay::element(128, 0, 8), 1024); // row tile 1 after both column tiles of row tile 0
  EXPECT_EQ(lay::element(130, 5, 8), 1024 + 512 + 2 * 16 + 1);
  EXPECT_EQ(lay::strides({2, 256, 8}, 2), (Dims{2048, 8, 1}));
  EXPECT_EQ(lay::strides({4, 256}, 0), (Dims{1, 4}));
}

TEST(BlockScale128x4Ref, QuantizeWritesEachRowwiseScaleIntoItsTile) {
  const Dims xd{2, 130, 192};  // 6 blocks of 32 per row → scales [2, 130, 6], padded [2, 256, 8]
  Case c;
  c.name = "mxfp8_128x4_rowwise";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({2, 130, 192}, DataType::FLOAT, "x");
    auto a = Attributes().set("block_size", std::int64_t{32});
    quantize_in_both_layouts(g, x, a, DataType::FP8_E4M3);
  };
  c.fixed["x"] = blocks_with_known_amax(xd, 2, 32, 7);
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.at("y").v, v.at("y0").v);  // the data is not reordered
  expect_scales_in_tiles(v.at("s"), v.at("s0"), {2, 130, 6}, {2, 256, 8}, lay::strides({2, 256, 8}, 2), 2);
}

TEST(BlockScale128x4Ref, QuantizeWritesEachColumnwiseScaleIntoItsTile) {
  // Blocks along axis 0: scales [2, 200] padded to [4, 256]; the blocked axis 0 is the
  // contiguous column axis (strides {1, 4}), the 200 → 256 axis the row axis.
  Case c;
  c.name = "mxfp8_128x4_columnwise";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({64, 200}, DataType::FLOAT, "x");
    auto a = Attributes().set("block_size", std::int64_t{32}).set("axis", std::int64_t{0});
    quantize_in_both_layouts(g, x, a, DataType::FP8_E4M3);
  };
  c.fixed["x"] = blocks_with_known_amax({64, 200}, 0, 32, 11);
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.at("y").v, v.at("y0").v);
  expect_scales_in_tiles(v.at("s"), v.at("s0"), {2, 200}, {4, 256}, lay::strides({4, 256}, 0), 0);
}

TEST(BlockScale128x4Ref, DequantizeReadsEachScaleFromItsTilePosition) {
  // Every buffer element a distinct FLOAT scale, so a wrong position cannot match.
  Case c;
  c.name = "dq_128x4_positions";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({2, 130, 96}, DataType::FP8_E4M3, "x");
    auto s = g.tensor({2, 256, 4}, DataType::FLOAT, "s");
    s->set_reordering_type(TensorReordering::F8_128x4);
    g.block_scale_dequantize(x, s, Attributes().set("block_size", std::vector<std::int64_t>{32}))
        ->set_output(true).set_name("y").set_data_type(DataType::DOUBLE);
  };
  c.range = {-4.0, 4.0};
  Array held({2, 256, 4});
  for (std::int64_t i = 0; i < held.numel(); ++i) held[i] = 1.0 + static_cast<double>(i) / 4096.0;
  c.fixed["s"] = held;
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  const Array logical = lay::logical(v.at("s"), lay::strides({2, 256, 4}, 2), 2);
  const Array& x = v.at("x");
  const Array& y = v.at("y");
  std::int64_t differs_from_plain = 0;
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t r = 0; r < 130; ++r)
      for (std::int64_t k = 0; k < 96; ++k) {
        ASSERT_EQ(y.at({b, r, k}), x.at({b, r, k}) * logical.at({b, r, k / 32})) << b << "," << r << "," << k;
        differs_from_plain += y.at({b, r, k}) != x.at({b, r, k}) * held.at({b, r, k / 32});
      }
  EXPECT_GT(differs_from_plain, 0);  // the plain (unswizzled) reading gives other values
}

TEST(BlockScale128x4Ref, RoundTripThroughSwizzledBuffersEqualsThePlainPath) {
  struct Fmt { DataType elem; std::int64_t block; std::int64_t axis; Dims x; };
  for (Fmt f : {Fmt{DataType::FP4_E2M1, 16, -1, {2, 150, 64}}, Fmt{DataType::FP8_E4M3, 32, -1, {2, 150, 64}},
                Fmt{DataType::FP8_E4M3, 32, 0, {64, 40}}}) {
    SCOPED_TRACE(std::string(to_string(f.elem)) + " x " + std::to_string(f.block) + " axis " + std::to_string(f.axis));
    Case c;
    c.name = "rt_128x4_" + std::string(to_string(f.elem)) + std::to_string(f.axis);
    c.seed = 100 + static_cast<std::uint64_t>(f.block) + static_cast<std::uint64_t>(f.axis + 1);
    c.build = [f](OpGraph& g) {
      auto x = g.tensor(f.x, DataType::HALF, "x");
      auto a = Attributes().set("block_size", f.block).set("axis", f.axis);
      std::vector<std::int64_t> dq_blocks(f.x.size(), 1);
      dq_blocks[f.axis < 0 ? f.x.size() - 1 : static_cast<std::size_t>(f.axis)] = f.block;
      auto dq = Attributes().set("block_size", dq_blocks);
      const TwoLayouts q = quantize_in_both_layouts(g, x, a, f.elem);
      g.block_scale_dequantize(q.y, q.s, dq)->set_output(true).set_name("r").set_data_type(DataType::DOUBLE);
      g.block_scale_dequantize(q.y0, q.s0, dq)->set_output(true).set_name("r0").set_data_type(DataType::DOUBLE);
    };
    c.range = {-20.0, 20.0};
    Values v = check_case(c);
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v.at("r").v, v.at("r0").v);  // same logical scales, read back from the tiles
    const Array& x = v.at("x");
    const Array& r = v.at("r");
    double worst = 0, amax = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      worst = std::max(worst, std::abs(r[i] - x[i]));
      amax = std::max(amax, std::abs(x[i]));
    }
    EXPECT_GT(amax, 1.0);
    // A sanity bound (the plain path's exact half-step bound is test_block_scale_ref's): half a
    // step at the top binade times a scale rounded up by at most 2x, relative to the amax.
    const double rel = f.elem == DataType::FP4_E2M1 ? 1.0 / 3 : 1.0 / 14;
    EXPECT_LE(worst, rel * amax);
  }
}
