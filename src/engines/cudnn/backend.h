// engines/cudnn/backend.h — live backend objects: the RAII descriptor, errors that
// carry cuDNN's status name and message plus the op and step, and
// materialise(): a LoweringPlan turned into finalized descriptors.
//
// Every call goes through the runtime loader's cuDNN table (libcudnn is
// dlopen'ed there; nothing links it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engines/cudnn/lowering.h"
#include "runtime/loader.h"

namespace opgraph::engines::cudnn {

using runtime::CudnnApi;

// Where a backend call failed.
enum class Step : std::uint8_t { LOWERING, HEURISTICS, FINALIZE, BUILD, EXECUTE };
std::string_view to_string(Step s) noexcept;

// OK for CUDNN_STATUS_SUCCESS; otherwise a Status whose message reads
// "cudnn <step>: <what>: CUDNN_STATUS_X (<cudnnGetLastErrorString>)". The code:
// NOT_SUPPORTED statuses (3000..3999) → GRAPH_NOT_SUPPORTED (a decline), and so is
// INTERNAL_ERROR_COMPILATION_FAILED at BUILD (that engine config's kernel did not compile:
// the next plan is tried, as cudnn-frontend's build_plans does);
// otherwise HEURISTICS → HEURISTIC_QUERY_FAILED, BUILD → GRAPH_EXECUTION_PLAN_CREATION_FAILED,
// EXECUTE → GRAPH_EXECUTION_FAILED, else CUDNN_BACKEND_API_FAILED.
Status check(const CudnnApi& api, cudnnStatus_t status, Step step, std::string_view what);

// One cudnnBackendDescriptor_t, destroyed with the object. Move-only.
class Descriptor {
 public:
  Descriptor() = default;
  static Result<Descriptor> create(const CudnnApi& api, cudnnBackendDescriptorType_t type, std::string_view what);
  ~Descriptor();
  Descriptor(Descriptor&& o) noexcept : api_(o.api_), d_(o.d_) { o.d_ = nullptr; }
  Descriptor& operator=(Descriptor&& o) noexcept;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  cudnnBackendDescriptor_t get() const noexcept { return d_; }
  explicit operator bool() const noexcept { return d_ != nullptr; }

  Status set(cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t t, std::int64_t count, const void* values,
             Step step, std::string_view what) const;
  Status finalize(Step step, std::string_view what) const;
  // Reads an INT64 attribute.
  Result<std::int64_t> get_int64(cudnnBackendAttributeName_t n, Step step, std::string_view what) const;

 private:
  const CudnnApi* api_ = nullptr;
  cudnnBackendDescriptor_t d_ = nullptr;
};

// A plan's descriptors, alive together (operations reference tensors).
struct Materialised {
  std::vector<Descriptor> records;  // parallel to LoweringPlan::records
  const Descriptor& operation_graph(const LoweringPlan& p) const { return records[static_cast<std::size_t>(p.operation_graph)]; }
};

// Creates, sets and finalizes every record in order. The operation graph gets
// `handle` first; with handle == nullptr the operation graph is created and set
// and left unset and unfinalized (finalizing it needs a device) — the
// device-less test uses this.
Result<Materialised> materialise(const CudnnApi& api, const LoweringPlan& plan, cudnnHandle_t handle);

}  // namespace opgraph::engines::cudnn
