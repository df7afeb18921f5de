// The compiled-kernel cache's rules, one by one (compile-only: no GPU; the
// reload check is validate_cubin). See src/runtime/compiled_cache.h.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime_test_util.h"

using namespace opgraph;
using namespace opgraph::runtime;
using opgraph::testing::elf_check;
using opgraph::testing::random_smoke_request;
using opgraph::testing::TempDir;
using opgraph::testing::test_environment;
namespace fs = std::filesystem;

namespace {

class CacheRules : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
    options_.root = dir_.path();
    request_ = random_smoke_request(rng_);
  }
  CompiledCache make(CacheOptions o) { return CompiledCache(std::move(o), test_environment()); }
  fs::path entry_path(const CompiledCache& c, const std::string& ext) {
    if (ext == ".cubin") {  // the binary the record names
      auto record = nlohmann::json::parse(read(entry_path(c, ".json")));
      return c.environment_dir() / record["cubin_file"].get<std::string>();
    }
    return c.environment_dir() / (CompiledCache::entry_name(request_, "sm_90a") + ext);
  }
  std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

  TempDir dir_;
  CacheOptions options_;
  std::mt19937 rng_{std::random_device{}()};
  KernelRequest request_;
};

}  // namespace

TEST_F(CacheRules, MissWritesThenAnotherProcessHits) {
  auto first = make(options_);
  auto k1 = first.get(request_, "sm_90a", elf_check());
  ASSERT_TRUE(k1.is_good()) << k1.status().message();
  EXPECT_EQ(first.stats().misses, 1u);
  EXPECT_EQ(first.stats().hits, 0u);
  EXPECT_TRUE(fs::exists(entry_path(first, ".cubin")));
  EXPECT_TRUE(fs::exists(entry_path(first, ".json")));
  EXPECT_TRUE(fs::exists(first.environment_dir() / "environment.json"));
  // The environment directory sits under the schema version.
  EXPECT_EQ(first.environment_dir().parent_path(), dir_.path() / "v1");

  auto second = make(options_);  // as a new process would
  auto k2 = second.get(request_, "sm_90a", elf_check());
  ASSERT_TRUE(k2.is_good());
  EXPECT_EQ(second.stats().hits, 1u);
  EXPECT_EQ(second.stats().misses, 0u);
  EXPECT_EQ(k2->cubin, k1->cubin);
  EXPECT_EQ(k2->lowered_name, k1->lowered_name);
}

TEST_F(CacheRules, EntryNameIsReadable) {
  const std::string name = CompiledCache::entry_name(request_, "sm_90a");
  const std::string prefix = "smoke_" + request_.kernel + "_sm_90a_";
  ASSERT_EQ(name.rfind(prefix, 0), 0u) << name;
  const std::string hash = name.substr(prefix.size());
  EXPECT_EQ(hash.size(), 12u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST_F(CacheRules, RecordWithAnotherKeyIsAMissThenRewritten) {
  auto warm = make(options_);
  ASSERT_TRUE(warm.get(request_, "sm_90a", elf_check()).is_good());
  auto record = nlohmann::json::parse(read(entry_path(warm, ".json")));
  record["key"] = random_smoke_request(rng_).key("sm_90a");
  write(entry_path(warm, ".json"), record.dump());

  auto c = make(options_);
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c.stats().invalid, 1u);
  EXPECT_EQ(c.stats().misses, 1u);
  EXPECT_EQ(c.stats().hits, 0u);
  EXPECT_EQ(nlohmann::json::parse(read(entry_path(c, ".json")))["key"], request_.key("sm_90a"));
  auto again = make(options_);
  ASSERT_TRUE(again.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(again.stats().hits, 1u);
}

TEST_F(CacheRules, TruncatedBinaryIsAMissNeverAnError) {
  auto warm = make(options_);
  auto k = warm.get(request_, "sm_90a", elf_check());
  ASSERT_TRUE(k.is_good());
  const std::string full = read(entry_path(warm, ".cubin"));
  write(entry_path(warm, ".cubin"), full.substr(0, full.size() / 2));
  auto c = make(options_);
  auto k2 = c.get(request_, "sm_90a", elf_check());
  ASSERT_TRUE(k2.is_good()) << k2.status().message();
  EXPECT_EQ(c.stats().invalid, 1u);
  EXPECT_EQ(c.stats().misses, 1u);
  EXPECT_TRUE(validate_cubin(read(entry_path(c, ".cubin")), k2->lowered_name).is_good());  // rewritten whole
  EXPECT_EQ(read(entry_path(c, ".cubin")), k2->cubin);

  // Truncated AND a record that agrees with the truncated size: the ELF check catches it.
  auto record = nlohmann::json::parse(read(entry_path(c, ".json")));
  const std::string cut = k2->cubin.substr(0, k2->cubin.size() - 64);
  const std::string cut_file = CompiledCache::entry_name(request_, "sm_90a") + "." + fnv1a64_hex(cut) + ".cubin";
  record["cubin_bytes"] = cut.size();
  record["cubin_fnv1a64"] = fnv1a64_hex(cut);
  record["cubin_file"] = cut_file;
  write(c.environment_dir() / cut_file, cut);
  write(entry_path(c, ".json"), record.dump());
  auto c2 = make(options_);
  ASSERT_TRUE(c2.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c2.stats().invalid, 1u);
}

TEST_F(CacheRules, RecordNamingAnotherFileIsAMiss) {
  auto warm = make(options_);
  ASSERT_TRUE(warm.get(request_, "sm_90a", elf_check()).is_good());
  auto record = nlohmann::json::parse(read(entry_path(warm, ".json")));
  record["cubin_file"] = "../../escape.cubin";
  write(entry_path(warm, ".json"), record.dump());
  auto c = make(options_);
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c.stats().invalid, 1u);
}

TEST_F(CacheRules, BinaryWithoutRecordIsAPlainMissRecordWithoutBinaryIsInvalid) {
  auto warm = make(options_);
  ASSERT_TRUE(warm.get(request_, "sm_90a", elf_check()).is_good());
  fs::remove(entry_path(warm, ".json"));  // as a crash between the two renames leaves it
  auto c = make(options_);
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c.stats().misses, 1u);
  EXPECT_EQ(c.stats().invalid, 0u);

  fs::remove(entry_path(c, ".cubin"));
  auto c2 = make(options_);
  ASSERT_TRUE(c2.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c2.stats().invalid, 1u);
  EXPECT_EQ(c2.stats().misses, 1u);
}

TEST_F(CacheRules, MismatchedSchemaIsAMiss) {
  auto warm = make(options_);
  ASSERT_TRUE(warm.get(request_, "sm_90a", elf_check()).is_good());
  auto record = nlohmann::json::parse(read(entry_path(warm, ".json")));
  record["schema"] = kCacheSchema + 1;
  write(entry_path(warm, ".json"), record.dump());
  auto c = make(options_);
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c.stats().invalid, 1u);

  // An entry under another schema root is never consulted.
  const fs::path other = dir_.path() / "v0" / c.environment_dir().filename();
  fs::create_directories(other);
  fs::copy(c.environment_dir(), other, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  fs::remove_all(c.environment_dir());
  auto c2 = make(options_);
  ASSERT_TRUE(c2.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c2.stats().misses, 1u);
  EXPECT_EQ(c2.stats().hits, 0u);
}

TEST_F(CacheRules, MalformedRecordIsAMiss) {
  auto warm = make(options_);
  ASSERT_TRUE(warm.get(request_, "sm_90a", elf_check()).is_good());
  write(entry_path(warm, ".json"), "{\"schema\": 1, \"key\": ");
  auto c = make(options_);
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c.stats().invalid, 1u);
}

TEST_F(CacheRules, EnvironmentFieldsNameTheDirectoryUnknownIncluded) {
  auto props = DeviceProperties::for_arch("sm_90a");
  const auto base = CacheEnvironment::make(*props, 13000, 13000);
  const auto other_driver = CacheEnvironment::make(*props, 13000, 12080);
  const auto unknown_driver = CacheEnvironment::make(*props, 13000, std::nullopt);
  auto fewer_sms = *props;
  fewer_sms.sm_count = 114;
  const auto other_device = CacheEnvironment::make(fewer_sms, 13000, 13000);
  EXPECT_NE(base.hash(), other_driver.hash());
  EXPECT_NE(base.hash(), unknown_driver.hash());
  EXPECT_NE(base.hash(), other_device.hash());
  EXPECT_EQ(base.hash(), CacheEnvironment::make(*props, 13000, 13000).hash());
  std::map<std::string, std::string> fields(unknown_driver.fields.begin(), unknown_driver.fields.end());
  EXPECT_EQ(fields.at("driver_version"), "unknown");
  for (const char* k : {"opgraph_version", "kernel_sources_digest", "nvrtc_version", "driver_version", "device_name",
                        "compute_capability", "sm_count", "l2_bytes"}) {
    EXPECT_TRUE(fields.count(k)) << k;
  }
  auto bare = DeviceProperties::for_arch("sm_100a");
  std::map<std::string, std::string> bare_fields;
  for (const auto& [k, v] : CacheEnvironment::make(*bare, 13000, 13000).fields) bare_fields[k] = v;
  EXPECT_EQ(bare_fields.at("device_name"), "unknown");
  EXPECT_EQ(bare_fields.at("sm_count"), "unknown");

  // Another driver is another directory: a miss there.
  auto warm = make(options_);
  ASSERT_TRUE(warm.get(request_, "sm_90a", elf_check()).is_good());
  CompiledCache moved(options_, test_environment(12080));
  EXPECT_NE(moved.environment_dir(), warm.environment_dir());
  ASSERT_TRUE(moved.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(moved.stats().misses, 1u);
}

TEST_F(CacheRules, MissReloadsFromDiskSoABadArtifactFailsAtBuild) {
  int calls = 0;
  auto refuse = [&](const CompiledKernel&) {
    ++calls;
    return Status(ErrorCode::CUDA_API_FAILED, "cuModuleLoadData: stand-in refusal");
  };
  auto c = make(options_);
  auto k = c.get(request_, "sm_90a", refuse);
  ASSERT_TRUE(k.is_bad());
  EXPECT_EQ(k.status().code(), ErrorCode::CUDA_API_FAILED);
  EXPECT_NE(k.status().message().find("refused on reload"), std::string::npos) << k.status().message();
  EXPECT_EQ(calls, 1);
  // A served entry the check refuses is doubtful: a miss, then the rebuild fails loudly.
  auto c2 = make(options_);
  EXPECT_TRUE(c2.get(request_, "sm_90a", refuse).is_bad());
  EXPECT_EQ(c2.stats().invalid, 1u);
  EXPECT_EQ(calls, 3);
}

TEST_F(CacheRules, DisableSwitchBypassesAndWritesNothing) {
  auto o = options_;
  o.disabled = true;
  auto c = make(o);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c.stats().bypassed, 2u);
  EXPECT_EQ(c.stats().hits + c.stats().misses, 0u);
  EXPECT_TRUE(fs::is_empty(dir_.path()));

  ::setenv("OPGRAPH_DISABLE_COMPILED_CACHE", "1", 1);
  EXPECT_TRUE(CacheOptions::from_env().disabled);
  ::setenv("OPGRAPH_DISABLE_COMPILED_CACHE", "0", 1);
  EXPECT_FALSE(CacheOptions::from_env().disabled);
  ::unsetenv("OPGRAPH_DISABLE_COMPILED_CACHE");
}

TEST_F(CacheRules, RequireHitMakesAMissFatal) {
  auto o = options_;
  o.require_hit = true;
  auto strict = make(o);
  auto k = strict.get(request_, "sm_90a", elf_check());
  ASSERT_TRUE(k.is_bad());
  EXPECT_EQ(k.status().code(), ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED);
  EXPECT_NE(k.status().message().find(CompiledCache::entry_name(request_, "sm_90a")), std::string::npos);
  EXPECT_NE(k.status().message().find("OPGRAPH_COMPILED_CACHE_REQUIRE_HIT"), std::string::npos);
  EXPECT_FALSE(fs::exists(strict.environment_dir()));  // nothing was compiled or written

  auto warm = make(options_);
  ASSERT_TRUE(warm.get(request_, "sm_90a", elf_check()).is_good());
  auto strict2 = make(o);
  EXPECT_TRUE(strict2.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(strict2.stats().hits, 1u);

  ::setenv("OPGRAPH_COMPILED_CACHE_REQUIRE_HIT", "1", 1);
  EXPECT_TRUE(CacheOptions::from_env().require_hit);
  ::unsetenv("OPGRAPH_COMPILED_CACHE_REQUIRE_HIT");
  EXPECT_FALSE(CacheOptions::from_env().require_hit);
}

TEST_F(CacheRules, StatsCountEachOutcome) {
  auto c = make(options_);
  auto other = random_smoke_request(rng_);
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());  // miss
  ASSERT_TRUE(c.get(other, "sm_90a", elf_check()).is_good());     // miss
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());  // hits
  write(entry_path(c, ".cubin"), "garbage");
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());  // invalid + miss
  EXPECT_EQ(c.stats().misses, 3u);
  EXPECT_EQ(c.stats().hits, 3u);
  EXPECT_EQ(c.stats().invalid, 1u);
  EXPECT_EQ(c.stats().bypassed, 0u);
  EXPECT_EQ(c.stats().pruned, 0u);
}
