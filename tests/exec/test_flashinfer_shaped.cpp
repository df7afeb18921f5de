// FlashInfer-shaped bindings (seed, "The variant pack is normalized once"):
// packed fp4 data and e4m3 F8_128x4 scales bound as uint8, the data as a 2-D
// matrix for a [1, m, k] tensor, the scales as one flat blob, a 0-d scalar for a
// (1, 1, 1) tensor, a 2-D output. The reference engine accepts them and computes
// bit for bit what it computes from buffers bound exactly as declared.
#include <gtest/gtest.h>

#include <random>

#include "opgraph/graph.h"

namespace opgraph {
namespace {

constexpr std::int64_t M = 128, K = 64;

struct Dequant {
  Graph g;
  TensorPtr x, s, alpha, y;
  Dequant() {
    g.set_name("dq").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    x = g.tensor({1, M, K}, DataType::FP4_E2M1, "x");
    s = g.tensor({1, M, K / 16}, DataType::FP8_E4M3, "s");
    s->set_reordering_type(TensorReordering::F8_128x4);
    alpha = g.tensor({1, 1, 1}, DataType::FLOAT, "alpha");
    auto d = g.block_scale_dequantize(x, s, Attributes().set("block_size", std::vector<std::int64_t>{1, 1, 16}));
    y = g.mul(d, alpha);
    y->set_output(true).set_name("y");
  }
};

TEST(FlashInferShaped, BindingsAreAcceptedAndComputeWhatDeclaredBindingsDo) {
  Dequant d;
  Status v = d.g.create_execution_plans({HeurMode::FALLBACK});
  ASSERT_TRUE(v.is_good()) << v.to_string();
  ASSERT_TRUE(d.g.build_plans().is_good());
  ASSERT_EQ(d.s->get_dim(), (std::vector<std::int64_t>{1, M, K / 16}));
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> data(M * K / 2), scales(M * K / 16);
  for (auto& b : data) b = static_cast<std::uint8_t>(byte(rng));
  for (auto& b : scales) b = static_cast<std::uint8_t>(0x30 + byte(rng) % 0x20);  // e4m3 in [2^-3, 2^1): finite
  float alpha = std::uniform_real_distribution<float>(0.5f, 2.f)(rng);
  std::vector<float> want(M * K, -1.f), got(M * K, -2.f);

  VariantPack declared;  // exactly as declared: typed, declared extents
  declared.set(d.x, OperandBuffer::make(data.data(), {1, M, K / 2}, {}, DataType::UINT8))
      .set(d.s, OperandBuffer::make(scales.data(), {1, M, K / 16}, {}, DataType::FP8_E4M3))
      .set(d.alpha, OperandBuffer::make(&alpha, {1, 1, 1}))
      .set(d.y, OperandBuffer::make(want.data(), {1, M, K}));
  Status s0 = d.g.execute(declared);
  ASSERT_TRUE(s0.is_good()) << s0.to_string();

  VariantPack flashinfer;  // 2-D uint8 data, flat uint8 scale blob, 0-d scalar, 2-D output
  flashinfer.set(d.x, OperandBuffer::make(data.data(), {M, K / 2}, {}, DataType::UINT8))
      .set(d.s, OperandBuffer::make(scales.data(), {M * K / 16}, {}, DataType::UINT8))
      .set(d.alpha, OperandBuffer::make(&alpha, std::span<const std::int64_t>{}))
      .set(d.y, OperandBuffer::make(got.data(), {M, K}));
  Status s1 = d.g.execute(flashinfer);
  ASSERT_TRUE(s1.is_good()) << s1.to_string();
  EXPECT_EQ(got, want);
  int nonzero = 0;
  for (float f : want) nonzero += f != 0.f;
  EXPECT_GT(nonzero, M * K / 2);  // the inputs were not degenerate

  // A uint8 data buffer of declared extents reads as fp4 too; a half-size blob is refused naming 's'.
  VariantPack small = flashinfer;
  small.set(d.s, OperandBuffer::make(scales.data(), {M * K / 32}, {}, DataType::UINT8));
  Status s2 = d.g.execute(small);
  EXPECT_EQ(s2.code(), ErrorCode::INVALID_VARIANT_PACK);
  EXPECT_NE(s2.message().find("'s'"), std::string::npos) << s2.message();
}

}  // namespace
}  // namespace opgraph
