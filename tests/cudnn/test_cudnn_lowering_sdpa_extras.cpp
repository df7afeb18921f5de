// tests/cudnn/test_cudnn_lowering_sdpa_extras.cpp — the SDPA attributes lowered
// after the first cut: ALiBi (forward and backward: GEN_INDEX row/col, SUB, MUL
// by a [1, h_q, 1, 1] FLOAT workspace tensor the plan initialises with the
// reference's slopes, ADD onto the scores), the Max / Sum_exp outputs of the
// forward composite (the softmax's MAX and ADD reductions write them), and the
// backward's dBias (an ADD reduction of dS, before the attn_scale, into dBias's
// dims; dQ then written by its matmul directly), and SINK_TOKEN (the forward's
// max and sum take the sink; the backward without dsink_token is unchanged, with
// it a DSINK_TOKEN reduction is added).
// Shapes are fresh random draws.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "cudnn/sdpa_lowering_util.h"
#include "engines/cudnn/backend.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

using namespace sdpa_lowering_test;

// The reduction whose Y is `uid` (nullptr: none).
const DescriptorRecord* reduction_into(const LoweringPlan& p, std::int64_t uid) {
  for (const auto* op : op_records(p))
    if (op->type == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR &&
        uid_at(p, *op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC) == uid)
      return op;
  return nullptr;
}

std::int64_t reduction_mode(const LoweringPlan& p, const DescriptorRecord& op) {
  return int_of(ref(p, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC), CUDNN_ATTR_REDUCTION_OPERATOR);
}

// The ALiBi slopes workspace tensor: [1, h_q, 1, 1] FLOAT, initialised with cudnn-frontend's
// slope per head (computed here from its formula, not the lowering).
void expect_alibi_slopes(const LoweringPlan& p, std::int64_t h_q) {
  const cu::ScratchTensor* sl = nullptr;
  for (const auto& sc : p.scratch)
    if (!sc.init.empty()) sl = &sc;
  ASSERT_NE(sl, nullptr) << "no initialised workspace tensor";
  EXPECT_EQ(p.tensor(sl->uid)->dims, (D{1, h_q, 1, 1}));
  EXPECT_FALSE(p.tensor(sl->uid)->is_virtual);
  EXPECT_EQ(std::count(p.caller_uids.begin(), p.caller_uids.end(), sl->uid), 0);
  ASSERT_EQ(sl->init.size(), static_cast<std::size_t>(h_q) * 4);
  EXPECT_EQ(sl->bytes, h_q * 4);
  for (std::int64_t h = 0; h < h_q; ++h) {
    float f;
    std::memcpy(&f, sl->init.data() + h * 4, 4);
    // cudnn-frontend's get_alibi_slope: n = the largest power of two <= h_q, then the odd
    // terms of the 2n-head sequence for the heads past n.
    const double n = std::exp2(std::floor(std::log2(static_cast<double>(h_q))));
    const double e = static_cast<double>(h) < n ? static_cast<double>(h + 1) : (static_cast<double>(h) - n) + 0.5;
    EXPECT_FLOAT_EQ(f, static_cast<float>(std::pow(2.0, -8.0 * e / n))) << "head " << h << " of " << h_q;
  }
  // It is the B operand of the MUL whose X is SUB(GEN_INDEX axis 3, GEN_INDEX axis 2).
  bool found = false;
  for (const auto* op : op_records(p)) {
    if (op->type != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR || mode_of(p, *op) != CUDNN_POINTWISE_MUL) continue;
    if (uid_at(p, *op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC) != sl->uid) continue;
    found = true;
    const auto& diff = ref(p, *op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC);
    EXPECT_EQ(int_of(diff, CUDNN_ATTR_TENSOR_DATA_TYPE), CUDNN_DATA_INT32);
  }
  EXPECT_TRUE(found) << "the slopes feed no MUL";
}

TEST(CudnnLoweringSdpaExtras, AlibiForwardIsTheCompositeWithInitialisedSlopes) {
  const Shape s = random_shape(std::random_device{}());
  for (std::int64_t ver : {91400, 91900}) {  // the native operation takes no ALiBi before 9.21
    Fwd f(s);
    f.a.set("use_alibi_mask", true).set("use_causal_mask", false);
    auto p = f.lower(ver);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 0u);
    EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR), 2u);
    ASSERT_EQ(p->scratch.size(), 1u);
    expect_alibi_slopes(*p, s.h_q);
    // GEN_INDEX, GEN_INDEX, SUB, MUL, ADD follow the scale MUL, before the softmax's SUB.
    const auto m = modes(*p);
    const std::vector<std::int64_t> want = {CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_GEN_INDEX, CUDNN_POINTWISE_GEN_INDEX,
                                            CUDNN_POINTWISE_SUB, CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_ADD,
                                            CUDNN_POINTWISE_SUB};
    ASSERT_GE(m.size(), want.size());
    EXPECT_EQ(std::vector<std::int64_t>(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(want.size())), want);
  }
}

TEST(CudnnLoweringSdpaExtras, MaxAndSumExpAreTheSoftmaxReductions) {
  const Shape s = random_shape(std::random_device{}());
  Fwd f(s);
  f.a.set("score_max", true).set("score_sum_exp", true).set("generate_stats", false);
  auto p = f.lower(91900);  // the native operation has no Max / Sum_exp before 9.21
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 0u);
  ASSERT_TRUE(f.out.Max && f.out.Sum_exp);
  const auto* mx = reduction_into(*p, f.out.Max->get_uid());
  const auto* sum = reduction_into(*p, f.out.Sum_exp->get_uid());
  ASSERT_NE(mx, nullptr);
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(reduction_mode(*p, *mx), CUDNN_REDUCE_TENSOR_MAX);
  EXPECT_EQ(reduction_mode(*p, *sum), CUDNN_REDUCE_TENSOR_ADD);
  // Max reduces the [b, h_q, s_q, s_kv] scores; Sum_exp their EXP.
  EXPECT_EQ(ref(*p, *mx, CUDNN_ATTR_OPERATION_REDUCTION_XDESC).find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints,
            (D{s.b, s.h_q, s.s_q, s.s_kv}));
  for (auto t : {f.out.Max, f.out.Sum_exp}) {
    EXPECT_EQ(p->tensor(t->get_uid())->dims, (D{s.b, s.h_q, s.s_q, 1}));
    EXPECT_EQ(std::count(p->caller_uids.begin(), p->caller_uids.end(), t->get_uid()), 1);
  }
  EXPECT_EQ(p->caller_uids.size(), 6u);  // Q K V O Max Sum_exp
  // cudnn-frontend's composite softmax: Stats alone, or Max and Sum_exp together.
  Fwd both(s);
  both.a.set("score_max", true).set("score_sum_exp", true);
  auto pb = both.lower(91900);
  ASSERT_TRUE(pb.is_bad());
  EXPECT_EQ(pb.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(pb.status().message().find("rule stats_or_max_sum_exp"), std::string::npos) << pb.status().message();
  Fwd one(s);
  one.a.set("score_sum_exp", true).set("generate_stats", false);
  auto po = one.lower(91900);
  ASSERT_TRUE(po.is_bad());
  EXPECT_NE(po.status().message().find("attribute 'score_sum_exp': rule max_sum_exp_together"), std::string::npos)
      << po.status().message();
}

TEST(CudnnLoweringSdpaExtras, AlibiBackwardAddsTheSameTerm) {
  const Shape s = random_shape(std::random_device{}(), /*gqa=*/true);
  Bwd b(s);
  b.a.set("use_alibi_mask", true).set("use_causal_mask", true);
  auto p = b.lower();
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  ASSERT_EQ(p->scratch.size(), 3u);  // softmax_sum, slopes, dQ accumulator
  expect_alibi_slopes(*p, s.h_q);
}

TEST(CudnnLoweringSdpaExtras, DbiasReducesDsOverTheBiasBroadcastAxes) {
  const Shape s = random_shape(std::random_device{}());
  const D shapes[] = {{1, s.h_q, s.s_q, s.s_kv}, {s.b, 1, s.s_q, s.s_kv}, {s.b, s.h_q, s.s_q, s.s_kv}};
  for (const D& bias_dims : shapes) {
    Bwd b(s);
    b.in.bias = b.g.tensor(bias_dims, DataType::BFLOAT16, "bias");
    b.a.set("dbias", true);
    auto p = b.lower(91400);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    ASSERT_TRUE(b.out.dBias);
    const auto* red = reduction_into(*p, b.out.dBias->get_uid());
    ASSERT_NE(red, nullptr);
    EXPECT_EQ(reduction_mode(*p, *red), CUDNN_REDUCE_TENSOR_ADD);
    EXPECT_EQ(p->tensor(b.out.dBias->get_uid())->dims, bias_dims);
    // dS is MUL(SUB(dP, softmax_sum), P), before the attn_scale MUL.
    const auto& ds = ref(*p, *red, CUDNN_ATTR_OPERATION_REDUCTION_XDESC);
    EXPECT_EQ(ds.find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints, (D{s.b, s.h_q, s.s_q, s.s_kv}));
    const std::int64_t ds_uid = int_of(ds, CUDNN_ATTR_TENSOR_UNIQUE_ID);
    const DescriptorRecord* producer = nullptr;
    for (const auto* op : op_records(*p))
      if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR &&
          uid_at(*p, *op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC) == ds_uid)
        producer = op;
    ASSERT_NE(producer, nullptr);
    EXPECT_EQ(mode_of(*p, *producer), CUDNN_POINTWISE_MUL);
    // The dP-workspace shape: dQ straight from its matmul, only softmax_sum in the workspace.
    ASSERT_EQ(p->scratch.size(), 1u);
    EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR), 5u);
    bool dq_from_matmul = false;
    for (const auto* op : op_records(*p))
      if (op->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR &&
          uid_at(*p, *op, CUDNN_ATTR_OPERATION_MATMUL_CDESC) == b.out.dQ->get_uid())
        dq_from_matmul = true;
    EXPECT_TRUE(dq_from_matmul);
    EXPECT_EQ(p->caller_uids.size(), 11u);  // Q K V O dO Stats Bias dQ dK dV dBias
  }
}

TEST(CudnnLoweringSdpaExtras, SinkJoinsTheMaxAndTheSum) {
  const Shape s = random_shape(std::random_device{}());
  for (bool max_sum : {false, true}) {
    Fwd f(s);
    f.in.sink_token = f.g.tensor({1, s.h_q, 1, 1}, DataType::FLOAT, "sink");
    f.a.set("use_causal_mask", true).set("score_max", max_sum).set("score_sum_exp", max_sum);
    if (max_sum) f.a.set("generate_stats", false);
    auto p = f.lower(91900);  // the native operation takes a sink from 9.21
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 0u);
    EXPECT_EQ(p->min_cudnn_version, 91300);
    const std::int64_t sink = f.in.sink_token->get_uid();
    // The sink is B of the pointwise MAX (with the row max) and X of SUB(sink, max), then EXP, ADD.
    std::vector<std::int64_t> with_sink;
    for (const auto* op : op_records(*p))
      if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR &&
          (uid_at(*p, *op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC) == sink ||
           uid_at(*p, *op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC) == sink))
        with_sink.push_back(mode_of(*p, *op));
    EXPECT_EQ(with_sink, (std::vector<std::int64_t>{CUDNN_POINTWISE_MAX, CUDNN_POINTWISE_SUB}));
    const auto m = modes(*p);
    const std::vector<std::int64_t> tail = {CUDNN_POINTWISE_SUB, CUDNN_POINTWISE_EXP, CUDNN_POINTWISE_ADD};
    EXPECT_NE(std::search(m.begin(), m.end(), tail.begin(), tail.end()), m.end());
    if (max_sum) {  // Max is the pointwise MAX's Y, Sum_exp the ADD's Y (not the reductions')
      EXPECT_EQ(reduction_into(*p, f.out.Max->get_uid()), nullptr);
      EXPECT_EQ(reduction_into(*p, f.out.Sum_exp->get_uid()), nullptr);
      std::vector<std::int64_t> into;
      for (const auto* op : op_records(*p))
        if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) {
          const std::int64_t y = uid_at(*p, *op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC);
          if (y == f.out.Max->get_uid() || y == f.out.Sum_exp->get_uid()) into.push_back(mode_of(*p, *op));
        }
      EXPECT_EQ(into, (std::vector<std::int64_t>{CUDNN_POINTWISE_MAX, CUDNN_POINTWISE_ADD}));
    }
  }
  // Backward without dsink_token: the sink acts only through Stats; the plan is the sink-less one.
  Bwd with(s), without(s);
  with.in.sink_token = with.g.tensor({1, s.h_q, 1, 1}, DataType::FLOAT, "sink");
  auto pw = with.lower(), po = without.lower();
  ASSERT_TRUE(pw.is_good()) << pw.status().to_string();
  ASSERT_TRUE(po.is_good());
  EXPECT_EQ(modes(*pw), modes(*po));
  EXPECT_EQ(pw->operations.size(), po->operations.size());
  // dsink_token: DSINK_TOKEN [1, h_q, 1, 1] = ADD reduction of NEG(EXP(SUB(sink, Stats)) * rowsum(dO O)).
  Bwd ds(s);
  ds.in.sink_token = ds.g.tensor({1, s.h_q, 1, 1}, DataType::FLOAT, "sink");
  ds.a.set("dsink_token", true);
  auto pd = ds.lower();
  ASSERT_TRUE(pd.is_good()) << pd.status().to_string();
  ASSERT_TRUE(ds.out.DSINK_TOKEN);
  const auto* red = reduction_into(*pd, ds.out.DSINK_TOKEN->get_uid());
  ASSERT_NE(red, nullptr);
  EXPECT_EQ(reduction_mode(*pd, *red), CUDNN_REDUCE_TENSOR_ADD);
  EXPECT_EQ(pd->tensor(ds.out.DSINK_TOKEN->get_uid())->dims, (D{1, s.h_q, 1, 1}));
  EXPECT_EQ(ref(*pd, *red, CUDNN_ATTR_OPERATION_REDUCTION_XDESC).find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints,
            (D{s.b, s.h_q, s.s_q, 1}));
  const auto extra = modes(*pd);
  const std::vector<std::int64_t> chain = {CUDNN_POINTWISE_SUB, CUDNN_POINTWISE_EXP, CUDNN_POINTWISE_MUL,
                                           CUDNN_POINTWISE_NEG};
  EXPECT_NE(std::search(extra.begin(), extra.end(), chain.begin(), chain.end()), extra.end());
  EXPECT_EQ(pd->operations.size(), po->operations.size() + 5);  // SUB, EXP, MUL, NEG, reduction
}

TEST(CudnnLoweringSdpaExtras, AlibiMaxSumExpAndDbiasFinalizeDevicelessWhenLibcudnnLoads) {
  auto api = runtime::cudnn();
  if (api.is_bad()) {
    std::printf("libcudnn cannot be loaded here: %s\n", api.status().to_string().c_str());
    GTEST_SKIP() << "libcudnn not loadable";
  }
  const std::int64_t ver = static_cast<std::int64_t>(api.value()->version);
  Shape s{2, 4, 4, 64, 64, 64};
  Fwd f(s);
  f.a.set("use_alibi_mask", true).set("use_causal_mask", true);
  auto pf = f.lower(ver);
  ASSERT_TRUE(pf.is_good()) << pf.status().to_string();
  auto mf = cu::materialise(*api.value(), pf.value(), nullptr);
  ASSERT_TRUE(mf.is_good()) << mf.status().to_string();
  Fwd fs(s);
  fs.in.sink_token = fs.g.tensor({1, s.h_q, 1, 1}, DataType::FLOAT, "sink");
  fs.a.set("use_causal_mask", true).set("score_max", true).set("score_sum_exp", true).set("generate_stats", false);
  auto ps = fs.lower(ver);
  ASSERT_TRUE(ps.is_good()) << ps.status().to_string();
  auto ms = cu::materialise(*api.value(), ps.value(), nullptr);
  ASSERT_TRUE(ms.is_good()) << ms.status().to_string();
  Bwd b(s);
  b.in.bias = b.g.tensor({1, s.h_q, s.s_q, s.s_kv}, DataType::BFLOAT16, "bias");
  b.a.set("dbias", true).set("use_alibi_mask", true).set("use_causal_mask", true);
  auto pb = b.lower(ver);
  ASSERT_TRUE(pb.is_good()) << pb.status().to_string();
  auto mb = cu::materialise(*api.value(), pb.value(), nullptr);
  ASSERT_TRUE(mb.is_good()) << mb.status().to_string();
}

// The engine's options (include_failed_variants off): the three variants whose
// plans failed on the H200 decline naming the port/attribute and the rule.
TEST(CudnnLoweringSdpaExtras, VariantsThatFailedOnTheH200Decline) {
  Shape s{2, 4, 4, 64, 64, 64};
  auto engine_options = [](std::int64_t v) {
    cu::LoweringOptions o;
    o.cudnn_version = v;
    return o;
  };
  auto expect_decline = [](const Result<cu::LoweringPlan>& r, const std::string& what) {
    ASSERT_TRUE(r.is_bad());
    EXPECT_EQ(r.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
    EXPECT_NE(r.status().message().find(what + ": rule failed_on_h200"), std::string::npos) << r.status().message();
  };
  Fwd f(s);
  f.a.set("use_causal_mask", true).set("score_max", true).set("score_sum_exp", true).set("generate_stats", false);
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  f.out.O->set_output(true).set_data_type(f.q->get_data_type());
  for (auto x : {f.out.Max, f.out.Sum_exp}) x->set_output(true);
  ASSERT_TRUE(f.g.validate().is_good());
  expect_decline(cu::lower(f.g, engine_options(91900)), "attribute 'score_max'");
  for (bool dsink : {false, true}) {
    Bwd b(s);
    b.in.sink_token = b.g.tensor({1, s.h_q, 1, 1}, DataType::FLOAT, "sink");
    if (dsink) b.a.set("dsink_token", true);
    b.out = b.g.sdpa_backward(b.q, b.k, b.v, b.o, b.dO, b.stats, b.a, b.in);
    for (auto t : {b.out.dQ, b.out.dK, b.out.dV}) t->set_output(true).set_data_type(DataType::BFLOAT16);
    if (b.out.DSINK_TOKEN) b.out.DSINK_TOKEN->set_output(true);
    ASSERT_TRUE(b.g.validate().is_good());
    expect_decline(cu::lower(b.g, engine_options(91900)), dsink ? "output 'DSINK_TOKEN'" : "port 'SINK_TOKEN'");
  }
  // The same graphs without the failing piece still lower with the engine's options.
  Bwd plain(s);
  plain.out = plain.g.sdpa_backward(plain.q, plain.k, plain.v, plain.o, plain.dO, plain.stats, plain.a, plain.in);
  for (auto t : {plain.out.dQ, plain.out.dK, plain.out.dV}) t->set_output(true).set_data_type(DataType::BFLOAT16);
  ASSERT_TRUE(plain.g.validate().is_good());
  EXPECT_TRUE(cu::lower(plain.g, engine_options(91900)).is_good());
}

}  // namespace
}  // namespace opgraph
