// Reference block-scale quantize/dequantize: for MXFP8 (E4M3, E5M2 x 32 with E8M0
// scales), MXFP4 (E2M1 x 32, E8M0) and NVFP4 (E2M1 x 16, E4M3 scales) every scale is
// the smallest representable value >= amax / max_elem, and quantize → dequantize
// reproduces X within half a quantization step (half an ulp of the element type at
// |x| / scale, times the scale; that bound is the tolerance, plus 1e-12 relative slack);
// per-dim dequantize blocks with is_negative_scale are exact. (F8_128x4 scales:
// test_block_scale_128x4_ref.cpp.)
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"

using namespace opgraph;
using namespace opgraph::harness;
using reference::decode_bits;
using reference::encode_bits;
using reference::round_to;

namespace {

// Half the spacing of element type t's values around q >= 0 (subnormals included).
double half_step(DataType t, double q) {
  int mbits = t == DataType::FP8_E4M3 ? 3 : t == DataType::FP8_E5M2 ? 2 : 1;
  int emin = t == DataType::FP8_E4M3 ? -6 : t == DataType::FP8_E5M2 ? -14 : 0;
  int e = q > 0 ? std::max(static_cast<int>(std::floor(std::log2(q))), emin) : emin;
  return 0.5 * std::ldexp(1.0, e - mbits);
}

struct Fmt { DataType elem; std::int64_t block; DataType scale; double max_elem; };

}  // namespace

TEST(BlockScaleRef, ScalesAreMinimalAndRoundTripErrorIsHalfAStep) {
  for (Fmt f : {Fmt{DataType::FP8_E4M3, 32, DataType::FP8_E8M0, 448}, Fmt{DataType::FP8_E5M2, 32, DataType::FP8_E8M0, 57344},
                Fmt{DataType::FP4_E2M1, 32, DataType::FP8_E8M0, 6}, Fmt{DataType::FP4_E2M1, 16, DataType::FP8_E4M3, 6}}) {
    SCOPED_TRACE(std::string(to_string(f.elem)) + " x " + std::to_string(f.block));
    Case c;
    c.name = "bsq_" + std::string(to_string(f.elem)) + "_" + std::to_string(f.block);
    c.build = [f](OpGraph& g) {
      auto x = g.tensor({4, 64}, DataType::FLOAT, "x");
      auto [y, s] = g.block_scale_quantize(x, Attributes().set("block_size", f.block));
      y->set_data_type(f.elem).set_output(true).set_name("y");
      s->set_output(true).set_name("s");
      g.block_scale_dequantize(y, s, Attributes().set("block_size", std::vector<std::int64_t>{f.block}))
          ->set_output(true).set_name("r").set_data_type(DataType::DOUBLE);
    };
    Array x = random_array({4, 64}, 31, -1.0, 1.0);
    for (std::int64_t i = 0; i < x.numel(); ++i) x[i] = round_to(DataType::FLOAT, x[i] * std::ldexp(1.0, 3 * static_cast<int>(i / 64) - 4));
    c.fixed["x"] = x;
    Values v = check_case(c);
    ASSERT_FALSE(v.empty());
    const Array& y = v.at("y");
    const Array& s = v.at("s");
    const Array& r = v.at("r");
    ASSERT_EQ(s.dims, (Dims{4, 64 / f.block}));
    for (std::int64_t row = 0; row < 4; ++row)
      for (std::int64_t b = 0; b < 64 / f.block; ++b) {
        double amax = 0;
        for (std::int64_t k = 0; k < f.block; ++k) amax = std::max(amax, std::abs(x.at({row, b * f.block + k})));
        const double sc = s.at({row, b}), need = amax / f.max_elem;
        EXPECT_EQ(round_to(f.scale, sc), sc);  // representable
        EXPECT_GE(sc, need);
        const double below = f.scale == DataType::FP8_E8M0 ? sc / 2 : decode_bits(f.scale, encode_bits(f.scale, sc) - 1);
        EXPECT_LT(below, need) << "scale " << sc << " is not the smallest >= " << need;
        for (std::int64_t k = 0; k < f.block; ++k) {
          const std::int64_t j = b * f.block + k;
          const double xv = x.at({row, j}), bound = half_step(f.elem, std::abs(xv) / sc) * sc * (1 + 1e-12);
          EXPECT_EQ(round_to(f.elem, y.at({row, j})), y.at({row, j}));
          EXPECT_LE(std::abs(y.at({row, j}) * sc - xv), bound) << "x " << xv << " scale " << sc;
          EXPECT_LE(std::abs(r.at({row, j}) - xv), bound);
          EXPECT_EQ(r.at({row, j}), y.at({row, j}) * sc);
        }
      }
  }
}

TEST(BlockScaleRef, DequantizePerDimBlocksWithNegativeScale) {
  Case c;
  c.name = "dq_2d";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({4, 6}, DataType::FP8_E4M3, "x");
    auto s = g.tensor({2, 2}, DataType::FLOAT, "s");
    g.block_scale_dequantize(x, s, Attributes().set("block_size", std::vector<std::int64_t>{2, 3}).set("is_negative_scale", true))
        ->set_output(true).set_name("y").set_data_type(DataType::DOUBLE);
  };
  c.range = {-8.0, 8.0};
  c.ranges["s"] = {0.1, 4.0};
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 6; ++j) EXPECT_EQ(v.at("y").at({i, j}), -v.at("x").at({i, j}) * v.at("s").at({i / 2, j / 3}));
}

TEST(BlockScaleRef, TransposedOutputHoldsTheSameLogicalValues) {
  Case c;
  c.name = "mxfp8_transpose";
  c.build = [](OpGraph& g) {
    auto x = g.tensor({3, 64}, DataType::BFLOAT16, "x");
    auto a = Attributes().set("block_size", std::int64_t{32});
    auto [y, s] = g.block_scale_quantize(x, Attributes(a).set("transpose", true));
    y->set_data_type(DataType::FP8_E5M2).set_output(true).set_name("yt");
    s->set_output(true).set_name("st");
    auto [y2, s2] = g.block_scale_quantize(x, a);
    y2->set_data_type(DataType::FP8_E5M2).set_output(true).set_name("y");
    s2->set_output(true).set_name("s");
  };
  c.range = {-100.0, 100.0};
  Values v = check_case(c);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.at("yt").v, v.at("y").v);  // column-major storage, same logical tensor
  EXPECT_EQ(v.at("st").v, v.at("s").v);
}
