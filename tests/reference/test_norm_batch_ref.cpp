// Reference kernels of the batch-statistics ops: genstats sums against a loop;
// genstats -> bn_finalize against batchnorm (mean, inverse variance, equivalent
// scale/bias, running stats with momentum and the unbiased variance, all against closed
// forms computed here); batchnorm_inference closed form; batchnorm_backward against
// central finite differences of batchnorm; dbn_weight's equivalent coefficients
// reproduce batchnorm_backward's DX; peer stats split a batch across "devices".
// Tolerances: float64 closed forms 1e-12 abs (1e-10 where one-pass and two-pass
// variances meet); backward vs FD atol 1e-7, rtol 1e-6.
#include <gtest/gtest.h>

#include <cmath>

#include "grad_check_util.h"

using namespace opgraph;
using namespace opgraph::harness;
using namespace opgraph::gradcheck;

namespace {

constexpr double kEps = 1e-3;
const Dims kX{3, 4, 2, 2};
const Dims kCh{1, 4, 1, 1};

// Per-channel sums of an [N, C, ...] array: {sum, sum of squares, count}.
struct ChannelSums {
  std::vector<double> sum, sq;
  double n = 0;
};
ChannelSums channel_sums(const Array& x) {
  const std::int64_t c = x.dims[1], inner = x.numel() / (x.dims[0] * c);
  ChannelSums s{std::vector<double>(static_cast<std::size_t>(c), 0.0), std::vector<double>(static_cast<std::size_t>(c), 0.0),
                static_cast<double>(x.dims[0] * inner)};
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    auto k = static_cast<std::size_t>((i / inner) % c);
    s.sum[k] += x[i];
    s.sq[k] += x[i] * x[i];
  }
  return s;
}

}  // namespace

TEST(NormBatchRef, GenstatsSums) {
  Case c;
  c.name = "genstats";
  c.build = [](OpGraph& g) {
    auto [s, q] = g.genstats(g.tensor({3, 5, 2, 3}, DataType::FLOAT, "x"));
    out64(s, "sum");
    out64(q, "sq_sum");
  };
  Values v = check_case(c);
  auto e = channel_sums(v.at("x"));
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_NEAR(v.at("sum")[static_cast<std::int64_t>(k)], e.sum[k], 1e-12);
    EXPECT_NEAR(v.at("sq_sum")[static_cast<std::int64_t>(k)], e.sq[k], 1e-12);
  }
}

TEST(NormBatchRef, BnFinalizeAgreesWithBatchnormAndClosedForms) {
  const double momentum = 0.125;
  Case c;
  c.name = "bn_finalize_vs_batchnorm";
  c.build = [&](OpGraph& g) {
    auto x = in64(g, kX, "x");
    auto scale = in64(g, kCh, "scale"), bias = in64(g, kCh, "bias");
    auto pm = in64(g, kCh, "prev_mean"), pv = in64(g, kCh, "prev_var");
    auto eps = g.tensor_scalar(kEps, DataType::DOUBLE);
    auto mom = g.tensor_scalar(momentum, DataType::DOUBLE);
    auto [sum, sq] = g.genstats(x);
    sum->set_data_type(DataType::DOUBLE);  // stats default to FLOAT; keep the chain in float64
    sq->set_data_type(DataType::DOUBLE);
    auto f = g.bn_finalize(sum, sq, scale, bias, eps, g.tensor_scalar_int(12), {}, pm, pv, mom);
    const char* fn[] = {"eq_scale", "eq_bias", "f_mean", "f_inv", "f_run_mean", "f_run_var"};
    for (int i = 0; i < 6; ++i) out64(f[static_cast<std::size_t>(i)], fn[i]);
    auto b = g.batchnorm(x, scale, bias, eps, {}, pm, pv, mom);
    const char* bn[] = {"y", "b_mean", "b_inv", "b_run_mean", "b_run_var"};
    for (int i = 0; i < 5; ++i) out64(b[static_cast<std::size_t>(i)], bn[i]);
  };
  c.ranges["prev_var"] = {0.5, 2.0};
  Values v = check_case(c);
  ASSERT_TRUE(v.count("y"));
  auto s = channel_sums(v.at("x"));
  ASSERT_EQ(s.n, 12.0);
  for (std::int64_t k = 0; k < 4; ++k) {
    auto ku = static_cast<std::size_t>(k);
    const double mean = s.sum[ku] / s.n, var = s.sq[ku] / s.n - mean * mean;
    EXPECT_NEAR(v.at("f_mean")[k], mean, 1e-12);
    EXPECT_NEAR(v.at("b_mean")[k], mean, 1e-12);
    EXPECT_NEAR(v.at("f_inv")[k], 1 / std::sqrt(var + kEps), 1e-10);
    EXPECT_NEAR(v.at("b_inv")[k], 1 / std::sqrt(var + kEps), 1e-10);
    const double run_mean = (1 - momentum) * v.at("prev_mean")[k] + momentum * mean;
    const double run_var = (1 - momentum) * v.at("prev_var")[k] + momentum * var * s.n / (s.n - 1);
    EXPECT_NEAR(v.at("f_run_mean")[k], run_mean, 1e-12);
    EXPECT_NEAR(v.at("b_run_mean")[k], run_mean, 1e-12);
    EXPECT_NEAR(v.at("f_run_var")[k], run_var, 1e-10);
    EXPECT_NEAR(v.at("b_run_var")[k], run_var, 1e-10);
  }
  const Array &x = v.at("x"), &y = v.at("y");
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const std::int64_t k = (i / 4) % 4;
    EXPECT_NEAR(y[i], v.at("eq_scale")[k] * x[i] + v.at("eq_bias")[k], 1e-10) << i;
    const double mean = s.sum[static_cast<std::size_t>(k)] / 12, var = s.sq[static_cast<std::size_t>(k)] / 12 - mean * mean;
    EXPECT_NEAR(y[i], (x[i] - mean) / std::sqrt(var + kEps) * v.at("scale")[k] + v.at("bias")[k], 1e-10) << i;
  }
}

TEST(NormBatchRef, BatchnormInferenceClosedForm) {
  Case c;
  c.name = "batchnorm_inference";
  c.build = [](OpGraph& g) {
    out64(g.batchnorm_inference(in64(g, {2, 3, 5}, "x"), in64(g, {1, 3, 1}, "mean"), in64(g, {1, 3, 1}, "inv_var"),
                                in64(g, {1, 3, 1}, "scale"), in64(g, {1, 3, 1}, "bias")),
          "y");
  };
  c.ranges["inv_var"] = {0.5, 2.0};
  Values v = check_case(c);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t k = 0; k < 3; ++k)
      for (std::int64_t j = 0; j < 5; ++j)
        EXPECT_NEAR(v.at("y").at({n, k, j}),
                    (v.at("x").at({n, k, j}) - v.at("mean")[k]) * v.at("inv_var")[k] * v.at("scale")[k] + v.at("bias")[k],
                    1e-12);
}

TEST(NormBatchRef, BackwardMatchesFdAndDbnWeightReproducesDx) {
  Case fc;
  fc.name = "batchnorm_fwd";
  fc.seed = 9;
  fc.build = [](OpGraph& g) {
    auto [y, m, iv, rm, rv] =
        g.batchnorm(in64(g, kX, "x"), in64(g, kCh, "scale"), in64(g, kCh, "bias"), g.tensor_scalar(kEps, DataType::DOUBLE));
    EXPECT_FALSE(rm || rv);
    out64(y, "y");
    out64(m, "mean");
    out64(iv, "inv_var");
  };
  fc.ranges["scale"] = {0.5, 1.5};
  Forward f = run_forward(fc);
  ASSERT_TRUE(f.out.count("y"));
  Values w{{"y", random_array(kX, 13)}};

  Case bc;
  bc.name = "batchnorm_bwd_and_dbn_weight";
  bc.build = [](OpGraph& g) {
    auto dy = in64(g, kX, "dy"), x = in64(g, kX, "x"), s = in64(g, kCh, "scale");
    auto m = in64(g, kCh, "mean"), iv = in64(g, kCh, "inv_var");
    auto [dx, ds, db] = g.batchnorm_backward(dy, x, s, m, iv);
    out64(dx, "dx");
    out64(ds, "dscale");
    out64(db, "dbias");
    auto d = g.dbn_weight(dy, x, m, iv, s);
    const char* names[] = {"w_dscale", "w_dbias", "eq_bias", "eq_scale_dy", "eq_scale_x"};
    for (int i = 0; i < 5; ++i) out64(d[static_cast<std::size_t>(i)], names[i]);
  };
  bc.fixed = {{"dy", w.at("y")}, {"x", f.in.at("x")}, {"scale", f.in.at("scale")}, {"mean", f.out.at("mean")},
              {"inv_var", f.out.at("inv_var")}};
  Values b = check_case(bc);
  ASSERT_TRUE(b.count("dx"));
  const Tolerance tol{1e-7, 1e-6};
  expect_matches_fd(f, w, "x", b.at("dx"), tol, "batchnorm_backward dx");
  expect_matches_fd(f, w, "scale", b.at("dscale"), tol, "batchnorm_backward dscale");
  expect_matches_fd(f, w, "bias", b.at("dbias"), tol, "batchnorm_backward dbias");
  for (std::int64_t k = 0; k < 4; ++k) {
    EXPECT_NEAR(b.at("w_dscale")[k], b.at("dscale")[k], 1e-12);
    EXPECT_NEAR(b.at("w_dbias")[k], b.at("dbias")[k], 1e-12);
  }
  const Array &x = b.at("x"), &dy = b.at("dy"), &dx = b.at("dx");
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const std::int64_t k = (i / 4) % 4;
    EXPECT_NEAR(b.at("eq_scale_dy")[k] * dy[i] + b.at("eq_scale_x")[k] * x[i] + b.at("eq_bias")[k], dx[i], 1e-12) << i;
  }
}

TEST(NormBatchRef, PeerStatsEqualOneBigBatch) {
  // X_full [4, 3, 2] = local rows 0-1 + peer rows 2-3.
  const Dims full{4, 3, 2}, half{2, 3, 2}, ch{1, 3, 1}, peer{2, 3, 1};
  Case fc;
  fc.name = "batchnorm_full";
  fc.seed = 21;
  fc.build = [&](OpGraph& g) {
    auto x = in64(g, full, "x"), s = in64(g, ch, "scale"), b = in64(g, ch, "bias"), dy = in64(g, full, "dy");
    auto [y, m, iv, rm, rv] = g.batchnorm(x, s, b, g.tensor_scalar(kEps, DataType::DOUBLE), {}, in64(g, ch, "pm"),
                                          in64(g, ch, "pv"), g.tensor_scalar(0.25, DataType::DOUBLE));
    out64(y, "y");
    out64(m, "mean");
    out64(iv, "inv_var");
    out64(rv, "run_var");
    auto [dx, ds, db] = g.batchnorm_backward(dy, x, s, m, iv);
    out64(dx, "dx");
    out64(ds, "dscale");
    out64(db, "dbias");
  };
  Forward f = run_forward(fc);
  ASSERT_TRUE(f.out.count("dx"));
  auto rows = [](const Array& a, std::int64_t lo) {
    Array r({2, a.dims[1], a.dims[2]});
    for (std::int64_t i = 0; i < r.numel(); ++i) r[i] = a[lo * a.dims[1] * a.dims[2] + i];
    return r;
  };
  const Array xp = rows(f.in.at("x"), 2), dyp = rows(f.in.at("dy"), 2);
  Array pstats(peer), pgrad(peer);
  for (std::int64_t i = 0; i < xp.numel(); ++i) {
    const std::int64_t k = (i / 2) % 3;
    const double xhat = (xp[i] - f.out.at("mean")[k]) * f.out.at("inv_var")[k];
    pstats[k] += xp[i];
    pstats[3 + k] += xp[i] * xp[i];
    pgrad[k] += dyp[i];
    pgrad[3 + k] += dyp[i] * xhat;
  }
  Case lc;
  lc.name = "batchnorm_local_with_peer";
  lc.build = [&](OpGraph& g) {
    auto x = in64(g, half, "x"), s = in64(g, ch, "scale"), b = in64(g, ch, "bias"), dy = in64(g, half, "dy");
    auto [y, m, iv, rm, rv] = g.batchnorm(x, s, b, g.tensor_scalar(kEps, DataType::DOUBLE), {}, in64(g, ch, "pm"),
                                          in64(g, ch, "pv"), g.tensor_scalar(0.25, DataType::DOUBLE),
                                          {in64(g, peer, "peer_stats")});
    out64(y, "y");
    out64(m, "mean");
    out64(iv, "inv_var");
    out64(rv, "run_var");
    auto [dx, ds, db] = g.batchnorm_backward(dy, x, s, in64(g, ch, "saved_mean"), in64(g, ch, "saved_inv"), {},
                                             {in64(g, peer, "peer_grad")});
    out64(dx, "dx");
    out64(ds, "dscale");
    out64(db, "dbias");
  };
  lc.fixed = {{"x", rows(f.in.at("x"), 0)}, {"dy", rows(f.in.at("dy"), 0)}, {"scale", f.in.at("scale")},
              {"bias", f.in.at("bias")}, {"pm", f.in.at("pm")}, {"pv", f.in.at("pv")}, {"peer_stats", pstats},
              {"peer_grad", pgrad}, {"saved_mean", f.out.at("mean")}, {"saved_inv", f.out.at("inv_var")}};
  Values l = check_case(lc);
  ASSERT_TRUE(l.count("dx"));
  const std::map<std::string, Tolerance> tol{{"y", {1e-10, 0}}, {"mean", {1e-12, 0}}, {"inv_var", {1e-10, 0}},
                                             {"run_var", {1e-10, 0}}, {"dx", {1e-10, 0}}, {"dscale", {1e-10, 0}},
                                             {"dbias", {1e-12, 0}}};
  Values expect{{"y", rows(f.out.at("y"), 0)}, {"mean", f.out.at("mean")}, {"inv_var", f.out.at("inv_var")},
                {"run_var", f.out.at("run_var")}, {"dx", rows(f.out.at("dx"), 0)}, {"dscale", f.out.at("dscale")},
                {"dbias", f.out.at("dbias")}};
  EXPECT_EQ(compare("peer stats", f.g, expect, l, tol), "");
}

TEST(NormBatchRef, BnFinalizeRefusesAnEmptyCount) {
  OpGraph g;
  auto ch = [&](const char* n) { return in64(g, kCh, n); };
  auto f = g.bn_finalize(ch("sum"), ch("sq_sum"), ch("scale"), ch("bias"), g.tensor_scalar(kEps, DataType::DOUBLE),
                         g.tensor_scalar_int(0), Attributes().set_name("fin"));
  out64(f[2], "mean");
  ASSERT_TRUE(g.validate().is_good());
  Values in;
  for (const char* n : {"sum", "sq_sum", "scale", "bias"}) in[n] = random_array(kCh, 3);
  auto r = run_reference(g, in);
  ASSERT_EQ(r.status().code(), ErrorCode::GRAPH_EXECUTION_FAILED) << r.status().to_string();
  EXPECT_NE(r.status().message().find("fin"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("ACCUM_COUNT must be >= 1"), std::string::npos) << r.status().message();
}
