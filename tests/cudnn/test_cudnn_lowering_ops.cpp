// tests/cudnn/test_cudnn_lowering_ops.cpp — the widened lowering as data (no GPU):
// the minimum rank, batchnorm_inference as a pointwise composite, one convolution
// per graph, genstats / bn_finalize / dbn_weight, reshape, concatenate, rng,
// resample, block-scale quantize / dequantize, paged cache load, MoE grouped
// matmul, and the version each needs. When libcudnn loads here, every plan's
// descriptors are also created, set and finalized device-less (cuDNN checks
// the attribute types and values; the operation graph needs a device).
#include <algorithm>
#include <cstdio>
#include <random>
#include <set>

#include "cudnn/cudnn_test_util.h"
#include "engines/cudnn/backend.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

using namespace cudnn_test;
namespace cu = engines::cudnn;
using D = std::vector<std::int64_t>;

const runtime::CudnnApi* api_or_null() {
  auto api = runtime::cudnn();
  return api.is_good() ? api.value() : nullptr;
}

// Lowers `g` (validated first) and, when libcudnn loads, materialises it device-less.
LoweringPlan lower_ok(Graph& g) {
  Status v = g.validate();
  EXPECT_TRUE(v.is_good()) << v.to_string();
  auto p = cu::lower(g);
  EXPECT_TRUE(p.is_good()) << p.status().to_string();
  if (p.is_bad()) return {};
  // References point backwards: a record only names records created before it.
  for (std::size_t i = 0; i < p->records.size(); ++i)
    for (const auto& a : p->records[i].attrs)
      for (int r : a.refs) EXPECT_LT(r, static_cast<int>(i)) << p->records[i].label << " attribute " << a.name;
  if (const auto* api = api_or_null()) {
    auto m = cu::materialise(*api, p.value(), nullptr);
    EXPECT_TRUE(m.is_good()) << "libcudnn " << api->version << ": " << m.status().to_string();
  }
  return std::move(p.value());
}

const DescriptorRecord& only_op(const LoweringPlan& p, cudnnBackendDescriptorType_t t) {
  EXPECT_EQ(p.operations.size(), 1u);
  const DescriptorRecord& r = p.records.at(static_cast<std::size_t>(p.operations.at(0)));
  EXPECT_EQ(r.type, t) << r.label;
  return r;
}

std::vector<std::int64_t> ints_of(const DescriptorRecord& r, cudnnBackendAttributeName_t n) {
  const AttrRecord* a = r.find(n);
  return a ? a->ints : std::vector<std::int64_t>{};
}

TEST(CudnnLoweringOps, TwoDimensionalGraphGoesDownAtRankThree) {
  std::mt19937 rng(3);
  const std::int64_t R = std::uniform_int_distribution<std::int64_t>(2, 9)(rng), C = 257;
  Graph g;
  auto x = g.tensor({R, C}, DataType::FLOAT, "x");
  auto y = g.pointwise(x, nullptr, nullptr, Attributes().set("mode", "GELU_FWD"));
  y->set_output(true);
  LoweringPlan p = lower_ok(g);
  EXPECT_EQ(p.rank, cu::kMinRank);
  EXPECT_EQ(p.tensor(x->get_uid())->dims, (D{1, R, C}));
  EXPECT_EQ(p.tensor(x->get_uid())->strides, (D{R * C, C, 1}));
  const auto& op = only_op(p, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  EXPECT_EQ(op.find(CUDNN_ATTR_OPERATION_POINTWISE_BDESC), nullptr);  // unary: no B
}

TEST(CudnnLoweringOps, RowMajorPointwiseGraphOfRankFourGoesDownChannelsLast) {
  const std::int64_t N = 2, C = 3, H = 7, W = 33;
  Graph g;
  auto x = g.tensor({N, C, H, W}, DataType::FLOAT, "x");
  auto bias = g.tensor({C, 1, 1}, DataType::FLOAT, "bias");  // broadcast, padded to {1, C, 1, 1}
  auto y = g.gelu(g.add(x, bias));
  y->set_output(true);
  LoweringPlan p = lower_ok(g);
  EXPECT_EQ(p.axis_permutation, (std::vector<int>{0, 3, 1, 2}));
  EXPECT_EQ(p.tensor(x->get_uid())->dims, (D{N, W, C, H}));
  EXPECT_EQ(p.tensor(x->get_uid())->strides, (D{C * H * W, 1, H * W, W}));  // N, spatial, C order, packed
  EXPECT_EQ(p.tensor(bias->get_uid())->dims, (D{1, 1, C, 1}));
  // An NHWC graph, a graph with another op, or a 3-D graph keeps its axes.
  Graph h;
  auto xh = h.tensor({N, C, H, W}, DataType::FLOAT, "x", {C * H * W, 1, C * W, C});
  h.relu(xh)->set_output(true);
  EXPECT_TRUE(lower_ok(h).axis_permutation.empty());
  Graph k;
  auto xk = k.tensor({N, H, W}, DataType::FLOAT, "x");
  k.relu(xk)->set_output(true);
  EXPECT_TRUE(lower_ok(k).axis_permutation.empty());
}

TEST(CudnnLoweringOps, BatchnormInferenceIsAFourOpPointwiseComposite) {
  Graph g;
  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  const std::int64_t N = 4, C = 8, H = 3, W = 5;
  auto x = g.tensor({N, C, H, W}, DataType::FLOAT, "X", {C * H * W, 1, C * W, C});
  auto param = [&](const char* name) { return g.tensor({1, C, 1, 1}, DataType::FLOAT, name, {C, 1, C, C}); };
  auto mean = param("mean"), iv = param("inv_var"), s = param("scale"), b = param("bias");
  auto y = g.batchnorm_inference(x, mean, iv, s, b);
  y->set_output(true).set_name("Y");
  LoweringPlan p = lower_ok(g);
  ASSERT_EQ(p.operations.size(), 4u);
  const cudnnPointwiseMode_t want[] = {CUDNN_POINTWISE_SUB, CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_ADD};
  const std::int64_t second[] = {mean->get_uid(), iv->get_uid(), s->get_uid(), b->get_uid()};
  std::int64_t max_ir_uid = 0;
  for (const auto& t : g.tensors()) max_ir_uid = std::max(max_ir_uid, t->get_uid());
  std::set<std::int64_t> own;
  for (int i = 0; i < 4; ++i) {
    const auto& op = p.records[static_cast<std::size_t>(p.operations[static_cast<std::size_t>(i)])];
    ASSERT_EQ(op.type, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    const auto& pw = p.records[static_cast<std::size_t>(op.find(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)->refs[0])];
    EXPECT_EQ(int_of(pw, CUDNN_ATTR_POINTWISE_MODE), want[i]) << i;
    EXPECT_EQ(uid_at(p, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC), second[i]) << i;
    std::int64_t in = uid_at(p, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC);
    std::int64_t out = uid_at(p, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC);
    EXPECT_EQ(in, i == 0 ? x->get_uid() : *own.rbegin()) << i;  // chained through the lowering's virtuals
    if (i == 3) EXPECT_EQ(out, y->get_uid());
    else {
      EXPECT_GT(out, max_ir_uid) << i;
      own.insert(out);
      const auto& t = p.records[static_cast<std::size_t>(op.find(CUDNN_ATTR_OPERATION_POINTWISE_YDESC)->refs[0])];
      EXPECT_EQ(int_of(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL), 1);
      EXPECT_EQ(ints_of(t, CUDNN_ATTR_TENSOR_STRIDES), p.tensor(x->get_uid())->strides);  // X's layout
    }
  }
  EXPECT_EQ(own.size(), 3u);
  // Errors about the whole graph name the node once, not its four operations.
  EXPECT_EQ(p.operations_summary(), "op 'batchnorm_inference' (node '" + g.nodes().at(0)->name() + "')");
  // The caller binds the six IR tensors only.
  EXPECT_EQ(p.caller_uids.size(), 6u);
  for (std::int64_t u : own) EXPECT_EQ(std::count(p.caller_uids.begin(), p.caller_uids.end(), u), 0);
}

TEST(CudnnLoweringOps, TwoConvolutionsInOneGraphDeclineNamingTheSecond) {
  Graph g;
  auto dy = g.tensor({2, 8, 6, 6}, DataType::FLOAT, "dY");
  auto w = g.tensor({8, 4, 3, 3}, DataType::FLOAT, "W");
  auto x = g.tensor({2, 4, 8, 8}, DataType::FLOAT, "X");
  g.conv_dgrad(dy, w, Attributes().set_name("dgrad"))->set_output(true).set_dim({2, 4, 8, 8});
  g.conv_wgrad(dy, x, Attributes().set_name("wgrad"))->set_output(true).set_dim({8, 4, 3, 3});
  ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
  auto p = cu::lower(g);
  ASSERT_TRUE(p.is_bad());
  EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  const std::string m = p.status().message();
  EXPECT_NE(m.find("op 'conv_wgrad' (node 'wgrad')"), std::string::npos) << m;
  EXPECT_NE(m.find("one convolution per operation graph"), std::string::npos) << m;
  EXPECT_NE(m.find("node 'dgrad'"), std::string::npos) << m;
}

TEST(CudnnLoweringOps, GenstatsBnFinalizeAndDbnWeightBindEveryPort) {
  const std::int64_t C = 16;
  Graph g;
  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto x = g.tensor({4, C, 5, 5}, DataType::FLOAT, "X", {25 * C, 1, 5 * C, C});
  auto [sum, sq] = g.genstats(x);
  sum->set_output(true);
  sq->set_output(true);
  LoweringPlan p = lower_ok(g);
  const auto& gs = only_op(p, CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
  EXPECT_EQ(int_of(gs, CUDNN_ATTR_OPERATION_GENSTATS_MODE), CUDNN_GENSTATS_SUM_SQSUM);
  EXPECT_EQ(uid_at(p, gs, CUDNN_ATTR_OPERATION_GENSTATS_XDESC), x->get_uid());
  EXPECT_EQ(uid_at(p, gs, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC), sum->get_uid());
  EXPECT_EQ(uid_at(p, gs, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC), sq->get_uid());

  Graph f;
  f.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto ch = [&](Graph& gg, const char* n) { return gg.tensor({1, C, 1, 1}, DataType::FLOAT, n, {C, 1, C, C}); };
  auto s1 = ch(f, "sum"), s2 = ch(f, "sq_sum"), sc = ch(f, "scale"), bi = ch(f, "bias");
  auto prm = ch(f, "prev_mean"), prv = ch(f, "prev_var");
  auto eps = f.tensor_scalar(1e-3, DataType::FLOAT), mom = f.tensor_scalar(0.1, DataType::FLOAT);
  auto cnt = f.tensor_scalar_int(100, DataType::INT64);
  auto outs = f.bn_finalize(s1, s2, sc, bi, eps, cnt, {}, prm, prv, mom);
  for (auto& t : outs) t->set_output(true);
  LoweringPlan pf = lower_ok(f);
  const auto& fin = only_op(pf, CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR);
  EXPECT_EQ(int_of(fin, CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE), CUDNN_BN_FINALIZE_STATISTICS_TRAINING);
  EXPECT_EQ(uid_at(pf, fin, CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC), s2->get_uid());
  EXPECT_EQ(uid_at(pf, fin, CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC), cnt->get_uid());
  EXPECT_EQ(uid_at(pf, fin, CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC), mom->get_uid());
  EXPECT_EQ(uid_at(pf, fin, CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC), outs[3]->get_uid());
  EXPECT_EQ(uid_at(pf, fin, CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC), outs[5]->get_uid());
  EXPECT_EQ(pf.by_value_uids.size(), 3u);  // epsilon, momentum, count

  Graph w;
  w.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto dy = w.tensor({4, C, 5, 5}, DataType::FLOAT, "DY", {25 * C, 1, 5 * C, C});
  auto xw = w.tensor({4, C, 5, 5}, DataType::FLOAT, "X", {25 * C, 1, 5 * C, C});
  auto mean = ch(w, "mean"), iv = ch(w, "inv_var"), scw = ch(w, "scale");
  auto r = w.dbn_weight(dy, xw, mean, iv, scw);
  for (auto& t : r) t->set_output(true);
  LoweringPlan pw = lower_ok(w);
  const auto& db = only_op(pw, CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR);
  EXPECT_EQ(uid_at(pw, db, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC), iv->get_uid());
  EXPECT_EQ(uid_at(pw, db, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC), scw->get_uid());
  EXPECT_EQ(uid_at(pw, db, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC), r[1]->get_uid());
  EXPECT_EQ(uid_at(pw, db, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS), r[2]->get_uid());
  EXPECT_EQ(uid_at(pw, db, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC), r[4]->get_uid());
}

TEST(CudnnLoweringOps, ReshapeAndConcatenateMoveAxesIntoThePaddedRank) {
  Graph g;
  auto x = g.tensor({6, 4}, DataType::FLOAT, "x");
  auto y = g.reshape(x, Attributes().set("dim", D{2, 3, 4}));
  y->set_output(true);
  LoweringPlan p = lower_ok(g);
  const auto& rs = only_op(p, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  EXPECT_EQ(uid_at(p, rs, CUDNN_ATTR_OPERATION_RESHAPE_XDESC), x->get_uid());
  EXPECT_EQ(p.tensor(x->get_uid())->dims, (D{1, 6, 4}));
  EXPECT_EQ(p.tensor(y->get_uid())->dims, (D{2, 3, 4}));

  Graph c;
  auto a = c.tensor({3, 5}, DataType::FLOAT, "a"), b = c.tensor({3, 7}, DataType::FLOAT, "b");
  auto z = c.concatenate({a, b}, Attributes().set("axis", std::int64_t{-1}));
  z->set_output(true);
  LoweringPlan pc = lower_ok(c);
  const auto& cc = only_op(pc, CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR);
  EXPECT_EQ(int_of(cc, CUDNN_ATTR_OPERATION_CONCAT_AXIS), 2);  // axis -1 of a rank-2 tensor in rank 3
  EXPECT_EQ(cc.find(CUDNN_ATTR_OPERATION_CONCAT_INPUT_DESCS)->refs.size(), 2u);
  EXPECT_EQ(uid_at(pc, cc, CUDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC), z->get_uid());
  EXPECT_EQ(pc.min_cudnn_version, 90700);
}

TEST(CudnnLoweringOps, RngCarriesDistributionSeedAndOffset) {
  Graph g;
  auto seed = g.tensor({1, 1, 1}, DataType::INT64, "seed");
  auto off = g.tensor({1, 1, 1}, DataType::INT64, "offset");
  auto y = g.rng(seed, off, Attributes().set("distribution", "BERNOULLI").set("dim", D{4, 8, 16})
                               .set("bernoulli_probability", 0.25));
  y->set_output(true).set_data_type(DataType::FLOAT);
  LoweringPlan p = lower_ok(g);
  const auto& op = only_op(p, CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR);
  EXPECT_EQ(uid_at(p, op, CUDNN_ATTR_OPERATION_RNG_SEED), seed->get_uid());
  EXPECT_EQ(uid_at(p, op, CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC), off->get_uid());
  const auto& d = p.records[static_cast<std::size_t>(op.find(CUDNN_ATTR_OPERATION_RNG_DESC)->refs[0])];
  EXPECT_EQ(int_of(d, CUDNN_ATTR_RNG_DISTRIBUTION), CUDNN_RNG_DISTRIBUTION_BERNOULLI);
  EXPECT_DOUBLE_EQ(d.find(CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY)->reals.at(0), 0.25);
  EXPECT_EQ(d.find(CUDNN_ATTR_RNG_NORMAL_DIST_MEAN), nullptr);
}

TEST(CudnnLoweringOps, ResampleMaxPoolWithIndex) {
  Graph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({2, 8, 9, 9}, DataType::FLOAT, "x", {648, 1, 72, 8});
  auto [y, idx] = g.resample(x, Attributes().set("resampling_mode", "MAXPOOL").set("window", D{3, 3})
                                     .set("stride", D{2, 2}).set("pre_padding", D{1, 1}).set("post_padding", D{1, 1})
                                     .set("generate_index", true));
  y->set_output(true);
  ASSERT_NE(idx, nullptr);
  idx->set_output(true);
  LoweringPlan p = lower_ok(g);
  const auto& op = only_op(p, CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR);
  EXPECT_EQ(uid_at(p, op, CUDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC), idx->get_uid());
  const auto& d = p.records[static_cast<std::size_t>(op.find(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_DESC)->refs[0])];
  EXPECT_EQ(int_of(d, CUDNN_ATTR_RESAMPLE_MODE), CUDNN_RESAMPLE_MAXPOOL);
  EXPECT_EQ(int_of(d, CUDNN_ATTR_RESAMPLE_PADDING_MODE), CUDNN_NEG_INF_PAD);  // the IR's default for MAXPOOL
  EXPECT_EQ(ints_of(d, CUDNN_ATTR_RESAMPLE_WINDOW_DIMS), (D{3, 3}));
  EXPECT_EQ(ints_of(d, CUDNN_ATTR_RESAMPLE_STRIDES), (D{2, 2}));
  EXPECT_EQ(int_of(d, CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS), 2);
}

TEST(CudnnLoweringOps, BlockScaleQuantizeDequantizeAndTheirDeclines) {
  Graph g;
  g.set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor({1, 2, 128, 64}, DataType::FLOAT, "x");
  auto [y, s] = g.block_scale_quantize(x, Attributes().set("block_size", std::int64_t{32}));
  y->set_data_type(DataType::FP8_E4M3).set_output(true);
  s->set_output(true);
  auto back = g.block_scale_dequantize(y, s, Attributes().set("block_size", D{32}).set("is_negative_scale", true));
  back->set_output(true).set_data_type(DataType::FLOAT);
  LoweringPlan p = lower_ok(g);
  ASSERT_EQ(p.operations.size(), 2u);
  const auto& q = p.records[static_cast<std::size_t>(p.operations[0])];
  EXPECT_EQ(q.type, CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR);
  EXPECT_EQ(int_of(q, CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE), 32);
  EXPECT_EQ(q.find(CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE)->type, CUDNN_TYPE_INT32);
  EXPECT_EQ(uid_at(p, q, CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC), s->get_uid());
  const auto& dq = p.records[static_cast<std::size_t>(p.operations[1])];
  EXPECT_EQ(dq.type, CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR);
  EXPECT_EQ(int_of(dq, CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_NEG_SCALE), 1);
  EXPECT_EQ(p.min_cudnn_version, 91400);  // the negative-scale flag
  EXPECT_NE(p.min_version_reason.find("block_scale_dequantize"), std::string::npos) << p.min_version_reason;

  auto declined = [](Graph& t, const char* want) {
    ASSERT_TRUE(t.validate().is_good()) << t.validate().to_string();
    auto pt = cu::lower(t);
    ASSERT_TRUE(pt.is_bad());
    EXPECT_EQ(pt.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
    EXPECT_NE(pt.status().message().find(want), std::string::npos) << pt.status().message();
  };
  Graph t;  // blocks along a non-innermost axis
  auto xt = t.tensor({1, 64, 8}, DataType::FLOAT, "x");
  auto [yt, st] = t.block_scale_quantize(xt, Attributes().set("block_size", std::int64_t{32}).set("axis", std::int64_t{1}));
  yt->set_data_type(DataType::FP8_E4M3).set_output(true);
  st->set_output(true);
  declined(t, "innermost axis");
  Graph u;  // 3-D with a plain (not 128x4-reordered) scale
  auto xu = u.tensor({1, 128, 64}, DataType::FLOAT, "x");
  auto [yu, su] = u.block_scale_quantize(xu, Attributes().set("block_size", std::int64_t{32}));
  yu->set_data_type(DataType::FP8_E4M3).set_output(true);
  su->set_output(true);
  declined(u, "F8_128x4-reordered scale exactly when X is 3-D");
}

TEST(CudnnLoweringOps, PagedCacheLoadAndMoeRecordTheirVersions) {
  Graph g;
  auto cont = g.tensor({6, 2, 4, 8}, DataType::HALF, "cache");
  auto len = g.tensor({2, 1, 1, 1}, DataType::INT32, "len");
  auto pt = g.tensor({2, 1, 3, 1}, DataType::INT32, "pt");
  auto k = g.paged_cache_load(cont, len, pt);
  k->set_output(true);
  LoweringPlan p = lower_ok(g);
  const auto& op = only_op(p, CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR);
  EXPECT_EQ(uid_at(p, op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC), pt->get_uid());
  EXPECT_EQ(uid_at(p, op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC), k->get_uid());
  EXPECT_EQ(p.min_cudnn_version, 90500);

  Graph m;
  m.set_compute_data_type(DataType::FLOAT);
  auto tok = m.tensor({1, 32, 16}, DataType::BFLOAT16, "token");
  auto w = m.tensor({4, 16, 8}, DataType::BFLOAT16, "weight");
  auto off = m.tensor({4, 1, 1}, DataType::INT32, "off");
  auto o = m.moe_grouped_matmul(tok, w, off);
  o->set_output(true).set_data_type(DataType::BFLOAT16);
  ASSERT_TRUE(m.validate().is_good()) << m.validate().to_string();
  auto pm = cu::lower(m);  // no device-less finalize: the loaded libcudnn may predate MoE
  ASSERT_TRUE(pm.is_good()) << pm.status().to_string();
  const auto& mo = only_op(pm.value(), CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR);
  EXPECT_EQ(int_of(mo, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE), CUDNN_MOE_GROUPED_MATMUL_MODE_NONE);
  EXPECT_EQ(uid_at(pm.value(), mo, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC), off->get_uid());
  EXPECT_EQ(pm->min_cudnn_version, 91500);
  EXPECT_NE(pm->min_version_reason.find("op 'moe_grouped_matmul'"), std::string::npos) << pm->min_version_reason;
  EXPECT_NE(pm->min_version_reason.find("9.15.0"), std::string::npos) << pm->min_version_reason;
}

}  // namespace
}  // namespace opgraph
