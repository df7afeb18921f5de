// tests/cudnn_gpu/gpu_harness.cpp — run_case(): plan for the device, build the
// first cudnn plan, run it and the reference on the same inputs, compare (see
// gpu_harness.h for the contract and tolerances).
#include "cudnn_gpu/gpu_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "engines/reference/convert.h"
#include "runtime/device.h"

namespace cudnn_gpu {

using namespace opgraph;

const runtime::CudaDriverApi* driver() {
  static const runtime::CudaDriverApi* api = [] {
    auto a = runtime::cuda_driver();
    if (a.is_bad()) return static_cast<const runtime::CudaDriverApi*>(nullptr);
    const auto* d = a.value();
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    if (d->init(0) != CUDA_SUCCESS || d->device_get(&dev, 0) != CUDA_SUCCESS ||
        d->primary_ctx_retain(&ctx, dev) != CUDA_SUCCESS || d->ctx_set_current(ctx) != CUDA_SUCCESS)
      return static_cast<const runtime::CudaDriverApi*>(nullptr);
    return d;
  }();
  return api;
}

DevMem::DevMem(std::size_t bytes)
    : DeviceBuffer(driver() ? DeviceBuffer(*driver(), std::max<std::size_t>((bytes + 3) / 4 * 4, 16)) : DeviceBuffer()) {}

bool unverified_included() {
  const char* v = std::getenv("OPGRAPH_CUDNN_INCLUDE_UNVERIFIED");
  return v && std::string_view(v) == "1";
}

Case transpose_case(Case c) {
  c.expect = Expect::DECLINES;
  c.decline_note = "cudnn heuristics";
  return c;
}

TensorPtr out(TensorPtr t, const char* name, DataType type) {
  t->set_output(true).set_name(name).set_data_type(type);
  return t;
}

namespace {

std::size_t bytes_of(const Tensor& t) {
  return static_cast<std::size_t>(reference::bytes_for_elements(t.get_data_type(), t.element_count()));
}

bool is_integer(DataType t) {
  return t == DataType::INT8 || t == DataType::UINT8 || t == DataType::INT32 || t == DataType::INT64 ||
         t == DataType::BOOLEAN;
}

// Random values for one input tensor, stored in its data type (reference/convert.h rounding).
std::vector<unsigned char> fill(const Case& c, const Tensor& t, std::mt19937& rng) {
  const std::string& name = t.get_name();
  auto it = c.ranges.find(name);
  const DataType dt = t.get_data_type();
  std::pair<double, double> r = it != c.ranges.end()                  ? it->second
                                : is_integer(dt)                      ? std::pair{0.0, 4.0}
                                : dt == DataType::FP8_E8M0            ? std::pair{1.0 / 128, 128.0}
                                : name.find("var") != std::string::npos ? std::pair{0.5, 1.5}
                                                                        : std::pair{-1.0, 1.0};
  std::vector<unsigned char> b(bytes_of(t));
  std::uniform_real_distribution<double> d(r.first, r.second);
  std::uniform_int_distribution<std::int64_t> di(static_cast<std::int64_t>(r.first),
                                                 static_cast<std::int64_t>(r.second) - 1);
  for (std::int64_t i = 0; i < t.element_count(); ++i)
    reference::store_element(b.data(), i, dt, is_integer(dt) ? static_cast<double>(di(rng)) : d(rng));
  return b;
}

// The first planning note of the cudnn provider ("" when none).
std::string cudnn_note(const Graph& g) {
  std::string all;
  for (const auto& n : g.planning_notes())
    if (n.rfind("cudnn: ", 0) == 0) all += (all.empty() ? "" : " | ") + n;
  return all;
}

// Compares one output (element by element in its data type); returns the number of
// bad elements and the worst finite error. Integers compare exactly.
std::pair<std::size_t, double> compare(const Case& c, const Tensor& t, const std::vector<unsigned char>& got,
                                       const std::vector<unsigned char>& want) {
  std::size_t bad = 0;
  double worst = 0;
  const DataType dt = t.get_data_type();
  for (std::int64_t k = 0; k < t.element_count(); ++k) {
    double g = reference::load_element(got.data(), k, dt), w = reference::load_element(want.data(), k, dt);
    double err = std::fabs(g - w);
    bool ok = is_integer(dt) ? g == w : err <= c.atol + c.rtol * std::fabs(w);
    if (!ok) ++bad;
    if (std::isfinite(err)) worst = std::max(worst, err);
  }
  return {bad, worst};
}

}  // namespace

Outcome run_case(const Case& c) {
  SCOPED_TRACE(c.name);
  Outcome o{c.name, "?"};
  auto props = runtime::read_device_properties(0);
  EXPECT_TRUE(props.is_good()) << props.status().to_string();
  if (props.is_bad() || !driver()) return {c.name, "no device"};
  Graph gd;
  Io iod = c.build(gd);
  gd.set_device_properties(props.value());
  Status ps = gd.create_execution_plans({HeurMode::A, HeurMode::FALLBACK});
  EXPECT_TRUE(ps.is_good()) << ps.to_string();
  if (ps.is_bad()) return {c.name, "FAIL planning: " + ps.to_string()};
  std::int64_t listed = 0, bi = -1, refused = 0;
  std::string first_refusal;
  for (std::int64_t i = 0; i < gd.get_execution_plan_count() && bi < 0; ++i) {
    if (gd.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) != 0) continue;
    ++listed;
    Status bs = gd.build_plan_at_index(i);
    if (bs.is_good()) bi = i;
    else if (refused++ == 0) first_refusal = bs.to_string();
  }
  const std::string note = cudnn_note(gd);
  if (c.expect == Expect::RUNS_OR_DECLINES && listed == 0) {
    EXPECT_NE(note.find(c.decline_note), std::string::npos) << "planning notes: " << note;
    EXPECT_GE(gd.get_execution_plan_count(), 1) << "the reference still plans";
    return {c.name, "declined by cuDNN: " + note};
  }
  if (c.expect == Expect::DECLINES) {
    EXPECT_EQ(listed, 0) << "expected a decline, got " << listed << " cudnn plan(s)";
    // A version gate ("needs cuDNN >= X") the loaded cuDNN passes leaves the decision to cuDNN's
    // heuristics (the moe case on the H200 with torch's 9.19: no engine config, 2026-12-02).
    const bool gate_passed = c.decline_note.find("needs cuDNN >=") != std::string::npos &&
                             note.find("needs cuDNN >=") == std::string::npos;
    EXPECT_NE(note.find(gate_passed ? std::string("cudnn heuristics") : c.decline_note), std::string::npos)
        << "planning notes: " << note;
    EXPECT_GE(gd.get_execution_plan_count(), 1) << "the reference still plans";
    return {c.name, listed ? "FAIL: listed " + std::to_string(listed) + " plans" : "declined: " + note};
  }
  EXPECT_GE(bi, 0) << "no cudnn plan built (" << listed << " listed, " << refused << " refused; first: "
                   << first_refusal << "); notes: " << note;
  if (bi < 0) return {c.name, "FAIL no plan: " + (first_refusal.empty() ? note : first_refusal)};
  if (refused) std::printf("%s: %lld backend plan(s) refused to build first: %s\n", c.name.c_str(),
                           static_cast<long long>(refused), first_refusal.c_str());
  return run_and_compare(c, gd, iod, bi);
}

Outcome run_and_compare(const Case& c, Graph& gd, const Io& iod, std::int64_t bi) {
  Outcome o{c.name, "?"};
  Graph gh;
  Io ioh = c.build(gh);
  EXPECT_TRUE(gh.create_execution_plans({HeurMode::FALLBACK}).is_good());
  EXPECT_EQ(gh.get_plan_name_at_index(0).value(), "reference[]");
  EXPECT_TRUE(gh.build_plans().is_good());

  std::mt19937 rng(std::random_device{}());
  std::vector<std::vector<unsigned char>> host_in;
  std::vector<std::unique_ptr<DevMem>> dev;
  VariantPack pd, ph;
  for (std::size_t i = 0; i < iod.inputs.size(); ++i) {
    host_in.push_back(fill(c, *iod.inputs[i], rng));
    dev.push_back(std::make_unique<DevMem>(host_in.back().size()));
    driver()->memcpy_htod(dev.back()->ptr(), host_in.back().data(), host_in.back().size());
    pd.set(iod.inputs[i]->get_uid(), dev.back()->data());
    ph.set(ioh.inputs[i]->get_uid(), host_in.back().data());
  }
  std::vector<std::vector<unsigned char>> want(iod.outputs.size()), got(iod.outputs.size());
  std::vector<CUdeviceptr> out_ptrs;
  for (std::size_t i = 0; i < iod.outputs.size(); ++i) {
    std::size_t n = bytes_of(*iod.outputs[i]);
    want[i].assign(n, 0xFF);
    got[i].assign(n, 0);
    dev.push_back(std::make_unique<DevMem>(n));
    driver()->memset_d32(dev.back()->ptr(), 0xFFFFFFFFu, (n + 3) / 4);  // poison (NaN for FLOAT)
    out_ptrs.push_back(dev.back()->ptr());
    pd.set(iod.outputs[i]->get_uid(), dev.back()->data());
    ph.set(ioh.outputs[i]->get_uid(), want[i].data());
  }
  auto ws = gd.get_workspace_size_plan_at_index(bi);
  EXPECT_TRUE(ws.is_good());
  DevMem wsm(static_cast<std::size_t>(ws.value()));
  Status es = gd.execute_plan_at_index(pd, Workspace{wsm.data(), ws.value()}, bi, nullptr);
  EXPECT_TRUE(es.is_good()) << es.to_string();
  if (es.is_bad()) return {c.name, "FAIL execute: " + es.to_string()};
  EXPECT_EQ(driver()->ctx_synchronize(), CUDA_SUCCESS);
  Status hs = gh.execute(ph);
  EXPECT_TRUE(hs.is_good()) << hs.to_string();
  const std::string plan = gd.get_plan_name_at_index(bi).value();
  std::printf("%-30s ran on %s (plan %lld of %lld), workspace %lld B\n", c.name.c_str(), plan.c_str(),
              static_cast<long long>(bi), static_cast<long long>(gd.get_execution_plan_count()),
              static_cast<long long>(ws.value()));
  o.what = "ran on " + plan;
  for (std::size_t i = 0; i < iod.outputs.size(); ++i) {
    EXPECT_EQ(driver()->memcpy_dtoh(got[i].data(), out_ptrs[i], got[i].size()), CUDA_SUCCESS);
    auto [bad, worst] = compare(c, *iod.outputs[i], got[i], want[i]);
    EXPECT_EQ(bad, 0u) << "output '" << iod.outputs[i]->get_name() << "': " << bad << " of "
                       << iod.outputs[i]->element_count() << " elements off (max err " << worst << ")";
    if (bad) o.what += "; MISMATCH " + iod.outputs[i]->get_name() + " " + std::to_string(bad) + " off";
  }
  return o;
}

}  // namespace cudnn_gpu
