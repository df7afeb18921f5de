// The compiled cache's location, pruning, listing and clearing, and several
// processes writing one root at once.
#include <gtest/gtest.h>

#include <fstream>

#include "runtime_test_util.h"

using namespace opgraph;
using namespace opgraph::runtime;
using opgraph::testing::elf_check;
using opgraph::testing::random_smoke_request;
using opgraph::testing::run_process;
using opgraph::testing::TempDir;
using opgraph::testing::test_environment;
namespace fs = std::filesystem;

namespace {

// Gives an environment folder one entry binary of `bytes` bytes and an mtime `age_s` ago.
fs::path fill_environment(const fs::path& dir, std::size_t bytes, int age_s) {
  std::ofstream(dir / "smoke_fake_sm_90a_0123456789ab.0123456789abcdef.cubin", std::ios::binary)
      << std::string(bytes, 'x');
  fs::last_write_time(dir, fs::file_time_type::clock::now() - std::chrono::seconds(age_s));
  return dir;
}

// An environment folder as opgraph writes one (environment.json names it), of
// the environment with driver version `driver`, under `schema_dir`.
fs::path fake_environment(const fs::path& schema_dir, int driver, std::size_t bytes, int age_s) {
  auto env = CacheEnvironment::make(DeviceProperties::for_arch("sm_90a").value(), 13000, driver);
  const fs::path dir = schema_dir / env.hash();
  fs::create_directories(dir);
  std::ofstream(dir / "environment.json") << env.to_json() << "\n";
  return fill_environment(dir, bytes, age_s);
}

void set_env(const char* k, const std::string& v) {
  if (v.empty()) ::unsetenv(k);
  else ::setenv(k, v.c_str(), 1);
}

}  // namespace

TEST(CacheLocation, EnvThenXdgThenHome) {
  const char* keys[] = {"OPGRAPH_COMPILED_CACHE", "XDG_CACHE_HOME", "HOME", "OPGRAPH_COMPILED_CACHE_MAX_BYTES"};
  std::vector<std::optional<std::string>> saved;
  for (auto k : keys) saved.push_back(std::getenv(k) ? std::optional<std::string>(std::getenv(k)) : std::nullopt);

  set_env("OPGRAPH_COMPILED_CACHE", "/tmp/explicit");
  set_env("XDG_CACHE_HOME", "/tmp/xdg");
  set_env("HOME", "/tmp/home");
  EXPECT_EQ(CacheOptions::from_env().root, fs::path("/tmp/explicit"));
  set_env("OPGRAPH_COMPILED_CACHE", "");
  EXPECT_EQ(CacheOptions::from_env().root, fs::path("/tmp/xdg/opgraph/compiled"));
  set_env("XDG_CACHE_HOME", "");
  EXPECT_EQ(CacheOptions::from_env().root, fs::path("/tmp/home/.cache/opgraph/compiled"));
  EXPECT_EQ(CacheOptions::from_env().max_bytes, 4ull << 30);
  set_env("OPGRAPH_COMPILED_CACHE_MAX_BYTES", "12345");
  EXPECT_EQ(CacheOptions::from_env().max_bytes, 12345u);
  set_env("OPGRAPH_COMPILED_CACHE_MAX_BYTES", "0");
  EXPECT_EQ(CacheOptions::from_env().max_bytes, 0u);

  for (std::size_t i = 0; i < saved.size(); ++i) set_env(keys[i], saved[i].value_or(""));
}

TEST(CachePrune, DeadSchemaFirstThenOldestNeverCurrent) {
  TempDir dir;
  CacheOptions o;
  o.root = dir.path();
  o.max_bytes = 0;
  CompiledCache cache(o, test_environment());
  ASSERT_TRUE(cache.prepare().is_good());  // the root's marker and the current environment
  const fs::path current = fill_environment(cache.environment_dir(), 10000, 99999);  // the oldest of all
  const fs::path dead_schema = fake_environment(dir.path() / "v0", 1, 10000, 1);     // the newest
  const fs::path old_env = fake_environment(dir.path() / "v1", 2, 10000, 5000);
  const fs::path mid_env = fake_environment(dir.path() / "v1", 3, 10000, 3000);
  const fs::path new_env = fake_environment(dir.path() / "v1", 4, 10000, 100);
  fs::create_directories(dir.path() / "notes");
  std::ofstream(dir.path() / "notes" / "keep.txt") << std::string(100000, 'k');  // foreign: never counted

  // Some 51 kB of opgraph's files; a 25000-byte cap removes the dead schema
  // root, then the two oldest environments.
  o.max_bytes = 25000;
  CompiledCache capped(o, test_environment());
  auto removed = capped.prune();
  ASSERT_TRUE(removed.is_good());
  EXPECT_EQ(*removed, 3u);
  EXPECT_EQ(capped.stats().pruned, 3u);
  EXPECT_FALSE(fs::exists(dead_schema));
  EXPECT_FALSE(fs::exists(dir.path() / "v0"));  // emptied, so removed
  EXPECT_FALSE(fs::exists(old_env));
  EXPECT_FALSE(fs::exists(mid_env));
  EXPECT_TRUE(fs::exists(new_env));
  EXPECT_TRUE(fs::exists(current));
  EXPECT_TRUE(fs::exists(dir.path() / "notes" / "keep.txt"));  // not ours: never touched

  // A cap below the current environment alone still keeps it.
  o.max_bytes = 1;
  CompiledCache tiny(o, test_environment());
  EXPECT_EQ(tiny.prune().value(), 1u);
  EXPECT_FALSE(fs::exists(new_env));
  EXPECT_TRUE(fs::exists(current));

  // Cap 0 disables pruning.
  const fs::path dead = fake_environment(dir.path() / "v1", 5, 5000, 10);
  o.max_bytes = 0;
  CompiledCache off(o, test_environment());
  EXPECT_EQ(off.prune().value(), 0u);
  EXPECT_TRUE(fs::exists(dead));
}

TEST(CachePrune, FirstWriteOfAProcessPrunes) {
  if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  TempDir dir;
  CacheOptions o;
  o.root = dir.path();
  o.max_bytes = 64 * 1024;
  const fs::path dead = fake_environment(dir.path() / "v1", 1, 200 * 1024, 50);
  std::mt19937 rng(std::random_device{}());
  CompiledCache cache(o, test_environment());
  ASSERT_TRUE(cache.get(random_smoke_request(rng), "sm_90a", elf_check()).is_good());
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_EQ(cache.stats().pruned, 1u);
  EXPECT_EQ(cache.list().size(), 1u);
}

TEST(CacheMaintenance, ListMarksCurrentAndClearKeepsForeignFiles) {
  if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  TempDir dir;
  CacheOptions o;
  o.root = dir.path();
  std::mt19937 rng(std::random_device{}());
  CompiledCache cache(o, test_environment());
  auto r1 = random_smoke_request(rng), r2 = random_smoke_request(rng);
  ASSERT_TRUE(cache.get(r1, "sm_90a", elf_check()).is_good());
  ASSERT_TRUE(cache.get(r2, "sm_90a", elf_check()).is_good());
  fake_environment(dir.path() / "v1", 1, 10, 10);
  std::ofstream(dir.path() / "README") << "not the cache's";
  auto envs = cache.list();
  ASSERT_EQ(envs.size(), 2u);
  const auto& cur = envs[0].current ? envs[0] : envs[1];
  EXPECT_TRUE(cur.current);
  EXPECT_EQ(cur.hash, cache.environment_dir().filename().string());
  std::vector<std::string> expected = {CompiledCache::entry_name(r1, "sm_90a"), CompiledCache::entry_name(r2, "sm_90a")};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(cur.entries, expected);
  EXPECT_GT(cur.bytes, 0u);
  auto cleared = cache.clear();
  ASSERT_TRUE(cleared.is_good()) << cleared.status().message();
  EXPECT_EQ(cleared->environments_removed, 2u);
  EXPECT_EQ(cleared->kept, std::vector<fs::path>{"README"});
  EXPECT_FALSE(fs::exists(dir.path() / "v1"));
  EXPECT_TRUE(fs::exists(dir.path() / "README"));
}

TEST(CacheConcurrency, SeveralProcessesWriteOneRoot) {
  if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  TempDir dir;
  // Six writers race on three shared entries and write one entry each.
  std::vector<pid_t> pids;
  int pipes[6][2];
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(::pipe(pipes[i]), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(pipes[i][1], 1);
      ::dup2(pipes[i][1], 2);
      const std::string root = dir.path().string(), tag = std::to_string(i);
      ::execl(OPGRAPH_RUNTIME_PROBE, OPGRAPH_RUNTIME_PROBE, "cache-worker", root.c_str(), tag.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(pipes[i][1]);
    pids.push_back(pid);
  }
  for (int i = 0; i < 6; ++i) {
    std::string out;
    char buf[1024];
    ssize_t n;
    while ((n = ::read(pipes[i][0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<std::size_t>(n));
    ::close(pipes[i][0]);
    int status = 0;
    ::waitpid(pids[i], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer " << i << ": " << out;
  }
  // Every entry is whole and reusable; no temp file was left behind.
  CacheOptions o;
  o.root = dir.path();
  CompiledCache reader(o, opgraph::runtime::CacheEnvironment::make(DeviceProperties::for_arch("sm_90a").value(), 13000, 13000));
  auto requests = smoke::declared_specialisations();
  requests.resize(3);
  for (int i = 0; i < 6; ++i) requests.push_back(smoke::affine_request({i + 0.5, 2.0, smoke::SmokeType::F32}));
  for (const auto& r : requests) ASSERT_TRUE(reader.get(r, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(reader.stats().hits, requests.size());
  EXPECT_EQ(reader.stats().invalid, 0u);
  // ... and every binary is the one its entry's record names: the writers who
  // lost a race left no orphan.
  std::size_t records = 0, cubins = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << e.path();
    if (e.path().extension() == ".cubin") ++cubins;
    if (e.path().extension() == ".json" && name != "environment.json") ++records;
  }
  EXPECT_EQ(records, requests.size());
  EXPECT_EQ(cubins, records) << "orphan binaries left by racing writers";
}
