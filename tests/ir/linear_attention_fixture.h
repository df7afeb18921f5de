// tests/ir/linear_attention_fixture.h — builds a graph holding one linear_attention
// op (any of the 16) from a small shape config, so the IR tests can sweep every op
// and perturb one tensor or attribute at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "opgraph/op_graph.h"

namespace la_test {

using namespace opgraph;

enum class Fam { GDN, KDA, GDN2, GDP };
enum class Kind { FWD, BWD, SUM, SUM_BWD };
struct OpId {
  std::string name;
  Fam fam;
  Kind kind;
};

inline const std::vector<OpId>& all_ops() {
  static const std::vector<OpId> ops = [] {
    std::vector<OpId> v;
    for (auto [base, fam] : {std::pair{"gdn", Fam::GDN}, {"kda", Fam::KDA}, {"gdn2", Fam::GDN2}, {"gdp", Fam::GDP}}) {
      v.push_back({base, fam, Kind::FWD});
      v.push_back({std::string(base) + "_bwd", fam, Kind::BWD});
      v.push_back({std::string(base) + "_summary", fam, Kind::SUM});
      v.push_back({std::string(base) + "_summary_bwd", fam, Kind::SUM_BWD});
    }
    return v;
  }();
  return ops;
}

struct Cfg {
  std::vector<std::int64_t> cu = {0, 4, 4, 10};  // N = 3, one empty sequence, T = 10
  std::int64_t hq = 2, hk = 2, hv = 4, k = 8, v = 6, n = 1;
  bool init = false, a_log = false, dt_bias = false, pool = false, d_final = false;
  std::int64_t n_pool = 5;
  std::int64_t ckpt_rows = -1;  // >= 0: the backward binds state_checkpoints [ckpt_rows, HO, V, K] (fp32)
  std::int64_t t() const { return cu.back(); }
  std::int64_t n_seq() const { return static_cast<std::int64_t>(cu.size()) - 1; }
  std::int64_t ho() const { return std::max(hq, hv); }
};

inline bool vector_gate(Fam f) { return f == Fam::KDA || f == Fam::GDN2; }

struct Built {
  OpGraph g;
  TensorPtr q, k, v, gate, beta, b, w, cu, init, a_log, dt_bias, idx, d_o, d_final, ckpt;
  const Node& node() const { return *g.nodes().back(); }
};

// Declares the inputs of `op` for `c` (tensors named after their ports) and adds the node.
// `tweak` may edit the input tensors before the node is added.
template <class Tweak>
Built build(const OpId& op, const Cfg& c, Attributes attrs, Tweak&& tweak) {
  Built b;
  OpGraph& g = b.g;
  const std::int64_t T = c.t(), N = c.n_seq(), HO = c.ho(), n = c.n;
  const bool sum = op.kind == Kind::SUM, sum_bwd = op.kind == Kind::SUM_BWD, gdn2 = op.fam == Fam::GDN2;
  if (!sum) b.q = g.tensor({T, c.hq, c.k}, DataType::BFLOAT16, "q");
  b.k = g.tensor({T * n, c.hk, c.k}, DataType::BFLOAT16, "k");
  if (!sum_bwd) b.v = g.tensor({T * n, c.hv, c.v}, DataType::BFLOAT16, "v");
  b.gate = vector_gate(op.fam) ? g.tensor({T, HO, c.k}, DataType::FLOAT, "g") : g.tensor({T, HO}, DataType::FLOAT, "g");
  if (!gdn2) b.beta = g.tensor({T * n, HO}, DataType::BFLOAT16, "beta");
  if (gdn2) b.b = g.tensor({T, HO, c.k}, DataType::BFLOAT16, "b");
  if (gdn2 && !sum_bwd) b.w = g.tensor({T, HO, c.v}, DataType::BFLOAT16, "w");
  b.cu = g.tensor({N + 1}, DataType::INT32, "cu_seqlens");
  if (c.init) b.init = g.tensor({c.pool ? c.n_pool : N, HO, c.v, c.k}, DataType::FLOAT, "initial_state");
  if (c.a_log) b.a_log = g.tensor({HO}, DataType::FLOAT, "a_log");
  if (c.dt_bias)
    b.dt_bias = vector_gate(op.fam) ? g.tensor({HO, c.k}, DataType::FLOAT, "dt_bias")
                                    : g.tensor({HO}, DataType::FLOAT, "dt_bias");
  if (c.pool) b.idx = g.tensor({N}, DataType::INT32, "state_indices");
  if (op.kind == Kind::BWD || sum_bwd) b.d_o = g.tensor({T, HO, c.v}, DataType::BFLOAT16, "dO");
  if (c.d_final) b.d_final = g.tensor({N, HO, c.v, c.k}, DataType::FLOAT, "d_final_state");
  if (op.kind == Kind::BWD && c.ckpt_rows >= 0)
    b.ckpt = g.tensor({c.ckpt_rows, HO, c.v, c.k}, DataType::FLOAT, "state_checkpoints");
  tweak(b);
  if (op.fam == Fam::GDP && !attrs.find("num_householder")) attrs.set("num_householder", c.n);
  attrs.set_name("la0");
  if (op.fam == Fam::GDN2) {
    Gdn2Inputs in{b.q, b.k, b.v, b.gate, b.b, b.w, b.cu, b.init, b.a_log, b.dt_bias, b.idx};
    switch (op.kind) {
      case Kind::FWD: g.gdn2(in, attrs); break;
      case Kind::BWD: g.gdn2_bwd(in, b.d_o, b.d_final, attrs, b.ckpt); break;
      case Kind::SUM: g.gdn2_summary(in, attrs); break;
      case Kind::SUM_BWD: g.gdn2_summary_bwd(in, b.d_o, attrs); break;
    }
    return b;
  }
  DeltaRuleInputs in{b.q, b.k, b.v, b.gate, b.beta, b.cu, b.init, b.a_log, b.dt_bias, b.idx};
  switch (op.kind) {
    case Kind::FWD:
      if (op.fam == Fam::GDN) g.gdn(in, attrs);
      else if (op.fam == Fam::KDA) g.kda(in, attrs);
      else g.gdp(in, attrs);
      break;
    case Kind::BWD:
      if (op.fam == Fam::GDN) g.gdn_bwd(in, b.d_o, b.d_final, attrs, b.ckpt);
      else if (op.fam == Fam::KDA) g.kda_bwd(in, b.d_o, b.d_final, attrs, b.ckpt);
      else g.gdp_bwd(in, b.d_o, b.d_final, attrs, b.ckpt);
      break;
    case Kind::SUM:
      if (op.fam == Fam::GDN) g.gdn_summary(in, attrs);
      else if (op.fam == Fam::KDA) g.kda_summary(in, attrs);
      else g.gdp_summary(in, attrs);
      break;
    case Kind::SUM_BWD:
      if (op.fam == Fam::GDN) g.gdn_summary_bwd(in, b.d_o, attrs);
      else if (op.fam == Fam::KDA) g.kda_summary_bwd(in, b.d_o, attrs);
      else g.gdp_summary_bwd(in, b.d_o, attrs);
      break;
  }
  return b;
}

inline Built build(const OpId& op, const Cfg& c, Attributes attrs = {}) {
  return build(op, c, std::move(attrs), [](Built&) {});
}

inline const OpId& op_named(const std::string& name) {
  for (const auto& o : all_ops())
    if (o.name == name) return o;
  throw std::logic_error("no op " + name);
}

// The engine tests' config at head dim `d` (K = V), GVA 2 / 8.
inline Cfg engine_cfg(std::int64_t d) {
  Cfg c;
  c.k = c.v = d;
  c.hq = c.hk = 2;
  c.hv = 8;
  return c;
}

// The last node's outputs made graph outputs (the builder leaves them virtual).
inline void mark_outputs(Built& b) {
  for (const auto& port : b.g.nodes().back()->outputs())
    for (const auto& t : port)
      if (t) t->set_output(true);
}

}  // namespace la_test
