// gpu/second_context.h — a second CUDA context on device 0 for the GPU tests
// that check a caller's own context survives planning and execute (cudnn_gpu,
// gemm_gpu). The loader's driver table has no cuCtxCreate, so it is looked up
// in the already-loaded libcuda. Created once and kept for the process, so no
// context address is ever reused by another. nullptr when refused; `why` then
// says what failed (the device's compute mode may forbid a second context: the
// tests report it, they do not skip).
#pragma once

#include <dlfcn.h>

#include <string>

#include "runtime/loader.h"

namespace opgraph::gpu_testing {

inline CUcontext second_context(const runtime::CudaDriverApi& d, std::string* why = nullptr) {
  static std::string failure;
  static CUcontext ctx = [&d]() -> CUcontext {
    void* lib = dlopen(d.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!lib) return failure = "dlopen(" + d.path + ", RTLD_NOLOAD) failed", nullptr;
    using CtxCreate = CUresult (*)(CUcontext*, unsigned int, CUdevice);
    auto create = reinterpret_cast<CtxCreate>(dlsym(lib, "cuCtxCreate_v2"));
    if (!create) return failure = "libcuda exports no cuCtxCreate_v2", nullptr;
    CUdevice dev = 0;
    if (d.device_get(&dev, 0) != CUDA_SUCCESS) return failure = "cuDeviceGet(0) failed", nullptr;
    CUcontext before = nullptr, c = nullptr;
    d.ctx_get_current(&before);
    const CUresult r = create(&c, 0, dev);  // makes c current
    d.ctx_set_current(before);
    if (r != CUDA_SUCCESS) {
      int mode = -1;
      d.device_get_attribute(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev);
      failure = "cuCtxCreate_v2: " + runtime::cuda_error_text(d, r) + "; device compute mode " + std::to_string(mode);
      return nullptr;
    }
    return c;
  }();
  if (why) *why = failure;
  return ctx;
}

}  // namespace opgraph::gpu_testing
