// tests/cudnn/test_cudnn_lowering_conformance.cpp — graphs of cudnn-frontend's Python tests that
// found no opgraph device engine on the H200 (tests/conformance, the 2026-12-02 conformance table),
// lowered as data for the cuDNN the H200 loads (9.19.0) and an sm_90 target: the lowering now
// gives the operation graph cudnn-frontend gives cuDNN for them.
//  * test_batchnorm.py::test_bn_infer_drelu_dbn: batchnorm_inference beside a batchnorm_backward
//    goes down as ONE NORM_FORWARD (INFERENCE) operation, as cudnn-frontend lowers it (the
//    four-pointwise composite of that graph found no cuDNN engine); alone it stays the composite.
//  * test_mhas.py::test_sdpa_backward[...bias1...]: the test draws use_deterministic_algorithm at
//    random; on Hopper cudnn-frontend's deterministic backward is the dP-workspace composite (dQ
//    written by the dS K matmul, no fp32 accumulator), which the lowering gives now instead of
//    declining; other targets still decline naming the rule.
#include <gtest/gtest.h>

#include "cudnn/sdpa_lowering_util.h"
#include "opgraph/builders/norm.h"

namespace opgraph {
namespace {

using namespace sdpa_lowering_test;
using engines::cudnn::lower;
using engines::cudnn::LoweringOptions;

LoweringOptions target(int sm) {
  LoweringOptions o;
  o.cudnn_version = 91900;
  o.sm_version = sm;
  return o;
}

std::vector<cudnnBackendDescriptorType_t> op_types(const LoweringPlan& p) {
  std::vector<cudnnBackendDescriptorType_t> t;
  for (int op : p.operations) t.push_back(p.records[static_cast<std::size_t>(op)].type);
  return t;
}

struct BnGraph {
  Graph g;
  TensorPtr x, dy, scale, bias, mean, inv_var, y;
  BnGraph() {
    const std::int64_t n = 4, c = 16, h = 56, w = 56;
    const std::vector<std::int64_t> nhwc{c * h * w, 1, w * c, c};
    g.set_io_data_type(DataType::HALF).set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    x = g.tensor({n, c, h, w}, DataType::HALF, "x", nhwc);
    dy = g.tensor({n, c, h, w}, DataType::HALF, "dY", nhwc);
    scale = g.tensor({1, c, 1, 1}, DataType::FLOAT, "scale");
    bias = g.tensor({1, c, 1, 1}, DataType::FLOAT, "bias");
    mean = g.tensor({1, c, 1, 1}, DataType::FLOAT, "mean");
    inv_var = g.tensor({1, c, 1, 1}, DataType::FLOAT, "inv_variance");
    y = g.batchnorm_inference(x, mean, inv_var, scale, bias, Attributes().set_name("bn"));
  }
};

TEST(CudnnLoweringConformance, BnInferenceBesideDbnIsOneNormForward) {
  BnGraph b;
  auto drelu = b.g.relu_backward(b.dy, b.y);
  drelu->set_data_type(DataType::HALF);
  auto dbn = b.g.batchnorm_backward(drelu, b.x, b.scale, b.mean, b.inv_var, Attributes().set_name("DBN"));
  dbn[0]->set_output(true);
  dbn[1]->set_output(true).set_data_type(DataType::FLOAT);
  dbn[2]->set_output(true).set_data_type(DataType::FLOAT);
  ASSERT_TRUE(b.g.validate().is_good()) << b.g.validate().to_string();
  auto p = lower(b.g, target(90));
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  EXPECT_EQ(op_types(*p), (std::vector<cudnnBackendDescriptorType_t>{CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR,
                                                                      CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                                                                      CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR}));
  const DescriptorRecord& fwd = p->records[static_cast<std::size_t>(p->operations[0])];
  EXPECT_EQ(int_of(fwd, CUDNN_ATTR_OPERATION_NORM_FWD_MODE), CUDNN_BATCH_NORM);
  EXPECT_EQ(int_of(fwd, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE), CUDNN_NORM_FWD_INFERENCE);
  EXPECT_EQ(uid_at(*p, fwd, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC), b.x->get_uid());
  EXPECT_EQ(uid_at(*p, fwd, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC), b.mean->get_uid());
  EXPECT_EQ(uid_at(*p, fwd, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC), b.inv_var->get_uid());
  EXPECT_EQ(uid_at(*p, fwd, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC), b.scale->get_uid());
  EXPECT_EQ(uid_at(*p, fwd, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC), b.bias->get_uid());
  EXPECT_EQ(uid_at(*p, fwd, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC), b.y->get_uid());
  EXPECT_EQ(fwd.find(CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC), nullptr);  // inference reads INV_VARIANCE
  EXPECT_TRUE(p->tensor(b.y->get_uid())->is_virtual);
}

TEST(CudnnLoweringConformance, LoneBnInferenceStaysThePointwiseComposite) {
  BnGraph b;
  b.y->set_output(true).set_data_type(DataType::HALF);
  ASSERT_TRUE(b.g.validate().is_good());
  auto p = lower(b.g, target(90));
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  EXPECT_EQ(op_types(*p), std::vector<cudnnBackendDescriptorType_t>(4, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR));
}

// test_mhas's sbh3d multi-head layout: Q, K, V interleaved per token ([s, b, h, 3, d]), O [s, b, h, d].
Bwd sbh3d_backward(std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d) {
  Bwd w(Shape{b, h, h, s, s, d});
  const std::vector<std::int64_t> qkv{h * 3 * d, 3 * d, b * h * 3 * d, 1}, o{h * d, d, b * h * d, 1};
  for (auto t : {w.q, w.k, w.v}) t->set_stride(qkv);
  for (auto t : {w.o, w.dO}) t->set_stride(o);
  w.in.bias = w.g.tensor({1, h, s, s}, DataType::BFLOAT16, "bias");
  return w;
}

std::size_t identity_ops(const LoweringPlan& p) {
  std::size_t n = 0;
  for (auto m : modes(p)) n += m == CUDNN_POINTWISE_IDENTITY;
  return n;
}

TEST(CudnnLoweringConformance, DeterministicSdpaBackwardOnHopperIsTheDpWorkspaceComposite) {
  for (bool dbias : {true, false}) {
    Bwd plain = sbh3d_backward(2, 6, 64, 56);
    Bwd det = sbh3d_backward(2, 6, 64, 56);
    det.a.set("use_deterministic_algorithm", true);
    for (Bwd* w : {&plain, &det})
      if (dbias) w->a.set("dbias", true);
    auto run = [](Bwd& w) {
      w.out = w.g.sdpa_backward(w.q, w.k, w.v, w.o, w.dO, w.stats, w.a, w.in);
      for (auto t : {w.out.dQ, w.out.dK, w.out.dV, w.out.dBias})
        if (t) t->set_output(true).set_data_type(DataType::BFLOAT16);
      Status st = w.g.validate();
      EXPECT_TRUE(st.is_good()) << st.to_string();
      return lower(w.g, target(90));
    };
    auto pp = run(plain), pd = run(det);
    ASSERT_TRUE(pp.is_good()) << pp.status().to_string();
    ASSERT_TRUE(pd.is_good()) << pd.status().to_string();
    // The deterministic form writes dQ with the dS K matmul: no fp32 accumulator, no IDENTITY.
    EXPECT_EQ(identity_ops(*pd), 0u) << "dbias " << dbias;
    EXPECT_EQ(identity_ops(*pp), dbias ? 0u : 1u) << "dbias " << dbias;
    if (dbias) {
      EXPECT_EQ(op_types(*pp), op_types(*pd));  // with dBias both are the dP-workspace composite
    }
    const auto* last = &pd->records[static_cast<std::size_t>(pd->operations.back())];
    EXPECT_EQ(last->type, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    EXPECT_EQ(uid_at(*pd, *last, CUDNN_ATTR_OPERATION_MATMUL_CDESC), det.out.dQ->get_uid());
  }
}

TEST(CudnnLoweringConformance, EverySbh3dBiasBackwardTheTestDrawsLowersOnHopper) {
  // test_sdpa_backward[bf16-sbh3d-multi_head-bias1-...]: s_q = s_kv and d_qk = d_v drawn from these.
  for (std::int64_t s : {8, 16, 24, 32, 256, 512, 1024})
    for (std::int64_t d : {32, 56, 64, 128})
      for (bool det : {false, true}) {
        Bwd w = sbh3d_backward(2, 6, s, d);
        w.a.set("dbias", true).set("use_deterministic_algorithm", det);
        w.out = w.g.sdpa_backward(w.q, w.k, w.v, w.o, w.dO, w.stats, w.a, w.in);
        for (auto t : {w.out.dQ, w.out.dK, w.out.dV, w.out.dBias}) t->set_output(true).set_data_type(DataType::BFLOAT16);
        ASSERT_TRUE(w.g.validate().is_good()) << s << " " << d;
        auto p = lower(w.g, target(90));
        EXPECT_TRUE(p.is_good()) << "s " << s << " d " << d << " deterministic " << det << ": " << p.status().to_string();
      }
}

TEST(CudnnLoweringConformance, DeterministicSdpaBackwardElsewhereDeclinesNamingTheRule) {
  for (int sm : {0, 80, 100}) {
    Bwd w = sbh3d_backward(2, 6, 64, 64);
    w.a.set("use_deterministic_algorithm", true);
    w.out = w.g.sdpa_backward(w.q, w.k, w.v, w.o, w.dO, w.stats, w.a, w.in);
    for (auto t : {w.out.dQ, w.out.dK, w.out.dV}) t->set_output(true).set_data_type(DataType::BFLOAT16);
    ASSERT_TRUE(w.g.validate().is_good());
    auto p = lower(w.g, target(sm));
    ASSERT_TRUE(p.is_bad()) << sm;
    EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
    const std::string where = sm ? "sm_" + std::to_string(sm) : std::string("unknown");
    for (const std::string& part : std::vector<std::string>{"op 'sdpa_backward'", "use_deterministic_algorithm",
                                                            "rule deterministic_not_lowered", where})
      EXPECT_NE(p.status().message().find(part), std::string::npos) << part << " in " << p.status().message();
  }
}

}  // namespace
}  // namespace opgraph
