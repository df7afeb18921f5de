// IR of the linear_attention group: invalid graphs are refused at validate() with
// the expected code and a message naming op, node, port, tensor and rule.
#include <gtest/gtest.h>

#include "ir/linear_attention_fixture.h"

using namespace opgraph;
using namespace la_test;

namespace {

// Validates and checks code + every fragment of the message.
void expect_refused(Built& b, ErrorCode code, std::initializer_list<std::string> fragments, const std::string& ctx) {
  Status s = b.g.validate();
  ASSERT_EQ(s.code(), code) << ctx << ": " << s.to_string();
  for (const auto& f : fragments)
    EXPECT_NE(s.message().find(f), std::string::npos) << ctx << ": '" << f << "' not in " << s.message();
}

// New dims with packed strides (a rank change must not keep the old strides).
void redim(const TensorPtr& t, std::vector<std::int64_t> d) { t->set_stride(Tensor::packed_strides(d)).set_dim(d); }

std::string op_frag(const OpId& op) { return "op '" + op.name + "' (node 'la0')"; }

}  // namespace

TEST(LinearAttentionRules, EveryOpRefusesIndivisibleKeyHeads) {
  for (const auto& op : all_ops()) {
    Cfg c;
    c.hk = 3;  // HO = 4 is not a multiple of 3
    Built b = build(op, c);
    expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED, {op_frag(op), "port k", "tensor 'k'", "head grouping", "HK = 3"},
                   op.name);
  }
}

TEST(LinearAttentionRules, EveryOpRefusesABadGateOrBetaShape) {
  for (const auto& op : all_ops()) {
    Built b = build(op, Cfg{}, Attributes(), [&](Built& x) {
      if (op.fam == Fam::GDN2) redim(x.b, {10, 4, 7});
      else redim(x.beta, {9, 4});
    });
    const char* port = op.fam == Fam::GDN2 ? "port b" : "port beta";
    const char* tensor = op.fam == Fam::GDN2 ? "tensor 'b'" : "tensor 'beta'";
    const char* rule = op.fam == Fam::GDN2 ? "erase gate shape" : "beta shape";
    expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED, {op_frag(op), port, tensor, rule}, op.name);
  }
}

TEST(LinearAttentionRules, VectorGateMustCarryK) {
  for (const char* name : {"kda", "gdn2_bwd", "kda_summary_bwd"}) {
    Built b = build(op_named(name), Cfg{}, Attributes(), [](Built& x) { redim(x.gate, {10, 4}); });
    expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED, {"port g", "tensor 'g'", "gate shape", "[T, HO, K]"}, name);
  }
  Built s = build(op_named("gdn"), Cfg{}, Attributes(), [](Built& x) { redim(x.gate, {10, 4, 8}); });
  expect_refused(s, ErrorCode::GRAPH_NOT_SUPPORTED, {"port g", "gate shape", "[T, HO]"}, "gdn");
}

TEST(LinearAttentionRules, GdpRowsAreTokensTimesHouseholder) {
  Cfg c;
  c.n = 2;
  Built b = build(op_named("gdp"), c, Attributes(), [](Built& x) { redim(x.k, {10, 2, 8}); });
  expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"port k", "tensor 'k'", "householder rows", "T * num_householder = 20"}, "gdp");
  Built z = build(op_named("gdp_bwd"), c, Attributes().set("num_householder", 0));
  expect_refused(z, ErrorCode::GRAPH_NOT_SUPPORTED, {"attribute 'num_householder'", "householder rows"}, "gdp_bwd");
}

TEST(LinearAttentionRules, Gdn2WriteGateIsPerValueChannel) {
  Built b = build(op_named("gdn2_summary"), Cfg{}, Attributes(), [](Built& x) { redim(x.w, {10, 4, 8}); });
  expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED, {"port w", "tensor 'w'", "write gate shape"}, "gdn2_summary");
}

TEST(LinearAttentionRules, AttributeRulesAreNamed) {
  struct Case {
    const char* op;
    Attributes attrs;
    const char* attr;
    const char* rule;
  };
  std::vector<Case> cases = {
      {"gdn", Attributes().set("allow_neg_eigval", true), "allow_neg_eigval", "beta sigmoid"},
      {"kda", Attributes().set("lower_bound", -6.0), "lower_bound", "safe gate bound"},
      {"gdn2_bwd", Attributes().set("lower_bound", 0.0), "lower_bound", "safe gate bound"},
      {"gdp", Attributes().set("checkpoint_every_n_tokens", 100), "checkpoint_every_n_tokens", "checkpoint cadence"},
      {"gdn_bwd", Attributes().set("safe_gate", true).set("gate_domain", "linear"), "gate_domain", "gate domain"},
      {"gdn", Attributes().set("overwrite_initial_state", true).set("output_final_state", true),
       "overwrite_initial_state", "in-place state"},
      {"gdn_summary_bwd", Attributes().set("scale", std::numeric_limits<double>::infinity()), "scale", "scale"},
  };
  for (auto& k : cases) {
    Built b = build(op_named(k.op), Cfg{}, k.attrs);
    expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED,
                   {"op '" + std::string(k.op) + "'", "attribute '" + std::string(k.attr) + "'", k.rule}, k.op);
  }
  // Enum domain: lower-case values only.
  Built e = build(op_named("kda"), Cfg{}, Attributes().set("gate_domain", "LOG"));
  expect_refused(e, ErrorCode::GRAPH_NOT_SUPPORTED, {"attribute 'gate_domain'", "{log, linear}"}, "kda");
  // An attribute of another op of the group.
  Built u = build(op_named("gdn"), Cfg{}, Attributes().set("output_transition", true));
  expect_refused(u, ErrorCode::GRAPH_NOT_SUPPORTED, {"unknown attribute 'output_transition'"}, "gdn");
}

TEST(LinearAttentionRules, OverwriteNeedsBothStates) {
  Cfg c;
  c.init = true;
  Built f = build(op_named("kda"), c, Attributes().set("overwrite_initial_state", true));
  expect_refused(f, ErrorCode::GRAPH_NOT_SUPPORTED, {"in-place state", "final_state output"}, "kda");
  Built bw = build(op_named("gdn2_bwd"), c, Attributes().set("overwrite_initial_state", true));
  expect_refused(bw, ErrorCode::GRAPH_NOT_SUPPORTED, {"in-place state", "d_final_state"}, "gdn2_bwd");
  c.d_final = true;
  Built ok = build(op_named("gdn2_bwd"), c, Attributes().set("overwrite_initial_state", true));
  EXPECT_TRUE(ok.g.validate().is_good());
  // One buffer serves both: the output may not take another data type.
  Built dt = build(op_named("gdp"), Cfg{.init = true},
                   Attributes().set("overwrite_initial_state", true).set("output_final_state", true));
  dt.node().output("final_state")->set_data_type(DataType::HALF);
  expect_refused(dt, ErrorCode::GRAPH_NOT_SUPPORTED, {"port final_state", "in-place state", "data type"}, "gdp");
}

TEST(LinearAttentionRules, StatePoolRules) {
  Cfg c;
  c.init = true;
  c.pool = true;
  Built bwd = build(op_named("gdn_bwd"), c);
  expect_refused(bwd, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"op 'gdn_bwd'", "port state_indices", "tensor 'state_indices'", "state pool", "forward only"}, "bwd");
  Built ck = build(op_named("kda"), c, Attributes().set("checkpoint_every_n_tokens", 64));
  expect_refused(ck, ErrorCode::GRAPH_NOT_SUPPORTED, {"port state_indices", "state pool", "checkpoint_every_n_tokens"},
                 "ckpt");
  Built i64 = build(op_named("gdn"), c, Attributes(), [](Built& x) { x.idx->set_data_type(DataType::INT64); });
  expect_refused(i64, ErrorCode::GRAPH_NOT_SUPPORTED, {"port state_indices", "INT32"}, "int64 indices");
  Cfg no_init = c;
  no_init.init = false;
  Built ni = build(op_named("gdp"), no_init);
  expect_refused(ni, ErrorCode::GRAPH_NOT_SUPPORTED, {"port state_indices", "state pool", "initial_state"}, "no init");
}

TEST(LinearAttentionRules, StateLayoutIsVMajor) {
  Cfg c;
  c.init = true;  // K = 8, V = 6: a K-major [N, HO, K, V] state is refused
  Built b = build(op_named("gdn"), c, Attributes(), [](Built& x) { redim(x.init, {3, 4, 8, 6}); });
  expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED,
                 {"port initial_state", "tensor 'initial_state'", "state layout", "[N, HO, V, K]"}, "k-major");
  Cfg d;
  d.d_final = true;
  Built g = build(op_named("kda_bwd"), d, Attributes(), [](Built& x) { redim(x.d_final, {2, 4, 6, 8}); });
  expect_refused(g, ErrorCode::GRAPH_NOT_SUPPORTED, {"port d_final_state", "gradient shape"}, "d_final_state");
}

TEST(LinearAttentionRules, GateParametersOnlyUnderSafeGate) {
  Cfg c;
  c.a_log = true;
  Built b = build(op_named("gdn"), c);
  expect_refused(b, ErrorCode::GRAPH_NOT_SUPPORTED, {"port a_log", "tensor 'a_log'", "gate parameters", "safe_gate"},
                 "a_log");
  Cfg d;
  d.dt_bias = true;
  Built k = build(op_named("kda_summary"), d, Attributes().set("safe_gate", true),
                  [](Built& x) { redim(x.dt_bias, {4}); });
  expect_refused(k, ErrorCode::GRAPH_NOT_SUPPORTED, {"port dt_bias", "gate parameters", "[HO, K]"}, "dt_bias");
}

TEST(LinearAttentionRules, CuSeqlensAndPortsRequired) {
  Built f = build(op_named("gdn"), Cfg{}, Attributes(), [](Built& x) { x.cu->set_data_type(DataType::FLOAT); });
  expect_refused(f, ErrorCode::GRAPH_NOT_SUPPORTED, {"port cu_seqlens", "tensor 'cu_seqlens'", "INT32, INT64"}, "f");
  Built one = build(op_named("kda_summary"), Cfg{.cu = {0}}, Attributes(), [](Built&) {});
  expect_refused(one, ErrorCode::GRAPH_NOT_SUPPORTED, {"port cu_seqlens", "cu_seqlens: must be [N + 1]"}, "N=0");
  Built miss = build(op_named("gdn2"), Cfg{}, Attributes(), [](Built& x) { x.cu = nullptr; });
  expect_refused(miss, ErrorCode::ATTRIBUTE_NOT_SET, {"port cu_seqlens", "not bound"}, "missing");
  Built rows = build(op_named("gdn_bwd"), Cfg{}, Attributes(), [](Built& x) { redim(x.d_o, {9, 4, 6}); });
  expect_refused(rows, ErrorCode::GRAPH_NOT_SUPPORTED, {"port dO", "tensor 'dO'", "gradient shape"}, "dO");
  Built kd = build(op_named("kda"), Cfg{}, Attributes(), [](Built& x) { redim(x.k, {10, 2, 4}); });
  expect_refused(kd, ErrorCode::GRAPH_NOT_SUPPORTED, {"port k", "THD layout", "head dim K"}, "K");
}
