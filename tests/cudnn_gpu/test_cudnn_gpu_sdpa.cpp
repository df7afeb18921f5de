// tests/cudnn_gpu/test_cudnn_gpu_sdpa.cpp — SDPA forward and backward through the
// cuDNN engine family on a GPU (built with -DOPGRAPH_GPU_TESTS=ON; run by
// bench/run.sh cudnn, never on CI).
//
// Each case (causal, sliding window, bottom-right, GQA, padding masks, THD
// ragged, paged K/V, ALiBi, Max / Sum_exp, Bias + dBias, SINK_TOKEN, the deterministic
// backward; bf16 Q/K/V/O/dBias,
// FLOAT Stats/Max/Sum_exp) is planned for the real device,
// run on the first backend plan that builds ("cudnn_eng<N>", asserted) on
// device buffers whose outputs are poisoned (0xFF bytes = NaN) first, and
// compared with the CPU reference engine run on the same fresh random inputs
// (sdpa_gpu_util.h). Only the elements of valid tokens are compared (a padded or
// ragged output's other elements are not the op's). The backward's O and Stats
// come from a reference forward of the same inputs. Tolerances by output dtype:
// |got - want| <= atol + rtol * |want|: bf16 O 2e-2/2e-2, bf16 gradients
// 4e-2/4e-2 (dBias too), FLOAT Stats / Max / Sum_exp / DSINK_TOKEN 5e-3/5e-3.
// CudnnGpuSdpaBench.Bf16 times b=4 h=16 s=4096 d=128 bf16 forward and backward
// (causal and not; CUDA events, median of 20) and prints "RESULT sdpa ..." and
// "RESULT sdpa_bwd ..." lines. The deterministic backward (cudnn-frontend's
// dP-workspace composite on Hopper) runs and matches like the others.
#include "cudnn_gpu/sdpa_gpu_util.h"

#include <cstdio>

#include "runtime/device.h"

using namespace opgraph;
using namespace sdpa_gpu;

namespace {

// Compares the valid-token elements of one output; returns the number off.
std::size_t compare(const Built& bd, std::size_t i, const std::vector<unsigned char>& got,
                    const std::vector<unsigned char>& want, double atol, double rtol, double& worst) {
  const Tensor& t = *bd.outputs[i];
  const auto& d = t.get_dim();
  const auto st = t.get_stride().size() == d.size() ? t.get_stride() : Tensor::packed_strides(d);
  const auto& lens = bd.lens[i];
  const auto& ro = bd.ragged[i];
  std::size_t bad = 0;
  for (std::int64_t n = 0; n < d[0]; ++n)
    for (std::int64_t h = 0; h < d[1]; ++h)
      for (std::int64_t s = 0; s < std::min<std::int64_t>(lens[n], d[2]); ++s)
        for (std::int64_t x = 0; x < d[3]; ++x) {
          std::int64_t off = (ro.empty() ? n * st[0] : ro[n]) + h * st[1] + s * st[2] + x * st[3];
          double w = value_at(want, t.get_data_type(), off), g = value_at(got, t.get_data_type(), off);
          double err = std::fabs(g - w);
          if (!(err <= atol + rtol * std::fabs(w))) ++bad;
          if (std::isfinite(err)) worst = std::max(worst, err);
        }
  return bad;
}

class SdpaGpu : public ::testing::TestWithParam<Spec> {};

TEST_P(SdpaGpu, MatchesTheReferenceOnACudnnPlan) {
  const Spec& s = GetParam();
  ASSERT_NE(drv(), nullptr) << "no CUDA device";
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good()) << props.status().to_string();
  std::mt19937 rng(std::random_device{}());
  const Data dt = draw(s, rng);
  std::vector<unsigned char> o_bytes, stats_bytes;
  if (s.backward) {  // O and Stats of the same inputs, from the reference forward
    Graph gf;
    Spec fs = s;
    fs.backward = false;
    Built bf = build_forward(gf, fs, dt);
    auto r = run_reference(gf, bf);
    o_bytes = r[0];
    stats_bytes = r[1];
  }
  Graph gd, gh;
  Built bd = s.backward ? build_backward(gd, s, dt, o_bytes, stats_bytes) : build_forward(gd, s, dt);
  Built bh = s.backward ? build_backward(gh, s, dt, o_bytes, stats_bytes) : build_forward(gh, s, dt);
  gd.set_device_properties(props.value());
  Status ps = gd.create_execution_plans({HeurMode::A, HeurMode::FALLBACK});
  ASSERT_TRUE(ps.is_good()) << ps.to_string();
  std::int64_t bi = -1, refused = 0;
  std::string first_refusal;
  for (std::int64_t i = 0; i < gd.get_execution_plan_count() && bi < 0; ++i) {
    if (gd.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) != 0) continue;
    Status bs = gd.build_plan_at_index(i);
    if (bs.is_good()) bi = i;
    else if (refused++ == 0) first_refusal = bs.to_string();
  }
  ASSERT_GE(bi, 0) << "no cudnn plan built (" << refused << " refused; first: " << first_refusal << "); plan 0 is "
                   << gd.get_plan_name_at_index(0).value() << " of " << gd.get_execution_plan_count();
  const auto want = run_reference(gh, bh);
  VariantPack pd;
  std::vector<std::unique_ptr<DevMem>> mem;
  for (const auto& [t, bytes] : bd.inputs) {
    mem.push_back(std::make_unique<DevMem>(bytes.size()));
    drv()->memcpy_htod(mem.back()->ptr(), bytes.data(), bytes.size());
    pd.set(t->get_uid(), mem.back()->data());
  }
  std::vector<CUdeviceptr> outs;
  for (const auto& t : bd.outputs) {
    std::size_t n = bytes_of(*t);
    mem.push_back(std::make_unique<DevMem>(n + 4));
    drv()->memset_d32(mem.back()->ptr(), 0xFFFFFFFFu, (n + 3) / 4);  // poison
    outs.push_back(mem.back()->ptr());
    pd.set(t->get_uid(), mem.back()->data());
  }
  auto ws = gd.get_workspace_size_plan_at_index(bi);
  ASSERT_TRUE(ws.is_good());
  DevMem wsm(static_cast<std::size_t>(ws.value()));
  Status es = gd.execute_plan_at_index(pd, Workspace{wsm.data(), ws.value()}, bi, nullptr);
  ASSERT_TRUE(es.is_good()) << es.to_string();
  ASSERT_EQ(drv()->ctx_synchronize(), CUDA_SUCCESS);
  std::string errs;
  for (std::size_t i = 0; i < bd.outputs.size(); ++i) {
    std::vector<unsigned char> got(bytes_of(*bd.outputs[i]));
    ASSERT_EQ(drv()->memcpy_dtoh(got.data(), outs[i], got.size()), CUDA_SUCCESS);
    const bool bf = bd.outputs[i]->get_data_type() == DataType::BFLOAT16;
    const double tol = !bf ? 5e-3 : s.backward ? 4e-2 : 2e-2;
    double worst = 0;
    std::size_t bad = compare(bd, i, got, want[i], tol, tol, worst);
    EXPECT_EQ(bad, 0u) << "output '" << bd.outputs[i]->get_name() << "': " << bad << " elements off (max err "
                       << worst << ")";
    errs += " " + bd.outputs[i]->get_name() + "=" + std::to_string(worst);
  }
  std::printf("%-26s ran on %s (plan %lld of %lld), workspace %lld B, max err%s\n", s.name.c_str(),
              gd.get_plan_name_at_index(bi).value().c_str(), static_cast<long long>(bi),
              static_cast<long long>(gd.get_execution_plan_count()), static_cast<long long>(ws.value()), errs.c_str());
}

Spec spec(std::string name, bool bwd) {
  Spec s;
  s.name = std::move(name);
  s.backward = bwd;
  return s;
}

std::vector<Spec> specs() {
  std::vector<Spec> v;
  for (bool bwd : {false, true}) {
    const std::string p = bwd ? "bwd_" : "fwd_";
    v.push_back(spec(p + "plain", bwd));
    if (!bwd) {
      Spec c = spec(p + "plain_composite", bwd);
      c.impl = "COMPOSITE";
      v.push_back(c);
    }
    Spec c = spec(p + "causal", bwd);
    c.causal = true;
    v.push_back(c);
    Spec w = spec(p + "sliding_window", bwd);
    w.causal = true;
    w.window = 32;
    v.push_back(w);
    Spec br = spec(p + "bottom_right_causal", bwd);
    br.causal = br.bottom_right = true;
    br.s_q = 64;
    v.push_back(br);
    Spec g = spec(p + "gqa_causal", bwd);
    g.causal = true;
    g.h_q = 8;
    g.h_k = 2;
    v.push_back(g);
    if (!bwd) {  // native with seq lens from 9.15, composite before
      Spec pn = spec(p + "padding", bwd);
      pn.padding = true;
      v.push_back(pn);
    }
    Spec pad = spec(p + "padding_causal", bwd);
    pad.causal = pad.padding = true;
    v.push_back(pad);
    Spec thd = spec(p + "thd_ragged_causal", bwd);
    thd.causal = thd.padding = thd.ragged = true;
    v.push_back(thd);
    if (!bwd) {
      Spec pg = spec(p + "paged_causal", bwd);
      pg.causal = pg.padding = pg.paged = true;
      v.push_back(pg);
    }
    Spec al = spec(p + "alibi", bwd);  // slope_h * (col - row) added to the scores
    al.alibi = true;
    v.push_back(al);
    Spec alc = spec(p + "alibi_causal", bwd);
    alc.alibi = alc.causal = true;
    v.push_back(alc);
    // Declined by the engine (rule failed_on_h200, tested on CI in test_cudnn_lowering_sdpa_extras):
    // the backward given SINK_TOKEN, DSINK_TOKEN, and the forward's Max / Sum_exp outputs.
    if (!bwd) {
      Spec sk = spec(p + "sink_causal", bwd);  // the sink joins the softmax's max and sum (Stats)
      sk.sink = sk.causal = true;
      v.push_back(sk);
    }
    if (bwd) {  // use_deterministic_algorithm: on Hopper cudnn-frontend's dP-workspace form (dQ by the dS K matmul)
      Spec det = spec(p + "deterministic_causal", bwd);
      det.deterministic = det.causal = true;
      v.push_back(det);
      Spec detb = spec(p + "deterministic_bias_dbias", bwd);
      detb.bias = {1, detb.h_q, detb.s_q, detb.s_kv};
      detb.deterministic = detb.dbias = true;
      v.push_back(detb);
    }
    if (bwd) {  // dBias: dS summed over the batch axis Bias broadcasts
      Spec db = spec(p + "bias_dbias", bwd);
      db.bias = {1, db.h_q, db.s_q, db.s_kv};
      db.dbias = true;
      v.push_back(db);
      Spec dbc = spec(p + "bias_dbias_causal", bwd);
      dbc.bias = {1, dbc.h_q, dbc.s_q, dbc.s_kv};
      dbc.dbias = dbc.causal = true;
      v.push_back(dbc);
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, SdpaGpu, ::testing::ValuesIn(specs()),
                         [](const ::testing::TestParamInfo<Spec>& i) { return i.param.name; });

// The first cudnn plan of `g` that builds (-1: none).
std::int64_t first_cudnn_plan(Graph& g) {
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i)
    if (g.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) == 0 && g.build_plan_at_index(i).is_good()) return i;
  return -1;
}

// Median ms of 20 executes of plan `bi` after 5 warm-ups (CUDA events on the null stream).
double median_ms(Graph& g, const VariantPack& p, std::int64_t bi, const Workspace& ws) {
  const auto* d = drv();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(g.execute_plan_at_index(p, ws, bi, nullptr).is_good());
  EXPECT_EQ(d->ctx_synchronize(), CUDA_SUCCESS);
  std::vector<double> ms;
  for (int it = 0; it < 20; ++it) {
    CUevent e0, e1;
    d->event_create(&e0, 0);
    d->event_create(&e1, 0);
    d->event_record(e0, nullptr);
    Status st = g.execute_plan_at_index(p, ws, bi, nullptr);
    EXPECT_TRUE(st.is_good()) << st.to_string();
    d->event_record(e1, nullptr);
    d->event_synchronize(e1);
    float t = 0;
    d->event_elapsed_time(&t, e0, e1);
    ms.push_back(t);
    d->event_destroy(e0);
    d->event_destroy(e1);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// bf16 b=4 h=16 s=4096 d=128, causal and not: the forward (O) and the backward
// (dQ, dK, dV from Q, K, V, O, dO, Stats). Operand values are fixed bf16 / fp32
// patterns (they do not change the work done). FLOPs: forward 4 b h s^2 d,
// backward 2.5x that (five matmuls against two), halved when causal.
TEST(CudnnGpuSdpaBench, Bf16) {
  const auto* d = drv();
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->event_create && d->event_record && d->event_synchronize && d->event_elapsed_time);
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good());
  auto api = runtime::cudnn();
  ASSERT_TRUE(api.is_good()) << api.status().to_string();
  const std::int64_t b = 4, h = 16, s = 4096, hd = 128;
  const DataType bf = DataType::BFLOAT16;
  const std::size_t bytes = static_cast<std::size_t>(b * h * s * hd * 2), stat_bytes = static_cast<std::size_t>(b * h * s * 4);
  DevMem mq(bytes), mk(bytes), mv(bytes), mo(bytes), mdo(bytes), mst(stat_bytes), mdq(bytes), mdk(bytes), mdv(bytes);
  d->memset_d32(mq.ptr(), 0x3C003E00u, bytes / 4);  // bf16 pairs
  d->memset_d32(mk.ptr(), 0xBC003D00u, bytes / 4);
  d->memset_d32(mv.ptr(), 0x3F803F00u, bytes / 4);
  d->memset_d32(mo.ptr(), 0x3E803E00u, bytes / 4);
  d->memset_d32(mdo.ptr(), 0x3C803D00u, bytes / 4);
  d->memset_d32(mst.ptr(), 0x41000000u, stat_bytes / 4);  // Stats = 8.0f
  for (bool backward : {false, true})
    for (bool causal : {false, true}) {
      Graph g;
      auto q = g.tensor({b, h, s, hd}, bf, "Q");
      auto k = g.tensor({b, h, s, hd}, bf, "K");
      auto v = g.tensor({b, h, s, hd}, bf, "V");
      Attributes a;
      a.set("attn_scale", 1.0 / std::sqrt(static_cast<double>(hd))).set("use_causal_mask", causal);
      // (tensor, buffer): bound after planning, which assigns the uids.
      std::vector<std::pair<TensorPtr, void*>> binds = {{q, mq.data()}, {k, mk.data()}, {v, mv.data()}};
      if (!backward) {
        auto o = g.sdpa(q, k, v, a).O;
        o->set_output(true).set_name("O").set_data_type(bf);
        binds.emplace_back(o, mo.data());
      } else {
        auto o = g.tensor({b, h, s, hd}, bf, "O");
        auto dO = g.tensor({b, h, s, hd}, bf, "dO");
        auto st = g.tensor({b, h, s, 1}, DataType::FLOAT, "Stats");
        auto r = g.sdpa_backward(q, k, v, o, dO, st, a);
        DevMem* outs[] = {&mdq, &mdk, &mdv};
        TensorPtr grads[] = {r.dQ, r.dK, r.dV};
        for (int i = 0; i < 3; ++i) {
          grads[i]->set_output(true).set_data_type(bf);
          binds.emplace_back(grads[i], outs[i]->data());
        }
        binds.insert(binds.end(), {{o, mo.data()}, {dO, mdo.data()}, {st, mst.data()}});
      }
      g.set_device_properties(props.value());
      ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
      VariantPack p;
      for (const auto& [t, ptr] : binds) p.set(t, ptr);
      const std::int64_t bi = first_cudnn_plan(g);
      ASSERT_GE(bi, 0) << "no cudnn plan built (" << (backward ? "backward" : "forward") << ")";
      std::int64_t ws = g.get_workspace_size_plan_at_index(bi).value();
      DevMem mw(static_cast<std::size_t>(ws));
      const double med = median_ms(g, p, bi, {mw.data(), ws});
      ASSERT_FALSE(::testing::Test::HasFailure()) << "an execute failed: no timing is reported";
      const double flops = 4.0 * b * h * static_cast<double>(s) * s * hd / (causal ? 2.0 : 1.0) * (backward ? 2.5 : 1.0);
      std::printf("RESULT %s causal=%d cudnn=%zu plan=%s median_ms=%.4f tflops=%.1f\n", backward ? "sdpa_bwd" : "sdpa",
                  causal ? 1 : 0, api.value()->version, g.get_plan_name_at_index(bi).value().c_str(), med,
                  flops / (med * 1e-3) / 1e12);
    }
}

}  // namespace
