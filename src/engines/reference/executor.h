// engines/reference/executor.h — run a validated graph on host buffers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "opgraph/op_graph.h"
#include "opgraph/status.h"
#include "engines/reference/ref_kernel.h"

namespace opgraph::reference {

// One caller buffer on the host, read and written through the tensor's declared
// dims, strides (elements) and dtype. fp4 packs two elements per byte along the
// unit-stride axis (low nibble first). A tensor with F8_128x4 reordering keeps its
// last two axes in the 128x4 tiles of ir/scale_layout.h (its batch axes through
// their strides); kernels see its logical [.., rows, cols] values either way, and
// every padded entry is read and written too.
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

// The same, split by when facts are decided, for an engine that executes one
// graph many times: prepare() does what depends on the graph alone (validated?
// a kernel per op? which tensors are read and written) once; run() does the
// rest per call, given one host pointer per prepared tensor.
struct Prepared {
  std::vector<KernelFn> kernels;         // per node, in node order
  std::vector<const Tensor*> inputs;     // graph inputs and ragged offsets, each once
  std::vector<const Tensor*> outputs;    // non-virtual outputs
};
// INVALID_VALUE (not validated) / GRAPH_NOT_SUPPORTED (an op without a kernel),
// as execute() returns them. `g` must outlive the result.
Result<Prepared> prepare(const OpGraph& g, const ExecuteOptions& opts = {});
// `input_data[i]` is p.inputs[i]'s buffer (ignored for a pass-by-value input),
// `output_data[i]` p.outputs[i]'s; a null one is INVALID_VARIANT_PACK naming the
// tensor, before any kernel runs. Otherwise as execute().
Status run(const OpGraph& g, const Prepared& p, std::span<void* const> input_data,
           std::span<void* const> output_data);

}  // namespace opgraph::reference
