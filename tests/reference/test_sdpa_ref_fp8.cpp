// fp8 SDPA reference kernels against the float64 sdpa / sdpa_backward on the
// dequantized values:
//   * per-tensor fp8 forward: O / Scale_O within the fp8 quantization of P
//     (E4M3: 2^-4 relative, so |dO| <= 2^-4 max|V| + fp16 rounding); Amax_S equals
//     max exp(Max - Stats) of the float64 run, Amax_O equals max |O| (fp32 / fp16
//     rounding); descales are a pure rescaling (bitwise equal outputs).
//   * per-tensor fp8 backward: gradients within the fp8 quantization of P (E4M3)
//     and dS (E5M2, 2^-3): atol 0.15 max|grad|; Amax_dP equals max |dS| = max |dBias|
//     of the float64 run with a full-shape Bias (1e-5 relative).
//   * MXFP8 forward and backward: block scales dequantize exactly (powers of two),
//     and P / dS are not re-quantized, so the match is to float32 output rounding;
//     the scales sit in F8_128x4 tiles (block axis contiguous), which the expected
//     values read through layout_128x4.h's independent formula.
#include "layout_128x4.h"
#include "sdpa_ref_fixture.h"

using namespace sdpa_ref_test;

namespace {

Values run(OpGraph& g, const Values& in) {
  Status st = g.validate();
  EXPECT_TRUE(st.is_good()) << st.to_string();
  auto r = run_reference(g, in);
  EXPECT_TRUE(r.is_good()) << r.status().to_string();
  return r.is_good() ? *r : Values{};
}

Array scaled_copy(Array a, double s) {
  for (double& x : a.v) x *= s;
  return a;
}

TensorPtr scalar_in(OpGraph& g, const char* name) { return g.tensor({1, 1, 1, 1}, DataType::FLOAT, name); }

// Random values rounded to `t`.
Array rounded(const D& dims, std::uint64_t seed, DataType t, double lo = -1.0, double hi = 1.0) {
  Array a = random_array(dims, seed, lo, hi);
  for (double& x : a.v) x = reference::round_to(t, x);
  return a;
}

const Shape kS{1, 2, 2, 2, 4, 6, 4, 3};

// Each head h of `a` times s[h].
Array scaled_heads(Array a, const double* s) {
  for_each_index(a.dims, [&](std::span<const std::int64_t> i) { a[a.offset(i)] *= s[i[1]]; });
  return a;
}

// Per-tensor fp8 forward graph; scales as named inputs.
void build_fp8_fwd(OpGraph& g) {
  auto fp8 = [&](const D& d, const char* n) { return g.tensor(d, DataType::FP8_E4M3, n); };
  SdpaFp8Scales s{scalar_in(g, "dq"), scalar_in(g, "dk"), scalar_in(g, "dv"), scalar_in(g, "ds"),
                  scalar_in(g, "ss"), scalar_in(g, "so")};
  auto out = g.sdpa_fp8(fp8(q_dims(kS), "q"), fp8(k_dims(kS), "k"), fp8(v_dims(kS), "v"), s,
                        Attributes().set("use_causal_mask_bottom_right", true));
  out.O->set_output(true).set_name("o").set_data_type(DataType::HALF);
  out.Amax_S->set_output(true).set_name("amax_s");
  out.Amax_O->set_output(true).set_name("amax_o");
}

void build_double_fwd(OpGraph& g, const Shape& s, const Attributes& a, const D* bias_dims = nullptr) {
  SdpaInputs in;
  if (bias_dims) in.bias = g.tensor(*bias_dims, DataType::DOUBLE, "bias");
  Attributes x = a;
  x.set("generate_stats", true).set("score_max", true);
  auto out = g.sdpa(g.tensor(q_dims(s), DataType::DOUBLE, "q"), g.tensor(k_dims(s), DataType::DOUBLE, "k"),
                    g.tensor(v_dims(s), DataType::DOUBLE, "v"), x, in);
  out.O->set_output(true).set_name("o").set_data_type(DataType::DOUBLE);
  out.Stats->set_output(true).set_name("stats").set_data_type(DataType::DOUBLE);
  out.Max->set_output(true).set_name("max").set_data_type(DataType::DOUBLE);
}

}  // namespace

TEST(SdpaRefFp8, ForwardMatchesDequantizedFloat64) {
  Values in{{"q", rounded(q_dims(kS), 1, DataType::FP8_E4M3)}, {"k", rounded(k_dims(kS), 2, DataType::FP8_E4M3)},
            {"v", rounded(v_dims(kS), 3, DataType::FP8_E4M3)}, {"dq", Array({1, 1, 1, 1}, 0.5)},
            {"dk", Array({1, 1, 1, 1}, 2.0)}, {"dv", Array({1, 1, 1, 1}, 0.25)},
            {"ds", Array({1, 1, 1, 1}, 1.0 / 16)}, {"ss", Array({1, 1, 1, 1}, 16.0)},
            {"so", Array({1, 1, 1, 1}, 8.0)}};
  OpGraph g8;
  build_fp8_fwd(g8);
  Values r8 = run(g8, in);
  ASSERT_FALSE(r8.empty());

  OpGraph gd;
  build_double_fwd(gd, kS, Attributes().set("use_causal_mask_bottom_right", true));
  Values rd = run(gd, {{"q", scaled_copy(in.at("q"), 0.5)}, {"k", scaled_copy(in.at("k"), 2.0)},
                       {"v", scaled_copy(in.at("v"), 0.25)}});
  ASSERT_FALSE(rd.empty());
  const double vmax = max_abs(in.at("v")) * 0.25;
  Array o = r8.at("o");
  for (double& x : o.v) x /= 8.0;
  expect_near_all(o, rd.at("o"), vmax / 16 + 1e-3, "O / Scale_O vs float64");
  double pmax = 0.0;
  for (std::int64_t i = 0; i < rd.at("stats").numel(); ++i)
    pmax = std::max(pmax, std::exp(rd.at("max")[i] - rd.at("stats")[i]));
  EXPECT_NEAR(r8.at("amax_s")[0], pmax, 1e-6 * pmax);
  EXPECT_NEAR(r8.at("amax_o")[0], max_abs(o), 1e-3 * max_abs(o));

  // Descales are a pure rescaling: storing 2 Q with Descale_Q 0.25 gives the same bits.
  Values in2 = in;
  in2["q"] = scaled_copy(in.at("q"), 2.0);
  in2["dq"] = Array({1, 1, 1, 1}, 0.25);
  Values r2 = run(g8, in2);
  EXPECT_EQ(r2.at("o").v, r8.at("o").v);
  EXPECT_EQ(r2.at("amax_s").v, r8.at("amax_s").v);
}

TEST(SdpaRefFp8, BackwardMatchesDequantizedFloat64) {
  const D bias_dims = {1, 2, 4, 6};
  Values in{{"q", rounded(q_dims(kS), 4, DataType::FP8_E4M3)}, {"k", rounded(k_dims(kS), 5, DataType::FP8_E4M3)},
            {"v", rounded(v_dims(kS), 6, DataType::FP8_E4M3)}, {"bias", random_array(bias_dims, 7)}};
  // Float64 forward on the dequantized values gives O and Stats; dO is random fp16.
  OpGraph gd;
  build_double_fwd(gd, kS, Attributes().set("use_causal_mask", true), &bias_dims);
  Values rd = run(gd, in);
  ASSERT_FALSE(rd.empty());
  Array o16 = rd.at("o"), dO = rounded(o_dims(kS), 8, DataType::HALF);
  for (double& x : o16.v) x = reference::round_to(DataType::HALF, x);

  OpGraph g8;
  {
    auto fp8 = [&](const D& d, const char* n) { return g8.tensor(d, DataType::FP8_E4M3, n); };
    SdpaFp8BackwardScales s;
    for (auto [ptr, name] : {std::pair{&s.descale_q, "d_q"}, {&s.descale_k, "d_k"}, {&s.descale_v, "d_v"},
                             {&s.descale_o, "d_o"}, {&s.descale_dO, "d_do"}, {&s.descale_s, "d_s"},
                             {&s.descale_dP, "d_dp"}, {&s.scale_s, "s_s"}, {&s.scale_dQ, "s_dq"},
                             {&s.scale_dK, "s_dk"}, {&s.scale_dV, "s_dv"}, {&s.scale_dP, "s_dp"}})
      *ptr = scalar_in(g8, name);
    SdpaBackwardInputs bi;
    bi.bias = g8.tensor(bias_dims, DataType::DOUBLE, "bias");
    auto r = g8.sdpa_fp8_backward(fp8(q_dims(kS), "q"), fp8(k_dims(kS), "k"), fp8(v_dims(kS), "v"),
                                  g8.tensor(o_dims(kS), DataType::HALF, "o"), g8.tensor(o_dims(kS), DataType::HALF, "dO"),
                                  g8.tensor({1, 2, 4, 1}, DataType::FLOAT, "stats"), s,
                                  Attributes().set("use_causal_mask", true), bi);
    r.dQ->set_output(true).set_name("dq").set_data_type(DataType::HALF);
    r.dK->set_output(true).set_name("dk").set_data_type(DataType::HALF);
    r.dV->set_output(true).set_name("dv").set_data_type(DataType::HALF);
    r.Amax_dQ->set_output(true).set_name("amax_dq");
    r.Amax_dP->set_output(true).set_name("amax_dp");
  }
  Values in8 = in;
  in8["o"] = o16;
  in8["dO"] = dO;
  in8["stats"] = rd.at("stats");
  for (const char* n : {"d_q", "d_k", "d_v", "d_o", "d_do", "d_s", "d_dp", "s_s", "s_dq", "s_dk", "s_dv", "s_dp"})
    in8[n] = Array({1, 1, 1, 1}, 1.0);
  Values r8 = run(g8, in8);
  ASSERT_FALSE(r8.empty());

  OpGraph gb;
  Opts o;
  o.s = kS;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    a.set("use_causal_mask", true);
    e.bias = g.tensor({1, 2, 4, 6}, DataType::DOUBLE, "bias");
  };
  build_bwd(gb, o, true);
  Values inb = in;
  inb["o"] = o16;
  inb["dO"] = dO;
  inb["stats"] = rd.at("stats");
  Values rb = run(gb, inb);
  ASSERT_FALSE(rb.empty());
  for (const char* g : {"dq", "dk", "dv"})
    expect_near_all(r8.at(g), rb.at(g), 0.15 * max_abs(rb.at(g)) + 1e-3, g);
  EXPECT_NEAR(r8.at("amax_dq")[0], max_abs(r8.at("dq")), 1e-3 * max_abs(r8.at("dq")));
  const double ds = max_abs(rb.at("dbias"));  // b = 1 and a full-shape Bias: dBias = dS
  EXPECT_NEAR(r8.at("amax_dp")[0], ds, 1e-5 * ds);
}

namespace {

// The block axis of an MXFP8 scale of `dims`: the one padded to 4 (2 when axis 2 is no multiple of 128).
std::size_t mx_axis(const D& dims) { return dims[2] % 128 != 0 ? 2 : 3; }

// An F8_128x4 E8M0 scale; its block axis contiguous, as the 128x4 layout wants.
TensorPtr mx_scale(OpGraph& g, const D& dims, const char* name) {
  Tensor t;
  t.set_dim(dims).set_stride(layout_128x4::strides(dims, mx_axis(dims))).set_data_type(DataType::FP8_E8M0).set_name(name);
  t.set_reordering_type(TensorReordering::F8_128x4);
  return g.tensor(t);
}

// Powers of two 2^e, e uniform in [-2, 2] (exact in E8M0).
Array pow2(const D& dims, std::uint64_t seed) {
  Array a = random_array(dims, seed, -2.49, 2.49);
  for (double& x : a.v) x = std::exp2(std::round(x));
  return a;
}

// data * scale of its block (blocks of 32 along `axis`), written out independently;
// `held` is the scale buffer as the harness wrote it, read through the 128x4 tiles.
Array dequant(const Array& data, const Array& held, int axis) {
  const Array scale = layout_128x4::logical(held, layout_128x4::strides(held.dims, mx_axis(held.dims)), mx_axis(held.dims));
  Array r = data;
  for (std::int64_t n = 0; n < data.dims[0]; ++n)
    for (std::int64_t h = 0; h < data.dims[1]; ++h)
      for (std::int64_t i = 0; i < data.dims[2]; ++i)
        for (std::int64_t j = 0; j < data.dims[3]; ++j)
          r.at({n, h, i, j}) *= axis == 3 ? scale.at({n, h, i, j / 32}) : scale.at({n, h, i / 32, j});
  return r;
}

}  // namespace

TEST(SdpaRefMxfp8, ForwardMatchesDequantizedFloat64) {
  // Q [1, 1, 40, 64] (2 blocks along d), K [1, 1, 70, 64], V [1, 1, 70, 8] (3 blocks along s_kv).
  const Shape s{1, 1, 1, 1, 40, 70, 64, 8};
  OpGraph g;
  auto fp8 = [&](const D& d, const char* n) { return g.tensor(d, DataType::FP8_E4M3, n); };
  SdpaMxfp8Scales sc{mx_scale(g, {1, 1, 128, 4}, "sq"), mx_scale(g, {1, 1, 128, 4}, "sk"),
                     mx_scale(g, {1, 1, 4, 128}, "sv")};
  auto out = g.sdpa_mxfp8(fp8(q_dims(s), "q"), fp8(k_dims(s), "k"), fp8(v_dims(s), "v"), sc,
                          Attributes().set("generate_stats", true).set("attn_scale", 0.125));
  out.O->set_output(true).set_name("o").set_data_type(DataType::FLOAT);
  out.Stats->set_output(true).set_name("stats");
  out.Amax_O->set_output(true).set_name("amax_o");
  Values in{{"q", rounded(q_dims(s), 1, DataType::FP8_E4M3)}, {"k", rounded(k_dims(s), 2, DataType::FP8_E4M3)},
            {"v", rounded(v_dims(s), 3, DataType::FP8_E4M3)}, {"sq", pow2({1, 1, 128, 4}, 4)},
            {"sk", pow2({1, 1, 128, 4}, 5)}, {"sv", pow2({1, 1, 4, 128}, 6)}};
  Values r = run(g, in);
  ASSERT_FALSE(r.empty());
  OpGraph gd;
  build_double_fwd(gd, s, Attributes().set("attn_scale", 0.125));
  Values rd = run(gd, {{"q", dequant(in.at("q"), in.at("sq"), 3)}, {"k", dequant(in.at("k"), in.at("sk"), 3)},
                       {"v", dequant(in.at("v"), in.at("sv"), 2)}});
  ASSERT_FALSE(rd.empty());
  const double omax = max_abs(rd.at("o"));
  expect_near_all(r.at("o"), rd.at("o"), 1e-6 * omax, "o");
  expect_near_all(r.at("stats"), rd.at("stats"), 1e-5, "stats");
  EXPECT_NEAR(r.at("amax_o")[0], omax, 1e-6 * omax);
}

TEST(SdpaRefMxfp8, BackwardMatchesDequantizedFloat64) {
  // Scales constant within each head so the transposed copies dequantize like the originals.
  const Shape s{1, 2, 2, 2, 40, 70, 64, 64};
  auto head_scales = [](const D& dims, double h0, double h1) {
    Array a(dims);
    for_each_index(dims, [&](std::span<const std::int64_t> i) { a[a.offset(i)] = i[1] == 0 ? h0 : h1; });
    return a;
  };
  Values in{{"q", rounded(q_dims(s), 1, DataType::FP8_E4M3)}, {"k", rounded(k_dims(s), 2, DataType::FP8_E4M3)},
            {"v", rounded(v_dims(s), 3, DataType::FP8_E4M3)}, {"dO", rounded(o_dims(s), 4, DataType::FP8_E4M3)}};
  const double sq[2] = {0.5, 2.0}, sk[2] = {1.0, 0.25}, sv[2] = {2.0, 0.5}, sdo[2] = {0.25, 1.0};
  Values dq{{"q", scaled_heads(in.at("q"), sq)}, {"k", scaled_heads(in.at("k"), sk)},
            {"v", scaled_heads(in.at("v"), sv)}};
  OpGraph gd;
  build_double_fwd(gd, s, Attributes().set("use_causal_mask_bottom_right", true).set("attn_scale", 0.125));
  Values rd = run(gd, dq);
  ASSERT_FALSE(rd.empty());
  Array o = rd.at("o");
  for (double& x : o.v) x = reference::round_to(DataType::FLOAT, x);

  OpGraph g;
  auto fp8 = [&](const D& d, const char* n) { return g.tensor(d, DataType::FP8_E4M3, n); };
  SdpaMxfp8BackwardOperands m;
  m.q_t = fp8(q_dims(s), "q_t");
  m.k_t = fp8(k_dims(s), "k_t");
  m.dO_t = fp8(o_dims(s), "dO_t");
  const D along_d = {1, 2, 128, 4}, along_s_q = {1, 2, 4, 128}, along_s_kv = {1, 2, 4, 128};
  m.descale_q = mx_scale(g, along_d, "s_q");
  m.descale_q_t = mx_scale(g, along_s_q, "s_qt");
  m.descale_k = mx_scale(g, along_d, "s_k");
  m.descale_k_t = mx_scale(g, along_s_kv, "s_kt");
  m.descale_v = mx_scale(g, along_d, "s_v");
  m.descale_dO = mx_scale(g, along_d, "s_do");
  m.descale_dO_t = mx_scale(g, along_s_q, "s_dot");
  auto r = g.sdpa_mxfp8_backward(fp8(q_dims(s), "q"), fp8(k_dims(s), "k"), fp8(v_dims(s), "v"),
                                 g.tensor(o_dims(s), DataType::FLOAT, "o"), fp8(o_dims(s), "dO"),
                                 g.tensor({1, 2, 40, 1}, DataType::FLOAT, "stats"), m,
                                 Attributes().set("use_causal_mask_bottom_right", true).set("attn_scale", 0.125));
  for (auto [t, n] : {std::pair{r.dQ, "dq"}, {r.dK, "dk"}, {r.dV, "dv"}})
    t->set_output(true).set_name(n).set_data_type(DataType::FLOAT);
  r.Amax_dK->set_output(true).set_name("amax_dk");
  Values in8 = in;
  in8["q_t"] = in.at("q");
  in8["k_t"] = in.at("k");
  in8["dO_t"] = in.at("dO");
  in8["o"] = o;
  in8["stats"] = rd.at("stats");
  in8["s_q"] = head_scales(along_d, sq[0], sq[1]);
  in8["s_qt"] = head_scales(along_s_q, sq[0], sq[1]);
  in8["s_k"] = head_scales(along_d, sk[0], sk[1]);
  in8["s_kt"] = head_scales(along_s_kv, sk[0], sk[1]);
  in8["s_v"] = head_scales(along_d, sv[0], sv[1]);
  in8["s_do"] = head_scales(along_d, sdo[0], sdo[1]);
  in8["s_dot"] = head_scales(along_s_q, sdo[0], sdo[1]);
  Values r8 = run(g, in8);
  ASSERT_FALSE(r8.empty());

  Opts ob;
  ob.s = s;
  ob.extra = [](OpGraph&, Extras&, Attributes& a) {
    a.set("use_causal_mask_bottom_right", true).set("attn_scale", 0.125);
  };
  OpGraph gb;
  build_bwd(gb, ob);
  Values inb = dq;
  inb["o"] = o;
  inb["dO"] = scaled_heads(in.at("dO"), sdo);
  inb["stats"] = rd.at("stats");
  Values rb = run(gb, inb);
  ASSERT_FALSE(rb.empty());
  for (const char* n : {"dq", "dk", "dv"}) expect_near_all(r8.at(n), rb.at(n), 1e-6 * max_abs(rb.at(n)), n);
  EXPECT_NEAR(r8.at("amax_dk")[0], max_abs(rb.at("dk")), 1e-6 * max_abs(rb.at("dk")));
}
