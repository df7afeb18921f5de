// runtime_probe — a fresh process for the runtime tests (test_runtime runs it
// with fork + exec, so nothing the test process already mapped leaks in).
//
//   runtime_probe plan            build, validate, serialise a graph, make
//                                 DeviceProperties (for_arch + JSON) and plan
//                                 for it (create_execution_plans) — planning
//                                 only; then print the mapped CUDA libraries.
//   runtime_probe compile         compile one smoke kernel with NVRTC, then
//                                 print the mapped CUDA libraries.
//   runtime_probe driver          load libcuda through the loader; print
//                                 "driver loaded from <path>" or the status.
//   runtime_probe fake-device     (OPGRAPH_LIBCUDA = the fake two-device driver,
//                                 tests/runtime/fake_libcuda) the public device API:
//                                 count, properties with ordinals, a device that does
//                                 not exist, memory on device 1 round-tripped.
//   runtime_probe fake-gemm-device
//                                 (the same driver, a cache under REQUIRE_HIT) a gemm
//                                 graph planned for device 1 and built: prints what
//                                 building said (the miss names the arch it compiled
//                                 for) and the driver's own lines say which device
//                                 the engine opened.
//   runtime_probe fake-la-device  (the same driver, device 1 made an sm_90 by
//                                 OPGRAPH_FAKE_CUDA_DEVICE1_SM=90, a compiling cache)
//                                 the linear_attention engine on a gdn graph: built for
//                                 a device that does not exist, for device 1, then
//                                 executed with handles on device 0, device 1 and none;
//                                 each step's line is flushed before the next, so the
//                                 driver's own lines fall between them.
//   runtime_probe fake-cudnn-device
//                                 (the same driver, the real libcudnn when it loads) the
//                                 cuDNN engine on a matmul graph: heuristics and a build
//                                 for a device that does not exist, then for device 1
//                                 (cudnnCreate cannot succeed without a GPU: what matters
//                                 is the context made current before it), and the
//                                 context current after; then the build for device 1
//                                 again with device 0's context current (the caller's).
//                                 Prints "no libcudnn" and stops when libcudnn does not
//                                 load.
//   runtime_probe fake-shared-runtime
//                                 (the same driver, a cache under REQUIRE_HIT) the
//                                 per-device shared KernelRuntime (runtime/
//                                 shared_runtimes.h): leases of devices that do not
//                                 exist, the first and a second lease of device 1 with
//                                 no context current, device 0 opened from a thread
//                                 with device 1's context current, the device lock
//                                 (a second lease of a held device waits, another
//                                 device's does not), then the gemm engine building
//                                 for device 1 on the runtime already open (the miss
//                                 under REQUIRE_HIT names the arch).
//   runtime_probe cache-worker ROOT TAG
//                                 get every declared smoke specialisation plus
//                                 one named by TAG through a CompiledCache at
//                                 ROOT (compile-only); exit 0 iff all succeed.
// Mapped libraries are printed one per line as "mapped <path>"; the last line
// is "done".
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engines/cudnn/cudnn_engine.h"
#include "engines/gemm/gemm_engine.h"
#include "engines/linear_attention/la_engine.h"
#include "engines/smoke/smoke_kernels.h"
#include "exec/declared_layout.h"
#include "opgraph/device.h"
#include "opgraph/device_properties.h"
#include "opgraph/engine_info.h"
#include "opgraph/graph.h"
#include "opgraph/op_graph.h"
#include "runtime/compiled_cache.h"
#include "runtime/device.h"
#include "runtime/loader.h"
#include "runtime/shared_runtimes.h"

using namespace opgraph;

namespace {

void print_mapped_cuda_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> seen;
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    auto base = path.substr(path.rfind('/') + 1);
    if (base.rfind("libcuda.", 0) == 0 || base.rfind("libnvrtc", 0) == 0 || base.rfind("libcudnn", 0) == 0) {
      if (seen.insert(path).second) std::printf("mapped %s\n", path.c_str());
    }
  }
}

int plan_only() {
  Graph g;
  g.set_name("probe").set_io_data_type(DataType::HALF).set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({4, 32, 64}, DataType::HALF, "a");
  auto b = g.tensor({4, 64, 16}, DataType::HALF, "b");
  auto c = g.matmul(a, b, Attributes().set_name("mm"));
  c->set_output(true).set_name("c");
  if (Status s = g.validate(); s.is_bad()) return std::printf("validate: %s\n", s.to_string().c_str()), 1;
  if (auto j = g.serialize(); j.is_bad()) return std::printf("serialize failed\n"), 1;
  // A GPU target without a GPU: built for an arch, through JSON, as deviceless planning does.
  auto props = DeviceProperties::for_arch("sm_90a");
  if (props.is_bad()) return 1;
  auto back = DeviceProperties::from_json(props.value().to_json());
  if (back.is_bad() || !(back.value() == props.value())) return std::printf("device properties JSON round trip failed\n"), 1;
  g.set_device_properties(back.value());
  if (Status s = g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}); s.is_bad())
    return std::printf("plan: %s\n", s.to_string().c_str()), 1;
  std::printf("planned for %s: %lld plan(s)\n", back.value().arch().c_str(),
              static_cast<long long>(g.get_execution_plan_count()));
  return 0;
}

int compile_one() {
  auto k = runtime::compile_kernel(smoke::affine_request({3.0, 1.0, smoke::SmokeType::F32}), "sm_90a");
  if (k.is_bad()) return std::printf("compile: %s\n", k.status().to_string().c_str()), 1;
  std::printf("compiled %zu bytes\n", k->cubin.size());
  return 0;
}

int load_driver() {
  auto api = runtime::cuda_driver();
  if (api.is_bad()) std::printf("%s\n", api.status().to_string().c_str());
  else std::printf("driver loaded from %s\n", (*api)->path.c_str());
  return 0;
}

int fake_device() {
  auto count = device_count();
  if (count.is_bad()) return std::printf("count: %s\n", count.status().to_string().c_str()), 1;
  std::printf("count %d\n", *count);
  for (int i = 0; i <= *count; ++i) {
    auto p = read_device(i);
    if (p.is_bad()) std::printf("read %d: %s\n", i, p.status().to_string().c_str());
    else std::printf("read %d: ordinal %d %s %s %d SMs\n", i, p->ordinal, p->name.c_str(), p->arch().c_str(), p->sm_count);
  }
  auto bad = Device::open(-1);
  std::printf("open -1: %s\n", bad.is_bad() ? bad.status().to_string().c_str() : "opened");
  auto dev = Device::open(1);
  if (dev.is_bad()) return std::printf("open 1: %s\n", dev.status().to_string().c_str()), 1;
  std::printf("opened ordinal %d %s\n", dev->ordinal(), dev->properties().name.c_str());
  std::vector<unsigned char> in(100), out(100, 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  {
    auto mem = DeviceMemory::allocate(*dev, in.size());
    if (mem.is_bad()) return std::printf("allocate: %s\n", mem.status().to_string().c_str()), 1;
    if (Status s = mem->upload(in.data(), in.size()); s.is_bad()) return std::printf("upload: %s\n", s.to_string().c_str()), 1;
    if (Status s = mem->download(out.data(), out.size()); s.is_bad())
      return std::printf("download: %s\n", s.to_string().c_str()), 1;
    Status over = mem->upload(in.data(), in.size() + 1);
    std::printf("upload past the end: %s\n", over.to_string().c_str());
    std::printf("round trip %s\n", in == out ? "equal" : "DIFFERENT");
  }
  if (Status s = dev->synchronize(); s.is_bad()) return std::printf("synchronize: %s\n", s.to_string().c_str()), 1;
  return 0;
}

// c = a @ b, HALF [1, 64, 64] each with FLOAT compute, named `name`, validated.
Status declare_half_matmul(OpGraph& g, const char* name) {
  g.set_name(name).set_io_data_type(DataType::HALF).set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({1, 64, 64}, DataType::HALF, "a");
  auto b = g.tensor({1, 64, 64}, DataType::HALF, "b");
  auto c = g.matmul(a, b, Attributes().set_name("mm"));
  c->set_output(true).set_name("c").set_data_type(DataType::HALF);
  return g.validate();
}

int fake_gemm_device() {
  Graph g;
  if (Status s = declare_half_matmul(g, "gemm_on_device_1"); s.is_bad())
    return std::printf("validate: %s\n", s.to_string().c_str()), 1;
  auto target = read_device(1);
  if (target.is_bad()) return std::printf("read 1: %s\n", target.status().to_string().c_str()), 1;
  g.set_device_properties(*target);
  if (Status s = g.create_execution_plans({HeurMode::FALLBACK}); s.is_bad())
    return std::printf("plan: %s\n", s.to_string().c_str()), 1;
  Status built = g.build_plans(BuildPlanPolicy::ALL);
  std::printf("build_plans: %s\n", built.to_string().c_str());
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    auto config = g.get_engine_and_knobs_at_index(i);
    auto engine = engine_info(config->engine_id);
    std::printf("plan %lld engine %s: %s\n", static_cast<long long>(i), engine.is_good() ? engine->name.c_str() : "backend",
                g.get_plan_status_at_index(i).value().c_str());
  }
  return 0;
}

// One line on stdout, flushed (the driver writes its lines to stderr, unbuffered).
template <class... A>
void say(const char* fmt, A... a) {
  std::printf(fmt, a...);
  std::fflush(stdout);
}

int fake_la_device() {
  // The example's varlen gdn prefill at a head dim the engine serves.
  OpGraph g;
  g.set_name("gdn_on_device_1").set_io_data_type(DataType::BFLOAT16).set_compute_data_type(DataType::FLOAT);
  const std::int64_t T = 40, H = 4, D = 64, N = 3;
  DeltaRuleInputs in;
  in.q = g.tensor({T, H, D}, DataType::BFLOAT16, "q");
  in.k = g.tensor({T, H, D}, DataType::BFLOAT16, "k");
  in.v = g.tensor({T, H, D}, DataType::BFLOAT16, "v");
  in.g = g.tensor({T, H}, DataType::FLOAT, "g");
  in.beta = g.tensor({T, H}, DataType::BFLOAT16, "beta");
  in.cu_seqlens = g.tensor({N + 1}, DataType::INT32, "cu_seqlens");
  auto out = g.gdn(in, Attributes().set_name("gdn"));
  out.o->set_output(true).set_name("o");
  if (Status s = g.validate(); s.is_bad()) return say("validate: %s\n", s.to_string().c_str()), 1;
  auto layout = DeclaredLayout::compute(g);
  if (layout.is_bad()) return say("layout: %s\n", layout.status().to_string().c_str()), 1;
  auto engine = linear_attention::make_la_engine(EngineIdentity{1, "linear_attention"});
  auto build = [&](const DeviceProperties& target) -> Result<std::unique_ptr<CompiledPlan>> {
    FactsCache facts(g, PlanTarget{target});
    PlanContext ctx{&facts, &*layout};
    OPGRAPH_CHECK(engine->check_support(g, ctx));
    return engine->build_plan(g, PlanConfig{engine->id(), {}, {}, -1}, ctx);
  };
  auto one = read_device(1);
  if (one.is_bad()) return say("read 1: %s\n", one.status().to_string().c_str()), 1;
  auto zero = read_device(0);
  if (zero.is_bad()) return say("read 0: %s\n", zero.status().to_string().c_str()), 1;

  DeviceProperties ghost = *one;  // device 1's figures, an ordinal no device has
  ghost.ordinal = 2;
  auto refused = build(ghost);
  say("build for device 2: %s\n", refused.is_bad() ? refused.status().to_string().c_str() : "built");
  say("runtime 2 open: %s\n", linear_attention::shared_runtime_if_open(2) ? "yes" : "no");

  auto plan = build(*one);
  say("build for device 1: %s\n", plan.is_bad() ? plan.status().to_string().c_str() : "built");
  if (plan.is_bad()) return 1;
  const runtime::KernelRuntime* rt = linear_attention::shared_runtime_if_open(1);
  say("runtime 1 ordinal: %d\n", rt ? rt->device().ordinal : -1);
  say("runtime 0 open: %s\n", linear_attention::shared_runtime_if_open(0) ? "yes" : "no");

  // The fake driver's device memory is host memory: aligned host buffers stand in.
  std::vector<void*> owned;
  VariantPack caller;
  for (const TensorPtr& t : {in.q, in.k, in.v, in.g, in.beta, in.cu_seqlens, out.o}) {
    // aligned_alloc takes a size that is a multiple of the alignment (ASan refuses others).
    const std::size_t bytes = (static_cast<std::size_t>(t->element_count()) * 4 + 256 + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, bytes);
    std::memset(p, 0, bytes);
    owned.push_back(p);
    caller.set(t->get_uid(), p);
  }
  VariantPack pack;
  if (Status s = VariantPack::normalize(caller, *layout, pack); s.is_bad())
    return say("normalize: %s\n", s.to_string().c_str()), 1;
  ExecutionContext ec;
  DeviceProperties none = *one;  // a handle that names no device
  none.ordinal = -1;
  const std::pair<const char*, const DeviceProperties*> calls[] = {
      {"device 0", &*zero}, {"device 1", &*one}, {"no ordinal", &none}};
  for (const auto& call : calls) {
    ec.device = call.second;
    say("execute with a handle on %s\n", call.first);
    Status s = (*plan)->execute(pack, ec);
    say("executed with a handle on %s: %s\n", call.first, s.to_string().c_str());
  }
  for (void* p : owned) std::free(p);
  return 0;
}

int fake_cudnn_device() {
  if (auto api = runtime::cudnn(); api.is_bad()) return say("no libcudnn: %s\n", api.status().to_string().c_str()), 0;
  OpGraph g;
  if (Status s = declare_half_matmul(g, "cudnn_on_device_1"); s.is_bad())
    return say("validate: %s\n", s.to_string().c_str()), 1;
  auto layout = DeclaredLayout::compute(g);
  if (layout.is_bad()) return say("layout: %s\n", layout.status().to_string().c_str()), 1;
  auto provider = engines::make_cudnn_provider();
  const Engine& engine = provider->engine();
  auto one = read_device(1);
  if (one.is_bad()) return say("read 1: %s\n", one.status().to_string().c_str()), 1;
  DeviceProperties ghost = *one;  // device 1's figures, an ordinal no device has
  ghost.ordinal = 2;
  auto current = [] {
    CUcontext ctx = nullptr;
    if (runtime::cuda_driver().value()->ctx_get_current(&ctx) != CUDA_SUCCESS) return std::string("unknown");
    return ctx ? std::string("a context") : std::string("none");
  };
  for (const DeviceProperties* target : {&ghost, &*one}) {
    FactsCache facts(g, PlanTarget{*target});
    PlanContext ctx{&facts, &*layout};
    const int n = target->ordinal;
    say("heuristics for device %d begin\n", n);
    auto entries = provider->entries(g, HeurMode::A, ctx);
    say("heuristics for device %d: %s\n", n, entries.is_bad() ? entries.status().to_string().c_str() : "configs");
    say("build for device %d begins\n", n);
    auto plan = engine.build_plan(g, PlanConfig{0, {}, {}, -1}, ctx);
    say("build for device %d: %s\n", n, plan.is_bad() ? plan.status().to_string().c_str() : "built");
    say("current after device %d: %s\n", n, current().c_str());
  }
  // A caller with another device's context current: the build still works in
  // device 1's, and the caller's is put back.
  say("the caller opens device 0\n");
  auto zero = Device::open(0);  // retains device 0's primary context and makes it current
  if (zero.is_bad()) return say("open 0: %s\n", zero.status().to_string().c_str()), 1;
  FactsCache facts(g, PlanTarget{*one});
  PlanContext ctx{&facts, &*layout};
  say("build for device 1 from device 0 begins\n");
  auto plan = engine.build_plan(g, PlanConfig{0, {}, {}, -1}, ctx);
  say("build for device 1 from device 0: %s\n", plan.is_bad() ? plan.status().to_string().c_str() : "built");
  CUcontext after = nullptr;
  runtime::cuda_driver().value()->ctx_get_current(&after);
  CUdevice on = -1;
  if (after) runtime::cuda_driver().value()->ctx_get_device(&on);
  say("current after the build from device 0: device %d\n", after ? static_cast<int>(on) : -1);
  return 0;
}

int fake_shared_runtime() {
  auto api_r = runtime::cuda_driver();
  if (api_r.is_bad()) return say("driver: %s\n", api_r.status().to_string().c_str()), 1;
  const runtime::CudaDriverApi& api = **api_r;
  auto current = [&] {
    CUcontext ctx = nullptr;
    if (api.ctx_get_current(&ctx) != CUDA_SUCCESS) return std::string("unknown");
    CUdevice on = -1;
    if (!ctx || api.ctx_get_device(&on) != CUDA_SUCCESS) return std::string("none");
    return "device " + std::to_string(on);
  };
  auto open = [](int n) { return runtime::shared_kernel_runtime_if_open(n) ? "yes" : "no"; };
  say("open at start: 0 %s, 1 %s\n", open(0), open(1));
  for (int n : {2, -1}) {
    say("lease %d begins\n", n);
    auto r = runtime::shared_kernel_runtime(n);
    say("lease %d: %s\n", n, r.is_bad() ? r.status().to_string().c_str() : "leased");
    say("runtime %d open: %s\n", n, open(n));
  }
  const runtime::KernelRuntime* first = nullptr;
  say("lease 1 begins\n");
  {
    auto r = runtime::shared_kernel_runtime(1);
    if (r.is_bad()) return say("lease 1: %s\n", r.status().to_string().c_str()), 1;
    first = r->get();
    say("lease 1: ordinal %d %s\n", (*r)->device().ordinal, (*r)->device().name.c_str());
    say("current in lease 1: %s\n", current().c_str());
  }
  const bool same = runtime::shared_kernel_runtime_if_open(1) == first;
  say("runtime 1 open: %s (%s)\n", open(1), same ? "the leased one" : "another");
  say("runtime 0 open: %s\n", open(0));
  say("lease 1 again begins\n");
  {
    auto r = runtime::shared_kernel_runtime(1);
    if (r.is_bad()) return say("lease 1 again: %s\n", r.status().to_string().c_str()), 1;
    say("lease 1 again: %s\n", r->get() == first ? "the same runtime" : "another runtime");
  }
  // A caller with device 1's context current opens device 0: it gets it back.
  CUcontext one = nullptr;
  if (api.primary_ctx_retain(&one, 1) != CUDA_SUCCESS || api.ctx_set_current(one) != CUDA_SUCCESS)
    return say("the caller could not make device 1's context current\n"), 1;
  say("lease 0 from device 1 begins\n");
  {
    auto r = runtime::shared_kernel_runtime(0);
    if (r.is_bad()) return say("lease 0: %s\n", r.status().to_string().c_str()), 1;
    say("lease 0: ordinal %d\n", (*r)->device().ordinal);
    say("current in lease 0: %s\n", current().c_str());
  }
  say("current after lease 0: %s\n", current().c_str());
  api.ctx_set_current(nullptr);
  // The device lock: held by a lease, it makes a second lease of the device
  // wait until the first ends; another device's lease does not wait.
  std::atomic<bool> second{false};
  std::thread waiter;
  {
    auto held = runtime::shared_kernel_runtime(1);
    if (held.is_bad()) return say("lease 1 held: %s\n", held.status().to_string().c_str()), 1;
    waiter = std::thread([&second] { second = runtime::shared_kernel_runtime(1).is_good(); });
    auto other = std::async(std::launch::async, [] { return runtime::shared_kernel_runtime(0).is_good(); });
    const bool taken = other.wait_for(std::chrono::seconds(30)) == std::future_status::ready && other.get();
    say("lease 0 while device 1 is held: %s\n", taken ? "taken" : "waited");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    say("second lease 1 while device 1 is held: %s\n", second ? "taken" : "waits");
  }
  waiter.join();
  say("second lease 1 after the first ended: %s\n", second ? "taken" : "not taken");
  // The gemm engine builds for device 1 on the runtime already open (the
  // engine alone: no planner, so no other family's driver calls in between).
  say("gemm runtime 1: %s\n", gemm::shared_runtime_if_open(1) == first ? "the shared one" : "another");
  OpGraph g;
  if (Status s = declare_half_matmul(g, "gemm_on_the_shared_runtime"); s.is_bad())
    return say("validate: %s\n", s.to_string().c_str()), 1;
  auto layout = DeclaredLayout::compute(g);
  if (layout.is_bad()) return say("layout: %s\n", layout.status().to_string().c_str()), 1;
  auto target = read_device(1);
  if (target.is_bad()) return say("read 1: %s\n", target.status().to_string().c_str()), 1;
  auto engine = gemm::make_gemm_engine(EngineIdentity{1, "gemm"});
  FactsCache facts(g, PlanTarget{*target});
  PlanContext ctx{&facts, &*layout};
  gemm::GemmConfig v1;
  v1.tile_m = v1.tile_n = 64;
  v1.stages = 2;
  say("gemm build for device 1 begins\n");
  auto plan = engine->build_plan(g, PlanConfig{engine->id(), gemm::knobs_of(v1), {}, -1, {}}, ctx);
  say("gemm build for device 1: %s\n", plan.is_bad() ? plan.status().to_string().c_str() : "built");
  say("current after the gemm build: %s\n", current().c_str());
  return 0;
}

int cache_worker(const char* root, const char* tag) {
  runtime::CacheOptions options;
  options.root = root;
  auto props = DeviceProperties::for_arch("sm_90a");
  runtime::CompiledCache cache(options, runtime::CacheEnvironment::make(*props, 13000, 13000));
  auto check = [](const runtime::CompiledKernel& k) { return runtime::validate_cubin(k.cubin, k.lowered_name); };
  auto requests = smoke::declared_specialisations();
  requests.resize(3);
  requests.push_back(smoke::affine_request({static_cast<double>(std::atoi(tag)) + 0.5, 2.0, smoke::SmokeType::F32}));
  for (const auto& r : requests) {
    auto k = cache.get(r, "sm_90a", check);
    if (k.is_bad()) return std::printf("get %s: %s\n", r.kernel.c_str(), k.status().to_string().c_str()), 1;
  }
  const auto& s = cache.stats();
  std::printf("hits %llu misses %llu invalid %llu\n", static_cast<unsigned long long>(s.hits),
              static_cast<unsigned long long>(s.misses), static_cast<unsigned long long>(s.invalid));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  int rc = 2;
  if (mode == "plan") rc = plan_only();
  else if (mode == "compile") rc = compile_one();
  else if (mode == "driver") rc = load_driver();
  else if (mode == "fake-device") rc = fake_device();
  else if (mode == "fake-gemm-device") rc = fake_gemm_device();
  else if (mode == "fake-la-device") rc = fake_la_device();
  else if (mode == "fake-cudnn-device") rc = fake_cudnn_device();
  else if (mode == "fake-shared-runtime") rc = fake_shared_runtime();
  else if (mode == "cache-worker" && argc == 4) return cache_worker(argv[2], argv[3]);
  print_mapped_cuda_libraries();
  std::printf("done\n");
  return rc;
}
