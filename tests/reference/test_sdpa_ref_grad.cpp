// sdpa_backward reference against central finite differences of the sdpa
// forward, in float64 (harness::fd_gradient, h = 1e-6), for dQ, dK, dV, dBias and
// DSINK_TOKEN under several masks, GQA, ALiBi, padding and both dropout forms.
// Tolerance atol 1e-7, rtol 1e-6: FD truncation O(h^2) plus cancellation O(eps/h).
#include "sdpa_ref_fixture.h"

using namespace sdpa_ref_test;

namespace {

void check_grads(const std::string& name, const Opts& o, const Values& fixed, bool dbias, bool dsink) {
  SCOPED_TRACE(name);
  Case cf;
  cf.name = name;
  cf.build = [o](OpGraph& g) { build_fwd(g, o); };
  cf.fixed = fixed;
  cf.seed = 17;
  OpGraph gf;
  ASSERT_TRUE(build(cf, gf).is_good());
  Values in = make_inputs(cf, gf);
  auto fr = run_reference(gf, in);
  ASSERT_TRUE(fr.is_good()) << fr.status().to_string();
  Values w{{"o", random_array(o_dims(o.s), 23)}};

  OpGraph gb;
  build_bwd(gb, o, dbias, dsink);
  Status st = gb.validate();
  ASSERT_TRUE(st.is_good()) << st.to_string();
  Values bin = in;
  bin["o"] = fr->at("o");
  bin["stats"] = fr->at("stats");
  bin["dO"] = w.at("o");
  auto br = run_reference(gb, bin);
  ASSERT_TRUE(br.is_good()) << br.status().to_string();

  std::vector<std::pair<std::string, std::string>> pairs = {{"q", "dq"}, {"k", "dk"}, {"v", "dv"}};
  if (dbias) pairs.emplace_back("bias", "dbias");
  if (dsink) pairs.emplace_back("sink", "dsink");
  for (const auto& [x, dx] : pairs) {
    auto fd = fd_gradient(gf, in, x, w);
    ASSERT_TRUE(fd.is_good()) << fd.status().to_string();
    EXPECT_GT(max_abs(*fd), 1e-3) << x << ": the gradient must not vanish for the check to mean anything";
    std::string m = compare(name + " " + dx + " vs fd", gb, {{dx, *fd}}, {{dx, br->at(dx)}}, {{dx, {1e-7, 1e-6}}});
    EXPECT_EQ(m, "");
  }
}

Values lens(double q0, double q1, double k0, double k1) {
  return {{"sq", ints({2, 1, 1, 1}, {q0, q1})}, {"skv", ints({2, 1, 1, 1}, {k0, k1})}};
}

void padding(OpGraph& g, Extras& e, Attributes& a) {
  a.set("use_padding_mask", true);
  e.seq_len_q = g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
  e.seq_len_kv = g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
}

}  // namespace

TEST(SdpaRefGrad, NoMaskWithScale) {
  Opts o;
  o.extra = [](OpGraph&, Extras&, Attributes& a) { a.set("attn_scale", 0.5); };
  check_grads("plain", o, {}, false, false);
}

TEST(SdpaRefGrad, CausalTopLeftWithBroadcastBias) {
  Opts o;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    a.set("use_causal_mask", true);
    e.bias = g.tensor({1, 2, 5, 7}, DataType::DOUBLE, "bias");  // dBias sums over the batch
  };
  check_grads("causal_tl_bias", o, {}, true, false);
}

TEST(SdpaRefGrad, BottomRightAlibiPaddingGqa) {
  Opts o;
  o.s = {2, 4, 2, 1, 5, 8, 4, 3};
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    padding(g, e, a);
    a.set("use_causal_mask_bottom_right", true).set("use_alibi_mask", true);
    e.bias = g.tensor({2, 4, 5, 8}, DataType::DOUBLE, "bias");
  };
  check_grads("br_alibi_padding_gqa", o, lens(5, 3, 8, 6), true, false);
}

TEST(SdpaRefGrad, SlidingWindowWithSinkToken) {
  Opts o;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    a.set("sliding_window_length", 2).set("diagonal_band_right_bound", 1);
    e.sink = g.tensor({1, 2, 1, 1}, DataType::DOUBLE, "sink");
  };
  check_grads("window_sink", o, {}, false, true);
}

TEST(SdpaRefGrad, PhiloxDropout) {
  Opts o;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    a.set("dropout_probability", 0.3).set("use_causal_mask", true);
    e.seed = g.tensor_scalar_int(1234);
    e.offset = g.tensor_scalar_int(0);
  };
  check_grads("philox_dropout", o, {}, false, false);
}

TEST(SdpaRefGrad, UserDropoutMaskWithPadding) {
  Opts o;
  o.extra = [](OpGraph& g, Extras& e, Attributes& a) {
    padding(g, e, a);
    e.dropout_mask = g.tensor({1, 2, 5, 7}, DataType::DOUBLE, "dmask");
    e.dropout_scale = g.tensor({1, 1, 1, 1}, DataType::FLOAT, "dscale");
  };
  Array m = random_array({1, 2, 5, 7}, 4, 0.0, 1.0);
  for (double& x : m.v) x = x < 0.25 ? 0.0 : 1.0;
  Values fixed = lens(4, 5, 7, 3);
  fixed["dmask"] = m;
  fixed["dscale"] = Array({1, 1, 1, 1}, 1.0 / 0.75);
  check_grads("user_dropout_padding", o, fixed, false, false);
}
