// tests/cudnn/test_cudnn_flexible_seq_len.cpp — cudnn-frontend's
// test_flexible_sdpa.py::test_sdpa_with_flexible_graph as the Python package writes it
// (python/opgraph/_porting.py flexible_sdpa): paged K/V, SEQ_LEN_Q / SEQ_LEN_KV [b, 1, 1, 1],
// a softcap and the test's padding mask as score_mod. Lowered as data for the cuDNN the H200
// loads (9.19) and sm_90, it is the backend graph cudnn-frontend's CompositeSDPANode sends:
//  * the Q K^T matmul takes SEQ_LEN_Q / SEQ_LEN_KV as its M / N override descriptors, the P V
//    matmul as its M / K ones, each the [b, 1, 1, 1] tensor itself (no padding value set:
//    cudnn-frontend sets one only with use_padding_mask);
//  * no kv-length mask of opgraph's own (GEN_INDEX, CMP_LT, BINARY_SELECT) after the score_mod;
//  * K comes from PAGED_CACHE_LOAD as K^T ([b, h, d, s_kv], cudnn-frontend's k_cache strides).
// Also: a matmul override of one element per batch entry in another shape declines naming
// the port, the tensor and cuDNN's form; the lowered descriptors finalise device-less.
#include <cstdio>

#include "cudnn/sdpa_lowering_util.h"
#include "cudnn_gpu/flexible_seq_len_graph.h"
#include "engines/cudnn/backend.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

using namespace sdpa_lowering_test;

cu::LoweringOptions h200() {
  cu::LoweringOptions o;
  o.cudnn_version = 91900;
  o.sm_version = 90;
  return o;
}

// The test's graph, dims as its own (b 4, h 12, s_q 1, s_kv 32 Ki, d 128, block 1).
struct FlexibleGraph : cudnn_gpu::FlexibleSeqLen {
  Graph g;
  FlexibleGraph() : cudnn_gpu::FlexibleSeqLen{4, 12, 1, 32 * 1024, 128, 1} { build(g); }
};

TEST(CudnnFlexibleSeqLen, TheTestsGraphIsCudnnFrontendsBackendGraph) {
  FlexibleGraph f;
  const Status valid = f.g.validate();
  ASSERT_TRUE(valid.is_good()) << valid.to_string();
  auto p = cu::lower(f.g, h200());
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  const auto L = CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR, M = CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
             P = CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, R = CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR;
  std::vector<cudnnBackendDescriptorType_t> types;
  for (const auto* op : op_records(*p)) types.push_back(op->type);
  EXPECT_EQ(types, (std::vector<cudnnBackendDescriptorType_t>{L, L, M, P, P, P, P, P, P, P, P, P, P, R, P, P, R, P, P, P, M}));
  // The pointwise chain is attn_scale, the test's score_mod, then softmax: no mask of opgraph's own.
  EXPECT_EQ(modes(*p), (std::vector<std::int64_t>{CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_DIV, CUDNN_POINTWISE_TANH_FWD,
                                                  CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_GEN_INDEX,
                                                  CUDNN_POINTWISE_GEN_INDEX, CUDNN_POINTWISE_CMP_GE,
                                                  CUDNN_POINTWISE_CMP_GE, CUDNN_POINTWISE_LOGICAL_AND,
                                                  CUDNN_POINTWISE_BINARY_SELECT, CUDNN_POINTWISE_SUB,
                                                  CUDNN_POINTWISE_EXP, CUDNN_POINTWISE_LOG, CUDNN_POINTWISE_ADD,
                                                  CUDNN_POINTWISE_DIV}));
  const auto ops = op_records(*p);
  const DescriptorRecord& bmm1 = *ops[2];
  const DescriptorRecord& bmm2 = *ops.back();
  const std::int64_t sq = f.seq_q->get_uid(), skv = f.seq_kv->get_uid();
  EXPECT_EQ(uid_at(*p, bmm1, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC), sq);
  EXPECT_EQ(uid_at(*p, bmm1, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC), skv);
  EXPECT_EQ(bmm1.find(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC), nullptr);
  EXPECT_EQ(uid_at(*p, bmm2, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC), sq);
  EXPECT_EQ(bmm2.find(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC), nullptr);
  EXPECT_EQ(uid_at(*p, bmm2, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC), skv);
  EXPECT_EQ(uid_at(*p, bmm1, CUDNN_ATTR_OPERATION_MATMUL_BDESC), f.k->get_uid());  // K^T is the paged load's output
  EXPECT_EQ(uid_at(*p, bmm2, CUDNN_ATTR_OPERATION_MATMUL_CDESC), f.o->get_uid());
  for (const DescriptorRecord* mm : {&bmm1, &bmm2}) {  // no padding value: cudnn-frontend sets it with padding masks
    const DescriptorRecord& desc = ref(*p, *mm, CUDNN_ATTR_OPERATION_MATMUL_DESC);
    EXPECT_EQ(desc.find(CUDNN_ATTR_MATMUL_PADDING_VALUE), nullptr) << mm->label;
  }
  for (const auto& t : {f.seq_q, f.seq_kv}) {  // the lengths go down as declared: [b, 1, 1, 1] INT32, not virtual
    const auto* tr = p->tensor(t->get_uid());
    ASSERT_NE(tr, nullptr);
    EXPECT_EQ(tr->dims, (D{f.b, 1, 1, 1}));
    EXPECT_EQ(tr->strides, (D{1, 1, 1, 1}));
    EXPECT_FALSE(tr->is_virtual);
    EXPECT_EQ(int_of(p->records[static_cast<std::size_t>(tr->record)], CUDNN_ATTR_TENSOR_DATA_TYPE), CUDNN_DATA_INT32);
  }
  const auto* tk = p->tensor(f.k->get_uid());  // cudnn-frontend's k_cache: [b, h, d, s_kv], strides {d s h, d s, 1, d}
  ASSERT_NE(tk, nullptr);
  EXPECT_EQ(tk->dims, (D{f.b, f.h, f.d, f.s_kv}));
  EXPECT_EQ(tk->strides, (D{f.h * f.s_kv * f.d, f.s_kv * f.d, 1, f.d}));
}

TEST(CudnnFlexibleSeqLen, TheLoweredDescriptorsFinaliseWithoutADevice) {
  auto api = runtime::cudnn();
  if (api.is_bad()) GTEST_SKIP() << "libcudnn not loadable here: " << api.status().to_string();
  FlexibleGraph f;
  ASSERT_TRUE(f.g.validate().is_good());
  auto p = cu::lower(f.g, h200());
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  auto m = cu::materialise(*api.value(), p.value(), nullptr);  // matmuls with their override descriptors included
  ASSERT_TRUE(m.is_good()) << m.status().to_string();
  EXPECT_EQ(m->records.size(), p->records.size());
}

TEST(CudnnFlexibleSeqLen, AnOverrideCudnnWouldReadAnotherWayDeclines) {
  // One element per batch entry as a flat [b * h]: the IR takes it, cuDNN would read it as a
  // tensor broadcast over C ([1, 1, 1, b * h] once padded), so the lowering declines it.
  const std::int64_t b = 2, h = 3, m = 16, n = 24, kd = 8;
  Graph g;
  g.set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({b, h, m, kd}, DataType::HALF, "A");
  auto bt = g.tensor({b, h, kd, n}, DataType::HALF, "B");
  auto flat = g.tensor({b * h}, DataType::INT32, "rows");
  auto c = g.matmul(a, bt, Attributes().set_name("mm"), flat);
  c->set_output(true).set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
  auto p = cu::lower(g, h200());
  ASSERT_TRUE(p.is_bad());
  EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  for (const char* part : {"node 'mm'", "M_override 'rows' [6]", "unit M and N axes", "[2, 3, 16, 24]"})
    EXPECT_NE(p.status().message().find(part), std::string::npos) << part << " in " << p.status().message();

  // The same extents in cuDNN's forms lower: per head [b, h, 1, 1], and broadcast over heads [b, 1, 1, 1].
  for (const D& dims : {D{b, h, 1, 1}, D{b, 1, 1, 1}}) {
    Graph g2;
    g2.set_intermediate_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    auto a2 = g2.tensor({b, h, m, kd}, DataType::HALF, "A");
    auto b2 = g2.tensor({b, h, kd, n}, DataType::HALF, "B");
    auto ovr = g2.tensor(dims, DataType::INT32, "rows");
    auto c2 = g2.matmul(a2, b2, Attributes().set_name("mm"), ovr, ovr);
    c2->set_output(true).set_data_type(DataType::FLOAT);
    ASSERT_TRUE(g2.validate().is_good()) << g2.validate().to_string();
    auto p2 = cu::lower(g2, h200());
    ASSERT_TRUE(p2.is_good()) << p2.status().to_string();
    const DescriptorRecord& mm = *op_records(*p2).at(0);
    EXPECT_EQ(uid_at(*p2, mm, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC), ovr->get_uid());
    EXPECT_EQ(uid_at(*p2, mm, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC), ovr->get_uid());
    EXPECT_EQ(p2->tensor(ovr->get_uid())->dims, dims);
  }
}

}  // namespace
}  // namespace opgraph
