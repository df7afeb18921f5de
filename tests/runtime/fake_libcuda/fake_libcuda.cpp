// fake_libcuda — a CUDA driver of two fake devices, for CPU tests of what the
// runtime and the engines do with a device ordinal (loaded through
// OPGRAPH_LIBCUDA by runtime_probe in a fresh process; no GPU anywhere).
//
//   device 0  "Fake GPU 0", sm_90, 132 SMs     device 1  "Fake GPU 1", sm_80, 108 SMs
//
// OPGRAPH_FAKE_CUDA_DEVICE1_SM=90 makes device 1 an sm_90 (sm_90's shared memory,
// still 108 SMs), for engines that plan for sm_90 only (linear_attention).
//
// Contexts are (CUcontext)(0x1000 + device), current per thread. Device memory
// is host memory (malloc), so copies round-trip. Modules, functions and launches
// succeed and do nothing. Every call that names a device or a context prints one
// line to stderr, "fake-cuda: <call> device N", which the tests read: which
// device each step opened (cuCtxSetCurrent only when the current context changes,
// "none" for no context). Only the entry points the loader requires are here
// (events, tensor maps and the occupancy query stay absent, as on an old driver).
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kDevices = 2;
thread_local CUcontext t_current = nullptr;

CUcontext context_of(CUdevice d) { return reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(0x1000 + d)); }
int device_of(CUcontext c) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(c) - 0x1000); }

// Device 1's compute capability major: 8, or 9 under OPGRAPH_FAKE_CUDA_DEVICE1_SM=90.
int device1_major() {
  const char* sm = std::getenv("OPGRAPH_FAKE_CUDA_DEVICE1_SM");
  return sm && std::strcmp(sm, "90") == 0 ? 9 : 8;
}

void say(const char* call, int device) {
  std::fprintf(stderr, "fake-cuda: %s device %d\n", call, device);
  std::fflush(stderr);
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuInit(unsigned int) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuDriverGetVersion(int* v) {
  *v = 12080;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorName(CUresult r, const char** s) {
  *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorString(CUresult, const char** s) {
  *s = "fake driver";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetCount(int* n) {
  *n = kDevices;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal < 0 || ordinal >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice d) {
  std::snprintf(name, static_cast<std::size_t>(len), "Fake GPU %d", static_cast<int>(d));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
  if (d < 0 || d >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = d == 0 ? 9 : device1_major(); break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = d == 0 ? 132 : 108; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = d == 0 ? 60 << 20 : 40 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *v = d == 0 || device1_major() == 9 ? 232448 : 166912;
      break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  if (d < 0 || d >= kDevices) return CUDA_ERROR_INVALID_DEVICE;
  say("cuDevicePrimaryCtxRetain", d);
  *c = context_of(d);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) {
  say("cuDevicePrimaryCtxRelease", d);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  if (c != t_current) {
    if (c) say("cuCtxSetCurrent", device_of(c));
    else std::fprintf(stderr, "fake-cuda: cuCtxSetCurrent none\n");
  }
  t_current = c;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* c) {
  *c = t_current;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice* d) {
  if (!t_current) return CUDA_ERROR_INVALID_CONTEXT;
  *d = device_of(t_current);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSynchronize() {
  if (!t_current) return CUDA_ERROR_INVALID_CONTEXT;
  say("cuCtxSynchronize", device_of(t_current));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleLoadData(CUmodule* m, const void*) {
  if (!t_current) return CUDA_ERROR_INVALID_CONTEXT;
  say("cuModuleLoadData", device_of(t_current));
  *m = reinterpret_cast<CUmodule>(std::malloc(1));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule m) {
  std::free(m);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule m, const char*) {
  *f = reinterpret_cast<CUfunction>(m);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void**, void**) {
  if (!t_current) return CUDA_ERROR_INVALID_CONTEXT;
  say("cuLaunchKernelEx", device_of(t_current));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  if (!t_current) return CUDA_ERROR_INVALID_CONTEXT;
  say("cuMemAlloc", device_of(t_current));
  *p = reinterpret_cast<CUdeviceptr>(std::malloc(bytes));
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  if (!t_current) return CUDA_ERROR_INVALID_CONTEXT;
  say("cuMemFree", device_of(t_current));
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemsetD32(CUdeviceptr p, unsigned int v, size_t n) {
  auto* w = reinterpret_cast<unsigned int*>(p);
  for (size_t i = 0; i < n; ++i) w[i] = v;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamCreate(CUstream* s, unsigned int) {
  *s = reinterpret_cast<CUstream>(std::malloc(1));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  std::free(s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }

}  // extern "C"
