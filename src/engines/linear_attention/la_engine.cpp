// engines/linear_attention/la_engine.cpp — the linear_attention Engine and its
// CompiledPlan: analysis (gdn_problem.cpp) at check_support, the kernels
// compiled and the operand table built at build_plan, one table check and one
// or two launches per execute.
#include "engines/linear_attention/la_engine.h"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <optional>

#include "engines/linear_attention/kernels/gdn_params.cuh"
#include "exec/operand_table.h"
#include "opgraph/op_graph.h"
#include "runtime/context_scope.h"
#include "runtime/device.h"

namespace opgraph::linear_attention {
namespace {

using opgraph_gdn::GdnParams;

// One KernelRuntime per device per process, opened by the first build_plan
// that targets the device and kept for the process; guarded (KernelRuntime is
// not thread-safe).
struct SharedRuntime {
  std::mutex mu;
  std::map<int, std::unique_ptr<runtime::KernelRuntime>> rt;  // by device ordinal
};
SharedRuntime& shared_runtime() {
  static SharedRuntime* s = new SharedRuntime;
  return *s;
}

// Puts back the context current at construction (planning may run on a
// thread with its own context, or none).
class KeepCurrentContext {
 public:
  explicit KeepCurrentContext(const runtime::CudaDriverApi& api) : api_(api) {
    if (api_.ctx_get_current(&saved_) != CUDA_SUCCESS) saved_ = nullptr, ok_ = false;
  }
  ~KeepCurrentContext() {
    if (ok_) api_.ctx_set_current(saved_);
  }
  KeepCurrentContext(const KeepCurrentContext&) = delete;
  KeepCurrentContext& operator=(const KeepCurrentContext&) = delete;

 private:
  const runtime::CudaDriverApi& api_;
  CUcontext saved_ = nullptr;
  bool ok_ = true;
};

long long type_code(DataType d) {
  switch (d) {
    case DataType::BFLOAT16: return opgraph_gdn::kTypeBf16;
    case DataType::HALF: return opgraph_gdn::kTypeF16;
    default: return opgraph_gdn::kTypeF32;
  }
}

constexpr unsigned kPrefillThreads = 256, kDecodeThreads = 128, kDecodeRows = 32, kCopyThreads = 256;

// Everything but the pointers, fixed at build.
GdnParams params_of(const GdnProblem& p) {
  GdnParams k{};
  k.t = p.t;
  k.n_seq = p.n_seq;
  k.hq = p.hq;
  k.hk = p.hk;
  k.hv = p.hv;
  k.ho = p.ho;
  k.state_rows = p.state_rows;
  k.state_row_stride = p.state_row_stride;
  k.g_type = type_code(p.g_type);
  k.beta_type = type_code(p.beta_type);
  k.state_type = type_code(p.state_type);
  k.o_type = type_code(p.o_type);
  k.a_log_type = type_code(p.a_log_type);
  k.dt_bias_type = type_code(p.dt_bias_type);
  long long f = 0;
  if (p.l2norm) f |= opgraph_gdn::kFlagL2Norm;
  if (p.safe_gate) f |= opgraph_gdn::kFlagSafeGate;
  if (p.linear_gate && !p.safe_gate) f |= opgraph_gdn::kFlagLinearGate;
  if (p.beta_sigmoid) f |= opgraph_gdn::kFlagBetaSigmoid;
  if (p.neg_eig) f |= opgraph_gdn::kFlagNegEig;
  if (p.initial_state >= 0) f |= opgraph_gdn::kFlagHasInit;
  if (p.final_state >= 0) f |= opgraph_gdn::kFlagWriteFinal;
  if (p.state_indices >= 0) f |= opgraph_gdn::kFlagPool;
  if (p.a_log >= 0) f |= opgraph_gdn::kFlagHasALog;
  if (p.dt_bias >= 0) f |= opgraph_gdn::kFlagHasDtBias;
  if (p.cu64) f |= opgraph_gdn::kFlagCu64;
  k.flags = f;
  k.scale = p.scale;
  return k;
}

runtime::KernelRequest request(long long d, DataType io, const char* entry) {
  runtime::KernelRequest r;
  r.family = "linear_attention";
  const std::string io_name = io == DataType::HALF ? "f16" : "bf16";
  r.kernel = std::string(entry) + "_d" + std::to_string(d) + "_" + io_name;
  r.source = "linear_attention/kernels/gdn_fwd.cu";
  r.entry = entry;
  r.defines = {{"GDN_D", std::to_string(d)}, {"GDN_IO", io == DataType::HALF ? "1" : "0"}};
  return r;
}
// The pool copy does not depend on the layout class: one specialisation.
runtime::KernelRequest copy_request() {
  runtime::KernelRequest r = request(64, DataType::BFLOAT16, "gdn_state_copy");
  r.kernel = "gdn_state_copy";
  return r;
}

bool needs_pool_copy(const GdnProblem& p) { return p.state_indices >= 0 && p.final_state >= 0; }

// Operand order of the table rows.
enum Slot : int { kQ, kK, kV, kG, kBeta, kCu, kInit, kALog, kDtBias, kIdx, kO, kFinal, kSlots };

class GdnPlan final : public CompiledPlan {
 public:
  GdnPlan(GdnProblem p, runtime::KernelRuntime* rt, const runtime::LoadedKernel* main,
          const runtime::LoadedKernel* copy, OperandTable table, std::array<std::int32_t, kSlots> rows)
      : p_(std::move(p)), rt_(rt), main_(main), copy_(copy), table_(std::move(table)), rows_(rows),
        params_(params_of(p_)) {
    const bool decode = use_decode(p_);
    dims_.grid[0] = static_cast<unsigned>(decode ? p_.d / kDecodeRows : p_.d / 64);
    dims_.grid[1] = static_cast<unsigned>(p_.ho);
    dims_.grid[2] = static_cast<unsigned>(p_.n_seq);
    dims_.block[0] = decode ? kDecodeThreads : kPrefillThreads;
    dims_.shared_bytes = decode ? 0u : static_cast<unsigned>(opgraph_gdn::gdn_prefill_smem_bytes(p_.d));
    const long long elem = p_.state_type == DataType::FLOAT ? 4 : 2;
    copy_words_ = p_.state_rows * p_.state_row_stride * elem / 4;
    const long long per_block = 4 * kCopyThreads;  // about 4 words a thread (the copy is grid-stride)
    copy_dims_.grid[0] =
        static_cast<unsigned>(std::clamp<long long>((copy_words_ + per_block - 1) / per_block, 1, 4096));
    copy_dims_.block[0] = kCopyThreads;
  }
  std::int64_t workspace_size() const override { return 0; }

  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (!ctx.device)
      return {ErrorCode::INVALID_VALUE,
              "engine linear_attention executes device buffers; this call has no device handle"};
    // The plan's kernels and context belong to the device it was built on: a
    // handle on another device is refused, never run there.
    if (ctx.device->ordinal >= 0 && ctx.device->ordinal != rt_->device().ordinal)
      return {ErrorCode::INVALID_CUDA_DEVICE, "engine linear_attention: the plan was built on device " +
                                                  std::to_string(rt_->device().ordinal) +
                                                  "; this call's handle drives device " +
                                                  std::to_string(ctx.device->ordinal)};
    if (!table_.accepts(pack)) return table_.explain(pack);
    const runtime::ContextScope bound(rt_->api(), rt_->context());
    OPGRAPH_CHECK(bound.status());
    const OperandBuffer* ops = pack.operands().data();
    auto ptr = [&](int slot) -> unsigned long long {
      const std::int32_t row = rows_[static_cast<std::size_t>(slot)];
      if (row < 0) return 0;
      return reinterpret_cast<unsigned long long>(ops[table_.rows()[static_cast<std::size_t>(row)].position].data);
    };
    GdnParams a = params_;
    a.q = ptr(kQ);
    a.k = ptr(kK);
    a.v = ptr(kV);
    a.g = ptr(kG);
    a.beta = ptr(kBeta);
    a.cu_seqlens = ptr(kCu);
    a.initial_state = ptr(kInit);
    a.a_log = ptr(kALog);
    a.dt_bias = ptr(kDtBias);
    a.state_indices = ptr(kIdx);
    a.o = ptr(kO);
    a.final_state = ptr(kFinal);
    const CUstream stream = static_cast<CUstream>(ctx.stream);
    // Distinct pool buffers: rows no sequence addresses keep their value.
    if (copy_ && a.final_state != a.initial_state && copy_words_ > 0) {
      long long words = copy_words_;
      void* cargs[] = {&a, &words};
      OPGRAPH_CHECK(rt_->launch(*copy_, copy_dims_, stream, cargs));
    }
    void* args[] = {&a};
    return rt_->launch(*main_, dims_, stream, args);
  }

 private:
  GdnProblem p_;
  runtime::KernelRuntime* rt_;
  const runtime::LoadedKernel* main_;
  const runtime::LoadedKernel* copy_;  // null unless needs_pool_copy
  OperandTable table_;
  std::array<std::int32_t, kSlots> rows_;  // slot -> table row (-1: not bound)
  GdnParams params_;
  runtime::LaunchDims dims_, copy_dims_;
  long long copy_words_ = 0;
};

Result<OperandTable> operand_table_for(const GdnProblem& p, const DeclaredLayout& layout,
                                       std::array<std::int32_t, kSlots>& rows) {
  const std::int64_t uids[kSlots] = {p.q,    p.k,       p.v,       p.g, p.beta, p.cu_seqlens, p.initial_state,
                                     p.a_log, p.dt_bias, p.state_indices, p.o, p.final_state};
  std::vector<std::int64_t> positions;
  rows.fill(-1);
  for (int s = 0; s < kSlots; ++s) {
    if (uids[s] < 0) continue;
    const std::int64_t pos = layout.index_of(uids[s]);
    if (pos < 0)
      return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: tensor uid " + std::to_string(uids[s]) +
                                                   " has no position in the graph's operand layout");
    auto it = std::find(positions.begin(), positions.end(), pos);
    rows[static_cast<std::size_t>(s)] = static_cast<std::int32_t>(it - positions.begin());
    if (it == positions.end()) positions.push_back(pos);
  }
  OperandNeeds needs;
  needs.declared_extents = true;
  needs.declared_strides = true;  // the kernels read the declared (dense) layout
  needs.declared_dtype = true;
  needs.memory = MemoryKind::DEVICE;
  OperandTable table(layout, needs, "linear_attention", positions);
  // 8-byte row loads of q/k, 4-byte pair loads of v, pair stores of O and the states.
  for (int s : {kQ, kK, kV, kO, kInit, kFinal}) {
    const std::int32_t row = rows[static_cast<std::size_t>(s)];
    if (row >= 0) table.require_alignment(static_cast<std::size_t>(row), 16);
  }
  return table;
}

class LaEngine final : public Engine {
 public:
  explicit LaEngine(EngineIdentity id) : Engine(std::move(id)) {
    // mma.sync runs on sm_80+, but the D = 128 prefill needs 187 KiB of shared
    // memory, and only sm_90 has been measured.
    caps_.sm_lo = 90;
    caps_.sm_hi = 90;
    caps_.notes = PlanNotes{{NumericalNote::TENSOR_CORE}, {BehaviorNote::RUNTIME_COMPILATION}};
  }
  const Capabilities& capabilities() const override { return caps_; }

  Status check_support(const OpGraph& g, const PlanContext&) const override { return analyze_gdn(g).status(); }

  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& g, const PlanConfig&,
                                                   const PlanContext& ctx) const override {
    if (!ctx.layout)
      return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: built without the graph's layout");
    auto p = analyze_gdn(g);
    if (p.is_bad()) return p.status();
    std::array<std::int32_t, kSlots> rows{};
    auto table = operand_table_for(*p, *ctx.layout, rows);
    if (table.is_bad()) return table.status();
    // The device the planning target names (a handle's device, read_device); a
    // target that names none (for_arch, JSON without "ordinal") builds on device 0.
    const int ordinal = ctx.target().has_device() ? std::max(ctx.target().device->ordinal, 0) : 0;
    SharedRuntime& s = shared_runtime();
    std::lock_guard<std::mutex> lock(s.mu);
    // KernelRuntime::open makes its context current and leaves it: the
    // caller's (or none) is put back at return.
    std::optional<KeepCurrentContext> callers;
    std::unique_ptr<runtime::KernelRuntime>& rt = s.rt[ordinal];
    if (!rt) {
      if (auto api = runtime::cuda_driver(); api.is_good()) callers.emplace(**api);
      auto opened = runtime::KernelRuntime::open(ordinal, runtime::CacheOptions::from_env());
      if (opened.is_bad()) {
        s.rt.erase(ordinal);
        return opened.status();
      }
      rt = std::move(*opened);
    }
    const runtime::ContextScope bound(rt->api(), rt->context());
    OPGRAPH_CHECK(bound.status());
    const auto reqs = kernel_requests(*p);
    auto main = rt->get(reqs[0]);
    if (main.is_bad()) return main.status();
    const runtime::LoadedKernel* copy = nullptr;
    if (reqs.size() > 1) {
      auto c = rt->get(reqs[1]);
      if (c.is_bad()) return c.status();
      copy = *c;
    }
    return std::unique_ptr<CompiledPlan>(
        std::make_unique<GdnPlan>(std::move(*p), rt.get(), *main, copy, std::move(*table), rows));
  }

  Status declared_kernels(const KernelSink& sink) const override {
    for (const auto& r : declared_specialisations()) OPGRAPH_CHECK(sink(r));
    return Status::ok();
  }

  Status plan_kernels(const OpGraph& g, const PlanConfig&, const PlanContext& ctx,
                      const KernelSink& sink) const override {
    auto p = analyze_gdn(g);
    if (p.is_bad()) return p.status();
    if (!ctx.facts || !ctx.target().has_device())
      return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                    "engine linear_attention: compiles for a device target; this target has none");
    for (const auto& r : kernel_requests(*p)) OPGRAPH_CHECK(sink(r));
    return Status::ok();
  }

  std::string label(const PlanConfig&) const override { return name(); }

 private:
  Capabilities caps_;
};

}  // namespace

std::vector<runtime::KernelRequest> kernel_requests(const GdnProblem& p) {
  std::vector<runtime::KernelRequest> out;
  out.push_back(request(p.d, p.io, use_decode(p) ? "gdn_decode" : "gdn_prefill"));
  if (needs_pool_copy(p)) out.push_back(copy_request());
  return out;
}

std::vector<runtime::KernelRequest> declared_specialisations() {
  std::vector<runtime::KernelRequest> out;
  for (const char* entry : {"gdn_prefill", "gdn_decode"})
    for (long long d : {64, 128})
      for (DataType io : {DataType::BFLOAT16, DataType::HALF}) out.push_back(request(d, io, entry));
  out.push_back(copy_request());
  return out;
}

runtime::KernelRuntime* shared_runtime_if_open(int ordinal) {
  SharedRuntime& s = shared_runtime();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.rt.find(ordinal);
  return it == s.rt.end() ? nullptr : it->second.get();
}

std::unique_ptr<Engine> make_la_engine(EngineIdentity identity) {
  return std::make_unique<LaEngine>(std::move(identity));
}

}  // namespace opgraph::linear_attention
