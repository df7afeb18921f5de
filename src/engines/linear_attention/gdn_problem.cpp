// engines/linear_attention/gdn_problem.cpp — analyze_gdn: the family's support
// rules (L1..L7, gdn_problem.h) and the problem it hands the kernels.
#include "engines/linear_attention/gdn_problem.h"

#include "engines/linear_attention/kernels/gdn_params.cuh"
#include "engines/linear_attention/la_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>

#include "opgraph/op_graph.h"

namespace opgraph::linear_attention {

namespace rules {

Status decline(std::string_view op, const char* rule, const std::string& why) {
  return Status(ErrorCode::GRAPH_NOT_SUPPORTED, "engine linear_attention: " + std::string(op) + rule + " " + why);
}

std::string type_name(DataType d) { return std::string(to_string(d)); }

bool one_of(DataType d, std::initializer_list<DataType> set) {
  for (DataType x : set)
    if (d == x) return true;
  return false;
}

Status check_rows(std::string_view op, const char* rule, const std::string& node, const char* port, const Tensor& t,
                  std::int64_t* ts, std::int64_t* hs) {
  const auto& dim = t.get_dim();
  const auto& stride = t.get_stride();
  auto fits = [&](std::size_t i) { return dim[i] == 1 || (stride[i] >= 0 && stride[i] % 8 == 0); };
  const bool ok = dim.size() == 3 && stride.size() == 3 && stride[2] == 1 && fits(0) && fits(1);
  if (!ok) {
    std::string got;
    for (auto s : stride) got += (got.empty() ? "" : ", ") + std::to_string(s);
    return decline(op, rule, "node '" + node + "' port " + port + " (tensor '" + t.get_name() + "') has strides [" +
                                 got + "]; the head dim must be contiguous (stride 1) and the token and head "
                                 "strides multiples of 8 elements (16 bytes)");
  }
  *ts = dim[0] == 1 ? 0 : stride[0];
  *hs = dim[1] == 1 ? 0 : stride[1];
  return Status::ok();
}

Status check_packed(std::string_view op, const char* rule, const char* access, const std::string& node,
                    const char* port, const Tensor& t, bool row_pad, std::int64_t* row_stride) {
  const auto& dim = t.get_dim();
  const auto& stride = t.get_stride();
  const auto packed = Tensor::packed_strides(dim);
  bool ok = stride.size() == dim.size();
  for (std::size_t i = row_pad ? 1 : 0; ok && i < dim.size(); ++i) ok = dim[i] == 1 || stride[i] == packed[i];
  if (ok && row_pad && !dim.empty()) {
    const std::int64_t elem = t.get_data_type() == DataType::FLOAT ? 4 : 2;
    const std::int64_t s0 = dim[0] == 1 ? packed[0] : stride[0];
    ok = s0 >= packed[0] && (s0 * elem) % 16 == 0;
    if (row_stride) *row_stride = s0;
  }
  if (ok) return Status::ok();
  std::string got, want;
  for (auto s : stride) got += (got.empty() ? "" : ", ") + std::to_string(s);
  for (auto s : packed) want += (want.empty() ? "" : ", ") + std::to_string(s);
  return decline(op, rule, "node '" + node + "' port " + port + " (tensor '" + t.get_name() + "') has strides [" +
                               got + "]; the kernels " + access + " it dense row-major [" + want + "]" +
                               (row_pad ? " (the row stride may be padded to a multiple of 16 bytes)" : ""));
}

runtime::KernelRequest kernel_request(long long d, DataType io, const char* entry, const char* source) {
  runtime::KernelRequest r;
  r.family = "linear_attention";
  r.kernel = std::string(entry) + "_d" + std::to_string(d) + "_" + (io == DataType::HALF ? "f16" : "bf16");
  r.source = source;
  r.entry = entry;
  r.defines = {{"GDN_D", std::to_string(d)}, {"GDN_IO", io == DataType::HALF ? "1" : "0"}};
  return r;
}

long long type_code(DataType d) {
  switch (d) {
    case DataType::BFLOAT16: return opgraph_gdn::kTypeBf16;
    case DataType::HALF: return opgraph_gdn::kTypeF16;
    default: return opgraph_gdn::kTypeF32;
  }
}

Status read_types(std::string_view op, const char* rule, const std::string& node,
                  std::initializer_list<TypedOperand> operands) {
  for (const TypedOperand& x : operands) {
    if (!x.t) continue;
    const DataType d = x.t->get_data_type();
    if (x.state ? !one_of(d, {DataType::FLOAT, DataType::BFLOAT16})
                : !one_of(d, {DataType::FLOAT, DataType::BFLOAT16, DataType::HALF}))
      return decline(op, rule, "node '" + node + "' port " + x.port + " is " + type_name(d) + "; " +
                                   (x.state ? "FLOAT or BFLOAT16" : "FLOAT, BFLOAT16 or HALF") + " is served");
    *x.type = d;
  }
  return Status::ok();
}

}  // namespace rules

namespace {

// The forward's and the summary's forms of the shared rules (rule L6 for layouts).
Status decline(const char* rule, const std::string& why) { return rules::decline("", rule, why); }
std::string dt(DataType d) { return rules::type_name(d); }
using rules::one_of;
Status check_rows(const std::string& node, const char* port, const Tensor& t, std::int64_t* ts, std::int64_t* hs) {
  return rules::check_rows("", "L6 layout:", node, port, t, ts, hs);
}
Status check_packed(const std::string& node, const char* port, const Tensor& t, bool row_pad = false,
                    std::int64_t* row_stride = nullptr) {
  return rules::check_packed("", "L6 layout:", "read", node, port, t, row_pad, row_stride);
}

// The element types of optional float operands (FLOAT, BFLOAT16 or HALF), each
// bound one read into *out; `rule` names the decline.
struct Typed {
  const char* port;
  TensorPtr t;
  DataType* out;
};
Status read_float_types(const char* rule, const std::string& node, std::initializer_list<Typed> operands) {
  for (const Typed& x : operands) {
    if (!x.t) continue;
    if (!one_of(x.t->get_data_type(), {DataType::FLOAT, DataType::BFLOAT16, DataType::HALF}))
      return decline(rule, "node '" + node + "' port " + x.port + " is " + dt(x.t->get_data_type()) +
                               "; FLOAT, BFLOAT16 or HALF is served");
    *x.out = x.t->get_data_type();
  }
  return Status::ok();
}

}  // namespace

bool use_decode(const GdnProblem& p) {
  return !p.summary && !p.batch_invariant && p.checkpoints < 0 && p.t <= 8 * p.n_seq;
}

Result<GdnProblem> analyze_gdn(const OpGraph& graph) {
  // L1: one gdn forward node.
  if (graph.nodes().size() != 1) {
    std::string ops;
    for (const auto& n : graph.nodes()) ops += (ops.empty() ? "" : ", ") + std::string(n->op());
    return decline("L1 op:", "serves a graph of exactly one gdn node; this graph has " +
                                 std::to_string(graph.nodes().size()) + " nodes (" + ops + ")");
  }
  const Node& n = *graph.nodes().front();
  if (n.op() == "gdn_summary") return analyze_gdn_summary(graph);
  if (n.op() != "gdn")
    return decline("L1 op:", "serves gdn forward and gdn_summary; node '" + n.name() + "' is op '" +
                                 std::string(n.op()) + "' (served by the reference)");
  GdnProblem p;
  p.node = n.name();
  auto in = [&](const char* port) { return n.input(port); };
  const TensorPtr q = in("q"), k = in("k"), v = in("v"), g = in("g"), beta = in("beta"), cu = in("cu_seqlens");
  const TensorPtr init = in("initial_state"), a_log = in("a_log"), dt_bias = in("dt_bias"), idx = in("state_indices");
  const TensorPtr o = n.output("O"), fin = n.output("final_state"), ckpt = n.output("state_checkpoints");
  if (!q || !k || !v || !g || !beta || !cu || !o)
    return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: node '" + p.node + "' lacks a required port");

  // L2 / L3.
  OPGRAPH_CHECK(rules::read_qkv("", "L2 q/k/v:", "L3 head dim:", *q, *k, *v, *cu, p));

  // L4.
  OPGRAPH_CHECK(read_float_types("L4 gates:", p.node, {{"g", g, &p.g_type}, {"beta", beta, &p.beta_type},
                                                       {"a_log", a_log, &p.a_log_type},
                                                       {"dt_bias", dt_bias, &p.dt_bias_type}, {"O", o, &p.o_type}}));

  // L5.
  const bool write_final = fin && !fin->get_is_virtual();
  if (init) p.state_type = init->get_data_type();
  else if (write_final) p.state_type = fin->get_data_type();
  for (const TensorPtr& s : {init, write_final ? fin : TensorPtr{}}) {
    if (!s) continue;
    if (!one_of(s->get_data_type(), {DataType::FLOAT, DataType::BFLOAT16}) || s->get_data_type() != p.state_type)
      return decline("L5 state:", "node '" + p.node + "': initial_state and final_state must be FLOAT or BFLOAT16, "
                                  "one type for both; got " + dt(s->get_data_type()) + " for '" + s->get_name() + "'");
  }

  // L6.
  if (o->get_is_virtual())
    return decline("L6 layout:", "node '" + p.node + "': O must be a graph output (non-virtual): the engine writes it");
  OPGRAPH_CHECK(check_rows(p.node, "q", *q, &p.q_ts, &p.q_hs));
  OPGRAPH_CHECK(check_rows(p.node, "k", *k, &p.k_ts, &p.k_hs));
  OPGRAPH_CHECK(check_rows(p.node, "v", *v, &p.v_ts, &p.v_hs));
  for (const auto& [port, t] : {std::pair<const char*, TensorPtr>{"g", g}, {"beta", beta}, {"cu_seqlens", cu},
                                {"a_log", a_log}, {"dt_bias", dt_bias}, {"state_indices", idx}, {"O", o}}) {
    if (t) OPGRAPH_CHECK(check_packed(p.node, port, *t));
  }
  p.state_rows = init ? init->get_dim()[0] : (write_final ? fin->get_dim()[0] : p.n_seq);
  p.state_row_stride = p.ho * p.d * p.d;
  std::int64_t init_stride = -1, fin_stride = -1;
  if (init) OPGRAPH_CHECK(check_packed(p.node, "initial_state", *init, true, &init_stride));
  if (write_final) OPGRAPH_CHECK(check_packed(p.node, "final_state", *fin, true, &fin_stride));
  if (init && write_final && init_stride != fin_stride)
    return decline("L6 layout:", "node '" + p.node +
                                     "': initial_state and final_state must share one row stride; got " +
                                     std::to_string(init_stride) + " and " + std::to_string(fin_stride));
  if (init_stride > 0) p.state_row_stride = init_stride;
  else if (fin_stride > 0) p.state_row_stride = fin_stride;

  // L7.
  if (p.n_seq > 65535 || p.ho > 65535)
    return decline("L7 grid:", "node '" + p.node + "': at most 65535 sequences and 65535 heads; got N = " +
                                   std::to_string(p.n_seq) + ", HO = " + std::to_string(p.ho));

  // L8.
  if (ckpt && !ckpt->get_is_virtual()) {
    OPGRAPH_CHECK(rules::read_types("", "L8 checkpoints:", p.node,
                                    {rules::TypedOperand{"state_checkpoints", ckpt, &p.ckpt_type, true}}));
    OPGRAPH_CHECK(check_packed(p.node, "state_checkpoints", *ckpt));
    p.checkpoints = ckpt->get_uid();
    p.ckpt_rows = ckpt->get_dim()[0];
  }

  p.q = q->get_uid();
  p.k = k->get_uid();
  p.v = v->get_uid();
  p.g = g->get_uid();
  p.beta = beta->get_uid();
  p.cu_seqlens = cu->get_uid();
  p.o = o->get_uid();
  if (init) p.initial_state = init->get_uid();
  if (a_log) p.a_log = a_log->get_uid();
  if (dt_bias) p.dt_bias = dt_bias->get_uid();
  if (idx) p.state_indices = idx->get_uid();
  if (write_final) p.final_state = fin->get_uid();
  p.l2norm = n.get_bool("use_qk_l2norm");
  p.safe_gate = n.get_bool("safe_gate");
  p.linear_gate = n.get_string("gate_domain", "log") == "linear";
  p.beta_sigmoid = n.get_bool("use_beta_sigmoid");
  p.neg_eig = n.get_bool("allow_neg_eigval");
  p.batch_invariant = n.get_bool("batch_invariant");
  p.overwrite = n.get_bool("overwrite_initial_state");
  p.checkpoint_every = n.get_int("checkpoint_every_n_tokens", 0);
  p.scale = n.attr_is_set("scale") ? n.get_float("scale") : 1.0 / std::sqrt(static_cast<double>(p.d));
  return p;
}

Result<GdnProblem> analyze_gdn_summary(const OpGraph& graph) {
  if (graph.nodes().size() != 1 || graph.nodes().front()->op() != "gdn_summary")
    return decline("S1 op:", "serves a graph of exactly one gdn_summary node");
  const Node& n = *graph.nodes().front();
  GdnProblem p;
  p.node = n.name();
  p.summary = true;
  auto in = [&](const char* port) { return n.input(port); };
  const TensorPtr k = in("k"), v = in("v"), g = in("g"), beta = in("beta"), cu = in("cu_seqlens");
  const TensorPtr a_log = in("a_log"), dt_bias = in("dt_bias");
  const TensorPtr hs = n.output("H"), ms = n.output("M");
  if (!k || !v || !g || !beta || !cu || !hs || !ms)
    return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: node '" + p.node + "' lacks a required port");
  // S2 / S3.
  p.io = k->get_data_type();
  if (!one_of(p.io, {DataType::BFLOAT16, DataType::HALF}) || v->get_data_type() != p.io)
    return decline("S2 k/v:", "node '" + p.node + "': k and v must both be BFLOAT16 or both HALF; got " + dt(p.io) +
                                  ", " + dt(v->get_data_type()));
  p.d = k->get_dim()[2];
  if (v->get_dim()[2] != p.d || (p.d != 128 && p.d != 64))
    return decline("S3 head dim:", "node '" + p.node + "': K = V = 128 (the fused kernel's summary form) or 64 (the "
                                   "two-pass scan's) is served; got K = " + std::to_string(p.d) + ", V = " +
                                       std::to_string(v->get_dim()[2]));
  p.t = k->get_dim()[0];
  p.hq = k->get_dim()[1];  // no q: the k heads stand in (q head h / (HO / HQ) is never read)
  p.hk = k->get_dim()[1];
  p.hv = v->get_dim()[1];
  p.ho = std::max(p.hk, p.hv);
  p.n_seq = cu->get_dim()[0] - 1;
  p.cu64 = cu->get_data_type() == DataType::INT64;
  // S4.
  OPGRAPH_CHECK(read_float_types("S4 types:", p.node, {{"g", g, &p.g_type}, {"beta", beta, &p.beta_type},
                                                       {"a_log", a_log, &p.a_log_type},
                                                       {"dt_bias", dt_bias, &p.dt_bias_type}, {"H", hs, &p.o_type},
                                                       {"M", ms, &p.state_type}}));
  // S6.
  for (const TensorPtr& t : {hs, ms})
    if (t->get_is_virtual())
      return decline("S6 layout:", "node '" + p.node + "': H and M must be graph outputs (non-virtual): the engine "
                                   "writes them");
  OPGRAPH_CHECK(check_rows(p.node, "k", *k, &p.k_ts, &p.k_hs));
  OPGRAPH_CHECK(check_rows(p.node, "v", *v, &p.v_ts, &p.v_hs));
  p.q_ts = p.k_ts;  // no q: where a kernel reads q rows (the two-pass prep at d = 64) it reads k's
  p.q_hs = p.k_hs;
  for (const auto& [port, t] : {std::pair<const char*, TensorPtr>{"g", g}, {"beta", beta}, {"cu_seqlens", cu},
                                {"a_log", a_log}, {"dt_bias", dt_bias}, {"H", hs}, {"M", ms}}) {
    if (t) OPGRAPH_CHECK(check_packed(p.node, port, *t));
  }
  // S7.
  if (p.n_seq > 65535 || p.ho > 65535)
    return decline("S7 grid:", "node '" + p.node + "': at most 65535 sequences and 65535 heads; got N = " +
                                   std::to_string(p.n_seq) + ", HO = " + std::to_string(p.ho));
  p.state_rows = p.n_seq;
  p.state_row_stride = p.ho * p.d * p.d;
  p.k = k->get_uid();
  p.v = v->get_uid();
  p.g = g->get_uid();
  p.beta = beta->get_uid();
  p.cu_seqlens = cu->get_uid();
  p.o = hs->get_uid();
  p.final_state = ms->get_uid();
  if (a_log) p.a_log = a_log->get_uid();
  if (dt_bias) p.dt_bias = dt_bias->get_uid();
  p.l2norm = n.get_bool("use_qk_l2norm");
  p.safe_gate = n.get_bool("safe_gate");
  p.linear_gate = n.get_string("gate_domain", "log") == "linear";
  p.beta_sigmoid = n.get_bool("use_beta_sigmoid");
  p.neg_eig = n.get_bool("allow_neg_eigval");
  p.batch_invariant = n.get_bool("batch_invariant");
  p.scale = 1.0;
  return p;
}

}  // namespace opgraph::linear_attention
