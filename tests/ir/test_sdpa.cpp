// The captured SDPA family, valid graphs: every op builds, infers its output
// dims/types, honours its conditional outputs, validates and round-trips
// through JSON. Refusals are in test_sdpa_rules*.cpp.
#include "sdpa_ir_util.h"

using namespace sdpa_test;

TEST(SdpaIr, AllSixOpsAreCapturedRecords) {
  for (const char* op : {"sdpa", "sdpa_backward", "sdpa_fp8", "sdpa_fp8_backward", "sdpa_mxfp8",
                         "sdpa_mxfp8_backward"}) {
    const OpSpec* s = find_op_spec(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_EQ(s->mechanism, OpMechanism::CAPTURED) << op;
    EXPECT_EQ(s->input_index("Q"), 0) << op;
  }
  const OpSpec* f = find_op_spec("sdpa");
  for (const char* p : {"Q", "K", "V", "Attn_scale", "Bias", "SEQ_LEN_Q", "SEQ_LEN_KV", "Seed", "Offset",
                        "Dropout_mask", "Dropout_scale", "Page_table_K", "Page_table_V", "Block_mask", "SINK_TOKEN"})
    EXPECT_GE(f->input_index(p), 0) << p;
  for (const char* p : {"O", "Stats", "Max", "Sum_exp", "RNG_DUMP"}) EXPECT_GE(f->output_index(p), 0) << p;
  const OpSpec* b = find_op_spec("sdpa_backward");
  for (const char* p : {"dQ", "dK", "dV", "dBias", "RNG_DUMP", "DSINK_TOKEN"}) EXPECT_GE(b->output_index(p), 0) << p;
  EXPECT_GE(find_op_spec("sdpa_fp8")->output_index("Amax_S"), 0);
  EXPECT_LT(find_op_spec("sdpa_mxfp8")->output_index("Amax_S"), 0);
  EXPECT_GE(find_op_spec("sdpa_fp8_backward")->output_index("Amax_dP"), 0);
  EXPECT_GE(find_op_spec("sdpa_mxfp8_backward")->input_index("dO_T"), 0);
}

TEST(SdpaIr, ForwardGqaInfersOAndStats) {
  Fwd f;
  f.a.set("generate_stats", true);
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  ASSERT_TRUE(f.g.validate().is_good()) << f.g.validate().to_string();
  EXPECT_EQ(f.out.O->get_dim(), (D{2, 4, 8, 8}));
  EXPECT_EQ(f.out.O->get_stride(), (D{256, 64, 8, 1}));
  EXPECT_EQ(f.out.Stats->get_dim(), (D{2, 4, 8, 1}));
  EXPECT_EQ(f.out.Stats->get_data_type(), DataType::FLOAT);
  EXPECT_EQ(f.out.Max, nullptr);
  EXPECT_EQ(f.out.Sum_exp, nullptr);
  EXPECT_EQ(f.out.RNG_DUMP, nullptr);
  expect_round_trip(f.g);
}

TEST(SdpaIr, ForwardWithoutStatsHasNoStatsOutput) {
  Fwd f;
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  ASSERT_TRUE(f.g.validate().is_good());
  EXPECT_EQ(f.out.Stats, nullptr);
  EXPECT_EQ(f.g.nodes()[0]->output("Stats"), nullptr);
}

TEST(SdpaIr, ForwardEveryFeatureAtOnce) {
  Fwd f;
  f.padding();
  f.a.set("generate_stats", true).set("score_max", true).set("score_sum_exp", true).set("attn_scale", 0.25);
  f.a.set("use_alibi_mask", true).set("use_causal_mask_bottom_right", true).set("sliding_window_length", 4);
  f.a.set("dropout_probability", 0.1).set("rng_dump", true).set("implementation", "COMPOSITE");
  f.in.bias = f.g.tensor({1, 4, 8, 12}, DataType::HALF, "bias");
  f.in.seed = f.g.tensor_scalar_int(7);
  f.in.offset = f.g.tensor_scalar_int(3);
  f.in.sink_token = f.g.tensor({1, 4, 1, 1}, DataType::FLOAT, "sink");
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  Status s = f.g.validate();
  ASSERT_TRUE(s.is_good()) << s.to_string();
  for (auto t : {f.out.Stats, f.out.Max, f.out.Sum_exp}) {
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->get_dim(), (D{2, 4, 8, 1}));
  }
  ASSERT_NE(f.out.RNG_DUMP, nullptr);
  EXPECT_EQ(f.out.RNG_DUMP->get_dim(), (D{2, 4, 8, 12}));
  auto band = f.g.nodes()[0];
  EXPECT_TRUE(band->get_bool("use_causal_mask_bottom_right"));
  expect_round_trip(f.g);
}

TEST(SdpaIr, ForwardBshdStridesKeepBhsdDims) {
  Fwd f;
  f.q = f.g.tensor({2, 4, 8, 16}, DataType::HALF, "q_bshd", {8 * 4 * 16, 16, 4 * 16, 1});
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  f.out.O->set_stride({8 * 4 * 8, 8, 4 * 8, 1}).set_output(true);
  ASSERT_TRUE(f.g.validate().is_good());
  EXPECT_EQ(f.out.O->get_dim(), (D{2, 4, 8, 8}));
  EXPECT_EQ(f.out.O->get_stride(), (D{256, 8, 32, 1}));
  expect_round_trip(f.g);
}

TEST(SdpaIr, ForwardPagedKvCaches) {
  Fwd f;
  f.padding();
  f.k = f.g.tensor({6, 2, 4, 16}, DataType::HALF, "k_cache");
  f.v = f.g.tensor({6, 1, 4, 8}, DataType::HALF, "v_cache");
  f.in.page_table_k = f.g.tensor({2, 1, 3, 1}, DataType::INT32, "pt_k");
  f.in.page_table_v = f.g.tensor({2, 1, 3, 1}, DataType::INT32, "pt_v");
  f.a.set("paged_attention_max_seq_len_kv", 12);
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  Status s = f.g.validate();
  ASSERT_TRUE(s.is_good()) << s.to_string();
  EXPECT_EQ(f.out.O->get_dim(), (D{2, 4, 8, 8}));
  expect_round_trip(f.g);
}

TEST(SdpaIr, ForwardRaggedThdOffsets) {
  Fwd f;
  f.padding();
  auto rq = f.g.tensor({3, 1, 1, 1}, DataType::INT32, "ragged_q");
  f.q->set_ragged_offset(rq);
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  f.out.O->set_ragged_offset(f.g.tensor({3, 1, 1, 1}, DataType::INT32, "ragged_o")).set_output(true);
  Status s = f.g.validate();
  ASSERT_TRUE(s.is_good()) << s.to_string();
  expect_round_trip(f.g);
}

TEST(SdpaIr, ForwardBlockMaskAndTensorScale) {
  Fwd f;
  f.in.block_mask = f.g.tensor({1, 4, 1, 1}, DataType::UINT8, "blocks");
  f.in.attn_scale = f.g.tensor_scalar(0.125);
  f.a.set("implementation", "UNIFIED");
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  ASSERT_TRUE(f.g.validate().is_good()) << f.g.validate().to_string();
  expect_round_trip(f.g);
}

TEST(SdpaIr, BackwardInfersGradientsAndOptionalOutputs) {
  Bwd b;
  b.in.bias = b.g.tensor({2, 1, 8, 12}, DataType::HALF, "bias");
  b.in.sink_token = b.g.tensor({1, 4, 1, 1}, DataType::FLOAT, "sink");
  b.a.set("dbias", true).set("dsink_token", true).set("use_causal_mask", true).set("use_deterministic_algorithm", true);
  b.out = b.g.sdpa_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, b.a, b.in);
  Status s = b.g.validate();
  ASSERT_TRUE(s.is_good()) << s.to_string();
  EXPECT_EQ(b.out.dQ->get_dim(), (D{2, 4, 8, 16}));
  EXPECT_EQ(b.out.dK->get_dim(), (D{2, 2, 12, 16}));
  EXPECT_EQ(b.out.dV->get_dim(), (D{2, 1, 12, 8}));
  ASSERT_NE(b.out.dBias, nullptr);
  EXPECT_EQ(b.out.dBias->get_dim(), (D{2, 1, 8, 12}));
  ASSERT_NE(b.out.DSINK_TOKEN, nullptr);
  EXPECT_EQ(b.out.DSINK_TOKEN->get_dim(), (D{1, 4, 1, 1}));
  EXPECT_EQ(b.out.RNG_DUMP, nullptr);
  expect_round_trip(b.g);
}

TEST(SdpaIr, BackwardBiasWithoutDbiasRequestHasNoDbias) {
  Bwd b;
  b.in.bias = b.g.tensor({2, 1, 8, 12}, DataType::HALF, "bias");
  b.out = b.g.sdpa_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, b.a, b.in);
  ASSERT_TRUE(b.g.validate().is_good());
  EXPECT_EQ(b.out.dBias, nullptr);
  EXPECT_EQ(b.out.DSINK_TOKEN, nullptr);
}

TEST(SdpaIr, BackwardThdWithMaxTotalSeqLens) {
  Bwd b;
  b.a.set("use_padding_mask", true).set("max_total_seq_len_q", 12).set("max_total_seq_len_kv", 20);
  b.in.seq_len_q = b.g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
  b.in.seq_len_kv = b.g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
  for (auto t : {b.q, b.o, b.dO}) t->set_ragged_offset(b.g.tensor({3, 1, 1, 1}, DataType::INT32));
  b.out = b.g.sdpa_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, b.a, b.in);
  b.out.dQ->set_ragged_offset(b.q->get_ragged_offset());
  Status s = b.g.validate();
  ASSERT_TRUE(s.is_good()) << s.to_string();
  expect_round_trip(b.g);
}

namespace {

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

TensorPtr mx_scale(OpGraph& g, D dims, const char* name) {
  Tensor t;
  t.set_dim(dims).set_stride(mx_strides(dims)).set_data_type(DataType::FP8_E8M0).set_name(name);
  t.set_reordering_type(TensorReordering::F8_128x4);
  return g.tensor(t);
}

}  // namespace

TEST(SdpaIr, Fp8ForwardDefaultsOToQTypeAndReportsAmax) {
  Fwd f(DataType::FP8_E4M3);
  f.a.set("generate_stats", true).set("use_causal_mask", true);
  f.out = f.g.sdpa_fp8(f.q, f.k, f.v, fp8_scales(f.g), f.a, f.in);
  Status s = f.g.validate();
  ASSERT_TRUE(s.is_good()) << s.to_string();
  EXPECT_EQ(f.out.O->get_data_type(), DataType::FP8_E4M3);
  for (auto t : {f.out.Amax_S, f.out.Amax_O}) {
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->get_dim(), (D{1, 1, 1, 1}));
    EXPECT_EQ(t->get_data_type(), DataType::FLOAT);
  }
  EXPECT_NE(f.out.Stats, nullptr);
  expect_round_trip(f.g);
}

TEST(SdpaIr, Fp8ForwardHalfOutput) {
  Fwd f(DataType::FP8_E5M2);
  f.out = f.g.sdpa_fp8(f.q, f.k, f.v, fp8_scales(f.g), f.a, f.in);
  f.out.O->set_data_type(DataType::BFLOAT16);
  ASSERT_TRUE(f.g.validate().is_good());
  EXPECT_EQ(f.out.O->get_data_type(), DataType::BFLOAT16);
}

TEST(SdpaIr, Fp8BackwardInfersGradsAndFourAmax) {
  Bwd b(DataType::FP8_E4M3);
  auto sc = fp8_bwd_scales(b.g);
  sc.dO_f16 = b.g.tensor({2, 4, 8, 8}, DataType::HALF, "dO_f16");
  b.out = b.g.sdpa_fp8_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, sc, b.a, b.in);
  Status s = b.g.validate();
  ASSERT_TRUE(s.is_good()) << s.to_string();
  EXPECT_EQ(b.out.dK->get_dim(), (D{2, 2, 12, 16}));
  EXPECT_EQ(b.out.dQ->get_data_type(), DataType::FP8_E4M3);
  for (auto t : {b.out.Amax_dQ, b.out.Amax_dK, b.out.Amax_dV, b.out.Amax_dP}) ASSERT_NE(t, nullptr);
  expect_round_trip(b.g);
}

TEST(SdpaIr, Mxfp8ForwardBlockScaleShapes) {
  OpGraph g;
  g.set_io_data_type(DataType::BFLOAT16);
  auto q = g.tensor({1, 2, 64, 64}, DataType::FP8_E4M3, "q");
  auto k = g.tensor({1, 2, 96, 64}, DataType::FP8_E4M3, "k");
  auto v = g.tensor({1, 2, 96, 64}, DataType::FP8_E4M3, "v");
  SdpaMxfp8Scales s{mx_scale(g, {1, 2, 128, 4}, "sq"), mx_scale(g, {1, 2, 128, 4}, "sk"),
                    mx_scale(g, {1, 2, 4, 128}, "sv")};
  auto out = g.sdpa_mxfp8(q, k, v, s, Attributes().set("generate_stats", true));
  Status st = g.validate();
  ASSERT_TRUE(st.is_good()) << st.to_string();
  EXPECT_EQ(out.O->get_data_type(), DataType::BFLOAT16);
  EXPECT_EQ(out.Amax_S, nullptr);
  ASSERT_NE(out.Amax_O, nullptr);
  expect_round_trip(g);
}

TEST(SdpaIr, Mxfp8DescaleBlockAxisMustBeContiguous) {
  // V's scale is blocked along s_kv (axis 2); row-major strides make d (axis 3) the
  // contiguous column axis and the 4-long axis 2 the row axis, which holds no 128-row tile.
  OpGraph g;
  g.set_io_data_type(DataType::BFLOAT16);
  auto q = g.tensor({1, 2, 64, 64}, DataType::FP8_E4M3, "q");
  auto k = g.tensor({1, 2, 96, 64}, DataType::FP8_E4M3, "k");
  auto v = g.tensor({1, 2, 96, 64}, DataType::FP8_E4M3, "v");
  Tensor sv;
  sv.set_dim({1, 2, 4, 128}).set_stride(Tensor::packed_strides({1, 2, 4, 128})).set_data_type(DataType::FP8_E8M0);
  sv.set_reordering_type(TensorReordering::F8_128x4).set_name("sv_rowmajor");
  SdpaMxfp8Scales s{mx_scale(g, {1, 2, 128, 4}, "sq"), mx_scale(g, {1, 2, 128, 4}, "sk"), g.tensor(sv)};
  g.sdpa_mxfp8(q, k, v, s, Attributes().set_name("att"));
  Status st = g.validate();
  ASSERT_EQ(st.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << st.to_string();
  for (const char* f : {"node 'att'", "port Descale_V", "tensor 'sv_rowmajor'", "f8_128x4_layout", "row axis 2 (extent 4)"})
    EXPECT_NE(st.message().find(f), std::string::npos) << f << " missing in: " << st.message();
}

TEST(SdpaIr, Mxfp8BackwardTransposedCopies) {
  OpGraph g;
  g.set_io_data_type(DataType::BFLOAT16);
  auto fp8 = [&](D d, const char* n) { return g.tensor(d, DataType::FP8_E4M3, n); };
  auto q = fp8({1, 2, 64, 64}, "q"), k = fp8({1, 2, 96, 64}, "k"), v = fp8({1, 2, 96, 64}, "v");
  auto o = g.tensor({1, 2, 64, 64}, DataType::BFLOAT16, "o");
  auto dO = fp8({1, 2, 64, 64}, "dO");
  auto stats = g.tensor({1, 2, 64, 1}, DataType::FLOAT, "stats");
  SdpaMxfp8BackwardOperands m;
  m.q_t = fp8({1, 2, 64, 64}, "q_t");
  m.k_t = fp8({1, 2, 96, 64}, "k_t");
  m.dO_t = fp8({1, 2, 64, 64}, "dO_t");
  m.descale_q = mx_scale(g, {1, 2, 128, 4}, "s_q");
  m.descale_q_t = mx_scale(g, {1, 2, 4, 128}, "s_qt");
  m.descale_k = mx_scale(g, {1, 2, 128, 4}, "s_k");
  m.descale_k_t = mx_scale(g, {1, 2, 4, 128}, "s_kt");
  m.descale_v = mx_scale(g, {1, 2, 128, 4}, "s_v");
  m.descale_dO = mx_scale(g, {1, 2, 128, 4}, "s_do");
  m.descale_dO_t = mx_scale(g, {1, 2, 4, 128}, "s_dot");
  auto out = g.sdpa_mxfp8_backward(q, k, v, o, dO, stats, m, Attributes().set("use_causal_mask", true));
  Status st = g.validate();
  ASSERT_TRUE(st.is_good()) << st.to_string();
  EXPECT_EQ(out.dK->get_dim(), (D{1, 2, 96, 64}));
  EXPECT_EQ(out.dQ->get_data_type(), DataType::BFLOAT16);
  EXPECT_EQ(out.Amax_dP, nullptr);
  ASSERT_NE(out.Amax_dV, nullptr);
  expect_round_trip(g);
}
