// api/kernel_cache.cpp — the compiled-cache maintenance API (opgraph/kernel_cache.h)
// over the runtime's CompiledCache, the manifest's kernel walks and the smoke
// kernels.
#include "opgraph/kernel_cache.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "opgraph/graph.h"

#include "engines/manifest.h"
#include "engines/smoke/smoke_kernels.h"
#include "plan/manifest.h"
#include "runtime/cache_files.h"
#include "runtime/compiled_cache.h"
#include "runtime/nvrtc_compiler.h"

namespace opgraph {

struct KernelCache::Impl {
  runtime::CompiledCache cache;
  std::optional<DeviceProperties> target;  // none: open_root()
  std::string arch;
  std::vector<WarmKernel> pending;
  std::vector<runtime::KernelRequest> requests;  // pending[i]'s request
  std::set<std::string> keys;                    // the pending requests' cache keys

  Impl(runtime::CompiledCache c, std::optional<DeviceProperties> t)
      : cache(std::move(c)), target(std::move(t)), arch(target ? target->arch() : std::string()) {}

  // Adds `r` unless a pending request has the same cache key.
  void add(std::string owner, const runtime::KernelRequest& r) {
    if (!keys.insert(r.key(arch)).second) return;
    pending.push_back(WarmKernel{std::move(owner), r.family + "/" + r.kernel});
    requests.push_back(r);
  }

  Status needs_target(const char* what) const {
    if (target) return Status::ok();
    return Status(ErrorCode::INVALID_VALUE, std::string(what) + " needs a target: open the cache with KernelCache::open");
  }
};

KernelCache::KernelCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelCache::~KernelCache() = default;
KernelCache::KernelCache(KernelCache&&) noexcept = default;
KernelCache& KernelCache::operator=(KernelCache&&) noexcept = default;

KernelCache KernelCache::open(const DeviceProperties& target) {
  runtime::CompiledCache cache(runtime::CacheOptions::from_env(),
                               runtime::CacheEnvironment::current(target, /*probe_driver=*/true));
  return KernelCache(std::make_unique<Impl>(std::move(cache), target));
}

KernelCache KernelCache::open_root() {
  runtime::CompiledCache cache(runtime::CacheOptions::from_env(), runtime::CacheEnvironment{});
  return KernelCache(std::make_unique<Impl>(std::move(cache), std::nullopt));
}

KernelCacheSettings KernelCache::settings() const {
  const runtime::CompiledCache& c = impl_->cache;
  KernelCacheSettings s;
  s.root = c.options().root;
  s.enabled = c.enabled();
  s.require_hit = c.options().require_hit;
  s.max_bytes = c.options().max_bytes;
  s.marked = c.marked();
  s.marker_file = std::string(runtime::cache_files::kMarkerFile);
  s.trust = c.trust();
  if (impl_->target) {
    s.environment_dir = c.environment_dir();
    s.environment = c.environment().fields;
  }
  return s;
}

std::vector<KernelCacheEnvironment> KernelCache::list() const {
  std::vector<KernelCacheEnvironment> out;
  for (auto& e : impl_->cache.list())
    out.push_back(KernelCacheEnvironment{e.path, e.schema, e.hash, e.current, e.bytes, std::move(e.entries)});
  return out;
}

Result<std::uint64_t> KernelCache::prune() { return impl_->cache.prune(); }

Result<KernelCacheClearReport> KernelCache::clear() {
  auto r = impl_->cache.clear();
  if (r.is_bad()) return r.status();
  return KernelCacheClearReport{r->environments_removed, std::move(r->kept)};
}

std::string KernelCache::arch() const { return impl_->arch; }

Status KernelCache::add_declared(std::string_view family) {
  OPGRAPH_CHECK(impl_->needs_target("add_declared"));
  if (family != kSmokeFamily) {
    const plan::Manifest& m = plan::active_manifest(engines::default_manifest());
    Status walked = plan::declared_kernels(m, family, [&](const plan::SlotRef& slot, const runtime::KernelRequest& r) {
      impl_->add(slot.family->name + "/" + slot.slot->name, r);
      return Status::ok();
    });
    if (walked.code() == ErrorCode::INVALID_VALUE && !family.empty())
      return Status(walked.code(), walked.message() + "; or " + std::string(kSmokeFamily) +
                                       ", the runtime's self-test kernels");
    OPGRAPH_CHECK(walked);
  }
  if (family.empty() || family == kSmokeFamily)
    for (const auto& r : smoke::declared_specialisations()) impl_->add(std::string(kSmokeFamily), r);
  return Status::ok();
}

Result<std::size_t> KernelCache::add_plan(const Graph& graph, std::int64_t index) {
  OPGRAPH_CHECK(impl_->needs_target("add_plan"));
  auto config = graph.get_engine_and_knobs_at_index(index);
  if (config.is_bad()) return config.status();
  auto name = graph.get_plan_name_at_index(index);
  if (name.is_bad()) return name.status();
  const plan::Manifest& m = plan::active_manifest(engines::default_manifest());
  std::size_t named = 0;
  Status s = plan::plan_kernels(m, graph, *config, PlanTarget{impl_->target},
                                [&](const plan::SlotRef&, const runtime::KernelRequest& r) {
                                  ++named;
                                  impl_->add(*name, r);
                                  return Status::ok();
                                });
  if (s.is_bad()) return s;
  return named;
}

const std::vector<WarmKernel>& KernelCache::pending() const { return impl_->pending; }

void KernelCache::keep_first(std::size_t n) {
  if (n >= impl_->pending.size()) return;
  impl_->pending.resize(n);
  impl_->requests.resize(n);
  impl_->keys.clear();
  for (const auto& r : impl_->requests) impl_->keys.insert(r.key(impl_->arch));
}

namespace {

// A compile run ahead of warm()'s loop: its result (taken once) and how long it took.
struct Ahead {
  std::optional<Result<runtime::CompiledKernel>> out;
  double seconds = 0;
};

// The programs the requests without a record need, compiled on `jobs` threads (0: the hardware threads) before
// warm()'s loop (NVRTC compiles distinct programs concurrently; of its calls only nvrtcGetTypeName is not
// thread-safe, and it is not called): a build's first unmangled entry, every template entry. Nothing under
// require_hit (a miss is an error there, not a compile) or where one thread would do them all (the loop does).
std::map<std::size_t, Ahead> compile_ahead(const runtime::CompiledCache& cache,
                                           const std::vector<runtime::KernelRequest>& reqs, const std::string& arch,
                                           unsigned jobs) {
  std::vector<std::size_t> units;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    if (cache.has_record(reqs[i], arch)) continue;
    const bool plain = runtime::is_plain_name(reqs[i].entry);
    if (seen.insert(plain ? "b " + reqs[i].build_key() : "k " + reqs[i].key(arch)).second) units.push_back(i);
  }
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>(jobs ? jobs : hw, units.size());
  std::map<std::size_t, Ahead> ahead;
  if (cache.options().require_hit || threads < 2) return ahead;
  for (std::size_t i : units) ahead[i];  // every node exists before the threads start; each writes only its own
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t u = next++; u < units.size(); u = next++) {
      Ahead& a = ahead.at(units[u]);
      const auto t0 = std::chrono::steady_clock::now();
      a.out = runtime::compile_kernel(reqs[units[u]], arch);
      a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {  // no more threads: the ones started and this one do the rest
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  return ahead;
}

}  // namespace

Result<WarmSummary> KernelCache::warm(const std::function<void(const WarmStep&)>& on_step, unsigned jobs) {
  OPGRAPH_CHECK(impl_->needs_target("warm"));
  runtime::CompiledCache& cache = impl_->cache;
  if (Status ready = cache.prepare(); ready.is_bad())
    return Status(ready.code(), "cannot warm " + cache.options().root.string() + ": " + ready.message());
  // Without a device, the check a served cubin passes is the ELF validation.
  auto check = [](const runtime::CompiledKernel& k) { return runtime::validate_cubin(k.cubin, k.lowered_name); };
  // One NVRTC compile a build (source and defines): every extern "C" kernel of a source is in its cubin, so an
  // entry of a build compiled before takes that cubin (its name a function symbol of it, checked whole) instead
  // of compiling the same source again. Template entries (a name expression instantiates one) compile alone.
  const auto& reqs = impl_->requests;
  std::map<std::string, std::string> builds;  // build -> the cubin of its last compile
  std::map<std::size_t, Ahead> ahead = compile_ahead(cache, reqs, impl_->arch, jobs);
  bool shared = false;
  double ahead_seconds = 0;  // the step's compile, when it ran ahead
  std::size_t current = 0;   // the request the loop is at
  auto compile = [&](const runtime::KernelRequest& r, std::string_view arch) -> Result<runtime::CompiledKernel> {
    const std::string build = r.build_key();
    if (auto a = ahead.find(current); a != ahead.end() && a->second.out) {
      Result<runtime::CompiledKernel> k = std::move(*a->second.out);
      a->second.out.reset();
      ahead_seconds = a->second.seconds;
      if (k.is_good() && runtime::is_plain_name(r.entry)) builds[build] = k->cubin;
      return k;
    }
    const auto it = builds.find(build);
    if (it != builds.end() && runtime::is_plain_name(r.entry) &&
        runtime::validate_cubin(it->second, r.entry).is_good()) {
      shared = true;
      return runtime::CompiledKernel{std::string(arch), r.entry, it->second, std::string()};
    }
    auto k = runtime::compile_kernel(r, arch);
    if (k.is_good()) builds[build] = k->cubin;
    return k;
  };
  WarmSummary sum;
  sum.kernels = impl_->pending.size();
  for (std::size_t i = 0; i < impl_->pending.size(); ++i) {
    const runtime::CacheStats before = cache.stats();
    const auto t0 = std::chrono::steady_clock::now();
    shared = false;
    ahead_seconds = 0;
    current = i;
    auto k = cache.get(impl_->requests[i], impl_->arch, check, compile);
    WarmStep step;
    step.done = i + 1;
    step.total = impl_->pending.size();
    step.kernel = &impl_->pending[i];
    step.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() + ahead_seconds;
    const runtime::CacheStats& after = cache.stats();
    if (k.is_bad()) {
      ++sum.failed;
      step.outcome = WarmOutcome::FAILED;
      step.error = k.status();
    } else if (after.hits > before.hits) {
      ++sum.already_cached;
      step.outcome = WarmOutcome::ALREADY_CACHED;
    } else {
      ++sum.compiled;
      step.outcome = WarmOutcome::COMPILED;
      step.replaced_invalid = after.invalid > before.invalid;
      step.not_stored = after.unwritten + after.untrusted > before.unwritten + before.untrusted;
      step.shared_compile = shared;
      sum.shared_compiles += shared ? 1 : 0;
    }
    if (on_step) on_step(step);
  }
  sum.invalid_replaced = cache.stats().invalid;
  sum.not_stored = cache.stats().unwritten + cache.stats().untrusted;
  return sum;
}

}  // namespace opgraph
