// capture.h — one execute captured into a CUDA graph through the driver table
// (runtime/loader.h's optional capture entry points), for the capture tests of
// the GPU suites: begin capture on a stream (thread-local mode: other threads'
// calls are not judged), run the caller's enqueue, end, instantiate; replay on
// the same stream; everything destroyed with the object.
#pragma once

#include <functional>
#include <string>

#include "opgraph/status.h"
#include "runtime/loader.h"

namespace opgraph::gpu_testing {

class CapturedGraph {
 public:
  CapturedGraph() = default;
  ~CapturedGraph() {
    if (exec_) api_->graph_exec_destroy(exec_);
    if (graph_) api_->graph_destroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  // Captures what `enqueue` puts on `stream` (it must enqueue there only and
  // return OK). A failed enqueue still ends the capture (the stream is usable
  // again) and is returned; so is a capture the driver invalidated (an
  // operation illegal under capture: a host sync, a pageable copy, a legacy-
  // stream operation), naming the CUresult.
  Status capture(const runtime::CudaDriverApi& api, CUstream stream, const std::function<Status()>& enqueue) {
    api_ = &api;
    if (!api.stream_begin_capture || !api.stream_end_capture || !api.graph_instantiate || !api.graph_launch ||
        !api.graph_exec_destroy || !api.graph_destroy)
      return {ErrorCode::GRAPH_NOT_SUPPORTED, "the driver has no stream-capture / CUDA graph entry points"};
    CUresult r = api.stream_begin_capture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS) return fail("cuStreamBeginCapture", r);
    const Status ran = enqueue();
    r = api.stream_end_capture(stream, &graph_);
    OPGRAPH_CHECK(ran);
    if (r != CUDA_SUCCESS) return fail("cuStreamEndCapture (the execute did something illegal under capture)", r);
    r = api.graph_instantiate(&exec_, graph_, 0);
    if (r != CUDA_SUCCESS) return fail("cuGraphInstantiate", r);
    return Status::ok();
  }

  // One replay on `stream` (enqueued; synchronize to read its outputs).
  Status launch(CUstream stream) const {
    if (!exec_) return {ErrorCode::INVALID_VALUE, "nothing captured"};
    const CUresult r = api_->graph_launch(exec_, stream);
    return r == CUDA_SUCCESS ? Status::ok() : fail("cuGraphLaunch", r);
  }

 private:
  Status fail(const std::string& what, CUresult r) const {
    const char* name = nullptr;
    if (api_->get_error_name) api_->get_error_name(r, &name);
    return {ErrorCode::GRAPH_EXECUTION_FAILED,
            what + " failed: CUresult " + std::to_string(static_cast<int>(r)) + (name ? std::string(" ") + name : "")};
  }

  const runtime::CudaDriverApi* api_ = nullptr;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

}  // namespace opgraph::gpu_testing
