// `opgraph cache ...` end to end in child processes: warm --all walks the
// manifest's engines (Engine::declared_kernels) with a line per kernel,
// list/stats show them under the current environment, a second warm is all
// hits, REQUIRE_HIT fails on an empty cache, clear removes what opgraph wrote
// and names what it kept, warm into a root that cannot be written fails; warm
// GRAPH.json compiles exactly the kernels of the graph's gemm plans; and
// OPGRAPH_LOG_LEVEL=2 prints the specialised source and the compile log.
//
// Most cases warm `--all --limit 2` (the first two kernels of the walk: the
// universal reference declares none, so they are gemm's first two); one
// compiles the whole declared domain (56 gemm kernels, 9 linear_attention
// kernels and the runtime's smoke kernels, about 60 s on two cores).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "engines/gemm/gemm_declared.h"
#include "engines/linear_attention/la_engine.h"
#include "opgraph/op_graph.h"
#include "runtime_test_util.h"

using namespace opgraph;
using opgraph::testing::run_process;
using opgraph::testing::TempDir;

namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The quick warm: the walk's first two kernels (gemm's first two declared).
constexpr std::size_t kQuick = 2;
std::vector<std::string> quick_warm() {
  return {OPGRAPH_TOOL, "cache", "warm", "--all", "--limit", std::to_string(kQuick), "--arch", "sm_90a"};
}
std::vector<runtime::KernelRequest> quick_requests() {
  auto all = gemm::declared_specialisations();
  all.resize(kQuick);
  return all;
}

// The `list` lines of the current environment that name entries ("  <entry>").
std::set<std::string> entries_listed(const std::string& list_output) {
  std::set<std::string> out;
  std::istringstream in(list_output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  ", 0) == 0) out.insert(line.substr(2));
  return out;
}

}  // namespace

TEST(CliCache, WarmListStatsRequireHitClear) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  if (std::string(OPGRAPH_TOOL) == OPGRAPH_RUNTIME_PROBE) GTEST_SKIP() << "the opgraph tool is not built";
  TempDir dir;
  const std::vector<std::string> env = {"OPGRAPH_COMPILED_CACHE=" + dir.path().string()};
  const auto n = std::to_string(kQuick);

  auto warm = run_process(quick_warm(), env);
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_TRUE(contains(warm.output, "warmed " + n + " kernels for sm_90a")) << warm.output;
  EXPECT_TRUE(contains(warm.output, n + " compiled, 0 already cached")) << warm.output;
  EXPECT_TRUE(contains(warm.output, "[##############################] " + n + "/" + n)) << warm.output;
  for (const auto& r : quick_requests()) {  // one line per kernel
    EXPECT_TRUE(contains(warm.output, "/" + n + " gemm/" + r.kernel + ": compiled in ")) << r.kernel << warm.output;
  }

  auto again = run_process(quick_warm(), env);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "0 compiled, " + n + " already cached")) << again.output;
  for (const auto& r : quick_requests())
    EXPECT_TRUE(contains(again.output, "gemm/" + r.kernel + ": already cached")) << r.kernel << again.output;

  auto list = run_process({OPGRAPH_TOOL, "cache", "list", "--arch", "sm_90a"}, env);
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_TRUE(contains(list.output, "(current)")) << list.output;
  EXPECT_TRUE(contains(list.output, n + " entries")) << list.output;
  for (const auto& r : quick_requests()) {
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
  auto strict = run_process(quick_warm(), strict_env);
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_TRUE(contains(strict.output, "2 of 2 kernels failed")) << strict.output;
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
  auto warm = run_process(quick_warm(), env);
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

TEST(CliCache, WarmAllWalksEveryFamilyOfTheManifest) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  if (std::string(OPGRAPH_TOOL) == OPGRAPH_RUNTIME_PROBE) GTEST_SKIP() << "the opgraph tool is not built";
  TempDir dir;
  const std::vector<std::string> env = {"OPGRAPH_COMPILED_CACHE=" + dir.path().string()};
  // The reference engine compiles no kernels: its family declares none.
  auto ref = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--family", "reference", "--arch", "sm_90a"}, env);
  ASSERT_EQ(ref.exit_code, 0) << ref.output;
  EXPECT_TRUE(contains(ref.output, "warming 0 kernel(s) declared by family reference")) << ref.output;
  EXPECT_TRUE(contains(ref.output, "warmed 0 kernels")) << ref.output;
  // An unknown family names the manifest's.
  auto bad = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--family", "nope", "--arch", "sm_90a"}, env);
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad.output, "no family is named 'nope'")) << bad.output;
  EXPECT_TRUE(contains(bad.output, "gemm")) << bad.output;
  // The smoke kernels alone (the runtime's self-test set, after the manifest's).
  auto smoke_only = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--family", "smoke", "--arch", "sm_90a"}, env);
  ASSERT_EQ(smoke_only.exit_code, 0) << smoke_only.output;
  const auto n_smoke = std::to_string(smoke::declared_specialisations().size());
  EXPECT_TRUE(contains(smoke_only.output, "warmed " + n_smoke + " kernels")) << smoke_only.output;
  // The whole walk names every gemm and linear_attention specialisation and
  // every smoke kernel (counted without compiling: every get is a miss, an
  // error, under REQUIRE_HIT).
  std::set<std::string> keys;
  for (const auto& r : gemm::declared_specialisations()) keys.insert(r.key("sm_90a"));
  for (const auto& r : linear_attention::declared_specialisations()) keys.insert(r.key("sm_90a"));
  for (const auto& r : smoke::declared_specialisations()) keys.insert(r.key("sm_90a"));
  TempDir empty;
  auto count = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_90a"},
                           {"OPGRAPH_COMPILED_CACHE=" + empty.path().string(), "OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1"});
  EXPECT_EQ(count.exit_code, 1) << count.output;
  EXPECT_TRUE(contains(count.output, "warming " + std::to_string(keys.size()) +
                                         " kernel(s) declared by every family of the manifest for sm_90a"))
      << count.output;
  // Usage errors.
  EXPECT_EQ(run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--limit", "x"}, env).exit_code, 2);
  EXPECT_EQ(run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--jobs", "-1"}, env).exit_code, 2);
  EXPECT_EQ(run_process({OPGRAPH_TOOL, "cache", "warm", "g.json", "--family", "gemm"}, env).exit_code, 2);
  EXPECT_EQ(run_process({OPGRAPH_TOOL, "cache", "stats", "--limit", "1"}, env).exit_code, 2);
}

// Compile threads change nothing stored: the first linear_attention and gemm kernels warmed on three threads and on
// one give the same entries, byte for byte (a build's entries share its compile either way).
TEST(CliCache, WarmOnSeveralThreadsStoresWhatOneStores) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  if (std::string(OPGRAPH_TOOL) == OPGRAPH_RUNTIME_PROBE) GTEST_SKIP() << "the opgraph tool is not built";
  TempDir one, three;
  for (const char* family : {"linear_attention", "gemm"}) {
    for (auto* d : {&one, &three}) {
      auto w = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--family", family, "--limit", "10", "--jobs",
                            d == &one ? "1" : "3", "--arch", "sm_90a"},
                           {"OPGRAPH_COMPILED_CACHE=" + d->path().string()});
      ASSERT_EQ(w.exit_code, 0) << w.output;
      EXPECT_TRUE(contains(w.output, "10 compiled, 0 already cached")) << w.output;
    }
  }
  auto files = [](const std::filesystem::path& root) {
    std::map<std::string, std::string> out;  // path below the root -> bytes
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (!e.is_regular_file() || e.path().extension() != ".cubin") continue;
      std::ifstream in(e.path(), std::ios::binary);
      out[std::filesystem::relative(e.path(), root).string()] =
          std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return out;
  };
  const auto a = files(one.path()), b = files(three.path());
  EXPECT_EQ(a.size(), 20u);
  EXPECT_TRUE(a == b) << "the cubins stored by one compile thread and by three differ";
}

// matmul + bias + gelu on sm_90a plans gemm under A (a v2 config) and
// FALLBACK (the portable v1 64x64): warm compiles exactly those two kernels.
TEST(CliCache, WarmGraphCompilesTheKernelsOfItsPlans) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  if (std::string(OPGRAPH_TOOL) == OPGRAPH_RUNTIME_PROBE) GTEST_SKIP() << "the opgraph tool is not built";
  const std::string graph = std::string(OPGRAPH_SOURCE_DIR) + "/examples/graphs/matmul_bias_gelu.json";
  std::ifstream in(graph);
  std::stringstream text;
  text << in.rdbuf();
  auto g = OpGraph::deserialize(text.str());
  ASSERT_TRUE(g.is_good()) << g.status().to_string();
  ASSERT_TRUE(g->validate().is_good());
  g->freeze();
  auto p = gemm::analyze_gemm(*g);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  const auto a = gemm::kernel_request(*p, gemm::pick_config(*p, 132, /*fallback=*/false, /*hopper=*/true));
  const auto fb = gemm::kernel_request(*p, gemm::pick_config(*p, 132, /*fallback=*/true, /*hopper=*/true));
  ASSERT_NE(a.kernel, fb.kernel);

  TempDir dir;
  const std::vector<std::string> env = {"OPGRAPH_COMPILED_CACHE=" + dir.path().string()};
  auto warm = run_process({OPGRAPH_TOOL, "cache", "warm", graph, "--arch", "sm_90a"}, env);
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_TRUE(contains(warm.output, "warmed 2 kernels for sm_90a")) << warm.output;
  EXPECT_TRUE(contains(warm.output, "2 compiled, 0 already cached")) << warm.output;
  EXPECT_TRUE(contains(warm.output, "1/2 gemm/" + a.kernel + ": compiled in ")) << warm.output;
  EXPECT_TRUE(contains(warm.output, "2/2 gemm/" + fb.kernel + ": compiled in ")) << warm.output;
  EXPECT_TRUE(contains(warm.output, "reference[]: 0 kernel(s)")) << warm.output;
  auto list = run_process({OPGRAPH_TOOL, "cache", "list", "--arch", "sm_90a"}, env);
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(entries_listed(list.output),
            (std::set<std::string>{runtime::CompiledCache::entry_name(a, "sm_90a"),
                                   runtime::CompiledCache::entry_name(fb, "sm_90a")}))
      << list.output;

  // Warm again, one mode: its one kernel is cached already.
  auto again = run_process({OPGRAPH_TOOL, "cache", "warm", graph, "--modes", "A", "--arch", "sm_90a"}, env);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "0 compiled, 1 already cached")) << again.output;

  // A graph no engine of ours compiles for: nothing to warm.
  const std::string rmsnorm = std::string(OPGRAPH_SOURCE_DIR) + "/examples/graphs/rmsnorm.json";
  auto host = run_process({OPGRAPH_TOOL, "cache", "warm", rmsnorm, "--arch", "sm_90a"}, env);
  EXPECT_EQ(host.exit_code, 0) << host.output;
  EXPECT_TRUE(contains(host.output, "nothing to warm")) << host.output;
}

// The whole declared domain: every gemm specialisation and smoke kernel, each once.
TEST(CliCache, WarmAllCompilesEveryGemmSpecialisation) {
  if (auto api = runtime::nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  if (std::string(OPGRAPH_TOOL) == OPGRAPH_RUNTIME_PROBE) GTEST_SKIP() << "the opgraph tool is not built";
  TempDir dir;
  auto warm = run_process({OPGRAPH_TOOL, "cache", "warm", "--all", "--arch", "sm_90a"},
                          {"OPGRAPH_COMPILED_CACHE=" + dir.path().string()});
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  std::set<std::string> expected;
  for (const auto& r : gemm::declared_specialisations())
    expected.insert(runtime::CompiledCache::entry_name(r, "sm_90a"));
  for (const auto& r : linear_attention::declared_specialisations())
    expected.insert(runtime::CompiledCache::entry_name(r, "sm_90a"));
  for (const auto& r : smoke::declared_specialisations())
    expected.insert(runtime::CompiledCache::entry_name(r, "sm_90a"));
  const auto n = std::to_string(expected.size());
  EXPECT_TRUE(contains(warm.output, "warmed " + n + " kernels for sm_90a")) << warm.output;
  EXPECT_TRUE(contains(warm.output, n + " compiled, 0 already cached, 0 invalid replaced, 0 failed")) << warm.output;
  // One NVRTC compile a build: the linear_attention entries of a build compiled before take its cubin (their
  // cubins are checked entry by entry on reload, and the cache list below names every entry).
  EXPECT_TRUE(contains(warm.output, "linear_attention/gdn_decode_small_d128_bf16: stored from the same build's compile"))
      << warm.output;
  std::istringstream lines(warm.output);
  for (std::string line; std::getline(lines, line);) {  // template entries (gemm, smoke) compile alone
    if (contains(line, "stored from")) {
      EXPECT_TRUE(contains(line, " linear_attention/")) << line;
    }
  }
  auto list = run_process({OPGRAPH_TOOL, "cache", "list", "--arch", "sm_90a"},
                          {"OPGRAPH_COMPILED_CACHE=" + dir.path().string()});
  EXPECT_EQ(entries_listed(list.output), expected) << list.output;
}
