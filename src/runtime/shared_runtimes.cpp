// runtime/shared_runtimes.cpp — the per-device shared KernelRuntime registry
// (contract in shared_runtimes.h).
#include "runtime/shared_runtimes.h"

#include <atomic>
#include <map>
#include <memory>
#include <optional>

#include "runtime/context_scope.h"

namespace opgraph::runtime {
namespace {

// One device: its lock (held by a lease, and across the open) and its runtime.
// `open` publishes the runtime for shared_kernel_runtime_if_open, which takes
// no device lock; `owned` is written under `use` only.
struct DeviceSlot {
  std::mutex use;
  std::unique_ptr<KernelRuntime> owned;
  std::atomic<KernelRuntime*> open{nullptr};
};

// Slots by ordinal; a slot, once made, is never removed (a lease points into it).
struct Registry {
  std::mutex mu;
  std::map<int, std::unique_ptr<DeviceSlot>> slots;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: see the header
  return *r;
}

DeviceSlot& slot_of(int ordinal) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::unique_ptr<DeviceSlot>& s = r.slots[ordinal];
  if (!s) s = std::make_unique<DeviceSlot>();
  return *s;
}

}  // namespace

Result<SharedRuntimeLease> shared_kernel_runtime(int ordinal) {
  DeviceSlot& slot = slot_of(ordinal);
  std::unique_lock<std::mutex> lock(slot.use);
  if (!slot.owned) {
    // Planning may run on any thread. KernelRuntime::open makes its context
    // current and leaves it: the caller's (or none) is put back here.
    std::optional<ContextRestore> callers;
    if (auto api = cuda_driver(); api.is_good()) callers.emplace(**api);
    auto opened = KernelRuntime::open(ordinal, CacheOptions::from_env());
    if (opened.is_bad()) return opened.status();
    slot.owned = std::move(*opened);
    slot.open.store(slot.owned.get(), std::memory_order_release);
  }
  return SharedRuntimeLease(std::move(lock), slot.owned.get());
}

KernelRuntime* shared_kernel_runtime_if_open(int ordinal) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.slots.find(ordinal);
  return it == r.slots.end() ? nullptr : it->second->open.load(std::memory_order_acquire);
}

}  // namespace opgraph::runtime
