// runtime/device.cpp — device properties, primary context, module load and launch.
#include "runtime/device.h"

#include "runtime/log.h"

namespace opgraph::runtime {

Result<int> device_count() {
  auto api_r = cuda_driver();
  if (api_r.is_bad()) return api_r.status();
  const CudaDriverApi& api = **api_r;
  CUresult r = api.init(0);
  if (r != CUDA_SUCCESS) {
    return Status(ErrorCode::INVALID_CUDA_DEVICE, "cuInit failed (no usable GPU?): " + cuda_error_text(api, r));
  }
  int count = 0;
  OPGRAPH_CHECK(cuda_check(api, api.device_get_count(&count), "cuDeviceGetCount"));
  return count;
}

Result<DeviceRef> find_device(int ordinal) {
  auto count = device_count();
  if (count.is_bad()) return count.status();
  if (ordinal < 0 || ordinal >= *count) {
    return Status(ErrorCode::INVALID_CUDA_DEVICE,
                  "device " + std::to_string(ordinal) + " does not exist (" + std::to_string(*count) + " visible)");
  }
  DeviceRef ref;
  ref.api = cuda_driver().value();
  OPGRAPH_CHECK(cuda_check(*ref.api, ref.api->device_get(&ref.device, ordinal), "cuDeviceGet"));
  return ref;
}

Result<DeviceProperties> read_device_properties(int ordinal) {
  auto found = find_device(ordinal);
  if (found.is_bad()) return found.status();
  const CudaDriverApi* api = found->api;
  const CUdevice dev = found->device;
  DeviceProperties p;
  p.ordinal = ordinal;
  auto attr = [&](CUdevice_attribute a, auto& out, const char* what) -> Status {
    int v = 0;
    OPGRAPH_CHECK(cuda_check(*api, api->device_get_attribute(&v, a, dev), std::string("cuDeviceGetAttribute ") + what));
    out = v;
    return Status::ok();
  };
  OPGRAPH_CHECK(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, p.major, "cc major"));
  OPGRAPH_CHECK(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, p.minor, "cc minor"));
  OPGRAPH_CHECK(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, p.sm_count, "SM count"));
  OPGRAPH_CHECK(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, p.l2_bytes, "L2 size"));
  OPGRAPH_CHECK(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, p.smem_per_block_optin, "smem opt-in"));
  char name[256] = {};
  OPGRAPH_CHECK(cuda_check(*api, api->device_get_name(name, sizeof(name), dev), "cuDeviceGetName"));
  p.name = name;
  return p;
}

KernelRuntime::KernelRuntime(const CudaDriverApi* api, CUdevice dev, CUcontext ctx, DeviceProperties props,
                             CompiledCache cache)
    : api_(api), dev_(dev), ctx_(ctx), device_(std::move(props)), cache_(std::move(cache)) {}

Result<std::unique_ptr<KernelRuntime>> KernelRuntime::open(int ordinal, CacheOptions options) {
  auto props = read_device_properties(ordinal);
  if (props.is_bad()) return props.status();
  auto found = find_device(ordinal);
  if (found.is_bad()) return found.status();
  const CudaDriverApi* api = found->api;
  const CUdevice dev = found->device;
  CUcontext ctx = nullptr;
  OPGRAPH_CHECK(cuda_check(*api, api->primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain"));
  if (Status s = cuda_check(*api, api->ctx_set_current(ctx), "cuCtxSetCurrent"); s.is_bad()) {
    api->primary_ctx_release(dev);
    return s;
  }
  CompiledCache cache(std::move(options), CacheEnvironment::current(*props, /*probe_driver=*/true));
  return std::unique_ptr<KernelRuntime>(new KernelRuntime(api, dev, ctx, std::move(*props), std::move(cache)));
}

KernelRuntime::~KernelRuntime() {
  api_->ctx_set_current(ctx_);
  for (auto& [key, k] : loaded_) api_->module_unload(k->module);
  api_->primary_ctx_release(dev_);
}

Result<const LoadedKernel*> KernelRuntime::get(const KernelRequest& request) {
  const std::string arch = device_.arch();
  const std::string key = request.key(arch);
  if (auto it = loaded_.find(key); it != loaded_.end()) return it->second.get();
  OPGRAPH_CHECK(cuda_check(*api_, api_->ctx_set_current(ctx_), "cuCtxSetCurrent"));
  CUmodule module = nullptr;
  // The check the cache runs on every cubin it serves: the driver must load it.
  auto check = [&](const CompiledKernel& k) -> Status {
    if (module) api_->module_unload(module);
    module = nullptr;
    return cuda_check(*api_, api_->module_load_data(&module, k.cubin.data()), "cuModuleLoadData");
  };
  auto compiled = cache_.get(request, arch, check);
  if (compiled.is_bad()) {
    if (module) api_->module_unload(module);
    return compiled.status();
  }
  auto loaded = std::make_unique<LoadedKernel>();
  loaded->name = CompiledCache::entry_name(request, arch);
  loaded->module = module;
  CUresult r = api_->module_get_function(&loaded->function, module, compiled->lowered_name.c_str());
  if (r != CUDA_SUCCESS) {
    api_->module_unload(module);
    return Status(ErrorCode::CUDA_API_FAILED, "cuModuleGetFunction('" + compiled->lowered_name + "') for " +
                                                  loaded->name + ": " + cuda_error_text(*api_, r));
  }
  const LoadedKernel* out = loaded.get();
  loaded_.emplace(key, std::move(loaded));
  return out;
}

namespace {

CUlaunchConfig config_of(const LaunchDims& dims, CUstream stream, CUlaunchAttribute* cluster_attr) {
  CUlaunchConfig config{};
  config.gridDimX = dims.grid[0];
  config.gridDimY = dims.grid[1];
  config.gridDimZ = dims.grid[2];
  config.blockDimX = dims.block[0];
  config.blockDimY = dims.block[1];
  config.blockDimZ = dims.block[2];
  config.sharedMemBytes = dims.shared_bytes;
  config.hStream = stream;
  config.attrs = nullptr;
  config.numAttrs = 0;
  if (dims.cluster[0] * dims.cluster[1] * dims.cluster[2] > 1) {
    cluster_attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster_attr->value.clusterDim.x = dims.cluster[0];
    cluster_attr->value.clusterDim.y = dims.cluster[1];
    cluster_attr->value.clusterDim.z = dims.cluster[2];
    config.attrs = cluster_attr;
    config.numAttrs = 1;
  }
  return config;
}

// Raises `kernel`'s dynamic shared memory limit to `bytes` once (a second
// thread racing here sets the same value again, which is harmless).
Status ensure_shared_limit(const CudaDriverApi& api, const LoadedKernel& kernel, unsigned bytes) {
  if (bytes <= kernel.shared_limit.load(std::memory_order_relaxed)) return Status::ok();
  const CUresult r =
      api.func_set_attribute(kernel.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes));
  if (r != CUDA_SUCCESS) return cuda_check(api, r, "cuFuncSetAttribute(max dynamic shared) for " + kernel.name);
  kernel.shared_limit.store(bytes, std::memory_order_relaxed);
  return Status::ok();
}

}  // namespace

Status KernelRuntime::launch(const LoadedKernel& kernel, const LaunchDims& dims, CUstream stream, void** args) const {
  // Messages are built only on failure: this runs on every execute.
  OPGRAPH_CHECK(ensure_shared_limit(*api_, kernel, dims.shared_bytes));
  CUlaunchAttribute cluster;
  const CUlaunchConfig config = config_of(dims, stream, &cluster);
  const CUresult r = api_->launch_kernel_ex(&config, kernel.function, args, nullptr);
  if (r != CUDA_SUCCESS) return cuda_check(*api_, r, "cuLaunchKernelEx " + kernel.name);
  return Status::ok();
}

Result<int> KernelRuntime::max_active_clusters(const LoadedKernel& kernel, const LaunchDims& dims) const {
  if (!api_->occupancy_max_active_clusters)
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED, "the CUDA driver has no cuOccupancyMaxActiveClusters");
  OPGRAPH_CHECK(ensure_shared_limit(*api_, kernel, dims.shared_bytes));
  CUlaunchAttribute cluster;
  const CUlaunchConfig config = config_of(dims, nullptr, &cluster);
  int n = 0;
  const CUresult r = api_->occupancy_max_active_clusters(&n, kernel.function, &config);
  if (r != CUDA_SUCCESS) return cuda_check(*api_, r, "cuOccupancyMaxActiveClusters for " + kernel.name);
  return n;
}

}  // namespace opgraph::runtime
