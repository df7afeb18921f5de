// The in-place and pooled state contract of the linear_attention reference, through
// the executor with caller buffers: overwrite_initial_state lets ONE host buffer serve
// initial_state and final_state (backward: d_final_state and d_initial_state), a
// state_indices pool is read and written at the addressed rows only, and a bad row
// fails with INVALID_VALUE naming the node and the rule while leaving the pool as it was.
// Tolerance: the aliased run must equal the distinct-buffer run exactly (same float math).
#include <gtest/gtest.h>

#include <random>

#include "engines/reference/executor.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using I64 = std::int64_t;

namespace {

constexpr I64 kT = 6, kH = 2, kK = 4, kV = 3, kN = 3, kPool = 5;

std::vector<float> rand_floats(std::size_t n, std::mt19937_64& r, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(r);
  return v;
}

struct Buffers {
  std::vector<float> q, k, v, g, beta, state, other_state, d_o, o, dq, dk, dv, dg, dbeta;
  std::vector<std::int32_t> cu{0, 2, 2, 6}, idx{3, 0, 4};
};

Buffers make_buffers(std::uint64_t seed, I64 state_rows) {
  std::mt19937_64 r(seed);
  Buffers b;
  b.q = rand_floats(kT * kH * kK, r, -1, 1);
  b.k = rand_floats(kT * kH * kK, r, -0.5f, 0.5f);
  b.v = rand_floats(kT * kH * kV, r, -1, 1);
  b.g = rand_floats(kT * kH * kK, r, -0.8f, -0.05f);
  b.beta = rand_floats(kT * kH, r, 0.2f, 0.9f);
  b.state = rand_floats(static_cast<std::size_t>(state_rows * kH * kV * kK), r, -1, 1);
  b.other_state.assign(b.state.size(), 0.0f);
  b.d_o = rand_floats(kT * kH * kV, r, -1, 1);
  b.o.assign(kT * kH * kV, 0.0f);
  for (auto* x : {&b.dq, &b.dk}) x->assign(kT * kH * kK, 0.0f);
  b.dg.assign(kT * kH * kK, 0.0f);
  b.dv.assign(kT * kH * kV, 0.0f);
  b.dbeta.assign(kT * kH, 0.0f);
  return b;
}

// kda forward with a pool: initial_state [kPool, ...], state_indices, final_state in `final_buf`.
Status run_forward(Buffers& b, float* final_buf) {
  OpGraph g;
  const DataType F = DataType::FLOAT;
  DeltaRuleInputs in{g.tensor({kT, kH, kK}, F, "q"), g.tensor({kT, kH, kK}, F, "k"), g.tensor({kT, kH, kV}, F, "v"),
                     g.tensor({kT, kH, kK}, F, "g"), g.tensor({kT, kH}, F, "beta"),
                     g.tensor({kN + 1}, DataType::INT32, "cu_seqlens"), g.tensor({kPool, kH, kV, kK}, F, "pool"),
                     nullptr, nullptr, g.tensor({kN}, DataType::INT32, "state_indices")};
  auto out = g.kda(in, Attributes().set("output_final_state", true).set("overwrite_initial_state", true));
  out.o->set_output(true);
  out.final_state->set_output(true);
  Status s = g.validate();
  if (s.is_bad()) return s;
  std::map<I64, reference::HostBuffer> m = {
      {in.q->get_uid(), {b.q.data()}},       {in.k->get_uid(), {b.k.data()}},
      {in.v->get_uid(), {b.v.data()}},       {in.g->get_uid(), {b.g.data()}},
      {in.beta->get_uid(), {b.beta.data()}}, {in.cu_seqlens->get_uid(), {b.cu.data()}},
      {in.initial_state->get_uid(), {b.state.data()}}, {in.state_indices->get_uid(), {b.idx.data()}},
      {out.o->get_uid(), {b.o.data()}},      {out.final_state->get_uid(), {final_buf}}};
  return reference::execute(g, m);
}

// kda backward with d_final_state in `d_final` and d_initial_state in `d_initial`.
Status run_backward(Buffers& b, float* d_final, float* d_initial) {
  OpGraph g;
  const DataType F = DataType::FLOAT;
  DeltaRuleInputs in{g.tensor({kT, kH, kK}, F, "q"), g.tensor({kT, kH, kK}, F, "k"), g.tensor({kT, kH, kV}, F, "v"),
                     g.tensor({kT, kH, kK}, F, "g"), g.tensor({kT, kH}, F, "beta"),
                     g.tensor({kN + 1}, DataType::INT32, "cu_seqlens"), g.tensor({kN, kH, kV, kK}, F, "init")};
  auto d_o = g.tensor({kT, kH, kV}, F, "dO");
  auto d_fin = g.tensor({kN, kH, kV, kK}, F, "d_final_state");
  auto gr = g.kda_bwd(in, d_o, d_fin, Attributes().set("overwrite_initial_state", true));
  for (auto t : {gr.dq, gr.dk, gr.dv, gr.dg, gr.dbeta, gr.d_initial_state}) t->set_output(true);
  Status s = g.validate();
  if (s.is_bad()) return s;
  std::vector<float> init(static_cast<std::size_t>(kN * kH * kV * kK), 0.25f);
  std::map<I64, reference::HostBuffer> m = {
      {in.q->get_uid(), {b.q.data()}},       {in.k->get_uid(), {b.k.data()}},
      {in.v->get_uid(), {b.v.data()}},       {in.g->get_uid(), {b.g.data()}},
      {in.beta->get_uid(), {b.beta.data()}}, {in.cu_seqlens->get_uid(), {b.cu.data()}},
      {in.initial_state->get_uid(), {init.data()}}, {d_o->get_uid(), {b.d_o.data()}},
      {d_fin->get_uid(), {d_final}},         {gr.dq->get_uid(), {b.dq.data()}},
      {gr.dk->get_uid(), {b.dk.data()}},     {gr.dv->get_uid(), {b.dv.data()}},
      {gr.dg->get_uid(), {b.dg.data()}},     {gr.dbeta->get_uid(), {b.dbeta.data()}},
      {gr.d_initial_state->get_uid(), {d_initial}}};
  return reference::execute(g, m);
}

}  // namespace

TEST(LinearAttentionRefState, OverwrittenPoolEqualsADistinctFinalBuffer) {
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Buffers distinct = make_buffers(seed, kPool);
  ASSERT_TRUE(run_forward(distinct, distinct.other_state.data()).is_good());
  Buffers aliased = make_buffers(seed, kPool);
  const std::vector<float> before = aliased.state;
  Status s = run_forward(aliased, aliased.state.data());  // one buffer: the pool is updated in place
  ASSERT_TRUE(s.is_good()) << s.to_string();
  EXPECT_EQ(aliased.o, distinct.o);
  EXPECT_EQ(aliased.state, distinct.other_state);
  const std::size_t per = kH * kV * kK;
  for (std::size_t row : {1u, 2u})  // rows no sequence addresses keep their values
    for (std::size_t i = 0; i < per; ++i) EXPECT_EQ(aliased.state[row * per + i], before[row * per + i]);
  for (std::size_t row : {3u, 4u}) {  // sequences 0 and 2 are non-empty: their rows moved
    double moved = 0.0;
    for (std::size_t i = 0; i < per; ++i) moved += std::abs(aliased.state[row * per + i] - before[row * per + i]);
    EXPECT_GT(moved, 1e-3) << "row " << row;
  }
}

TEST(LinearAttentionRefState, BadPoolRowFailsAndLeavesThePoolUntouched) {
  Buffers b = make_buffers(std::random_device{}(), kPool);
  b.idx = {3, 5, 0};
  const std::vector<float> before = b.state;
  Status s = run_forward(b, b.state.data());
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(s.message().find("op 'kda'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("state pool"), std::string::npos) << s.message();
  EXPECT_EQ(b.state, before);
}

TEST(LinearAttentionRefState, BackwardGradientBufferServesBothStates) {
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Buffers distinct = make_buffers(seed, kN);
  std::vector<float> d_init(distinct.state.size(), 0.0f);
  ASSERT_TRUE(run_backward(distinct, distinct.state.data(), d_init.data()).is_good());
  Buffers aliased = make_buffers(seed, kN);
  Status s = run_backward(aliased, aliased.state.data(), aliased.state.data());
  ASSERT_TRUE(s.is_good()) << s.to_string();
  EXPECT_EQ(aliased.state, d_init);
  EXPECT_EQ(aliased.dq, distinct.dq);
  EXPECT_EQ(aliased.dg, distinct.dg);
  // Sequence 1 is empty: its incoming gradient is its outgoing one.
  const std::size_t per = kH * kV * kK;
  for (std::size_t i = 0; i < per; ++i) EXPECT_EQ(d_init[per + i], distinct.state[per + i]);
}
