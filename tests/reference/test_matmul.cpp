// Reference matmul group: matmul (hand-computed product, identity, batch broadcast,
// per-dtype rounding against an independent triple loop, M/N/K overrides with
// padding, in cuDNN's broadcast form, the override shape rule, bad overrides), moe_grouped_matmul (NONE/GATHER/SCATTER against
// per-expert matmuls composed in the test, bad offsets/indices) and
// moe_grouped_matmul_bwd against central finite differences of the forward.
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"

using namespace opgraph;
using namespace opgraph::harness;

namespace {

// The reference matmul op on one [M, K] x [K, N] pair in DOUBLE (composition helper).
Array matmul_op(const Array& a, const Array& b) {
  OpGraph g;
  auto ta = g.tensor(a.dims, DataType::DOUBLE, "a");
  auto tb = g.tensor(b.dims, DataType::DOUBLE, "b");
  g.matmul(ta, tb)->set_output(true).set_name("c").set_data_type(DataType::DOUBLE);
  EXPECT_TRUE(g.validate().is_good());
  auto r = run_reference(g, {{"a", a}, {"b", b}});
  EXPECT_TRUE(r.is_good()) << r.status().to_string();
  return r.is_good() ? r->at("c") : Array();
}

// Rows of a [1, T, K] (or [T, K]) array as a [rows.size(), K] array.
Array rows_of(const Array& x, const std::vector<std::int64_t>& rows) {
  const std::int64_t k = x.dims.back();
  Array r({static_cast<std::int64_t>(rows.size()), k});
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t j = 0; j < k; ++j) r[static_cast<std::int64_t>(i) * k + j] = x[rows[i] * k + j];
  return r;
}

Array expert_weight(const Array& w, std::int64_t e) {
  Array r({w.dims[1], w.dims[2]});
  for (std::int64_t i = 0; i < r.numel(); ++i) r[i] = w[e * r.numel() + i];
  return r;
}

std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> r;
  for (std::int64_t i = lo; i < hi; ++i) r.push_back(i);
  return r;
}

std::string dims_text(const Dims& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

Array ints(Dims d, std::vector<double> v) {
  Array a(std::move(d));
  a.v = std::move(v);
  return a;
}

}  // namespace

TEST(Matmul, HandComputedProduct) {
  Case c;
  c.name = "matmul_2x3_3x2";
  c.build = [](OpGraph& g) {
    g.matmul(g.tensor({2, 3}, DataType::FLOAT, "a"), g.tensor({3, 2}, DataType::FLOAT, "b"))
        ->set_output(true).set_name("c").set_data_type(DataType::FLOAT);
  };
  c.fixed["a"] = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  c.fixed["b"] = ints({3, 2}, {7, 8, 9, 10, 11, 12});
  Values v = check_case(c);
  // [1 2 3; 4 5 6] @ [7 8; 9 10; 11 12] = [58 64; 139 154] (1*7+2*9+3*11 = 58, ...).
  EXPECT_EQ(v.at("c").v, (std::vector<double>{58, 64, 139, 154}));
}

TEST(Matmul, IdentityAndBatchBroadcast) {
  Case c;
  c.name = "matmul_broadcast";
  c.build = [](OpGraph& g) {
    auto a = g.tensor({2, 1, 3, 4}, DataType::DOUBLE, "a");
    auto b = g.tensor({3, 4, 5}, DataType::DOUBLE, "b");
    auto id = g.tensor({4, 4}, DataType::DOUBLE, "id");
    g.matmul(a, b)->set_output(true).set_name("c").set_data_type(DataType::DOUBLE);
    g.matmul(a, id)->set_output(true).set_name("a_id").set_data_type(DataType::DOUBLE);
  };
  Array id({4, 4});
  for (int i = 0; i < 4; ++i) id.at({i, i}) = 1.0;
  c.fixed["id"] = id;
  Values v = check_case(c);
  const Array &a = v.at("a"), &b = v.at("b"), &out = v.at("c");
  ASSERT_EQ(out.dims, (Dims{2, 3, 3, 5}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 5; ++n) {
          double s = 0;
          for (int k = 0; k < 4; ++k) s += a.at({i, 0, m, k}) * b.at({j, k, n});
          EXPECT_NEAR(out.at({i, j, m, n}), s, 1e-14);
        }
  EXPECT_EQ(v.at("a_id").v, a.v);
}

TEST(Matmul, OutputRoundedPerDtypeAgainstTripleLoop) {
  for (DataType t : {DataType::HALF, DataType::BFLOAT16, DataType::FLOAT}) {
    Case c;
    c.name = "matmul_" + std::string(to_string(t));
    c.seed = 11;
    c.build = [t](OpGraph& g) {
      g.matmul(g.tensor({2, 3, 8}, t, "a"), g.tensor({8, 5}, t, "b"), Attributes().set_compute_data_type(DataType::FLOAT))
          ->set_output(true).set_name("c").set_data_type(t);
    };
    Values v = check_case(c);
    const Array &a = v.at("a"), &b = v.at("b"), &out = v.at("c");
    int rounded = 0;
    for (int bt = 0; bt < 2; ++bt)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 5; ++n) {
          double s = 0;
          for (int k = 0; k < 8; ++k) s += a.at({bt, m, k}) * b.at({k, n});
          EXPECT_EQ(out.at({bt, m, n}), reference::round_to(t, s)) << to_string(t);
          rounded += reference::round_to(t, s) != s;
        }
    EXPECT_GT(rounded, 0) << to_string(t) << ": the output rounding must be exercised";
  }
}

TEST(Matmul, OverridesPadBeyondTheExtent) {
  Case c;
  c.name = "matmul_overrides";
  c.build = [](OpGraph& g) {
    auto a = g.tensor({2, 4, 3}, DataType::DOUBLE, "a");
    auto b = g.tensor({2, 3, 5}, DataType::DOUBLE, "b");
    auto mo = g.tensor({2, 1, 1}, DataType::INT32, "mo");
    auto no = g.tensor({2, 1, 1}, DataType::INT64, "no");
    auto ko = g.tensor({2, 1, 1}, DataType::INT32, "ko");
    g.matmul(a, b, Attributes().set("padding", -1.5), mo, no, ko)->set_output(true).set_name("c");
  };
  const double mo[2] = {2, 4}, no[2] = {5, 3}, ko[2] = {3, 1};
  c.fixed["mo"] = ints({2, 1, 1}, {mo[0], mo[1]});
  c.fixed["no"] = ints({2, 1, 1}, {no[0], no[1]});
  c.fixed["ko"] = ints({2, 1, 1}, {ko[0], ko[1]});
  Values v = check_case(c);
  const Array &a = v.at("a"), &b = v.at("b"), &out = v.at("c");
  for (int bt = 0; bt < 2; ++bt)
    for (int m = 0; m < 4; ++m)
      for (int n = 0; n < 5; ++n) {
        double e = -1.5;
        if (m < mo[bt] && n < no[bt]) {
          e = 0;
          for (int k = 0; k < ko[bt]; ++k) e += a.at({bt, m, k}) * b.at({bt, k, n});
        }
        EXPECT_NEAR(out.at({bt, m, n}), e, 1e-14) << bt << "," << m << "," << n;
      }
}

// cuDNN's broadcast form of the overrides (C's rank, unit M/N axes, batch axes 1 or C's), as
// cudnn-frontend's SDPA hands seq_len [b, 1, 1, 1] to its [b, h] matmuls: entry (i, j) reads the
// override at (i, j) with axes of extent 1 broadcast. M broadcast over heads, N over the batch,
// K one per (batch, head) in the broadcast form itself.
TEST(Matmul, BroadcastOverridesReadAtTheBatchIndex) {
  const std::int64_t B = 2, H = 3, M = 4, K = 5, N = 6;
  Case c;
  c.name = "matmul_broadcast_overrides";
  c.build = [&](OpGraph& g) {
    auto a = g.tensor({B, H, M, K}, DataType::DOUBLE, "a");
    auto b = g.tensor({B, H, K, N}, DataType::DOUBLE, "b");
    auto mo = g.tensor({B, 1, 1, 1}, DataType::INT32, "mo");
    auto no = g.tensor({1, H, 1, 1}, DataType::INT32, "no");
    auto ko = g.tensor({B, H, 1, 1}, DataType::INT64, "ko");
    g.matmul(a, b, Attributes().set("padding", 7.25), mo, no, ko)->set_output(true).set_name("c");
  };
  const std::vector<double> mo{3, 1}, no{6, 2, 4}, ko{5, 1, 3, 2, 4, 0};
  c.fixed["mo"] = ints({B, 1, 1, 1}, mo);
  c.fixed["no"] = ints({1, H, 1, 1}, no);
  c.fixed["ko"] = ints({B, H, 1, 1}, ko);
  Values v = check_case(c);
  const Array &a = v.at("a"), &b = v.at("b"), &out = v.at("c");
  int padded = 0, summed = 0;
  for (int i = 0; i < B; ++i)
    for (int j = 0; j < H; ++j)
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          double e = 7.25;
          if (m < mo[i] && n < no[j]) {
            e = 0;
            for (int k = 0; k < ko[i * H + j]; ++k) e += a.at({i, j, m, k}) * b.at({i, j, k, n});
            ++summed;
          } else {
            ++padded;
          }
          EXPECT_NEAR(out.at({i, j, m, n}), e, 1e-13) << i << "," << j << "," << m << "," << n;
        }
  EXPECT_GT(padded, 0);
  EXPECT_GT(summed, 0);
}

// The override shapes validate() takes, and the error naming tensor, port and rule for others.
TEST(Matmul, OverrideShapeRule) {
  auto build = [](const Dims& ovr, const char* port) {
    OpGraph g;
    auto a = g.tensor({2, 3, 4, 5}, DataType::FLOAT, "a");
    auto b = g.tensor({2, 3, 5, 6}, DataType::FLOAT, "b");
    auto o = g.tensor(ovr, DataType::INT32, "len");
    const std::string p = port;
    g.matmul(a, b, Attributes().set_name("mm"), p == "M_override" ? o : nullptr, p == "N_override" ? o : nullptr,
             p == "K_override" ? o : nullptr)
        ->set_output(true)
        .set_name("c");
    return g.validate();
  };
  for (const char* port : {"M_override", "N_override", "K_override"}) {
    // one element per batch entry, any shape; or the broadcast form
    for (const Dims& ok : {Dims{6}, Dims{2, 3, 1, 1}, Dims{6, 1, 1}, Dims{2, 1, 1, 1}, Dims{1, 3, 1, 1}, Dims{1, 1, 1, 1}}) {
      const Status s = build(ok, port);
      EXPECT_TRUE(s.is_good()) << port << " " << dims_text(ok) << ": " << s.to_string();
    }
    for (const Dims& bad : {Dims{2, 2, 1, 1}, Dims{2, 1, 1}, Dims{2, 1, 1, 2}, Dims{1, 3, 3, 1, 1}, Dims{2}}) {
      const Status s = build(bad, port);
      ASSERT_TRUE(s.is_bad()) << port << " " << dims_text(bad);
      EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
      for (const std::string& part : {std::string(port), std::string("'len'"), std::string("node 'mm'"),
                                     std::string("one extent per batch entry (6 elements)"),
                                     std::string("cuDNN's broadcast form"), std::string("[2, 3]")})
        EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.message();
    }
  }
}

TEST(Matmul, OverrideOutsideExtentFails) {
  OpGraph g;
  auto a = g.tensor({2, 2, 3}, DataType::FLOAT, "a");
  auto b = g.tensor({3, 2}, DataType::FLOAT, "b");
  auto ko = g.tensor({2}, DataType::INT32, "ko");
  g.matmul(a, b, Attributes().set_name("mmk"), nullptr, nullptr, ko)->set_output(true).set_name("c");
  ASSERT_TRUE(g.validate().is_good());
  for (double bad : {4.0, -1.0}) {
    auto r = run_reference(g, {{"a", Array({2, 2, 3}, 1.0)}, {"b", Array({3, 2}, 1.0)}, {"ko", ints({2}, {1, bad})}});
    ASSERT_EQ(r.status().code(), ErrorCode::GRAPH_EXECUTION_FAILED);
    EXPECT_NE(r.status().message().find("K_override of batch entry 1"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("node 'mmk'"), std::string::npos) << r.status().message();
  }
}

TEST(Moe, NoneModeEqualsPerExpertMatmuls) {
  for (DataType t : {DataType::DOUBLE, DataType::HALF}) {
    Case c;
    c.name = "moe_none_" + std::string(to_string(t));
    c.build = [t](OpGraph& g) {
      auto tok = g.tensor({1, 7, 4}, t, "token");
      auto w = g.tensor({3, 4, 5}, t, "weight");
      auto off = g.tensor({3}, DataType::INT32, "off");
      g.moe_grouped_matmul(tok, w, off)->set_output(true).set_name("out").set_data_type(t);
    };
    c.fixed["off"] = ints({3}, {0, 2, 2});  // expert 1 is empty, expert 2 takes rows 2..6
    Values v = check_case(c);
    const Array &tok = v.at("token"), &w = v.at("weight"), &out = v.at("out");
    for (std::int64_t e : {0, 2}) {
      auto rows = e == 0 ? range(0, 2) : range(2, 7);
      Array p = matmul_op(rows_of(tok, rows), expert_weight(w, e));
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (int n = 0; n < 5; ++n)
          EXPECT_EQ(out.at({0, rows[i], n}), reference::round_to(t, p.at({static_cast<std::int64_t>(i), n})));
    }
  }
}

TEST(Moe, GatherReadsIndexedTokens) {
  Case c;
  c.name = "moe_gather";
  c.build = [](OpGraph& g) {
    auto tok = g.tensor({1, 5, 3}, DataType::FLOAT, "token");
    auto w = g.tensor({3, 3, 4}, DataType::FLOAT, "weight");
    auto off = g.tensor({3}, DataType::INT64, "off");
    auto idx = g.tensor({6}, DataType::INT32, "idx");
    g.moe_grouped_matmul(tok, w, off, idx, nullptr, Attributes().set("mode", "GATHER"))
        ->set_output(true).set_name("out").set_data_type(DataType::DOUBLE);
  };
  const std::vector<std::int64_t> idx = {4, 0, 0, 3, 2, 4};
  c.fixed["idx"] = ints({6}, {4, 0, 0, 3, 2, 4});
  c.fixed["off"] = ints({3}, {0, 1, 4});  // output rows 0 | 1..3 | 4..5
  Values v = check_case(c);
  ASSERT_EQ(v.at("out").dims, (Dims{1, 6, 4}));
  const std::vector<std::pair<std::int64_t, std::int64_t>> groups = {{0, 1}, {1, 4}, {4, 6}};
  for (std::int64_t e = 0; e < 3; ++e) {
    auto [s, end] = groups[static_cast<std::size_t>(e)];
    std::vector<std::int64_t> src(idx.begin() + s, idx.begin() + end);
    Array p = matmul_op(rows_of(v.at("token"), src), expert_weight(v.at("weight"), e));
    for (std::int64_t i = s; i < end; ++i)
      for (int n = 0; n < 4; ++n) EXPECT_NEAR(v.at("out").at({0, i, n}), p.at({i - s, n}), 1e-14);
  }
}

TEST(Moe, ScatterAccumulatesWeightedRowsPerTopK) {
  Case c;
  c.name = "moe_scatter_top2";
  c.build = [](OpGraph& g) {
    auto tok = g.tensor({1, 8, 3}, DataType::DOUBLE, "token");
    auto w = g.tensor({2, 3, 4}, DataType::DOUBLE, "weight");
    auto off = g.tensor({2}, DataType::INT32, "off");
    auto idx = g.tensor({8}, DataType::INT64, "idx");
    auto ks = g.tensor({8}, DataType::FLOAT, "ks");
    g.moe_grouped_matmul(tok, w, off, idx, ks, Attributes().set("mode", "SCATTER").set("top_k", 2))
        ->set_output(true).set_name("out").set_data_type(DataType::DOUBLE);
  };
  const std::vector<std::int64_t> idx = {0, 1, 2, 3, 3, 2, 1, 0};
  c.fixed["idx"] = ints({8}, {0, 1, 2, 3, 3, 2, 1, 0});
  c.fixed["off"] = ints({2}, {0, 3});
  c.ranges["ks"] = {0.1, 1.0};
  Values v = check_case(c);
  ASSERT_EQ(v.at("out").dims, (Dims{1, 4, 4}));
  Array expect({1, 4, 4});
  const std::vector<std::pair<std::int64_t, std::int64_t>> groups = {{0, 3}, {3, 8}};
  for (std::int64_t e = 0; e < 2; ++e) {
    auto [s, end] = groups[static_cast<std::size_t>(e)];
    Array p = matmul_op(rows_of(v.at("token"), range(s, end)), expert_weight(v.at("weight"), e));
    for (std::int64_t i = s; i < end; ++i)
      for (int n = 0; n < 4; ++n) expect.at({0, idx[static_cast<std::size_t>(i)], n}) += v.at("ks")[i] * p.at({i - s, n});
  }
  for (std::int64_t i = 0; i < expect.numel(); ++i) EXPECT_NEAR(v.at("out")[i], expect[i], 1e-14) << i;
}

TEST(Moe, BadOffsetsAndIndicesFail) {
  OpGraph g;
  auto tok = g.tensor({1, 4, 2}, DataType::FLOAT, "token");
  auto w = g.tensor({2, 2, 2}, DataType::FLOAT, "weight");
  auto off = g.tensor({2}, DataType::INT32, "off");
  auto idx = g.tensor({3}, DataType::INT32, "idx");
  g.moe_grouped_matmul(tok, w, off, idx, nullptr, Attributes().set_name("moe").set("mode", "GATHER"))
      ->set_output(true).set_name("out");
  ASSERT_TRUE(g.validate().is_good());
  Values in{{"token", Array({1, 4, 2}, 1.0)}, {"weight", Array({2, 2, 2}, 1.0)}, {"off", ints({2}, {2, 1})},
            {"idx", ints({3}, {0, 1, 2})}};
  auto r = run_reference(g, in);
  EXPECT_EQ(r.status().code(), ErrorCode::GRAPH_EXECUTION_FAILED);
  EXPECT_NE(r.status().message().find("FirstTokenOffset"), std::string::npos) << r.status().message();
  in.at("off") = ints({2}, {0, 1});
  in.at("idx") = ints({3}, {0, 4, 1});
  r = run_reference(g, in);
  EXPECT_EQ(r.status().code(), ErrorCode::GRAPH_EXECUTION_FAILED);
  EXPECT_NE(r.status().message().find("TokenIndex[1] is 4"), std::string::npos) << r.status().message();
  in.at("idx") = ints({3}, {3, 0, 1});
  EXPECT_TRUE(run_reference(g, in).is_good());
}

TEST(Moe, BackwardMatchesFiniteDifferencesOfForward) {
  Case fwd;
  fwd.name = "moe_fwd";
  fwd.build = [](OpGraph& g) {
    auto tok = g.tensor({1, 6, 3}, DataType::DOUBLE, "token");
    auto w = g.tensor({4, 3, 2}, DataType::DOUBLE, "weight");
    auto off = g.tensor({4}, DataType::INT32, "off");
    g.moe_grouped_matmul(tok, w, off)->set_output(true).set_name("out").set_data_type(DataType::DOUBLE);
  };
  fwd.fixed["off"] = ints({4}, {0, 3, 3, 5});  // expert 1 empty: its gradient is zero
  OpGraph gf;
  ASSERT_TRUE(build(fwd, gf).is_good());
  Values in = make_inputs(fwd, gf);
  Values wts{{"out", random_array({1, 6, 2}, 5)}};
  auto fd = fd_gradient(gf, in, "weight", wts);
  ASSERT_TRUE(fd.is_good()) << fd.status().to_string();

  Case bwd;
  bwd.name = "moe_bwd";
  bwd.build = [](OpGraph& g) {
    auto dy = g.tensor({1, 6, 2}, DataType::DOUBLE, "dy");
    auto tok = g.tensor({1, 6, 3}, DataType::DOUBLE, "token");
    auto off = g.tensor({4}, DataType::INT32, "off");
    g.moe_grouped_matmul_bwd(dy, tok, off)->set_output(true).set_name("dw").set_data_type(DataType::DOUBLE);
  };
  bwd.fixed = {{"dy", wts.at("out")}, {"token", in.at("token")}, {"off", in.at("off")}};
  Values v = check_case(bwd);
  ASSERT_EQ(v.at("dw").dims, (Dims{4, 3, 2}));
  std::string m = compare("moe_bwd vs fd", gf, {{"dw", *fd}}, {{"dw", v.at("dw")}}, {{"dw", {1e-8, 1e-7}}});
  EXPECT_EQ(m, "");
  for (int i = 6; i < 12; ++i) EXPECT_EQ(v.at("dw")[i], 0.0);  // expert 1
}
