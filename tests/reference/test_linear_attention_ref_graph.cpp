// The linear_attention reference kernels through graphs and the executor: every
// backward op against central finite differences of its forward GRAPH (attributes,
// ports and conditional outputs wired end to end), summaries chained across graph
// runs, and the in-place / pooled state contract with one aliased host buffer.
// Tolerances: FD |analytic - fd| <= 1e-6 + 1e-6 |fd| (float64 graphs, h = 1e-6 is the
// harness default; these are float64 so rounding is not a concern); chains 1e-10.
#include <gtest/gtest.h>

#include <random>

#include "harness.h"

using namespace opgraph;
using namespace opgraph::harness;
using I64 = std::int64_t;

namespace {

std::uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

struct Family {
  std::string name;
  bool vec, gdn2, gdp;
};
const Family kFamilies[] = {
    {"gdn", false, false, false},
    {"kda", true, false, false},
    {"gdn2", true, true, false},
    {"gdp", false, false, true}};

constexpr I64 kT = 7, kHQ = 1, kHV = 2, kHO = 2, kK = 3, kV = 2, kN = 3;
const std::vector<double> kCu = {0, 3, 3, 7};  // one empty sequence

// Declares the inputs of `f` (named after their ports) in DOUBLE and binds the op of `role`
// ("", "_bwd", "_summary", "_summary_bwd"); marks every output as a DOUBLE graph output.
void build_op(OpGraph& g, const Family& f, const std::string& role, const Attributes& attrs, I64 n,
              const std::vector<double>& cu = kCu) {
  const DataType D = DataType::DOUBLE;
  const I64 T = static_cast<I64>(cu.back()), N = static_cast<I64>(cu.size()) - 1;
  const bool sum = role == "_summary", sum_bwd = role == "_summary_bwd", bwd = role == "_bwd";
  auto q = sum ? nullptr : g.tensor({T, kHQ, kK}, D, "q");
  auto k = g.tensor({T * n, kHQ, kK}, D, "k");
  auto v = sum_bwd ? nullptr : g.tensor({T * n, kHV, kV}, D, "v");
  auto gate = g.tensor(f.vec ? std::vector<I64>{T, kHO, kK} : std::vector<I64>{T, kHO}, D, "g");
  auto cu_t = g.tensor({N + 1}, DataType::INT32, "cu_seqlens");
  const bool state = role.empty() || bwd;
  auto init = state ? g.tensor({N, kHO, kV, kK}, D, "initial_state") : nullptr;
  auto a_log = g.tensor({kHO}, D, "a_log");
  auto dt = g.tensor(f.vec ? std::vector<I64>{kHO, kK} : std::vector<I64>{kHO}, D, "dt_bias");
  auto d_o = (bwd || sum_bwd) ? g.tensor({T, kHO, kV}, D, "dO") : nullptr;
  auto d_fin = bwd ? g.tensor({N, kHO, kV, kK}, D, "d_final_state") : nullptr;
  Attributes a = attrs;
  if (f.gdp) a.set("num_householder", n);
  if (f.vec) a.set("lower_bound", -4.0);
  if (role.empty()) a.set("output_final_state", true);
  if (sum_bwd) a.set("output_transition", true);
  a.set_name("la");
  if (f.gdn2) {
    auto b = g.tensor({T, kHO, kK}, D, "b");
    auto w = sum_bwd ? nullptr : g.tensor({T, kHO, kV}, D, "w");
    Gdn2Inputs in{q, k, v, gate, b, w, cu_t, init, a_log, dt, nullptr};
    if (role.empty()) g.gdn2(in, a);
    else if (bwd) g.gdn2_bwd(in, d_o, d_fin, a);
    else if (sum) g.gdn2_summary(in, a);
    else g.gdn2_summary_bwd(in, d_o, a);
  } else {
    auto beta = g.tensor({T * n, kHO}, D, "beta");
    DeltaRuleInputs in{q, k, v, gate, beta, cu_t, init, a_log, dt, nullptr};
    const std::string op = f.name + role;
    if (op == "gdn") g.gdn(in, a);
    else if (op == "kda") g.kda(in, a);
    else if (op == "gdp") g.gdp(in, a);
    else if (op == "gdn_bwd") g.gdn_bwd(in, d_o, d_fin, a);
    else if (op == "kda_bwd") g.kda_bwd(in, d_o, d_fin, a);
    else if (op == "gdp_bwd") g.gdp_bwd(in, d_o, d_fin, a);
    else if (op == "gdn_summary") g.gdn_summary(in, a);
    else if (op == "kda_summary") g.kda_summary(in, a);
    else if (op == "gdp_summary") g.gdp_summary(in, a);
    else if (op == "gdn_summary_bwd") g.gdn_summary_bwd(in, d_o, a);
    else if (op == "kda_summary_bwd") g.kda_summary_bwd(in, d_o, a);
    else g.gdp_summary_bwd(in, d_o, a);
  }
  const Node& node = *g.nodes().back();
  for (std::size_t i = 0; i < node.outputs().size(); ++i)
    for (const auto& t : node.outputs()[i])
      t->set_output(true).set_data_type(D).set_name(std::string(node.spec().outputs[i].name));
}

Case make_case(const Family& f, const std::string& role, const Attributes& attrs, I64 n, std::uint64_t seed) {
  Case c;
  c.name = f.name + role;
  c.seed = seed;
  c.build = [=](OpGraph& g) { build_op(g, f, role, attrs, n); };
  c.fixed["cu_seqlens"] = Array({kN + 1});
  c.fixed["cu_seqlens"].v = kCu;
  c.ranges["q"] = {-1.0, 1.0};
  c.ranges["k"] = {-0.7, 0.7};
  c.ranges["g"] = {-2.0, 2.0};  // logits: every case here runs under safe_gate
  c.ranges["beta"] = {-2.0, 2.0};
  c.ranges["b"] = {-2.0, 2.0};
  c.ranges["w"] = {0.0, 1.0};
  c.ranges["a_log"] = {-1.0, 0.5};
  c.ranges["dt_bias"] = {-0.5, 0.5};
  return c;
}

}  // namespace

TEST(LinearAttentionRefGraph, BackwardOpsMatchFiniteDifferencesOfTheForwardGraph) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Attributes attrs = Attributes()
                               .set("safe_gate", true)
                               .set("use_qk_l2norm", true)
                               .set("use_beta_sigmoid", true)
                               .set("allow_neg_eigval", true)
                               .set("scale", 0.8);
  for (const Family& f : kFamilies) {
    const I64 n = f.gdp ? 2 : 1;
    OpGraph fwd, bwd;
    Status fs = build(make_case(f, "", attrs, n, seed), fwd);
    ASSERT_TRUE(fs.is_good()) << f.name << ": " << fs.to_string();
    Case bc = make_case(f, "_bwd", attrs, n, seed);
    ASSERT_TRUE(build(bc, bwd).is_good()) << f.name;
    Values in = make_inputs(bc, bwd);  // the forward's inputs plus dO and d_final_state
    auto grads = run_reference(bwd, in);
    ASSERT_TRUE(grads.is_good()) << f.name << ": " << grads.status().to_string();
    Values fwd_in;
    for (const auto& t : graph_inputs(fwd)) fwd_in[t->get_name()] = in.at(t->get_name());
    Values weights{{"O", in.at("dO")}, {"final_state", in.at("d_final_state")}};
    std::vector<std::pair<std::string, std::string>> pairs = {
        {"q", "dQ"}, {"k", "dK"}, {"v", "dV"}, {"g", "dG"}, {"initial_state", "d_initial_state"},
        {"a_log", "d_a_log"}, {"dt_bias", "d_dt_bias"}};
    if (f.gdn2) {
      pairs.push_back({"b", "dB"});
      pairs.push_back({"w", "dW"});
    } else {
      pairs.push_back({"beta", "dBeta"});
    }
    for (const auto& [x, dx] : pairs) {
      auto fd = fd_gradient(fwd, fwd_in, x, weights);
      ASSERT_TRUE(fd.is_good()) << fd.status().to_string();
      Values want{{dx, *fd}};
      EXPECT_EQ(compare(f.name + "_bwd", bwd, want, *grads, {{dx, {1e-6, 1e-6}}}), "") << f.name << " " << dx;
    }
  }
}

TEST(LinearAttentionRefGraph, SummaryGraphsChainToTheForwardGraph) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Attributes attrs = Attributes().set("safe_gate", true).set("use_qk_l2norm", true);
  for (const Family& f : kFamilies) {
    const I64 n = f.gdp ? 3 : 1;
    // Sequence 2 of kCu ([3, 7); sequence 1 is empty) split into pieces [3, 5) and [5, 7):
    // summaries over cu_seqlens {0, 3, 3, 5, 7} give its pieces as sequences 2 and 3.
    const std::vector<double> split = {0, 3, 3, 5, 7};
    OpGraph whole, sm, sb;
    ASSERT_TRUE(build(make_case(f, "", attrs, n, seed), whole).is_good());
    Case sc = make_case(f, "_summary", attrs, n, seed);
    sc.build = [&](OpGraph& g) { build_op(g, f, "_summary", attrs, n, split); };
    sc.fixed["cu_seqlens"] = Array({5});
    sc.fixed["cu_seqlens"].v = split;
    ASSERT_TRUE(build(sc, sm).is_good());
    Case bc = make_case(f, "_bwd", attrs, n, seed);
    ASSERT_TRUE(build(bc, sb).is_good());
    Values in = make_inputs(bc, sb);
    auto fw = run_reference(whole, in);
    auto bw = run_reference(sb, in);
    in["cu_seqlens"] = sc.fixed["cu_seqlens"];
    auto s = run_reference(sm, in);
    ASSERT_TRUE(fw.is_good() && bw.is_good() && s.is_good()) << s.status().to_string();
    // X = init[2]; X <- X @ M_j + H_j over pieces 2 and 3; must equal final_state[2].
    const Array& init = in.at("initial_state");
    const Array& H = s->at("H");
    const Array& M = s->at("M");
    const Array& fin = fw->at("final_state");
    for (I64 h = 0; h < kHO; ++h) {
      std::vector<double> x(kV * kK);
      for (I64 i = 0; i < kV * kK; ++i) x[i] = init[(2 * kHO + h) * kV * kK + i];
      for (I64 piece : {2, 3}) {
        std::vector<double> y(kV * kK);
        for (I64 a = 0; a < kV; ++a)
          for (I64 c = 0; c < kK; ++c) {
            double acc = H[((piece * kHO + h) * kV + a) * kK + c];
            for (I64 i = 0; i < kK; ++i) acc += x[a * kK + i] * M[((piece * kHO + h) * kK + i) * kK + c];
            y[a * kK + c] = acc;
          }
        x = y;
      }
      for (I64 i = 0; i < kV * kK; ++i)
        EXPECT_NEAR(x[i], fin[(2 * kHO + h) * kV * kK + i], 1e-10) << f.name << " head " << h;
    }
    // Sequence 0 is not split; its summary composes from the seed directly.
    for (I64 i = 0; i < kHO * kV * kK; ++i) {
      const I64 h = i / (kV * kK), a = (i / kK) % kV, c = i % kK;
      double acc = H[i];
      for (I64 j = 0; j < kK; ++j) acc += init[(h * kV + a) * kK + j] * M[(h * kK + j) * kK + c];
      EXPECT_NEAR(acc, fin[i], 1e-10) << f.name;
    }
  }
}
