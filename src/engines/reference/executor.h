// engines/reference/executor.h — run a validated graph on host buffers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string_view>

#include "opgraph/op_graph.h"
#include "opgraph/status.h"
#include "engines/reference/ref_kernel.h"

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
//
// Order of checks, before any kernel runs: the graph is validated (else
// INVALID_VALUE); every op has a kernel; every buffer is present and non-null.
// A kernel's own failure (or an exception it throws) is returned as it came,
// after the kernel names its node; buffers stay untouched.
Status execute(const OpGraph& g, const std::map<std::int64_t, HostBuffer>& buffers);

// Knobs for tests and tools. `find_kernel` replaces the registry lookup (a test
// injects a failing or missing kernel with it); null means reference::find_kernel.
struct ExecuteOptions {
  std::function<KernelFn(std::string_view op)> find_kernel;
};
Status execute(const OpGraph& g, const std::map<std::int64_t, HostBuffer>& buffers, const ExecuteOptions& opts);

}  // namespace opgraph::reference
