// tests/linear_attention_gpu/gdn_gpu_case.h — what the gdn forward's GPU tests share
// (test_gdn_gpu.cpp: numerics against the float64 reference; test_gdn_gpu_timing.cpp: the
// timing of the cells): the case, its graph and drawn inputs, the prefill modes'
// plan configs, the tolerance and the test fixture.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engines/linear_attention/la_engine.h"
#include "linear_attention_gpu/la_gpu_util.h"
#include "opgraph/op_graph.h"

namespace opgraph::la_testing::gdn_fwd {

// The forward's case: CaseBase's inputs and attributes, and what only the forward has.
struct Case : CaseBase {
  DataType o_t = DataType::BFLOAT16;
  bool final_out = true, pool = false;
  bool flashinfer_uids = false;  // the uids FlashInfer's cudnn.pygraph gdn graph gives its tensors
  bool fused_qkv = false;        // q, k, v as views of one [T, HQ + HK + HV, D] projection
  bool capture = false;          // execute once, capture an execute into a CUDA graph, replay it on new inputs
  std::int64_t n_pool = 0;
  int prefill = 0;  // the engine's prefill mode (knob PIPELINE_ARCH): 0 one pass, 1 two passes, 2 fused
  std::int64_t ckpt_every = 0;  // > 0: checkpoint_every_n_tokens, state_checkpoints bound (state_t, the exact rows)
  double tol = 0;               // > 0: this case's RMS-ratio tolerance in place of kTol (stated where set)
  std::int64_t rows() const { return pool ? n_pool : n(); }
};

struct Problem : Inputs {
  OpGraph g;
  DeltaRuleOutputs out;
  TensorPtr idx;
};

inline std::unique_ptr<Problem> build(const Case& c) {
  auto p = std::make_unique<Problem>();
  OpGraph& g = p->g;
  const std::int64_t N = c.n(), HO = c.ho(), D = c.d;
  add_token_inputs(g, c, *p);
  if (c.fused_qkv) {
    const std::int64_t row = (c.hq + c.hk + c.hv) * D;
    p->q->set_stride({row, D, 1});
    p->k->set_stride({row, D, 1});
    p->v->set_stride({row, D, 1});
  }
  if (c.init) p->init = g.tensor({c.rows(), HO, D, D}, c.state_t, "initial_state");
  if (c.a_log) p->a_log = g.tensor({HO}, DataType::FLOAT, "a_log");
  if (c.dt) p->dt = g.tensor({HO}, DataType::FLOAT, "dt_bias");
  if (c.pool) p->idx = g.tensor({N}, DataType::INT32, "state_indices");
  Attributes a = common_attributes(c);
  a.set("output_final_state", c.final_out);
  if (c.ckpt_every > 0) a.set("checkpoint_every_n_tokens", c.ckpt_every);
  a.set_name("gdn0");
  p->out = g.gdn(DeltaRuleInputs{p->q, p->k, p->v, p->gate, p->beta, p->cu, p->init, p->a_log, p->dt, p->idx}, a);
  p->out.o->set_output(true).set_data_type(c.o_t).set_name("O");
  if (p->out.final_state) p->out.final_state->set_output(true).set_name("final_state");
  if (p->out.state_checkpoints) {  // the exact count, as FlashInfer declares it (no spare rows)
    std::int64_t rows = 0;
    for (std::int64_t len : c.lens) rows += len / c.ckpt_every;
    p->out.state_checkpoints->set_output(true).set_data_type(c.state_t).set_name("ckpt");
    p->out.state_checkpoints->set_dim({rows, HO, D, D}).set_stride(Tensor::packed_strides({rows, HO, D, D}));
  }
  if (c.flashinfer_uids) {  // flashinfer/cudnn/linear_attention.py's UIDs
    p->q->set_uid(1);
    p->k->set_uid(2);
    p->v->set_uid(3);
    p->gate->set_uid(10);
    p->beta->set_uid(11);
    p->cu->set_uid(100);
    if (p->init) p->init->set_uid(200);
    p->out.o->set_uid(1000);
    if (p->out.final_state) p->out.final_state->set_uid(1001);
  }
  return p;
}

// Host inputs (bytes per uid) drawn for case c: q, k unit-norm rows (raw under
// use_qk_l2norm), v ~ N(0, 1), g and beta (Drawer::gates_betas), cu_seqlens, the
// initial state N(0, 1/4), a_log and dt_bias, and the pool rows (a random choice of
// distinct rows, into *rows_used). Fails the test when two inputs share a uid.
inline HostInputs draw(const Case& c, const Problem& p, std::mt19937& rng, std::vector<std::int64_t>* rows_used) {
  Drawer dr{rng};
  const std::int64_t T = c.t(), HO = c.ho(), D = c.d;
  HostInputs h;
  expect_distinct_uids({p.q, p.k, p.v, p.gate, p.beta, p.cu, p.init, p.a_log, p.dt, p.idx});
  h[p.q->get_uid()] = encode(dr.rows(T, c.hq, D, !c.l2), c.io);
  h[p.k->get_uid()] = encode(dr.rows(T, c.hk, D, !c.l2), c.io);
  h[p.v->get_uid()] = encode(dr.rows(T, c.hv, D, false), c.io);
  if (c.fused_qkv) {
    // One [T, HQ + HK + HV, D] projection holding q, k, v; each view's buffer is
    // the projection's bytes from the view's first element on (its strided span).
    const std::size_t w = width(c.io);
    const std::int64_t row = (c.hq + c.hk + c.hv) * D;
    std::vector<unsigned char> f(static_cast<std::size_t>(T * row) * w);
    const std::pair<std::int64_t, std::int64_t> parts[] = {
        {p.q->get_uid(), c.hq}, {p.k->get_uid(), c.hk}, {p.v->get_uid(), c.hv}};
    std::int64_t off = 0;
    for (const auto& part : parts) {
      const std::vector<unsigned char>& dense = h[part.first];
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t hh = 0; hh < part.second; ++hh)
          std::memcpy(&f[static_cast<std::size_t>(t * row + off + hh * D) * w],
                      &dense[static_cast<std::size_t>((t * part.second + hh) * D) * w], static_cast<std::size_t>(D) * w);
      off += part.second * D;
    }
    off = 0;
    for (const auto& part : parts) {
      h[part.first].assign(f.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(off) * w), f.end());
      off += part.second * D;
    }
  }
  dr.gates_betas(c, p, h);
  h[p.cu->get_uid()] = cu_seqlens_bytes(c);
  if (p.init) h[p.init->get_uid()] = dr.state(c.rows() * HO * D * D, c.state_t);
  dr.gate_params(c, p, h);
  if (p.idx) {
    std::vector<std::int64_t> perm(static_cast<std::size_t>(c.n_pool));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    perm.resize(static_cast<std::size_t>(c.n()));
    if (rows_used) *rows_used = perm;
    h[p.idx->get_uid()] = encode(std::vector<double>(perm.begin(), perm.end()), DataType::INT32);
  }
  return h;
}

// The plan config of prefill mode m: 0 one pass, 1 two passes, m >= 8 two passes
// with the scan split into spans of m chunks (knob CHAIN_SPLIT).
constexpr int kSplit8 = 8;  // the numerics checks' split: spans of 512 tokens
// m >= 1000: the fused prefill split into spans of m - 1000 chunks; m >= 3000: the
// warp-specialised fused prefill (PIPELINE_ARCH 3) split into spans of m - 3000 chunks; m >= 4000: its
// fp16-inverse build (PIPELINE_ARCH 4) split into spans of m - 4000.
constexpr int kFusedSplit8 = 1008;
constexpr int kFusedWsSplit8 = 3008;
constexpr int kFusedWsHSplit8 = 4008;
inline int arch_of(int m) { return m >= 4000 ? 4 : m >= 3000 ? 3 : m >= 1000 ? 2 : m >= kSplit8 ? 1 : m; }
inline int split_of(int m) {
  return m >= 4000 ? m - 4000 : m >= 3000 ? m - 3000 : m >= 1000 ? m - 1000 : m >= kSplit8 ? m : 0;
}
inline PlanConfig config_of(int m) {
  if (m >= kSplit8)
    return PlanConfig{
        la_engine().id(), {{KnobType::PIPELINE_ARCH, arch_of(m)}, {KnobType::CHAIN_SPLIT, split_of(m)}}, {}, -1};
  return PlanConfig{la_engine().id(), {{KnobType::PIPELINE_ARCH, m}}, {}, -1};
}
// Every prefill mode a d-dim graph runs under: one pass, two passes, the split
// two-pass, and the fused wgmma prefill (d = 128 only), eight-warp (PIPELINE_ARCH 2) and
// warp-specialised (3), split and not; the warp-specialised fp16-inverse build (4) where `f16`
// says (F16::kSplit: split and not, the declaration proves its domain; F16::kUnsplit: unsplit, its
// run-time guard; f16_modes below).
constexpr int kFused = 2;
constexpr int kFusedWs = 3;
constexpr int kFusedWsH = 4;
inline bool is_fused_mode(int m) { return m == kFused || m == kFusedWs || m == kFusedWsH; }
enum class F16 { kNone, kUnsplit, kSplit };
inline std::vector<int> modes_for(std::int64_t d, F16 f16 = F16::kNone) {
  std::vector<int> m = {0, 1, kSplit8};
  if (d == 128) m.push_back(kFused), m.push_back(kFusedSplit8), m.push_back(kFusedWs), m.push_back(kFusedWsSplit8);
  if (d == 128 && f16 != F16::kNone) m.push_back(kFusedWsH);
  if (d == 128 && f16 == F16::kSplit) m.push_back(kFusedWsHSplit8);
  return m;
}
// Which PIPELINE_ARCH 4 plans case c's declaration admits (la_engine.h, rule f16_inverse_domain): with
// use_qk_l2norm and use_beta_sigmoid split and not; with use_qk_l2norm alone the unsplit guarded one (no
// bound checkpoints).
inline F16 f16_modes(const Case& c) {
  if (c.d != 128 || !c.l2) return F16::kNone;
  if (c.beta_sig) return F16::kSplit;
  return c.ckpt_every > 0 ? F16::kNone : F16::kUnsplit;
}
// Whether case c's graph is decode-sized (gdn_problem.cpp use_decode): every plan runs the decode kernel.
inline bool decode_sized(const Case& c) { return !c.batch_inv && c.ckpt_every <= 0 && c.t() <= 8 * c.n(); }
// Whether case c's plan under mode m is PIPELINE_ARCH 4's guarded form (two kernels, a workspace of verdicts); a
// decode-sized graph runs the decode kernel under every mode, no verdicts.
inline bool guarded(const Case& c, int m) { return m == kFusedWsH && !c.beta_sig && !decode_sized(c); }
inline const char* mode_name(int m) {
  switch (m) {
    case 0: return "1-pass";
    case 1: return "2-pass";
    case 2: return "fused";
    case kFusedSplit8: return "fused-split8";
    case kFusedWs: return "fused-ws";
    case kFusedWsSplit8: return "fused-ws-split8";
    case kFusedWsH: return "fused-ws-f16inv";  // guarded (guarded()) without use_beta_sigmoid
    case kFusedWsHSplit8: return "fused-ws-f16inv-split8";
    case 8: return "split8";
    case 16: return "split16";
    case 32: return "split32";
    case 64: return "split64";
    case 128: return "split128";
    default: return "split";
  }
}

constexpr double kTol = 5e-3;  // fla's: o and final state, 16-bit inputs

class GdnGpu : public LaGpuTest {};

}  // namespace opgraph::la_testing::gdn_fwd
