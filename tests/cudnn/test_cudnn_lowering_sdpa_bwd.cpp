// tests/cudnn/test_cudnn_lowering_sdpa_bwd.cpp — sdpa_backward's composite plan
// (K/V transposed in place, the three RESHAPE transposes, GQA head reductions,
// the two workspace tensors and the IDENTITY into dQ), THD ragged offsets kept
// on every ragged tensor, the declines that name op/attribute/port and rule, and
// device-less finalize of the forward and backward plans when libcudnn loads.
#include <cstdio>
#include <random>

#include "cudnn/sdpa_lowering_util.h"
#include "engines/cudnn/backend.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

using namespace sdpa_lowering_test;

TEST(CudnnLoweringSdpaBwd, GqaCausalBackwardComposite) {
  Bwd b(random_shape(std::random_device{}(), /*gqa=*/true));
  b.a.set("use_causal_mask", true);
  auto p = b.lower();
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  const Shape& s = b.s;
  // K and V are read transposed through their own records.
  EXPECT_EQ(p->tensor(b.k->get_uid())->dims, (D{s.b, s.h_k, s.d, s.s_kv}));
  EXPECT_EQ(p->tensor(b.v->get_uid())->dims, (D{s.b, s.h_k, s.d, s.s_kv}));
  EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR), 5u);    // S, dV, dP, dK, dQ
  EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR), 3u);   // P^T, dS^T, K
  EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR), 3u); // rowsum, dV and dK over heads
  // Workspace tensors: softmax_sum [b, h_q, s_q, 1] and the dQ accumulator, FLOAT, not the caller's.
  ASSERT_EQ(p->scratch.size(), 2u);
  const auto* sum = p->tensor(p->scratch[0].uid);
  const auto* acc = p->tensor(p->scratch[1].uid);
  EXPECT_EQ(sum->dims, (D{s.b, s.h_q, s.s_q, 1}));
  EXPECT_EQ(acc->dims, (D{s.b, s.h_q, s.s_q, s.d}));
  EXPECT_EQ(p->scratch[0].bytes, s.b * s.h_q * s.s_q * 4);
  EXPECT_EQ(p->scratch[1].bytes, s.b * s.h_q * s.s_q * s.d * 4);
  EXPECT_EQ(p->scratch[1].offset % 256, 0);
  EXPECT_GE(p->scratch[1].offset, p->scratch[0].bytes);
  EXPECT_EQ(p->scratch_bytes % 256, 0);
  for (const auto& sc : p->scratch) {
    EXPECT_FALSE(p->tensor(sc.uid)->is_virtual);
    EXPECT_EQ(std::count(p->caller_uids.begin(), p->caller_uids.end(), sc.uid), 0);
  }
  EXPECT_EQ(p->caller_uids.size(), 9u);  // Q K V O dO Stats dQ dK dV
  // dV: full-head P^T dO then an ADD over the head group into dV.
  auto o = op_records(*p);
  const DescriptorRecord* red_dv = nullptr;
  for (const auto* op : o)
    if (op->type == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR &&
        uid_at(*p, *op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC) == b.out.dV->get_uid())
      red_dv = op;
  ASSERT_NE(red_dv, nullptr);
  EXPECT_EQ(ref(*p, *red_dv, CUDNN_ATTR_OPERATION_REDUCTION_XDESC).find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints,
            (D{s.b, s.h_q, s.s_kv, s.d}));
  // dQ = IDENTITY(accumulator), the last operation; the accumulator is the last matmul's C.
  EXPECT_EQ(mode_of(*p, *o.back()), CUDNN_POINTWISE_IDENTITY);
  EXPECT_EQ(uid_at(*p, *o.back(), CUDNN_ATTR_OPERATION_POINTWISE_YDESC), b.out.dQ->get_uid());
  EXPECT_EQ(uid_at(*p, *o.back(), CUDNN_ATTR_OPERATION_POINTWISE_XDESC), p->scratch[1].uid);
  // The P^T reshape: [b, h_q, s_kv, s_q] with transposed strides, in the io type.
  for (const auto* op : o)
    if (op->type == CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR) {
      const auto& y = ref(*p, *op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC);
      if (y.find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints != D{s.b, s.h_q, s.s_kv, s.s_q}) continue;
      EXPECT_EQ(y.find(CUDNN_ATTR_TENSOR_STRIDES)->ints, (D{s.h_q * s.s_q * s.s_kv, s.s_q * s.s_kv, 1, s.s_kv}));
      EXPECT_EQ(int_of(y, CUDNN_ATTR_TENSOR_DATA_TYPE), CUDNN_DATA_BFLOAT16);
    }
  // S - Stats comes right after the scale, before the causal mask.
  auto m = modes(*p);
  ASSERT_GE(m.size(), 4u);
  EXPECT_EQ(m[0], CUDNN_POINTWISE_MUL);  // dO * O
  EXPECT_EQ(m[1], CUDNN_POINTWISE_MUL);  // * 1 -> softmax_sum
  EXPECT_EQ(m[2], CUDNN_POINTWISE_MUL);  // S * scale
  EXPECT_EQ(m[3], CUDNN_POINTWISE_SUB);  // - Stats
}

TEST(CudnnLoweringSdpaBwd, RaggedThdKeepsOffsetsAndTakesTheComposite) {
  Shape s = random_shape(std::random_device{}());
  s.s_kv = s.s_q;
  Fwd f(s);
  f.padding();
  auto rq = f.g.tensor({s.b + 1, 1, 1, 1}, DataType::INT32, "ragged_q");
  f.q->set_ragged_offset(rq);
  auto p = f.lower(91900);  // new enough for the native op, but THD takes the composite
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 0u);
  const auto& tq = p->records[p->tensor(f.q->get_uid())->record];
  ASSERT_NE(tq.find(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC), nullptr);
  EXPECT_EQ(uid_at(*p, tq, CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC), rq->get_uid());
  EXPECT_NE(std::find(p->caller_uids.begin(), p->caller_uids.end(), rq->get_uid()), p->caller_uids.end());
}

// Lowers and expects GRAPH_NOT_SUPPORTED whose message names every fragment.
void expect_decline(Result<LoweringPlan> p, std::vector<std::string> fragments) {
  ASSERT_TRUE(p.is_bad());
  EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED) << p.status().to_string();
  for (const auto& f : fragments) EXPECT_NE(p.status().message().find(f), std::string::npos) << p.status().message();
}

TEST(CudnnLoweringSdpaBwd, DeclinesNameOpAttributeAndRule) {
  const Shape s = random_shape(std::random_device{}());
  {
    Fwd f(s);
    f.a.set("dropout_probability", 0.1);
    f.in.seed = f.g.tensor_scalar_int(7);
    f.in.offset = f.g.tensor_scalar_int(3);
    expect_decline(f.lower(91400), {"op 'sdpa'", "dropout_probability", "rule dropout_not_lowered"});
  }
  {
    Fwd f(s, DataType::FLOAT);
    expect_decline(f.lower(91400), {"port 'Q'", "rule sdpa_io_half", "FLOAT"});
  }
  {
    Fwd f(s);
    f.a.set("unfuse_fma", true);
    expect_decline(f.lower(91400), {"unfuse_fma", "rule unfuse_fma_needs_9_21"});
  }
  {
    Fwd f(s);
    f.a.set("use_causal_mask", true).set("implementation", "UNIFIED");
    expect_decline(f.lower(91900), {"implementation", "rule unified_not_available", "causal"});
  }
  {
    Fwd f(s);
    f.a.set("implementation", "UNIFIED");
    expect_decline(f.lower(91200), {"rule unified_not_available", "9.13.1"});
  }
  {
    Bwd b(s);
    b.in.bias = b.g.tensor({1, s.h_q, s.s_q, s.s_kv}, DataType::BFLOAT16, "bias");
    b.a.set("use_deterministic_algorithm", true);
    expect_decline(b.lower(), {"op 'sdpa_backward'", "use_deterministic_algorithm", "rule deterministic_not_lowered"});
  }
  {  // the fp8 variants decline as a whole
    Graph g;
    const DataType e4 = DataType::FP8_E4M3;
    auto q = g.tensor({s.b, s.h_q, s.s_q, s.d}, e4, "Q");
    auto k = g.tensor({s.b, s.h_q, s.s_kv, s.d}, e4, "K");
    auto v = g.tensor({s.b, s.h_q, s.s_kv, s.d}, e4, "V");
    SdpaFp8Scales sc;
    for (auto* t : {&sc.descale_q, &sc.descale_k, &sc.descale_v, &sc.descale_s, &sc.scale_s, &sc.scale_o})
      *t = g.tensor({1, 1, 1, 1}, DataType::FLOAT);
    auto out = g.sdpa_fp8(q, k, v, sc);
    out.O->set_output(true).set_data_type(e4);
    for (auto t : {out.Amax_S, out.Amax_O})
      if (t) t->set_output(true);
    Status st = g.validate();
    ASSERT_TRUE(st.is_good()) << st.to_string();
    expect_decline(cu::lower(g, version(91900)), {"op 'sdpa_fp8'", "rule sdpa_fp8_not_lowered"});
  }
}

TEST(CudnnLoweringSdpaBwd, ForwardAndBackwardFinalizeDevicelessWhenLibcudnnLoads) {
  auto api = runtime::cudnn();
  if (api.is_bad()) {
    std::printf("libcudnn cannot be loaded here: %s\n", api.status().to_string().c_str());
    GTEST_SKIP() << "libcudnn not loadable";
  }
  const std::int64_t ver = static_cast<std::int64_t>(api.value()->version);
  Shape s{2, 4, 2, 64, 64, 64};
  Fwd f(s);
  f.a.set("use_causal_mask", true);
  auto pf = f.lower(ver);
  ASSERT_TRUE(pf.is_good()) << pf.status().to_string();
  auto mf = cu::materialise(*api.value(), pf.value(), nullptr);
  ASSERT_TRUE(mf.is_good()) << mf.status().to_string();
  for (bool padding : {false, true}) {  // native (no mask) and padded composite / native by version
    Fwd n(s);
    if (padding) n.padding();
    auto pn = n.lower(ver);
    ASSERT_TRUE(pn.is_good()) << pn.status().to_string();
    auto mn = cu::materialise(*api.value(), pn.value(), nullptr);
    ASSERT_TRUE(mn.is_good()) << mn.status().to_string();
  }
  Bwd b(s);
  b.a.set("use_causal_mask", true).set("sliding_window_length", 8);
  auto pb = b.lower(ver);
  ASSERT_TRUE(pb.is_good()) << pb.status().to_string();
  auto mb = cu::materialise(*api.value(), pb.value(), nullptr);
  ASSERT_TRUE(mb.is_good()) << mb.status().to_string();
}

}  // namespace
}  // namespace opgraph
