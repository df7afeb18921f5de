// runtime/plan_choice.cpp — reading and committing plan-choice records.
#include "runtime/plan_choice.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "runtime/cache_files.h"
#include "runtime/log.h"

namespace opgraph::runtime {

namespace fs = std::filesystem;

namespace {

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string schema_dir_name() { return "v" + std::to_string(kPlanChoiceSchema); }

}  // namespace

PlanChoiceOptions PlanChoiceOptions::from_env() {
  PlanChoiceOptions o;
  if (auto dir = env_text("OPGRAPH_PLAN_CHOICES"); !dir.empty()) {
    o.root = dir;
  } else if (auto xdg = env_text("XDG_CACHE_HOME"); !xdg.empty()) {
    o.root = fs::path(xdg) / "opgraph" / "plan_choices";
  } else if (auto home = env_text("HOME"); !home.empty()) {
    o.root = fs::path(home) / ".cache" / "opgraph" / "plan_choices";
  }
  const std::string off = env_text("OPGRAPH_DISABLE_PLAN_CHOICES");
  o.disabled = !off.empty() && off != "0";
  return o;
}

CacheEnvironment plan_choice_environment(const std::optional<DeviceProperties>& device) {
  CacheEnvironment full = CacheEnvironment::make(device ? *device : DeviceProperties{}, std::nullopt, std::nullopt);
  CacheEnvironment env;
  env.fields.emplace_back("target", device ? "device" : "host");
  for (auto& [k, v] : full.fields)
    if (k != "nvrtc_version" && k != "driver_version") env.fields.emplace_back(k, v);
  return env;
}

std::string graph_key_hex(std::uint64_t graph_key) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(graph_key));
  return buf;
}

PlanChoiceStore::PlanChoiceStore(PlanChoiceOptions options, const CacheEnvironment& environment)
    : options_(std::move(options)), env_(environment), env_hash_(environment.hash()) {}

fs::path PlanChoiceStore::environment_dir() const { return options_.root / schema_dir_name() / env_hash_; }

fs::path PlanChoiceStore::record_path(std::uint64_t graph_key) const {
  return environment_dir() / (graph_key_hex(graph_key) + ".json");
}

bool PlanChoiceStore::has_environment_dir() const {
  if (!enabled()) return false;
  std::error_code ec;
  return fs::is_directory(environment_dir(), ec);
}

std::optional<PlanChoice> PlanChoiceStore::lookup(std::uint64_t graph_key, std::string* why_out) const {
  std::string why;
  auto doubtful = [&](std::string w) -> std::optional<PlanChoice> {
    log(1, "plan choices: doubtful record " + record_path(graph_key).string() + " (" + w + "), treated as a miss");
    if (why_out) *why_out = std::move(w);
    return std::nullopt;
  };
  if (why_out) why_out->clear();
  if (!enabled()) return std::nullopt;
  const fs::path path = record_path(graph_key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  for (const fs::path& dir : {options_.root, options_.root / schema_dir_name(), environment_dir(), path}) {
    if (Status s = cache_files::check_private(dir, /*missing_ok=*/false); s.is_bad()) return doubtful(s.message());
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return doubtful("cannot read the record");
  auto r = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (r.is_discarded() || !r.is_object()) return doubtful("the record is not a JSON object");
  auto str = [&](const char* k) -> std::optional<std::string> {
    auto it = r.find(k);
    if (it == r.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto schema = r.find("schema");
  if (schema == r.end() || !schema->is_number_integer() || schema->get<std::int64_t>() != kPlanChoiceSchema)
    return doubtful("the record's schema differs");
  if (str("environment") != env_hash_) return doubtful("the record names another device fingerprint");
  if (str("graph_key") != graph_key_hex(graph_key)) return doubtful("the record names another graph key");
  auto id = r.find("engine_id");
  if (id == r.end() || !id->is_number_integer()) return doubtful("the record lacks an integer engine_id");
  auto knobs = str("knobs");
  if (!knobs) return doubtful("the record lacks its knobs");
  PlanChoice c;
  c.engine_id = id->get<std::int64_t>();
  c.knobs = *knobs;
  c.name = str("name").value_or("");
  if (auto m = r.find("median_ms"); m != r.end() && m->is_number()) c.median_ms = m->get<double>();
  if (auto n = r.find("rounds"); n != r.end() && n->is_number_integer()) c.rounds = n->get<std::int64_t>();
  return c;
}

Status PlanChoiceStore::record(std::uint64_t graph_key, const PlanChoice& choice) const {
  if (!enabled()) {
    return {ErrorCode::INVALID_VALUE, options_.root.empty()
                                          ? "the plan-choice file has no location (set OPGRAPH_PLAN_CHOICES or HOME)"
                                          : "plan choices are off (OPGRAPH_DISABLE_PLAN_CHOICES)"};
  }
  const fs::path dir = environment_dir();
  OPGRAPH_CHECK(cache_files::make_dirs(options_.root));
  for (const fs::path& d : {options_.root, options_.root / schema_dir_name(), dir}) {
    OPGRAPH_CHECK(cache_files::make_dirs(d));
    OPGRAPH_CHECK(cache_files::check_private(d, false));
  }
  std::error_code ec;
  if (!fs::exists(dir / cache_files::kEnvironmentFile, ec))
    OPGRAPH_CHECK(cache_files::write_atomic(dir / cache_files::kEnvironmentFile, env_.to_json() + "\n"));
  nlohmann::ordered_json r;
  r["schema"] = kPlanChoiceSchema;
  r["environment"] = env_hash_;
  r["graph_key"] = graph_key_hex(graph_key);
  r["engine_id"] = choice.engine_id;
  r["knobs"] = choice.knobs;
  r["name"] = choice.name;
  r["median_ms"] = choice.median_ms;
  r["rounds"] = choice.rounds;
  return cache_files::write_atomic(record_path(graph_key), r.dump(2) + "\n");
}

}  // namespace opgraph::runtime
