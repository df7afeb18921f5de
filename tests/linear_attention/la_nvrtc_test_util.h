// tests/linear_attention/la_nvrtc_test_util.h — compiling a family's declared kernels as `opgraph cache warm`
// does: one NVRTC compile a build (KernelRequest::build_key), each entry checked to be a function of its cubin.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/nvrtc_compiler.h"

namespace la_test {

// Compiles each build of `requests` once for sm_90a (failures recorded, naming the entry) and checks that every
// request's entry is a function symbol of its build's cubin. Returns the number of builds compiled.
inline std::size_t compile_each_build_once(const std::vector<opgraph::runtime::KernelRequest>& requests) {
  std::map<std::string, opgraph::runtime::CompiledKernel> builds;
  for (const auto& r : requests) {
    auto it = builds.find(r.build_key());
    if (it == builds.end()) {
      auto k = opgraph::runtime::compile_kernel(r, "sm_90a");
      EXPECT_TRUE(k.is_good()) << r.kernel << ": " << k.status().message();
      if (k.is_bad()) continue;
      it = builds.emplace(r.build_key(), std::move(*k)).first;
    }
    EXPECT_TRUE(opgraph::runtime::validate_cubin(it->second.cubin, r.entry).is_good())
        << r.kernel << " in the build of " << r.source;
  }
  return builds.size();
}

}  // namespace la_test
