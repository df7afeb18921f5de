// The loader layer: search order, lazy loading, decline with the reason, and
// that neither the built libraries nor a planning-only process depend on or
// map libcuda / libnvrtc / libcudnn.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/loader.h"
#include "runtime_test_util.h"

using namespace opgraph;
using namespace opgraph::runtime;
using opgraph::testing::run_process;
using opgraph::testing::TempDir;

namespace {

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::ptrdiff_t index_of(const std::vector<std::string>& v, const std::string& s) {
  auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() ? -1 : it - v.begin();
}

}  // namespace

TEST(Loader, SearchOrderEnvThenSonamesThenToolkitThenPython) {
  TempDir venv;
  std::filesystem::create_directories(venv.path() / "lib/python3.99/site-packages");
  ScopedEnv lib("OPGRAPH_LIBNVRTC", "/nowhere/libnvrtc-custom.so");
  ScopedEnv ve("VIRTUAL_ENV", venv.path().string());
  ScopedEnv home("CUDA_HOME", "/opt/my-cuda");
  auto c = library_candidates(Library::NVRTC);
  ASSERT_GE(c.size(), 6u);
  EXPECT_EQ(c[0], "/nowhere/libnvrtc-custom.so");
  EXPECT_EQ(c[1], "libnvrtc.so.13");
  EXPECT_EQ(c[2], "libnvrtc.so.12");
  const auto cuda_home = index_of(c, "/opt/my-cuda/lib64/libnvrtc.so.13");
  const auto toolkit = index_of(c, "/usr/local/cuda/lib64/libnvrtc.so.13");
  const auto python =
      index_of(c, (venv.path() / "lib/python3.99/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.13").string());
  EXPECT_GT(cuda_home, 2);
  EXPECT_GT(toolkit, cuda_home);
  EXPECT_GT(python, toolkit);

  auto cudnn = library_candidates(Library::CUDNN);
  EXPECT_EQ(cudnn[0], "libcudnn.so.9");  // OPGRAPH_LIBCUDNN unset: the soname first
  EXPECT_GE(index_of(cudnn, (venv.path() / "lib/python3.99/site-packages/nvidia/cudnn/lib/libcudnn.so.9").string()), 0);
  EXPECT_EQ(library_candidates(Library::CUDA_DRIVER)[0], "libcuda.so.1");
}

TEST(Loader, NvrtcLoadsWithItsTable) {
  auto api = nvrtc();
  ASSERT_TRUE(api.is_good()) << api.status().message();  // the toolkit is installed on CI
  EXPECT_TRUE(library_loaded(Library::NVRTC));
  EXPECT_GE((*api)->version, kMinNvrtcVersion);
  int major = 0, minor = 0;
  ASSERT_EQ((*api)->get_version(&major, &minor), NVRTC_SUCCESS);
  EXPECT_EQ((*api)->version, major * 1000 + minor * 10);
  EXPECT_FALSE((*api)->path.empty());
}

TEST(Loader, WrongLibraryDeclinesNamingEveryCandidate) {
  // A fresh process, since the outcome is decided once per process: libm has
  // none of the driver's symbols, so it must be rejected with the reason.
  auto r = run_process({OPGRAPH_RUNTIME_PROBE, "driver"}, {"OPGRAPH_LIBCUDA=libm.so.6"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  if (r.output.find("driver loaded from") != std::string::npos) {
    // A machine with a real driver: it was found after libm was rejected.
    EXPECT_EQ(r.output.find("driver loaded from libm.so.6"), std::string::npos) << r.output;
  } else {
    EXPECT_NE(r.output.find("GRAPH_NOT_SUPPORTED"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("libm.so.6: missing symbols"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("libcuda.so.1:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("OPGRAPH_LIBCUDA"), std::string::npos) << r.output;
  }
}

TEST(Loader, StubDriverIsRejectedNotUsed) {
  // The toolkit's link stub has every symbol but cannot run anything.
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no driver stub at " << stub;
  auto r = run_process({OPGRAPH_RUNTIME_PROBE, "driver"}, {"OPGRAPH_LIBCUDA=" + stub});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("driver loaded from " + stub), std::string::npos) << r.output;
}

TEST(Loader, PlanningOnlyProcessMapsNoCudaLibrary) {
  auto r = run_process({OPGRAPH_RUNTIME_PROBE, "plan"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("planned for sm_90a: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(": 0 plan(s)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("mapped "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("done"), std::string::npos) << r.output;
}

TEST(Loader, CompilingProcessMapsOnlyNvrtc) {
  // The same probe sees libnvrtc once a kernel is compiled: the check above
  // can fail. cuDNN stays unmapped (nothing asked for it). libcuda is mapped
  // only where a real driver exists: the compiled cache hashes the driver
  // version into its environment identity (on the H200 it is read; on a
  // machine without a driver it is hashed as "unknown" and never mapped).
  auto drv = run_process({OPGRAPH_RUNTIME_PROBE, "driver"});
  const bool real_driver = drv.output.find("driver loaded from ") != std::string::npos;
  auto r = run_process({OPGRAPH_RUNTIME_PROBE, "compile"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mapped "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libnvrtc"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("libcudnn"), std::string::npos) << r.output;
  if (!real_driver) {
    EXPECT_EQ(r.output.find("libcuda."), std::string::npos) << r.output;
  }
}
