// tests/cudnn/test_cudnn_gpu_cases.cpp — the GPU suite's cases without a GPU
// (tests/cudnn_gpu/cases_*.cpp are linked in): every case's graph validates and
// the reference engine plans it; a case expected to RUN lowers, needs no newer
// cuDNN than the H200's 9.14 and (when libcudnn loads) finalizes device-less;
// a case expected to DECLINE either declines in the lowering with its named
// reason or lowers (cuDNN itself declines it on the device: the transpose
// cases, whose lowered graphs cuDNN's heuristics offer no engine config for);
// a case left to cuDNN's heuristics (RUNS_OR_DECLINES) lowers as a RUNS case does.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cudnn/cudnn_test_util.h"
#include "cudnn_gpu/gpu_harness.h"
#include "engines/cudnn/backend.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

namespace cu = engines::cudnn;
using cudnn_gpu::Case;
using cudnn_gpu::Expect;

constexpr std::int64_t kH200Cudnn = 91400;  // the version the expectations were measured with

void check_case(const Case& c, const runtime::CudnnApi* api) {
  SCOPED_TRACE(c.name);
  Graph g;
  c.build(g);
  Status v = g.validate();
  ASSERT_TRUE(v.is_good()) << v.to_string();
  cu::LoweringOptions options;  // the engine's, with OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=1 read as the device run reads it
  options.include_unverified = cudnn_gpu::unverified_included();
  auto p = cu::lower(g, options);
  if (c.expect == Expect::DECLINES && p.is_bad()) {
    EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
    EXPECT_NE(p.status().message().find(c.decline_note), std::string::npos) << p.status().message();
  } else {
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    if (c.expect != Expect::DECLINES) {
      EXPECT_LE(p->min_cudnn_version, kH200Cudnn) << p->min_version_reason;
    }
    if (c.expect == Expect::DECLINES && c.decline_note.find("needs cuDNN") != std::string::npos) {
      EXPECT_GT(p->min_cudnn_version, kH200Cudnn);
    }
    if (api && p->min_cudnn_version <= static_cast<std::int64_t>(api->version)) {
      auto m = cu::materialise(*api, p.value(), nullptr);
      EXPECT_TRUE(m.is_good()) << m.status().to_string();
    }
  }
  // Without a device the reference serves every case.
  Graph h;
  c.build(h);
  ASSERT_TRUE(h.create_execution_plans({HeurMode::FALLBACK}).is_good());
  EXPECT_EQ(h.get_plan_name_at_index(0).value(), "reference[]");
}

// The transpose cases lower under both settings of OPGRAPH_CUDNN_INCLUDE_UNVERIFIED (rule
// no_engine_config_on_h200 is gone) and expect cuDNN's heuristics to decline them on the
// device. The bn-beside-dBN case runs under both settings.
TEST(CudnnGpuCases, TransposeCasesLowerWithOrWithoutTheVariable) {
  const char* old = std::getenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
  const std::string saved = old ? old : "";
  std::size_t transposes = 0, bn = 0;
  for (bool on : {false, true}) {
    if (on) ::setenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED", "1", 1);
    else ::unsetenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
    for (const Case& c : cudnn_gpu::op_cases()) {
      SCOPED_TRACE(c.name + (on ? " (variable set)" : " (variable unset)"));
      if (c.name.rfind("transpose_", 0) == 0) {
        ++transposes;
        EXPECT_EQ(c.expect, Expect::DECLINES);
        EXPECT_EQ(c.decline_note, "cudnn heuristics");
        Graph g;
        c.build(g);
        ASSERT_TRUE(g.validate().is_good());
        cu::LoweringOptions options;
        options.include_unverified = on;
        auto p = cu::lower(g, options);
        EXPECT_TRUE(p.is_good()) << p.status().to_string();
      }
      if (c.name == "bn_infer_drelu_dbn_half") {
        ++bn;
        EXPECT_EQ(c.expect, Expect::RUNS);
      }
    }
  }
  if (old) ::setenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED", saved.c_str(), 1);
  else ::unsetenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
  EXPECT_EQ(transposes, 4u);
  EXPECT_EQ(bn, 2u);
}

TEST(CudnnGpuCases, EveryCaseValidatesAndLowersAsExpected) {
  auto api = runtime::cudnn();
  const runtime::CudnnApi* a = api.is_good() ? api.value() : nullptr;
  std::size_t n = 0;
  for (const auto& list : {cudnn_gpu::core_cases(), cudnn_gpu::op_cases()})
    for (const Case& c : list) {
      check_case(c, a);
      ++n;
    }
  EXPECT_GE(n, 70u);
}

}  // namespace
}  // namespace opgraph
