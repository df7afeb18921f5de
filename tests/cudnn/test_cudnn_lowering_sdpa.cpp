// tests/cudnn/test_cudnn_lowering_sdpa.cpp — the SDPA lowering plans (data, no
// cuDNN call): native OPERATION_SDPA_FWD vs the composite by library version and
// graph, the composite's operation sequence (K as K^T, overrides, masks, softmax
// with stats, P in the io type), paged loads, ragged offsets, GQA backward with
// its workspace tensors, and the declines (op, attribute/port, rule). Shapes are
// drawn at random per run; device-less finalize runs when libcudnn loads.
#include <cmath>
#include <cstring>
#include <random>

#include "cudnn/sdpa_lowering_util.h"

namespace opgraph {
namespace {

using namespace sdpa_lowering_test;

TEST(CudnnLoweringSdpa, CausalForwardIsTheComposite) {
  Fwd f(random_shape(std::random_device{}()));
  f.a.set("use_causal_mask", true);
  auto p = f.lower(91400);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  // K is read as K^T: its own record's last two dims and strides swapped.
  const auto* tk = p->tensor(f.k->get_uid());
  EXPECT_EQ(tk->dims, (D{f.s.b, f.s.h_k, f.s.d, f.s.s_kv}));
  EXPECT_EQ(tk->strides, (D{f.s.h_k * f.s.s_kv * f.s.d, f.s.d, 1, f.s.h_k * f.s.d}));
  EXPECT_EQ(p->records[tk->record].find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints, tk->dims);
  auto o = op_records(*p);
  ASSERT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR), 2u);
  ASSERT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR), 2u);
  EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 0u);
  const DescriptorRecord& bmm1 = *o.front();
  EXPECT_EQ(bmm1.type, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  EXPECT_EQ(uid_at(*p, bmm1, CUDNN_ATTR_OPERATION_MATMUL_ADESC), f.q->get_uid());
  EXPECT_EQ(uid_at(*p, bmm1, CUDNN_ATTR_OPERATION_MATMUL_BDESC), f.k->get_uid());
  EXPECT_EQ(bmm1.find(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC), nullptr);  // no padding mask
  const auto& s = ref(*p, bmm1, CUDNN_ATTR_OPERATION_MATMUL_CDESC);
  EXPECT_EQ(s.find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints, (D{f.s.b, f.s.h_q, f.s.s_q, f.s.s_kv}));
  EXPECT_EQ(int_of(s, CUDNN_ATTR_TENSOR_IS_VIRTUAL), 1);
  EXPECT_EQ(int_of(s, CUDNN_ATTR_TENSOR_DATA_TYPE), CUDNN_DATA_FLOAT);
  // scale, causal band (row/col index, CMP_GE, select), softmax (SUB, EXP, LOG, ADD, DIV).
  const std::vector<std::int64_t> want = {CUDNN_POINTWISE_MUL,         CUDNN_POINTWISE_GEN_INDEX, CUDNN_POINTWISE_GEN_INDEX,
                                          CUDNN_POINTWISE_CMP_GE,      CUDNN_POINTWISE_BINARY_SELECT,
                                          CUDNN_POINTWISE_SUB,         CUDNN_POINTWISE_EXP,       CUDNN_POINTWISE_LOG,
                                          CUDNN_POINTWISE_ADD,         CUDNN_POINTWISE_DIV};
  EXPECT_EQ(modes(*p), want);
  // The scale is a by-value FLOAT scalar holding 0.125; the mask value is -inf (cuDNN >= 9.10).
  const DescriptorRecord& mul = *o[1];
  const auto* scale = p->tensor(uid_at(*p, mul, CUDNN_ATTR_OPERATION_POINTWISE_BDESC));
  ASSERT_NE(scale, nullptr);
  ASSERT_TRUE(scale->by_value);
  float sv;
  std::memcpy(&sv, scale->scalar_bytes.data(), 4);
  EXPECT_EQ(sv, 0.125f);
  const DescriptorRecord& sel = *o[5];
  ASSERT_EQ(mode_of(*p, sel), CUDNN_POINTWISE_BINARY_SELECT);
  const auto* inf = p->tensor(uid_at(*p, sel, CUDNN_ATTR_OPERATION_POINTWISE_BDESC));
  std::memcpy(&sv, inf->scalar_bytes.data(), 4);
  EXPECT_TRUE(std::isinf(sv) && sv < 0);
  EXPECT_EQ(int_of(ref(*p, sel, CUDNN_ATTR_OPERATION_POINTWISE_TDESC), CUDNN_ATTR_TENSOR_DATA_TYPE), CUDNN_DATA_BOOLEAN);
  // Stats is the softmax's ADD output; P (bmm2's A) is in the io type; O is bmm2's C.
  const DescriptorRecord& bmm2 = *o.back();
  EXPECT_EQ(uid_at(*p, bmm2, CUDNN_ATTR_OPERATION_MATMUL_CDESC), f.out.O->get_uid());
  EXPECT_EQ(uid_at(*p, bmm2, CUDNN_ATTR_OPERATION_MATMUL_BDESC), f.v->get_uid());
  EXPECT_EQ(int_of(ref(*p, bmm2, CUDNN_ATTR_OPERATION_MATMUL_ADESC), CUDNN_ATTR_TENSOR_DATA_TYPE), CUDNN_DATA_BFLOAT16);
  EXPECT_EQ(uid_at(*p, *o[o.size() - 3], CUDNN_ATTR_OPERATION_POINTWISE_YDESC), f.out.Stats->get_uid());
  // Tensors the lowering introduced have uids above the graph's, and only the IR's reach the caller.
  std::int64_t top = 0;
  for (const auto& t : f.g.tensors()) top = std::max(top, t->get_uid());
  for (const auto& t : p->tensors) {
    bool from_ir = false;
    for (const auto& gt : f.g.tensors()) from_ir |= gt->get_uid() == t.uid;
    if (!from_ir) {
      EXPECT_GT(t.uid, top);
    }
  }
  EXPECT_EQ(p->caller_uids.size(), 5u);  // Q, K, V, O, Stats
  EXPECT_TRUE(p->scratch.empty());
}

TEST(CudnnLoweringSdpa, NativeOperationByVersionAndGraph) {
  const Shape sh = random_shape(std::random_device{}());
  {  // 9.14, no mask: one OPERATION_SDPA_FWD; K keeps its own layout.
    Fwd f(sh);
    auto p = f.lower(91400);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    ASSERT_EQ(p->operations.size(), 1u);
    const auto& op = p->records[p->operations[0]];
    EXPECT_EQ(op.type, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
    EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC), f.q->get_uid());
    EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC), f.k->get_uid());
    EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC), f.v->get_uid());
    EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC), f.out.O->get_uid());
    EXPECT_EQ(uid_at(*p, op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC), f.out.Stats->get_uid());
    EXPECT_TRUE(p->tensor(uid_at(*p, op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC))->by_value);
    EXPECT_EQ(p->tensor(f.k->get_uid())->dims, (D{sh.b, sh.h_k, sh.s_kv, sh.d}));
  }
  for (std::int64_t old : {0, 91200}) {  // unknown or older library: the composite
    Fwd f(sh);
    auto p = f.lower(old);
    ASSERT_TRUE(p.is_good());
    EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 0u);
    EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR), 2u);
  }
  {  // implementation COMPOSITE wins over a new library
    Fwd f(sh);
    f.a.set("implementation", "COMPOSITE");
    auto p = f.lower(91900);
    ASSERT_TRUE(p.is_good());
    EXPECT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 0u);
  }
  {  // padding: composite on 9.14, native with both seq lens from 9.15
    Fwd f14(sh), f19(sh);
    f14.padding();
    f19.padding();
    auto p14 = f14.lower(91400);
    auto p19 = f19.lower(91900);
    ASSERT_TRUE(p14.is_good() && p19.is_good());
    EXPECT_EQ(count_type(*p14, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR), 0u);
    ASSERT_EQ(p19->operations.size(), 1u);
    const auto& op = p19->records[p19->operations[0]];
    EXPECT_EQ(uid_at(*p19, op, CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC), f19.in.seq_len_q->get_uid());
    EXPECT_EQ(uid_at(*p19, op, CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KVDESC), f19.in.seq_len_kv->get_uid());
    // The composite's padding mask: overrides, padding value 0, INT32 row/col indices, CMP_LT vs the seq lens.
    const auto& bmm1 = p14->records[p14->operations[0]];
    EXPECT_EQ(uid_at(*p14, bmm1, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC), f14.in.seq_len_q->get_uid());
    EXPECT_EQ(uid_at(*p14, bmm1, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC), f14.in.seq_len_kv->get_uid());
    EXPECT_EQ(ref(*p14, bmm1, CUDNN_ATTR_OPERATION_MATMUL_DESC).find(CUDNN_ATTR_MATMUL_PADDING_VALUE)->reals,
              (std::vector<double>{0.0}));
    auto o = op_records(*p14);
    ASSERT_EQ(mode_of(*p14, *o[2]), CUDNN_POINTWISE_GEN_INDEX);
    const auto& gen = ref(*p14, *o[2], CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR);
    EXPECT_EQ(int_of(gen, CUDNN_ATTR_POINTWISE_AXIS), 2);
    EXPECT_EQ(int_of(gen, CUDNN_ATTR_POINTWISE_MATH_PREC), CUDNN_DATA_INT32);
    EXPECT_EQ(mode_of(*p14, *o[4]), CUDNN_POINTWISE_CMP_LT);
    EXPECT_EQ(uid_at(*p14, *o[4], CUDNN_ATTR_OPERATION_POINTWISE_BDESC), f14.in.seq_len_q->get_uid());
    EXPECT_EQ(uid_at(*p14, *o[5], CUDNN_ATTR_OPERATION_POINTWISE_BDESC), f14.in.seq_len_kv->get_uid());
    EXPECT_EQ(mode_of(*p14, *o[6]), CUDNN_POINTWISE_LOGICAL_AND);
    EXPECT_EQ(uid_at(*p14, *o.back(), CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC), f14.in.seq_len_kv->get_uid());
  }
}

TEST(CudnnLoweringSdpa, SlidingWindowAndBottomRightBands) {
  const Shape sh = random_shape(std::random_device{}());
  {  // top-left sliding window: causal right bound, then col + window > row in FLOAT
    Fwd f(sh);
    f.a.set("use_causal_mask", true).set("sliding_window_length", 5);
    auto p = f.lower(91400);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    auto m = modes(*p);
    EXPECT_EQ(std::count(m.begin(), m.end(), CUDNN_POINTWISE_CMP_GE), 1);
    EXPECT_EQ(std::count(m.begin(), m.end(), CUDNN_POINTWISE_CMP_GT), 1);
    EXPECT_EQ(std::count(m.begin(), m.end(), CUDNN_POINTWISE_BINARY_SELECT), 2);
    for (const auto* op : op_records(*p))
      if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR && mode_of(*p, *op) == CUDNN_POINTWISE_ADD &&
          p->tensor(uid_at(*p, *op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC))->by_value) {
        float w;
        std::memcpy(&w, p->tensor(uid_at(*p, *op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC))->scalar_bytes.data(), 4);
        EXPECT_EQ(w, 5.0f);
      }
  }
  {  // bottom-right causal without seq lens: row + s_kv - s_q as INT32 scalars
    Shape s2 = sh;
    s2.s_kv = s2.s_q + 16;
    Fwd f(s2);
    f.a.set("use_causal_mask_bottom_right", true);
    auto p = f.lower(91400);
    ASSERT_TRUE(p.is_good()) << p.status().to_string();
    std::vector<std::int32_t> scalars;
    for (const auto* op : op_records(*p)) {
      auto md = mode_of(*p, *op);
      if (md != CUDNN_POINTWISE_ADD && md != CUDNN_POINTWISE_SUB) continue;
      const auto* t = p->tensor(uid_at(*p, *op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC));
      if (!t || !t->by_value) continue;
      std::int32_t x;
      std::memcpy(&x, t->scalar_bytes.data(), 4);
      scalars.push_back(md == CUDNN_POINTWISE_ADD ? x : -x);
    }
    EXPECT_EQ(scalars, (std::vector<std::int32_t>{static_cast<std::int32_t>(s2.s_kv), -static_cast<std::int32_t>(s2.s_q)}));
  }
}

TEST(CudnnLoweringSdpa, PagedKvLoadsThroughThePageTables) {
  Shape sh = random_shape(std::random_device{}());
  const std::int64_t block = 16, blocks = sh.b * ((sh.s_kv + block - 1) / block);
  Fwd f(sh);
  f.k = f.g.tensor({blocks, sh.h_k, block, sh.d}, DataType::BFLOAT16, "K_cache");
  f.v = f.g.tensor({blocks, sh.h_k, block, sh.d}, DataType::BFLOAT16, "V_cache");
  f.padding();
  f.in.page_table_k = f.g.tensor({sh.b, 1, (sh.s_kv + block - 1) / block, 1}, DataType::INT32, "pt_k");
  f.in.page_table_v = f.g.tensor({sh.b, 1, (sh.s_kv + block - 1) / block, 1}, DataType::INT32, "pt_v");
  f.a.set("paged_attention_max_seq_len_kv", sh.s_kv).set("use_causal_mask", true);
  auto p = f.lower(91400);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  ASSERT_EQ(count_type(*p, CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR), 2u);
  EXPECT_EQ(p->min_cudnn_version, 90500);  // the engine declines the graph on an older libcudnn
  auto o = op_records(*p);
  const auto& lk = *o[0];
  EXPECT_EQ(uid_at(*p, lk, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC), f.k->get_uid());
  EXPECT_EQ(uid_at(*p, lk, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC), f.in.page_table_k->get_uid());
  EXPECT_EQ(uid_at(*p, lk, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC), f.in.seq_len_kv->get_uid());
  const auto& kt = ref(*p, lk, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC);
  EXPECT_EQ(kt.find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints, (D{sh.b, sh.h_k, sh.d, sh.s_kv}));
  EXPECT_EQ(kt.find(CUDNN_ATTR_TENSOR_STRIDES)->ints, (D{sh.d * sh.s_kv * sh.h_k, sh.d * sh.s_kv, 1, sh.d}));
  EXPECT_EQ(p->tensor(f.k->get_uid())->dims, (D{blocks, sh.h_k, block, sh.d}));  // the cache keeps its layout
  // bmm1 reads the loaded K^T; bmm2 the loaded V.
  EXPECT_EQ(o[1]->find(CUDNN_ATTR_OPERATION_MATMUL_BDESC)->refs, lk.find(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC)->refs);
  const auto* lv = o[o.size() - 2];
  EXPECT_EQ(lv->type, CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR);
  EXPECT_EQ(o.back()->find(CUDNN_ATTR_OPERATION_MATMUL_BDESC)->refs, lv->find(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC)->refs);
}

}  // namespace
}  // namespace opgraph
