// Execute-time shape overrides on cuDNN plans (part of test_cudnn_gpu; run on
// the H200 only; docs/dynamic_shapes.md, "The cudnn engine"). A graph is planned
// for the device at its declared shape and its first cudnn plan that builds is
// executed, through overrides, at the declared extents and at two others: each
// call's outputs are poisoned first and compared with the reference engine
// (float64) run on a graph of that call's shape, on fresh random inputs.
//
// What each shape must do, printed per shape:
//  * the declared extents (overrides equal to the declaration): the built plan
//    runs, no shape plan is looked up (dynamic_shape_counts unchanged);
//  * another shape, first call: Graph::get_workspace_size(pack) finalises an
//    execution plan for it (counts.finalized + 1) and answers its workspace;
//    execute runs it (a workspace one byte short is refused first, nothing
//    written); a second call at the shape finalises nothing (finalized + 0,
//    reused > 0) and matches again;
//  * OR cuDNN declines the dynamic shape for this graph (an older cuDNN, its
//    status for the dynamic-shape operation graph or the built engine config on
//    it): the test prints cuDNN's answer and requires the named refusal
//    (GRAPH_NOT_SUPPORTED, "execute-time shape override of operand ... declined:
//    ...; nothing was launched") from get_workspace_size AND execute, the
//    outputs still poisoned (untouched), and a second call refused alike.
// The suite passes either way and says which ("served" / "DECLINED by cuDNN").
// SDPA graphs (engines/cudnn/dynamic_shapes.h override_policy): on the H200 with
// cuDNN 9.19 (2026-12-02) their per-shape plans gave wrong O and Stats where they
// shared the plan's kernel cache (and could reuse a kernel it compiled for another
// sequence length), and right ones with a kernel cache of their own per shape. The
// engine now gives each shape of an SDPA graph its own kernel cache, whatever
// OPGRAPH_CUDNN_INCLUDE_UNVERIFIED says, and every override of the SDPA problems
// must be served and match on cuDNN >= 9.19; an older cuDNN may still decline it
// itself (as 9.14 does: finalize NOT_SUPPORTED_GRAPH_PATTERN), named as above.
//
// Graphs: matmul fp16 [1, M, K] x [1, K, N] -> [1, M, N] (float compute), and
// SDPA forward (bf16 Q/K/V [b, h, s, d], causal, O and Stats) with s_q = s_kv
// and b overridden. Capture (matmul): under CUDA-graph stream capture a shape
// never finalised is refused with the message that says to execute it once
// first (the capture ends cleanly); after one eager call at it, the same
// capture succeeds and its replay matches the reference.
// Planned dynamic (Graph::set_dynamic_shapes): the same two problems on a graph
// planned dynamic from the start, so cuDNN's heuristics ranked the dynamic-shape
// operation graph and the built plan carries its kernel cache; each shape must
// do as above (served, or cuDNN's decline named), and where cuDNN offers or
// builds no config for the dynamic graph at all the test prints why (the
// planning notes and the cudnn plans' build refusals) and passes.
// Tolerances: fp16 C |err| <= 3e-2 + 1e-2 |want| (K <= 256 products of [-1, 1]),
// bf16 O 2e-2, FLOAT Stats 5e-3 (as test_cudnn_gpu_sdpa.cpp).
#include "cudnn_gpu/sdpa_gpu_util.h"

#include <cstdio>
#include <functional>

#include "engines/cudnn/cudnn_engine.h"
#include "gpu/capture.h"
#include "gpu/stream_handle.h"
#include "runtime/device.h"

using namespace opgraph;
using namespace sdpa_gpu;

namespace {

std::uint16_t to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const int exp = static_cast<int>((x >> 23) & 0xFFu);
  std::uint32_t mant = x & 0x7FFFFFu;
  if (exp == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00u | (mant ? 0x200u : 0u));
  const int e = exp - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (e <= 0) {  // subnormal (or zero)
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
  return static_cast<std::uint16_t>(sign | h);
}

float from_half(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1F;
  const std::uint32_t mant = h & 0x3FFu;
  float f;
  if (exp == 0) f = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) f = mant ? std::nanf("") : INFINITY;
  else f = std::ldexp(static_cast<float>(mant | 0x400u), exp - 25);
  return (h & 0x8000u) ? -f : f;
}

// Element i of a HALF, BFLOAT16 or FLOAT buffer.
double element(const std::vector<unsigned char>& b, DataType t, std::int64_t i) {
  if (t == DataType::HALF) {
    std::uint16_t h;
    std::memcpy(&h, b.data() + i * 2, 2);
    return from_half(h);
  }
  return value_at(b, t, i);
}

// One graph at one shape: what it binds (with its bytes) and what it produces,
// in the same order for every shape of a problem.
struct Instance {
  std::vector<std::pair<TensorPtr, std::vector<unsigned char>>> inputs;
  std::vector<TensorPtr> outputs;
};

// Builds the problem's graph at shape `i` (0: the declared one) on fresh random inputs.
using Build = std::function<Instance(Graph&, int, std::mt19937&)>;

struct Problem {
  std::string name;
  int shapes = 3;
  Build build;
  std::function<std::string(int)> describe;  // "M=64 K=128 N=96"
  bool dynamic = false;                       // planned dynamic (Graph::set_dynamic_shapes)
  bool sdpa = false;                          // holds attention: a kernel cache per shape (override_policy)
};

// The cuDNN on which an SDPA graph's overrides, each shape with a kernel cache of
// its own, were measured served and right (H200, 2026-12-02): from it on they
// must be served; below it cuDNN's own decline is accepted.
constexpr std::size_t kSdpaMeasuredCudnn = 91900;

double tolerance(DataType t, bool relative) {
  if (t == DataType::HALF) return relative ? 1e-2 : 3e-2;
  if (t == DataType::BFLOAT16) return 2e-2;
  return 5e-3;
}

// Counts `want` elements of `got` (the device's bytes) outside the tolerance (NaN counts).
std::size_t mismatches(const Tensor& t, const std::vector<unsigned char>& got, const std::vector<unsigned char>& want,
                       double* worst) {
  const DataType dt = t.get_data_type();
  const std::size_t n = got.size() / (bits_of(dt) / 8);
  std::size_t bad = 0;
  *worst = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double g = element(got, dt, static_cast<std::int64_t>(k)), x = element(want, dt, static_cast<std::int64_t>(k));
    const double err = std::fabs(g - x);
    if (!(err <= tolerance(dt, false) + tolerance(dt, true) * std::fabs(x))) ++bad;
    if (std::isfinite(err)) *worst = std::max(*worst, err);
  }
  return bad;
}

// Device buffers of one call: the inputs uploaded, the outputs poisoned; `pack`
// binds them on the device graph's tensors and overrides every one of them to
// the call's graph's extents and strides (`shaped`, validated).
struct Call {
  std::vector<std::unique_ptr<DevMem>> in, out;
  std::vector<std::size_t> out_bytes;
  VariantPack pack;
  Call(const Instance& device, const Instance& shaped) {
    for (std::size_t i = 0; i < shaped.inputs.size(); ++i) {
      const auto& bytes = shaped.inputs[i].second;
      in.push_back(std::make_unique<DevMem>(bytes.size()));
      EXPECT_EQ(drv()->memcpy_htod(in.back()->ptr(), bytes.data(), bytes.size()), CUDA_SUCCESS);
      const TensorPtr& t = device.inputs[i].first;
      pack.set(t->get_uid(), in.back()->data());
      pack.override_shape(t->get_uid(), shaped.inputs[i].first->get_dim(), shaped.inputs[i].first->get_stride());
    }
    for (std::size_t i = 0; i < shaped.outputs.size(); ++i) {
      out_bytes.push_back(bytes_of(*shaped.outputs[i]));
      out.push_back(std::make_unique<DevMem>(out_bytes.back() + 4));
      const TensorPtr& t = device.outputs[i];
      pack.set(t->get_uid(), out.back()->data());
      pack.override_shape(t->get_uid(), shaped.outputs[i]->get_dim(), shaped.outputs[i]->get_stride());
    }
    poison();
  }
  void poison() {
    for (std::size_t i = 0; i < out.size(); ++i)
      EXPECT_EQ(drv()->memset_d32(out[i]->ptr(), 0xFFFFFFFFu, (out_bytes[i] + 3) / 4), CUDA_SUCCESS);
    EXPECT_EQ(drv()->ctx_synchronize(), CUDA_SUCCESS);
  }
  std::vector<unsigned char> read(std::size_t i) const {
    std::vector<unsigned char> got(out_bytes[i]);
    EXPECT_EQ(drv()->memcpy_dtoh(got.data(), out[i]->ptr(), got.size()), CUDA_SUCCESS);
    return got;
  }
  // Every output still holds the poison (nothing was written).
  bool untouched() const {
    for (std::size_t i = 0; i < out.size(); ++i)
      for (unsigned char c : read(i))
        if (c != 0xFF) return false;
    return true;
  }
};

// Every output of `call` against the reference's bytes; returns the number off.
std::size_t check_outputs(const Call& call, const Instance& shaped, const std::vector<std::vector<unsigned char>>& want,
                          const std::string& what) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < shaped.outputs.size(); ++i) {
    double worst = 0;
    const std::size_t bad = mismatches(*shaped.outputs[i], call.read(i), want[i], &worst);
    EXPECT_EQ(bad, 0u) << what << ": output '" << shaped.outputs[i]->get_name() << "' " << bad << " off (max err "
                       << worst << ")";
    total += bad;
  }
  return total;
}

// The reference run of `inst` on its graph `gh` (planned and built here).
std::vector<std::vector<unsigned char>> reference_of(Graph& gh, const Instance& inst) {
  Built b;
  b.inputs = inst.inputs;
  b.outputs = inst.outputs;
  return run_reference(gh, b);
}

using engines::DynamicShapeCounts;
using engines::dynamic_shape_counts;

DynamicShapeCounts delta(const DynamicShapeCounts& before) {
  const DynamicShapeCounts now = dynamic_shape_counts();
  return {now.finalized - before.finalized, now.reused - before.reused, now.declined - before.declined};
}

// A refusal of a call's override must be the named decline.
void expect_named_decline(const Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << what << ": " << s.to_string();
  EXPECT_NE(s.message().find("engine cudnn: execute-time shape override of operand '"), std::string::npos)
      << what << ": " << s.message();
  EXPECT_NE(s.message().find(" declined: "), std::string::npos) << what << ": " << s.message();
  EXPECT_NE(s.message().find("nothing was launched"), std::string::npos) << what << ": " << s.message();
}

// The device graph of `p` at its declared shape, planned for device 0 (planned
// dynamic when `dynamic`); the index of its first cudnn plan that builds (-1:
// none, and `why` (when given) says what cuDNN answered: the planning notes
// that name cudnn, and each cudnn plan's build refusal).
std::int64_t first_cudnn_plan(Graph& gd, const DeviceProperties& props, bool dynamic = false,
                              std::string* why = nullptr) {
  gd.set_device_properties(props);
  gd.set_dynamic_shapes(dynamic);
  EXPECT_TRUE(gd.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_good());
  std::string reasons;
  for (std::int64_t i = 0; i < gd.get_execution_plan_count(); ++i) {
    const std::string name = gd.get_plan_name_at_index(i).value();
    if (name.rfind("cudnn_eng", 0) != 0) continue;
    const Status b = gd.build_plan_at_index(i);
    if (b.is_good()) return i;
    reasons += (reasons.empty() ? "" : "; ") + name + ": " + b.message();
  }
  if (why) {
    for (const std::string& n : gd.planning_notes())
      if (n.find("cudnn") != std::string::npos) reasons += (reasons.empty() ? "" : "; ") + n;
    *why = reasons.empty() ? std::string("no cudnn plan in the list and no planning note names cudnn") : reasons;
  }
  return -1;
}

void run_problem(const Problem& p) {
  ASSERT_NE(drv(), nullptr) << "no CUDA device";
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good()) << props.status().to_string();
  auto api = runtime::cudnn();
  ASSERT_TRUE(api.is_good()) << api.status().to_string();
  std::mt19937 rng(std::random_device{}());
  Graph gd;
  const Instance device = p.build(gd, 0, rng);
  std::string why;
  const std::int64_t bi = first_cudnn_plan(gd, props.value(), p.dynamic, &why);
  const std::size_t v = api.value()->version;
  if (bi < 0 && p.dynamic) {  // cuDNN offered or built no config for the dynamic-shape graph: named, and passes
    std::printf("%s (planned dynamic), libcudnn %zu.%zu.%zu: no cudnn plan: DECLINED by cuDNN: %s\n", p.name.c_str(),
                v / 10000, v / 100 % 100, v % 100, why.c_str());
    EXPECT_TRUE(gd.dynamic_shapes());
    return;
  }
  ASSERT_GE(bi, 0) << p.name << ": no cudnn plan built at the declared shape: " << why;
  const std::string plan = gd.get_plan_name_at_index(bi).value();
  std::printf("%s: plan %s (planned %s), libcudnn %zu.%zu.%zu (%s)\n", p.name.c_str(), plan.c_str(),
              p.dynamic ? "dynamic" : "static", v / 10000, v / 100 % 100, v % 100, api.value()->path.c_str());
  // An SDPA graph's overrides are served with a kernel cache per shape, and must be from cuDNN 9.19 on.
  const bool must_serve = p.sdpa && v >= kSdpaMeasuredCudnn;
  if (p.sdpa)
    std::printf("  overrides served with a kernel cache per shape%s (OPGRAPH_CUDNN_INCLUDE_UNVERIFIED %s, "
                "which changes nothing)\n",
                must_serve ? ", required on this cuDNN" : "; cuDNN below 9.19 may decline them",
                cudnn_gpu::unverified_included() ? "=1" : "not 1");
  CUstream stream = nullptr;
  ASSERT_EQ(drv()->stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  gpu_testing::StreamHandle handle(stream, &props.value());
  for (int shape = 0; shape < p.shapes; ++shape) {
    const std::string what = p.name + " " + p.describe(shape);
    Graph gh;
    const Instance shaped = p.build(gh, shape, rng);
    const auto want = reference_of(gh, shaped);  // validates gh: its tensors' extents and strides are the call's
    Call call(device, shaped);
    const DynamicShapeCounts before = dynamic_shape_counts();
    auto ws = gd.get_workspace_size_plan_at_index(bi, call.pack);
    if (ws.is_bad()) {
      ASSERT_NE(shape, 0) << what << ": the declared extents must run the built plan: " << ws.status().to_string();
      const std::string m = ws.status().message();  // a copy: status() is a temporary
      std::printf("  %-40s DECLINED by cuDNN: %s\n", what.c_str(), m.c_str());
      EXPECT_FALSE(must_serve) << what << ": on cuDNN >= 9.19 an SDPA override must be served (a kernel cache "
                               << "per shape, verified on the H200): " << m;
      expect_named_decline(ws.status(), what + " (get_workspace_size)");
      EXPECT_EQ(delta(before).declined, 1) << what;
      DevMem wsm(1 << 20);
      const Status es = gd.execute_plan_at_index(call.pack, Workspace{wsm.data(), 1 << 20}, bi, &handle);
      EXPECT_EQ(drv()->stream_synchronize(stream), CUDA_SUCCESS);
      expect_named_decline(es, what + " (execute)");
      EXPECT_EQ(es.message(), ws.status().message()) << "the refusal is remembered for the shape";
      EXPECT_TRUE(call.untouched()) << what << ": a declined call wrote its outputs";
      EXPECT_EQ(delta(before).finalized, 0) << what;
      continue;
    }
    const DynamicShapeCounts first = delta(before);
    if (shape == 0) {
      EXPECT_EQ(first.finalized + first.reused + first.declined, 0) << what << ": the declared extents look nothing up";
      EXPECT_EQ(ws.value(), gd.get_workspace_size_plan_at_index(bi).value()) << what;
    } else {
      EXPECT_EQ(first.finalized, 1) << what << ": get_workspace_size finalises the shape's plan";
    }
    DevMem wsm(static_cast<std::size_t>(std::max<std::int64_t>(ws.value(), 1)));
    if (ws.value() > 0) {  // one byte short: refused before anything runs
      const Status shortw = gd.execute_plan_at_index(call.pack, Workspace{wsm.data(), ws.value() - 1}, bi, &handle);
      EXPECT_EQ(shortw.code(), ErrorCode::INVALID_VALUE) << what << ": " << shortw.to_string();
      EXPECT_NE(shortw.message().find("needs " + std::to_string(ws.value())), std::string::npos) << shortw.message();
      EXPECT_TRUE(call.untouched()) << what << ": a refused call wrote its outputs";
    }
    const Workspace w{wsm.data(), ws.value()};
    Status es = gd.execute_plan_at_index(call.pack, w, bi, &handle);
    ASSERT_TRUE(es.is_good()) << what << ": " << es.to_string();
    ASSERT_EQ(drv()->stream_synchronize(stream), CUDA_SUCCESS);
    const std::size_t bad1 = check_outputs(call, shaped, want, what + " (first call)");
    // The second call at the shape: nothing finalised.
    call.poison();
    const DynamicShapeCounts mid = dynamic_shape_counts();
    es = gd.execute_plan_at_index(call.pack, w, bi, &handle);
    ASSERT_TRUE(es.is_good()) << what << ": " << es.to_string();
    ASSERT_EQ(drv()->stream_synchronize(stream), CUDA_SUCCESS);
    const DynamicShapeCounts second = delta(mid);
    EXPECT_EQ(second.finalized, 0) << what << ": the second call at a shape finalises nothing";
    if (shape != 0) {
      EXPECT_GT(second.reused, 0) << what << ": the second call reuses the shape's plan";
    }
    const std::size_t bad2 = check_outputs(call, shaped, want, what + " (second call)");
    std::printf("  %-40s %s: workspace %lld B, finalized %lld then %lld, reused %lld, %s\n", what.c_str(),
                shape == 0 ? "declared (built plan)" : "served", static_cast<long long>(ws.value()),
                static_cast<long long>(first.finalized), static_cast<long long>(second.finalized),
                static_cast<long long>(second.reused), bad1 + bad2 == 0 ? "matches" : "MISMATCH");
  }
  EXPECT_EQ(drv()->stream_destroy(stream), CUDA_SUCCESS);
}

// fp16 [1, M, K] x [1, K, N] -> C fp16 (float compute).
struct MmShape {
  std::int64_t M, K, N;
};
const MmShape kMm[] = {{64, 128, 96}, {200, 64, 136}, {24, 256, 32}, {136, 128, 48}};

Instance build_matmul(Graph& g, int shape, std::mt19937& rng) {
  const MmShape s = kMm[shape];
  g.set_name("mm_dynamic").set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({1, s.M, s.K}, DataType::HALF, "A");
  auto b = g.tensor({1, s.K, s.N}, DataType::HALF, "B");
  auto c = g.matmul(a, b);
  c->set_output(true).set_name("C").set_data_type(DataType::HALF);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto fill = [&](std::int64_t n) {
    std::vector<std::uint16_t> v(static_cast<std::size_t>(n));
    for (auto& e : v) e = to_half(u(rng));
    return raw(v);
  };
  Instance inst;
  inst.inputs = {{a, fill(s.M * s.K)}, {b, fill(s.K * s.N)}};
  inst.outputs = {c};
  return inst;
}

std::string describe_matmul(int shape) {
  const MmShape s = kMm[shape];
  return "M=" + std::to_string(s.M) + " K=" + std::to_string(s.K) + " N=" + std::to_string(s.N);
}

// SDPA forward, causal, bf16: the batch and the sequence lengths change.
Spec sdpa_spec(int shape) {
  Spec s;
  s.name = "sdpa_dynamic";
  s.causal = true;
  s.h_q = s.h_k = 4;
  s.d = 64;
  // An extent above 1 stays above 1 (the layout-class rule): the batch goes 2 -> 3 -> 4.
  const std::int64_t b[] = {2, 3, 4}, seq[] = {128, 256, 64};
  s.b = b[shape];
  s.s_q = s.s_kv = seq[shape];
  return s;
}

Instance build_sdpa(Graph& g, int shape, std::mt19937& rng) {
  const Spec s = sdpa_spec(shape);
  const Data dt = draw(s, rng);
  Built b = build_forward(g, s, dt);
  Instance inst;
  inst.inputs = b.inputs;
  inst.outputs = b.outputs;
  return inst;
}

std::string describe_sdpa(int shape) {
  const Spec s = sdpa_spec(shape);
  return "b=" + std::to_string(s.b) + " s_q=s_kv=" + std::to_string(s.s_q);
}

TEST(CudnnGpuDynamic, MatmulRunsOverriddenShapes) {
  run_problem({"matmul_fp16", 3, build_matmul, describe_matmul});
}

TEST(CudnnGpuDynamic, SdpaForwardRunsOverriddenShapes) {
  run_problem({"sdpa_fwd_causal_bf16", 3, build_sdpa, describe_sdpa, false, true});
}

// The same problems on graphs planned dynamic from the start: the heuristics'
// configs are the dynamic-shape graph's, the plan is built with its kernel cache.
TEST(CudnnGpuDynamic, MatmulPlannedDynamicRunsOverriddenShapes) {
  run_problem({"matmul_fp16_planned_dynamic", 3, build_matmul, describe_matmul, true});
}

TEST(CudnnGpuDynamic, SdpaForwardPlannedDynamicRunsOverriddenShapes) {
  run_problem({"sdpa_fwd_causal_bf16_planned_dynamic", 3, build_sdpa, describe_sdpa, true, true});
}

// Under capture a shape never finalised is refused (finalising allocates); once
// finalised by an eager call, the same call captures and replays correctly.
TEST(CudnnGpuDynamic, MatmulCaptureNeedsTheShapeFinalisedFirst) {
  ASSERT_NE(drv(), nullptr) << "no CUDA device";
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good()) << props.status().to_string();
  std::mt19937 rng(std::random_device{}());
  Graph gd;
  const Instance device = build_matmul(gd, 0, rng);
  const std::int64_t bi = first_cudnn_plan(gd, props.value());
  ASSERT_GE(bi, 0) << "no cudnn plan built";
  CUstream stream = nullptr;
  ASSERT_EQ(drv()->stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  gpu_testing::StreamHandle handle(stream, &props.value());
  // One eager call at the declared shape (the thread's cuDNN handle is made then).
  {
    Graph g0;
    const Instance at0 = build_matmul(g0, 0, rng);
    reference_of(g0, at0);
    Call c0(device, at0);
    DevMem wsm(static_cast<std::size_t>(std::max<std::int64_t>(gd.get_workspace_size_plan_at_index(bi).value(), 1)));
    ASSERT_TRUE(gd.execute_plan_at_index(c0.pack, Workspace{wsm.data(), gd.get_workspace_size_plan_at_index(bi).value()},
                                         bi, &handle)
                    .is_good());
    ASSERT_EQ(drv()->stream_synchronize(stream), CUDA_SUCCESS);
  }
  Graph gh;
  const Instance shaped = build_matmul(gh, 3, rng);  // a shape no other test of this process used
  const auto want = reference_of(gh, shaped);
  Call call(device, shaped);
  const std::size_t ws_bytes = 64u << 20;  // the refusal comes before the workspace is read
  DevMem wsm(ws_bytes);
  const DynamicShapeCounts before = dynamic_shape_counts();
  {
    gpu_testing::CapturedGraph cg;
    const Status captured = cg.capture(*drv(), stream, [&] {
      return gd.execute_plan_at_index(call.pack, Workspace{wsm.data(), static_cast<std::int64_t>(ws_bytes)}, bi, &handle);
    });
    std::printf("capture at a shape never finalised: %s\n", captured.to_string().c_str());
    ASSERT_TRUE(captured.is_bad());
    EXPECT_EQ(captured.code(), ErrorCode::INVALID_VALUE) << captured.to_string();
    EXPECT_NE(captured.message().find("cannot run under CUDA-graph stream capture"), std::string::npos)
        << captured.message();
    EXPECT_NE(captured.message().find("execute the plan once at these extents before capturing"), std::string::npos)
        << captured.message();
    EXPECT_EQ(delta(before).finalized, 0);
  }
  // Eagerly once: finalised (or declined by cuDNN: then capture is refused alike, named).
  auto ws = gd.get_workspace_size_plan_at_index(bi, call.pack);
  if (ws.is_bad()) {
    std::printf("matmul %s DECLINED by cuDNN: %s\n", describe_matmul(3).c_str(), ws.status().message().c_str());
    expect_named_decline(ws.status(), "capture shape");
    EXPECT_EQ(drv()->stream_destroy(stream), CUDA_SUCCESS);
    return;
  }
  ASSERT_LE(ws.value(), static_cast<std::int64_t>(ws_bytes));
  EXPECT_EQ(delta(before).finalized, 1);
  const Workspace w{wsm.data(), static_cast<std::int64_t>(ws_bytes)};
  ASSERT_TRUE(gd.execute_plan_at_index(call.pack, w, bi, &handle).is_good());
  ASSERT_EQ(drv()->stream_synchronize(stream), CUDA_SUCCESS);
  call.poison();
  gpu_testing::CapturedGraph cg;
  const Status captured = cg.capture(*drv(), stream, [&] { return gd.execute_plan_at_index(call.pack, w, bi, &handle); });
  ASSERT_TRUE(captured.is_good()) << captured.to_string();
  EXPECT_TRUE(call.untouched()) << "capture enqueues; nothing runs until the replay";
  ASSERT_TRUE(cg.launch(stream).is_good());
  ASSERT_EQ(drv()->stream_synchronize(stream), CUDA_SUCCESS);
  const std::size_t bad = check_outputs(call, shaped, want, "captured replay at " + describe_matmul(3));
  std::printf("capture at %s after one eager call: captured, replay %s\n", describe_matmul(3).c_str(),
              bad == 0 ? "matches" : "MISMATCH");
  EXPECT_EQ(delta(before).finalized, 1) << "capture and replay finalised nothing more";
  EXPECT_EQ(drv()->stream_destroy(stream), CUDA_SUCCESS);
}

}  // namespace
