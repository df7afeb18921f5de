// tools/cli_run_device.cpp — device buffers, workspace and handle for `opgraph run`
// (see cli_run_device.h).
#include "cli_run_device.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "exec/device_buffer.h"
#include "runtime/device.h"

namespace opgraph::cli {
namespace {

class DeviceHandle final : public Handle {
 public:
  explicit DeviceHandle(const DeviceProperties* d) : d_(d) {}
  Result<void*> stream() const override { return static_cast<void*>(nullptr); }  // the default stream
  const DeviceProperties* device() const override { return d_; }

 private:
  const DeviceProperties* d_;
};

}  // namespace

Status run_on_device(const Graph& g, std::vector<HostTensor>& bufs, std::int64_t iters, double* best_ms,
                     double* total_ms) {
  // Retains device 0's primary context and makes it current.
  auto rt = runtime::KernelRuntime::open(0, runtime::CacheOptions::from_env());
  if (rt.is_bad()) return rt.status();
  const runtime::CudaDriverApi& api = (*rt)->api();
  std::vector<DeviceBuffer> dev;
  dev.reserve(bufs.size());
  VariantPack pack;
  for (const HostTensor& b : bufs) {
    // At least one byte: every tensor gets a distinct, non-null pointer.
    const DeviceBuffer& d = dev.emplace_back(api, std::max<std::size_t>(b.bytes.size(), 1));
    OPGRAPH_CHECK(d.status());
    OPGRAPH_CHECK(d.upload(b.bytes.data(), b.bytes.size()));
    pack.set(b.tensor->get_uid(), d.data());
  }
  auto ws_bytes = g.get_workspace_size();
  if (ws_bytes.is_bad()) return ws_bytes.status();
  const DeviceBuffer ws(api, static_cast<std::size_t>(std::max<std::int64_t>(*ws_bytes, 0)));
  OPGRAPH_CHECK(ws.status());
  const DeviceHandle handle(&(*rt)->device());
  // Normalised once, outside the timed loop: the time printed is the plan's execute.
  VariantPack prepared;
  OPGRAPH_CHECK(g.prepare_variant_pack(pack, prepared));
  *best_ms = INFINITY;
  *total_ms = 0;
  for (std::int64_t it = 0; it < iters; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    OPGRAPH_CHECK(g.execute(prepared, Workspace{ws.data(), *ws_bytes}, &handle));
    OPGRAPH_CHECK(runtime::cuda_check(api, api.ctx_synchronize(), "cuCtxSynchronize after execute"));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    *best_ms = std::min(*best_ms, ms);
    *total_ms += ms;
  }
  for (std::size_t i = 0; i < bufs.size(); ++i)
    if (!bufs[i].is_input) OPGRAPH_CHECK(dev[i].download(bufs[i].bytes.data(), bufs[i].bytes.size()));
  return Status::ok();
}

}  // namespace opgraph::cli
