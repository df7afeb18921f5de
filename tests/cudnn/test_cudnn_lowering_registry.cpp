// tests/cudnn/test_cudnn_lowering_registry.cpp — the cuDNN lowerings are
// registered per op record: walking the registry, every backend-lowerable op has
// a registration (a lowering, or the reason it declines), no engine-only op has
// one, and lowered_ops() is exactly the ops with a lowering.
#include <gtest/gtest.h>

#include <algorithm>

#include "engines/cudnn/lowering_internal.h"

namespace opgraph {
namespace {

using engines::cudnn::lowered_ops;
using engines::cudnn::detail::find_lowering;

TEST(CudnnLoweringRegistry, EveryLowerableOpIsRegisteredAndNoEngineOnlyOp) {
  std::size_t lowered = 0, declined = 0;
  for (const OpSpec* s : all_op_specs()) {
    const auto* r = find_lowering(*s);
    const bool listed = std::find(lowered_ops().begin(), lowered_ops().end(), s->name) != lowered_ops().end();
    if (s->mechanism == OpMechanism::ENGINE_ONLY) {
      EXPECT_EQ(r, nullptr) << "engine-only op '" << s->name << "' has a cuDNN lowering registered";
      EXPECT_FALSE(listed) << s->name;
      continue;
    }
    ASSERT_NE(r, nullptr) << "lowerable op '" << s->name << "' has no cuDNN lowering registration";
    EXPECT_EQ(r->op, op_index(*s)) << s->name;
    if (r->fn) {
      ++lowered;
      EXPECT_TRUE(r->missing.empty()) << s->name;
    } else {
      ++declined;
      EXPECT_FALSE(r->missing.empty()) << "op '" << s->name << "' is registered without a lowering and without a reason";
    }
    EXPECT_EQ(listed, r->fn != nullptr) << s->name;
  }
  EXPECT_EQ(lowered, lowered_ops().size());
  EXPECT_EQ(lowered, 35u);  // 3 core + 10 norms + 4 batchnorm pieces + 3 conv + 9 tensor ops + 6 SDPA
  EXPECT_EQ(declined, 5u);  // slice, diagonal_band_mask, rope, rope_backward, moe_grouped_matmul_bwd
}

}  // namespace
}  // namespace opgraph
