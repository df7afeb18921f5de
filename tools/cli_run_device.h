// tools/cli_run_device.h — `opgraph run` on a GPU: when the planning target has a
// device (--device DEV.json), the plan executes on that device (its "ordinal";
// device 0 when it names none) with device copies
// of the host buffers (inputs copied in, outputs copied back for the comparison
// with the reference), a device workspace, and a handle carrying the device.
#pragma once

#include <vector>

#include "cli_inputs.h"
#include "opgraph/graph.h"

namespace opgraph::cli {

// Runs the selected plan `iters` times on the graph's device; host wall time per execute
// including a device synchronise (milliseconds) into best_ms / total_ms; outputs
// copied back into `bufs`. GRAPH_NOT_SUPPORTED without libcuda, INVALID_CUDA_DEVICE
// without that device; CUDA_API_FAILED naming the driver call that failed.
Status run_on_device(const Graph& g, std::vector<HostTensor>& bufs, std::int64_t iters, double* best_ms,
                     double* total_ms);

}  // namespace opgraph::cli
