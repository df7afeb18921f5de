// engines/reference/executor.h — run a validated graph on host buffers.
#pragma once

#include <cstdint>
#include <map>

#include "opgraph/op_graph.h"
#include "opgraph/status.h"

namespace opgraph::reference {

// One caller buffer on the host, read and written through the tensor's declared
// dims, strides (elements) and dtype. fp4 packs two elements per byte along the
// unit-stride axis (low nibble first).
struct HostBuffer {
  void* data = nullptr;
};

// Executes every node of `g` (validated) in order. `buffers` maps uid -> buffer
// for every graph input that is not pass-by-value and every non-virtual output.
// A missing buffer is INVALID_VARIANT_PACK naming the tensor; an op without a
// reference kernel is GRAPH_NOT_SUPPORTED naming the op. Outputs are written
// only when every node succeeded.
Status execute(const OpGraph& g, const std::map<std::int64_t, HostBuffer>& buffers);

}  // namespace opgraph::reference
