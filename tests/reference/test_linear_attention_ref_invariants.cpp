// Invariants of the float64 linear-attention reference: the variants reduce to one
// another where the maths says they must, the V-major state agrees with a K-major
// textbook recurrence written here, empty sequences pass their state through,
// state pools address rows, a sequence is bitwise the same alone and in a batch,
// and runtime rules fail with INVALID_VALUE.
// Tolerance: float64 agreement, |a - b| <= 1e-12 + 1e-10 |b|.
#include "reference/linear_attention_ref_fixture.h"

using namespace la_ref_test;

namespace {

constexpr double kAtol = 1e-12, kRtol = 1e-10;

la_ref::Grads grads(const Problem& p) {
  auto g = la_ref::backward(p.cfg, p.inputs(), p.d_o, &p.d_final);
  EXPECT_TRUE(g.is_good()) << g.status().to_string();
  return std::move(g).value();
}
la_ref::Forward fwd(const Problem& p) {
  auto f = la_ref::forward(p.cfg, p.inputs());
  EXPECT_TRUE(f.is_good()) << f.status().to_string();
  return std::move(f).value();
}

// Sums the last axis of a [.., K] array.
Array sum_last(const Array& a) {
  Dims d(a.dims.begin(), a.dims.end() - 1);
  Array r = la_ref::zeros(d);
  const std::size_t k = static_cast<std::size_t>(a.dims.back());
  for (std::size_t i = 0; i < r.v.size(); ++i)
    for (std::size_t j = 0; j < k; ++j) r.v[i] += a.v[i * k + j];
  return r;
}
// [.., D] copies of a [..] array.
Array expand_last(const Array& a, I64 d) {
  Dims dims = a.dims;
  dims.push_back(d);
  Array r = la_ref::zeros(dims);
  for (std::size_t i = 0; i < r.v.size(); ++i) r.v[i] = a.v[i / static_cast<std::size_t>(d)];
  return r;
}
// [A, B, X, Y] -> [A, B, Y, X].
Array swap_last2(const Array& a) {
  const I64 x = a.dims[2], y = a.dims[3], outer = a.dims[0] * a.dims[1];
  Array r = la_ref::zeros({a.dims[0], a.dims[1], y, x});
  for (I64 o = 0; o < outer; ++o)
    for (I64 i = 0; i < x; ++i)
      for (I64 j = 0; j < y; ++j)
        r.v[static_cast<std::size_t>((o * y + j) * x + i)] = a.v[static_cast<std::size_t>((o * x + i) * y + j)];
  return r;
}

}  // namespace

TEST(LinearAttentionRefInvariants, GdpWithOneHouseholderIsGdn) {
  for (bool transforms : {false, true}) {
    Opts o{.variant = Variant::GDP, .n = 1};
    if (transforms) o.l2norm = o.safe_gate = o.a_log = o.dt_bias = o.beta_sigmoid = true;
    Problem gdp = make_problem(o);
    Problem gdn = gdp;
    gdn.o.variant = gdn.cfg.variant = Variant::GDN;
    auto fp = fwd(gdp), fn = fwd(gdn);
    expect_close(fp.o, fn.o, kAtol, kRtol, "O");
    expect_close(fp.final_state, fn.final_state, kAtol, kRtol, "final_state");
    auto gp = grads(gdp), gn = grads(gdn);
    expect_close(gp.dq, gn.dq, kAtol, kRtol, "dq");
    expect_close(gp.dk, gn.dk, kAtol, kRtol, "dk");
    expect_close(gp.dv, gn.dv, kAtol, kRtol, "dv");
    expect_close(gp.dg, gn.dg, kAtol, kRtol, "dg");
    expect_close(gp.dbeta, gn.dbeta, kAtol, kRtol, "dbeta");
    expect_close(gp.d_initial_state, gn.d_initial_state, kAtol, kRtol, "d_initial_state");
    if (transforms) expect_close(gp.d_a_log, gn.d_a_log, kAtol, kRtol, "d_a_log");
  }
}

TEST(LinearAttentionRefInvariants, KdaWithChannelConstantGateIsGdn) {
  for (bool linear : {false, true}) {
    Problem gdn = make_problem(Opts{.variant = Variant::GDN, .l2norm = true, .linear_gate = linear});
    Problem kda = gdn;
    kda.o.variant = kda.cfg.variant = Variant::KDA;
    kda.g = expand_last(gdn.g, gdn.o.kd);
    auto fk = fwd(kda), fn = fwd(gdn);
    expect_close(fk.o, fn.o, kAtol, kRtol, "O");
    expect_close(fk.final_state, fn.final_state, kAtol, kRtol, "final_state");
    auto gk = grads(kda), gn = grads(gdn);
    expect_close(sum_last(gk.dg), gn.dg, kAtol, kRtol, "dg summed over K");
    expect_close(gk.dq, gn.dq, kAtol, kRtol, "dq");
    expect_close(gk.dk, gn.dk, kAtol, kRtol, "dk");
    expect_close(gk.dv, gn.dv, kAtol, kRtol, "dv");
    expect_close(gk.dbeta, gn.dbeta, kAtol, kRtol, "dbeta");
    expect_close(gk.d_initial_state, gn.d_initial_state, kAtol, kRtol, "d_initial_state");
  }
}

TEST(LinearAttentionRefInvariants, Gdn2WithScalarGatesIsKda) {
  // b = w = beta (broadcast) turns GDN-2 into KDA.
  Problem kda = make_problem(Opts{.variant = Variant::KDA, .hq = 2, .hk = 2, .hv = 2});
  Problem gdn2 = kda;
  gdn2.o.variant = gdn2.cfg.variant = Variant::GDN2;
  gdn2.b = expand_last(kda.beta, kda.o.kd);
  gdn2.w = expand_last(kda.beta, kda.o.vd);
  auto f2 = fwd(gdn2), fk = fwd(kda);
  expect_close(f2.o, fk.o, kAtol, kRtol, "O");
  expect_close(f2.final_state, fk.final_state, kAtol, kRtol, "final_state");
  auto g2 = grads(gdn2), gk = grads(kda);
  Array dbeta = sum_last(g2.db);
  Array dw = sum_last(g2.dw);
  for (std::size_t i = 0; i < dbeta.v.size(); ++i) dbeta.v[i] += dw.v[i];
  expect_close(dbeta, gk.dbeta, kAtol, kRtol, "sum(db) + sum(dw) = dbeta");
  expect_close(g2.dg, gk.dg, kAtol, kRtol, "dg");
  expect_close(g2.dk, gk.dk, kAtol, kRtol, "dk");
}

// The textbook matrix forms, K-major state S[K][V], written independently of the reference:
//   gdn  S = a (I - beta k k^T) S + beta k v^T          kda  S = (I - beta k k^T) Diag(a) S + beta k v^T
//   gdn2 S = (I - k (b.k)^T) Diag(a) S + k (w.v)^T      gdp  S = a S, then n times S = (I - beta k k^T) S + beta k v^T
//   o = scale S^T q
TEST(LinearAttentionRefInvariants, VMajorStateMatchesKMajorTextbook) {
  for (Variant var : {Variant::GDN, Variant::KDA, Variant::GDN2, Variant::GDP}) {
    Opts o{.variant = var, .n = var == Variant::GDP ? 2 : 1};
    Problem p = make_problem(o);
    const I64 K = o.kd, V = o.vd, HO = o.ho(), n = p.cfg.num_householder;
    Array init_kmajor = swap_last2(p.init);  // the test's own K-major seed
    Array o_ref = la_ref::zeros({o.t(), HO, V}), fin_ref = la_ref::zeros({o.n_seq(), HO, K, V});
    const double scale = 1.0 / std::sqrt(static_cast<double>(K));
    using Mat = std::vector<std::vector<double>>;
    for (I64 s = 0; s < o.n_seq(); ++s)
      for (I64 h = 0; h < HO; ++h) {
        Mat S(K, std::vector<double>(V));
        for (I64 i = 0; i < K; ++i)
          for (I64 j = 0; j < V; ++j) S[i][j] = el(init_kmajor, {s, h, i, j});
        auto update = [&](const std::vector<double>& alpha, const std::vector<double>& kv,
                          const std::vector<double>& erase, const std::vector<double>& vv, double wscale,
                          const std::vector<double>& wv) {
          Mat D = S;  // Diag(alpha) S
          for (I64 i = 0; i < K; ++i)
            for (I64 j = 0; j < V; ++j) D[i][j] *= alpha[i];
          Mat P(K, std::vector<double>(K));  // I - k erase^T
          for (I64 i = 0; i < K; ++i)
            for (I64 l = 0; l < K; ++l) P[i][l] = (i == l ? 1.0 : 0.0) - kv[i] * erase[l];
          for (I64 i = 0; i < K; ++i)
            for (I64 j = 0; j < V; ++j) {
              double acc = 0.0;
              for (I64 l = 0; l < K; ++l) acc += P[i][l] * D[l][j];
              S[i][j] = acc + wscale * kv[i] * wv[j] * vv[j];
            }
        };
        for (I64 t = o.cu[s]; t < o.cu[s + 1]; ++t) {
          std::vector<double> alpha(K);
          for (I64 i = 0; i < K; ++i)
            alpha[i] = std::exp(vector_gate(var) ? el(p.g, {t, h, i}) : el(p.g, {t, h}));
          for (I64 j = 0; j < n; ++j) {
            const I64 row = t * n + j;
            std::vector<double> kv(K), vv(V), erase(K), wv(V, 1.0);
            for (I64 i = 0; i < K; ++i) kv[i] = el(p.k, {row, h / (HO / o.hk), i});
            for (I64 c = 0; c < V; ++c) vv[c] = el(p.v, {row, h / (HO / o.hv), c});
            double wscale = 1.0;
            if (var == Variant::GDN2) {
              for (I64 i = 0; i < K; ++i) erase[i] = el(p.b, {t, h, i}) * kv[i];
              for (I64 c = 0; c < V; ++c) wv[c] = el(p.w, {t, h, c});
            } else {
              const double beta = el(p.beta, {row, h});
              for (I64 i = 0; i < K; ++i) erase[i] = beta * kv[i];
              wscale = beta;
            }
            // gdn: a (I - beta k k^T) S = (I - beta k k^T) (a S) for a scalar a; gdp decays at sub-step 0 only.
            update(var == Variant::GDP && j > 0 ? std::vector<double>(K, 1.0) : alpha, kv, erase, vv, wscale, wv);
          }
          for (I64 c = 0; c < V; ++c) {
            double acc = 0.0;
            for (I64 i = 0; i < K; ++i) acc += S[i][c] * el(p.q, {t, h / (HO / o.hq), i});
            el(o_ref, {t, h, c}) = scale * acc;
          }
        }
        for (I64 i = 0; i < K; ++i)
          for (I64 j = 0; j < V; ++j) el(fin_ref, {s, h, i, j}) = S[i][j];
      }
    auto f = fwd(p);
    const std::string name = "variant " + std::to_string(static_cast<int>(var));
    expect_close(f.o, o_ref, kAtol, kRtol, name + " O");
    expect_close(swap_last2(f.final_state), fin_ref, kAtol, kRtol, name + " final_state (K-major)");
  }
}

TEST(LinearAttentionRefInvariants, EmptySequencePassesItsStateThrough) {
  for (Variant var : {Variant::GDN, Variant::KDA, Variant::GDN2, Variant::GDP}) {
    Opts o{.variant = var, .n = 2};
    o.cu = {0, 0, 6, 6};  // sequences 0 and 2 are empty
    Problem p = make_problem(o);
    auto f = fwd(p);
    auto g = grads(p);
    const std::size_t per = static_cast<std::size_t>(o.ho() * o.vd * o.kd);
    for (std::size_t seq : {0u, 2u})
      for (std::size_t i = 0; i < per; ++i) {
        EXPECT_EQ(f.final_state.v[seq * per + i], p.init.v[seq * per + i]);
        EXPECT_EQ(g.d_initial_state.v[seq * per + i], p.d_final.v[seq * per + i]);
      }
    // The non-empty sequence moved its state.
    double moved = 0.0;
    for (std::size_t i = 0; i < per; ++i) moved += std::abs(f.final_state.v[per + i] - p.init.v[per + i]);
    EXPECT_GT(moved, 1e-3);
    auto sm = la_ref::summary(p.cfg, p.inputs());
    ASSERT_TRUE(sm.is_good());
    const I64 K = o.kd;
    for (I64 h = 0; h < o.ho(); ++h)
      for (I64 i = 0; i < K; ++i)
        for (I64 j = 0; j < K; ++j) EXPECT_EQ(el(sm->m, {0, h, i, j}), i == j ? 1.0 : 0.0);
    for (std::size_t i = 0; i < per; ++i) EXPECT_EQ(sm->h.v[i], 0.0);
  }
}

TEST(LinearAttentionRefInvariants, StatePoolReadsAndWritesAddressedRows) {
  Problem p = make_problem(Opts{.variant = Variant::KDA});
  const I64 pool = 5, HO = p.o.ho(), V = p.o.vd, K = p.o.kd;
  Array pool_state = rand_array({pool, HO, V, K}, -1.0, 1.0);
  Array idx = la_ref::zeros({3});
  idx.v = {3.0, 0.0, 4.0};
  // The per-sequence run seeded with rows 3, 0, 4.
  const std::size_t per = static_cast<std::size_t>(HO * V * K);
  for (std::size_t s = 0; s < 3; ++s)
    std::copy_n(pool_state.v.begin() + static_cast<std::ptrdiff_t>(idx.v[s] * per), per,
                p.init.v.begin() + static_cast<std::ptrdiff_t>(s * per));
  auto dense = fwd(p);
  la_ref::Inputs in = p.inputs();
  in.initial_state = &pool_state;
  in.state_indices = &idx;
  auto pooled = la_ref::forward(p.cfg, in);
  ASSERT_TRUE(pooled.is_good()) << pooled.status().to_string();
  EXPECT_EQ(pooled->final_state.dims, pool_state.dims);
  expect_close(pooled->o, dense.o, kAtol, kRtol, "O");
  for (std::size_t s = 0; s < 3; ++s)
    for (std::size_t i = 0; i < per; ++i)
      EXPECT_EQ(pooled->final_state.v[static_cast<std::size_t>(idx.v[s]) * per + i], dense.final_state.v[s * per + i]);
  for (std::size_t row : {1u, 2u})  // rows no sequence addresses stay as they were
    for (std::size_t i = 0; i < per; ++i) EXPECT_EQ(pooled->final_state.v[row * per + i], pool_state.v[row * per + i]);

  idx.v = {3.0, 5.0, 4.0};
  auto out_of_range = la_ref::forward(p.cfg, in);
  EXPECT_EQ(out_of_range.status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(out_of_range.status().message().find("state pool"), std::string::npos);
  idx.v = {3.0, 0.0, 3.0};
  auto twice = la_ref::forward(p.cfg, in);
  EXPECT_EQ(twice.status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(twice.status().message().find("both address row 3"), std::string::npos) << twice.status().message();
}

TEST(LinearAttentionRefInvariants, BadCuSeqlensRefused) {
  Problem p = make_problem(Opts{});
  for (std::vector<I64> cu : {std::vector<I64>{0, 7, 5, 12}, {1, 5, 5, 12}, {0, 5, 5, 11}}) {
    la_ref::Inputs in = p.inputs();
    in.cu_seqlens = cu;
    auto r = la_ref::forward(p.cfg, in);
    EXPECT_EQ(r.status().code(), ErrorCode::INVALID_VALUE);
    EXPECT_NE(r.status().message().find("cu_seqlens"), std::string::npos);
  }
}

TEST(LinearAttentionRefInvariants, SequenceAloneEqualsSequenceInABatchBitwise) {
  // What batch_invariant promises: a sequence's O, final state and gradients do not
  // depend on its batch neighbours (the reference is batch-invariant by construction).
  for (Variant var : {Variant::GDN, Variant::KDA, Variant::GDN2, Variant::GDP}) {
    Opts o{.variant = var, .n = 2, .l2norm = true};
    o.cu = {0, 5, 5, 12};
    Problem batch = make_problem(o);
    // Sequence 2 ([5, 12)) alone: rows 5..11 of every token array, state row 2.
    Problem alone = batch;
    alone.o.cu = {0, 7};
    const I64 n = batch.cfg.num_householder;
    auto tail = [](const Array& a, I64 first_row, I64 rows) {
      Dims d = a.dims;
      d[0] = rows;
      Array r = la_ref::zeros(d);
      const std::size_t per = r.v.size() / static_cast<std::size_t>(rows);
      std::copy_n(a.v.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first_row) * per), r.v.size(),
                  r.v.begin());
      return r;
    };
    alone.q = tail(batch.q, 5, 7);
    alone.k = tail(batch.k, 5 * n, 7 * n);
    alone.v = tail(batch.v, 5 * n, 7 * n);
    alone.g = tail(batch.g, 5, 7);
    alone.beta = tail(batch.beta, 5 * n, 7 * n);
    alone.b = tail(batch.b, 5, 7);
    alone.w = tail(batch.w, 5, 7);
    alone.d_o = tail(batch.d_o, 5, 7);
    alone.init = tail(batch.init, 2, 1);
    alone.d_final = tail(batch.d_final, 2, 1);
    auto fb = fwd(batch), fa = fwd(alone);
    EXPECT_EQ(tail(fb.o, 5, 7).v, fa.o.v);
    EXPECT_EQ(tail(fb.final_state, 2, 1).v, fa.final_state.v);
    auto gb = grads(batch), ga = grads(alone);
    EXPECT_EQ(tail(gb.dq, 5, 7).v, ga.dq.v);
    EXPECT_EQ(tail(gb.dg, 5, 7).v, ga.dg.v);
    EXPECT_EQ(tail(gb.dv, 5 * n, 7 * n).v, ga.dv.v);
    EXPECT_EQ(tail(gb.d_initial_state, 2, 1).v, ga.d_initial_state.v);
  }
}
