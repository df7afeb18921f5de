// api/reference.cpp — the public reference API (opgraph/reference.h) over the
// reference engine's executor and conversions.
#include "opgraph/reference.h"

#include "engines/reference/convert.h"
#include "engines/reference/executor.h"

namespace opgraph {

Status run_reference(const OpGraph& graph, const std::map<std::int64_t, void*>& buffers) {
  std::map<std::int64_t, reference::HostBuffer> host;
  for (const auto& [uid, data] : buffers) host.emplace(uid, reference::HostBuffer{data});
  return reference::execute(graph, host);
}

double read_element(const void* data, std::int64_t index, DataType t) noexcept {
  return reference::load_element(data, index, t);
}

void write_element(void* data, std::int64_t index, DataType t, double value) noexcept {
  reference::store_element(data, index, t, value);
}

}  // namespace opgraph
