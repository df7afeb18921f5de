// The float64 linear-attention backward against central finite differences of the
// forward, for gdn, kda, gdn2 and gdp with every input transform (l2norm, beta
// sigmoid with and without negative eigenvalues, safe_gate with a_log/dt_bias,
// linear gate domain), head grouping in both directions, varlen with an empty
// sequence, and an initial state plus a final-state gradient.
// Loss L = sum(O . dO) + sum(final_state . dS); step 1e-5; tolerance
// |analytic - fd| <= 1e-6 + 1e-6 |fd| per element.
#include "reference/linear_attention_ref_fixture.h"

using namespace la_ref_test;

namespace {

void check_grads(Problem p) {
  auto gr = la_ref::backward(p.cfg, p.inputs(), p.d_o, &p.d_final);
  ASSERT_TRUE(gr.is_good()) << gr.status().to_string();
  struct Item {
    Array* x;
    const Array* grad;
    const char* name;
  };
  std::vector<Item> items = {
      {&p.q, &gr->dq, "dq"}, {&p.k, &gr->dk, "dk"}, {&p.v, &gr->dv, "dv"}, {&p.g, &gr->dg, "dg"}};
  if (p.o.variant == Variant::GDN2) {
    items.push_back({&p.b, &gr->db, "db"});
    items.push_back({&p.w, &gr->dw, "dw"});
  } else {
    items.push_back({&p.beta, &gr->dbeta, "dbeta"});
  }
  if (p.o.init) items.push_back({&p.init, &gr->d_initial_state, "d_initial_state"});
  if (p.o.safe_gate && p.o.a_log) items.push_back({&p.a_log, &gr->d_a_log, "d_a_log"});
  if (p.o.safe_gate && p.o.dt_bias) items.push_back({&p.dt_bias, &gr->d_dt_bias, "d_dt_bias"});
  const double h = 1e-5;
  for (const Item& it : items) {
    Array fd = la_ref::zeros(it.x->dims);
    for (std::size_t i = 0; i < it.x->v.size(); ++i) {
      const double x0 = it.x->v[i];
      it.x->v[i] = x0 + h;
      const double lp = loss(p);
      it.x->v[i] = x0 - h;
      const double lm = loss(p);
      it.x->v[i] = x0;
      fd.v[i] = (lp - lm) / (2 * h);
    }
    expect_close(*it.grad, fd, 1e-6, 1e-6, it.name);
    double mx = 0.0;
    for (double x : fd.v) mx = std::max(mx, std::abs(x));
    EXPECT_GT(mx, 1e-3) << it.name << ": the loss should depend on this input";
  }
}

Opts all_transforms(Opts o) {
  o.l2norm = o.safe_gate = o.a_log = o.dt_bias = o.beta_sigmoid = o.neg_eigval = true;
  o.scale = 0.7;
  return o;
}

}  // namespace

TEST(LinearAttentionRefGrad, GdnValueGrouped) { check_grads(make_problem(Opts{.variant = Variant::GDN})); }

TEST(LinearAttentionRefGrad, GdnAllTransforms) {
  check_grads(make_problem(all_transforms(Opts{.variant = Variant::GDN})));
}

TEST(LinearAttentionRefGrad, GdnLinearGateAndBetaSigmoid) {
  check_grads(make_problem(Opts{.variant = Variant::GDN, .beta_sigmoid = true, .linear_gate = true}));
}

TEST(LinearAttentionRefGrad, KdaQueryGrouped) {
  check_grads(make_problem(Opts{.variant = Variant::KDA, .hq = 2, .hk = 1, .hv = 1}));
}

TEST(LinearAttentionRefGrad, KdaAllTransforms) {
  check_grads(make_problem(all_transforms(Opts{.variant = Variant::KDA})));
}

TEST(LinearAttentionRefGrad, KdaSafeGateWithoutALogAndLinearGate) {
  check_grads(make_problem(Opts{.variant = Variant::KDA, .safe_gate = true, .dt_bias = true}));
  check_grads(make_problem(Opts{.variant = Variant::KDA, .l2norm = true, .linear_gate = true}));
}

TEST(LinearAttentionRefGrad, Gdn2) {
  check_grads(make_problem(Opts{.variant = Variant::GDN2, .hq = 2, .hk = 2, .hv = 2}));
}

TEST(LinearAttentionRefGrad, Gdn2AllTransforms) {
  check_grads(make_problem(all_transforms(Opts{.variant = Variant::GDN2})));
}

TEST(LinearAttentionRefGrad, GdpTwoHouseholder) {
  check_grads(make_problem(Opts{.variant = Variant::GDP, .n = 2}));
}

TEST(LinearAttentionRefGrad, GdpThreeHouseholderAllTransforms) {
  Opts o = all_transforms(Opts{.variant = Variant::GDP, .n = 3});
  o.cu = {0, 4, 4, 7};
  check_grads(make_problem(o));
}
