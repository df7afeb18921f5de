// The compiled cache touches only its own and loads only from folders no one
// else can write (another user's files are neither ours to delete nor ours to
// trust): the root's marker file, prune and clear
// that leave foreign files and folders alone (and never count them toward the
// cap), a replaced corrupt entry leaving no orphan files, folders created
// private to their owner whatever the umask, and folders writable by group or
// others (or owned by another user) never loaded from. Compile-only: no GPU.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

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

constexpr const char* kMarker = "OPGRAPH_CACHE.txt";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Regular files under `dir` (recursively) whose names end with `suffix`.
std::vector<fs::path> files_ending(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(e.path());
    }
  }
  return out;
}

std::uint64_t bytes_under(const fs::path& dir) {
  std::uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

class CacheTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto api = nvrtc(); api.is_bad()) GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
    options_.root = dir_.path();
    options_.max_bytes = 0;  // each test prunes when it means to
    request_ = random_smoke_request(rng_);
  }
  CompiledCache make(CacheOptions o, std::optional<int> driver = 13000) {
    return CompiledCache(std::move(o), test_environment(driver));
  }
  // Compiles `request_` into a fresh cache object (as a new process would) and returns its stats.
  CacheStats get_once(const CacheOptions& o) {
    auto c = make(o);
    auto k = c.get(request_, "sm_90a", elf_check());
    EXPECT_TRUE(k.is_good()) << k.status().message();
    return c.stats();
  }

  TempDir dir_;
  CacheOptions options_;
  std::mt19937 rng_{std::random_device{}()};
  KernelRequest request_;
};

}  // namespace

TEST_F(CacheTrust, RootCarriesAMarkerNamingOpgraph) {
  auto c = make(options_);
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());
  const fs::path marker = dir_.path() / kMarker;
  ASSERT_TRUE(fs::is_regular_file(marker)) << "no " << marker;
  EXPECT_NE(read(marker).find("opgraph"), std::string::npos) << read(marker);
  EXPECT_NE(read(marker).find("docs/environment.md"), std::string::npos) << read(marker);
}

TEST_F(CacheTrust, PruneNeitherCountsNorRemovesForeignFiles) {
  // Two environments opgraph wrote: a dead one (another driver) and the current one.
  auto dead = make(options_, 12080);
  ASSERT_TRUE(dead.get(request_, "sm_90a", elf_check()).is_good());
  auto current = make(options_);
  ASSERT_TRUE(current.get(request_, "sm_90a", elf_check()).is_good());
  const std::uint64_t ours = bytes_under(dead.environment_dir()) + bytes_under(current.environment_dir());

  // What a user keeps in the same folder: a 5 GiB file (sparse), a v2/ folder
  // that looks like a schema root, a folder and a file inside v1/.
  const fs::path big = dir_.path() / "big.bin";
  write(big, "");
  fs::resize_file(big, 5ull << 30);
  fs::create_directories(dir_.path() / "v2" / "project");
  write(dir_.path() / "v2" / "project" / "data.txt", "mine");
  fs::create_directories(dir_.path() / "v1" / "notes");
  write(dir_.path() / "v1" / "notes" / "todo.txt", "mine");
  write(dir_.path() / "v1" / "readme.txt", "mine");

  // Under the cap when only opgraph's files count: nothing goes.
  auto o = options_;
  o.max_bytes = ours;
  auto at_cap = make(o);
  auto removed = at_cap.prune();
  ASSERT_TRUE(removed.is_good()) << removed.status().message();
  EXPECT_EQ(*removed, 0u);
  EXPECT_TRUE(fs::exists(dir_.path() / "v2" / "project" / "data.txt"));
  EXPECT_TRUE(fs::exists(dead.environment_dir()));

  // One byte under: the dead environment goes, and only it.
  o.max_bytes = ours - 1;
  auto below = make(o);
  removed = below.prune();
  ASSERT_TRUE(removed.is_good()) << removed.status().message();
  EXPECT_EQ(*removed, 1u);
  EXPECT_FALSE(fs::exists(dead.environment_dir()));
  EXPECT_TRUE(fs::exists(current.environment_dir()));
  EXPECT_EQ(fs::file_size(big), 5ull << 30);
  EXPECT_EQ(read(dir_.path() / "v2" / "project" / "data.txt"), "mine");
  EXPECT_EQ(read(dir_.path() / "v1" / "notes" / "todo.txt"), "mine");
  EXPECT_EQ(read(dir_.path() / "v1" / "readme.txt"), "mine");

  // A cap of one byte: still nothing foreign, and never the current environment.
  o.max_bytes = 1;
  auto tiny = make(o);
  EXPECT_EQ(tiny.prune().value(), 0u);
  EXPECT_TRUE(fs::exists(big));
  EXPECT_TRUE(fs::exists(dir_.path() / "v2" / "project" / "data.txt"));
  EXPECT_TRUE(fs::exists(current.environment_dir()));
}

TEST_F(CacheTrust, ClearRemovesOnlyWhatOpgraphWrote) {
  auto dead = make(options_, 12080);
  ASSERT_TRUE(dead.get(request_, "sm_90a", elf_check()).is_good());
  auto current = make(options_);
  ASSERT_TRUE(current.get(request_, "sm_90a", elf_check()).is_good());
  fs::create_directories(dir_.path() / "v3" / "work");
  write(dir_.path() / "v3" / "work" / "keep.txt", "mine");
  fs::create_directories(dir_.path() / "v1" / "notes");
  write(dir_.path() / "v1" / "notes" / "todo.txt", "mine");
  write(dir_.path() / "v1" / "readme.txt", "mine");
  write(current.environment_dir() / "my-notes.txt", "mine");  // a foreign file inside an environment

  auto cleared = current.clear();
  ASSERT_TRUE(cleared.is_good());
  EXPECT_EQ(read(dir_.path() / "v3" / "work" / "keep.txt"), "mine");
  EXPECT_EQ(read(dir_.path() / "v1" / "notes" / "todo.txt"), "mine");
  EXPECT_EQ(read(dir_.path() / "v1" / "readme.txt"), "mine");
  EXPECT_EQ(read(current.environment_dir() / "my-notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(dead.environment_dir()));
  // Every file opgraph wrote is gone: no record, binary or environment.json is left.
  EXPECT_TRUE(files_ending(dir_.path(), ".cubin").empty());
  EXPECT_TRUE(files_ending(dir_.path(), "environment.json").empty());
  EXPECT_FALSE(fs::exists(current.environment_dir() / (CompiledCache::entry_name(request_, "sm_90a") + ".json")));
}

TEST_F(CacheTrust, PruneAndClearLeaveARootWithoutTheMarker) {
  // A folder opgraph never marked (e.g. OPGRAPH_COMPILED_CACHE pointed at a
  // copy of a cache): its environments look like opgraph's but are not removed.
  auto dead = make(options_, 12080);
  ASSERT_TRUE(dead.get(request_, "sm_90a", elf_check()).is_good());
  auto current = make(options_);
  ASSERT_TRUE(current.get(request_, "sm_90a", elf_check()).is_good());
  const fs::path copy = dir_.path() / "copy";
  fs::create_directories(copy);
  fs::copy(dir_.path() / "v1", copy / "v1", fs::copy_options::recursive);
  ASSERT_FALSE(fs::exists(copy / kMarker));

  auto o = options_;
  o.root = copy;
  o.max_bytes = 1;
  auto other = make(o);
  EXPECT_EQ(other.prune().value(), 0u);
  EXPECT_TRUE(fs::exists(copy / "v1" / dead.environment_dir().filename()));
  auto cleared = other.clear();
  EXPECT_TRUE(cleared.is_bad());
  EXPECT_TRUE(fs::exists(copy / "v1" / dead.environment_dir().filename()));
  EXPECT_TRUE(fs::exists(copy / "v1" / current.environment_dir().filename()));
}

TEST_F(CacheTrust, ReplacingACorruptEntryRemovesItsOldFiles) {
  auto warm = make(options_);
  auto k = warm.get(request_, "sm_90a", elf_check());
  ASSERT_TRUE(k.is_good());
  const std::string name = CompiledCache::entry_name(request_, "sm_90a");
  const fs::path env = warm.environment_dir();
  const fs::path record_path = env / (name + ".json");

  // The record names a binary that passes size and digest but is no ELF; a
  // binary of the same entry that no record names (a crash between the two
  // renames) and a temp file of a crashed writer sit beside it.
  const std::string garbage(k->cubin.size(), 'g');
  const std::string garbage_file = name + "." + fnv1a64_hex(garbage) + ".cubin";
  write(env / garbage_file, garbage);
  auto record = nlohmann::json::parse(read(record_path));
  const std::string good_file = record["cubin_file"].get<std::string>();
  record["cubin_file"] = garbage_file;
  record["cubin_fnv1a64"] = fnv1a64_hex(garbage);
  write(record_path, record.dump());
  fs::remove(env / good_file);
  const std::string stray_file = name + ".0123456789abcdef.cubin";
  write(env / stray_file, "left by a crash");
  const std::string temp_file = name + ".json.tmp.99999.0";
  write(env / temp_file, "{");
  write(env / "notes.cubin.txt", "mine");  // not opgraph's: stays

  auto c = make(options_);
  ASSERT_TRUE(c.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(c.stats().invalid, 1u);
  EXPECT_FALSE(fs::exists(env / garbage_file));
  EXPECT_FALSE(fs::exists(env / stray_file));
  EXPECT_FALSE(fs::exists(env / temp_file));
  EXPECT_TRUE(fs::exists(env / "notes.cubin.txt"));
  auto cubins = files_ending(env, ".cubin");
  ASSERT_EQ(cubins.size(), 1u);
  EXPECT_EQ(cubins[0].filename().string(),
            nlohmann::json::parse(read(record_path))["cubin_file"].get<std::string>());
  auto again = make(options_);
  ASSERT_TRUE(again.get(request_, "sm_90a", elf_check()).is_good());
  EXPECT_EQ(again.stats().hits, 1u);
}

TEST_F(CacheTrust, FoldersItCreatesAreOnlyItsOwnToWriteWhateverTheUmask) {
  auto o = options_;
  o.root = dir_.path() / "fresh" / "compiled";
  const mode_t old = ::umask(002);  // a user-private-group umask: new folders group-writable
  auto c = make(o);
  auto k = c.get(request_, "sm_90a", elf_check());
  ::umask(old);
  ASSERT_TRUE(k.is_good()) << k.status().message();
  for (const fs::path& p : {o.root, o.root / "v1", c.environment_dir()}) {
    const auto perms = fs::status(p).permissions();
    EXPECT_EQ(perms & (fs::perms::group_write | fs::perms::others_write), fs::perms::none) << p;
  }
  EXPECT_EQ(get_once(o).hits, 1u);
}

TEST_F(CacheTrust, FoldersOthersCanWriteAreNotLoadedFrom) {
  auto warm = make(options_);
  ASSERT_TRUE(warm.get(request_, "sm_90a", elf_check()).is_good());
  const fs::path record = warm.environment_dir() / (CompiledCache::entry_name(request_, "sm_90a") + ".json");
  const std::string record_text = read(record);
  for (const fs::path& p : {dir_.path(), dir_.path() / "v1", warm.environment_dir()}) {
    for (fs::perms bit : {fs::perms::group_write, fs::perms::others_write}) {
      fs::permissions(p, bit, fs::perm_options::add);
      const CacheStats s = get_once(options_);
      EXPECT_EQ(s.hits, 0u) << p << " mode " << std::oct << static_cast<unsigned>(fs::status(p).permissions());
      EXPECT_EQ(s.misses, 1u) << p;
      fs::permissions(p, bit, fs::perm_options::remove);
      EXPECT_EQ(read(record), record_text) << "an untrusted folder was written into";
    }
  }
  EXPECT_EQ(get_once(options_).hits, 1u);  // private again: served from disk

  if (::geteuid() != 0) return;  // only root can hand a folder to another user
  const fs::path env = warm.environment_dir();
  ASSERT_EQ(::chown(env.c_str(), 65534, 65534), 0);
  const CacheStats s = get_once(options_);
  EXPECT_EQ(s.hits, 0u) << "an environment folder owned by another user was loaded from";
  ASSERT_EQ(::chown(env.c_str(), ::geteuid(), ::getegid()), 0);
  EXPECT_EQ(get_once(options_).hits, 1u);
}

TEST_F(CacheTrust, UntrustedRootIsLoggedOncePerProcess) {
  // The probe's cache worker asks for four kernels; the refusal is printed
  // once, at the default log level.
  fs::permissions(dir_.path(), fs::perms::others_write, fs::perm_options::add);
  auto run = run_process({OPGRAPH_RUNTIME_PROBE, "cache-worker", dir_.path().string(), "1"}, {"OPGRAPH_LOG_LEVEL="});
  fs::permissions(dir_.path(), fs::perms::others_write, fs::perm_options::remove);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(count_of(run.output, "not loading from"), 1) << run.output;
  EXPECT_EQ(count_of(run.output, "hits 0 misses 4"), 1) << run.output;
  EXPECT_FALSE(fs::exists(dir_.path() / "v1")) << "an untrusted root was written into";
}
