// tools/cli_run_device.cpp — device buffers, workspace and handle for `opgraph run`
// (see cli_run_device.h), through the public device API (opgraph/device.h).
#include "cli_run_device.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "opgraph/device.h"

namespace opgraph::cli {

Status run_on_device(const Graph& g, std::vector<HostTensor>& bufs, std::int64_t iters, double* best_ms,
                     double* total_ms) {
  // The device the graph was planned for (device 0 when its target names none);
  // retains its primary context and makes it current.
  const int ordinal = g.plan_target().has_device() ? std::max(g.plan_target().device->ordinal, 0) : 0;
  auto device = Device::open(ordinal);
  if (device.is_bad()) return device.status();
  std::vector<DeviceMemory> dev;
  dev.reserve(bufs.size());
  VariantPack pack;
  for (const HostTensor& b : bufs) {
    // At least one byte: every tensor gets a distinct, non-null pointer.
    auto d = DeviceMemory::allocate(*device, std::max<std::size_t>(b.bytes.size(), 1));
    if (d.is_bad()) return d.status();
    OPGRAPH_CHECK(d->upload(b.bytes.data(), b.bytes.size()));
    pack.set(b.tensor->get_uid(), d->data());
    dev.push_back(std::move(*d));
  }
  auto ws_bytes = g.get_workspace_size();
  if (ws_bytes.is_bad()) return ws_bytes.status();
  auto ws = DeviceMemory::allocate(*device, static_cast<std::size_t>(std::max<std::int64_t>(*ws_bytes, 0)));
  if (ws.is_bad()) return ws.status();
  const DeviceHandle handle(*device);  // the default stream
  // Normalised once, outside the timed loop: the time printed is the plan's execute.
  VariantPack prepared;
  OPGRAPH_CHECK(g.prepare_variant_pack(pack, prepared));
  *best_ms = INFINITY;
  *total_ms = 0;
  for (std::int64_t it = 0; it < iters; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    OPGRAPH_CHECK(g.execute(prepared, Workspace{ws->data(), *ws_bytes}, &handle));
    if (Status s = device->synchronize(); s.is_bad()) return Status(s.code(), s.message() + " (after execute)");
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    *best_ms = std::min(*best_ms, ms);
    *total_ms += ms;
  }
  for (std::size_t i = 0; i < bufs.size(); ++i)
    if (!bufs[i].is_input) OPGRAPH_CHECK(dev[i].download(bufs[i].bytes.data(), bufs[i].bytes.size()));
  return Status::ok();
}

}  // namespace opgraph::cli
