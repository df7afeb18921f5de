// engines/cudnn/backend.cpp — Descriptor, check(), materialise().
#include "engines/cudnn/backend.h"

namespace opgraph::engines::cudnn {

std::string_view to_string(Step s) noexcept {
  switch (s) {
    case Step::LOWERING: return "lowering";
    case Step::HEURISTICS: return "heuristics";
    case Step::FINALIZE: return "finalize";
    case Step::BUILD: return "build";
    case Step::EXECUTE: return "execute";
  }
  return "?";
}

Status check(const CudnnApi& api, cudnnStatus_t status, Step step, std::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return Status::ok();
  std::string name = api.get_error_string ? api.get_error_string(status) : "";
  if (name.empty()) name = "cudnnStatus " + std::to_string(static_cast<int>(status));
  std::string msg = "cudnn " + std::string(to_string(step)) + ": " + std::string(what) + ": " + name;
  if (api.get_last_error_string) {
    char buf[1024] = {};
    api.get_last_error_string(buf, sizeof buf);
    if (buf[0]) msg += " (" + std::string(buf) + ")";
  }
  int s = static_cast<int>(status);
  ErrorCode code = ErrorCode::CUDNN_BACKEND_API_FAILED;
  if (s >= 3000 && s < 4000) code = ErrorCode::GRAPH_NOT_SUPPORTED;
  else if (step == Step::BUILD && status == CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED) {
    // One engine config's runtime-compiled kernel: that plan declines and the next is tried
    // (cudnn-frontend's build_plans skips a plan that fails to build).
    code = ErrorCode::GRAPH_NOT_SUPPORTED;
    msg += "; this engine config's runtime-compiled kernel did not compile, so the plan is declined";
  } else if (step == Step::HEURISTICS) code = ErrorCode::HEURISTIC_QUERY_FAILED;
  else if (step == Step::BUILD) code = ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED;
  else if (step == Step::EXECUTE) code = ErrorCode::GRAPH_EXECUTION_FAILED;
  return {code, std::move(msg)};
}

Result<Descriptor> Descriptor::create(const CudnnApi& api, cudnnBackendDescriptorType_t type, std::string_view what) {
  Descriptor d;
  d.api_ = &api;
  void* raw = nullptr;
  OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_create_descriptor(type, &raw)), Step::FINALIZE,
                      std::string("create descriptor for ") + std::string(what)));
  d.d_ = static_cast<cudnnBackendDescriptor_t>(raw);
  return d;
}

Descriptor::~Descriptor() {
  if (d_) api_->backend_destroy_descriptor(d_);
}

Descriptor& Descriptor::operator=(Descriptor&& o) noexcept {
  if (this != &o) {
    if (d_) api_->backend_destroy_descriptor(d_);
    api_ = o.api_;
    d_ = o.d_;
    o.d_ = nullptr;
  }
  return *this;
}

Status Descriptor::set(cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t t, std::int64_t count,
                       const void* values, Step step, std::string_view what) const {
  auto s = api_->backend_set_attribute(d_, n, t, count, values);
  return check(*api_, static_cast<cudnnStatus_t>(s), step,
               std::string(what) + ": set attribute " + std::to_string(static_cast<int>(n)));
}

Status Descriptor::finalize(Step step, std::string_view what) const {
  return check(*api_, static_cast<cudnnStatus_t>(api_->backend_finalize(d_)), step, std::string(what) + ": finalize");
}

Result<std::int64_t> Descriptor::get_int64(cudnnBackendAttributeName_t n, Step step, std::string_view what) const {
  std::int64_t v = 0, count = 0;
  OPGRAPH_CHECK(check(*api_, static_cast<cudnnStatus_t>(api_->backend_get_attribute(d_, n, CUDNN_TYPE_INT64, 1, &count, &v)),
                      step, std::string(what) + ": get attribute " + std::to_string(static_cast<int>(n))));
  return v;
}

namespace {

// Sets one recorded attribute, converting the data to the C type cuDNN expects.
Status set_record_attr(const Descriptor& d, const AttrRecord& a, const Materialised& m, const std::string& what) {
  auto count = static_cast<std::int64_t>(a.ints.size() + a.reals.size() + a.refs.size());
  switch (a.type) {
    case CUDNN_TYPE_INT64: return d.set(a.name, a.type, count, a.ints.data(), Step::FINALIZE, what);
    case CUDNN_TYPE_DOUBLE: return d.set(a.name, a.type, count, a.reals.data(), Step::FINALIZE, what);
    case CUDNN_TYPE_FLOAT: {
      std::vector<float> f(a.reals.begin(), a.reals.end());
      return d.set(a.name, a.type, count, f.data(), Step::FINALIZE, what);
    }
    case CUDNN_TYPE_BOOLEAN: {
      std::vector<unsigned char> b;  // cuDNN reads C bool (one byte)
      for (auto v : a.ints) b.push_back(v != 0);
      return d.set(a.name, a.type, count, b.data(), Step::FINALIZE, what);
    }
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: {
      std::vector<cudnnBackendDescriptor_t> refs;
      for (int r : a.refs) {
        // The plan's references point backwards: the record is created, set and finalized already.
        if (r < 0 || static_cast<std::size_t>(r) + 1 >= m.records.size())
          return {ErrorCode::INTERNAL_ERROR, "cudnn lowering: " + what + ": attribute " +
                                                 std::to_string(static_cast<int>(a.name)) + " references record " +
                                                 std::to_string(r) + ", not an earlier one"};
        refs.push_back(m.records[static_cast<std::size_t>(r)].get());
      }
      return d.set(a.name, a.type, count, refs.data(), Step::FINALIZE, what);
    }
    case CUDNN_TYPE_FRACTION: {  // ints hold (numerator, denominator) pairs
      std::vector<cudnnFraction_t> f;
      for (std::size_t i = 0; i + 1 < a.ints.size(); i += 2) f.push_back({a.ints[i], a.ints[i + 1]});
      return d.set(a.name, a.type, static_cast<std::int64_t>(f.size()), f.data(), Step::FINALIZE, what);
    }
    default: {  // INT32 and every enum-typed attribute: a C int each
      std::vector<std::int32_t> v(a.ints.begin(), a.ints.end());
      return d.set(a.name, a.type, count, v.data(), Step::FINALIZE, what);
    }
  }
}

}  // namespace

Result<Materialised> materialise(const CudnnApi& api, const LoweringPlan& plan, cudnnHandle_t handle) {
  Materialised m;
  m.records.reserve(plan.records.size());
  for (std::size_t i = 0; i < plan.records.size(); ++i) {
    const DescriptorRecord& r = plan.records[i];
    auto d = Descriptor::create(api, r.type, r.label);
    if (d.is_bad()) return d.status();
    m.records.push_back(std::move(d.value()));
    const Descriptor& desc = m.records.back();
    bool is_graph = static_cast<int>(i) == plan.operation_graph;
    if (is_graph) {
      if (!handle) break;  // device-less: the operation graph needs a handle to finalize
      OPGRAPH_CHECK(desc.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, Step::FINALIZE, r.label));
    }
    for (const auto& a : r.attrs) OPGRAPH_CHECK(set_record_attr(desc, a, m, r.label));
    OPGRAPH_CHECK(desc.finalize(Step::FINALIZE, r.label));
  }
  return m;
}

}  // namespace opgraph::engines::cudnn
