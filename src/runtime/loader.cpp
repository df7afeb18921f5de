// runtime/loader.cpp — library search, dlopen, typed symbol tables.
//
// Each library is opened at most once per process (std::call_once); the table
// or the failure is kept. A candidate is rejected, and the next one tried,
// when dlopen fails, a symbol of the table is missing (an old library), or the
// version is below the minimum; the final failure lists every rejection.
#include "runtime/loader.h"

#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "runtime/log.h"

namespace opgraph::runtime {

namespace {

std::vector<std::string> glob_dirs(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), GLOB_ONLYDIR | GLOB_NOSORT, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Every site-packages / dist-packages directory a python install could hold.
std::vector<std::string> python_package_dirs() {
  std::vector<std::string> roots = {"/usr/lib/python3*", "/usr/local/lib/python3*"};
  if (auto home = env_or_empty("HOME"); !home.empty()) roots.push_back(home + "/.local/lib/python3*");
  if (auto venv = env_or_empty("VIRTUAL_ENV"); !venv.empty()) roots.push_back(venv + "/lib/python3*");
  roots.push_back("/opt/*/.venv/lib/python3*");
  std::vector<std::string> out;
  for (const auto& root : roots) {
    for (const char* leaf : {"/site-packages", "/dist-packages"}) {
      for (auto& d : glob_dirs(root + leaf)) out.push_back(std::move(d));
    }
  }
  return out;
}

struct LibrarySpec {
  std::vector<std::string> sonames;
  std::vector<std::string> python_subdirs;  // relative to site-packages
};

LibrarySpec spec_of(Library lib) {
  switch (lib) {
    case Library::CUDA_DRIVER: return {{"libcuda.so.1"}, {}};
    case Library::NVRTC:
      return {{"libnvrtc.so.13", "libnvrtc.so.12"}, {"nvidia/cuda_nvrtc/lib", "nvidia/cu13/lib"}};
    case Library::CUDNN: return {{"libcudnn.so.9"}, {"nvidia/cudnn/lib", "nvidia/cu13/lib"}};
  }
  return {};
}

std::atomic<bool> g_loaded[3];

struct Opened {
  void* handle = nullptr;
  std::string path;
};

// Tries every candidate; `accept` binds the table and checks the version,
// returning an empty string on success or the reason for rejecting it.
template <class Accept>
Result<Opened> open_library(Library lib, Accept&& accept) {
  std::string tried;
  for (const auto& candidate : library_candidates(lib)) {
    void* h = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string why;
    if (!h) {
      const char* err = ::dlerror();
      why = err ? err : "dlopen failed";
    } else {
      why = accept(h);
      if (why.empty()) {
        g_loaded[static_cast<int>(lib)] = true;
        log(1, "loaded " + std::string(library_name(lib)) + " from " + candidate);
        return Opened{h, candidate};
      }
      ::dlclose(h);
    }
    tried += "\n  " + candidate + ": " + why;
  }
  return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                std::string(library_name(lib)) + " is not available (set " + std::string(library_env_var(lib)) +
                    " to its path); tried:" + tried);
}

// Binds `name` into `out`; appends to `missing` when absent.
template <class F>
void bind(void* h, const char* name, F& out, std::string& missing) {
  void* p = ::dlsym(h, name);
  if (!p) {
    missing += missing.empty() ? name : std::string(", ") + name;
    return;
  }
  out = reinterpret_cast<F>(p);
}

}  // namespace

std::string_view library_name(Library lib) noexcept {
  switch (lib) {
    case Library::CUDA_DRIVER: return "libcuda";
    case Library::NVRTC: return "libnvrtc";
    case Library::CUDNN: return "libcudnn";
  }
  return "?";
}

std::string_view library_env_var(Library lib) noexcept {
  switch (lib) {
    case Library::CUDA_DRIVER: return "OPGRAPH_LIBCUDA";
    case Library::NVRTC: return "OPGRAPH_LIBNVRTC";
    case Library::CUDNN: return "OPGRAPH_LIBCUDNN";
  }
  return "?";
}

std::vector<std::string> library_candidates(Library lib) {
  const LibrarySpec spec = spec_of(lib);
  std::vector<std::string> out;
  auto add = [&](std::string c) {
    if (!c.empty() && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  };
  add(env_or_empty(std::string(library_env_var(lib)).c_str()));
  for (const auto& s : spec.sonames) add(s);
  std::vector<std::string> toolkit;
  if (auto home = env_or_empty("CUDA_HOME"); !home.empty()) toolkit.push_back(home + "/lib64");
  if (auto path = env_or_empty("CUDA_PATH"); !path.empty()) toolkit.push_back(path + "/lib64");
  toolkit.push_back("/usr/local/cuda/lib64");
  for (const auto& dir : toolkit) {
    for (const auto& s : spec.sonames) add(dir + "/" + s);
  }
  if (!spec.python_subdirs.empty()) {
    for (const auto& site : python_package_dirs()) {
      for (const auto& sub : spec.python_subdirs) {
        for (const auto& s : spec.sonames) add(site + "/" + sub + "/" + s);
      }
    }
  }
  return out;
}

bool library_loaded(Library lib) noexcept { return g_loaded[static_cast<int>(lib)].load(); }

// Opens `lib` once per process and fills its table with `bind_all(handle, table)`,
// which returns "" or why the library is unusable; every later call returns the
// same table or the same failure.
template <class Api, class BindAll>
Result<const Api*> load_once(Library lib, BindAll bind_all) {
  static Api api;
  static Status failure;
  static std::once_flag once;
  std::call_once(once, [&] {
    Api a;
    auto opened = open_library(lib, [&](void* h) -> std::string { return bind_all(h, a); });
    if (opened.is_bad()) {
      failure = opened.status();
      return;
    }
    a.path = opened->path;
    api = std::move(a);
  });
  if (failure.is_bad()) return failure;
  return &api;
}

Result<const CudaDriverApi*> cuda_driver() {
  return load_once<CudaDriverApi>(Library::CUDA_DRIVER, [](void* h, CudaDriverApi& a) -> std::string {
    std::string missing;
    bind(h, "cuInit", a.init, missing);
    bind(h, "cuDriverGetVersion", a.driver_get_version, missing);
    bind(h, "cuGetErrorName", a.get_error_name, missing);
    bind(h, "cuGetErrorString", a.get_error_string, missing);
    bind(h, "cuDeviceGetCount", a.device_get_count, missing);
    bind(h, "cuDeviceGet", a.device_get, missing);
    bind(h, "cuDeviceGetName", a.device_get_name, missing);
    bind(h, "cuDeviceGetAttribute", a.device_get_attribute, missing);
    bind(h, "cuDevicePrimaryCtxRetain", a.primary_ctx_retain, missing);
    bind(h, "cuDevicePrimaryCtxRelease_v2", a.primary_ctx_release, missing);
    bind(h, "cuCtxSetCurrent", a.ctx_set_current, missing);
    bind(h, "cuCtxGetCurrent", a.ctx_get_current, missing);
    bind(h, "cuCtxSynchronize", a.ctx_synchronize, missing);
    bind(h, "cuModuleLoadData", a.module_load_data, missing);
    bind(h, "cuModuleUnload", a.module_unload, missing);
    bind(h, "cuModuleGetFunction", a.module_get_function, missing);
    bind(h, "cuFuncSetAttribute", a.func_set_attribute, missing);
    bind(h, "cuLaunchKernelEx", a.launch_kernel_ex, missing);
    bind(h, "cuMemAlloc_v2", a.mem_alloc, missing);
    bind(h, "cuMemFree_v2", a.mem_free, missing);
    bind(h, "cuMemcpyHtoD_v2", a.memcpy_htod, missing);
    bind(h, "cuMemcpyDtoH_v2", a.memcpy_dtoh, missing);
    bind(h, "cuMemsetD32_v2", a.memset_d32, missing);
    bind(h, "cuStreamCreate", a.stream_create, missing);
    bind(h, "cuStreamDestroy_v2", a.stream_destroy, missing);
    bind(h, "cuStreamSynchronize", a.stream_synchronize, missing);
    if (!missing.empty()) return "missing symbols (driver too old?): " + missing;
    std::string optional;  // events (timing only): null when the driver lacks them
    bind(h, "cuEventCreate", a.event_create, optional);
    bind(h, "cuEventRecord", a.event_record, optional);
    bind(h, "cuEventSynchronize", a.event_synchronize, optional);
    bind(h, "cuEventElapsedTime_v2", a.event_elapsed_time, optional);
    bind(h, "cuEventDestroy_v2", a.event_destroy, optional);
    bind(h, "cuTensorMapEncodeTiled", a.tensor_map_encode_tiled, optional);
    bind(h, "cuOccupancyMaxActiveClusters", a.occupancy_max_active_clusters, optional);
    bind(h, "cuMemcpyHtoDAsync_v2", a.memcpy_htod_async, optional);
    bind(h, "cuMemsetD32Async", a.memset_d32_async, optional);
    bind(h, "cuEventQuery", a.event_query, optional);
    bind(h, "cuStreamWaitEvent", a.stream_wait_event, optional);
    bind(h, "cuCtxGetDevice", a.ctx_get_device, optional);
    bind(h, "cuStreamBeginCapture_v2", a.stream_begin_capture, optional);
    bind(h, "cuStreamEndCapture", a.stream_end_capture, optional);
    bind(h, "cuStreamIsCapturing", a.stream_is_capturing, optional);
    bind(h, "cuGraphInstantiateWithFlags", a.graph_instantiate, optional);
    bind(h, "cuGraphLaunch", a.graph_launch, optional);
    bind(h, "cuGraphExecDestroy", a.graph_exec_destroy, optional);
    bind(h, "cuGraphDestroy", a.graph_destroy, optional);
    int v = 0;
    if (CUresult r = a.driver_get_version(&v); r != CUDA_SUCCESS) {
      return "cuDriverGetVersion failed with CUresult " + std::to_string(static_cast<int>(r)) +
             (r == CUDA_ERROR_STUB_LIBRARY ? " (the toolkit's link stub, not a driver)" : "");
    }
    if (v < kMinDriverVersion)
      return "driver version " + std::to_string(v) + " is below the minimum " + std::to_string(kMinDriverVersion);
    a.driver_version = v;
    return {};
  });
}

Result<const NvrtcApi*> nvrtc() {
  return load_once<NvrtcApi>(Library::NVRTC, [](void* h, NvrtcApi& a) -> std::string {
    std::string missing;
    bind(h, "nvrtcVersion", a.get_version, missing);
    bind(h, "nvrtcGetErrorString", a.get_error_string, missing);
    bind(h, "nvrtcCreateProgram", a.create_program, missing);
    bind(h, "nvrtcDestroyProgram", a.destroy_program, missing);
    bind(h, "nvrtcCompileProgram", a.compile_program, missing);
    bind(h, "nvrtcGetProgramLogSize", a.get_program_log_size, missing);
    bind(h, "nvrtcGetProgramLog", a.get_program_log, missing);
    bind(h, "nvrtcGetCUBINSize", a.get_cubin_size, missing);
    bind(h, "nvrtcGetCUBIN", a.get_cubin, missing);
    bind(h, "nvrtcAddNameExpression", a.add_name_expression, missing);
    bind(h, "nvrtcGetLoweredName", a.get_lowered_name, missing);
    if (!missing.empty()) return "missing symbols (NVRTC too old?): " + missing;
    int major = 0, minor = 0;
    if (a.get_version(&major, &minor) != NVRTC_SUCCESS) return "nvrtcVersion failed";
    int v = major * 1000 + minor * 10;
    if (v < kMinNvrtcVersion)
      return "NVRTC " + std::to_string(major) + "." + std::to_string(minor) + " is below the minimum 12.0";
    a.version = v;
    return {};
  });
}

Result<const CudnnApi*> cudnn() {
  return load_once<CudnnApi>(Library::CUDNN, [](void* h, CudnnApi& a) -> std::string {
    std::string missing;
    bind(h, "cudnnGetVersion", a.get_version, missing);
    bind(h, "cudnnGetErrorString", a.get_error_string, missing);
    bind(h, "cudnnGetLastErrorString", a.get_last_error_string, missing);
    bind(h, "cudnnCreate", a.create, missing);
    bind(h, "cudnnDestroy", a.destroy, missing);
    bind(h, "cudnnSetStream", a.set_stream, missing);
    bind(h, "cudnnBackendCreateDescriptor", a.backend_create_descriptor, missing);
    bind(h, "cudnnBackendDestroyDescriptor", a.backend_destroy_descriptor, missing);
    bind(h, "cudnnBackendFinalize", a.backend_finalize, missing);
    bind(h, "cudnnBackendSetAttribute", a.backend_set_attribute, missing);
    bind(h, "cudnnBackendGetAttribute", a.backend_get_attribute, missing);
    bind(h, "cudnnBackendExecute", a.backend_execute, missing);
    if (!missing.empty()) return "missing symbols (cuDNN too old?): " + missing;
    std::size_t v = a.get_version();
    if (v < static_cast<std::size_t>(kMinCudnnVersion))
      return "cuDNN version " + std::to_string(v) + " is below the minimum " + std::to_string(kMinCudnnVersion);
    a.version = v;
    return {};
  });
}

std::string cuda_error_text(const CudaDriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.get_error_name) api.get_error_name(result, &name);
  if (api.get_error_string) api.get_error_string(result, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(static_cast<int>(result))) + " (" +
         (text ? text : "no description") + ")";
}

Status cuda_check(const CudaDriverApi& api, CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return Status::ok();
  return {ErrorCode::CUDA_API_FAILED, std::string(what) + ": " + cuda_error_text(api, result)};
}

}  // namespace opgraph::runtime
