// engines/linear_attention/gdn_bwd_rules.cpp — gdn_bwd's support rules (B1..B8, gdn_bwd.h): a gdn_bwd node read
// into a GdnBwdProblem or declined naming the rule, the node and the tensor; the gate attributes gdn_bwd and
// gdn_summary_bwd both read; rule B9 and the plan form a config names (its knobs). gdn_bwd.cpp has the kernels and
// the plan, gdn_bwd_heuristics.cpp the split rules and the proposals.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/kernels/gdn_bwd_params.cuh"
#include "engines/linear_attention/la_engine.h"
#include "engines/linear_attention/la_rules.h"
#include "opgraph/op_graph.h"

namespace opgraph::linear_attention {
namespace {

// gdn_bwd's forms of the shared rules (la_rules.h; rule B7 for layouts).
Status decline(const char* rule, const std::string& why) { return rules::decline("gdn_bwd: ", rule, why); }
Status check_rows(const std::string& node, const char* port, const Tensor& t, std::int64_t* ts, std::int64_t* hs) {
  return rules::check_rows("gdn_bwd: ", "B7 layout:", node, port, t, ts, hs);
}
Status check_packed(const std::string& node, const char* port, const Tensor& t) {
  return rules::check_packed("gdn_bwd: ", "B7 layout:", "read and write", node, port, t);
}

}  // namespace

bool is_gdn_bwd(const OpGraph& graph) {
  return graph.nodes().size() == 1 &&
         (graph.nodes().front()->op() == "gdn_bwd" || graph.nodes().front()->op() == "gdn_summary_bwd");
}

Result<GdnBwdProblem> analyze_gdn_bwd(const OpGraph& graph) {
  if (graph.nodes().size() == 1 && graph.nodes().front()->op() == "gdn_summary_bwd")
    return analyze_gdn_summary_bwd(graph);
  // B1.
  if (!is_gdn_bwd(graph))
    return decline("B1 op:", "serves a graph of exactly one gdn_bwd node");
  const Node& n = *graph.nodes().front();
  GdnBwdProblem p;
  p.node = n.name();
  auto in = [&](const char* port) { return n.input(port); };
  auto out = [&](const char* port) { return n.output(port); };
  const TensorPtr q = in("q"), k = in("k"), v = in("v"), g = in("g"), beta = in("beta"), cu = in("cu_seqlens");
  const TensorPtr init = in("initial_state"), d_o = in("dO"), dfin = in("d_final_state"), a_log = in("a_log"),
                  dt_bias = in("dt_bias"), ckpt = in("state_checkpoints");
  const TensorPtr dq = out("dQ"), dk = out("dK"), dv = out("dV"), dg = out("dG"), dbeta = out("dBeta"),
                  dinit = out("d_initial_state"), dalog = out("d_a_log"), ddt = out("d_dt_bias");
  if (!q || !k || !v || !g || !beta || !cu || !d_o || !dq || !dk || !dv || !dg || !dbeta)
    return Status(ErrorCode::INTERNAL_ERROR, "engine linear_attention: gdn_bwd node '" + p.node +
                                                 "' lacks a required port");

  // B2 / B3.
  OPGRAPH_CHECK(rules::read_qkv("gdn_bwd: ", "B2 q/k/v:", "B3 head dim:", *q, *k, *v, *cu, p));

  // B4.
  const bool write_dinit = dinit && !dinit->get_is_virtual();
  const bool write_dalog = dalog && !dalog->get_is_virtual(), write_ddt = ddt && !ddt->get_is_virtual();
  using T = rules::TypedOperand;
  OPGRAPH_CHECK(rules::read_types(
      "gdn_bwd: ", "B4 types:", p.node,
      {T{"g", g, &p.g_type, false}, T{"beta", beta, &p.beta_type, false}, T{"dO", d_o, &p.do_type, false},
       T{"dQ", dq, &p.dq_type, false}, T{"dK", dk, &p.dk_type, false}, T{"dV", dv, &p.dv_type, false},
       T{"dG", dg, &p.dg_type, false}, T{"dBeta", dbeta, &p.dbeta_type, false},
       T{"initial_state", init, &p.init_type, true}, T{"d_final_state", dfin, &p.dfin_type, true},
       T{"d_initial_state", write_dinit ? dinit : TensorPtr{}, &p.dinit_type, true},
       T{"a_log", a_log, &p.a_log_type, false}, T{"dt_bias", dt_bias, &p.dt_bias_type, false},
       T{"d_a_log", write_dalog ? dalog : TensorPtr{}, &p.dalog_type, false},
       T{"d_dt_bias", write_ddt ? ddt : TensorPtr{}, &p.ddt_type, false}}));

  // B6: without state_checkpoints the cadence changes nothing (every chunk state is recomputed); with it, its
  // type, and rows for every checkpoint a batch of T tokens can have (the kernels read below them only).
  if (ckpt) {
    OPGRAPH_CHECK(rules::read_types("gdn_bwd: ", "B6 checkpoints:", p.node,
                                    {T{"state_checkpoints", ckpt, &p.ckpt_type, true}}));
    p.checkpoint_every = n.get_int("checkpoint_every_n_tokens", 0);
    p.ckpt_rows = ckpt->get_dim()[0];
    if (p.ckpt_rows < gdn_bwd_checkpoint_rows_needed(p))
      return decline("B6 checkpoints:", "node '" + p.node + "': state_checkpoints '" + ckpt->get_name() + "' has " +
                                            std::to_string(p.ckpt_rows) + " rows; the kernels read up to floor(T / " +
                                            std::to_string(p.checkpoint_every) + ") = " +
                                            std::to_string(gdn_bwd_checkpoint_rows_needed(p)) +
                                            " (declare the forward's inferred count; the reference serves fewer)");
  }

  // B7.
  for (const auto& [port, t] : {std::pair<const char*, TensorPtr>{"dQ", dq}, {"dK", dk}, {"dV", dv}, {"dG", dg},
                                {"dBeta", dbeta}}) {
    if (t->get_is_virtual())
      return decline("B7 layout:", "node '" + p.node + "': " + port +
                                       " must be a graph output (non-virtual): the engine writes it");
  }
  OPGRAPH_CHECK(check_rows(p.node, "q", *q, &p.q_ts, &p.q_hs));
  OPGRAPH_CHECK(check_rows(p.node, "k", *k, &p.k_ts, &p.k_hs));
  OPGRAPH_CHECK(check_rows(p.node, "v", *v, &p.v_ts, &p.v_hs));
  for (const auto& [port, t] :
       {std::pair<const char*, TensorPtr>{"g", g}, {"beta", beta}, {"cu_seqlens", cu}, {"initial_state", init},
        {"dO", d_o}, {"d_final_state", dfin}, {"dQ", dq}, {"dK", dk}, {"dV", dv}, {"dG", dg}, {"dBeta", dbeta},
        {"d_initial_state", write_dinit ? dinit : TensorPtr{}}, {"a_log", a_log}, {"dt_bias", dt_bias},
        {"d_a_log", write_dalog ? dalog : TensorPtr{}}, {"d_dt_bias", write_ddt ? ddt : TensorPtr{}},
        {"state_checkpoints", ckpt}}) {
    if (t) OPGRAPH_CHECK(check_packed(p.node, port, *t));
  }

  // B8.
  if (p.n_seq > 65535 || p.ho > 65535)
    return decline("B8 grid:", "node '" + p.node + "': at most 65535 sequences and 65535 heads; got N = " +
                                   std::to_string(p.n_seq) + ", HO = " + std::to_string(p.ho));
  if (ckpt && p.n_seq * gdn_bwd_checkpoint_spans(p) > 65535)
    return decline("B8 grid:", "node '" + p.node + "': N x checkpoint spans (" + std::to_string(p.n_seq) + " x " +
                                   std::to_string(gdn_bwd_checkpoint_spans(p)) + ") exceeds 65535; take a longer cadence");

  p.q = q->get_uid();
  p.k = k->get_uid();
  p.v = v->get_uid();
  p.g = g->get_uid();
  p.beta = beta->get_uid();
  p.cu_seqlens = cu->get_uid();
  p.d_o = d_o->get_uid();
  p.dq = dq->get_uid();
  p.dk = dk->get_uid();
  p.dv = dv->get_uid();
  p.dg = dg->get_uid();
  p.dbeta = dbeta->get_uid();
  if (init) p.initial_state = init->get_uid();
  if (dfin) p.d_final_state = dfin->get_uid();
  if (write_dinit) p.d_initial_state = dinit->get_uid();
  if (a_log) p.a_log = a_log->get_uid();
  if (dt_bias) p.dt_bias = dt_bias->get_uid();
  if (write_dalog) p.d_a_log = dalog->get_uid();
  if (write_ddt) p.d_dt_bias = ddt->get_uid();
  if (ckpt) p.checkpoints = ckpt->get_uid();
  read_gate_attributes(n, p);
  p.overwrite = n.get_bool("overwrite_initial_state");
  return p;
}

void read_gate_attributes(const Node& n, GdnBwdProblem& p) {
  p.safe_gate = n.get_bool("safe_gate");
  p.l2norm = n.get_bool("use_qk_l2norm");
  p.linear_gate = n.get_string("gate_domain", "log") == "linear";
  p.beta_sigmoid = n.get_bool("use_beta_sigmoid");
  p.neg_eig = n.get_bool("allow_neg_eigval");
  p.batch_invariant = n.get_bool("batch_invariant");
  p.scale = n.attr_is_set("scale") ? n.get_float("scale") : 1.0 / std::sqrt(static_cast<double>(p.d));
}

Status gdn_bwd_support(const OpGraph& graph) { return analyze_gdn_bwd(graph).status(); }

// ---- rule B9 and the form a config names (gdn_bwd.h) ----
namespace {
// The span length a config names for a gdn_bwd plan (CHAIN_SPLIT; absent: 0) and its grid limit.
Result<long long> bwd_split(const GdnBwdProblem& p, const PlanConfig& config) {
  auto it = config.knobs.find(KnobType::CHAIN_SPLIT);
  if (it == config.knobs.end()) return 0LL;
  if (std::find(std::begin(kChainSplits), std::end(kChainSplits), it->second) == std::end(kChainSplits))
    return Status(ErrorCode::INVALID_VALUE, "engine linear_attention: gdn_bwd: knob CHAIN_SPLIT (chunks per span) is " +
                                                std::to_string(it->second) + "; it takes 0, 8, 16, 32, 64, 128 or 256");
  const long long split = it->second;
  if (split > 0 && p.summary)
    return Status(ErrorCode::INVALID_VALUE, "engine linear_attention: gdn_summary_bwd: knob CHAIN_SPLIT is " +
                                                std::to_string(split) + "; a summary runs every sequence whole (0)");
  if (split > 0 && p.n_seq * opgraph_gdn::gdn_bwd_spans(p.t, split) > 65535)
    return Status(ErrorCode::INVALID_VALUE, "engine linear_attention: gdn_bwd: knob CHAIN_SPLIT " +
                                                std::to_string(split) + ": N x spans (" + std::to_string(p.n_seq) +
                                                " x " + std::to_string(opgraph_gdn::gdn_bwd_spans(p.t, split)) +
                                                ") exceeds the grid's 65535; take longer spans");
  return split;
}
}  // namespace

std::string gdn_bwd_b9_refusal(const GdnBwdProblem& p, long long split, long long arch) {
  if (p.summary) return "gdn_summary_bwd runs the prep and its summaries";
  if (p.d != 128) return "head dim " + std::to_string(p.d) + "; the fused pass is written for 128";
  if (split > 0 && arch != kPrefillFusedWs)
    return "CHAIN_SPLIT " + std::to_string(split) +
           "; PIPELINE_ARCH 2 runs each sequence whole (0): its split is PIPELINE_ARCH 3's";
  if (split > 0 && p.checkpoints >= 0)
    return "CHAIN_SPLIT " + std::to_string(split) +
           " with state_checkpoints bound; the fused forward recompute is seeded by them over whole sequences";
  return {};
}
std::string gdn_bwd_b11_refusal(const GdnBwdProblem& p) {
  if (p.summary) return "gdn_summary_bwd runs the prep and its summaries";
  if (p.d != 128) return "head dim " + std::to_string(p.d) + "; the one-pass kernels are written for 128";
  if (p.io != DataType::BFLOAT16 || p.do_type != DataType::BFLOAT16)
    return "q, k, v and dO must be BFLOAT16 (its tiles load them as bf16)";
  if (p.checkpoints >= 0) return "state_checkpoints is bound; the one-pass form recomputes from initial_state";
  if (p.batch_invariant)
    return "batch_invariant is declared; its dq / dk sums are float reductions whose order varies run to run";
  // The TMA maps' coordinates are 32-bit: tokens, and the S^T rows and T rows of the chunk slots.
  const long long slots = opgraph_gdn::gdn_bwd_slots(p.t, p.n_seq);
  if (p.t >= (1LL << 31) || slots * p.ho * opgraph_gdn::gdn_bwd_block_elems(p.d) / 64 >= (1LL << 31))
    return "T = " + std::to_string(p.t) + " tokens past the TMA maps' 32-bit coordinates";
  return {};
}

Result<BwdForm> gdn_bwd_form(const GdnBwdProblem& p, const PlanConfig& config) {
  auto split = bwd_split(p, config);
  if (split.is_bad()) return split.status();
  BwdForm f{*split, false, false};
  auto it = config.knobs.find(KnobType::PIPELINE_ARCH);
  if (it != config.knobs.end() && it->second == kPrefillFusedWsH)
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  "engine linear_attention: gdn_bwd: knob PIPELINE_ARCH 4 (the forward's inverse on fp16 tiles): "
                  "rule B10 forward only: the backward has no fp16-inverse form (PIPELINE_ARCH 0..3 serve it)");
  if (it != config.knobs.end() && it->second == kBwdOnePass) {
    if (const std::string why = gdn_bwd_b11_refusal(p); !why.empty())
      return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                    "engine linear_attention: gdn_bwd: knob PIPELINE_ARCH 5 (the one-pass backward): rule B11 one "
                    "pass: " + why);
    f.onepass = true;
    return f;
  }
  if (it == config.knobs.end() || (it->second != kPrefillFused && it->second != kPrefillFusedWs)) return f;
  const long long arch = it->second;
  if (const std::string why = gdn_bwd_b9_refusal(p, f.split, arch); !why.empty())
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  "engine linear_attention: gdn_bwd: knob PIPELINE_ARCH " + std::to_string(arch) +
                      (arch == kPrefillFused ? " (the fused forward recompute)"
                                             : " (the fused forward recompute and reverse scan)") +
                      ": rule B9 fused recompute: " + why);
  f.fused = true;
  f.fused_rev = arch == kPrefillFusedWs;
  return f;
}

}  // namespace opgraph::linear_attention
