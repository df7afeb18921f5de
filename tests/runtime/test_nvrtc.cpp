// NVRTC: every kernel in the tree compiles for sm_90a (the CI gate that keeps
// the kernels building), the embedded-source table, specialisation, and the
// compile log on failure. Skips only when libnvrtc cannot be loaded, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>

#include "engines/gemm/gemm_declared.h"
#include "engines/linear_attention/la_engine.h"
#include "engines/smoke/smoke_kernels.h"
#include "runtime/kernel_sources.h"
#include "runtime/loader.h"
#include "runtime/nvrtc_compiler.h"

using namespace opgraph;
using namespace opgraph::runtime;

TEST(EmbeddedSources, SortedWithDigestAndFamilyKernels) {
  auto all = embedded_sources();
  ASSERT_FALSE(all.empty());
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].name, all[i].name);
  const std::string digest(embedded_sources_digest());
  EXPECT_EQ(digest.size(), 64u);
  EXPECT_EQ(digest.find_first_not_of("0123456789abcdef"), std::string::npos);
  const auto* smoke = find_embedded_source("smoke/kernels/smoke.cu");
  ASSERT_NE(smoke, nullptr);
  EXPECT_NE(smoke->text.find("smoke_affine"), std::string_view::npos);
  ASSERT_NE(find_embedded_source("opgraph/kernel_common.cuh"), nullptr);
  EXPECT_EQ(find_embedded_source("smoke/kernels/absent.cu"), nullptr);
}

TEST(Nvrtc, EveryKernelInTheTreeCompilesForSm90a) {
  if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  // Every embedded .cu must be covered by a declared specialisation, so a new
  // kernel file without one fails here instead of going uncompiled.
  auto declared = smoke::declared_specialisations();
  std::set<std::string> covered;
  for (const auto& r : declared) covered.insert(r.source);
  for (const auto& r : gemm::declared_specialisations()) covered.insert(r.source);  // compiled by test_gemm
  for (const auto& r : linear_attention::declared_specialisations())
    covered.insert(r.source);  // compiled by test_linear_attention
  for (const auto& s : embedded_sources()) {
    const std::string name(s.name);
    if (name.size() > 3 && name.substr(name.size() - 3) == ".cu") {
      EXPECT_TRUE(covered.count(name)) << name << " has no declared specialisation";
    }
  }
  std::set<std::string> names;
  for (const auto& r : declared) {
    auto k = compile_kernel(r, "sm_90a");
    ASSERT_TRUE(k.is_good()) << k.status().to_string();
    EXPECT_EQ(k->arch, "sm_90a");
    EXPECT_FALSE(k->lowered_name.empty());
    EXPECT_TRUE(validate_cubin(k->cubin, k->lowered_name).is_good()) << r.kernel;
    names.insert(r.kernel);
  }
  EXPECT_EQ(names.size(), declared.size()) << "specialisation names must be distinct";
}

TEST(Nvrtc, SpecialisationPrependsDefines) {
  std::mt19937 rng(std::random_device{}());
  const double a = std::uniform_int_distribution<int>(-999, 999)(rng) / 8.0;
  auto r = smoke::affine_request({a, 1.5, smoke::SmokeType::F64});
  auto src = specialised_source(r);
  ASSERT_TRUE(src.is_good());
  const auto define_at = src->find("#define OPGRAPH_SMOKE_A (");
  const auto body_at = src->find("template <typename T>");
  ASSERT_NE(define_at, std::string::npos);
  ASSERT_NE(body_at, std::string::npos);
  EXPECT_LT(define_at, body_at);
  EXPECT_EQ(r.entry, "smoke_affine<double>");
  EXPECT_EQ(r.kernel.rfind("affine_f64_a", 0), 0u) << r.kernel;
  // Different constants are different keys; the same constants the same key.
  EXPECT_NE(r.key("sm_90a"), smoke::affine_request({a + 1, 1.5, smoke::SmokeType::F64}).key("sm_90a"));
  EXPECT_EQ(r.key("sm_90a"), smoke::affine_request({a, 1.5, smoke::SmokeType::F64}).key("sm_90a"));
  EXPECT_NE(r.key("sm_90a"), r.key("sm_100a"));
  r.defines.push_back({"9bad", "1"});
  EXPECT_EQ(specialised_source(r).status().code(), ErrorCode::INVALID_VALUE);
}

// OPGRAPH_NVRTC_LINEINFO=1 adds -lineinfo: a different key (a cubin with
// line tables never serves a plain run) and line tables in the cubin; any
// other value leaves the options alone.
TEST(Nvrtc, LineinfoIsAnOptionOfTheKeyAndTheCubin) {
  struct Restore {
    ~Restore() { unsetenv("OPGRAPH_NVRTC_LINEINFO"); }
  } restore;
  unsetenv("OPGRAPH_NVRTC_LINEINFO");
  auto r = smoke::affine_request({2.0, 1.0, smoke::SmokeType::F32});
  const std::string plain_key = r.key("sm_90a");
  auto has_lineinfo = [] {
    const auto o = nvrtc_options("sm_90a");
    return std::find(o.begin(), o.end(), "-lineinfo") != o.end();
  };
  EXPECT_FALSE(has_lineinfo());
  setenv("OPGRAPH_NVRTC_LINEINFO", "0", 1);
  EXPECT_FALSE(has_lineinfo());
  EXPECT_EQ(r.key("sm_90a"), plain_key);
  setenv("OPGRAPH_NVRTC_LINEINFO", "1", 1);
  EXPECT_TRUE(has_lineinfo());
  EXPECT_NE(r.key("sm_90a"), plain_key);
  if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto lined = compile_kernel(r, "sm_90a");
  ASSERT_TRUE(lined.is_good()) << lined.status().to_string();
  EXPECT_NE(lined->cubin.find(".debug_line"), std::string::npos);
  unsetenv("OPGRAPH_NVRTC_LINEINFO");
  auto plain = compile_kernel(r, "sm_90a");
  ASSERT_TRUE(plain.is_good()) << plain.status().to_string();
  EXPECT_EQ(plain->cubin.find(".debug_line"), std::string::npos);
}

TEST(Nvrtc, CompileFailureCarriesTheLog) {
  if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto r = smoke::affine_request({2.0, 1.0, smoke::SmokeType::F32});
  r.defines.clear();  // the kernel's #error names the missing specialisation
  auto k = compile_kernel(r, "sm_90a");
  ASSERT_TRUE(k.is_bad());
  EXPECT_EQ(k.status().code(), ErrorCode::NVRTC_COMPILATION_FAILED);
  EXPECT_NE(k.status().message().find("compile log"), std::string::npos) << k.status().message();
  EXPECT_NE(k.status().message().find("OPGRAPH_SMOKE_A is set by the specialisation"), std::string::npos)
      << k.status().message();
  EXPECT_NE(k.status().message().find("--gpu-architecture=sm_90a"), std::string::npos);

  auto syntax = smoke::affine_request({2.0, 1.0, smoke::SmokeType::F32});
  syntax.defines[0].value = "(1.0 +)";
  auto k2 = compile_kernel(syntax, "sm_90a");
  ASSERT_TRUE(k2.is_bad());
  EXPECT_EQ(k2.status().code(), ErrorCode::NVRTC_COMPILATION_FAILED);
  EXPECT_NE(k2.status().message().find("smoke/kernels/smoke.cu"), std::string::npos) << k2.status().message();
}

TEST(Nvrtc, MalformedRequestsAreInvalidValues) {
  auto r = smoke::affine_request({2.0, 1.0, smoke::SmokeType::F32});
  auto bad_family = r;
  bad_family.family = "smoke/../x";
  EXPECT_EQ(compile_kernel(bad_family, "sm_90a").status().code(), ErrorCode::INVALID_VALUE);
  auto bad_source = r;
  bad_source.source = "smoke/kernels/none.cu";
  auto k = compile_kernel(bad_source, "sm_90a");
  if (nvrtc().is_good()) {
    EXPECT_EQ(k.status().code(), ErrorCode::INVALID_VALUE);
    EXPECT_NE(k.status().message().find("not an embedded kernel source"), std::string::npos);
  }
}

TEST(Nvrtc, ValidateCubinRejectsDamage) {
  if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto k = compile_kernel(smoke::affine_request({0.75, -2.0, smoke::SmokeType::F32}), "sm_90a");
  ASSERT_TRUE(k.is_good()) << k.status().message();
  ASSERT_TRUE(validate_cubin(k->cubin, k->lowered_name).is_good());
  EXPECT_TRUE(validate_cubin(k->cubin.substr(0, k->cubin.size() / 2), k->lowered_name).is_bad());
  EXPECT_TRUE(validate_cubin(k->cubin.substr(0, 40), k->lowered_name).is_bad());
  EXPECT_TRUE(validate_cubin(k->cubin, "_Z_not_in_this_cubin").is_bad());
  // The name must be a symbol of the cubin, whole: a part of one (a prefix, a suffix) or a section name is not.
  const std::string& name = k->lowered_name;
  EXPECT_TRUE(validate_cubin(k->cubin, name.substr(0, name.size() - 1)).is_bad());
  EXPECT_TRUE(validate_cubin(k->cubin, name.substr(1)).is_bad());
  EXPECT_TRUE(validate_cubin(k->cubin, ".text." + name).is_bad());
  std::string not_cuda = k->cubin;
  not_cuda[18] = 62;  // EM_X86_64
  EXPECT_TRUE(validate_cubin(not_cuda, k->lowered_name).is_bad());
  EXPECT_TRUE(validate_cubin("plain text, not an ELF file at all, long enough to hold a header......", "").is_bad());
}
