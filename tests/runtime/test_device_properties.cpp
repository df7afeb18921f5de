// DeviceProperties without a device: target architectures and JSON.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "opgraph/device_properties.h"

using namespace opgraph;

TEST(DeviceProperties, ForArchSm90aHasH200Defaults) {
  auto p = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(p->major, 9);
  EXPECT_EQ(p->minor, 0);
  EXPECT_EQ(p->arch(), "sm_90a");
  EXPECT_EQ(p->name, "NVIDIA H200");
  EXPECT_EQ(p->sm_count, 132);
  EXPECT_EQ(p->l2_bytes, 60ll << 20);
  EXPECT_EQ(p->smem_per_block_optin, 227ll << 10);
  auto plain = DeviceProperties::for_arch("sm_90");
  ASSERT_TRUE(plain.is_good());
  EXPECT_EQ(*plain, *p);  // the suffix is the kernels' choice, not a device fact
  EXPECT_EQ(plain->arch(), "sm_90a");
}

TEST(DeviceProperties, ForArchOtherTargetsLeaveFactsUnknown) {
  auto p = DeviceProperties::for_arch("sm_100a");
  ASSERT_TRUE(p.is_good());
  EXPECT_EQ(p->major, 10);
  EXPECT_EQ(p->minor, 0);
  EXPECT_EQ(p->arch(), "sm_100a");
  EXPECT_EQ(p->sm_count, 0);
  EXPECT_TRUE(p->name.empty());
  auto q = DeviceProperties::for_arch("sm_86");
  ASSERT_TRUE(q.is_good());
  EXPECT_EQ(q->major, 8);
  EXPECT_EQ(q->minor, 6);
  EXPECT_EQ(q->arch(), "sm_86");
}

TEST(DeviceProperties, ForArchRefusesMalformedNames) {
  for (const char* bad : {"", "sm_", "sm_9", "compute_90", "sm_90b", "sm_9000", "sm_90aa", "sm_x0", "sm_20", "SM_90"}) {
    auto p = DeviceProperties::for_arch(bad);
    ASSERT_TRUE(p.is_bad()) << bad;
    EXPECT_EQ(p.status().code(), ErrorCode::INVALID_VALUE);
    EXPECT_NE(p.status().message().find("sm_XY"), std::string::npos) << p.status().message();
  }
}

TEST(DeviceProperties, ArchOfReadPropertiesAndJsonRoundTrip) {
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 20; ++i) {
    DeviceProperties p;
    p.major = std::uniform_int_distribution<int>(5, 12)(rng);
    p.minor = std::uniform_int_distribution<int>(0, 9)(rng);
    p.sm_count = std::uniform_int_distribution<int>(1, 200)(rng);
    p.l2_bytes = std::uniform_int_distribution<std::int64_t>(1, 1ll << 40)(rng);
    p.smem_per_block_optin = std::uniform_int_distribution<std::int64_t>(1, 1 << 20)(rng);
    p.name = "GPU \"" + std::to_string(rng()) + "\" \\ x";
    const bool specific = (p.major == 9 && p.minor == 0) || p.major == 10;
    EXPECT_EQ(p.arch(), "sm_" + std::to_string(p.major) + std::to_string(p.minor) + (specific ? "a" : ""));
    auto target = DeviceProperties::for_arch(p.arch());
    ASSERT_TRUE(target.is_good()) << p.arch();
    EXPECT_EQ(target->arch(), p.arch());
    auto back = DeviceProperties::from_json(p.to_json());
    ASSERT_TRUE(back.is_good()) << back.status().message();
    EXPECT_EQ(*back, p);
  }
}

TEST(DeviceProperties, OrdinalTravelsThroughJsonOnlyWhenNamed) {
  auto p = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(p.is_good());
  EXPECT_EQ(p->ordinal, -1);  // a target made without a device names none
  EXPECT_EQ(p->to_json().find("ordinal"), std::string::npos) << p->to_json();
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 10; ++i) {
    DeviceProperties q = *p;
    q.ordinal = std::uniform_int_distribution<int>(0, kMaxDeviceOrdinal)(rng);
    const std::string json = q.to_json();
    EXPECT_NE(json.find("\"ordinal\":" + std::to_string(q.ordinal)), std::string::npos) << json;
    auto back = DeviceProperties::from_json(json);
    ASSERT_TRUE(back.is_good()) << back.status().message();
    EXPECT_EQ(*back, q);
    EXPECT_NE(*back, *p);  // the same GPU model on another ordinal is another target
  }
}

TEST(DeviceProperties, FromJsonRefusesABadOrdinalNamingIt) {
  const std::string base = R"({"major":9,"minor":0,"sm_count":132,"l2_bytes":1,"smem_per_block_optin":1,"ordinal":)";
  const std::vector<std::string> bads = {"-1", "1.5", "\"0\"", std::to_string(std::int64_t{kMaxDeviceOrdinal} + 1)};
  for (const std::string& bad : bads) {
    auto r = DeviceProperties::from_json(base + bad + "}");
    ASSERT_TRUE(r.is_bad()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::UNSUPPORTED_GRAPH_FORMAT);
    EXPECT_NE(r.status().message().find("\"ordinal\""), std::string::npos) << r.status().message();
  }
}
