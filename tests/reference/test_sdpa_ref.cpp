// sdpa reference forward: closed forms (causal row 0 = v_0, uniform scores give
// the mean of V, softmax rows sum to one through a V of ones) and every feature
// against the independent naive loop of sdpa_ref_fixture.h. DOUBLE I/O, so the
// tolerance is float64 round-off (1e-12) unless stated.
#include "sdpa_ref_fixture.h"

using namespace sdpa_ref_test;

namespace {
constexpr double kTol = 1e-12;
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST(SdpaRef, CausalRowZeroEqualsFirstValueRow) {
  for (const char* mask : {"use_causal_mask", "use_causal_mask_bottom_right"}) {
    Opts o;
    o.s.s_q = o.s.s_kv = 6;
    o.s.h_k = 1;  // GQA: both query heads read K head 0
    o.extra = [mask](OpGraph&, Extras&, Attributes& a) { a.set(mask, true); };
    Values v = run_fwd(o);
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t t = 0; t < 3; ++t) EXPECT_NEAR(v.at("o").at({n, h, 0, t}), v.at("v").at({n, h, 0, t}), kTol);
  }
}

TEST(SdpaRef, UniformScoresGiveMeanOfValidValues) {
  // Every key row equal -> every score of a row equal -> O = mean of the V rows kept.
  Opts o;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    a.set("use_padding_mask", true);
    e.seq_len_q = g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
    e.seq_len_kv = g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
  };
  Array k = random_array(k_dims(o.s), 11);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t j = 0; j < 7; ++j)
        for (std::int64_t t = 0; t < 4; ++t) k.at({n, h, j, t}) = k.at({n, h, 0, t});
  Values v = run_fwd(o, {{"k", k}, {"sq", ints({2, 1, 1, 1}, {5, 3})}, {"skv", ints({2, 1, 1, 1}, {7, 4})}});
  const std::int64_t skv[2] = {7, 4}, sq[2] = {5, 3};
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 5; ++i)
        for (std::int64_t t = 0; t < 3; ++t) {
          double mean = 0.0;
          for (std::int64_t j = 0; j < skv[n]; ++j) mean += v.at("v").at({n, h, j, t}) / static_cast<double>(skv[n]);
          EXPECT_NEAR(v.at("o").at({n, h, i, t}), i < sq[n] ? mean : 0.0, kTol);
        }
  // Padded rows: Stats = -inf.
  EXPECT_EQ(v.at("stats").at({1, 0, 4, 0}), -kInf);
}

TEST(SdpaRef, SoftmaxRowsSumToOneThroughOnesV) {
  Opts o;
  o.s.s_q = 4;
  o.s.s_kv = 9;
  o.max_sum = true;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    e.bias = g.tensor({1, 2, 4, 9}, DataType::DOUBLE, "bias");
    a.set("use_alibi_mask", true).set("sliding_window_length", 3).set("use_causal_mask_bottom_right", true);
  };
  Values v = run_fwd(o, {{"v", Array(v_dims(o.s), 1.0)}});
  for (double x : v.at("o").v) EXPECT_NEAR(x, 1.0, kTol);
  // Stats = Max + log(Sum_exp).
  for (std::int64_t i = 0; i < v.at("stats").numel(); ++i)
    EXPECT_NEAR(v.at("stats")[i], v.at("max")[i] + std::log(v.at("sum_exp")[i]), kTol);
}

TEST(SdpaRef, SinkTokenTakesItsShareOfTheRow) {
  // With V = 1, O = 1 - P_sink = 1 - exp(sink - Stats).
  Opts o;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    e.sink = g.tensor({1, 2, 1, 1}, DataType::DOUBLE, "sink");
    a.set("use_causal_mask", true);
  };
  Values v = run_fwd(o, {{"v", Array(v_dims(o.s), 1.0)}});
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 5; ++i)
        EXPECT_NEAR(v.at("o").at({n, h, i, 1}),
                    1.0 - std::exp(v.at("sink").at({0, h, 0, 0}) - v.at("stats").at({n, h, i, 0})), kTol);
  Naive nv{o.s};
  nv.keep = [](auto, auto, auto i, auto j) { return j <= i; };
  nv.sink = &v.at("sink");
  auto [on, lse] = nv.run(v.at("q"), v.at("k"), v.at("v"));
  expect_near_all(v.at("stats"), lse, kTol, "stats");
}

TEST(SdpaRef, EveryMaskAndScoreTermMatchesNaiveLoop) {
  // attn_scale, broadcast bias [b, 1, s_q, s_kv], ALiBi, padding with per-batch lengths,
  // bottom-right band with left bound 3 and right bound 1, GQA 4:2:1.
  Opts o;
  o.s = {2, 4, 2, 1, 5, 8, 4, 3};
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    a.set("attn_scale", 0.7).set("use_alibi_mask", true).set("use_padding_mask", true);
    a.set("diagonal_alignment", "BOTTOM_RIGHT").set("diagonal_band_left_bound", 3).set("diagonal_band_right_bound", 1);
    e.bias = g.tensor({2, 1, 5, 8}, DataType::DOUBLE, "bias");
    e.seq_len_q = g.tensor({2, 1, 1, 1}, DataType::INT64, "sq");
    e.seq_len_kv = g.tensor({2, 1, 1, 1}, DataType::INT64, "skv");
  };
  const double sq[2] = {5, 3}, skv[2] = {8, 6};
  Values v = run_fwd(o, {{"sq", ints({2, 1, 1, 1}, {5, 3})}, {"skv", ints({2, 1, 1, 1}, {8, 6})}}, 3);
  Naive nv{o.s};
  nv.scale = 0.7;
  nv.keep = [&](std::int64_t n, auto, std::int64_t i, std::int64_t j) {
    if (i >= sq[n] || j >= skv[n]) return false;
    const double shift = skv[n] - sq[n];  // bottom-right: the last query row meets the last key
    return j - (i + shift) <= 1 && (i + shift) - j < 3;
  };
  const Array& bias = v.at("bias");
  nv.add = [&](std::int64_t n, std::int64_t h, std::int64_t i, std::int64_t j) {
    const double slope = std::pow(2.0, -8.0 * static_cast<double>(h + 1) / 4.0);
    return bias.at({n, 0, i, j}) + slope * static_cast<double>(j - i);
  };
  auto [on, lse] = nv.run(v.at("q"), v.at("k"), v.at("v"));
  expect_near_all(v.at("o"), on, kTol, "o");
  expect_near_all(v.at("stats"), lse, kTol, "stats");
}

TEST(SdpaRef, TensorScaleAndFullyMaskedRows) {
  // Attn_scale as a tensor; seq_len_kv = 0 for batch 1: every row has nothing to attend.
  Opts o;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    a.set("use_padding_mask", true);
    e.attn_scale = g.tensor({1, 1, 1, 1}, DataType::FLOAT, "scale");
    e.seq_len_q = g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
    e.seq_len_kv = g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
  };
  Values v = run_fwd(o, {{"scale", Array({1, 1, 1, 1}, 0.375)},
                         {"sq", ints({2, 1, 1, 1}, {5, 5})}, {"skv", ints({2, 1, 1, 1}, {7, 0})}});
  Naive nv{o.s};
  nv.scale = 0.375;
  nv.keep = [](std::int64_t n, auto, auto, auto) { return n == 0; };
  auto [on, lse] = nv.run(v.at("q"), v.at("k"), v.at("v"));
  expect_near_all(v.at("o"), on, kTol, "o");
  expect_near_all(v.at("stats"), lse, kTol, "stats");
  EXPECT_EQ(v.at("stats").at({1, 1, 2, 0}), -kInf);
}

TEST(SdpaRef, PhiloxDropoutIsDeterministicAndScaled) {
  Opts o;
  o.s.s_q = 6;
  o.s.s_kv = 10;
  o.rng_dump = true;
  auto with_seed = [&](std::int64_t seed) {
    Opts x = o;
    x.extra = [seed](OpGraph& g, Extras& e, Attributes& a) {
      a.set("dropout_probability", 0.25);
      e.seed = g.tensor_scalar_int(seed);
      e.offset = g.tensor_scalar_int(5);
    };
    return run_fwd(x);
  };
  Values a = with_seed(42), b = with_seed(42), c = with_seed(43);
  const Array& mask = a.at("rng_dump");
  double kept = 0.0;
  for (double m : mask.v) {
    EXPECT_TRUE(m == 0.0 || m == 1.0);
    kept += m;
  }
  EXPECT_NEAR(kept / static_cast<double>(mask.numel()), 0.75, 0.1);  // 240 draws, keep prob 0.75
  EXPECT_EQ(a.at("o").v, b.at("o").v);
  EXPECT_NE(mask.v, c.at("rng_dump").v);
  Naive nv{o.s};
  nv.drop = [&](auto n, auto h, auto i, auto j) { return mask.at({n, h, i, j}) / 0.75; };
  auto [on, lse] = nv.run(a.at("q"), a.at("k"), a.at("v"));
  expect_near_all(a.at("o"), on, kTol, "o");
  expect_near_all(a.at("stats"), lse, kTol, "stats (dropout does not change Stats)");
}

TEST(SdpaRef, UserDropoutMaskAndScale) {
  Opts o;
  o.extra = [](OpGraph& g, Extras& e, Attributes&) {
    e.dropout_mask = g.tensor({2, 2, 5, 7}, DataType::DOUBLE, "dmask");
    e.dropout_scale = g.tensor({1, 1, 1, 1}, DataType::FLOAT, "dscale");
  };
  Array m = random_array({2, 2, 5, 7}, 9, 0.0, 1.0);
  for (double& x : m.v) x = x < 0.3 ? 0.0 : 1.0;
  Values v = run_fwd(o, {{"dmask", m}, {"dscale", Array({1, 1, 1, 1}, 1.25)}});
  Naive nv{o.s};
  nv.drop = [&](auto n, auto h, auto i, auto j) { return m.at({n, h, i, j}) * 1.25; };
  auto [on, lse] = nv.run(v.at("q"), v.at("k"), v.at("v"));
  expect_near_all(v.at("o"), on, kTol, "o");
}

TEST(SdpaRef, BlockMaskDropsWholeTiles) {
  // s_kv = 130: tile column 1 holds keys 128, 129; flag 0 masks them for head 1 only.
  Shape s{1, 2, 2, 2, 3, 130, 2, 2};
  OpGraph g;
  auto q = g.tensor(q_dims(s), DataType::DOUBLE, "q");
  auto k = g.tensor(k_dims(s), DataType::DOUBLE, "k");
  auto v = g.tensor(v_dims(s), DataType::DOUBLE, "v");
  SdpaInputs in;
  in.block_mask = g.tensor({1, 2, 1, 2}, DataType::UINT8, "blocks");
  auto out = g.sdpa(q, k, v, Attributes(), in);
  out.O->set_output(true).set_name("o").set_data_type(DataType::DOUBLE);
  ASSERT_TRUE(g.validate().is_good());
  Values in_v{{"q", random_array(q_dims(s), 1)}, {"k", random_array(k_dims(s), 2)}, {"v", random_array(v_dims(s), 3)},
              {"blocks", ints({1, 2, 1, 2}, {1, 1, 1, 0})}};
  auto r = run_reference(g, in_v);
  ASSERT_TRUE(r.is_good()) << r.status().to_string();
  Naive nv{s};
  nv.keep = [](auto, std::int64_t h, auto, std::int64_t j) { return h == 0 || j < 128; };
  auto [on, lse] = nv.run(in_v.at("q"), in_v.at("k"), in_v.at("v"));
  expect_near_all(r->at("o"), on, kTol, "o");
}

TEST(SdpaRef, HalfPrecisionIoRoundsOnlyAtTheEdges) {
  // fp16 Q/K/V/O: O equals the float64 closed form on the (already fp16) inputs, rounded once.
  Opts o;
  o.t = DataType::HALF;
  o.extra = [](OpGraph&, Extras&, Attributes& a) { a.set("use_causal_mask", true); };
  Values v = run_fwd(o);
  Naive nv{o.s};
  nv.keep = [](auto, auto, auto i, auto j) { return j <= i; };
  auto [on, lse] = nv.run(v.at("q"), v.at("k"), v.at("v"));
  expect_near_all(v.at("o"), on, 1e-3, "o (fp16: half an ulp of |o| <= 1)");
  expect_near_all(v.at("stats"), lse, kTol, "stats (float64 accumulation)");
}
