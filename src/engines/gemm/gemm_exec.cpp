// engines/gemm/gemm_exec.cpp — StreamScratch (contract in gemm_exec.h; ContextScope is runtime/context_scope.cpp).
#include "engines/gemm/gemm_exec.h"

namespace opgraph::gemm {
namespace {

std::int64_t round256(std::int64_t b) { return (b + 255) / 256 * 256; }

}  // namespace

StreamScratch::~StreamScratch() {
  if (slots_.empty()) return;
  const ContextScope bound(*api_, ctx_);
  for (const Entry& e : slots_) api_->mem_free(e.base);
}

Result<StreamScratch::Slot> StreamScratch::get(const runtime::CudaDriverApi& api, CUstream stream) {
  Key key;
  if (stream == CU_STREAM_PER_THREAD) {
    key.stream = stream;
    key.thread = std::this_thread::get_id();
  } else if (stream != CU_STREAM_LEGACY) {
    key.stream = stream;
  }
  const std::int64_t counter_offset = round256(partial_bytes_);
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : slots_)
    if (e.key == key) return Slot{e.base, e.base + static_cast<std::uint64_t>(counter_offset)};
  // First execute on this stream: allocate, zero the counters, wait for the zeroing.
  CUdeviceptr base = 0;
  const std::int64_t total = counter_offset + round256(counter_bytes_);
  OPGRAPH_CHECK(runtime::cuda_check(api, api.mem_alloc(&base, static_cast<std::size_t>(total)),
                                    "engine gemm v2: cuMemAlloc of a stream's split-K scratch (" +
                                        std::to_string(total) + " bytes)"));
  const CUdeviceptr counters = base + static_cast<CUdeviceptr>(counter_offset);
  Status zeroed = runtime::cuda_check(
      api, api.memset_d32(counters, 0, static_cast<std::size_t>(round256(counter_bytes_) / 4)),
      "engine gemm v2: cuMemsetD32 of the split-K counters");
  if (zeroed.is_good())
    zeroed = runtime::cuda_check(api, api.stream_synchronize(nullptr),
                                 "engine gemm v2: cuStreamSynchronize after zeroing the split-K counters");
  if (zeroed.is_bad()) {
    api.mem_free(base);
    return zeroed;
  }
  api_ = &api;
  slots_.push_back(Entry{key, base});
  return Slot{base, counters};
}

std::size_t StreamScratch::slot_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return slots_.size();
}

}  // namespace opgraph::gemm
