// tests/cudnn/test_cudnn_lowering.cpp — the lowering plan (data, no cuDNN call) of
// matmul, pointwise (every mode), reduction and fused graphs: descriptor types,
// attributes, uids from the IR, virtual flags, user-set vs inferred strides,
// padding to the common rank; declines that name the op.
#include <algorithm>
#include <cstring>
#include <random>
#include <set>

#include "cudnn/cudnn_test_util.h"
#include "ir/linear_attention_fixture.h"
#include "opgraph/builders/pointwise.h"

namespace opgraph {
namespace {

using namespace cudnn_test;
using engines::cudnn::lower;

TEST(CudnnLowering, MatmulBiasGeluIsOneOperationGraph) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> ext(2, 9);
  const std::int64_t B = ext(rng), M = ext(rng), K = ext(rng), N = ext(rng);
  Graph g;
  g.set_name("mm_epi").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto a = g.tensor({B, M, K}, DataType::BFLOAT16, "A");
  auto b = g.tensor({B, K, N}, DataType::BFLOAT16, "B", {K * N, 1, K});  // user-set column-major strides
  auto bias = g.tensor({N}, DataType::BFLOAT16, "bias");                  // rank 1: padded to 3
  auto c = g.matmul(a, b);
  auto y = g.gelu(g.add(c, bias));
  y->set_output(true).set_name("Y").set_data_type(DataType::BFLOAT16);
  ASSERT_TRUE(g.validate().is_good());
  auto p = lower(g);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  EXPECT_EQ(p->rank, 3);
  ASSERT_EQ(p->operations.size(), 3u);
  EXPECT_EQ(p->records[p->operations[0]].type, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  EXPECT_EQ(p->records[p->operations[1]].type, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  EXPECT_EQ(p->records[p->operations[2]].type, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  // The operation graph lists exactly the three operations, last in creation order.
  ASSERT_EQ(p->operation_graph, static_cast<int>(p->records.size()) - 1);
  EXPECT_EQ(p->records.back().find(CUDNN_ATTR_OPERATIONGRAPH_OPS)->refs, p->operations);
  const DescriptorRecord& mm = p->records[p->operations[0]];
  EXPECT_EQ(uid_at(*p, mm, CUDNN_ATTR_OPERATION_MATMUL_ADESC), a->get_uid());
  EXPECT_EQ(uid_at(*p, mm, CUDNN_ATTR_OPERATION_MATMUL_BDESC), b->get_uid());
  EXPECT_EQ(uid_at(*p, mm, CUDNN_ATTR_OPERATION_MATMUL_CDESC), c->get_uid());
  const auto& mmdesc = p->records[mm.find(CUDNN_ATTR_OPERATION_MATMUL_DESC)->refs[0]];
  EXPECT_EQ(mmdesc.type, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  EXPECT_EQ(int_of(mmdesc, CUDNN_ATTR_MATMUL_COMP_TYPE), CUDNN_DATA_FLOAT);
  // Tensors: uids are the IR's, the intermediate is virtual, user strides kept, bias padded.
  const auto* tc = p->tensor(c->get_uid());
  ASSERT_NE(tc, nullptr);
  EXPECT_TRUE(tc->is_virtual);
  EXPECT_FALSE(tc->strides_from_user);
  EXPECT_EQ(tc->dims, (std::vector<std::int64_t>{B, M, N}));
  const auto* tb = p->tensor(b->get_uid());
  EXPECT_TRUE(tb->strides_from_user);
  EXPECT_EQ(tb->strides, (std::vector<std::int64_t>{K * N, 1, K}));
  const auto* tbias = p->tensor(bias->get_uid());
  EXPECT_EQ(tbias->dims, (std::vector<std::int64_t>{1, 1, N}));
  EXPECT_EQ(int_of(p->records[tb->record], CUDNN_ATTR_TENSOR_DATA_TYPE), CUDNN_DATA_BFLOAT16);
  EXPECT_EQ(int_of(p->records[tc->record], CUDNN_ATTR_TENSOR_IS_VIRTUAL), 1);
  EXPECT_EQ(int_of(p->records[tb->record], CUDNN_ATTR_TENSOR_IS_VIRTUAL), 0);
  // Caller uids: the four non-virtual tensors, ascending.
  std::vector<std::int64_t> want = {a->get_uid(), b->get_uid(), bias->get_uid(), y->get_uid()};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(p->caller_uids, want);
  // Every uid distinct, one tensor record each.
  std::set<std::int64_t> uids;
  for (const auto* t : of_type(*p, CUDNN_BACKEND_TENSOR_DESCRIPTOR)) uids.insert(int_of(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID));
  EXPECT_EQ(uids.size(), of_type(*p, CUDNN_BACKEND_TENSOR_DESCRIPTOR).size());
  EXPECT_EQ(uids.size(), 6u);
}

TEST(CudnnLowering, EveryPointwiseModeWithItsParameters) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.1, 0.9);
  for (const auto& m : pointwise_modes()) {
    Graph g;
    g.set_name("pw").set_compute_data_type(DataType::FLOAT);
    DataType in_t = m.traits.is_logical ? DataType::BOOLEAN : DataType::FLOAT;
    std::vector<TensorPtr> ins;
    for (int i = 0; i < m.arity; ++i) {
      DataType t = (m.traits.is_select && i == 2) ? DataType::BOOLEAN : in_t;
      ins.push_back(g.tensor({2, 3, 4}, t, "in" + std::to_string(i)));
    }
    Attributes at;
    at.set("mode", std::string(m.name));
    double p1 = u(rng);
    if (m.traits.uses_relu_clip) at.set("relu_lower_clip_slope", p1);
    if (m.traits.uses_swish_beta) at.set("swish_beta", p1);
    if (m.traits.uses_elu_alpha) at.set("elu_alpha", p1);
    if (m.traits.uses_softplus_beta) at.set("softplus_beta", p1);
    if (m.traits.uses_axis) at.set("axis", std::int64_t{1});
    auto out = g.pointwise(ins[0], m.arity > 1 ? ins[1] : nullptr, m.arity > 2 ? ins[2] : nullptr, at);
    out->set_output(true).set_name("out");
    Status v = g.validate();
    ASSERT_TRUE(v.is_good()) << m.name << ": " << v.to_string();
    auto p = lower(g);
    ASSERT_TRUE(p.is_good()) << m.name << ": " << p.status().to_string();
    ASSERT_EQ(p->operations.size(), 1u);
    const DescriptorRecord& op = p->records[p->operations[0]];
    const DescriptorRecord& pw = p->records[op.find(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)->refs[0]];
    EXPECT_EQ(pw.type, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    std::string want_name = "CUDNN_POINTWISE_" + std::string(m.name);
    (void)want_name;
    EXPECT_EQ(int_of(pw, CUDNN_ATTR_POINTWISE_MATH_PREC), CUDNN_DATA_FLOAT) << m.name;
    if (m.traits.is_backward) {
      EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC), ins[0]->get_uid()) << m.name;
      EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC), ins[1]->get_uid()) << m.name;
      EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC), out->get_uid()) << m.name;
      EXPECT_EQ(op.find(CUDNN_ATTR_OPERATION_POINTWISE_YDESC), nullptr) << m.name;
    } else {
      EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC), ins[0]->get_uid()) << m.name;
      EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC), m.arity > 1 ? ins[1]->get_uid() : -1) << m.name;
      EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC), m.arity > 2 ? ins[2]->get_uid() : -1) << m.name;
      EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC), out->get_uid()) << m.name;
    }
    auto param = [&](cudnnBackendAttributeName_t n) -> double {
      const AttrRecord* a = pw.find(n);
      return a && !a->reals.empty() ? a->reals[0] : -1.0;
    };
    if (m.traits.uses_relu_clip) {
      EXPECT_DOUBLE_EQ(param(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE), p1) << m.name;
    }
    if (m.traits.uses_swish_beta) {
      EXPECT_DOUBLE_EQ(param(CUDNN_ATTR_POINTWISE_SWISH_BETA), p1) << m.name;
    }
    if (m.traits.uses_elu_alpha) {
      EXPECT_DOUBLE_EQ(param(CUDNN_ATTR_POINTWISE_ELU_ALPHA), p1) << m.name;
    }
    if (m.traits.uses_softplus_beta) {
      EXPECT_DOUBLE_EQ(param(CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA), p1) << m.name;
    }
    if (m.traits.uses_axis) {
      EXPECT_EQ(int_of(pw, CUDNN_ATTR_POINTWISE_AXIS), 1) << m.name;
    }
    if (!m.traits.uses_swish_beta) {
      EXPECT_EQ(pw.find(CUDNN_ATTR_POINTWISE_SWISH_BETA), nullptr) << m.name;
    }
    const AttrRecord* pm = pw.find(CUDNN_ATTR_POINTWISE_MODE);
    ASSERT_NE(pm, nullptr);
    EXPECT_EQ(pm->type, CUDNN_TYPE_POINTWISE_MODE);
  }
}

// Spot checks of the mode table against cuDNN's enum (the table is the thing under test).
TEST(CudnnLowering, PointwiseModeValuesAreCudnns) {
  const std::pair<const char*, cudnnPointwiseMode_t> spot[] = {
      {"ADD", CUDNN_POINTWISE_ADD}, {"GELU_APPROX_TANH_BWD", CUDNN_POINTWISE_GELU_APPROX_TANH_BWD},
      {"BINARY_SELECT", CUDNN_POINTWISE_BINARY_SELECT}, {"RECIPROCAL", CUDNN_POINTWISE_RECIPROCAL},
      {"CMP_LE", CUDNN_POINTWISE_CMP_LE}};
  for (const auto& [name, mode] : spot) {
    Graph g;
    const PointwiseModeInfo* m = find_pointwise_mode(name);
    ASSERT_NE(m, nullptr);
    std::vector<TensorPtr> ins;
    for (int i = 0; i < m->arity; ++i)
      ins.push_back(g.tensor({4, 5}, (m->traits.is_select && i == 2) ? DataType::BOOLEAN : DataType::FLOAT));
    auto out = g.pointwise(ins[0], m->arity > 1 ? ins[1] : nullptr, m->arity > 2 ? ins[2] : nullptr,
                           Attributes().set("mode", name));
    out->set_output(true);
    ASSERT_TRUE(g.validate().is_good()) << name;
    auto p = lower(g);
    ASSERT_TRUE(p.is_good());
    EXPECT_EQ(p->rank, 3);  // 2-D graphs go down at kMinRank (3)
    const auto* pw = of_type(*p, CUDNN_BACKEND_POINTWISE_DESCRIPTOR).at(0);
    EXPECT_EQ(int_of(*pw, CUDNN_ATTR_POINTWISE_MODE), mode) << name;
  }
}

TEST(CudnnLowering, ReductionCarriesOperatorAndComputeType) {
  Graph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({3, 8, 5}, DataType::HALF, "x");
  auto y = g.reduction(x, Attributes().set("mode", "AMAX").set("is_deterministic", true));
  y->set_output(true).set_name("y").set_dim({3, 1, 5}).set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
  auto p = lower(g);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  const auto& op = p->records[p->operations.at(0)];
  EXPECT_EQ(op.type, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC), x->get_uid());
  EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC), y->get_uid());
  const auto& rd = p->records[op.find(CUDNN_ATTR_OPERATION_REDUCTION_DESC)->refs[0]];
  EXPECT_EQ(int_of(rd, CUDNN_ATTR_REDUCTION_OPERATOR), CUDNN_REDUCE_TENSOR_AMAX);
  EXPECT_EQ(int_of(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE), CUDNN_DATA_FLOAT);
  EXPECT_EQ(int_of(rd, CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC), 1);
  EXPECT_TRUE(p->tensor(y->get_uid())->dims_from_user);
  EXPECT_FALSE(p->tensor(x->get_uid())->is_virtual);
}

TEST(CudnnLowering, ByValueScalarIsBoundByThePlan) {
  Graph g;
  auto x = g.tensor({2, 4}, DataType::FLOAT, "x");
  const double s = 0.3125;  // exact in float
  auto k = g.tensor_scalar(s, DataType::FLOAT);
  auto y = g.mul(x, k);
  y->set_output(true);
  ASSERT_TRUE(g.validate().is_good());
  auto p = lower(g);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  ASSERT_EQ(p->by_value_uids, std::vector<std::int64_t>{k->get_uid()});
  EXPECT_EQ(std::count(p->caller_uids.begin(), p->caller_uids.end(), k->get_uid()), 0);
  const auto* tk = p->tensor(k->get_uid());
  EXPECT_EQ(int_of(p->records[tk->record], CUDNN_ATTR_TENSOR_IS_BY_VALUE), 1);
  float f = 0;
  std::memcpy(&f, tk->scalar_bytes.data(), 4);
  EXPECT_EQ(f, static_cast<float>(s));
}

TEST(CudnnLowering, EngineOnlyOpDeclinesNamingTheOp) {
  la_test::Built b = la_test::build(la_test::op_named("gdn"), la_test::Cfg{});
  ASSERT_TRUE(b.g.validate().is_good());
  auto p = lower(b.g);
  ASSERT_TRUE(p.is_bad());
  EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(p.status().message().find("op 'gdn'"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("engine-only"), std::string::npos) << p.status().message();
}

TEST(CudnnLowering, OpNotYetLoweredDeclinesNamingTheOp) {
  Graph g;
  auto x = g.tensor({2, 8, 4, 16}, DataType::FLOAT, "x");
  auto cs = g.tensor({8, 8}, DataType::FLOAT, "cos");
  auto sn = g.tensor({8, 8}, DataType::FLOAT, "sin");
  auto y = g.rope(x, cs, sn);
  y->set_output(true);
  Status v = g.validate();
  ASSERT_TRUE(v.is_good()) << v.to_string();
  auto p = lower(g);
  ASSERT_TRUE(p.is_bad());
  EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(p.status().message().find("op 'rope'"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace opgraph
