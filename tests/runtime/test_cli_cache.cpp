// `opgraph cache ...` end to end in child processes: warm --all compiles every
// declared kernel with a progress bar, list/stats show them under the current
// environment, a second warm is all hits, REQUIRE_HIT fails on an empty cache,
// clear removes what opgraph wrote and names what it kept, warm into a root
// that cannot be written fails; and OPGRAPH_LOG_LEVEL=2 prints the
// specialised source and the compile log.
#include <gtest/gtest.h>

#include <fstream>

#include "runtime_test_util.h"

using namespace opgraph;
using opgraph::testing::run_process;
using opgraph::testing::TempDir;

namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST(CliCache, WarmListStatsRequireHitClear) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  if (std::string(OPGRAPH_TOOL) == OPGRAPH_RUNTIME_PROBE) GTEST_SKIP() << "the opgraph tool is not built";
  TempDir dir;
  const std::vector<std::string> env = {"OPGRAPH_COMPILED_CACHE=" + dir.path().string()};
  const auto n = std::to_string(smoke::declared_specialisations().size());

  auto warm = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_90a"}, env);
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_TRUE(contains(warm.output, "warmed " + n + " kernels for sm_90a")) << warm.output;
  EXPECT_TRUE(contains(warm.output, n + " compiled, 0 already cached")) << warm.output;
  EXPECT_TRUE(contains(warm.output, "[##############################] " + n + "/" + n)) << warm.output;

  auto again = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_90a"}, env);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "0 compiled, " + n + " already cached")) << again.output;

  auto list = run_process({OPGRAPH_TOOL, "cache", "list", "--arch", "sm_90a"}, env);
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_TRUE(contains(list.output, "(current)")) << list.output;
  EXPECT_TRUE(contains(list.output, n + " entries")) << list.output;
  for (const auto& r : smoke::declared_specialisations()) {
    EXPECT_TRUE(contains(list.output, runtime::CompiledCache::entry_name(r, "sm_90a"))) << r.kernel;
  }
  auto stats = run_process({OPGRAPH_TOOL, "cache", "stats", "--arch", "sm_90a"}, env);
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_TRUE(contains(stats.output, "root:          " + dir.path().string())) << stats.output;
  EXPECT_TRUE(contains(stats.output, "1 environment(s), " + n + " entries")) << stats.output;
  EXPECT_TRUE(contains(stats.output, "kernel_sources_digest")) << stats.output;

  auto cleared = run_process({OPGRAPH_TOOL, "cache", "clear"}, env);
  ASSERT_EQ(cleared.exit_code, 0) << cleared.output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "v1"));

  auto strict_env = env;
  strict_env.push_back("OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1");
  auto strict = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_90a"}, strict_env);
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_TRUE(contains(strict.output, "OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1")) << strict.output;

  EXPECT_EQ(run_process({OPGRAPH_TOOL, "cache", "bogus"}, env).exit_code, 2);
  EXPECT_EQ(run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_9x"}, env).exit_code, 1);
}

TEST(CliCache, LogLevelTwoPrintsSourceAndCompileLog) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto quiet = run_process({OPGRAPH_RUNTIME_PROBE, "compile"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_FALSE(contains(quiet.output, "specialised source")) << quiet.output;
  auto loud = run_process({OPGRAPH_RUNTIME_PROBE, "compile"}, {"OPGRAPH_LOG_LEVEL=2"});
  ASSERT_EQ(loud.exit_code, 0) << loud.output;
  EXPECT_TRUE(contains(loud.output, "specialised source")) << loud.output;
  EXPECT_TRUE(contains(loud.output, "#define OPGRAPH_SMOKE_A (3.0)")) << loud.output;
  EXPECT_TRUE(contains(loud.output, "NVRTC log")) << loud.output;
  EXPECT_TRUE(contains(loud.output, "loaded libnvrtc from")) << loud.output;
}

TEST(CliCache, WarmIntoARootThatCannotBeWrittenFails) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  if (std::string(OPGRAPH_TOOL) == OPGRAPH_RUNTIME_PROBE) GTEST_SKIP() << "the opgraph tool is not built";
  TempDir dir;
  // A root below a regular file cannot be created, whoever runs the test.
  { std::ofstream(dir.path() / "file") << "x"; }
  const std::string blocked = (dir.path() / "file" / "cache").string();
  auto warm = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_90a"},
                          {"OPGRAPH_COMPILED_CACHE=" + blocked});
  EXPECT_EQ(warm.exit_code, 1) << warm.output;
  EXPECT_TRUE(contains(warm.output, blocked)) << warm.output;
  EXPECT_FALSE(contains(warm.output, "warmed")) << warm.output;

  // A read-only root (the permission bits bind everyone but root).
  if (::geteuid() == 0) return;
  const auto ro = dir.path() / "ro";
  std::filesystem::create_directories(ro);
  std::filesystem::permissions(ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  auto ro_warm = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_90a"},
                             {"OPGRAPH_COMPILED_CACHE=" + ro.string()});
  std::filesystem::permissions(ro, std::filesystem::perms::owner_all);
  EXPECT_EQ(ro_warm.exit_code, 1) << ro_warm.output;
  EXPECT_TRUE(contains(ro_warm.output, ro.string())) << ro_warm.output;
}

TEST(CliCache, ClearKeepsWhatOpgraphDidNotWriteAndSaysSo) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  if (std::string(OPGRAPH_TOOL) == OPGRAPH_RUNTIME_PROBE) GTEST_SKIP() << "the opgraph tool is not built";
  TempDir dir;
  const std::vector<std::string> env = {"OPGRAPH_COMPILED_CACHE=" + dir.path().string()};
  auto warm = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_90a"}, env);
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  std::filesystem::create_directories(dir.path() / "v3");
  { std::ofstream(dir.path() / "v3" / "keep.txt") << "mine"; }

  auto cleared = run_process({OPGRAPH_TOOL, "cache", "clear"}, env);
  ASSERT_EQ(cleared.exit_code, 0) << cleared.output;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "v3" / "keep.txt"));
  EXPECT_TRUE(contains(cleared.output, "removed 1 environment")) << cleared.output;
  EXPECT_TRUE(contains(cleared.output, "kept")) << cleared.output;
  EXPECT_TRUE(contains(cleared.output, "v3")) << cleared.output;
}
