// engines/linear_attention/gdn_summary_bwd.cpp — gdn_summary_bwd on the linear_attention
// engine: its support rules (SB1..SB6, gdn_bwd.h) read into a GdnBwdProblem with `summary`
// set; gdn_bwd.cpp plans and runs it with the backward's prep and its two span-summary
// kernels over every sequence whole (kBwdFlagSummary).
#include <string>
#include <utility>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/la_rules.h"
#include "opgraph/op_graph.h"

namespace opgraph::linear_attention {
namespace {

Status decline(const char* rule, const std::string& why) {
  return rules::decline("gdn_summary_bwd: ", rule, why);
}
std::string dt(DataType d) { return rules::type_name(d); }

}  // namespace

Result<GdnBwdProblem> analyze_gdn_summary_bwd(const OpGraph& graph) {
  // SB1.
  if (graph.nodes().size() != 1 || graph.nodes().front()->op() != "gdn_summary_bwd")
    return decline("SB1 op:", "serves a graph of exactly one gdn_summary_bwd node");
  const Node& n = *graph.nodes().front();
  GdnBwdProblem p;
  p.node = n.name();
  p.summary = true;
  auto in = [&](const char* port) { return n.input(port); };
  const TensorPtr q = in("q"), k = in("k"), g = in("g"), beta = in("beta"), d_o = in("dO"), cu = in("cu_seqlens");
  const TensorPtr a_log = in("a_log"), dt_bias = in("dt_bias");
  const TensorPtr gs = n.output("G"), tr = n.output("transition");
  if (!q || !k || !g || !beta || !d_o || !cu || !gs)
    return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: gdn_summary_bwd node '" + p.node +
                                                 "' lacks a required port");
  const bool write_tr = tr && n.get_bool("output_transition");

  // SB2 / SB3.
  p.io = q->get_data_type();
  if (!rules::one_of(p.io, {DataType::BFLOAT16, DataType::HALF}) || k->get_data_type() != p.io)
    return decline("SB2 q/k:", "node '" + p.node + "': q and k must both be BFLOAT16 or both HALF; got " + dt(p.io) +
                                   ", " + dt(k->get_data_type()));
  p.d = k->get_dim()[2];
  const std::int64_t vd = d_o->get_dim()[2];
  if (q->get_dim()[2] != p.d || vd != p.d || (p.d != 64 && p.d != 128))
    return decline("SB3 head dim:", "node '" + p.node + "': K = V in {64, 128} is served (V: dO's last dim); got K = " +
                                        std::to_string(p.d) + ", V = " + std::to_string(vd));
  p.t = g->get_dim()[0];
  p.ho = g->get_dim()[1];
  p.hq = q->get_dim()[1];
  p.hk = k->get_dim()[1];
  p.hv = p.ho;  // no v: the prep's U rows are zero, never read
  p.n_seq = cu->get_dim()[0] - 1;
  p.cu64 = cu->get_data_type() == DataType::INT64;

  // SB4.
  using T = rules::TypedOperand;
  OPGRAPH_CHECK(rules::read_types(
      "gdn_summary_bwd: ", "SB4 types:", p.node,
      {T{"g", g, &p.g_type, false}, T{"beta", beta, &p.beta_type, false}, T{"dO", d_o, &p.do_type, false},
       T{"a_log", a_log, &p.a_log_type, false}, T{"dt_bias", dt_bias, &p.dt_bias_type, false},
       T{"G", gs, &p.dinit_type, true}, T{"transition", write_tr ? tr : TensorPtr{}, &p.trans_type, true}}));

  // SB5.
  for (const auto& [port, t] : {std::pair<const char*, TensorPtr>{"G", gs}, {"transition", write_tr ? tr : nullptr}})
    if (t && t->get_is_virtual())
      return decline("SB5 layout:", "node '" + p.node + "': " + port +
                                        " must be a graph output (non-virtual): the engine writes it");
  OPGRAPH_CHECK(rules::check_rows("gdn_summary_bwd: ", "SB5 layout:", p.node, "q", *q, &p.q_ts, &p.q_hs));
  OPGRAPH_CHECK(rules::check_rows("gdn_summary_bwd: ", "SB5 layout:", p.node, "k", *k, &p.k_ts, &p.k_hs));
  for (const auto& [port, t] :
       {std::pair<const char*, TensorPtr>{"g", g}, {"beta", beta}, {"dO", d_o}, {"cu_seqlens", cu}, {"a_log", a_log},
        {"dt_bias", dt_bias}, {"G", gs}, {"transition", write_tr ? tr : nullptr}})
    if (t) OPGRAPH_CHECK(rules::check_packed("gdn_summary_bwd: ", "SB5 layout:", "read and write", p.node, port, *t));

  // SB6.
  if (p.n_seq > 65535 || p.ho > 65535)
    return decline("SB6 grid:", "node '" + p.node + "': at most 65535 sequences and 65535 heads; got N = " +
                                    std::to_string(p.n_seq) + ", HO = " + std::to_string(p.ho));

  p.q = q->get_uid();
  p.k = k->get_uid();
  p.g = g->get_uid();
  p.beta = beta->get_uid();
  p.cu_seqlens = cu->get_uid();
  p.d_o = d_o->get_uid();
  p.d_initial_state = gs->get_uid();  // G: the gradient at each sequence's start
  if (write_tr) p.transition = tr->get_uid();
  if (a_log) p.a_log = a_log->get_uid();
  if (dt_bias) p.dt_bias = dt_bias->get_uid();
  read_gate_attributes(n, p);
  return p;
}

}  // namespace opgraph::linear_attention
