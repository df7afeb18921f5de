// bench/nvrtc_cubin.cpp — a kernel source compiled to a cubin through NVRTC with the options the engines'
// runtime uses (src/runtime/nvrtc_compiler.cpp, nvrtc_options: --gpu-architecture, -std=c++17,
// -default-device), the kernel headers from the tree (-I) instead of the embedded copies, and -D defines.
// For A/B runs that measure what the engine runs: nvcc's front end makes pointers into shared memory 32 bits
// wide and NVRTC's does not, and on the H200 the fused gdn prefill's nvcc build ran ~8% faster than its
// NVRTC build of the same source (bench/results/2026-12-03-gdn-nvrtc-vs-nvcc-h200.txt).
//   nvcc -std=c++17 bench/nvrtc_cubin.cpp -o nvrtc_cubin -lnvrtc
//   ./nvrtc_cubin OUT.cubin ARCH SOURCE.cu [-DNAME=VALUE ...]      (run from the repository root)
#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s OUT.cubin ARCH SOURCE.cu [-DNAME=VALUE ...]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[3]);
  if (!in) {
    std::fprintf(stderr, "nvrtc_cubin: cannot read %s\n", argv[3]);
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string src = text.str();
  std::vector<std::string> opts = {std::string("--gpu-architecture=") + argv[2], "-std=c++17", "-default-device",
                                   "-Isrc/engines", "-Isrc/runtime/kernels/include"};
  for (int i = 4; i < argc; ++i) opts.emplace_back(argv[i]);
  std::vector<const char*> o;
  for (const auto& s : opts) o.push_back(s.c_str());
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src.c_str(), argv[3], 0, nullptr, nullptr) != NVRTC_SUCCESS) return 1;
  const nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(o.size()), o.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 1) nvrtcGetProgramLog(prog, log.data());
  if (r != NVRTC_SUCCESS) {
    std::fprintf(stderr, "nvrtc_cubin: %s\n%s\n", nvrtcGetErrorString(r), log.c_str());
    return 1;
  }
  std::fputs(log.c_str(), stderr);  // e.g. ptxas's register and spill lines under --ptxas-options=-v
  size_t n = 0;
  if (nvrtcGetCUBINSize(prog, &n) != NVRTC_SUCCESS || n == 0) return 1;
  std::string cubin(n, '\0');
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  std::ofstream(argv[1], std::ios::binary).write(cubin.data(), static_cast<std::streamsize>(n));
  return 0;
}
