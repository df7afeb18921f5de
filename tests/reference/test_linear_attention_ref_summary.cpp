// Span summaries of the float64 linear-attention reference: splitting a sequence into
// pieces and chaining the pieces' summaries reproduces the unsplit run.
//   forward:  X_{j+1} = X_j @ M_j + H_j from X_0 = initial_state gives final_state, and
//             each piece's forward seeded with X_j gives the unsplit O rows;
//   backward: dX_j = dX_{j+1} @ transition_j + G_j from dX_P = d_final_state gives
//             d_initial_state, and each piece's backward seeded with (X_j, dX_{j+1})
//             gives the unsplit gradients.
// Summaries read no q (forward) and no v, w (backward): those inputs are withheld.
// Tolerance: |a - b| <= 1e-11 + 1e-9 |b| (float64, chains of a few K x K products).
#include <algorithm>
#include <cmath>

#include "reference/linear_attention_ref_fixture.h"

using namespace la_ref_test;

namespace {

constexpr double kAtol = 1e-11, kRtol = 1e-9;

// Per head: out[p] (V x K) = x (V x K) @ m[p] (K x K) + add[p], for piece `piece` of [P, HO, .., ..] arrays.
void chain_step(const Array& x, I64 xrow, const Array& m, const Array& add, I64 piece, Array& out, I64 orow) {
  const I64 HO = x.dims[1], V = x.dims[2], K = x.dims[3];
  for (I64 h = 0; h < HO; ++h)
    for (I64 a = 0; a < V; ++a)
      for (I64 c = 0; c < K; ++c) {
        double acc = el(add, {piece, h, a, c});
        for (I64 i = 0; i < K; ++i) acc += el(x, {xrow, h, a, i}) * el(m, {piece, h, i, c});
        el(out, {orow, h, a, c}) = acc;
      }
}

void check_composition(Opts o) {
  o.cu = {0, 13};  // one sequence of 13 tokens, split at 4 and 9
  const std::vector<I64> pieces = {0, 4, 9, 13};
  const I64 P = 3, HO = o.ho(), V = o.vd, K = o.kd;
  Problem whole = make_problem(o);
  auto f = la_ref::forward(whole.cfg, whole.inputs());
  ASSERT_TRUE(f.is_good()) << f.status().to_string();
  auto g = la_ref::backward(whole.cfg, whole.inputs(), whole.d_o, &whole.d_final);
  ASSERT_TRUE(g.is_good()) << g.status().to_string();

  // Forward chain.
  la_ref::Inputs sum_in = whole.inputs();
  sum_in.cu_seqlens = pieces;
  sum_in.q = nullptr;
  sum_in.initial_state = nullptr;
  auto sm = la_ref::summary(whole.cfg, sum_in);
  ASSERT_TRUE(sm.is_good()) << sm.status().to_string();
  Array x = la_ref::zeros({P + 1, HO, V, K});  // X_0 .. X_P
  std::copy(whole.init.v.begin(), whole.init.v.end(), x.v.begin());
  for (I64 j = 0; j < P; ++j) chain_step(x, j, sm->m, sm->h, j, x, j + 1);
  Array x_last = la_ref::zeros({1, HO, V, K});
  std::copy(x.v.end() - static_cast<std::ptrdiff_t>(HO * V * K), x.v.end(), x_last.v.begin());
  expect_close(x_last, f->final_state, kAtol, kRtol, "chained final state");

  // The pieces' forward seeded by the chain.
  Problem split = whole;
  split.o.cu = pieces;
  split.init = la_ref::zeros({P, HO, V, K});
  std::copy(x.v.begin(), x.v.begin() + static_cast<std::ptrdiff_t>(P * HO * V * K), split.init.v.begin());
  auto fs = la_ref::forward(split.cfg, split.inputs());
  ASSERT_TRUE(fs.is_good());
  expect_close(fs->o, f->o, kAtol, kRtol, "pieces' O");

  // Backward chain, from d_final_state.
  la_ref::Inputs bsum_in = whole.inputs();
  bsum_in.cu_seqlens = pieces;
  bsum_in.v = nullptr;
  bsum_in.w = nullptr;
  bsum_in.initial_state = nullptr;
  auto sb = la_ref::summary_bwd(whole.cfg, bsum_in, whole.d_o);
  ASSERT_TRUE(sb.is_good()) << sb.status().to_string();
  Array dx = la_ref::zeros({P + 1, HO, V, K});  // dX_0 .. dX_P
  std::copy(whole.d_final.v.begin(), whole.d_final.v.end(), dx.v.begin() + static_cast<std::ptrdiff_t>(P * HO * V * K));
  for (I64 j = P - 1; j >= 0; --j) chain_step(dx, j + 1, sb->transition, sb->g, j, dx, j);
  Array dx0 = la_ref::zeros({1, HO, V, K});
  std::copy(dx.v.begin(), dx.v.begin() + static_cast<std::ptrdiff_t>(HO * V * K), dx0.v.begin());
  expect_close(dx0, g->d_initial_state, kAtol, kRtol, "chained d_initial_state");

  // The pieces' backward seeded by both chains.
  split.d_final = la_ref::zeros({P, HO, V, K});
  std::copy(dx.v.begin() + static_cast<std::ptrdiff_t>(HO * V * K), dx.v.end(), split.d_final.v.begin());
  auto gs = la_ref::backward(split.cfg, split.inputs(), split.d_o, &split.d_final);
  ASSERT_TRUE(gs.is_good());
  expect_close(gs->dq, g->dq, kAtol, kRtol, "pieces' dq");
  expect_close(gs->dk, g->dk, kAtol, kRtol, "pieces' dk");
  expect_close(gs->dv, g->dv, kAtol, kRtol, "pieces' dv");
  expect_close(gs->dg, g->dg, kAtol, kRtol, "pieces' dg");
  if (o.variant == Variant::GDN2) {
    expect_close(gs->db, g->db, kAtol, kRtol, "pieces' db");
    expect_close(gs->dw, g->dw, kAtol, kRtol, "pieces' dw");
  } else {
    expect_close(gs->dbeta, g->dbeta, kAtol, kRtol, "pieces' dbeta");
  }
  if (o.safe_gate && o.a_log) expect_close(gs->d_a_log, g->d_a_log, kAtol, kRtol, "pieces' d_a_log");
  if (o.safe_gate && o.dt_bias) expect_close(gs->d_dt_bias, g->d_dt_bias, kAtol, kRtol, "pieces' d_dt_bias");
}

}  // namespace

TEST(LinearAttentionRefSummary, GdnPiecesCompose) { check_composition(Opts{.variant = Variant::GDN}); }

TEST(LinearAttentionRefSummary, GdnPiecesComposeWithTransforms) {
  check_composition(Opts{.variant = Variant::GDN, .l2norm = true, .safe_gate = true, .a_log = true,
                         .dt_bias = true, .beta_sigmoid = true, .neg_eigval = true});
}

TEST(LinearAttentionRefSummary, KdaPiecesCompose) {
  check_composition(Opts{.variant = Variant::KDA, .hq = 2, .hk = 1, .hv = 1, .safe_gate = true, .a_log = true,
                         .dt_bias = true});
}

TEST(LinearAttentionRefSummary, Gdn2PiecesCompose) {
  check_composition(Opts{.variant = Variant::GDN2, .l2norm = true, .beta_sigmoid = true});
}

TEST(LinearAttentionRefSummary, GdpPiecesCompose) {
  check_composition(Opts{.variant = Variant::GDP, .n = 3, .linear_gate = true});
}

TEST(LinearAttentionRefSummary, TransitionIsTheStoredTransposeOfM) {
  // The backward's transition holds M, the forward's M output holds M^T.
  Problem p = make_problem(Opts{.variant = Variant::KDA});
  la_ref::Inputs in = p.inputs();
  auto sm = la_ref::summary(p.cfg, in);
  auto sb = la_ref::summary_bwd(p.cfg, in, p.d_o);
  ASSERT_TRUE(sm.is_good() && sb.is_good());
  Array mt = la_ref::zeros(sm->m.dims);
  const I64 K = p.o.kd;
  for (I64 s = 0; s < p.o.n_seq(); ++s)
    for (I64 h = 0; h < p.o.ho(); ++h)
      for (I64 i = 0; i < K; ++i)
        for (I64 j = 0; j < K; ++j) el(mt, {s, h, i, j}) = el(sm->m, {s, h, j, i});
  expect_close(sb->transition, mt, 1e-15, 1e-15, "transition = M_buf^T");
}

namespace {

// Per (sequence, head): the largest |entry| of the sequence's transition M over e^(sum of its gates) (the bound
// span_transition_vanishes, kernels/gdn_fused_ws3.cuh, takes: a token's e^g (I - beta k k^T) has norm at most e^g for
// |k| <= 1 and beta in [0, 2]); and, for the reflections case, the largest |sum of squares of M - K|.
struct TransitionVsGates {
  double worst_ratio = 0.0, worst_frobenius_gap = 0.0;
};
TransitionVsGates transition_vs_gates(const Problem& p) {
  la_ref::Inputs in = p.inputs();
  in.q = nullptr;
  in.initial_state = nullptr;
  auto sm = la_ref::summary(p.cfg, in);
  EXPECT_TRUE(sm.is_good()) << sm.status().to_string();
  TransitionVsGates r;
  if (sm.is_bad()) return r;
  const I64 K = p.o.kd;
  for (I64 s = 0; s < p.o.n_seq(); ++s)
    for (I64 h = 0; h < p.o.ho(); ++h) {
      double gsum = 0.0, biggest = 0.0, squares = 0.0;
      for (I64 t = p.o.cu[static_cast<std::size_t>(s)]; t < p.o.cu[static_cast<std::size_t>(s) + 1]; ++t)
        gsum += el(p.g, {t, h});
      for (I64 i = 0; i < K; ++i)
        for (I64 j = 0; j < K; ++j) {
          const double m = el(sm->m, {s, h, i, j});
          biggest = std::max(biggest, std::abs(m));
          squares += m * m;
        }
      r.worst_ratio = std::max(r.worst_ratio, biggest / std::exp(gsum));
      r.worst_frobenius_gap = std::max(r.worst_frobenius_gap, std::abs(squares - static_cast<double>(K)));
    }
  return r;
}

}  // namespace

// The premise of the fused span summaries' vanishing transitions (a span's M stored as zeros, its chunks not run,
// where the sum of its gates is below -200): with k l2-normalised and beta in [0, 2] no entry of a span's transition
// exceeds e^(sum of its gates). Checked where that bound is far from underflow (gates in [-0.3, 0.1], some
// positive), with beta in (0.2, 0.9), with 2 sigmoid(beta) (allow_neg_eigval, up to 1.76), and at beta = 2, g = 0,
// where each token is a reflection, M is orthogonal and the bound is met (its squares sum to K). Without l2norm
// (keys of norm ~2.1) it does not hold, which is why the kernels take it under use_qk_l2norm only.
TEST(LinearAttentionRefSummary, GdnTransitionIsBoundedByItsGates) {
  Opts o{.variant = Variant::GDN, .cu = {0, 60, 60, 200}, .hv = 2, .kd = 8, .vd = 3, .l2norm = true};
  for (bool neg : {false, true}) {
    o.beta_sigmoid = o.neg_eigval = neg;
    Problem p = make_problem(o);
    for (double& g : p.g.v) g = uniform(-0.3, 0.1);
    EXPECT_LE(transition_vs_gates(p).worst_ratio, 1.0 + 1e-9) << (neg ? "2 sigmoid(beta)" : "beta in (0.2, 0.9)");
  }
  o.beta_sigmoid = o.neg_eigval = false;
  Problem refl = make_problem(o);
  for (double& g : refl.g.v) g = 0.0;
  for (double& b : refl.beta.v) b = 2.0;
  const TransitionVsGates r = transition_vs_gates(refl);
  EXPECT_LE(r.worst_ratio, 1.0 + 1e-9);
  // l2norm divides by sqrt(|k|^2 + 1e-6): each reflection is orthogonal within ~1e-5, the product within ~1e-3.
  EXPECT_LE(r.worst_frobenius_gap, 1e-2) << "reflections: M orthogonal";
  o.l2norm = false;
  Problem raw = make_problem(o);
  for (double& k : raw.k.v) k *= 3.0;  // |k|^2 ~ 4.3: beta |k|^2 ~ 3.9, an eigenvalue near -2.9 a token
  for (double& b : raw.beta.v) b = 0.9;
  for (double& g : raw.g.v) g = 0.0;
  EXPECT_GT(transition_vs_gates(raw).worst_ratio, 1.0) << "without l2norm the bound does not hold";
}
