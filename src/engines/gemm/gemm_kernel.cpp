// engines/gemm/gemm_kernel.cpp — knob domains, the heuristic pick, the
// specialisation prelude (with the generated epilogue) and the launch geometry.
#include "engines/gemm/gemm_kernel.h"

#include <algorithm>
#include <charconv>

namespace opgraph::gemm {
namespace {

int code_of(DataType d) { return d == DataType::BFLOAT16 ? 0 : d == DataType::HALF ? 1 : 2; }
const char* short_name(DataType d) { return d == DataType::BFLOAT16 ? "bf16" : d == DataType::HALF ? "f16" : "f32"; }

std::string exact(double v) {
  char buf[40];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

View swapped(const View& v) { return View{v.uid, v.dtype, v.s0, v.s1, v.sc, v.sr}; }

}  // namespace

std::vector<KnobDomain> knob_domains() {
  return {{KnobType::PIPELINE_ARCH, {1}}, {KnobType::TILE_M, {128, 64}},    {KnobType::TILE_N, {128, 64}},
          {KnobType::STAGES, {3, 2, 4}},  {KnobType::CLUSTER_M, {1}},       {KnobType::CLUSTER_N, {1}},
          {KnobType::SWAP_AB, {0, 1}},    {KnobType::RASTER_ORDER, {0, 1}}};
}

Result<GemmConfig> config_from_knobs(const Knobs& knobs) {
  for (const auto& d : knob_domains()) {
    auto it = knobs.find(d.type);
    if (it == knobs.end()) return Status(ErrorCode::INVALID_VALUE, "engine gemm: knob " + to_string(d.type) + " is not set");
    if (std::find(d.values.begin(), d.values.end(), it->second) == d.values.end())
      return Status(ErrorCode::INVALID_VALUE, "engine gemm: " + to_string(d.type) + "=" + std::to_string(it->second) +
                                                  " is outside its domain");
  }
  GemmConfig c;
  c.version = static_cast<int>(knobs.at(KnobType::PIPELINE_ARCH));
  c.tile_m = static_cast<int>(knobs.at(KnobType::TILE_M));
  c.tile_n = static_cast<int>(knobs.at(KnobType::TILE_N));
  c.stages = static_cast<int>(knobs.at(KnobType::STAGES));
  c.cluster_m = static_cast<int>(knobs.at(KnobType::CLUSTER_M));
  c.cluster_n = static_cast<int>(knobs.at(KnobType::CLUSTER_N));
  c.swap_ab = knobs.at(KnobType::SWAP_AB) != 0;
  c.raster = static_cast<int>(knobs.at(KnobType::RASTER_ORDER));
  return c;
}

Knobs knobs_of(const GemmConfig& c) {
  return {{KnobType::PIPELINE_ARCH, c.version}, {KnobType::TILE_M, c.tile_m},     {KnobType::TILE_N, c.tile_n},
          {KnobType::STAGES, c.stages},         {KnobType::CLUSTER_M, c.cluster_m}, {KnobType::CLUSTER_N, c.cluster_n},
          {KnobType::SWAP_AB, c.swap_ab ? 1 : 0}, {KnobType::RASTER_ORDER, c.raster}};
}

GemmConfig pick_config(const GemmProblem& p, int sm_count, bool fallback) {
  GemmConfig c;
  if (fallback) {
    c.tile_m = c.tile_n = 64;
    c.stages = 2;
    return c;
  }
  // Unmeasured first rules (bench/gemm_h200.sh will replace them): small
  // extents take 64-wide tiles; too few 128x128 tiles to fill the SMs take
  // 64 along the longer axis; the element-wise class gains nothing from depth.
  c.tile_m = p.m <= 64 ? 64 : 128;
  c.tile_n = p.n <= 64 ? 64 : 128;
  const std::int64_t tiles = ((p.m + 127) / 128) * ((p.n + 127) / 128) * p.batch0 * p.batch1;
  if (tiles < std::max(sm_count, 1) && c.tile_m == 128 && c.tile_n == 128) {
    if (p.m >= p.n) c.tile_m = 64;
    else c.tile_n = 64;
  }
  c.stages = p.vec == 8 ? 3 : 2;
  return c;
}

std::vector<GemmConfig> proposable_configs() {
  std::vector<GemmConfig> out;
  for (int tm : {128, 64})
    for (int tn : {128, 64})
      for (int st : {3, 2}) {
        GemmConfig c;
        c.tile_m = tm;
        c.tile_n = tn;
        c.stages = st;
        out.push_back(c);
      }
  return out;
}

GemmProblem kernel_view(const GemmProblem& p, const GemmConfig& c) {
  if (!c.swap_ab) return p;
  GemmProblem k = p;
  k.a = swapped(p.b);
  k.b = swapped(p.a);
  k.c = swapped(p.c);
  k.a_kmajor = p.b_kmajor;
  k.b_kmajor = p.a_kmajor;
  k.m = p.n;
  k.n = p.m;
  for (auto& o : k.operands) o.view = swapped(o.view);
  return k;
}

std::string epilogue_body(const GemmProblem& p) {
  std::string s = "{";
  for (const auto& st : p.steps) {
    std::string operand;
    if (st.operand >= 0) {
      const auto& o = p.operands[static_cast<std::size_t>(st.operand)];
      const std::string i = std::to_string(st.operand);
      operand = o.by_value ? "static_cast<float>(p.scalar[" + i + "])"
                           : "opgraph_gemm::epi_load<" + std::to_string(code_of(o.view.dtype)) + ">(p.epi[" + i +
                                 "], b0, b1, m, n)";
    }
    s += " /* " + std::string(to_string(st.kind)) + " '" + st.node + "' */ ";
    switch (st.kind) {
      case EpiKind::ADD: s += "x = x + " + operand + ";"; break;
      case EpiKind::MUL: s += "x = x * " + operand + ";"; break;
      case EpiKind::RELU: s += "x = opgraph_gemm::relu(x);"; break;
      case EpiKind::GELU: s += "x = opgraph_gemm::gelu(x);"; break;
      case EpiKind::GELU_TANH: s += "x = opgraph_gemm::gelu_tanh(x);"; break;
      case EpiKind::SWISH: s += "x = opgraph_gemm::swish(x, " + exact(st.beta) + "f);"; break;
      case EpiKind::SIGMOID: s += "x = opgraph_gemm::sigmoid(x);"; break;
      case EpiKind::TANH: s += "x = tanhf(x);"; break;
      case EpiKind::IDENTITY: s += "(void)0;"; break;
    }
  }
  return s + " }";
}

runtime::KernelRequest kernel_request(const GemmProblem& p, const GemmConfig& c) {
  const GemmProblem k = kernel_view(p, c);
  runtime::KernelRequest r;
  r.family = "gemm";
  std::string chain;
  for (const auto& st : p.steps) chain += "_" + std::string(to_string(st.kind));
  r.kernel = "v" + std::to_string(c.version) + "_" + short_name(p.in) + "_" + short_name(p.out) + "_" +
             (k.a_kmajor ? "t" : "n") + (k.b_kmajor ? "t" : "n") + "_vec" + std::to_string(k.vec) + "_" +
             std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) + "s" + std::to_string(c.stages) + "r" +
             std::to_string(c.raster) + chain;
  r.source = "gemm/kernels/gemm_v" + std::to_string(c.version) + ".cu";
  r.entry = "gemm_v" + std::to_string(c.version);
  r.defines = {{"OPGRAPH_GEMM_IN", std::to_string(code_of(p.in))},
               {"OPGRAPH_GEMM_OUT", std::to_string(code_of(p.out))},
               {"OPGRAPH_GEMM_A_KMAJOR", k.a_kmajor ? "1" : "0"},
               {"OPGRAPH_GEMM_B_KMAJOR", k.b_kmajor ? "1" : "0"},
               {"OPGRAPH_GEMM_VEC", std::to_string(k.vec)},
               {"OPGRAPH_GEMM_TILE_M", std::to_string(c.tile_m)},
               {"OPGRAPH_GEMM_TILE_N", std::to_string(c.tile_n)},
               {"OPGRAPH_GEMM_STAGES", std::to_string(c.stages)},
               {"OPGRAPH_GEMM_RASTER", std::to_string(c.raster)},
               {"OPGRAPH_GEMM_EPILOGUE_BODY", epilogue_body(k)}};
  return r;
}

unsigned smem_bytes(const GemmProblem& p, const GemmConfig& c) {
  const GemmProblem k = kernel_view(p, c);
  constexpr int bk = 32, pad = 8;
  const int a = k.a_kmajor ? c.tile_m * (bk + pad) : bk * (c.tile_m + pad);
  const int b = k.b_kmajor ? c.tile_n * (bk + pad) : bk * (c.tile_n + pad);
  return static_cast<unsigned>(c.stages * (a + b) * 2);
}

void grid_of(const GemmProblem& kp, const GemmConfig& c, unsigned grid[3], unsigned block[3]) {
  const std::int64_t tiles = ((kp.m + c.tile_m - 1) / c.tile_m) * ((kp.n + c.tile_n - 1) / c.tile_n);
  grid[0] = static_cast<unsigned>(std::max<std::int64_t>(tiles, 1));
  grid[1] = static_cast<unsigned>(kp.batch0 * kp.batch1);
  grid[2] = 1;
  block[0] = 128;
  block[1] = block[2] = 1;
}

}  // namespace opgraph::gemm
