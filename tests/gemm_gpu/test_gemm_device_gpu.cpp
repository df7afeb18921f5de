// Device ordinals on the GPU (part of test_gemm_gpu; run on the H200 only, where
// device 1 does not exist): nothing silently falls back to device 0.
//  * the public device API refuses an ordinal that does not exist, naming it, and
//    round-trips memory on device 0;
//  * the gemm engine builds on the device its planning target names: a target
//    naming a device that does not exist is refused at build (INVALID_CUDA_DEVICE),
//    and no runtime is opened for it;
//  * a plan built on device 0 refuses an execute whose handle names another device,
//    before launching (the poisoned output stays poisoned); on its own device it
//    runs and matches the reference.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "engines/gemm/gemm_engine.h"
#include "gemm_gpu/gemm_gpu_fixture.h"
#include "opgraph/device.h"

using namespace opgraph;
using namespace opgraph::gemm_testing;

namespace {

Result<std::unique_ptr<CompiledPlan>> build_for(const Engine& engine, const OpGraph& g, const DeviceProperties& target) {
  FactsCache facts(g, PlanTarget{target});
  PlanContext ctx{&facts};
  OPGRAPH_CHECK(engine.check_support(g, ctx));
  return build_direct(engine, g, PlanConfig{engine.id(), gemm::knobs_of(gemm::GemmConfig{}), {}, -1}, ctx);
}

GemmCase small_case() {
  return GemmCase{1, 128, 64, 256, false, false, DataType::BFLOAT16, DataType::BFLOAT16, {}};
}

class GemmGpuDevice : public GemmGpuFixture {};

}  // namespace

TEST_F(GemmGpuDevice, ADeviceThatDoesNotExistIsRefusedByThePublicApi) {
  auto count = device_count();
  ASSERT_TRUE(count.is_good()) << count.status().message();
  ASSERT_GE(*count, 1);
  const std::string named = "device " + std::to_string(*count) + " does not exist";
  auto props = read_device(*count);
  ASSERT_TRUE(props.is_bad());
  EXPECT_EQ(props.status().code(), ErrorCode::INVALID_CUDA_DEVICE);
  EXPECT_NE(props.status().message().find(named), std::string::npos) << props.status().message();
  auto dev = Device::open(*count);
  ASSERT_TRUE(dev.is_bad());
  EXPECT_EQ(dev.status().code(), ErrorCode::INVALID_CUDA_DEVICE);
  // Device 0 itself: its ordinal recorded, memory round-tripped.
  auto zero = Device::open(0);
  ASSERT_TRUE(zero.is_good()) << zero.status().message();
  EXPECT_EQ(zero->ordinal(), 0);
  EXPECT_EQ(zero->properties().ordinal, 0);
  std::mt19937 rng(std::random_device{}());
  std::vector<unsigned char> in(4099), out(in.size(), 0);
  for (auto& b : in) b = static_cast<unsigned char>(rng());
  auto mem = DeviceMemory::allocate(*zero, in.size());
  ASSERT_TRUE(mem.is_good()) << mem.status().message();
  ASSERT_TRUE(mem->upload(in.data(), in.size()).is_good());
  ASSERT_TRUE(mem->download(out.data(), out.size()).is_good());
  EXPECT_EQ(in, out);
  EXPECT_EQ(mem->upload(in.data(), in.size() + 1).code(), ErrorCode::INVALID_VALUE);
}

TEST_F(GemmGpuDevice, ATargetOnADeviceThatDoesNotExistIsRefusedAtBuildNotBuiltOnDevice0) {
  auto count = device_count();
  ASSERT_TRUE(count.is_good()) << count.status().message();
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  OpGraph g = build_case(small_case());
  ASSERT_TRUE(g.validate().is_good());
  DeviceProperties target = gpu().props;  // device 0's figures, another device's ordinal
  target.ordinal = *count;
  auto plan = build_for(*engine, g, target);
  ASSERT_TRUE(plan.is_bad()) << "built a plan for device " << *count << " (it does not exist): on device 0?";
  EXPECT_EQ(plan.status().code(), ErrorCode::INVALID_CUDA_DEVICE) << plan.status().to_string();
  EXPECT_NE(plan.status().message().find("device " + std::to_string(*count) + " does not exist"), std::string::npos)
      << plan.status().message();
  EXPECT_EQ(gemm::shared_runtime_if_open(*count), nullptr);
}

TEST_F(GemmGpuDevice, APlanRefusesAHandleOnAnotherDeviceAndRunsOnItsOwn) {
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  const GemmCase c = small_case();
  OpGraph g = build_case(c);
  ASSERT_TRUE(g.validate().is_good());
  ASSERT_EQ(gpu().props.ordinal, 0);
  auto plan = build_for(*engine, g, gpu().props);
  ASSERT_TRUE(plan.is_good()) << plan.status().message();
  ASSERT_NE(gemm::shared_runtime_if_open(0), nullptr);
  Operands o;
  ASSERT_TRUE(make_operands(*gpu().api, g, rng, o).is_good());
  poison(o);
  const VariantPack pack = pack_of(o);
  DeviceProperties other = gpu().props;
  other.ordinal = 1;
  ExecutionContext ec = device_ec();
  ec.device = &other;
  Status refused = (*plan)->execute(pack, ec);
  EXPECT_EQ(refused.code(), ErrorCode::INVALID_CUDA_DEVICE) << refused.to_string();
  EXPECT_NE(refused.message().find("built on device 0"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("drives device 1"), std::string::npos) << refused.message();
  ASSERT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
  std::vector<unsigned char> got(o.host.at(o.out_uid).size());
  ASSERT_EQ(gpu().api->memcpy_dtoh(got.data(), o.dev.at(o.out_uid)->ptr(), got.size()), CUDA_SUCCESS);
  EXPECT_EQ(got, std::vector<unsigned char>(got.size(), 0xFF)) << "the refused execute wrote its output";
  // On its own device (and with a handle that names none) it runs.
  ASSERT_TRUE((*plan)->execute(pack, device_ec()).is_good());
  ASSERT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
  EXPECT_EQ(bad_elements(c, reference_out(g, o), o), 0u);
}
