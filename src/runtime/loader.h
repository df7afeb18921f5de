// runtime/loader.h — THE loader layer: every libcuda / libnvrtc / libcudnn
// symbol opgraph uses is resolved here, with dlopen on first need.
//
// No opgraph library links any of the three (a test reads the built files'
// dynamic dependencies), so a process that only builds, validates and plans a
// graph never maps them (a test reads /proc/self/maps). The toolkit headers
// are included for types and enums only; each function pointer below is
// resolved by dlsym from the library the search found.
//
// Search order, per library (library_candidates): the environment variable
// (OPGRAPH_LIBCUDA / OPGRAPH_LIBNVRTC / OPGRAPH_LIBCUDNN: a path or a soname),
// then the standard sonames on the dynamic loader's path, then the CUDA
// toolkit ($CUDA_HOME/lib64, /usr/local/cuda/lib64), then python package
// locations (site-packages/nvidia/{cudnn,cuda_nvrtc,cu13}/lib under
// /usr/lib/python3*, /usr/local/lib/python3*, ~/.local, $VIRTUAL_ENV,
// /opt/*/.venv). The first candidate that opens, has every symbol of the table
// and is recent enough wins.
//
// A missing or too-old library is GRAPH_NOT_SUPPORTED naming every candidate
// tried and why it failed, so an engine that needs the library declines with
// that reason. cuDNN's entry points are declared below with their C ABI
// (enums as int, descriptors as void*), so building needs no cuDNN headers.
// The outcome (table or failure) is decided once per process and
// kept; all accessors are thread-safe.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/status.h"

struct cudnnContext;  // cuDNN's opaque handle type, as cudnn_graph.h declares it

namespace opgraph::runtime {

// The cuDNN C ABI the loader resolves (cudnn_graph.h, cuDNN 9).
namespace cudnn_abi {
using Status = int;  // cudnnStatus_t; 0 is CUDNN_STATUS_SUCCESS
using Handle = ::cudnnContext*;
using Descriptor = void*;  // cudnnBackendDescriptor_t
using GetVersion = std::size_t (*)();
using GetErrorString = const char* (*)(Status);
using GetLastErrorString = void (*)(char* message, std::size_t max_size);  // cudnnGetLastErrorString
using Create = Status (*)(Handle*);
using Destroy = Status (*)(Handle);
using SetStream = Status (*)(Handle, CUstream);
using BackendCreateDescriptor = Status (*)(int descriptor_type, Descriptor*);
using BackendDestroyDescriptor = Status (*)(Descriptor);
using BackendFinalize = Status (*)(Descriptor);
using BackendSetAttribute = Status (*)(Descriptor, int name, int type, std::int64_t count, const void* values);
using BackendGetAttribute = Status (*)(Descriptor, int name, int type, std::int64_t requested, std::int64_t* count,
                                       void* values);
using BackendExecute = Status (*)(Handle, Descriptor plan, Descriptor variant_pack);
}  // namespace cudnn_abi

enum class Library : std::uint8_t { CUDA_DRIVER, NVRTC, CUDNN };

// "libcuda", "libnvrtc", "libcudnn".
std::string_view library_name(Library lib) noexcept;
// The environment variable that names the library first.
std::string_view library_env_var(Library lib) noexcept;
// The ordered candidates dlopen tries (see the file comment); duplicates removed.
std::vector<std::string> library_candidates(Library lib);
// Whether this process has opened the library through the loader.
bool library_loaded(Library lib) noexcept;

// Minimum versions: driver 12.0 (cuLaunchKernelEx), NVRTC 12.0 (sm_90a), cuDNN 9.0.
inline constexpr int kMinDriverVersion = 12000;  // cuDriverGetVersion encoding
inline constexpr int kMinNvrtcVersion = 12000;   // 1000 * major + 10 * minor
inline constexpr int kMinCudnnVersion = 90000;   // cudnnGetVersion encoding

struct CudaDriverApi {
  std::string path;        // what dlopen opened
  int driver_version = 0;  // cuDriverGetVersion, e.g. 13000
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuLaunchKernelEx) launch_kernel_ex = nullptr;
  decltype(&::cuMemAlloc) mem_alloc = nullptr;
  decltype(&::cuMemFree) mem_free = nullptr;
  decltype(&::cuMemcpyHtoD) memcpy_htod = nullptr;
  decltype(&::cuMemcpyDtoH) memcpy_dtoh = nullptr;
  decltype(&::cuMemsetD32) memset_d32 = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy) stream_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  // Optional (nullptr when the driver lacks them; used for timing only).
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed_time = nullptr;  // cuEventElapsedTime_v2
  decltype(&::cuEventDestroy) event_destroy = nullptr;
  // Optional: TMA descriptors (CUDA 12.0+ drivers); nullptr when absent, and
  // kernels that need a tensor map decline at plan build.
  decltype(&::cuTensorMapEncodeTiled) tensor_map_encode_tiled = nullptr;
  decltype(&::cuOccupancyMaxActiveClusters) occupancy_max_active_clusters = nullptr;  // cluster launches
  // Optional: the cudnn engine's workspace initialisation (a sync copy without it).
  decltype(&::cuMemcpyHtoDAsync) memcpy_htod_async = nullptr;
  // Optional: gdn_bwd's one-pass form zeroes its dq / dk sums on the call's stream (the form declines without it).
  decltype(&::cuMemsetD32Async) memset_d32_async = nullptr;
  // Optional: the gemm engine's split-K scratch slots (whether a slot's last
  // launch finished; ordering a slot's new stream after its old one).
  decltype(&::cuEventQuery) event_query = nullptr;
  decltype(&::cuStreamWaitEvent) stream_wait_event = nullptr;
  // Optional: the cudnn engine's test that a caller's current context is on the
  // target device (without it only the device's primary context counts as on it).
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  // Optional: stream capture into CUDA graphs (what a caller does around a
  // CUDA-graph-safe execute; the capture tests, docs/dynamic_shapes.md).
  decltype(&::cuStreamBeginCapture) stream_begin_capture = nullptr;  // cuStreamBeginCapture_v2
  decltype(&::cuStreamEndCapture) stream_end_capture = nullptr;
  decltype(&::cuStreamIsCapturing) stream_is_capturing = nullptr;
  decltype(&::cuGraphInstantiate) graph_instantiate = nullptr;  // cuGraphInstantiateWithFlags
  decltype(&::cuGraphLaunch) graph_launch = nullptr;
  decltype(&::cuGraphExecDestroy) graph_exec_destroy = nullptr;
  decltype(&::cuGraphDestroy) graph_destroy = nullptr;
};

struct NvrtcApi {
  std::string path;
  int version = 0;  // 1000 * major + 10 * minor, e.g. 13000
  decltype(&::nvrtcVersion) get_version = nullptr;
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
  decltype(&::nvrtcAddNameExpression) add_name_expression = nullptr;
  decltype(&::nvrtcGetLoweredName) get_lowered_name = nullptr;
};

struct CudnnApi {
  std::string path;
  std::size_t version = 0;  // cudnnGetVersion, e.g. 91400
  cudnn_abi::GetVersion get_version = nullptr;
  cudnn_abi::GetErrorString get_error_string = nullptr;
  cudnn_abi::GetLastErrorString get_last_error_string = nullptr;
  cudnn_abi::Create create = nullptr;
  cudnn_abi::Destroy destroy = nullptr;
  cudnn_abi::SetStream set_stream = nullptr;
  cudnn_abi::BackendCreateDescriptor backend_create_descriptor = nullptr;
  cudnn_abi::BackendDestroyDescriptor backend_destroy_descriptor = nullptr;
  cudnn_abi::BackendFinalize backend_finalize = nullptr;
  cudnn_abi::BackendSetAttribute backend_set_attribute = nullptr;
  cudnn_abi::BackendGetAttribute backend_get_attribute = nullptr;
  cudnn_abi::BackendExecute backend_execute = nullptr;
};

// The resolved tables. The first call searches and opens; later calls return
// the same table or the same GRAPH_NOT_SUPPORTED status. The pointer lives for
// the process (the library is never closed).
Result<const CudaDriverApi*> cuda_driver();
Result<const NvrtcApi*> nvrtc();
Result<const CudnnApi*> cudnn();

// "CUDA_ERROR_X (text)" for a driver result, through the loaded table.
std::string cuda_error_text(const CudaDriverApi& api, CUresult result);
// CUDA_API_FAILED "<what>: <cuda_error_text>" unless result is CUDA_SUCCESS.
Status cuda_check(const CudaDriverApi& api, CUresult result, std::string_view what);

}  // namespace opgraph::runtime
