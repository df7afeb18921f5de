// tests/linear_attention_gpu/gdn_bwd_gpu_case.h — what the gdn backward's GPU tests share (test_la_bwd_gpu.cpp:
// numerics against the float64 reference; test_la_bwd_gpu_timing.cpp: the timing of the cells): the case,
// its graph and drawn inputs, the outputs checked with their tolerances, and the test fixture.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "engines/linear_attention/la_engine.h"
#include "linear_attention_gpu/la_gpu_util.h"
#include "opgraph/op_graph.h"

namespace opgraph::la_testing::gdn_bwd {

// The backward's case: CaseBase's inputs and attributes, and d_final_state.
struct Case : CaseBase {
  bool d_final = true;
  std::int64_t split = 0;  // the plan's CHAIN_SPLIT (chunks a span; 0: the whole-sequence scans)
  std::int64_t arch = 0;   // the plan's PIPELINE_ARCH (B9: 2 the fused forward recompute, 3 with the fused reverse)
  // > 0: checkpoint_every_n_tokens, and state_checkpoints [floor(T / c), HO, D, D] bound (random states: the
  // reference takes the same ones, so any row read wrong shows)
  std::int64_t ckpt_every = 0;
  DataType ckpt_t = DataType::FLOAT;
};

struct Problem : Inputs {
  OpGraph g;
  DeltaRuleGrads out;
  TensorPtr d_o, d_final, ckpt;
};

inline std::unique_ptr<Problem> build(const Case& c) {
  auto p = std::make_unique<Problem>();
  OpGraph& g = p->g;
  const std::int64_t T = c.t(), N = c.n(), HO = c.ho(), D = c.d;
  add_token_inputs(g, c, *p);
  if (c.init) p->init = g.tensor({N, HO, D, D}, c.state_t, "initial_state");
  p->d_o = g.tensor({T, HO, D}, c.io, "dO");
  if (c.d_final) p->d_final = g.tensor({N, HO, D, D}, c.state_t, "d_final_state");
  if (c.a_log) p->a_log = g.tensor({HO}, DataType::FLOAT, "a_log");
  if (c.dt) p->dt = g.tensor({HO}, DataType::FLOAT, "dt_bias");
  Attributes a = common_attributes(c);
  a.set_name("gdn_bwd0");
  if (c.ckpt_every > 0) {
    p->ckpt = g.tensor({T / c.ckpt_every, HO, D, D}, c.ckpt_t, "state_checkpoints");
    a.set("checkpoint_every_n_tokens", c.ckpt_every);
  }
  p->out = g.gdn_bwd(DeltaRuleInputs{p->q, p->k, p->v, p->gate, p->beta, p->cu, p->init, p->a_log, p->dt, nullptr},
                     p->d_o, p->d_final, a, p->ckpt);
  for (const TensorPtr& t : {p->out.dq, p->out.dk, p->out.dv, p->out.dg, p->out.dbeta, p->out.d_initial_state,
                             p->out.d_a_log, p->out.d_dt_bias})
    if (t) t->set_output(true);
  return p;
}

// Host inputs (bytes per uid) drawn for case c: q, k unit-norm rows (raw under
// use_qk_l2norm), v and dO ~ N(0, 1), g and beta (Drawer::gates_betas), cu_seqlens,
// initial_state and d_final_state N(0, 1/4), a_log and dt_bias. Fails the test when
// two inputs share a uid.
inline HostInputs draw(const Case& c, const Problem& p, std::mt19937& rng) {
  Drawer dr{rng};
  const std::int64_t T = c.t(), HO = c.ho(), D = c.d, N = c.n();
  HostInputs h;
  expect_distinct_uids({p.q, p.k, p.v, p.gate, p.beta, p.cu, p.init, p.d_o, p.d_final, p.a_log, p.dt, p.ckpt});
  h[p.q->get_uid()] = encode(dr.rows(T, c.hq, D, !c.l2), c.io);
  h[p.k->get_uid()] = encode(dr.rows(T, c.hk, D, !c.l2), c.io);
  h[p.v->get_uid()] = encode(dr.rows(T, c.hv, D, false), c.io);
  h[p.d_o->get_uid()] = encode(dr.rows(T, HO, D, false), c.io);
  dr.gates_betas(c, p, h);
  h[p.cu->get_uid()] = cu_seqlens_bytes(c);
  if (p.init) h[p.init->get_uid()] = dr.state(N * HO * D * D, c.state_t);
  if (p.d_final) h[p.d_final->get_uid()] = dr.state(N * HO * D * D, c.state_t);
  if (p.ckpt) h[p.ckpt->get_uid()] = dr.state(p.ckpt->get_dim()[0] * HO * D * D, c.ckpt_t);
  dr.gate_params(c, p, h);
  return h;
}

// The outputs checked, with their tolerance (fla's for 16-bit inputs).
struct Checked {
  const char* name;
  TensorPtr t;
  double tol;
};
inline std::vector<Checked> checked(const Problem& p) {
  std::vector<Checked> out = {{"dQ", p.out.dq, 8e-3}, {"dK", p.out.dk, 8e-3},   {"dV", p.out.dv, 8e-3},
                              {"dG", p.out.dg, 2e-2}, {"dBeta", p.out.dbeta, 2e-2}};
  if (p.out.d_initial_state) out.push_back({"d_initial_state", p.out.d_initial_state, 8e-3});
  // The gate parameters' gradients (sums over every token of a head): 1e-2.
  if (p.out.d_a_log) out.push_back({"d_a_log", p.out.d_a_log, 1e-2});
  if (p.out.d_dt_bias) out.push_back({"d_dt_bias", p.out.d_dt_bias, 1e-2});
  return out;
}

class GdnBwdGpu : public LaGpuTest {};

}  // namespace opgraph::la_testing::gdn_bwd
