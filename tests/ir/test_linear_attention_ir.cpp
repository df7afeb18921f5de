// IR of the linear_attention group: the 16 records (engine-only), shape and dtype
// inference, conditional outputs, and the JSON round trip of every op.
#include <gtest/gtest.h>

#include "ir/linear_attention_fixture.h"

using namespace opgraph;
using namespace la_test;
using D = std::vector<std::int64_t>;

TEST(LinearAttentionIr, SixteenEngineOnlyRecords) {
  ASSERT_EQ(all_ops().size(), 16u);
  for (const auto& op : all_ops()) {
    const OpSpec* s = find_op_spec(op.name);
    ASSERT_NE(s, nullptr) << op.name;
    EXPECT_EQ(s->mechanism, OpMechanism::ENGINE_ONLY) << op.name;
    EXPECT_FALSE(s->backend_lowerable) << op.name;
    EXPECT_FALSE(s->summary.empty()) << op.name;
    EXPECT_NE(s->find_input("cu_seqlens"), nullptr) << op.name;
    EXPECT_FALSE(s->find_input("cu_seqlens")->optional) << op.name;
    const AttrSpec* gd = s->find_attr("gate_domain");
    ASSERT_NE(gd, nullptr) << op.name;
    EXPECT_EQ(gd->enum_values, (std::vector<std::string_view>{"log", "linear"})) << op.name;
    EXPECT_EQ(s->find_attr("num_householder") != nullptr, op.fam == Fam::GDP) << op.name;
    EXPECT_EQ(s->find_attr("lower_bound") != nullptr, vector_gate(op.fam)) << op.name;
    EXPECT_EQ(s->find_attr("output_transition") != nullptr, op.kind == Kind::SUM_BWD) << op.name;
  }
}

TEST(LinearAttentionIr, EveryOpValidatesWithGroupedHeads) {
  for (const auto& op : all_ops()) {
    Cfg c;  // HQ = HK = 2, HV = 4: HO = 4, value head h reads qk head h / 2
    if (op.fam == Fam::GDP) c.n = 3;
    Built b = build(op, c);
    Status s = b.g.validate();
    ASSERT_TRUE(s.is_good()) << op.name << ": " << s.to_string();
    const Node& n = b.node();
    EXPECT_EQ(n.op(), op.name);
    switch (op.kind) {
      case Kind::FWD:
        EXPECT_EQ(n.output("O")->get_dim(), (D{10, 4, 6})) << op.name;
        EXPECT_EQ(n.output("final_state"), nullptr) << op.name;  // output_final_state defaults to false
        break;
      case Kind::BWD:
        EXPECT_EQ(n.output("dQ")->get_dim(), b.q->get_dim()) << op.name;
        EXPECT_EQ(n.output("dK")->get_dim(), b.k->get_dim()) << op.name;
        EXPECT_EQ(n.output("dV")->get_dim(), b.v->get_dim()) << op.name;
        EXPECT_EQ(n.output("dG")->get_dim(), b.gate->get_dim()) << op.name;
        EXPECT_EQ(n.output("dG")->get_data_type(), DataType::FLOAT) << op.name;
        EXPECT_EQ(n.output("dQ")->get_data_type(), DataType::BFLOAT16) << op.name;
        if (op.fam == Fam::GDN2) {
          EXPECT_EQ(n.output("dB")->get_dim(), (D{10, 4, 8}));
          EXPECT_EQ(n.output("dW")->get_dim(), (D{10, 4, 6}));
        } else {
          EXPECT_EQ(n.output("dBeta")->get_dim(), (D{10 * c.n, 4})) << op.name;
        }
        EXPECT_EQ(n.output("d_initial_state"), nullptr) << op.name;
        EXPECT_EQ(n.output("d_a_log"), nullptr) << op.name;
        EXPECT_EQ(n.output("d_dt_bias"), nullptr) << op.name;
        break;
      case Kind::SUM:
        EXPECT_EQ(n.output("H")->get_dim(), (D{3, 4, 6, 8})) << op.name;
        EXPECT_EQ(n.output("M")->get_dim(), (D{3, 4, 8, 8})) << op.name;
        EXPECT_EQ(n.output("M")->get_data_type(), DataType::FLOAT) << op.name;
        break;
      case Kind::SUM_BWD:
        EXPECT_EQ(n.output("G")->get_dim(), (D{3, 4, 6, 8})) << op.name;
        EXPECT_EQ(n.output("G")->get_data_type(), DataType::FLOAT) << op.name;
        EXPECT_EQ(n.output("transition"), nullptr) << op.name;
        break;
    }
  }
}

TEST(LinearAttentionIr, QueryGroupedHeadsUseHqAsOutputHeads) {
  // GQA direction: HQ = 4 > HK = HV = 2, so HO = HQ = 4.
  Cfg c;
  c.hq = 4;
  c.hk = 2;
  c.hv = 2;
  for (const char* name : {"gdn", "kda", "gdn2", "gdp"}) {
    Built b = build(op_named(name), c);
    ASSERT_TRUE(b.g.validate().is_good()) << name;
    EXPECT_EQ(b.node().output("O")->get_dim(), (D{10, 4, 6})) << name;
  }
}

TEST(LinearAttentionIr, ConditionalOutputsFollowAttributesAndInputs) {
  Cfg c;
  c.init = true;
  c.a_log = true;
  c.dt_bias = true;
  c.d_final = true;
  for (const char* name : {"gdn", "kda", "gdn2", "gdp"}) {
    Built f = build(op_named(name), c, Attributes().set("output_final_state", true).set("safe_gate", true));
    ASSERT_TRUE(f.g.validate().is_good()) << name << f.g.validate().to_string();
    ASSERT_NE(f.node().output("final_state"), nullptr);
    EXPECT_EQ(f.node().output("final_state")->get_dim(), (D{3, 4, 6, 8})) << name;
    EXPECT_EQ(f.node().output("final_state")->get_data_type(), DataType::FLOAT) << name;

    Built bw = build(op_named(std::string(name) + "_bwd"), c, Attributes().set("safe_gate", true));
    Status s = bw.g.validate();
    ASSERT_TRUE(s.is_good()) << name << ": " << s.to_string();
    ASSERT_NE(bw.node().output("d_initial_state"), nullptr) << name;
    EXPECT_EQ(bw.node().output("d_initial_state")->get_dim(), (D{3, 4, 6, 8}));
    ASSERT_NE(bw.node().output("d_a_log"), nullptr) << name;
    EXPECT_EQ(bw.node().output("d_a_log")->get_dim(), (D{4}));
    ASSERT_NE(bw.node().output("d_dt_bias"), nullptr) << name;
    EXPECT_EQ(bw.node().output("d_dt_bias")->get_dim(), (vector_gate(op_named(name).fam) ? D{4, 8} : D{4}));

    // safe_gate with only dt_bias: d_a_log is not produced.
    Cfg only_bias = c;
    only_bias.a_log = false;
    Built ob = build(op_named(std::string(name) + "_bwd"), only_bias, Attributes().set("safe_gate", true));
    ASSERT_TRUE(ob.g.validate().is_good()) << name;
    EXPECT_EQ(ob.node().output("d_a_log"), nullptr);
    EXPECT_NE(ob.node().output("d_dt_bias"), nullptr);

    Built sb = build(op_named(std::string(name) + "_summary_bwd"), Cfg{}, Attributes().set("output_transition", true));
    ASSERT_TRUE(sb.g.validate().is_good()) << name;
    ASSERT_NE(sb.node().output("transition"), nullptr);
    EXPECT_EQ(sb.node().output("transition")->get_dim(), (D{3, 4, 8, 8}));
  }
}

TEST(LinearAttentionIr, StatePoolFinalStateTakesThePoolShape) {
  Cfg c;
  c.init = true;
  c.pool = true;
  c.n_pool = 7;
  for (const char* name : {"gdn", "kda", "gdn2", "gdp"}) {
    Built b = build(op_named(name), c,
                    Attributes().set("output_final_state", true).set("overwrite_initial_state", true));
    Status s = b.g.validate();
    ASSERT_TRUE(s.is_good()) << name << ": " << s.to_string();
    EXPECT_EQ(b.node().output("final_state")->get_dim(), (D{7, 4, 6, 8})) << name;
  }
}

TEST(LinearAttentionIr, BfloatStateKeepsItsDtypeAndLinearGateAccepted) {
  Cfg c;
  c.init = true;
  Built b = build(op_named("kda"), c, Attributes().set("output_final_state", true).set("gate_domain", "linear"),
                  [](Built& x) { x.init->set_data_type(DataType::BFLOAT16); });
  ASSERT_TRUE(b.g.validate().is_good());
  EXPECT_EQ(b.node().output("final_state")->get_data_type(), DataType::BFLOAT16);
}

TEST(LinearAttentionIr, EveryOpRoundTripsThroughJson) {
  for (const auto& op : all_ops()) {
    Cfg c;
    Attributes a;
    if (op.kind == Kind::FWD || op.kind == Kind::BWD) {
      c.init = true;
      c.d_final = op.kind == Kind::BWD;
      a.set("checkpoint_every_n_tokens", 128);
    }
    if (op.kind == Kind::FWD) a.set("output_final_state", true);
    if (op.kind == Kind::SUM_BWD) a.set("output_transition", true);
    if (op.fam == Fam::GDP) c.n = 2;
    c.a_log = true;
    c.dt_bias = true;
    a.set("safe_gate", true).set("use_qk_l2norm", true).set("use_beta_sigmoid", true).set("allow_neg_eigval", true);
    a.set("batch_invariant", true);
    if (op.kind != Kind::SUM) a.set("scale", 0.25);  // the forward summary reads no q, so has no scale
    Built b = build(op, c, a);
    for (const auto& port : b.node().outputs())
      for (const auto& t : port) t->set_output(true);
    ASSERT_TRUE(b.g.validate().is_good()) << op.name << ": " << b.g.validate().to_string();
    auto s1 = b.g.serialize();
    ASSERT_TRUE(s1.is_good()) << op.name;
    auto g2 = OpGraph::deserialize(s1.value());
    ASSERT_TRUE(g2.is_good()) << op.name << ": " << g2.status().to_string();
    ASSERT_TRUE(g2->validate().is_good()) << op.name;
    EXPECT_EQ(g2->serialize().value(), s1.value()) << op.name;
    EXPECT_EQ(g2->key().value(), b.g.key().value()) << op.name;
    const Node& n2 = *g2->nodes().back();
    EXPECT_EQ(n2.op(), op.name);
    EXPECT_TRUE(n2.get_bool("safe_gate"));
    EXPECT_EQ(n2.outputs().size(), b.node().outputs().size());
    for (std::size_t i = 0; i < n2.outputs().size(); ++i) {
      ASSERT_EQ(n2.outputs()[i].size(), b.node().outputs()[i].size()) << op.name << " output " << i;
      if (!n2.outputs()[i].empty()) {
        EXPECT_EQ(n2.outputs()[i][0]->get_dim(), b.node().outputs()[i][0]->get_dim()) << op.name;
      }
    }
  }
}

// checkpoint_every_n_tokens = c > 0 gives every forward op a third output, state_checkpoints: [floor(T n / c),
// HO, V, K] in the final state's type unless the caller declares the rows (any count; HO, V, K must agree).
// Without a cadence the output does not exist (the builders return null there).
TEST(LinearAttentionIr, CheckpointCadenceAddsTheStateCheckpointsOutput) {
  Cfg c;
  c.cu = {0, 100, 100, 230};  // T = 230
  c.init = true;
  for (const char* name : {"gdn", "kda", "gdn2", "gdp"}) {
    Cfg cn = c;
    if (std::string(name) == "gdp") cn.n = 2;  // sub-steps count: floor(230 * 2 / 64) = 7 rows
    Built none = build(op_named(name), cn, Attributes());
    ASSERT_TRUE(none.g.validate().is_good()) << name;
    EXPECT_EQ(none.node().output("state_checkpoints"), nullptr) << name;
    Built b = build(op_named(name), cn, Attributes().set("checkpoint_every_n_tokens", 64),
                    [](Built& x) { x.init->set_data_type(DataType::BFLOAT16); });
    Status s = b.g.validate();
    ASSERT_TRUE(s.is_good()) << name << ": " << s.to_string();
    const TensorPtr ck = b.node().output("state_checkpoints");
    ASSERT_NE(ck, nullptr) << name;
    EXPECT_EQ(ck->get_dim(), (D{cn.n == 2 ? 7 : 3, 4, 6, 8})) << name;
    EXPECT_EQ(ck->get_data_type(), DataType::BFLOAT16) << name;  // the state's type
  }
  // The caller's exact count (or any other) is kept; a wrong head extent or an integer type is refused by name.
  for (std::int64_t rows : {0, 2, 9}) {
    Built b = build(op_named("gdn"), c, Attributes().set("checkpoint_every_n_tokens", 64));
    b.node().output("state_checkpoints")->set_dim({rows, 4, 6, 8}).set_stride(Tensor::packed_strides({rows, 4, 6, 8}));
    Status s = b.g.validate();
    ASSERT_TRUE(s.is_good()) << rows << ": " << s.to_string();
    EXPECT_EQ(b.node().output("state_checkpoints")->get_dim()[0], rows);
  }
  Built wrong = build(op_named("gdn"), c, Attributes().set("checkpoint_every_n_tokens", 64));
  wrong.node().output("state_checkpoints")->set_dim({3, 2, 6, 8}).set_stride(Tensor::packed_strides({3, 2, 6, 8}));
  Status ws = wrong.g.validate();
  EXPECT_EQ(ws.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(ws.message().find("checkpoints: dims must be [R, HO, V, K]"), std::string::npos) << ws.message();
  EXPECT_NE(ws.message().find("state_checkpoints"), std::string::npos) << ws.message();
  Built integer = build(op_named("gdn"), c, Attributes().set("checkpoint_every_n_tokens", 64));
  integer.node().output("state_checkpoints")->set_data_type(DataType::INT32);
  Status is = integer.g.validate();
  EXPECT_EQ(is.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(is.message().find("checkpoints: data type must be floating"), std::string::npos) << is.message();
}

// The backward ops take the forward's state_checkpoints as an optional input: [R, HO, V, K], floating, any R (the
// engine that reads it checks the rows the batch needs), and only with the cadence set.
TEST(LinearAttentionIr, BackwardTakesTheForwardsCheckpoints) {
  Cfg c;
  c.cu = {0, 100, 100, 230};
  c.init = true;
  for (const char* name : {"gdn_bwd", "kda_bwd", "gdn2_bwd", "gdp_bwd"}) {
    ASSERT_NE(find_op_spec(name)->find_input("state_checkpoints"), nullptr) << name;
    EXPECT_TRUE(find_op_spec(name)->find_input("state_checkpoints")->optional) << name;
    Cfg cn = c;
    cn.ckpt_rows = 3;
    Built b = build(op_named(name), cn, Attributes().set("checkpoint_every_n_tokens", 64));
    Status s = b.g.validate();
    ASSERT_TRUE(s.is_good()) << name << ": " << s.to_string();
    EXPECT_EQ(b.node().input("state_checkpoints"), b.ckpt) << name;
    // Without a cadence the input has no meaning: refused by name.
    Built none = build(op_named(name), cn, Attributes());
    Status ns = none.g.validate();
    EXPECT_EQ(ns.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << name;
    EXPECT_NE(ns.message().find("state_checkpoints is bound but checkpoint_every_n_tokens is 0"), std::string::npos)
        << ns.message();
    EXPECT_NE(ns.message().find("state_checkpoints"), std::string::npos) << ns.message();
  }
  Cfg cw = c;
  cw.ckpt_rows = 3;
  Built wrong = build(op_named("gdn_bwd"), cw, Attributes().set("checkpoint_every_n_tokens", 64),
                      [](Built& x) { x.ckpt->set_dim({3, 2, 6, 8}).set_stride(Tensor::packed_strides({3, 2, 6, 8})); });
  Status ws = wrong.g.validate();
  EXPECT_EQ(ws.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(ws.message().find("checkpoints: dims must be [R, HO, V, K] = [R, 4, 6, 8]"), std::string::npos)
      << ws.message();
  Built integer = build(op_named("gdn_bwd"), cw, Attributes().set("checkpoint_every_n_tokens", 64),
                        [](Built& x) { x.ckpt->set_data_type(DataType::INT32); });
  EXPECT_EQ(integer.g.validate().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
}
