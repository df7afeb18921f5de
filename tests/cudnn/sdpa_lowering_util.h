// tests/cudnn/sdpa_lowering_util.h — shared by the SDPA lowering tests: random
// shapes, forward and backward graph fixtures, and readers of a plan's operations.
#pragma once

#include <random>

#include "cudnn/cudnn_test_util.h"
#include "opgraph/builders/sdpa.h"

namespace sdpa_lowering_test {

using namespace opgraph;
using namespace cudnn_test;
namespace cu = opgraph::engines::cudnn;
using D = std::vector<std::int64_t>;

struct Shape {
  std::int64_t b, h_q, h_k, s_q, s_kv, d;
};

inline Shape random_shape(unsigned seed, bool gqa = false) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> small(1, 3), seq(2, 9);
  Shape s{small(rng), 4, gqa ? 2 : 4, seq(rng) * 8, seq(rng) * 8, 8 * small(rng)};
  return s;
}

inline cu::LoweringOptions version(std::int64_t v) {
  cu::LoweringOptions o;
  o.cudnn_version = v;
  o.include_failed_variants = true;  // the record tests check the structure of every variant
  return o;
}

// Operation records of the plan, in order.
inline std::vector<const DescriptorRecord*> op_records(const LoweringPlan& p) {
  std::vector<const DescriptorRecord*> out;
  for (int i : p.operations) out.push_back(&p.records[static_cast<std::size_t>(i)]);
  return out;
}

// The pointwise mode of a POINTWISE operation record.
inline std::int64_t mode_of(const LoweringPlan& p, const DescriptorRecord& op) {
  const auto* a = op.find(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR);
  if (!a) return -1;
  return int_of(p.records[static_cast<std::size_t>(a->refs.at(0))], CUDNN_ATTR_POINTWISE_MODE);
}

inline std::vector<std::int64_t> modes(const LoweringPlan& p) {
  std::vector<std::int64_t> m;
  for (const auto* op : op_records(p))
    if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) m.push_back(mode_of(p, *op));
  return m;
}

inline std::size_t count_type(const LoweringPlan& p, cudnnBackendDescriptorType_t t) {
  std::size_t c = 0;
  for (const auto* op : op_records(p)) c += op->type == t;
  return c;
}

inline const DescriptorRecord& ref(const LoweringPlan& p, const DescriptorRecord& r, cudnnBackendAttributeName_t n) {
  return p.records[static_cast<std::size_t>(r.find(n)->refs.at(0))];
}

struct Fwd {
  Shape s;
  Graph g;
  TensorPtr q, k, v;
  Attributes a;
  SdpaInputs in;
  SdpaOutputs out;
  explicit Fwd(Shape sh, DataType dt = DataType::BFLOAT16) : s(sh) {
    q = g.tensor({s.b, s.h_q, s.s_q, s.d}, dt, "Q");
    k = g.tensor({s.b, s.h_k, s.s_kv, s.d}, dt, "K", {s.h_k * s.s_kv * s.d, s.d, s.h_k * s.d, 1});  // BSHD
    v = g.tensor({s.b, s.h_k, s.s_kv, s.d}, dt, "V");
    a.set("generate_stats", true).set("attn_scale", 0.125);
  }
  void padding() {
    a.set("use_padding_mask", true);
    in.seq_len_q = g.tensor({s.b, 1, 1, 1}, DataType::INT32, "seq_q");
    in.seq_len_kv = g.tensor({s.b, 1, 1, 1}, DataType::INT32, "seq_kv");
  }
  Result<LoweringPlan> lower(std::int64_t ver) {
    out = g.sdpa(q, k, v, a, in);
    out.O->set_output(true).set_data_type(q->get_data_type());
    for (auto x : {out.Stats, out.Max, out.Sum_exp})
      if (x) x->set_output(true);
    Status st = g.validate();
    if (st.is_bad()) return st;
    return cu::lower(g, version(ver));
  }
};

// A backward graph fixture (bf16 Q/K/V/O/dO, FLOAT Stats, attn_scale 0.25).
struct Bwd {
  Shape s;
  Graph g;
  TensorPtr q, k, v, o, dO, stats;
  Attributes a;
  SdpaBackwardInputs in;
  SdpaBackwardOutputs out;
  explicit Bwd(Shape sh) : s(sh) {
    const DataType bf = DataType::BFLOAT16;
    q = g.tensor({s.b, s.h_q, s.s_q, s.d}, bf, "Q");
    k = g.tensor({s.b, s.h_k, s.s_kv, s.d}, bf, "K");
    v = g.tensor({s.b, s.h_k, s.s_kv, s.d}, bf, "V");
    o = g.tensor({s.b, s.h_q, s.s_q, s.d}, bf, "O");
    dO = g.tensor({s.b, s.h_q, s.s_q, s.d}, bf, "dO");
    stats = g.tensor({s.b, s.h_q, s.s_q, 1}, DataType::FLOAT, "Stats");
    a.set("attn_scale", 0.25);
  }
  Result<LoweringPlan> lower(std::int64_t ver = 91400) {
    out = g.sdpa_backward(q, k, v, o, dO, stats, a, in);
    for (auto t : {out.dQ, out.dK, out.dV, out.dBias})
      if (t) t->set_output(true).set_data_type(DataType::BFLOAT16);
    if (out.DSINK_TOKEN) out.DSINK_TOKEN->set_output(true);
    Status st = g.validate();
    if (st.is_bad()) return st;
    return cu::lower(g, version(ver));
  }
};

}  // namespace sdpa_lowering_test
