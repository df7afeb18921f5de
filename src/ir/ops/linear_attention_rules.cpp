// ir/ops/linear_attention_rules.cpp — the rules shared by the 16 linear_attention ops.
//
// Shapes (THD, token-packed; T = total tokens, N = sequences, n = num_householder
// for gdp and 1 otherwise; HO = max(HQ, HV) output heads):
//   q [T, HQ, K]   k [T*n, HK, K]   v [T*n, HV, V]
//   g [T, HO] (gdn, gdp) or [T, HO, K] (kda, gdn2)
//   beta [T*n, HO] (gdn, kda, gdp); gdn2: b [T, HO, K], w [T, HO, V]
//   cu_seqlens INT32/INT64 [N+1]; initial_state [N, HO, V, K] (V-major: holds S^T);
//   with state_indices (INT32 [N]) initial_state is a pool [N_pool, HO, V, K].
//   a_log [HO]; dt_bias [HO] (gdn, gdp) or [HO, K] (kda, gdn2) — only under safe_gate.
//   state_checkpoints (forward, iff checkpoint_every_n_tokens = c > 0) [R, HO, V, K], the final state's type:
//   sequence i's j-th checkpoint (the state after its first j c (sub-)tokens, j = 1 .. floor(L_i / c)) is row
//   sum_{s < i} floor(L_s / c) + j - 1 (packed as FlashInfer's checkpoint_cu_starts); R is inferred as
//   floor(T n / c), the most the rows can need, or set by the caller (any R >= 0: the exact count, say).
// Head grouping is contiguous: output head h reads q head h / (HO/HQ), k head
// h / (HO/HK) and v head h / (HO/HV); each of HQ, HK, HV must divide HO.
// Every error names the rule it enforces (e.g. "head grouping:", "state layout:").
#include <algorithm>
#include <cmath>
#include <string>

#include "ir/ops/linear_attention_common.h"

namespace opgraph::ops::la {
namespace {

namespace p = port;
using std::int64_t;

std::string ds(const Dims& d) { return InferContext::dims_str(d); }
std::string num(int64_t x) { return std::to_string(x); }

struct Shape {
  int64_t t = 0, n_seq = 0, n_house = 1, hq = 0, hk = 0, hv = 0, ho = 0, k = 0, v = 0;
};

Status check_attributes(const InferContext& c, Variant v, Role r) {
  const Node& n = c.node();
  if (ops::attr::allow_neg_eigval(n) && !ops::attr::use_beta_sigmoid(n))
    return c.fail_attr("allow_neg_eigval",
                       "beta sigmoid: allow_neg_eigval requires use_beta_sigmoid (beta = 2 * sigmoid(x) needs logits)");
  if (ops::attr::safe_gate(n) && ops::attr::gate_domain(n) == ops::GateDomain::linear)
    return c.fail_attr("gate_domain",
                       "gate domain: 'linear' cannot be combined with safe_gate (the gate is then computed in-kernel "
                       "from raw logits)");
  if (has_vector_gate(v)) {
    double lb = ops::attr::lower_bound(n);  // declared by the vector-gate (KDA, GDN2) records
    if (!(lb >= -5.0 && lb < 0.0))
      return c.fail_attr("lower_bound", "safe gate bound: lower_bound must lie in [-5, 0), got " + std::to_string(lb));
  }
  if (v == Variant::GDP && ops::attr::num_householder(n) < 1)
    return c.fail_attr("num_householder",
                       "householder rows: num_householder must be >= 1, got " + num(ops::attr::num_householder(n)));
  if (n.attr_is_set("scale") && !std::isfinite(ops::attr::scale(n).value_or(0.0)))
    return c.fail_attr("scale", "scale: must be finite");
  if (r == Role::FORWARD || r == Role::BACKWARD) {
    int64_t every = ops::attr::checkpoint_every_n_tokens(n);  // declared by the forward and backward records
    if (every < 0 || every % 64 != 0)
      return c.fail_attr("checkpoint_every_n_tokens",
                         "checkpoint cadence: must be 0 (none) or a positive multiple of 64 tokens, got " + num(every));
  }
  return Status::ok();
}

// A bound floating THD tensor [rows, heads, dim] with positive heads and dim.
Status require_thd(const InferContext& c, std::string_view port, const std::string& spelled) {
  OPGRAPH_CHECK(c.require(port));
  OPGRAPH_CHECK(c.require_floating(port));
  const Dims& d = c.dims(port);
  if (d.size() != 3) return c.fail(port, "THD layout: must be " + spelled + " (rank 3), got " + ds(d));
  if (d[1] == 0 || d[2] == 0) return c.fail(port, "THD layout: heads and head dim of " + spelled + " must be positive");
  return Status::ok();
}

Status expect_dims(const InferContext& c, std::string_view port, const Dims& want, const std::string& spelled,
                   const std::string& rule) {
  if (c.dims(port) == want) return Status::ok();
  return c.fail(port, rule + ": dims must be " + spelled + " = " + ds(want) + ", got " + ds(c.dims(port)));
}

Status check_group(const InferContext& c, std::string_view port, std::string_view h_name, int64_t h, int64_t ho,
                   const std::string& ho_spelled) {
  if (ho % h == 0) return Status::ok();
  return c.fail(port, "head grouping: " + ho_spelled + " = " + num(ho) + " must be a multiple of " +
                          std::string(h_name) + " = " + num(h) + " (output head h reads head h / (HO / " +
                          std::string(h_name) + "), contiguous groups)");
}

// q, k, v, dO and the head counts; fills `s`.
Status infer_thd(const InferContext& c, Variant v, Role r, Shape& s) {
  const std::string rows_spelled = v == Variant::GDP ? "T * num_householder" : "T";
  s.n_house = v == Variant::GDP ? ops::attr::num_householder(c.node()) : 1;
  if (r != Role::SUMMARY) {
    OPGRAPH_CHECK(require_thd(c, p::kQ, "[T, HQ, K]"));
    s.t = c.dims(p::kQ)[0];
    s.hq = c.dims(p::kQ)[1];
    s.k = c.dims(p::kQ)[2];
  }
  OPGRAPH_CHECK(require_thd(c, p::kK, "[" + rows_spelled + ", HK, K]"));
  const Dims& kd = c.dims(p::kK);
  s.hk = kd[1];
  if (r == Role::SUMMARY) {
    s.k = kd[2];
    OPGRAPH_CHECK(c.require(p::kG));
    if (c.dims(p::kG).empty()) return c.fail(p::kG, "gate shape: g must have a token axis");
    s.t = c.dims(p::kG)[0];
  }
  if (kd[2] != s.k)
    return c.fail(p::kK, "THD layout: head dim K of k (" + num(kd[2]) + ") must equal q's (" + num(s.k) + ")");
  if (kd[0] != s.t * s.n_house)
    return c.fail(p::kK, std::string(v == Variant::GDP ? "householder rows" : "THD layout") + ": k must have " +
                             rows_spelled + " = " + num(s.t * s.n_house) + " rows, got " + ds(kd));
  if (r != Role::SUMMARY_BWD) {
    OPGRAPH_CHECK(require_thd(c, p::kV, "[" + rows_spelled + ", HV, V]"));
    const Dims& vd = c.dims(p::kV);
    s.hv = vd[1];
    s.v = vd[2];
    if (vd[0] != s.t * s.n_house)
      return c.fail(p::kV, std::string(v == Variant::GDP ? "householder rows" : "THD layout") + ": v must have " +
                               rows_spelled + " = " + num(s.t * s.n_house) + " rows, got " + ds(vd));
  }
  std::string ho_spelled = "HO = max(HQ, HV)";
  if (r == Role::FORWARD || r == Role::BACKWARD) {
    s.ho = std::max(s.hq, s.hv);
  } else if (r == Role::SUMMARY) {
    if (c.dims(p::kG).size() < 2) return c.fail(p::kG, "gate shape: g must be [T, HO, ...], got " + ds(c.dims(p::kG)));
    s.ho = c.dims(p::kG)[1];
    ho_spelled = "HO (g's head extent)";
  } else {
    OPGRAPH_CHECK(require_thd(c, p::kDO, "[T, HO, V]"));
    const Dims& dd = c.dims(p::kDO);
    if (dd[0] != s.t) return c.fail(p::kDO, "gradient shape: dO must have T = " + num(s.t) + " rows, got " + ds(dd));
    s.ho = dd[1];
    s.v = dd[2];
    ho_spelled = "HO (dO's head extent)";
  }
  if (s.hq) OPGRAPH_CHECK(check_group(c, p::kQ, "HQ", s.hq, s.ho, ho_spelled));
  OPGRAPH_CHECK(check_group(c, p::kK, "HK", s.hk, s.ho, ho_spelled));
  if (s.hv) OPGRAPH_CHECK(check_group(c, p::kV, "HV", s.hv, s.ho, ho_spelled));
  return Status::ok();
}

// g, beta | b, w, a_log, dt_bias.
Status infer_gates(const InferContext& c, Variant v, Role r, const Shape& s) {
  const bool vec = has_vector_gate(v);
  OPGRAPH_CHECK(c.require_floating(p::kG));
  OPGRAPH_CHECK(expect_dims(c, p::kG, vec ? Dims{s.t, s.ho, s.k} : Dims{s.t, s.ho}, vec ? "[T, HO, K]" : "[T, HO]",
                            "gate shape"));
  if (v == Variant::GDN2) {
    OPGRAPH_CHECK(c.require_floating(p::kB));
    OPGRAPH_CHECK(expect_dims(c, p::kB, {s.t, s.ho, s.k}, "[T, HO, K]", "erase gate shape"));
    if (r != Role::SUMMARY_BWD) {
      OPGRAPH_CHECK(c.require_floating(p::kW));
      OPGRAPH_CHECK(expect_dims(c, p::kW, {s.t, s.ho, s.v}, "[T, HO, V]", "write gate shape"));
    }
  } else {
    OPGRAPH_CHECK(c.require_floating(p::kBeta));
    OPGRAPH_CHECK(expect_dims(c, p::kBeta, {s.t * s.n_house, s.ho},
                              v == Variant::GDP ? "[T * num_householder, HO]" : "[T, HO]", "beta shape"));
  }
  const bool safe = ops::attr::safe_gate(c.node());
  for (std::string_view port : {p::kALog, p::kDtBias}) {
    if (!c.has(port)) continue;
    if (!safe)
      return c.fail(port, "gate parameters: " + std::string(port) +
                              " is read only under safe_gate (set safe_gate or leave it unbound)");
    OPGRAPH_CHECK(c.require_floating(port));
    const bool per_channel = port == p::kDtBias && vec;
    OPGRAPH_CHECK(expect_dims(c, port, per_channel ? Dims{s.ho, s.k} : Dims{s.ho}, per_channel ? "[HO, K]" : "[HO]",
                              "gate parameters"));
  }
  return Status::ok();
}

// cu_seqlens, initial_state, state_indices, d_final_state, overwrite_initial_state.
Status infer_state(const InferContext& c, Role r, Shape& s, int64_t* state_rows) {
  OPGRAPH_CHECK(c.require_integer_index(p::kCuSeqlens));
  const Dims& cu = c.dims(p::kCuSeqlens);
  if (cu.size() != 1 || cu[0] < 2)
    return c.fail(p::kCuSeqlens, "cu_seqlens: must be [N + 1] with N >= 1 sequences, got " + ds(cu));
  s.n_seq = cu[0] - 1;
  *state_rows = s.n_seq;
  const Node& n = c.node();
  const bool has_pool = c.has(p::kStateIndices);
  if (has_pool) {
    if (r == Role::BACKWARD)
      return c.fail(p::kStateIndices, "state pool: state_indices is forward only (bind the per-sequence states)");
    OPGRAPH_CHECK(c.require_dtype_in(p::kStateIndices, {DataType::INT32}));
    OPGRAPH_CHECK(expect_dims(c, p::kStateIndices, {s.n_seq}, "[N]", "state pool"));
    if (!c.has(p::kInitialState))
      return c.fail(p::kStateIndices, "state pool: state_indices addresses rows of initial_state, which is not bound");
    if (ops::attr::checkpoint_every_n_tokens(n) > 0)  // state_indices: forward records only
      return c.fail(p::kStateIndices, "state pool: state_indices cannot be combined with checkpoint_every_n_tokens");
  }
  if (c.has(p::kInitialState)) {
    OPGRAPH_CHECK(c.require_floating(p::kInitialState));
    const Dims& d = c.dims(p::kInitialState);
    if (has_pool) {
      if (d.size() != 4 || d[0] < 1)
        return c.fail(p::kInitialState, "state pool: must be [N_pool, HO, V, K] with N_pool >= 1, got " + ds(d));
      *state_rows = d[0];
    }
    OPGRAPH_CHECK(expect_dims(c, p::kInitialState, {*state_rows, s.ho, s.v, s.k},
                              has_pool ? "[N_pool, HO, V, K]" : "[N, HO, V, K] (V-major, holds S^T)", "state layout"));
  }
  if (r == Role::BACKWARD) {
    OPGRAPH_CHECK(require_thd(c, p::kDO, "[T, HO, V]"));
    OPGRAPH_CHECK(expect_dims(c, p::kDO, {s.t, s.ho, s.v}, "[T, HO, V]", "gradient shape"));
    if (c.has(p::kDFinalState)) {
      OPGRAPH_CHECK(c.require_floating(p::kDFinalState));
      OPGRAPH_CHECK(expect_dims(c, p::kDFinalState, {s.n_seq, s.ho, s.v, s.k}, "[N, HO, V, K]", "gradient shape"));
    }
    if (c.has(p::kStateCheckpoints)) {  // the forward's checkpoints, at the declared cadence
      if (ops::attr::checkpoint_every_n_tokens(n) <= 0)
        return c.fail(p::kStateCheckpoints, "checkpoints: state_checkpoints is bound but checkpoint_every_n_tokens "
                                            "is 0; set the forward's cadence");
      OPGRAPH_CHECK(c.require_floating(p::kStateCheckpoints));
      const Dims& d = c.dims(p::kStateCheckpoints);
      if (d.size() != 4 || d[0] < 0 || d[1] != s.ho || d[2] != s.v || d[3] != s.k)
        return c.fail(p::kStateCheckpoints, "checkpoints: dims must be [R, HO, V, K] = [R, " + num(s.ho) + ", " +
                                                num(s.v) + ", " + num(s.k) + "] (the forward's), got " + ds(d));
    }
  }
  // The forward and backward records declare overwrite_initial_state; the summaries do not.
  if ((r == Role::FORWARD || r == Role::BACKWARD) && ops::attr::overwrite_initial_state(n)) {
    if (!c.has(p::kInitialState))
      return c.fail_attr("overwrite_initial_state", "in-place state: requires the initial_state input");
    if (r == Role::FORWARD && !ops::attr::output_final_state(n))
      return c.fail_attr("overwrite_initial_state",
                         "in-place state: requires the final_state output (set output_final_state)");
    if (r == Role::BACKWARD && !c.has(p::kDFinalState))
      return c.fail_attr("overwrite_initial_state", "in-place state: requires the d_final_state input");
  }
  return Status::ok();
}

// state_checkpoints: [R, HO, V, K], R = floor(T n / c) unless the caller set the dims (then R is theirs).
Status set_checkpoints(InferContext& c, const Shape& s, DataType st) {
  TensorPtr t = c.out(p::kStateCheckpoints);
  if (!t) return Status::ok();  // checkpoint_every_n_tokens = 0
  const int64_t every = ops::attr::checkpoint_every_n_tokens(c.node());
  Dims want{s.t * s.n_house / every, s.ho, s.v, s.k};
  if (t->dim_set_by_user()) {
    const Dims& d = t->get_dim();
    if (d.size() != 4 || d[0] < 0 || d[1] != s.ho || d[2] != s.v || d[3] != s.k)
      return c.fail(p::kStateCheckpoints, "checkpoints: dims must be [R, HO, V, K] = [R, " + num(s.ho) + ", " +
                                              num(s.v) + ", " + num(s.k) + "] (R rows, the packed checkpoints), got " +
                                              ds(d));
    want[0] = d[0];
  }
  OPGRAPH_CHECK(c.set_output(p::kStateCheckpoints, want, st));
  if (t->get_data_type() != DataType::NOT_SET && !is_floating(t->get_data_type()))
    return c.fail(p::kStateCheckpoints, "checkpoints: data type must be floating, got " +
                                            std::string(to_string(t->get_data_type())));
  return Status::ok();
}

Status set_like(InferContext& c, std::string_view out, std::string_view like) {
  return c.set_output(out, c.dims(like), c.dtype(like));
}

// In-place state: the aliased output takes the input's data type.
Status check_alias_dtype(const InferContext& c, std::string_view out, std::string_view in) {
  TensorPtr o = c.out(out);
  if (!o || !ops::attr::overwrite_initial_state(c.node())) return Status::ok();  // forward / backward only
  if (o->get_data_type() != DataType::NOT_SET && o->get_data_type() != c.dtype(in))
    return c.fail(out, "in-place state: data type " + std::string(to_string(o->get_data_type())) + " must equal " +
                           std::string(in) + "'s " + std::string(to_string(c.dtype(in))) + " (one buffer serves both)");
  return Status::ok();
}

}  // namespace

Status infer(InferContext& c, Variant v, Role r) {
  OPGRAPH_CHECK(check_attributes(c, v, r));
  Shape s;
  OPGRAPH_CHECK(infer_thd(c, v, r, s));
  OPGRAPH_CHECK(infer_gates(c, v, r, s));
  int64_t state_rows = 0;
  OPGRAPH_CHECK(infer_state(c, r, s, &state_rows));
  switch (r) {
    case Role::FORWARD: {
      OPGRAPH_CHECK(c.set_output(p::kO, {s.t, s.ho, s.v}));
      DataType st = c.has(p::kInitialState) ? c.dtype(p::kInitialState) : DataType::FLOAT;
      OPGRAPH_CHECK(c.set_output(p::kFinalState, {state_rows, s.ho, s.v, s.k}, st));
      OPGRAPH_CHECK(set_checkpoints(c, s, st));
      return check_alias_dtype(c, p::kFinalState, p::kInitialState);
    }
    case Role::BACKWARD:
      OPGRAPH_CHECK(set_like(c, p::kDQ, p::kQ));
      OPGRAPH_CHECK(set_like(c, p::kDK, p::kK));
      OPGRAPH_CHECK(set_like(c, p::kDV, p::kV));
      OPGRAPH_CHECK(set_like(c, p::kDG, p::kG));
      if (v == Variant::GDN2) {
        OPGRAPH_CHECK(set_like(c, p::kDB, p::kB));
        OPGRAPH_CHECK(set_like(c, p::kDW, p::kW));
      } else {
        OPGRAPH_CHECK(set_like(c, p::kDBeta, p::kBeta));
      }
      OPGRAPH_CHECK(set_like(c, p::kDInitialState, p::kInitialState));
      OPGRAPH_CHECK(set_like(c, p::kDALog, p::kALog));
      OPGRAPH_CHECK(set_like(c, p::kDDtBias, p::kDtBias));
      return check_alias_dtype(c, p::kDInitialState, p::kDFinalState);
    case Role::SUMMARY:
      OPGRAPH_CHECK(c.set_output(p::kH, {s.n_seq, s.ho, s.v, s.k}, DataType::FLOAT));
      return c.set_output(p::kM, {s.n_seq, s.ho, s.k, s.k}, DataType::FLOAT);
    case Role::SUMMARY_BWD:
      OPGRAPH_CHECK(c.set_output(p::kGSum, {s.n_seq, s.ho, s.v, s.k}, DataType::FLOAT));
      return c.set_output(p::kTransition, {s.n_seq, s.ho, s.k, s.k}, DataType::FLOAT);
  }
  return c.fail_op("internal: unknown linear-attention role");
}

}  // namespace opgraph::ops::la
