// tests/plan/test_knobs.cpp — the knob vocabulary, its backend mapping, knob text,
// and DeviceProperties JSON.
#include <gtest/gtest.h>

#include "opgraph/device_properties.h"
#include "opgraph/knobs.h"

namespace opgraph {
namespace {

TEST(Knobs, BandsAndBackendMapping) {
  EXPECT_EQ(static_cast<int>(KnobType::SWIZZLE), 1);
  EXPECT_EQ(static_cast<int>(KnobType::TILE_M), 26);
  EXPECT_EQ(static_cast<int>(KnobType::TILE_CGA), 32);
  EXPECT_EQ(static_cast<int>(KnobType::SCHED_POLICY), 1000);
  // cudnnBackendKnobType_t values (cuDNN 9): the numbering differs from ours.
  EXPECT_EQ(to_backend(KnobType::SWIZZLE).value(), 1);
  EXPECT_EQ(to_backend(KnobType::EDGE).value(), 4);
  EXPECT_EQ(to_backend(KnobType::TILE_M).value(), 40);
  EXPECT_EQ(to_backend(KnobType::SWAP_AB).value(), 43);
  EXPECT_EQ(to_backend(KnobType::TILE_CGA).value(), 26);
  for (const auto& [name, k] : all_knob_types()) {
    auto b = to_backend(k);
    if (is_frontend_knob(k)) {
      EXPECT_EQ(b.status().code(), ErrorCode::INVALID_VALUE) << name;
      EXPECT_NE(b.status().message().find("frontend-band"), std::string::npos);
    } else if (b.is_good()) {
      EXPECT_EQ(knob_type_from_backend(b.value()), k) << name;  // the mapping is a bijection where defined
    }
    EXPECT_EQ(knob_type_from_string(name), k);
    EXPECT_EQ(to_string(k), name);
  }
  EXPECT_EQ(to_backend(KnobType::NOT_SET).status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_FALSE(knob_type_from_backend(0).has_value());  // SPLIT_K: deprecated, unmapped
}

TEST(Knobs, TextIsSortedByNameAndParsesBack) {
  Knobs k{{KnobType::TILE_M, 128}, {KnobType::SPLIT_KV, 2}, {KnobType::CTA_GROUP, 1}};
  EXPECT_EQ(knobs_to_string(k), "CTA_GROUP=1, SPLIT_KV=2, TILE_M=128");
  EXPECT_EQ(knobs_from_string(knobs_to_string(k)).value(), k);
  EXPECT_EQ(knobs_from_string("TILE_M=64,SWAP_AB=1").value(), (Knobs{{KnobType::TILE_M, 64}, {KnobType::SWAP_AB, 1}}));
  EXPECT_TRUE(knobs_from_string("").value().empty());
  EXPECT_EQ(knobs_from_string("TILE_Q=1").status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_EQ(knobs_from_string("TILE_M=x").status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_EQ(knobs_from_string("TILE_M").status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_EQ(knobs_from_string("TILE_M=1,TILE_M=2").status().code(), ErrorCode::INVALID_VALUE);
}

TEST(Knobs, HeurModeNames) {
  EXPECT_EQ(heur_mode_from_string("fallback"), HeurMode::FALLBACK);
  EXPECT_EQ(heur_mode_from_string("A"), HeurMode::A);
  EXPECT_EQ(heur_mode_from_string("OPENSOURCE"), HeurMode::OPENSOURCE);
  EXPECT_FALSE(heur_mode_from_string("C").has_value());
}

TEST(DevicePropertiesJson, RoundTripsAndRefusesBadInput) {
  DeviceProperties p;
  p.major = 9;
  p.minor = 0;
  p.sm_count = 132;
  p.l2_bytes = 50331648;
  p.smem_per_block_optin = 232448;
  p.name = "NVIDIA H200";
  EXPECT_EQ(p.sm_version(), 90);
  auto back = DeviceProperties::from_json(p.to_json());
  ASSERT_TRUE(back.is_good()) << back.status().to_string();
  EXPECT_EQ(back.value(), p);
  EXPECT_EQ(DeviceProperties::from_json("{").status().code(), ErrorCode::UNSUPPORTED_GRAPH_FORMAT);
  EXPECT_EQ(DeviceProperties::from_json(R"({"major":9})").status().code(), ErrorCode::UNSUPPORTED_GRAPH_FORMAT);
  auto extra = DeviceProperties::from_json(
      R"({"major":9,"minor":0,"sm_count":1,"l2_bytes":1,"smem_per_block_optin":1,"clock":3})");
  EXPECT_NE(extra.status().message().find("clock"), std::string::npos);
}

}  // namespace
}  // namespace opgraph
