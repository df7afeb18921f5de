// tests/cudnn_gpu/cases_ops.cpp — the GPU cases of the widened lowering (H200):
// batchnorm (training, backward, inference as the pointwise composite),
// genstats, bn_finalize, dbn_weight, reshape, concatenate, resample, rng,
// block-scale quantize / dequantize, paged cache load, MoE grouped matmul, and the
// lowerings not yet run on the H200 (batchnorm_inference beside a batchnorm_backward,
// transpose folded and as a RESHAPE view, test_sdpa_with_flexible_graph's GEMM overrides).
// Each case either runs on its first cudnn plan and matches the reference, or
// must decline with the named reason (gpu_harness.h). Per-channel tensors take
// the NHWC strides cudnn-frontend's samples give them ({C, 1, C, C}). Also
// linked into test_cudnn (CI): every case validates and lowers as expected.
#include <cstdio>

#include "cudnn_gpu/flexible_seq_len_graph.h"
#include "cudnn_gpu/gpu_harness.h"

using namespace opgraph;

namespace cudnn_gpu {
namespace {

using D = std::vector<std::int64_t>;
constexpr std::int64_t kN = 4, kC = 32, kH = 8, kW = 8;

TensorPtr nhwc(Graph& g, const char* name, DataType t = DataType::FLOAT) {
  return g.tensor({kN, kC, kH, kW}, t, name, {kC * kH * kW, 1, kC * kW, kC});
}
TensorPtr per_channel(Graph& g, const char* name) {
  return g.tensor({1, kC, 1, 1}, DataType::FLOAT, name, {kC, 1, kC, kC});
}
TensorPtr out_like_channel(TensorPtr t, const char* name) {
  out(t, name)->set_stride({kC, 1, kC, kC});
  return t;
}

void float_graph(Graph& g) { g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT); }

}  // namespace

// cuDNN 9.14 on the H200 lists no engine for these standalone (2026-11-30): its
// runtime-fusion engines want a matmul / convolution, a pointwise fusion or a
// resample in the graph ("(mmaNodeCount == 0) && !is_pointwise_fusion &&
// (resampleNodeCount == 0)"); block scaling is Blackwell's.
Case declines(Case c) {
  c.expect = Expect::DECLINES;
  c.decline_note = "no engine config for this operation graph";
  return c;
}

std::vector<Case> op_cases() {
  std::vector<Case> cs;
  cs.push_back({"batchnorm_inference_nhwc", [](Graph& g) {
                  float_graph(g);
                  auto x = nhwc(g, "X");
                  auto mean = per_channel(g, "mean"), iv = per_channel(g, "inv_var");
                  auto s = per_channel(g, "scale"), b = per_channel(g, "bias");
                  auto y = out(g.batchnorm_inference(x, mean, iv, s, b), "Y");
                  y->set_stride({kC * kH * kW, 1, kC * kW, kC});
                  return Io{{x, mean, iv, s, b}, {y}};
                }, 1e-4, 1e-4});
  // Training batchnorm, its backward, genstats and dbn_weight: FLOAT and HALF data
  // (cudnn-frontend's samples run these with HALF X and FLOAT per-channel tensors).
  for (DataType io : {DataType::FLOAT, DataType::HALF}) {
    const std::string sfx = io == DataType::HALF ? "_half" : "";
    const double tol = io == DataType::HALF ? 1e-2 : 1e-3;
    cs.push_back({"batchnorm_train_nhwc" + sfx, [io](Graph& g) {
                    float_graph(g);
                    auto x = nhwc(g, "X", io);
                    auto s = per_channel(g, "scale"), b = per_channel(g, "bias");
                    auto pm = per_channel(g, "prev_mean"), pv = per_channel(g, "prev_var");
                    auto eps = g.tensor_scalar(1e-5, DataType::FLOAT), mom = g.tensor_scalar(0.1, DataType::FLOAT);
                    auto r = g.batchnorm(x, s, b, eps, {}, pm, pv, mom);
                    out(r[0], "Y", io)->set_stride({kC * kH * kW, 1, kC * kW, kC});
                    return Io{{x, s, b, pm, pv},
                              {r[0], out_like_channel(r[1], "mean"), out_like_channel(r[2], "inv_var"),
                               out_like_channel(r[3], "next_mean"), out_like_channel(r[4], "next_var")}};
                  }, tol, tol});
    cs.push_back({"batchnorm_backward_nhwc" + sfx, [io](Graph& g) {
                    float_graph(g);
                    auto dy = nhwc(g, "dY", io), x = nhwc(g, "X", io);
                    auto s = per_channel(g, "scale"), mean = per_channel(g, "mean"), iv = per_channel(g, "inv_var");
                    auto r = g.batchnorm_backward(dy, x, s, mean, iv);
                    out(r[0], "dX", io)->set_stride({kC * kH * kW, 1, kC * kW, kC});
                    return Io{{dy, x, s, mean, iv}, {r[0], out_like_channel(r[1], "dscale"), out_like_channel(r[2], "dbias")}};
                  }, tol, tol});
    cs.push_back(declines({"genstats_nhwc" + sfx, [io](Graph& g) {
                    float_graph(g);
                    auto x = nhwc(g, "X", io);
                    auto [sum, sq] = g.genstats(x);
                    return Io{{x}, {out_like_channel(sum, "sum"), out_like_channel(sq, "sq_sum")}};
                  }, 1e-3, 1e-4}));
    cs.push_back(declines({"dbn_weight_nhwc" + sfx, [io](Graph& g) {
                    float_graph(g);
                    auto dy = nhwc(g, "dY", io), x = nhwc(g, "X", io);
                    auto mean = per_channel(g, "mean"), iv = per_channel(g, "inv_var"), s = per_channel(g, "scale");
                    auto r = g.dbn_weight(dy, x, mean, iv, s);
                    const char* names[] = {"dscale", "dbias", "eq_bias", "eq_scale_dy", "eq_scale_x"};
                    std::vector<TensorPtr> outs;
                    for (int i = 0; i < 5; ++i) outs.push_back(out_like_channel(r[static_cast<std::size_t>(i)], names[i]));
                    return Io{{dy, x, mean, iv, s}, outs};
                  }, 1e-3, 1e-3}));
  }
  // genstats fused after a convolution (cudnn-frontend's ConvGenStats pattern): scale, bias,
  // relu, conv_fprop, genstats; HALF data, FLOAT statistics.
  cs.push_back({"conv_fprop_genstats_half", [](Graph& g) {
                  g.set_io_data_type(DataType::HALF).set_intermediate_data_type(DataType::HALF)
                      .set_compute_data_type(DataType::FLOAT);
                  auto x = g.tensor({2, 16, 8, 8}, DataType::HALF, "X", {1024, 1, 128, 16});
                  auto w = g.tensor({32, 16, 3, 3}, DataType::HALF, "W", {144, 1, 48, 16});
                  auto s = g.tensor({1, 16, 1, 1}, DataType::HALF, "S", {16, 1, 16, 16});
                  auto b = g.tensor({1, 16, 1, 1}, DataType::HALF, "B", {16, 1, 16, 16});
                  auto y = g.conv_fprop(g.relu(g.add(g.mul(x, s), b)), w,
                                        Attributes().set("padding", std::vector<std::int64_t>{1, 1}));
                  out(y, "Y", DataType::HALF)->set_stride({2048, 1, 256, 32});
                  auto [sum, sq] = g.genstats(y);
                  for (auto* t : {&sum, &sq}) (*t)->set_stride({32, 1, 32, 32});
                  return Io{{x, w, s, b}, {y, out(sum, "sum"), out(sq, "sq_sum")}};
                }, 0.5, 1e-2});
  Case fin{"bn_finalize", [](Graph& g) {
             float_graph(g);
             auto sum = per_channel(g, "sum"), sq = per_channel(g, "sq_sum");
             auto s = per_channel(g, "scale"), b = per_channel(g, "bias");
             auto pm = per_channel(g, "prev_mean"), pv = per_channel(g, "prev_var");
             auto eps = g.tensor_scalar(1e-3, DataType::FLOAT), mom = g.tensor_scalar(0.1, DataType::FLOAT);
             auto cnt = g.tensor_scalar_int(64, DataType::INT64);
             auto r = g.bn_finalize(sum, sq, s, b, eps, cnt, {}, pm, pv, mom);
             const char* names[] = {"eq_scale", "eq_bias", "mean", "inv_var", "next_mean", "next_var"};
             std::vector<TensorPtr> outs;
             for (int i = 0; i < 6; ++i) outs.push_back(out_like_channel(r[static_cast<std::size_t>(i)], names[i]));
             return Io{{sum, sq, s, b, pm, pv}, outs};
           }, 1e-4, 1e-3};
  fin.ranges = {{"sum", {-16.0, 16.0}}, {"sq_sum", {80.0, 160.0}}};  // a positive variance for 64 samples
  cs.push_back(fin);
  cs.push_back(declines({"reshape_view", [](Graph& g) {
                  float_graph(g);
                  auto x = g.tensor({4, 6, 8}, DataType::FLOAT, "x");
                  return Io{{x}, {out(g.reshape(x, Attributes().set("dim", D{4, 48})), "y")}};
                }}));
  cs.push_back(declines({"concatenate_axis1", [](Graph& g) {
                  float_graph(g);
                  auto a = g.tensor({2, 3, 16}, DataType::FLOAT, "a"), b = g.tensor({2, 5, 16}, DataType::FLOAT, "b");
                  return Io{{a, b}, {out(g.concatenate({a, b}, Attributes().set("axis", std::int64_t{1})), "y")}};
                }}));
  for (const char* mode : {"MAXPOOL", "AVGPOOL_INCLUDE_PADDING"})
    cs.push_back({std::string("resample_") + mode + "_nhwc", [mode](Graph& g) {
                    float_graph(g);
                    auto x = nhwc(g, "X");
                    auto r = g.resample(x, Attributes().set("resampling_mode", mode).set("window", D{2, 2})
                                               .set("stride", D{2, 2}));
                    r[0]->set_stride({kC * 16, 1, kC * 4, kC});
                    return Io{{x}, {out(r[0], "Y")}};
                  }, 1e-5, 1e-5});
  // Standalone rng: no engine on cuDNN 9.14 (it runs inside SDPA's dropout).
  Case rng{"rng_uniform", [](Graph& g) {
             auto seed = g.tensor({1, 1, 1, 1}, DataType::INT64, "seed");
             auto off = g.tensor({1, 1, 1, 1}, DataType::INT64, "offset");
             auto y = g.rng(seed, off, Attributes().set("distribution", "UNIFORM").set("dim", D{4, 8, 16, 16}));
             return Io{{seed, off}, {out(y, "Y")}};
           }};
  cs.push_back(declines(rng));
  cs.push_back(declines({"block_scale_dequantize_mxfp8", [](Graph& g) {
                  float_graph(g);
                  auto x = g.tensor({1, 2, 64, 128}, DataType::FP8_E4M3, "x");
                  auto s = g.tensor({1, 2, 64, 4}, DataType::FP8_E8M0, "s");
                  auto y = g.block_scale_dequantize(x, s, Attributes().set("block_size", D{32}));
                  return Io{{x, s}, {out(y, "y")}};
                }, 0.0, 0.0}));
  cs.push_back(declines({"block_scale_quantize_mxfp8", [](Graph& g) {
                  float_graph(g);
                  auto x = g.tensor({1, 2, 64, 128}, DataType::FLOAT, "x");
                  auto [y, s] = g.block_scale_quantize(x, Attributes().set("block_size", std::int64_t{32}));
                  return Io{{x}, {out(y, "y", DataType::FP8_E4M3), out(s, "s", DataType::FP8_E8M0)}};
                }}));
  Case paged{"paged_cache_load", [](Graph& g) {
               auto cont = g.tensor({6, 2, 4, 8}, DataType::FLOAT, "cache");
               auto len = g.tensor({2, 1, 1, 1}, DataType::INT32, "len");
               auto pt = g.tensor({2, 1, 3, 1}, DataType::INT32, "pt");
               return Io{{cont, len, pt}, {out(g.paged_cache_load(cont, len, pt), "k")}};
             }, 0.0, 0.0};
  paged.ranges = {{"len", {1.0, 13.0}}, {"pt", {0.0, 6.0}}};
  cs.push_back(declines(paged));  // cuDNN runs it inside SDPA only
  Case moe{"moe_grouped_matmul", [](Graph& g) {
             float_graph(g);
             auto tok = g.tensor({1, 64, 32}, DataType::FLOAT, "token");
             auto w = g.tensor({4, 32, 16}, DataType::FLOAT, "weight");
             auto off = g.tensor({4, 1, 1}, DataType::INT32, "off");
             return Io{{tok, w, off}, {out(g.moe_grouped_matmul(tok, w, off), "out")}};
           }};
  moe.expect = Expect::DECLINES;
  moe.decline_note = "needs cuDNN >= 9.15.0";
  cs.push_back(moe);
  // Lowerings written from cudnn-frontend's backend graphs.
  // test_bn_infer_drelu_dbn's graph: batchnorm_inference beside a batchnorm_backward is one
  // NORM_FORWARD (INFERENCE), then dReLU and NORM_BACKWARD (ran and matched on the H200).
  cs.push_back({"bn_infer_drelu_dbn_half", [](Graph& g) {
                 g.set_io_data_type(DataType::HALF).set_intermediate_data_type(DataType::FLOAT)
                     .set_compute_data_type(DataType::FLOAT);
                 auto x = nhwc(g, "X", DataType::HALF), dy = nhwc(g, "dY", DataType::HALF);
                 auto s = per_channel(g, "scale"), b = per_channel(g, "bias");
                 auto mean = per_channel(g, "mean"), iv = per_channel(g, "inv_var");
                 auto y = g.batchnorm_inference(x, mean, iv, s, b);
                 auto drelu = g.relu_backward(dy, y);
                 drelu->set_data_type(DataType::HALF);
                 auto r = g.batchnorm_backward(drelu, x, s, mean, iv);
                 out(r[0], "dX", DataType::HALF)->set_stride({kC * kH * kW, 1, kC * kW, kC});
                 return Io{{x, dy, s, b, mean, iv}, {r[0], out_like_channel(r[1], "dscale"), out_like_channel(r[2], "dbias")}};
               }, 5e-2, 2e-2});
  // The transpose lowering beside a lone matmul: lowered, and cuDNN's heuristics (9.14 and
  // 9.19 on the H200) offer no engine config for either form (gpu_harness.h transpose_case()).
  // cudnn-frontend's K^T: C = Q K^T with K in BSHD memory, the transpose folded into K's descriptor.
  cs.push_back(transpose_case({"transpose_kt_matmul_half", [](Graph& g) {
                 float_graph(g);
                 const std::int64_t b = 2, h = 3, sq = 64, d = 32;
                 auto q = g.tensor({b, h, sq, d}, DataType::HALF, "Q");
                 auto k = g.tensor({b, h, sq, d}, DataType::HALF, "K", {sq * h * d, d, h * d, 1});
                 auto kt = g.transpose(k, Attributes().set("permutation", D{0, 1, 3, 2}));
                 return Io{{q, k}, {out(g.matmul(q, kt), "C")}};
               }, 1e-3, 1e-3}));
  // A transpose of an intermediate (cudnn-frontend's P^T, a cast to HALF): a RESHAPE view of exp(A B).
  Case view{"transpose_view_matmul_half", [](Graph& g) {
              float_graph(g);
              const std::int64_t b = 1, h = 2, m = 16, n = 24, d = 8;
              auto a = g.tensor({b, h, m, d}, DataType::HALF, "A");
              auto bt = g.tensor({b, h, d, n}, DataType::HALF, "B");
              auto w = g.tensor({b, h, m, d}, DataType::HALF, "W");
              auto x = g.exp(g.matmul(a, bt));
              auto xt = g.transpose(x, Attributes().set("permutation", D{0, 1, 3, 2}));
              xt->set_data_type(DataType::HALF);
              auto y = out(g.matmul(xt, w), "Y");
              auto r = g.reduction(x, Attributes().set("mode", "ADD"));
              out(r, "rowsum")->set_dim({b, h, m, 1});
              return Io{{a, bt, w}, {y, r}};
            }, 2e-2, 2e-2};
  view.ranges = {{"A", {-0.5, 0.5}}, {"B", {-0.5, 0.5}}};
  cs.push_back(transpose_case(view));
  // cudnn-frontend's test_sdpa_with_flexible_graph at small extents, as the Python package writes
  // it: decode (s_q 1), paged K / V, HALF io, the test's softcap and padding-mask score_mod, the
  // sequence lengths [b, 1, 1, 1] as the two matmuls' GEMM overrides (Q K^T M / N, P V M / K).
  // Not yet run on the H200: left to cuDNN (RUNS_OR_DECLINES); where it runs, O must match the
  // reference, whose reading of the overrides (scores past SEQ_LEN_KV hold the padding 0 and enter
  // the softmax unless masked, P V sums the first SEQ_LEN_KV keys) is then checked against cuDNN.
  Case flex{"flexible_sdpa_paged_seq_len_half", [](Graph& g) {
              FlexibleSeqLen f{2, 2, 1, 64, 64, 16};
              f.build(g);
              return Io{{f.q, f.k_cont, f.v_cont, f.table_k, f.table_v, f.seq_q, f.seq_kv}, {f.o}};
            }, 2e-2, 2e-2};
  flex.expect = Expect::RUNS_OR_DECLINES;
  flex.ranges = {{"page_table_k", {0.0, 8.0}}, {"page_table_v", {0.0, 8.0}}, {"seq_len_q", {1.0, 2.0}},
                 {"seq_len_kv", {1.0, 65.0}}};
  cs.push_back(flex);
  return cs;
}

}  // namespace cudnn_gpu
