// Rules of sdpa_backward and the four fp8 records: one invalid graph per rule,
// refused at validate() with the expected code and a message naming op, node,
// port/tensor (or attribute) and the rule.
#include "sdpa_ir_util.h"

using namespace sdpa_test;

namespace {

constexpr ErrorCode kNS = ErrorCode::GRAPH_NOT_SUPPORTED;

struct BwdBad {
  const char* rule;
  const char* where;
  std::function<void(Bwd&)> tweak;
  std::function<void(Bwd&)> after = nullptr;
};

SdpaFp8Scales fp8_scales(OpGraph& g) {
  return {scalar(g, "dq"), scalar(g, "dk"), scalar(g, "dv"), scalar(g, "ds"), scalar(g, "ss"), scalar(g, "so")};
}

SdpaFp8BackwardScales fp8_bwd_scales(OpGraph& g) {
  SdpaFp8BackwardScales s;
  s.descale_q = scalar(g, "d_q"); s.descale_k = scalar(g, "d_k"); s.descale_v = scalar(g, "d_v");
  s.descale_o = scalar(g, "d_o"); s.descale_dO = scalar(g, "d_do"); s.descale_s = scalar(g, "d_s");
  s.descale_dP = scalar(g, "d_dp"); s.scale_s = scalar(g, "s_s"); s.scale_dQ = scalar(g, "s_dq");
  s.scale_dK = scalar(g, "s_dk"); s.scale_dV = scalar(g, "s_dv"); s.scale_dP = scalar(g, "s_dp");
  return s;
}

// Strides of an F8_128x4 MXFP8 scale: its block axis (the one padded to 4: axis 2 when
// that extent is no multiple of 128) contiguous, the other of the last two right outside.
D mx_strides(const D& d) {
  if (d[2] % 128 == 0) return Tensor::packed_strides(d);
  return {d[1] * d[2] * d[3], d[2] * d[3], 1, d[2]};
}

TensorPtr mx_scale(OpGraph& g, D dims, const char* name, DataType t = DataType::FP8_E8M0,
                   TensorReordering r = TensorReordering::F8_128x4) {
  Tensor x;
  x.set_dim(dims).set_stride(mx_strides(dims)).set_data_type(t).set_name(name).set_reordering_type(r);
  return g.tensor(x);
}

}  // namespace

TEST(SdpaIrRules, BackwardEachRuleRefusedAndNamed) {
  const std::vector<BwdBad> cases = {
      {"o_dims", "port O (tensor 'o_bad')", [](Bwd& b) { b.o = b.g.tensor({2, 4, 8, 16}, DataType::HALF, "o_bad"); }},
      {"o_dims", "port dO (tensor 'dO_bad')",
       [](Bwd& b) { b.dO = b.g.tensor({2, 4, 7, 8}, DataType::HALF, "dO_bad"); }},
      {"stats_dims", "port Stats (tensor 'stats_h')",
       [](Bwd& b) { b.stats = b.g.tensor({2, 4, 8, 1}, DataType::HALF, "stats_h"); }},
      {"same_io_dtype", "port O (tensor 'o32')",
       [](Bwd& b) { b.o = b.g.tensor({2, 4, 8, 8}, DataType::FLOAT, "o32"); }},
      {"layout_last_stride", "port dO (tensor 'dO_t')",
       [](Bwd& b) { b.dO = b.g.tensor({2, 4, 8, 8}, DataType::HALF, "dO_t", {256, 64, 1, 8}); }},
      {"dbias_needs_bias", "attribute 'dbias'", [](Bwd& b) { b.a.set("dbias", true); }},
      {"dsink_needs_sink", "attribute 'dsink_token'", [](Bwd& b) { b.a.set("dsink_token", true); }},
      {"max_total_seq_len", "attribute 'max_total_seq_len_q'", [](Bwd& b) { b.a.set("max_total_seq_len_q", 0); }},
      {"ragged_needs_padding_mask", "port dQ (tensor 'attn_bwd::dQ')", [](Bwd&) {},
       [](Bwd& b) { b.out.dQ->set_ragged_offset(b.g.tensor({3, 1, 1, 1}, DataType::INT32, "rdq")); }},
      {"gqa_head_ratio", "port V (tensor 'v3')", [](Bwd& b) { b.v = b.g.tensor({2, 3, 12, 8}, DataType::HALF, "v3"); }},
      {"dropout_mask_pair", "port Dropout_scale_inv (tensor 'inv')",
       [](Bwd& b) { b.in.dropout_scale_inv = scalar(b.g, "inv"); }},
  };
  for (const BwdBad& c : cases) {
    SCOPED_TRACE(c.rule);
    Bwd b;
    c.tweak(b);
    b.out = b.g.sdpa_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, b.a, b.in);
    if (c.after) c.after(b);
    expect_refused(b.g.validate(), kNS, "sdpa_backward", "attn_bwd", c.where, c.rule);
  }
}

TEST(SdpaIrRules, BackwardRequiresStatsPort) {
  Bwd b;
  b.g.sdpa_backward(b.q, b.k, b.v, b.o, b.dO, nullptr, b.a, b.in);
  Status s = b.g.validate();
  EXPECT_EQ(s.code(), ErrorCode::ATTRIBUTE_NOT_SET);
  EXPECT_NE(s.message().find("port Stats"), std::string::npos) << s.message();
}

TEST(SdpaIrRules, Fp8ForwardRules) {
  {  // fp16 Q is not an fp8 graph
    Fwd f;
    f.g.sdpa_fp8(f.q, f.k, f.v, fp8_scales(f.g), f.a, f.in);
    expect_refused(f.g.validate(), kNS, "sdpa_fp8", "attn", "port Q (tensor 'q')", "fp8_io_dtype");
  }
  {  // a descale with two elements
    Fwd f(DataType::FP8_E4M3);
    auto s = fp8_scales(f.g);
    s.descale_v = f.g.tensor({1, 1, 1, 2}, DataType::FLOAT, "dv2");
    f.g.sdpa_fp8(f.q, f.k, f.v, s, f.a, f.in);
    expect_refused(f.g.validate(), kNS, "sdpa_fp8", "attn", "port Descale_V (tensor 'dv2')", "scale_scalar");
  }
  {  // an E8M0 block scale belongs to sdpa_mxfp8
    Fwd f(DataType::FP8_E4M3);
    auto s = fp8_scales(f.g);
    s.descale_q = mx_scale(f.g, {2, 4, 128, 4}, "e8m0");
    f.g.sdpa_fp8(f.q, f.k, f.v, s, f.a, f.in);
    expect_refused(f.g.validate(), kNS, "sdpa_fp8", "attn", "port Descale_Q (tensor 'e8m0')", "fp8_descale_is_mxfp8");
  }
  {  // O may be fp8, HALF or BFLOAT16, not FLOAT
    Fwd f(DataType::FP8_E4M3);
    auto out = f.g.sdpa_fp8(f.q, f.k, f.v, fp8_scales(f.g), f.a, f.in);
    out.O->set_data_type(DataType::FLOAT);
    expect_refused(f.g.validate(), kNS, "sdpa_fp8", "attn", "port O (tensor 'attn::O')", "fp8_output_dtype");
  }
  {  // a missing scale port
    Fwd f(DataType::FP8_E4M3);
    auto s = fp8_scales(f.g);
    s.scale_o = nullptr;
    f.g.sdpa_fp8(f.q, f.k, f.v, s, f.a, f.in);
    Status st = f.g.validate();
    EXPECT_EQ(st.code(), ErrorCode::ATTRIBUTE_NOT_SET);
    EXPECT_NE(st.message().find("port Scale_O"), std::string::npos) << st.message();
  }
}

TEST(SdpaIrRules, Fp8BackwardRules) {
  {
    Bwd b(DataType::FP8_E4M3, DataType::FLOAT);
    b.g.sdpa_fp8_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, fp8_bwd_scales(b.g), b.a, b.in);
    expect_refused(b.g.validate(), kNS, "sdpa_fp8_backward", "attn_bwd", "port O (tensor 'o')", "fp8_io_dtype");
  }
  {
    Bwd b(DataType::FP8_E4M3);
    auto s = fp8_bwd_scales(b.g);
    s.scale_dP = b.g.tensor({1, 1, 1, 1}, DataType::HALF, "sdp_h");
    b.g.sdpa_fp8_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, s, b.a, b.in);
    expect_refused(b.g.validate(), kNS, "sdpa_fp8_backward", "attn_bwd", "port Scale_dP (tensor 'sdp_h')",
                   "scale_scalar");
  }
  {  // fp8 backward has no dbias attribute
    Bwd b(DataType::FP8_E4M3);
    b.a.set("dbias", true);
    b.g.sdpa_fp8_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, fp8_bwd_scales(b.g), b.a, b.in);
    Status s = b.g.validate();
    EXPECT_NE(s.message().find("unknown attribute 'dbias'"), std::string::npos) << s.message();
  }
}

namespace {

struct Mx {
  OpGraph g;
  TensorPtr q, k, v;
  SdpaMxfp8Scales s;
  Mx() {
    g.set_io_data_type(DataType::BFLOAT16);
    q = g.tensor({1, 2, 64, 64}, DataType::FP8_E4M3, "q");
    k = g.tensor({1, 2, 96, 64}, DataType::FP8_E4M3, "k");
    v = g.tensor({1, 2, 96, 64}, DataType::FP8_E4M3, "v");
    s = {mx_scale(g, {1, 2, 128, 4}, "sq"), mx_scale(g, {1, 2, 128, 4}, "sk"), mx_scale(g, {1, 2, 4, 128}, "sv")};
  }
};

}  // namespace

TEST(SdpaIrRules, Mxfp8ForwardRules) {
  {
    Mx m;
    m.s.descale_k = mx_scale(m.g, {1, 2, 128, 4}, "sk_f32", DataType::FLOAT);
    m.g.sdpa_mxfp8(m.q, m.k, m.v, m.s, Attributes().set_name("mx"));
    expect_refused(m.g.validate(), kNS, "sdpa_mxfp8", "mx", "port Descale_K (tensor 'sk_f32')", "mxfp8_descale_dtype");
  }
  {
    Mx m;
    m.s.descale_q = mx_scale(m.g, {1, 2, 128, 4}, "sq_plain", DataType::FP8_E8M0, TensorReordering::NONE);
    m.g.sdpa_mxfp8(m.q, m.k, m.v, m.s, Attributes().set_name("mx"));
    expect_refused(m.g.validate(), kNS, "sdpa_mxfp8", "mx", "port Descale_Q (tensor 'sq_plain')",
                   "mxfp8_descale_reordering");
  }
  {  // V's scales run along s_kv: [1, 2, 4, 128], not Q's orientation
    Mx m;
    m.s.descale_v = mx_scale(m.g, {1, 2, 128, 4}, "sv_wrong");
    m.g.sdpa_mxfp8(m.q, m.k, m.v, m.s, Attributes().set_name("mx"));
    expect_refused(m.g.validate(), kNS, "sdpa_mxfp8", "mx", "port Descale_V (tensor 'sv_wrong')",
                   "mxfp8_descale_shape");
  }
  {
    Mx m;
    auto out = m.g.sdpa_mxfp8(m.q, m.k, m.v, m.s, Attributes().set_name("mx"));
    out.O->set_data_type(DataType::FP8_E4M3);
    expect_refused(m.g.validate(), kNS, "sdpa_mxfp8", "mx", "port O (tensor 'mx::O')", "fp8_output_dtype");
  }
}

TEST(SdpaIrRules, Mxfp8BackwardRules) {
  auto build = [](bool bad_copy, bool bad_v_scale) {
    auto g = std::make_unique<OpGraph>();
    g->set_io_data_type(DataType::BFLOAT16);
    auto fp8 = [&](D d, const char* n) { return g->tensor(d, DataType::FP8_E4M3, n); };
    auto q = fp8({1, 2, 64, 64}, "q"), k = fp8({1, 2, 96, 64}, "k"), v = fp8({1, 2, 96, 64}, "v");
    auto o = g->tensor({1, 2, 64, 64}, DataType::BFLOAT16, "o");
    auto dO = fp8({1, 2, 64, 64}, "dO");
    auto stats = g->tensor({1, 2, 64, 1}, DataType::FLOAT, "stats");
    SdpaMxfp8BackwardOperands m;
    m.q_t = fp8({1, 2, 64, 64}, "q_t");
    m.k_t = bad_copy ? fp8({1, 2, 64, 64}, "k_t_bad") : fp8({1, 2, 96, 64}, "k_t");
    m.dO_t = fp8({1, 2, 64, 64}, "dO_t");
    m.descale_q = mx_scale(*g, {1, 2, 128, 4}, "s_q");
    m.descale_q_t = mx_scale(*g, {1, 2, 4, 128}, "s_qt");
    m.descale_k = mx_scale(*g, {1, 2, 128, 4}, "s_k");
    m.descale_k_t = mx_scale(*g, {1, 2, 4, 128}, "s_kt");
    m.descale_v = bad_v_scale ? mx_scale(*g, {1, 2, 4, 128}, "s_v_fwd") : mx_scale(*g, {1, 2, 128, 4}, "s_v");
    m.descale_dO = mx_scale(*g, {1, 2, 128, 4}, "s_do");
    m.descale_dO_t = mx_scale(*g, {1, 2, 4, 128}, "s_dot");
    g->sdpa_mxfp8_backward(q, k, v, o, dO, stats, m, Attributes().set_name("mxb"));
    return g;
  };
  EXPECT_TRUE(build(false, false)->validate().is_good());
  expect_refused(build(true, false)->validate(), kNS, "sdpa_mxfp8_backward", "mxb", "port K_T (tensor 'k_t_bad')",
                 "mxfp8_transposed_copy");
  expect_refused(build(false, true)->validate(), kNS, "sdpa_mxfp8_backward", "mxb", "port Descale_V (tensor 's_v_fwd')",
                 "mxfp8_descale_shape");
}
