// engines/linear_attention/la_engine.cpp — the linear_attention Engine and its
// CompiledPlan: analysis (gdn_problem.cpp) at check_support, the kernels
// compiled and the operand table built at build_plan, one table check and one
// or two launches per execute.
#include "engines/linear_attention/la_engine.h"
#include "engines/linear_attention/la_rules.h"

#include "engines/linear_attention/gdn_bwd.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "engines/linear_attention/kernels/gdn_params.cuh"
#include "exec/declared_layout.h"
#include "exec/operand_table.h"
#include "opgraph/op_graph.h"
#include "runtime/context_scope.h"
#include "runtime/device.h"
#include "runtime/shared_runtimes.h"

namespace opgraph::linear_attention {
namespace {

using opgraph_gdn::GdnParams;

using rules::type_code;

constexpr unsigned kPrefillThreads = 256, kCopyThreads = 256;
using opgraph_gdn::kDecodeRows;  // the decode shapes: gdn_params.cuh
using opgraph_gdn::kDecodeSmallRows;
using opgraph_gdn::kDecodeSmallThreads;
using opgraph_gdn::kDecodeThreads;

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
  k.q_ts = p.q_ts;
  k.q_hs = p.q_hs;
  k.k_ts = p.k_ts;
  k.k_hs = p.k_hs;
  k.v_ts = p.v_ts;
  k.v_hs = p.v_hs;
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
  k.ckpt_type = type_code(p.ckpt_type);
  k.ckpt_every = p.checkpoint_every;
  k.ckpt_rows = p.ckpt_rows;
  return k;
}

runtime::KernelRequest request(long long d, DataType io, const char* entry, bool ws = false, bool ckpt = false,
                               bool f16inv = false, bool guard = false) {
  const std::string e = entry;
  const char* source = e == "gdn_prefill" ? "linear_attention/kernels/gdn_prefill.cu"
                       : e == "gdn_prefill_fused" || e == "gdn_summary_fused" || e == "gdn_span_summary_fused" ||
                               e == "gdn_span_scan_fused"
                           ? "linear_attention/kernels/gdn_fused.cu"
                       : e == "gdn_decode" || e == "gdn_decode_small" || e == "gdn_state_copy"
                           ? "linear_attention/kernels/gdn_decode.cu"
                                                                    : "linear_attention/kernels/gdn_two_pass.cu";
  runtime::KernelRequest r = rules::kernel_request(d, io, entry, source);
  if (ws) {  // the warp-specialised build of the fused entries (PIPELINE_ARCH 3)
    r.defines.push_back({"GDN_FUSED_WS", "1"});
    r.kernel += "_ws";
  }
  if (ckpt) {  // the build that writes state_checkpoints (the fused entries, the two-pass scans)
    r.defines.push_back({"GDN_CKPT", "1"});
    r.kernel += "_ckpt";
  }
  if (f16inv) {  // PIPELINE_ARCH 4: the warp-specialised build's inverse on fp16 tiles
    r.defines.push_back({"GDN_WS3_F16INV", "1"});
    r.kernel += "_h";
  }
  if (guard) {  // PIPELINE_ARCH 4 without use_beta_sigmoid: the run-time domain check and its fp32 fallback
    r.defines.push_back({"GDN_BETA_GUARD", "1"});
    r.kernel += "_g";
  }
  return r;
}
// The pool copy does not depend on the layout class: one specialisation.
runtime::KernelRequest copy_request() {
  runtime::KernelRequest r = request(64, DataType::BFLOAT16, "gdn_state_copy");
  r.kernel = "gdn_state_copy";
  return r;
}

bool needs_pool_copy(const GdnProblem& p) { return p.state_indices >= 0 && p.final_state >= 0; }

// Whether plan `p` under prefill mode `mode` runs the two-pass prefill.
bool two_pass(const GdnProblem& p, int mode) { return !p.summary && mode == kPrefillTwoPass && !use_decode(p); }
// Whether plan `p` under prefill mode `mode` runs the fused prefill.
bool fused(const GdnProblem& p, int mode) {
  return !p.summary && (mode == kPrefillFused || mode == kPrefillFusedWs || mode == kPrefillFusedWsH) &&
         !use_decode(p);
}
// Whether a gdn_summary plan runs the two-pass prep and the scan's summary form (d != 128; the fused kernel's
// summary form serves d = 128).
bool summary_scan(const GdnProblem& p) { return p.summary && p.d != 128; }
// Whether the fused entries are the warp-specialised build (PIPELINE_ARCH 3, and 4 its fp16-inverse build).
bool fused_ws(const GdnProblem& p, int mode) {
  return fused(p, mode) && (mode == kPrefillFusedWs || mode == kPrefillFusedWsH);
}
// Whether they are the fp16-inverse build (PIPELINE_ARCH 4).
bool fused_f16inv(const GdnProblem& p, int mode) { return fused(p, mode) && mode == kPrefillFusedWsH; }
// Whether that build checks beta's range at run time (no use_beta_sigmoid): the guarded builds and their fallback.
bool fused_guarded(const GdnProblem& p, int mode) { return fused_f16inv(p, mode) && !p.beta_sigmoid; }
// Rule f16_inverse_domain (la_engine.h): PIPELINE_ARCH 4 where f16_inverse_domain holds, or unsplit where
// f16_inverse_guarded does (the run-time guard); the refusal names what the node lacks.
Status f16_inverse_rule(const GdnProblem& p, int mode, long long split) {
  if (!fused_f16inv(p, mode) || f16_inverse_domain(p) || (f16_inverse_guarded(p) && split == 0)) return Status::ok();
  const std::string head = "engine linear_attention: knob PIPELINE_ARCH 4 (the fused prefill's inverse on fp16 "
                           "tiles): rule f16_inverse_domain: ";
  if (!p.l2norm)
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  head + "fp16 holds the chunk inverse only with unit keys; node '" + p.node +
                      "' declares no use_qk_l2norm (PIPELINE_ARCH 3 serves it with the fp32 inverse)");
  return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                head + "without use_beta_sigmoid beta's range is checked at run time, a (sequence, head) at a time, "
                       "by the unsplit prefill only; node '" + p.node + "' " +
                    (split > 0 ? "is planned with CHAIN_SPLIT " + std::to_string(split)
                               : std::string("binds state_checkpoints")) +
                    " (PIPELINE_ARCH 3 serves it)");
}
// The guarded plan's workspace: a word a (sequence, head), 256-byte aligned.
std::int64_t guard_bytes(const GdnProblem& p) { return (p.n_seq * p.ho * 4 + 255) / 256 * 256; }
// The fused prefill's one shape rule (its tiles are written for d = 128).
Status fused_head_dim(const GdnProblem& p, int mode) {
  if (!fused(p, mode) || p.d == 128) return Status::ok();
  return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                "engine linear_attention: knob PIPELINE_ARCH " + std::to_string(mode) +
                    " (the fused wgmma prefill): rule fused_head_dim: "
                "its tiles are written for d_k = d_v = 128; this graph has " + std::to_string(p.d) +
                    " (PIPELINE_ARCH 0 or 1 serve it)");
}

// Bound state_checkpoints are written by the fused prefill (PIPELINE_ARCH 2 and 3) and the two-pass one (1).
Status checkpoint_mode(const GdnProblem& p, int mode) {
  if (p.checkpoints < 0 || fused(p, mode) || two_pass(p, mode)) return Status::ok();
  return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                "engine linear_attention: knob PIPELINE_ARCH " + std::to_string(mode) +
                    ": rule L8 checkpoints: state_checkpoints is bound, and only the fused prefill (PIPELINE_ARCH 2, "
                    "3 or 4) or the two-pass one (1) writes it");
}

// The span length a config names (the CHAIN_SPLIT knob; absent: 0, no split).
Result<long long> chain_split(const PlanConfig& config, int mode) {
  auto it = config.knobs.find(KnobType::CHAIN_SPLIT);
  if (it == config.knobs.end()) return 0LL;
  if (std::find(std::begin(kChainSplits), std::end(kChainSplits), it->second) == std::end(kChainSplits))
    return Status(ErrorCode::INVALID_VALUE, "engine linear_attention: knob CHAIN_SPLIT (chunks per span) is " +
                                                std::to_string(it->second) + "; it takes 0, 8, 16, 32, 64, 128 or 256");
  if (it->second != 0 && mode != kPrefillTwoPass && mode != kPrefillFused && mode != kPrefillFusedWs &&
      mode != kPrefillFusedWsH)
    return Status(ErrorCode::INVALID_VALUE, "engine linear_attention: knob CHAIN_SPLIT " + std::to_string(it->second) +
                                                " splits the two-pass or fused prefill's scan; it needs PIPELINE_ARCH "
                                                "1, 2, 3 or 4");
  return static_cast<long long>(it->second);
}

// The prefill mode a config names (the PIPELINE_ARCH knob; absent: one-pass).
Result<int> prefill_mode(const PlanConfig& config) {
  auto it = config.knobs.find(KnobType::PIPELINE_ARCH);
  if (it == config.knobs.end()) return kPrefillOnePass;
  if (it->second == kBwdOnePass)
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  "engine linear_attention: knob PIPELINE_ARCH 5 (the one-pass backward): rule L11 backward only: "
                  "the forward's modes are 0..4");
  if (it->second != kPrefillOnePass && it->second != kPrefillTwoPass && it->second != kPrefillFused &&
      it->second != kPrefillFusedWs && it->second != kPrefillFusedWsH)
    return Status(ErrorCode::INVALID_VALUE, "engine linear_attention: knob PIPELINE_ARCH (prefill mode) is " +
                                                std::to_string(it->second) +
                                                "; it takes 0 (one pass), 1 (two passes), 2 (fused, d = 128), 3 "
                                                "(fused warp-specialised, d = 128), 4 (3 with the inverse on fp16 "
                                                "tiles) or, for gdn_bwd only, 5 (the one-pass backward)");
  return static_cast<int>(it->second);
}

// Operand order of the table rows.
enum Slot : int { kQ, kK, kV, kG, kBeta, kCu, kInit, kALog, kDtBias, kIdx, kO, kFinal, kCkpt, kSlots };

// Which kernels a plan runs; fixed at build (a call's overridden extents keep it).
// kSummary: gdn_summary_fused; kSummaryScan: gdn_prefill_prep, then gdn_summary_scan.
enum class Kind { kDecode, kDecodeSmall, kPrefill, kTwoPass, kSplit, kFused, kFusedSplit, kSummary, kSummaryScan };
bool splits(Kind k) { return k == Kind::kSplit || k == Kind::kFusedSplit; }
// The grid rows (z) of a split plan's span kernels: N x spans, or the fused split's compact rows (GDN_SPLIT_ADAPT).
long long split_grid_rows(const GdnProblem& p, long long split, bool fused_split) {
  return GDN_SPLIT_ADAPT && fused_split ? opgraph_gdn::gdn_split_grid_spans(p.t, p.n_seq, split)
                                        : p.n_seq * opgraph_gdn::gdn_split_spans(p.t, split);
}
// The refusal of a split whose grid rows pass the grid's 65535 in z (`what`: the plan's knob or the call's override).
Status split_grid_rule(const GdnProblem& p, long long split, bool fused_split, ErrorCode code,
                       const std::string& what) {
  if (split <= 0) return Status::ok();
  const long long rows = split_grid_rows(p, split, fused_split);
  if (rows <= 65535) return Status::ok();
  return Status(code, "engine linear_attention: " + what + ": the split's grid rows (" + std::to_string(rows) +
                          (GDN_SPLIT_ADAPT && fused_split
                               ? std::string(": N + the full spans' bound")
                               : ": N x spans, " + std::to_string(p.n_seq) + " x " +
                                     std::to_string(opgraph_gdn::gdn_split_spans(p.t, split))) +
                          ") exceed the grid's 65535 in z; take longer spans");
}

// Everything a plan launches for problem `p` under `kind` (split: the span length).
struct GdnLaunch {
  GdnParams params{};
  runtime::LaunchDims main, prep, summary, fixup, copy;
  long long copy_words = 0;
  std::int64_t workspace = 0;     // bytes (two-pass only)
  long long split_offset = -1;    // bytes from the workspace to the span summaries (-1: no split)
  long long table_offset = -1;    // GDN_SPLIT_ADAPT: bytes from the workspace to the span table (-1: none)
};
GdnLaunch launch_for(const GdnProblem& p, Kind kind, long long split, bool ws, bool guard = false, int sms = 0) {
  GdnLaunch l;
  l.params = params_of(p);
  const bool decode = kind == Kind::kDecode || kind == Kind::kDecodeSmall;
  const bool small = kind == Kind::kDecodeSmall;
  l.main.grid[0] = static_cast<unsigned>(decode ? p.d / (small ? kDecodeSmallRows : kDecodeRows) : p.d / 64);
  l.main.grid[1] = static_cast<unsigned>(p.ho);
  l.main.grid[2] = static_cast<unsigned>(p.n_seq);
  l.main.block[0] = decode ? (small ? kDecodeSmallThreads : kDecodeThreads) : kPrefillThreads;
  l.main.shared_bytes = decode ? 0u : static_cast<unsigned>(opgraph_gdn::gdn_prefill_smem_bytes(p.d));
  if (kind == Kind::kFused || kind == Kind::kFusedSplit || kind == Kind::kSummary) {
    l.main.grid[0] = kind == Kind::kSummary ? 2 : 1;  // summary: H rows, then M^T rows
    // The form gdn_fused.cu builds by default, or the warp-specialised one (three warpgroups).
    const bool ws_form = ws && kind != Kind::kSummary;
    l.main.block[0] = ws_form ? opgraph_gdn::kGdnFusedWsThreads : opgraph_gdn::kGdnFusedThreads;
    l.main.shared_bytes = static_cast<unsigned>(ws_form ? opgraph_gdn::gdn_fused_ws_smem_bytes(p.d)
                                                        : opgraph_gdn::gdn_fused_smem_bytes(p.d));
    if (guard && kind == Kind::kFused) l.workspace = guard_bytes(p);  // the verdicts, a word a (sequence, head)
  }
  if (kind == Kind::kTwoPass || kind == Kind::kSplit || kind == Kind::kSummaryScan) {
    if (kind == Kind::kSummaryScan) l.main.grid[0] = static_cast<unsigned>(2 * p.d / 64);  // H rows, M^T rows
    l.params.n_slots = opgraph_gdn::gdn_ws_slots(p.t, p.n_seq);
    l.workspace = opgraph_gdn::gdn_ws_bytes(p.d, p.t, p.n_seq, p.ho);
    l.main.shared_bytes = static_cast<unsigned>(opgraph_gdn::gdn_scan_smem_bytes(p.d));
    l.prep.grid[0] = static_cast<unsigned>(l.params.n_slots);
    l.prep.grid[1] = static_cast<unsigned>(p.ho);
    l.prep.block[0] = kPrefillThreads;
    l.prep.shared_bytes = static_cast<unsigned>(opgraph_gdn::gdn_prep_smem_bytes(p.d));
  }
  if (splits(kind)) {
    l.params.span_chunks = split;
    l.params.n_spans = opgraph_gdn::gdn_split_spans(p.t, split);
    // Two-pass: the span blocks after the chunk blocks; fused: the span blocks alone.
    l.split_offset = kind == Kind::kSplit ? opgraph_gdn::gdn_split_ws_offset(p.d, p.t, p.n_seq, p.ho) : 0;
    l.workspace = kind == Kind::kSplit ? opgraph_gdn::gdn_split_ws_bytes(p.d, p.t, p.n_seq, p.ho, split)
                                       : opgraph_gdn::gdn_fused_split_ws_bytes(p.d, p.t, p.n_seq, p.ho, split);
    l.main.grid[2] = static_cast<unsigned>(p.n_seq * l.params.n_spans);
    l.summary = l.main;
    l.summary.grid[0] = kind == Kind::kSplit ? static_cast<unsigned>(2 * p.d / 64) : 2u;
    l.fixup.grid[0] = static_cast<unsigned>(p.d / 64);
    l.fixup.grid[1] = static_cast<unsigned>(p.ho);
    l.fixup.grid[2] = static_cast<unsigned>(p.n_seq);
    l.fixup.block[0] = kPrefillThreads;
    l.fixup.shared_bytes = static_cast<unsigned>(opgraph_gdn::gdn_fixup_smem_bytes(p.d));
    if (GDN_SPLIT_ADAPT && kind == Kind::kFusedSplit) {  // the compact map's grids and its table
      const long long rows = opgraph_gdn::gdn_split_grid_spans(p.t, p.n_seq, split);
      l.params.split_min_chunks = split_min_chunks(p, sms);
      l.table_offset = opgraph_gdn::gdn_split_table_offset(p.d, p.t, p.n_seq, p.ho, split);
      l.workspace = opgraph_gdn::gdn_fused_split_adapt_ws_bytes(p.d, p.t, p.n_seq, p.ho, split);
      l.main.grid[2] = static_cast<unsigned>(rows);
      l.summary.grid[2] = static_cast<unsigned>(std::max(1LL, rows - p.n_seq));
    }
  }
  const long long elem = p.state_type == DataType::FLOAT ? 4 : 2;
  l.copy_words = p.state_rows * p.state_row_stride * elem / 4;
  const long long per_block = 4 * kCopyThreads;  // about 4 words a thread (the copy is grid-stride)
  l.copy.grid[0] = static_cast<unsigned>(std::clamp<long long>((l.copy_words + per_block - 1) / per_block, 1, 4096));
  l.copy.block[0] = kCopyThreads;
  return l;
}

class GdnPlan final : public CompiledPlan {
 public:
  // `prep` non-null: the two-pass prefill (prep, then `main` = the scan);
  // `summary` and `fixup` non-null too: a chain split (`main` = the span scan).
  // `fallback` non-null: PIPELINE_ARCH 4's guarded form (`main` the fp16 build checking beta, then the fp32 one).
  GdnPlan(GdnProblem p, runtime::KernelRuntime* rt, const runtime::LoadedKernel* main,
          const runtime::LoadedKernel* prep, const runtime::LoadedKernel* copy, const runtime::LoadedKernel* summary,
          const runtime::LoadedKernel* fixup, const runtime::LoadedKernel* fallback, long long split, bool fused,
          bool ws, OperandTable table, std::array<std::int32_t, kSlots> rows)
      : p_(std::move(p)), rt_(rt), main_(main), prep_(prep), copy_(copy), summary_(summary), fixup_(fixup),
        fallback_(fallback), table_(std::move(table)), rows_(rows),
        kind_(p_.summary      ? (prep_ ? Kind::kSummaryScan : Kind::kSummary)
              : use_decode(p_) ? (decode_small(p_) ? Kind::kDecodeSmall : Kind::kDecode)
              : fused        ? (summary_ && fixup_ && split > 0 ? Kind::kFusedSplit : Kind::kFused)
                             : (prep_ ? (summary_ && fixup_ && split > 0 ? Kind::kSplit : Kind::kTwoPass)
                                      : Kind::kPrefill)),
        split_(splits(kind_) ? split : 0), ws_(ws), launch_(launch_for(p_, kind_, split_, ws_, fallback_ != nullptr, rt_->device().sm_count)) {}
  std::int64_t workspace_size() const override { return launch_.workspace; }
  Result<std::int64_t> workspace_size_for(const VariantPack& pack) const override {
    auto l = launch_of(pack);
    if (l.is_bad()) return l.status();
    return l.value()->workspace;
  }

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
    // The one branch for execute-time shape overrides: the built launch, or one
    // for the call's T and N (the same kernels), checked before anything runs.
    if (!pack.has_overrides() && !table_.accepts(pack)) return table_.explain(pack);
    auto launched = launch_of(pack);
    if (launched.is_bad()) return launched.status();
    const GdnLaunch* l = launched.value();
    if (l->workspace > 0) {
      if (ctx.workspace.bytes < l->workspace || !ctx.workspace.data)
        return {ErrorCode::INVALID_VALUE, "engine linear_attention: the plan's kernels need a workspace of " +
                                              std::to_string(l->workspace) + " bytes" +
                                              (l == &launch_ ? "" : " at the call's extents") + ", got " +
                                              std::to_string(ctx.workspace.data ? ctx.workspace.bytes : 0)};
      if (reinterpret_cast<std::uintptr_t>(ctx.workspace.data) % 16 != 0)
        return {ErrorCode::INVALID_VALUE, "engine linear_attention: the workspace must be 16-byte aligned"};
    }
    const runtime::ContextScope bound(rt_->api(), rt_->context());
    OPGRAPH_CHECK(bound.status());
    const OperandBuffer* ops = pack.operands().data();
    auto ptr = [&](int slot) -> unsigned long long {
      const std::int32_t row = rows_[static_cast<std::size_t>(slot)];
      if (row < 0) return 0;
      return reinterpret_cast<unsigned long long>(ops[table_.rows()[static_cast<std::size_t>(row)].position].data);
    };
    GdnParams a = l->params;
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
    a.ckpt = ptr(kCkpt);
    a.ws = reinterpret_cast<unsigned long long>(ctx.workspace.data);
    if (l->split_offset >= 0) a.sum_ws = a.ws + static_cast<unsigned long long>(l->split_offset);
    if (l->table_offset >= 0) a.span_table = a.ws + static_cast<unsigned long long>(l->table_offset);
    const CUstream stream = static_cast<CUstream>(ctx.stream);
    // Distinct pool buffers: rows no sequence addresses keep their value.
    if (copy_ && a.final_state != a.initial_state && l->copy_words > 0) {
      long long words = l->copy_words;
      void* cargs[] = {&a, &words};
      OPGRAPH_CHECK(rt_->launch(*copy_, l->copy, stream, cargs));
    }
    if (a.n_seq <= 0 || a.ho <= 0) return Status::ok();  // no sequence: nothing to compute
    void* args[] = {&a};
    if (prep_ && a.n_slots > 0) OPGRAPH_CHECK(rt_->launch(*prep_, l->prep, stream, args));
    if (l->split_offset >= 0) {
      OPGRAPH_CHECK(rt_->launch(*summary_, l->summary, stream, args));
      OPGRAPH_CHECK(rt_->launch(*fixup_, l->fixup, stream, args));
    }
    if (!fallback_) return rt_->launch(*main_, l->main, stream, args);
    // PIPELINE_ARCH 4 guarded: the fp16 build marks the pairs whose betas leave [0, 2] in the workspace and skips
    // them; the fp32 build runs those alone (kernels/gdn_fused_ws3.cuh, GDN_BETA_GUARD).
    a.guard = a.ws;
    OPGRAPH_CHECK(rt_->launch(*main_, l->main, stream, args));
    a.flags |= opgraph_gdn::kFlagGuardRedo;
    return rt_->launch(*fallback_, l->main, stream, args);
  }

 private:
  GdnProblem p_;
  runtime::KernelRuntime* rt_;
  const runtime::LoadedKernel* main_;
  const runtime::LoadedKernel* prep_;  // null unless two-pass
  const runtime::LoadedKernel* copy_;  // null unless needs_pool_copy
  const runtime::LoadedKernel* summary_;  // null unless a chain split
  const runtime::LoadedKernel* fixup_;    // null unless a chain split
  const runtime::LoadedKernel* fallback_;  // null unless PIPELINE_ARCH 4 guarded (the fp32 build after the fp16 one)
  OperandTable table_;
  std::array<std::int32_t, kSlots> rows_;  // slot -> table row (-1: not bound)
  Kind kind_;
  long long split_;
  bool ws_;                                // the fused entries' warp-specialised build (PIPELINE_ARCH 3)
  GdnLaunch launch_;                       // the built launch

  // The launch a call runs: the built one, or (execute-time overrides) one for the
  // call's T and N, held in `moved_` per thread. Refuses an override by its rule.
  Result<const GdnLaunch*> launch_of(const VariantPack& pack) const {
    if (!pack.has_overrides()) return &launch_;
    if (kind_ == Kind::kSummary || kind_ == Kind::kSummaryScan)
      return Status(ErrorCode::INVALID_VARIANT_PACK,
                    "engine linear_attention: rule summary_overrides: a gdn_summary plan runs its declared extents "
                    "(execute-time shape overrides are served for gdn forward); plan a graph of the call's extents");
    if (!table_.accepts_overridden(pack)) return table_.explain_overridden(pack);
    auto q = overridden_problem(p_, pack, table_.layout());
    if (q.is_bad()) return q.status();
    if (splits(kind_))
      OPGRAPH_CHECK(split_grid_rule(*q, split_, kind_ == Kind::kFusedSplit, ErrorCode::INVALID_VARIANT_PACK,
                                    "shape override under the plan's CHAIN_SPLIT " + std::to_string(split_)));
    thread_local GdnLaunch moved;  // per thread: the plan stays thread-safe and allocation-free
    moved = launch_for(*q, kind_, split_, ws_, fallback_ != nullptr, rt_->device().sm_count);
    return &moved;
  }
};

Result<OperandTable> operand_table_for(const GdnProblem& p, const DeclaredLayout& layout,
                                       std::array<std::int32_t, kSlots>& rows) {
  const std::int64_t uids[kSlots] = {p.q,    p.k,       p.v,       p.g, p.beta, p.cu_seqlens, p.initial_state,
                                     p.a_log, p.dt_bias, p.state_indices, p.o, p.final_state, p.checkpoints};
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
  // gdn_summary has no q: the two-pass prep (summary_scan) reads k in its place (its Qe and P go unread).
  if (summary_scan(p)) rows[kQ] = rows[kK];
  OperandNeeds needs;
  needs.declared_extents = true;
  needs.declared_strides = true;  // the kernels read the declared (dense) layout
  needs.declared_dtype = true;
  needs.memory = MemoryKind::DEVICE;
  OperandTable table(layout, needs, "linear_attention", positions);
  // 8-byte row loads of q/k, 4-byte pair loads of v, pair stores of O and the states.
  for (int s : {kQ, kK, kV, kO, kInit, kFinal, kCkpt}) {
    const std::int32_t row = rows[static_cast<std::size_t>(s)];
    if (row >= 0) table.require_alignment(static_cast<std::size_t>(row), 16);
  }
  return table;
}

// The rules a plan of `p` under `mode` must pass, shared by build_plan and plan_kernels: decode-sized graphs run the
// decode kernel and a summary its kernel, so `split` is dropped there; then the fused head dim, f16_inverse_domain,
// the checkpoint builds and the split's grid rows.
Status plan_rules(const GdnProblem& p, int mode, long long& split) {
  if (!two_pass(p, mode) && !fused(p, mode)) split = 0;
  OPGRAPH_CHECK(fused_head_dim(p, mode));
  OPGRAPH_CHECK(f16_inverse_rule(p, mode, split));
  OPGRAPH_CHECK(checkpoint_mode(p, mode));
  return split_grid_rule(p, split, fused(p, mode), ErrorCode::INVALID_VALUE,
                         "knob CHAIN_SPLIT " + std::to_string(split));
}

class LaEngine final : public Engine {
 public:
  explicit LaEngine(EngineIdentity id) : Engine(std::move(id)) {
    // mma.sync runs on sm_80+, but the D = 128 prefill needs 169 KiB of shared
    // memory, and only sm_90 has been measured.
    caps_.sm_lo = 90;
    caps_.sm_hi = 90;
    caps_.notes = PlanNotes{{NumericalNote::TENSOR_CORE}, {BehaviorNote::RUNTIME_COMPILATION}};
    // Prefill mode: 0 one pass (gdn_prefill), 1 two passes (gdn_prefill_prep +
    // gdn_prefill_scan, with a workspace). The first value is the default.
    // Chain split: the two-pass scan in spans of this many chunks (0: off, the default).
    // PIPELINE_ARCH 2 and 3: the fused prefill (d = 128), eight-warp and warp-specialised.
    // PIPELINE_ARCH 4: 3 with the inverse on fp16 tiles (rule f16_inverse_domain).
    // PIPELINE_ARCH 5: gdn_bwd's one-pass form (gdn_bwd.h; the forward refuses it).
    caps_.knobs = {KnobDomain{KnobType::PIPELINE_ARCH, {kPrefillOnePass, kPrefillTwoPass, kPrefillFused,
                                                        kPrefillFusedWs, kPrefillFusedWsH, kBwdOnePass}},
                   KnobDomain{KnobType::CHAIN_SPLIT, {std::begin(kChainSplits), std::end(kChainSplits)}}};
  }
  const Capabilities& capabilities() const override { return caps_; }

  // A gdn_bwd graph goes to gdn_bwd.cpp (check_support, build_plan, plan_kernels, heuristics).
  Status check_support(const OpGraph& g, const PlanContext&) const override {
    return is_gdn_bwd(g) ? gdn_bwd_support(g) : analyze_gdn(g).status();
  }

  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& g, const PlanConfig& config,
                                                   const PlanContext& ctx) const override {
    if (is_gdn_bwd(g)) return build_gdn_bwd_plan(g, config, ctx);
    if (!ctx.layout)
      return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: built without the graph's layout");
    auto mode = prefill_mode(config);
    if (mode.is_bad()) return mode.status();
    auto split = chain_split(config, *mode);
    if (split.is_bad()) return split.status();
    auto p = analyze_gdn(g);
    if (p.is_bad()) return p.status();
    OPGRAPH_CHECK(plan_rules(*p, *mode, *split));
    std::array<std::int32_t, kSlots> rows{};
    auto table = operand_table_for(*p, *ctx.layout, rows);
    if (table.is_bad()) return table.status();
    // The device the planning target names (a handle's device, read_device); a
    // target that names none (for_arch, JSON without "ordinal") builds on device 0.
    const int ordinal = ctx.target().has_device() ? std::max(ctx.target().device->ordinal, 0) : 0;
    // The device's runtime, shared with the other families (runtime/shared_runtimes.h),
    // held for the whole build; the caller's context is current again on return.
    auto leased = runtime::shared_kernel_runtime(ordinal);
    if (leased.is_bad()) return leased.status();
    runtime::KernelRuntime& rt = **leased;
    const runtime::ContextScope bound(rt.api(), rt.context());
    OPGRAPH_CHECK(bound.status());
    const runtime::LoadedKernel* main = nullptr;
    const runtime::LoadedKernel* prep = nullptr;
    const runtime::LoadedKernel* copy = nullptr;
    const runtime::LoadedKernel* summary = nullptr;
    const runtime::LoadedKernel* fixup = nullptr;
    const runtime::LoadedKernel* fallback = nullptr;
    for (const auto& r : kernel_requests(*p, *mode, *split)) {
      auto k = rt.get(r);
      if (k.is_bad()) return k.status();
      if (guard_fallback(r)) fallback = *k;
      else if (r.entry == "gdn_state_copy") copy = *k;
      else if (r.entry == "gdn_prefill_prep") prep = *k;
      else if (r.entry == "gdn_span_summary" || r.entry == "gdn_span_summary_fused") summary = *k;
      else if (r.entry == "gdn_span_fixup") fixup = *k;
      else main = *k;
    }
    const bool is_fused = fused(*p, *mode), is_ws = fused_ws(*p, *mode);
    return std::unique_ptr<CompiledPlan>(std::make_unique<GdnPlan>(
        std::move(*p), &rt, main, prep, copy, summary, fixup, fallback, *split, is_fused, is_ws, std::move(*table),
        rows));
  }

  Status declared_kernels(const KernelSink& sink) const override {
    for (const auto& r : declared_specialisations()) OPGRAPH_CHECK(sink(r));
    return Status::ok();
  }

  Status plan_kernels(const OpGraph& g, const PlanConfig& config, const PlanContext& ctx,
                      const KernelSink& sink) const override {
    if (is_gdn_bwd(g)) return gdn_bwd_plan_kernels(g, config, ctx, sink);
    auto mode = prefill_mode(config);
    if (mode.is_bad()) return mode.status();
    auto split = chain_split(config, *mode);
    if (split.is_bad()) return split.status();
    auto p = analyze_gdn(g);
    if (p.is_bad()) return p.status();
    if (!ctx.facts || !ctx.target().has_device())
      return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                    "engine linear_attention: compiles for a device target; this target has none");
    OPGRAPH_CHECK(plan_rules(*p, *mode, *split));
    for (const auto& r : kernel_requests(*p, *mode, *split)) OPGRAPH_CHECK(sink(r));
    return Status::ok();
  }

  std::string label(const PlanConfig&) const override { return name(); }

 private:
  Capabilities caps_;
};

}  // namespace

bool guard_fallback(const runtime::KernelRequest& r) {
  auto sets = [&](const char* name) {
    return std::any_of(r.defines.begin(), r.defines.end(),
                       [&](const runtime::KernelDefine& d) { return d.name == name && d.value == "1"; });
  };
  return sets("GDN_BETA_GUARD") && !sets("GDN_WS3_F16INV");
}

std::vector<runtime::KernelRequest> kernel_requests(const GdnProblem& p, int prefill_mode, long long split) {
  std::vector<runtime::KernelRequest> out;
  if (summary_scan(p)) {
    out.push_back(request(p.d, p.io, "gdn_summary_scan"));
    out.push_back(request(p.d, p.io, "gdn_prefill_prep"));
    return out;
  }
  if (p.summary) {
    out.push_back(request(p.d, p.io, "gdn_summary_fused"));
    return out;
  }
  if (two_pass(p, prefill_mode) && split > 0) {
    out.push_back(request(p.d, p.io, "gdn_span_scan", false, p.checkpoints >= 0));
    out.push_back(request(p.d, p.io, "gdn_prefill_prep"));
    out.push_back(request(p.d, p.io, "gdn_span_summary"));
    out.push_back(request(p.d, p.io, "gdn_span_fixup"));
  } else if (two_pass(p, prefill_mode)) {
    out.push_back(request(p.d, p.io, "gdn_prefill_scan", false, p.checkpoints >= 0));
    out.push_back(request(p.d, p.io, "gdn_prefill_prep"));
  } else if (fused(p, prefill_mode) && p.d == 128 && split > 0) {
    const bool ws = fused_ws(p, prefill_mode), ck = p.checkpoints >= 0, h = fused_f16inv(p, prefill_mode);
    out.push_back(request(p.d, p.io, "gdn_span_scan_fused", ws, ck, h));
    out.push_back(request(p.d, p.io, "gdn_span_summary_fused", ws, false, h));
    out.push_back(request(p.d, p.io, "gdn_span_fixup"));
  } else if (fused_guarded(p, prefill_mode) && p.d == 128) {  // the fp16 build checking beta, then the fp32 one
    out.push_back(request(p.d, p.io, "gdn_prefill_fused", true, false, true, true));
    out.push_back(request(p.d, p.io, "gdn_prefill_fused", true, false, false, true));
  } else if (fused(p, prefill_mode) && p.d == 128) {
    out.push_back(request(p.d, p.io, "gdn_prefill_fused", fused_ws(p, prefill_mode), p.checkpoints >= 0,
                          fused_f16inv(p, prefill_mode)));
  } else {
    out.push_back(request(p.d, p.io, !use_decode(p) ? "gdn_prefill" : decode_small(p) ? "gdn_decode_small" : "gdn_decode"));
  }
  if (needs_pool_copy(p)) out.push_back(copy_request());
  return out;
}

std::int64_t workspace_bytes(const GdnProblem& p, int prefill_mode, long long split) {
  if (p.summary) return summary_scan(p) ? opgraph_gdn::gdn_ws_bytes(p.d, p.t, p.n_seq, p.ho) : 0;
  if (fused(p, prefill_mode) && split > 0)
    return GDN_SPLIT_ADAPT ? opgraph_gdn::gdn_fused_split_adapt_ws_bytes(p.d, p.t, p.n_seq, p.ho, split)
                           : opgraph_gdn::gdn_fused_split_ws_bytes(p.d, p.t, p.n_seq, p.ho, split);
  if (fused_guarded(p, prefill_mode)) return guard_bytes(p);
  if (!two_pass(p, prefill_mode)) return 0;
  return split > 0 ? opgraph_gdn::gdn_split_ws_bytes(p.d, p.t, p.n_seq, p.ho, split)
                   : opgraph_gdn::gdn_ws_bytes(p.d, p.t, p.n_seq, p.ho);
}

long long chain_split_rule(const GdnProblem& p, long long sm_count) {
  if (sm_count <= 0 || p.n_seq <= 0 || p.ho <= 0 || p.batch_invariant) return 0;
  const long long slices = p.d / 64, a = p.n_seq * p.ho;
  const long long chunks = (p.t / p.n_seq + 63) / 64;  // per sequence, on average
  auto waves = [&](long long ctas) { return (ctas + sm_count - 1) / sm_count; };
  return cheapest_split(chunks, p.n_seq, p.t, chunks * waves(a * slices), 3, 4, [&](long long j, long long spans) {
    return j * (waves(a * spans * 2 * slices) + waves(a * spans * slices));
  });
}

long long fused_split_rule(const GdnProblem& p, long long sm_count) {
  if (sm_count <= 0 || p.n_seq <= 0 || p.ho <= 0 || p.batch_invariant || p.d != 128) return 0;
  const long long a = p.n_seq * p.ho;
  const long long chunks = (p.t / p.n_seq + 63) / 64;  // per sequence, on average
  auto waves = [&](long long ctas) { return (ctas + sm_count - 1) / sm_count; };
  // In fifths of a chunk step (la_engine.h): a summary wave 4, a scan wave 5, a fix-up step 9 a span.
  return cheapest_split(chunks, p.n_seq, p.t, 5 * chunks * waves(a), 19, 20, [&](long long j, long long spans) {
    return j * (4 * waves(2 * a * (spans - 1)) + 5 * waves(a * spans)) + 9 * spans;
  });
}

bool decode_small(const GdnProblem& p) { return p.n_seq * p.ho <= kDecodeSmallPairs; }

bool f16_inverse_domain(const GdnProblem& p) { return p.d == 128 && p.l2norm && p.beta_sigmoid; }
bool f16_inverse_guarded(const GdnProblem& p) {
  return p.d == 128 && p.l2norm && !p.beta_sigmoid && p.checkpoints < 0;
}

long long split_min_chunks(const GdnProblem& p, long long sm_count) {
  if (p.n_seq <= 1 || sm_count <= 0) return 0;
  return (5 * p.ho * ((p.t + 63) / 64) + 4 * sm_count - 1) / (4 * sm_count);
}

bool offers_adapt_split(const GdnProblem& p, long long sm_count) {
  if (!GDN_SPLIT_ADAPT || p.n_seq <= 1 || p.batch_invariant || !fused_first(p, sm_count)) return false;
  if (fused_split_rule(p, sm_count) > 0) return false;
  return (p.t + 63) / 64 > std::max(kAdaptSplit, split_min_chunks(p, sm_count));
}

bool fused_first(const GdnProblem& p, long long sm_count) {
  if (p.d != 128 || use_decode(p) || sm_count <= 0) return false;
  return 5 * p.n_seq * p.ho >= sm_count;
}

std::vector<runtime::KernelRequest> declared_specialisations() {
  std::vector<runtime::KernelRequest> out;
  for (const char* entry : {"gdn_prefill", "gdn_decode", "gdn_decode_small", "gdn_prefill_prep", "gdn_prefill_scan", "gdn_span_summary",
                            "gdn_span_fixup", "gdn_span_scan"})
    for (long long d : {64, 128})
      for (DataType io : {DataType::BFLOAT16, DataType::HALF}) out.push_back(request(d, io, entry));
  for (const char* entry : {"gdn_prefill_fused", "gdn_summary_fused", "gdn_span_summary_fused", "gdn_span_scan_fused"})
    for (DataType io : {DataType::BFLOAT16, DataType::HALF}) out.push_back(request(128, io, entry));
  // gdn_summary at d = 64: the two-pass scan's summary form (gdn_two_pass.cu's builds, which hold it at both dims).
  for (DataType io : {DataType::BFLOAT16, DataType::HALF}) out.push_back(request(64, io, "gdn_summary_scan"));
  // PIPELINE_ARCH 3's warp-specialised builds (gdn_summary has none: it keeps the eight-warp form), and 4's
  // (the same with the inverse on fp16 tiles).
  for (bool h : {false, true})
    for (const char* entry : {"gdn_prefill_fused", "gdn_span_summary_fused", "gdn_span_scan_fused"})
      for (DataType io : {DataType::BFLOAT16, DataType::HALF})
        out.push_back(request(128, io, entry, /*ws=*/true, /*ckpt=*/false, h));
  // 4's guarded builds (no use_beta_sigmoid: the fp16 one checking beta, the fp32 fallback), unsplit only.
  for (bool h : {true, false})
    for (DataType io : {DataType::BFLOAT16, DataType::HALF})
      out.push_back(request(128, io, "gdn_prefill_fused", /*ws=*/true, /*ckpt=*/false, h, /*guard=*/true));
  // The builds that write state_checkpoints: the forward and the span scans, the three fused forms, and the
  // two-pass scans at both head dims.
  for (const char* entry : {"gdn_prefill_fused", "gdn_span_scan_fused"})
    for (int arch : {kPrefillFused, kPrefillFusedWs, kPrefillFusedWsH})
      for (DataType io : {DataType::BFLOAT16, DataType::HALF})
        out.push_back(request(128, io, entry, arch != kPrefillFused, /*ckpt=*/true, arch == kPrefillFusedWsH));
  for (const char* entry : {"gdn_prefill_scan", "gdn_span_scan"})
    for (long long d : {64, 128})
      for (DataType io : {DataType::BFLOAT16, DataType::HALF})
        out.push_back(request(d, io, entry, /*ws=*/false, /*ckpt=*/true));
  for (auto& r : gdn_bwd_declared_specialisations()) out.push_back(std::move(r));
  out.push_back(copy_request());
  return out;
}

runtime::KernelRuntime* shared_runtime_if_open(int ordinal) { return runtime::shared_kernel_runtime_if_open(ordinal); }

Result<std::vector<plan::Proposal>> heuristics(HeurMode, const PlanContext& ctx,
                                               const std::vector<const Engine*>& offered) {
  std::vector<plan::Proposal> out;
  for (const Engine* e : offered) {
    if (e->name() != "linear_attention") continue;
    if (is_gdn_bwd(ctx.facts->graph())) {
      gdn_bwd_proposals(*e, ctx.facts->graph(), ctx.target().has_device() ? ctx.target().device->sm_count : 0, out);
      continue;
    }
    auto p = analyze_gdn(ctx.facts->graph());
    if (p.is_bad()) continue;
    // The order (la_engine.h, heuristics): the split plans first (the warp-specialised fused one where
    // fused_split_rule splits, the two-pass one where chain_split_rule does, then the eight-warp fused one); then,
    // where fused_first holds, the fused plans (warp-specialised, eight-warp) before the two-pass plan (then, where
    // offers_adapt_split holds, the warp-specialised split of a batch of several sequences), else after it; the
    // one-pass plan last (no workspace). Decode-sized graphs run the decode kernel under
    // either value: one plan. Same-run H200 figures behind it: bench/results/2026-12-04-gdn-peers-d804a88-h200.txt.
    if (p->summary) {  // every mode runs the summary kernel: one plan
      out.push_back(plan::Proposal::plan(
          e->id(), Knobs{{KnobType::PIPELINE_ARCH, kPrefillOnePass}, {KnobType::CHAIN_SPLIT, 0}}));
      continue;
    }
    if (!use_decode(*p)) {
      const long long sms = ctx.target().has_device() ? ctx.target().device->sm_count : 0;
      auto push = [&](int arch, long long split) {
        out.push_back(
            plan::Proposal::plan(e->id(), Knobs{{KnobType::PIPELINE_ARCH, arch}, {KnobType::CHAIN_SPLIT, split}}));
      };
      const bool fz = p->d == 128, fz_first = fused_first(*p, sms), h = f16_inverse_domain(*p),
                 hg = f16_inverse_guarded(*p);
      const long long j = chain_split_rule(*p, sms), jf = fz ? fused_split_rule(*p, sms) : 0;
      // PIPELINE_ARCH 3's plan, preceded by its fp16-inverse build (4) where f16_inverse_domain holds (or, unsplit,
      // where f16_inverse_guarded does).
      auto push_ws = [&](long long split) {
        if (h || (hg && split == 0)) push(kPrefillFusedWsH, split);
        push(kPrefillFusedWs, split);
      };
      if (p->checkpoints >= 0) {  // L8: the fused plans (d = 128), then the two-pass ones, write bound checkpoints
        if (jf > 0) push_ws(jf);
        if (fz) push_ws(0), push(kPrefillFused, 0);
        if (j > 0) push(kPrefillTwoPass, j);
        push(kPrefillTwoPass, 0);
        continue;
      }
      if (jf > 0) push_ws(jf);
      if (j > 0) push(kPrefillTwoPass, j);
      if (jf > 0) push(kPrefillFused, jf);
      if (fz_first) push_ws(0), push(kPrefillFused, 0);
      if (offers_adapt_split(*p, sms)) push_ws(kAdaptSplit);  // a skewed batch's split, after the unsplit plans
      push(kPrefillTwoPass, 0);
      if (fz && !fz_first) push_ws(0), push(kPrefillFused, 0);
    }
    out.push_back(
        plan::Proposal::plan(e->id(), Knobs{{KnobType::PIPELINE_ARCH, kPrefillOnePass}, {KnobType::CHAIN_SPLIT, 0}}));
  }
  out.push_back(plan::Proposal::backend());
  return out;
}

std::unique_ptr<Engine> make_la_engine(EngineIdentity identity) {
  return std::make_unique<LaEngine>(std::move(identity));
}

}  // namespace opgraph::linear_attention
