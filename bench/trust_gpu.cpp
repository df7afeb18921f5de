// bench/trust_gpu.cpp — the GPU trust sweep (bench/run.sh trust runs it on the
// H200; not a CI test: it needs a GPU). Three parts, one table each, exit status
// non-zero when any case is silently wrong:
//
//  1. conv fprop + {bias, bias+relu, relu, scale, bias+relu+scale, residual add}
//     and pure pointwise (relu; add of a [1, C, 1, 1] tensor) on {NHWC, NCHW}
//     buffers, the output's strides left to inference, through EVERY plan of the list
//     (HeurMode A + FALLBACK): each built plan runs on buffers of the declared
//     layout (output poisoned) and is compared with the reference engine
//     (float64 accumulation); then the output is bound with the OTHER layout's
//     packed strides (the channels-last case of finding 1) and must be refused
//     naming the output and the rule, with the output left untouched.
//  2. a bf16 gemm + bias (C row-major, then C column-major by the user: the
//     epilogue's output follows it) through every plan: declared bindings match the
//     reference; B with transposed strides, A as fp16, A misaligned by 2 bytes
//     and the output as a read-only tensor are each refused with a named rule
//     and leave the output untouched.
//  3. host overhead: C++ execute (prepared pack) of the gemm engine's one-kernel
//     plan against a raw cuLaunchKernelEx of the same kernel, config and
//     arguments (gemm::raw_launch_of), interleaved per burst; a cuDNN plan's
//     execute on the same graph. Target: ours within 1.15x of the raw launch.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engines/gemm/gemm_engine.h"
#include "engines/reference/executor.h"
#include "exec/operand_table.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "gpu/stream_handle.h"
#include "opgraph/graph.h"
#include "runtime/device.h"
#include "timing.h"

namespace {

using namespace opgraph;
using namespace opgraph::gemm_testing;
using D = std::vector<std::int64_t>;

using gpu_testing::StreamHandle;

struct Env {
  const runtime::CudaDriverApi* api = nullptr;
  DeviceProperties props;
  CUstream stream = nullptr;
};

template <class T>
T value_or(const Result<T>& r, T fallback) {
  return r.is_good() ? r.value() : fallback;
}

int g_silent = 0;  // cases that produced a wrong answer without an error (or changed a refused call's output)

// Reads `t`'s device buffer back.
std::vector<unsigned char> read_back(const Env& e, const Operands& o, std::int64_t uid) {
  std::vector<unsigned char> h(o.host.at(uid).size());
  (void)e.api->stream_synchronize(e.stream);
  (void)e.api->memcpy_dtoh(h.data(), o.dev.at(uid)->ptr(), h.size());
  return h;
}

// Elements (of the output's span) outside |got - want| <= tol * (1 + |want|); NaN fails.
std::size_t bad_span(const std::vector<unsigned char>& want, const std::vector<unsigned char>& got, DataType d,
                     std::size_t n, double tol) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = read_elem(want, d, i), x = read_elem(got, d, i);
    if (!(std::fabs(x - r) <= tol * (1 + std::fabs(r)))) ++bad;
  }
  return bad;
}

std::vector<unsigned char> reference(const OpGraph& g, Operands& o) {
  std::map<std::int64_t, reference::HostBuffer> host;
  for (auto& [uid, h] : o.host) host[uid] = reference::HostBuffer{h.data()};
  Status s = reference::execute(g, host);
  if (s.is_bad()) std::printf("reference failed: %s\n", s.message().c_str());
  return o.host[o.out_uid];
}

void poison(const Env& e, const Operands& o) {
  const auto& d = o.dev.at(o.out_uid);
  (void)e.api->memset_d32(d->ptr(), 0xFFFFFFFFu, o.host.at(o.out_uid).size() / 4);
  (void)e.api->ctx_synchronize();
}

bool all_poison(const std::vector<unsigned char>& b) {
  return std::all_of(b.begin(), b.end(), [](unsigned char c) { return c == 0xFF; });
}

std::string first_words(const std::string& s, std::size_t n = 110) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

// ---- 1. conv fprop + epilogue ----
// conv fprop (3x3, pad 1) + `epi`: bias, bias_relu, relu, scale, bias_relu_scale,
// residual (+ a same-shape tensor); or, with no conv, pw_relu (relu of x) and
// pw_add_bcast (x + a [1, C, 1, 1] tensor). x (and w, and the residual) in the
// layout class; y's strides left to inference.
Graph conv_graph(const Env& e, bool nhwc, const std::string& epi) {
  const std::int64_t n = 4, c = 32, h = 14, w = 14, k = 64;
  auto cl = [&](std::int64_t ch) { return nhwc ? D{ch * h * w, 1, w * ch, ch} : D{}; };
  Graph g;
  g.set_name("conv_" + epi).set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  g.set_device_properties(e.props);
  auto x = g.tensor({n, c, h, w}, DataType::HALF, "x", cl(c));
  TensorPtr y;
  if (epi == "pw_relu") {
    y = g.relu(x);
  } else if (epi == "pw_add_bcast") {
    y = g.add(x, g.tensor({1, c, 1, 1}, DataType::HALF, "b"));
  } else {
    auto f = g.tensor({k, c, 3, 3}, DataType::HALF, "w", nhwc ? D{c * 9, 1, 3 * c, c} : D{});
    y = g.conv_fprop(x, f, Attributes().set("pre_padding", D{1, 1}).set("post_padding", D{1, 1}).set("stride", D{1, 1}));
    if (epi.rfind("bias", 0) == 0) y = g.bias(y, g.tensor({1, k, 1, 1}, DataType::HALF, "b"));
    if (epi == "relu" || epi.rfind("bias_relu", 0) == 0) y = g.relu(y);
    if (epi == "scale" || epi == "bias_relu_scale") y = g.scale(y, g.tensor_scalar(0.5));
    if (epi == "residual") y = g.add(y, g.tensor({n, k, h, w}, DataType::HALF, "r", cl(k)));
  }
  y->set_output(true).set_name("y").set_data_type(DataType::HALF);
  return g;
}

struct Tally {
  std::string inferred;
  int host = 0, declined = 0, built = 0, matched = 0, refused = 0;
};
std::map<std::string, Tally> tally;  // conv sweep, per "layout epilogue"

void conv_sweep(const Env& e, std::mt19937& rng) {
  std::printf("\n## 1. conv fprop + epilogue, every plan (tol 1e-2 relative, fp16 out)\n");
  std::printf("%-6s %-10s %-14s %-28s %-10s %s\n", "layout", "epilogue", "y strides", "plan", "result", "other-layout y");
  std::printf("(epilogues after a 3x3 conv; pw_*: the pointwise op alone on x)\n");
  StreamHandle handle(e.stream, &e.props);
  for (bool nhwc : {true, false})
    for (const char* epi : {"bias", "bias_relu", "relu", "scale", "bias_relu_scale", "residual", "pw_relu", "pw_add_bcast"}) {
      const std::string key = std::string(nhwc ? "NHWC " : "NCHW ") + epi;
      Graph g = conv_graph(e, nhwc, epi);
      if (Status v = g.validate(); v.is_bad()) {
        std::printf("%-6s %-10s validate: %s\n", nhwc ? "NHWC" : "NCHW", epi, v.message().c_str());
        ++g_silent;
        continue;
      }
      TensorPtr y;
      for (const auto& t : g.tensors())
        if (t->get_name() == "y") y = t;
      const D ys = y->get_stride();
      const bool y_nhwc = ys.size() == 4 && ys[1] == 1;
      std::string ystr = "[" + std::to_string(ys[0]) + "," + std::to_string(ys[1]) + "," + std::to_string(ys[2]) + "," +
                         std::to_string(ys[3]) + "]";
      tally[key].inferred = ystr;
      if (y_nhwc != nhwc) {
        std::printf("%-6s %-10s %-14s y's inferred layout class is not x's\n", nhwc ? "NHWC" : "NCHW", epi, ystr.c_str());
        ++g_silent;
      }
      Operands o;
      if (Status s = make_operands(*e.api, g, rng, o); s.is_bad()) {
        std::printf("operands: %s\n", s.message().c_str());
        ++g_silent;
        continue;
      }
      const auto want = reference(g, o);
      const std::size_t span = want.size() / 2;
      if (Status s = g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}); s.is_bad()) {
        std::printf("%-6s %-10s plans: %s\n", nhwc ? "NHWC" : "NCHW", epi, s.message().c_str());
        continue;
      }
      VariantPack pack;
      for (const auto& [uid, d] : o.dev) pack.set(uid, reinterpret_cast<void*>(d->ptr()));
      // The output with the other layout class's packed strides, declared extents.
      const D dims = y->get_dim();
      const D other = nhwc ? D{dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1}
                           : D{dims[1] * dims[2] * dims[3], 1, dims[3] * dims[1], dims[1]};
      VariantPack wrong = pack;
      wrong.set(y->get_uid(), OperandBuffer::make(reinterpret_cast<void*>(o.dev.at(y->get_uid())->ptr()), dims, other,
                                                  DataType::HALF, MemoryKind::DEVICE));
      for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
        const std::string name = first_words(value_or(g.get_plan_name_at_index(i), std::string("?")), 28);
        if (name.rfind("reference", 0) == 0) {  // the host plan: device buffers are not its (refused by design)
          ++tally[key].host;
          continue;
        }
        if (Status b = g.build_plan_at_index(i); b.is_bad()) {
          ++tally[key].declined;
          std::printf("%-6s %-10s %-14s %-28s %-10s %s\n", nhwc ? "NHWC" : "NCHW", epi, ystr.c_str(), name.c_str(),
                      "declined", first_words(b.message(), 60).c_str());
          continue;
        }
        const std::int64_t ws_bytes = value_or(g.get_workspace_size_plan_at_index(i), std::int64_t{0});
        DeviceBuffer ws(*e.api, static_cast<std::size_t>(std::max<std::int64_t>(ws_bytes, 16)));
        poison(e, o);
        Status ran = g.execute_plan_at_index(pack, {reinterpret_cast<void*>(ws.ptr()), ws_bytes}, i, &handle);
        std::string result;
        ++tally[key].built;
        if (ran.is_bad()) {
          result = "error: " + first_words(ran.message(), 50);
          ++g_silent;  // a built plan refused a declared binding: accept-means-run broken
        } else {
          const std::size_t bad = bad_span(want, read_back(e, o, o.out_uid), DataType::HALF, span, 1e-2);
          result = bad ? std::to_string(bad) + " bad" : "match";
          if (bad) ++g_silent;
          else ++tally[key].matched;
        }
        poison(e, o);
        Status refused = g.execute_plan_at_index(wrong, {reinterpret_cast<void*>(ws.ptr()), ws_bytes}, i, &handle);
        std::string other_result;
        const bool untouched = all_poison(read_back(e, o, o.out_uid));
        if (refused.code() == ErrorCode::INVALID_VARIANT_PACK && refused.message().find("'y'") != std::string::npos &&
            untouched)
        {
          other_result = "refused: " + first_words(refused.message().substr(refused.message().find("'y'")), 70);
          ++tally[key].refused;
        } else {
          other_result = std::string(refused.is_good() ? "RAN" : "refused") + (untouched ? "" : " and WROTE y") + ": " +
                         first_words(refused.message(), 60);
          ++g_silent;
        }
        std::printf("%-6s %-10s %-14s %-28s %-10s %s\n", nhwc ? "NHWC" : "NCHW", epi, ystr.c_str(), name.c_str(),
                    result.c_str(), other_result.c_str());
      }
    }
}

// ---- 2. gemm misbindings ----
void gemm_misbinds(const Env& e, std::mt19937& rng, bool c_col) {
  std::printf("\n## 2. bf16 gemm + bias, C %s, every plan: declared binding vs the reference; misbindings refused\n",
              c_col ? "column-major (user strides)" : "row-major");
  std::printf("%-32s %-10s %s\n", "plan", "declared", "misbindings (B strides / A fp16 / A misaligned / C read-only)");
  StreamHandle handle(e.stream, &e.props);
  GemmCase c{1, 256, 192, 128, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias"}};
  Graph g{build_case(c)};
  g.set_device_properties(e.props);
  if (c_col)
    for (const auto& t : g.tensors())
      if (t->get_name() == "C") t->set_stride({c.m * c.n, 1, c.m});
  if (Status v = g.validate(); v.is_bad()) {
    std::printf("validate: %s\n", v.message().c_str());
    ++g_silent;
    return;
  }
  Operands o;
  if (make_operands(*e.api, g, rng, o).is_bad()) return void(++g_silent);
  const auto want = reference(g, o);
  TensorPtr A, B, C;
  for (const auto& t : g.tensors()) {
    if (t->get_name() == "A") A = t;
    if (t->get_name() == "B") B = t;
    if (t->get_name() == "C") C = t;
  }
  if (g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_bad()) return void(++g_silent);
  VariantPack pack;
  for (const auto& [uid, d] : o.dev) pack.set(uid, reinterpret_cast<void*>(d->ptr()));
  auto ptr = [&](const TensorPtr& t) { return reinterpret_cast<char*>(o.dev.at(t->get_uid())->ptr()); };
  std::vector<std::pair<std::string, VariantPack>> wrong;
  {
    VariantPack p = pack;  // B declared column-major [1, K, N]; bound row-major
    p.set(B, OperandBuffer::make(ptr(B), {1, c.k, c.n}, {c.k * c.n, c.n, 1}, DataType::BFLOAT16, MemoryKind::DEVICE));
    wrong.emplace_back("B", p);
  }
  {
    VariantPack p = pack;
    p.set(A, OperandBuffer::make(ptr(A), {1, c.m, c.k}, {}, DataType::HALF, MemoryKind::DEVICE));
    wrong.emplace_back("A", p);
  }
  {
    VariantPack p = pack;
    p.set(A, ptr(A) + 2);
    wrong.emplace_back("A", p);
  }
  D shape{1, c.m, c.n};
  DLTensor ct{ptr(C), {kDLCUDA, 0}, 3, {kDLBfloat, 16, 1}, shape.data(), nullptr, 0};
  DLManagedTensorVersioned cro{{1, 1}, nullptr, nullptr, kDLFlagReadOnly, ct};
  {
    VariantPack p = pack;
    p.set(C, &cro);
    wrong.emplace_back("C", p);
  }
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    const std::string name = first_words(value_or(g.get_plan_name_at_index(i), std::string("?")), 32);
    if (name.rfind("reference", 0) == 0) {
      std::printf("%-32s %-10s %s\n", name.c_str(), "host plan", "(device buffers are not its: skipped)");
      continue;
    }
    if (Status b = g.build_plan_at_index(i); b.is_bad()) {
      std::printf("%-32s %-10s %s\n", name.c_str(), "declined", first_words(b.message(), 70).c_str());
      continue;
    }
    const std::int64_t ws_bytes = value_or(g.get_workspace_size_plan_at_index(i), std::int64_t{0});
    DeviceBuffer ws(*e.api, static_cast<std::size_t>(std::max<std::int64_t>(ws_bytes, 16)));
    const Workspace w{reinterpret_cast<void*>(ws.ptr()), ws_bytes};
    poison(e, o);
    Status ran = g.execute_plan_at_index(pack, w, i, &handle);
    std::string result;
    if (ran.is_bad()) {
      result = "error";
      ++g_silent;
    } else {
      const std::size_t bad = bad_span(want, read_back(e, o, o.out_uid), DataType::BFLOAT16,
                                       static_cast<std::size_t>(c.m * c.n), 1.0 / 64);
      result = bad ? std::to_string(bad) + " bad" : "match";
      if (bad) ++g_silent;
    }
    std::string rules;
    for (const auto& [who, p] : wrong) {
      poison(e, o);
      Status s = g.execute_plan_at_index(p, w, i, &handle);
      const bool untouched = all_poison(read_back(e, o, o.out_uid));
      const bool named = s.code() == ErrorCode::INVALID_VARIANT_PACK && s.message().find("'" + who + "'") != std::string::npos;
      if (!named || !untouched) ++g_silent;
      const std::string m = s.message();
      const auto colon = m.rfind("): ");
      rules += std::string(named && untouched ? "refused(" : "WRONG(") +
               first_words(colon == std::string::npos ? m : m.substr(colon + 3), 34) + ") ";
    }
    std::printf("%-32s %-10s %s\n", name.c_str(), result.c_str(), rules.c_str());
  }
}

// ---- 3. host overhead ----
void host_overhead(const Env& e, std::mt19937& rng) {
  std::printf("\n## 3. host enqueue per call, ns (min over 25 reps of a burst from a drained stream / burst; "
              "interleaved per burst)\n");
  StreamHandle handle(e.stream, &e.props);
  GemmCase c{1, 128, 256, 256, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {}};
  Graph g{build_case(c)};
  g.set_device_properties(e.props);
  Operands o;
  if (g.validate().is_bad() || make_operands(*e.api, g, rng, o).is_bad() ||
      g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_bad())
    return void(++g_silent);
  // Ours: the first gemm plan without per-call scratch (raw_launch_of refuses
  // split-K / stream-K plans), rebuilt directly by the same engine with the same
  // knobs (the same cached kernel) so raw_launch_of can read the launch it makes.
  VariantPack caller, prepared;
  for (const auto& [uid, d] : o.dev) caller.set(uid, reinterpret_cast<void*>(d->ptr()));
  if (g.prepare_variant_pack(caller, prepared).is_bad()) return void(++g_silent);
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  FactsCache facts(g, PlanTarget{e.props});
  auto layout = DeclaredLayout::compute(g);
  VariantPack own;
  if (layout.is_bad() || VariantPack::normalize(caller, *layout, own).is_bad()) return void(++g_silent);
  const PlanContext lctx{&facts, &*layout};
  std::int64_t gi = -1, ci = -1;
  std::unique_ptr<CompiledPlan> direct;
  std::unique_ptr<gemm::RawLaunch> raw;
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    const std::string n = value_or(g.get_plan_name_at_index(i), std::string(""));
    if (ci < 0 && n.rfind("cudnn", 0) == 0 && g.build_plan_at_index(i).is_good()) ci = i;
    if (gi >= 0 || n.rfind("gemm", 0) != 0 || g.build_plan_at_index(i).is_bad()) continue;
    auto cfg = g.get_engine_and_knobs_at_index(i);
    auto built = engine->build_plan(g, PlanConfig{engine->id(), cfg->knobs, {}, -1}, lctx);
    if (built.is_bad()) continue;
    auto r = gemm::raw_launch_of(**built, own);
    if (r.is_bad()) {
      std::printf("(%s: %s)\n", n.c_str(), r.status().message().c_str());
      continue;
    }
    gi = i;
    direct = std::move(*built);
    raw = std::move(*r);
  }
  if (gi < 0) {
    std::printf("no gemm plan without per-call scratch built\n");
    ++g_silent;
    return;
  }
  std::printf("gemm plan: %s\n", value_or(g.get_plan_name_at_index(gi), std::string("?")).c_str());
  CUlaunchConfig rc{};
  rc.gridDimX = raw->dims.grid[0];
  rc.gridDimY = raw->dims.grid[1];
  rc.gridDimZ = raw->dims.grid[2];
  rc.blockDimX = raw->dims.block[0];
  rc.blockDimY = raw->dims.block[1];
  rc.blockDimZ = raw->dims.block[2];
  rc.sharedMemBytes = raw->dims.shared_bytes;
  rc.hStream = e.stream;
  CUlaunchAttribute cluster{};
  if (raw->dims.cluster[0] * raw->dims.cluster[1] * raw->dims.cluster[2] > 1) {
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = raw->dims.cluster[0];
    cluster.value.clusterDim.y = raw->dims.cluster[1];
    cluster.value.clusterDim.z = raw->dims.cluster[2];
    rc.attrs = &cluster;
    rc.numAttrs = 1;
  }
  int failures = 0;
  std::string first_failure;
  auto note = [&](const Status& st) {
    if (st.is_good()) return;
    if (!failures++) first_failure = st.to_string();
  };
  auto time_burst = [&](int burst, auto&& f) {
    return bench::host_ns_per_call(burst, 25, [&] { (void)e.api->stream_synchronize(e.stream); }, f);
  };
  DeviceBuffer cws(*e.api, 1 << 26);
  const std::int64_t cws_bytes = ci >= 0 ? value_or(g.get_workspace_size_plan_at_index(ci), std::int64_t{0}) : 0;
  auto run_raw = [&] {
    if (e.api->launch_kernel_ex(&rc, raw->function, raw->args, nullptr) != CUDA_SUCCESS)
      note(Status(ErrorCode::GRAPH_EXECUTION_FAILED, "raw cuLaunchKernelEx failed"));
  };
  auto run_ours = [&] { note(g.execute_plan_at_index(prepared, {}, gi, &handle)); };
  auto run_caller = [&] { note(g.execute_plan_at_index(caller, {}, gi, &handle)); };
  auto run_cudnn = [&] {
    note(g.execute_plan_at_index(prepared, {reinterpret_cast<void*>(cws.ptr()), cws_bytes}, ci, &handle));
  };
  run_ours();  // first: the plan's launch raises the kernel's shared-memory limit, which the raw launch needs too
  run_raw();
  run_caller();
  if (ci >= 0) run_cudnn();
  std::printf("%-6s %12s %16s %18s %8s %16s\n", "burst", "raw_launch", "execute(prep)", "execute(caller)", "ratio",
              ci >= 0 ? "cudnn execute" : "");
  std::vector<double> ratios;
  for (int burst : {1, 4, 16, 64, 256}) {
    const double rl = time_burst(burst, run_raw);
    const double ex = time_burst(burst, run_ours);
    const double ec = time_burst(burst, run_caller);
    const double cu = ci >= 0 ? time_burst(burst, run_cudnn) : 0;
    ratios.push_back(ex / rl);
    std::printf("%-6d %12.1f %16.1f %18.1f %8.2f %16.1f\n", burst, rl, ex, ec, ex / rl, cu);
  }
  std::sort(ratios.begin(), ratios.end());
  // The check every engine now makes, alone: the operand table's loop over this
  // graph's rows (cuDNN's needs), on the prepared pack, 1e6 calls.
  OperandNeeds needs;
  needs.declared_strides = true;
  needs.memory = MemoryKind::DEVICE;
  needs.declared_alignment = true;
  const OperandTable table(*layout, needs, "bench");
  int accepted = 0;
  const auto t0 = bench::Clock::now();
  for (int i = 0; i < 1000000; ++i) accepted += table.accepts(own);
  const double check_ns = bench::seconds_since(t0) * 1e9 / 1e6;
  std::printf("median ratio execute(prepared) / raw_launch: %.3f (target <= 1.15); failed calls: %d %s\n",
              ratios[ratios.size() / 2], failures, first_failure.c_str());
  std::printf("the operand-table check alone (%zu rows): %.1f ns per call (%d of 1000000 accepted)\n",
              table.rows().size(), check_ns, accepted);
  if (ci >= 0) std::printf("cudnn plan: %s\n", value_or(g.get_plan_name_at_index(ci), std::string("?")).c_str());
  // The result of our execute, once more, against the reference.
  const auto want = reference(g, o);
  poison(e, o);
  failures += g.execute_plan_at_index(prepared, {}, gi, &handle).is_bad();
  const std::size_t bad = bad_span(want, read_back(e, o, o.out_uid), DataType::BFLOAT16,
                                   static_cast<std::size_t>(c.m * c.n), 1.0 / 64);
  std::printf("result check after timing: %zu bad of %lld\n", bad, static_cast<long long>(c.m * c.n));
  if (bad || failures || accepted != 1000000) ++g_silent;
}

}  // namespace

int main(int argc, char** argv) {
  // --host-only: part 3 alone (bench/run.sh host).
  const bool host_only = argc > 1 && std::strcmp(argv[1], "--host-only") == 0;
  Env e;
  auto rt = runtime::KernelRuntime::open(0, runtime::CacheOptions::from_env());
  if (rt.is_bad()) return std::fprintf(stderr, "%s\n", rt.status().message().c_str()), 1;
  e.api = &rt.value()->api();
  e.props = rt.value()->device();
  if (e.api->stream_create(&e.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return 1;
  std::mt19937 rng(std::random_device{}());
  std::printf("# trust_gpu on %s (sm_%d%d)\n", e.props.name.c_str(), e.props.major, e.props.minor);
  if (host_only) {
    host_overhead(e, rng);
    return g_silent ? 1 : 0;
  }
  conv_sweep(e, rng);
  gemm_misbinds(e, rng, false);
  gemm_misbinds(e, rng, true);
  host_overhead(e, rng);
  std::printf("\n## summary: conv sweep (plans of the list; the host reference plan is not run on device buffers)\n");
  std::printf("%-16s %-18s %6s %8s %8s %8s %16s\n", "case", "y inferred", "host", "declined", "built", "matched",
              "other layout refused");
  for (const auto& [k, t] : tally)
    std::printf("%-16s %-18s %6d %8d %8d %8d %16d\n", k.c_str(), t.inferred.c_str(), t.host, t.declined, t.built,
                t.matched, t.refused);
  std::printf("\nsilently wrong or unrefused cases: %d\n", g_silent);
  return g_silent ? 1 : 0;
}
