// State checkpoints of the float64 linear-attention reference (checkpoint_every_n_tokens = c):
// sequence i's j-th checkpoint is its state after its first j c (sub-)steps, at row
// sum_{s<i} floor(L_s n / c) + j - 1 of state_checkpoints.
//   - la_ref level, every variant: each checkpoint row equals the final state of the same
//     inputs with the sequence cut after its j c steps (a cu_seqlens with one more offset);
//     rows past the last checkpoint stay zero. Tolerance: 1e-12 absolute + relative (the same
//     float64 operations in the same order give the same value; the margin is for none).
//   - graph level (the executor, caller buffers): the output's inferred rows floor(T / c), a
//     caller-declared exact count, and a batch needing more rows than declared refused with
//     INVALID_VALUE naming the node and the rule, the caller's O buffer left as it was.
//   - the backward given the checkpoints (gdn_bwd's state_checkpoints input): la_ref level, gdn, kda
//     and gdp against the same backward run by pieces (1e-10); graph level, the rows read and too
//     few refused before anything is written.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engines/reference/executor.h"
#include "opgraph/op_graph.h"
#include "reference/linear_attention_ref_fixture.h"

using namespace la_ref_test;

namespace {

// The state of sequence `seq` after its first `steps` steps: the forward of the same inputs
// with the sequence cut there (its tokens after the cut a sequence of their own).
Array state_after(const Problem& p, I64 seq, I64 steps) {
  const I64 n = p.o.variant == Variant::GDP ? p.o.n : 1;
  Problem cut = p;
  cut.o.cu.insert(cut.o.cu.begin() + seq + 1, p.o.cu[static_cast<std::size_t>(seq)] + steps / n);
  const I64 HO = p.o.ho(), per = HO * p.o.vd * p.o.kd;
  cut.init = la_ref::zeros({p.o.n_seq() + 1, HO, p.o.vd, p.o.kd});
  std::copy(p.init.v.begin(), p.init.v.begin() + (seq + 1) * per, cut.init.v.begin());
  auto f = la_ref::forward(cut.cfg, cut.inputs());
  EXPECT_TRUE(f.is_good()) << f.status().to_string();
  Array out = la_ref::zeros({HO, p.o.vd, p.o.kd});
  if (f.is_good())
    std::copy(f->final_state.v.begin() + seq * per, f->final_state.v.begin() + (seq + 1) * per, out.v.begin());
  return out;
}

void check_checkpoints(Opts o, I64 every) {
  o.cu = {0, 7, 7, 13, 15};  // lengths 7, 0, 6, 2
  Problem p = make_problem(o);
  const I64 n = o.variant == Variant::GDP ? o.n : 1, HO = o.ho(), per = HO * o.vd * o.kd;
  I64 need = 0;
  for (std::size_t i = 0; i + 1 < o.cu.size(); ++i) need += (o.cu[i + 1] - o.cu[i]) * n / every;
  p.cfg.checkpoint_every = every;
  p.cfg.checkpoint_rows = need + 2;  // two spare rows stay zero
  auto f = la_ref::forward(p.cfg, p.inputs());
  ASSERT_TRUE(f.is_good()) << f.status().to_string();
  ASSERT_EQ(f->checkpoints.dims, (Dims{need + 2, HO, o.vd, o.kd}));
  I64 row = 0;
  for (I64 i = 0; i < o.n_seq(); ++i) {
    const I64 steps = (o.cu[static_cast<std::size_t>(i + 1)] - o.cu[static_cast<std::size_t>(i)]) * n;
    for (I64 j = 1; j * every <= steps; ++j, ++row) {
      Array got = la_ref::zeros({HO, o.vd, o.kd});
      std::copy(f->checkpoints.v.begin() + row * per, f->checkpoints.v.begin() + (row + 1) * per, got.v.begin());
      expect_close(got, state_after(p, i, j * every), 1e-12, 1e-12,
                   "sequence " + std::to_string(i) + " checkpoint " + std::to_string(j));
    }
  }
  EXPECT_EQ(row, need);
  for (std::size_t x = static_cast<std::size_t>(need * per); x < f->checkpoints.v.size(); ++x)
    ASSERT_EQ(f->checkpoints.v[x], 0.0) << "a row past the last checkpoint was written";
  // A cadence with more checkpoints than rows is refused before anything is computed.
  p.cfg.checkpoint_rows = need - 1;
  auto short_rows = la_ref::forward(p.cfg, p.inputs());
  ASSERT_FALSE(short_rows.is_good());
  EXPECT_EQ(short_rows.status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(short_rows.status().message().find("checkpoints:"), std::string::npos) << short_rows.status().message();
}

}  // namespace

TEST(LinearAttentionRefCheckpoints, GdnRowsAreThePrefixStates) {
  check_checkpoints(Opts{.variant = Variant::GDN, .l2norm = true}, 3);
}
TEST(LinearAttentionRefCheckpoints, KdaRowsAreThePrefixStates) { check_checkpoints(Opts{.variant = Variant::KDA}, 2); }
TEST(LinearAttentionRefCheckpoints, Gdn2RowsAreThePrefixStates) {
  check_checkpoints(Opts{.variant = Variant::GDN2, .hq = 2, .hk = 2}, 3);
}
TEST(LinearAttentionRefCheckpoints, GdpRowsCountSubSteps) {  // n = 2 sub-steps a token: every 4 = every 2 tokens
  check_checkpoints(Opts{.variant = Variant::GDP, .n = 2}, 4);
}

namespace {

constexpr I64 kH = 1, kD = 2, kEvery = 64;

struct GdnRun {
  Status status;
  I64 rows = -1;                // state_checkpoints' rows as validated
  std::vector<double> o, ckpt;  // the caller's buffers after the call
};

// gdn over cu (lengths summing to T) with checkpoint_every_n_tokens = 64; `rows` < 0: inferred.
GdnRun run_gdn(const std::vector<std::int32_t>& cu, I64 rows, std::uint64_t seed) {
  const I64 T = cu.back(), N = static_cast<I64>(cu.size()) - 1;
  OpGraph g;
  const DataType D = DataType::DOUBLE;
  DeltaRuleInputs in{g.tensor({T, kH, kD}, D, "q"), g.tensor({T, kH, kD}, D, "k"), g.tensor({T, kH, kD}, D, "v"),
                     g.tensor({T, kH}, D, "g"), g.tensor({T, kH}, D, "beta"),
                     g.tensor({N + 1}, DataType::INT32, "cu_seqlens")};
  auto out = g.gdn(in, Attributes().set("checkpoint_every_n_tokens", kEvery).set_name("la"));
  GdnRun r;
  if (!out.state_checkpoints) {
    r.status = Status(ErrorCode::INTERNAL_ERROR, "no state_checkpoints output");
    return r;
  }
  out.o->set_output(true);
  out.state_checkpoints->set_output(true).set_data_type(D);
  if (rows >= 0) out.state_checkpoints->set_dim({rows, kH, kD, kD});
  r.status = g.validate();
  if (r.status.is_bad()) return r;
  r.rows = out.state_checkpoints->get_dim()[0];
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  auto rnd = [&](I64 count, double lo, double hi) {
    std::vector<double> v(static_cast<std::size_t>(count));
    for (double& x : v) x = lo + (hi - lo) * (u(gen) + 0.5);
    return v;
  };
  std::vector<double> q = rnd(T * kH * kD, -1, 1), k = rnd(T * kH * kD, -0.7, 0.7), v = rnd(T * kH * kD, -1, 1);
  std::vector<double> gate = rnd(T * kH, -0.3, -0.01), beta = rnd(T * kH, 0.2, 0.9);
  std::vector<std::int32_t> cu_buf = cu;
  r.o.assign(static_cast<std::size_t>(T * kH * kD), 7.0);  // poison
  r.ckpt.assign(static_cast<std::size_t>(std::max<I64>(r.rows, 0) * kH * kD * kD), 7.0);
  std::map<I64, reference::HostBuffer> m = {{in.q->get_uid(), {q.data()}},
                                            {in.k->get_uid(), {k.data()}},
                                            {in.v->get_uid(), {v.data()}},
                                            {in.g->get_uid(), {gate.data()}},
                                            {in.beta->get_uid(), {beta.data()}},
                                            {in.cu_seqlens->get_uid(), {cu_buf.data()}},
                                            {out.o->get_uid(), {r.o.data()}},
                                            {out.state_checkpoints->get_uid(), {r.ckpt.data()}}};
  r.status = reference::execute(g, m);
  return r;
}

}  // namespace

TEST(LinearAttentionRefCheckpoints, GraphInfersTheMostRowsAndTakesTheCallersCount) {
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::int32_t> cu = {0, 130, 130, 200};  // 2, 0 and 1 checkpoints: 3 rows of floor(200 / 64) = 3
  GdnRun inferred = run_gdn(cu, -1, seed);
  ASSERT_TRUE(inferred.status.is_good()) << inferred.status.to_string();
  EXPECT_EQ(inferred.rows, 3);
  for (double x : inferred.ckpt) ASSERT_NE(x, 7.0) << "a checkpoint row was not written";
  GdnRun exact = run_gdn(cu, 3, seed);  // the caller's exact count (FlashInfer's sum of floor(L / c))
  ASSERT_TRUE(exact.status.is_good()) << exact.status.to_string();
  EXPECT_EQ(exact.ckpt, inferred.ckpt);
  EXPECT_EQ(exact.o, inferred.o);
  GdnRun more = run_gdn(cu, 5, seed);  // spare rows are written as zero
  ASSERT_TRUE(more.status.is_good()) << more.status.to_string();
  EXPECT_TRUE(std::equal(inferred.ckpt.begin(), inferred.ckpt.end(), more.ckpt.begin()));
  for (std::size_t x = inferred.ckpt.size(); x < more.ckpt.size(); ++x) EXPECT_EQ(more.ckpt[x], 0.0);
}

TEST(LinearAttentionRefCheckpoints, TooFewRowsFailAndLeaveTheCallersBuffers) {
  GdnRun r = run_gdn({0, 130, 130, 200}, 2, std::random_device{}());
  EXPECT_EQ(r.status.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(r.status.message().find("op 'gdn'"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("checkpoints:"), std::string::npos) << r.status.message();
  for (double x : r.o) ASSERT_EQ(x, 7.0) << "O was written by a refused call";
  for (double x : r.ckpt) ASSERT_EQ(x, 7.0) << "state_checkpoints was written by a refused call";
}

// The backward given state_checkpoints takes the state at each checkpoint from them. Checked against its
// definition: one sequence of 11 tokens with checkpoints every 4 steps is the same as three sequences (tokens
// [0, 4), [4, 8), [8, 11)) seeded by initial_state and the two checkpoint rows, each piece's d_final_state the
// next piece's d_initial_state (three calls reach that fixed point). With the forward's own checkpoints the
// gradients are the unseeded ones; with other rows they differ. Tolerance 1e-10 (float64, the same sums).
namespace {

void check_seeded_backward(Opts o, I64 every) {
  const I64 n = o.variant == Variant::GDP ? o.n : 1, tokens = every / n;
  o.cu = {0, 11};
  Problem p = make_problem(o);
  const I64 HO = o.ho(), per = HO * o.vd * o.kd, rows = 11 * n / every;
  p.cfg.checkpoint_every = every;
  p.cfg.checkpoint_rows = rows;
  auto f = la_ref::forward(p.cfg, p.inputs());
  ASSERT_TRUE(f.is_good()) << f.status().to_string();
  p.cfg.checkpoint_rows = -1;
  auto plain = la_ref::backward(p.cfg, p.inputs(), p.d_o, &p.d_final);
  ASSERT_TRUE(plain.is_good()) << plain.status().to_string();
  auto own = la_ref::backward(p.cfg, p.inputs(), p.d_o, &p.d_final, &f->checkpoints);
  ASSERT_TRUE(own.is_good()) << own.status().to_string();
  expect_close(own->dk, plain->dk, 1e-10, 1e-10, "dk, the forward's own checkpoints");
  expect_close(own->dg, plain->dg, 1e-10, 1e-10, "dg, the forward's own checkpoints");
  expect_close(own->d_initial_state, plain->d_initial_state, 1e-10, 1e-10, "d_initial_state, own checkpoints");

  // Other states at the checkpoints.
  Array ck = f->checkpoints;
  for (double& x : ck.v) x += uniform(-0.3, 0.3);
  auto seeded = la_ref::backward(p.cfg, p.inputs(), p.d_o, &p.d_final, &ck);
  ASSERT_TRUE(seeded.is_good()) << seeded.status().to_string();
  double moved = 0.0;
  for (std::size_t i = 0; i < seeded->dq.v.size(); ++i) moved = std::max(moved, std::abs(seeded->dq.v[i] - plain->dq.v[i]));
  EXPECT_GT(moved, 1e-3) << "the checkpoints were not read";

  // The same by pieces.
  Problem cut = p;
  cut.o.cu.clear();
  for (I64 t = 0; t < 11; t += tokens) cut.o.cu.push_back(t);
  cut.o.cu.push_back(11);
  const I64 pieces = static_cast<I64>(cut.o.cu.size()) - 1;
  ASSERT_EQ(pieces, rows + 1);
  cut.init = la_ref::zeros({pieces, HO, o.vd, o.kd});
  std::copy(p.init.v.begin(), p.init.v.begin() + per, cut.init.v.begin());
  std::copy(ck.v.begin(), ck.v.begin() + rows * per, cut.init.v.begin() + per);
  cut.d_final = la_ref::zeros({pieces, HO, o.vd, o.kd});
  std::copy(p.d_final.v.begin(), p.d_final.v.end(), cut.d_final.v.begin() + (pieces - 1) * per);
  Result<la_ref::Grads> g = Status(ErrorCode::INTERNAL_ERROR, "not run");
  for (I64 pass = 0; pass < pieces; ++pass) {
    g = la_ref::backward(cut.cfg, cut.inputs(), cut.d_o, &cut.d_final);
    ASSERT_TRUE(g.is_good()) << g.status().to_string();
    // Piece j's d_final_state is piece j + 1's d_initial_state.
    std::copy(g->d_initial_state.v.begin() + per, g->d_initial_state.v.end(), cut.d_final.v.begin());
  }
  expect_close(seeded->dq, g->dq, 1e-10, 1e-10, "dq");
  expect_close(seeded->dk, g->dk, 1e-10, 1e-10, "dk");
  expect_close(seeded->dv, g->dv, 1e-10, 1e-10, "dv");
  expect_close(seeded->dg, g->dg, 1e-10, 1e-10, "dg");
  if (o.variant != Variant::GDN2) expect_close(seeded->dbeta, g->dbeta, 1e-10, 1e-10, "dbeta");
  Array first = la_ref::zeros({1, HO, o.vd, o.kd});
  std::copy(g->d_initial_state.v.begin(), g->d_initial_state.v.begin() + per, first.v.begin());
  expect_close(seeded->d_initial_state, first, 1e-10, 1e-10, "d_initial_state");

  // Fewer rows than the sequence's checkpoints: refused.
  Array short_ck = la_ref::zeros({rows - 1, HO, o.vd, o.kd});
  auto refused = la_ref::backward(p.cfg, p.inputs(), p.d_o, &p.d_final, &short_ck);
  ASSERT_FALSE(refused.is_good());
  EXPECT_NE(refused.status().message().find("checkpoints:"), std::string::npos) << refused.status().message();
}

}  // namespace

TEST(LinearAttentionRefCheckpoints, GdnBackwardSeededByCheckpointsIsTheBackwardByPieces) {
  check_seeded_backward(Opts{.variant = Variant::GDN, .l2norm = true}, 4);
}
TEST(LinearAttentionRefCheckpoints, KdaBackwardSeededByCheckpointsIsTheBackwardByPieces) {
  check_seeded_backward(Opts{.variant = Variant::KDA}, 4);
}
TEST(LinearAttentionRefCheckpoints, GdpBackwardSeededByCheckpointsIsTheBackwardByPieces) {
  check_seeded_backward(Opts{.variant = Variant::GDP, .n = 2}, 4);  // every 4 sub-steps: 2 tokens a piece
}

// gdn_bwd through the graph executor with state_checkpoints bound: the rows are read (zero rows restart the
// recompute from zero after each checkpoint, so dQ moves there and only there), and a batch needing more rows
// than bound is refused with INVALID_VALUE naming the node and the rule before any gradient is written (the
// caller's dQ keeps its poison).
TEST(LinearAttentionRefCheckpoints, GraphBackwardReadsTheRowsAndRefusesTooFew) {
  const std::vector<std::int32_t> cu = {0, 130, 130, 200};  // 2, 0 and 1 checkpoints every 64
  const I64 T = 200, N = 3;
  auto backward = [&](const std::vector<double>* ck, I64 rows, std::vector<double>& dq) {
    OpGraph g;
    const DataType D = DataType::DOUBLE;
    DeltaRuleInputs in{g.tensor({T, kH, kD}, D, "q"), g.tensor({T, kH, kD}, D, "k"), g.tensor({T, kH, kD}, D, "v"),
                       g.tensor({T, kH}, D, "g"), g.tensor({T, kH}, D, "beta"),
                       g.tensor({N + 1}, DataType::INT32, "cu_seqlens")};
    TensorPtr d_o = g.tensor({T, kH, kD}, D, "dO");
    TensorPtr ckt = ck ? g.tensor({rows, kH, kD, kD}, D, "state_checkpoints") : nullptr;
    Attributes a = Attributes().set_name("la_bwd");
    if (ck) a.set("checkpoint_every_n_tokens", kEvery);
    DeltaRuleGrads out = g.gdn_bwd(in, d_o, nullptr, a, ckt);
    for (const TensorPtr& t : {out.dq, out.dk, out.dv, out.dg, out.dbeta}) t->set_output(true).set_data_type(D);
    Status v = g.validate();
    if (v.is_bad()) return v;
    // Fixed inputs (the comparison is between backward runs on the same ones).
    std::vector<double> x(static_cast<std::size_t>(T * kH * kD), 0.25), gate(static_cast<std::size_t>(T * kH), -0.1),
        beta(static_cast<std::size_t>(T * kH), 0.5), dob(x.size(), 0.5), dk(x.size()), dv(x.size()),
        dg(gate.size()), dbeta(gate.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.3 * std::sin(0.7 * static_cast<double>(i) + 1.0);
    std::vector<std::int32_t> cu_buf = cu;
    std::vector<double> rows_buf = ck ? *ck : std::vector<double>{};
    dq.assign(x.size(), 7.0);  // poison
    std::map<I64, reference::HostBuffer> m = {
        {in.q->get_uid(), {x.data()}},        {in.k->get_uid(), {x.data()}},       {in.v->get_uid(), {x.data()}},
        {in.g->get_uid(), {gate.data()}},     {in.beta->get_uid(), {beta.data()}},
        {in.cu_seqlens->get_uid(), {cu_buf.data()}}, {d_o->get_uid(), {dob.data()}}, {out.dq->get_uid(), {dq.data()}},
        {out.dk->get_uid(), {dk.data()}},     {out.dv->get_uid(), {dv.data()}},    {out.dg->get_uid(), {dg.data()}},
        {out.dbeta->get_uid(), {dbeta.data()}}};
    if (ck) m[ckt->get_uid()] = {rows_buf.data()};
    return reference::execute(g, m);
  };
  std::vector<double> plain, zero_rows, short_rows;
  ASSERT_TRUE(backward(nullptr, 0, plain).is_good());
  // Zero rows as checkpoints: the recompute restarts from zero at tokens 64, 128 and 194, so dQ moves.
  std::vector<double> zeros(static_cast<std::size_t>(3 * kH * kD * kD), 0.0);
  const Status z = backward(&zeros, 3, zero_rows);
  ASSERT_TRUE(z.is_good()) << z.to_string();
  double moved = 0.0;
  for (std::size_t i = 0; i < plain.size(); ++i) moved = std::max(moved, std::abs(plain[i] - zero_rows[i]));
  EXPECT_GT(moved, 1e-3) << "the checkpoint rows were not read";
  for (std::size_t i = 0; i < 64 * kH * kD; ++i) EXPECT_EQ(plain[i], zero_rows[i]) << "token " << i / kD;
  // Two rows for three checkpoints: refused, nothing written.
  std::vector<double> two(static_cast<std::size_t>(2 * kH * kD * kD), 0.0);
  const Status r = backward(&two, 2, short_rows);
  EXPECT_EQ(r.code(), ErrorCode::INVALID_VALUE) << r.to_string();
  EXPECT_NE(r.message().find("op 'gdn_bwd'"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("checkpoints:"), std::string::npos) << r.message();
  for (double x : short_rows) ASSERT_EQ(x, 7.0) << "dQ was written by a refused call";
}
