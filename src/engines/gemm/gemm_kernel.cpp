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
  return {{KnobType::PIPELINE_ARCH, {1, 2}},    {KnobType::TILE_M, {128, 64, 256}},
          {KnobType::TILE_N, {128, 64, 256, 32, 16, 176, 320}}, {KnobType::STAGES, {3, 2, 4, 5, 6, 8}},
          {KnobType::CLUSTER_M, {1, 2}},        {KnobType::CLUSTER_N, {1}},
          {KnobType::SWAP_AB, {0, 1}},          {KnobType::RASTER_ORDER, {0, 1}},
          {KnobType::SPLIT_K_SLC, {1, 2, 3, 4, 5, 6, 7, 8}}, {KnobType::STREAM_K, {0, 1}},
          {KnobType::WARP_SPEC_CFG, {0, 1}}};
}

namespace {

// v2 dynamic shared memory (bytes), mirroring gemm_v2.cu's gemm_v2_smem_bytes:
// the ring, 1024 bytes of alignment slack, 256 of barriers, and the epilogue's
// region: the staging (24 floats per row of each consumer warp's 16-row slab
// per 64-row block it holds: 8 warps x 16 x blocks rows) or EPI_TMA's copy of
// `copy_boxes` 64-column boxes (tile_m x 128 bytes each), whichever is larger.
unsigned v2_smem(int tile_m, int tile_n, int stages, int pingpong, int copy_boxes = 0) {
  const int blocks = pingpong ? tile_m / 64 : tile_m / 128;  // 64-row blocks one consumer warpgroup holds
  const int staging = 8 * 16 * blocks * 24 * 4, copy = copy_boxes * tile_m * 128;
  return static_cast<unsigned>(stages * (tile_m * 64 * 2 + tile_n * 64 * 2) + 1024 + 256 +
                               (copy > staging ? copy : staging));
}
constexpr unsigned kMaxSmem = 232448 - 64;  // 227 KiB less the kernel's static flags

Status bad_combo(const GemmConfig& c, const std::string& why) {
  return {ErrorCode::INVALID_VALUE, "engine gemm: PIPELINE_ARCH=" + std::to_string(c.version) + " with TILE_M=" +
                                        std::to_string(c.tile_m) + " TILE_N=" + std::to_string(c.tile_n) +
                                        " STAGES=" + std::to_string(c.stages) + " CLUSTER_M=" +
                                        std::to_string(c.cluster_m) + " SPLIT_K_SLC=" + std::to_string(c.split_k) +
                                        ": " + why};
}

// Fraction of the last wave's SMs kept busy by `units` work units.
double wave_efficiency(std::int64_t units, int sms) {
  const std::int64_t waves = (units + sms - 1) / sms;
  return waves == 0 ? 0.0 : static_cast<double>(units) / static_cast<double>(waves * sms);
}

int v2_stages_for(int tile_n) {
  return tile_n == 320 ? 3 : tile_n == 256 ? 4 : tile_n == 176 ? 5 : tile_n == 128 ? 6 : 8;
}
// The ring beside EPI_TMA's 16-bit copy of the tile (128, 176, 256, 320
// wide): 128 x 256 keeps 4 stages, its copy holding two of the tile's four
// boxes (stored in two passes), 128 x 320 its 3 (three of five boxes), 176
// and 128 give up one stage for the whole copy.
// Measured on the H200 (bench/results/2026-12-01-gemm-s8-h200.txt, run S8-1,
// TFLOP/s in one run): 128 x 256 with 4 stages against 3 and the whole copy,
// 1024x4096x4096 739.1 / 698.9, 4096x8192x28672 705.9 / 687.8, 4096^3 + bias
// + gelu 661.5 / 643.4, none of the 16 LLM shapes more than 1% below; 176
// and 128 with the extra stage (a two-pass copy, the whole one) no faster.
int v2_epi_stages_for(int tile_n) {
  return tile_n == 256 || tile_n == 320 ? v2_stages_for(tile_n) : v2_stages_for(tile_n) - 1;
}

}  // namespace

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
  c.split_k = static_cast<int>(knobs.at(KnobType::SPLIT_K_SLC));
  c.stream_k = static_cast<int>(knobs.at(KnobType::STREAM_K));
  c.pingpong = static_cast<int>(knobs.at(KnobType::WARP_SPEC_CFG));
  if (c.version == 1) {
    if (c.tile_n != 64 && c.tile_n != 128) return bad_combo(c, "v1 tiles are 64 or 128 wide");
    if (c.stages > 4) return bad_combo(c, "v1 rings are 2..4 deep");
    if (c.split_k != 1) return bad_combo(c, "v1 does not split K");
    if (c.cluster_m != 1) return bad_combo(c, "v1 launches no clusters");
    if (c.stream_k != 0) return bad_combo(c, "v1 has no persistent schedule (STREAM_K=0)");
    if (c.pingpong != 0) return bad_combo(c, "v1 has no warp specialisation (WARP_SPEC_CFG=0)");
  } else {
    if (c.tile_m != 128 && !(c.tile_m == 64 && c.pingpong != 0) && !(c.tile_m == 256 && c.pingpong == 0 && c.tile_n <= 128))
      return bad_combo(c, "v2 tiles are 128 rows (two consumer warpgroups of 64), 64 with WARP_SPEC_CFG=1 (ping-pong), "
                          "or 256 cooperative (two warpgroups of 128) with TILE_N <= 128");
    if (c.tile_m != 128 && c.cluster_m != 1) return bad_combo(c, "CLUSTER_M=2 pairs 128-row tiles");
    if ((c.tile_n == 176 || c.tile_n == 320) && (c.tile_m != 128 || c.cluster_m != 1 || c.pingpong != 0))
      return bad_combo(c, "TILE_N=" + std::to_string(c.tile_n) + " runs 128-row cooperative tiles without CTA pairs");
    if (v2_smem(c.tile_m, c.tile_n, c.stages, c.pingpong) > kMaxSmem)
      return bad_combo(c, "the ring exceeds 227 KiB of shared memory");
    if (c.stream_k != 0 && c.split_k != 1) return bad_combo(c, "STREAM_K=1 splits the last wave only: SPLIT_K_SLC=1");
    if (c.pingpong != 0 && c.tile_m * c.tile_n > 128 * 128)
      return bad_combo(c, "WARP_SPEC_CFG=1 (ping-pong) holds a whole tile per warpgroup: TILE_M x TILE_N <= 128 x 128");
  }
  return c;
}

Knobs knobs_of(const GemmConfig& c) {
  return {{KnobType::PIPELINE_ARCH, c.version}, {KnobType::TILE_M, c.tile_m},     {KnobType::TILE_N, c.tile_n},
          {KnobType::STAGES, c.stages},         {KnobType::CLUSTER_M, c.cluster_m}, {KnobType::CLUSTER_N, c.cluster_n},
          {KnobType::SWAP_AB, c.swap_ab ? 1 : 0}, {KnobType::RASTER_ORDER, c.raster},
          {KnobType::SPLIT_K_SLC, c.split_k}, {KnobType::STREAM_K, c.stream_k},
          {KnobType::WARP_SPEC_CFG, c.pingpong}};
}

bool config_takes(const GemmProblem& p, const GemmConfig& c) {
  if (c.version != 2) return true;
  const GemmProblem k = kernel_view(p, c);
  constexpr std::int64_t kIntMax = 0x7fffffff;
  if (k.vec != 8 || (c.tile_m != 128 && c.tile_m != 64 && c.tile_m != 256)) return false;
  if (!k.b_kmajor && (c.tile_n < 64 * c.cluster_m || c.tile_n % 64 != 0)) return false;  // whole 64-wide boxes per CTA
  for (std::int64_t e : {k.m, k.n, k.k, k.batch0, k.batch1})
    if (e > kIntMax - 256) return false;
  return true;
}

GemmConfig pick_config(const GemmProblem& p, int sm_count, bool fallback, bool hopper) {
  GemmConfig c;
  if (fallback) {
    c.tile_m = c.tile_n = 64;
    c.stages = 2;
    return c;
  }
  const int sms = std::max(sm_count, 1);
  if (hopper) {
    // v2. Small M with a wide N: swap, so the graph's N fills wgmma's 64-row M.
    GemmConfig v;
    v.version = 2;
    v.swap_ab = p.m <= 64 && p.n >= 256;
    const GemmProblem k = kernel_view(p, v);
    const std::int64_t batch = k.batch0 * k.batch1, tiles_m = (k.m + 127) / 128;
    auto tiles = [&](int tn) { return tiles_m * ((k.n + tn - 1) / tn) * batch; };
    if (k.n <= 16) v.tile_n = 16;
    else if (k.n <= 32) v.tile_n = 32;
    else if (k.n <= 64) v.tile_n = 64;
    else if (k.n <= 128) v.tile_n = 128;
    else v.tile_n = wave_efficiency(tiles(256), sms) + 0.1 >= wave_efficiency(tiles(128), sms) ? 256 : 128;
    // 176 wide (a K-major B, through EPI_TMA) where its tiles fill the waves
    // clearly better: each tile width scored by its last-wave efficiency
    // times the share of its columns inside N, times its speed on whole
    // waves relative to 128 x 256 (0.975 for 128 x 176, 0.97 for 128 x 128:
    // measured on the H200, bench/results/2026-11-30-gemm-s7-h200.txt, run
    // S7-4, e.g. 4096x14336x4096 671.3 against 675.6 TFLOP/s at waves 0.994
    // against 0.970). It takes 1024x14336x4096: 0.987 of 176's waves against
    // 0.970 of 128's, 723.6 against 707.0, and + bias + gelu 705.7 against
    // ~640 for ping-pong 128 x 128; where the scores are within 0.01 the
    // established tile stays (4096x14336x4096, 1024x28672x8192: ties).
    if (v.tile_n >= 128 && k.b_kmajor) {
      auto score = [&](int tn, double speed) {
        const std::int64_t cols = (k.n + tn - 1) / tn * tn;
        return wave_efficiency(tiles(tn), sms) * static_cast<double>(k.n) / static_cast<double>(cols) * speed;
      };
      GemmConfig w = v;
      w.tile_n = 176;
      w.stages = v2_epi_stages_for(176);
      const double now = v.tile_n == 256 ? score(256, 1.0) : score(128, 0.97);
      if (tiles(176) >= sms && v2_epi_tma(k, w) && score(176, 0.975) > now + 0.01) v.tile_n = 176;
    }
    const int plain_tn = v.tile_n;
    // An epilogue chain: 128 wide where that gives ping-pong (at least two
    // tiles per SM, rule below), which hides the chain under the other
    // warpgroup's mainloop (measured on the H200,
    // bench/results/2026-11-30-gemm-s5-h200.txt, run S5-9: 4096^3 + bias +
    // gelu 655.6 TFLOP/s ping-pong 128x128 against 633.6 cooperative
    // 128x256; plain, the two schedules tie within 1%). Fewer tiles keep 256
    // (cooperative 128x128 is the slowest schedule: 1024x4096x4096 676.5
    // against 709.0 at 128x256, same run).
    if (!p.steps.empty() && v.tile_n == 256 && tiles(128) >= 2 * static_cast<std::int64_t>(sms)) v.tile_n = 128;
    // A chain that loads tensor operands: at most 128 wide (measured before
    // the staged epilogue: 4096^3 + bias + gelu 384 TFLOP/s at 128x256, 549
    // at 128x128, the operand loads and 128 accumulators spilled).
    for (const auto& o : p.operands)
      if (!o.by_value) v.tile_n = std::min(v.tile_n, 128);
    if (!k.b_kmajor) v.tile_n = std::max(v.tile_n, 64);
    v.stages = v2_stages_for(v.tile_n);
    // Fewer tiles than SMs: split K so the units fill one wave (measured on
    // the H200, bench/results/2026-11-30-gemm-v2-h200.txt: a split past one
    // wave, e.g. 7 x 112 tiles, costs up to 3x), each split >= 4 K blocks.
    const std::int64_t t = tiles(v.tile_n), kblocks = (k.k + 63) / 64;
    if (t < sms) v.split_k = static_cast<int>(std::clamp<std::int64_t>(std::min(sms / t, kblocks / 4), 1, 8));
    // 128 wide with at least two tiles per SM: ping-pong, so one warpgroup's
    // epilogue runs under the other's mainloop (measured on the H200,
    // bench/results/2026-11-30-gemm-s4-h200.txt, run S4-6: 4096^3 + bias +
    // gelu 601.8 TFLOP/s against 508.8 cooperative; 1024x14336x4096 638.4
    // against 583.5; run S4-4: 256-wide cooperative + bias + gelu 504.5).
    if (v.tile_n == 128 && v.split_k == 1 && t >= 2 * static_cast<std::int64_t>(sms)) v.pingpong = 1;
    // EPI_TMA (a 16-bit output the TMA can store; measured on the H200,
    // bench/results/2026-11-30-gemm-s6-h200.txt, TFLOP/s in one run each):
    // - no chain: the cooperative schedule with the 16-bit copy beside the
    //   ring (v2_epi_stages_for: 128 x 256 with 4 stages and a two-box copy,
    //   128 x 128 with 5, also in place of ping-pong). Run S6-3 (128 x 256
    //   then with 3 stages): 4096^3 698.6 against 664.8 staged (128 x 256,
    //   4 stages), 4096x14336x4096 698.7 against 645.3, 1024x14336x4096
    //   747.1 (128 x 128) against 720.0 ping-pong.
    // - a chain whose operands are by value or broadcast along M or N (a
    //   bias), where the plain rule is 256 wide in whole waves: 128 x 256,
    //   the chain in registers. Run S6-6 against ping-pong
    //   128 x 128: 4096^3 + bias + gelu 680.9 / 674.9 against 668.6 / 660.9,
    //   8192^3 687.2 against 647.2, 4096x14336x4096 642.3 against 611.6.
    //   Where the plain rule is 128 wide a chain keeps ping-pong
    //   (1024x14336x4096 + bias + gelu 643.8 against 577.2), and a
    //   full-tensor operand keeps the rules above.
    bool light = true;  // every operand of the chain by value or broadcast along M or N
    for (const auto& o : p.operands) light = light && (o.by_value || o.view.sr == 0 || o.view.sc == 0);
    const bool chained = !p.steps.empty();
    const bool wide = plain_tn == 256 || plain_tn == 176;
    if (v.split_k == 1 && (chained ? wide && light && tiles(plain_tn) >= sms : v.tile_n >= 128)) {
      GemmConfig e = v;
      if (chained) e.tile_n = plain_tn;
      e.pingpong = 0;
      e.stages = v2_epi_stages_for(e.tile_n);
      if (v2_epi_tma(k, e)) v = e;
    }
    // STREAM_K (the tiles past the last whole wave shared out by K blocks)
    // where the schedule has at least 10 waves, no chain and EPI_TMA's
    // store: on the H200, bench/results/2026-12-01-gemm-s10-h200.txt,
    // run S10-1 (three rounds, 128 x 256 EPI_TMA, medians) +0.8..+2.8% on
    // 9 of 10 such shapes
    // (16384x4096x14336 729.7 against 710.7, 8192^3 732.3 against 717.0;
    // 4096x14336x4096 -0.6%, inside its spread), geomean +1.4%; with fewer
    // waves it loses (8192x4096x4096, 7.8 waves: -2.2%; run S9-1: up to -33%
    // at 3.9 waves with K = 14336, where the pooled phase is long and its
    // CTAs stop sharing A and B panels in L2). Unmeasured with a chain: off.
    if (!chained && v.split_k == 1 && v.pingpong == 0 && v.tile_m == 128 && v.tile_n >= 176 && v2_epi_tma(k, v) &&
        tiles(v.tile_n) >= 10 * static_cast<std::int64_t>(sms))
      v.stream_k = 1;
    if (config_takes(p, v)) return v;
  }
  // v1 (unmeasured first rules): small extents take 64-wide tiles; too few
  // 128x128 tiles to fill the SMs take 64 along the longer axis.
  c.tile_m = p.m <= 64 ? 64 : 128;
  c.tile_n = p.n <= 64 ? 64 : 128;
  const std::int64_t tiles = ((p.m + 127) / 128) * ((p.n + 127) / 128) * p.batch0 * p.batch1;
  if (tiles < sms && c.tile_m == 128 && c.tile_n == 128) {
    if (p.m >= p.n) c.tile_m = 64;
    else c.tile_n = 64;
  }
  c.stages = p.vec == 8 ? 3 : 2;
  return c;
}

ShapeClass shape_class(const GemmProblem& p) {
  if (p.m <= 64) return ShapeClass::DECODE;
  if (p.m <= 256) return ShapeClass::SMALL;
  return p.k < 8192 ? ShapeClass::LARGE_SHORT_K : ShapeClass::LARGE_LONG_K;
}

const char* to_string(ShapeClass c) {
  switch (c) {
    case ShapeClass::DECODE: return "decode (M <= 64)";
    case ShapeClass::SMALL: return "small (64 < M <= 256)";
    case ShapeClass::LARGE_SHORT_K: return "large, K < 8192";
    case ShapeClass::LARGE_LONG_K: return "large, K >= 8192";
  }
  return "?";
}

// Measured on the H200 (bench/results/2026-11-30-gemm-v2-h200.txt, gemm_v2's
// pick against the cudnn family's best plan, same run, bf16, Linear layout):
// ours ranks first only in a class where it leads by more than the run-to-run
// spread (about 5%). Re-measured in -gemm-s5-h200.txt run S5-9: class geomeans
// 0.97 / 0.93 / 0.88 / 0.98, cuDNN still leads in every class.
bool ours_first(ShapeClass c) {
  switch (c) {
    case ShapeClass::DECODE: return false;
    case ShapeClass::SMALL: return false;
    case ShapeClass::LARGE_SHORT_K: return false;
    case ShapeClass::LARGE_LONG_K: return false;
  }
  return false;
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
  for (int tn : {256, 128, 64, 32, 16}) {
    GemmConfig c;
    c.version = 2;
    c.tile_n = tn;
    c.stages = v2_stages_for(tn);
    out.push_back(c);
    if (tn >= 128) {
      c.cluster_m = 2;
      out.push_back(c);
      c.cluster_m = 1;
    }
    if (tn == 128 || tn == 64) {
      c.pingpong = 1;
      out.push_back(c);
    }
    if ((tn == 256 || tn == 128) && v2_epi_stages_for(tn) != c.stages) {  // 128: one stage less for EPI_TMA's copy
      GemmConfig t = c;
      t.stages = v2_epi_stages_for(tn);
      t.pingpong = 0;
      out.push_back(t);
    }
    if (tn == 128) {  // cooperative 256 x 128: 128 rows per warpgroup (two m64n128 wgmmas per k16 step)
      GemmConfig t = c;
      t.tile_m = 256;
      t.stages = 4;
      t.pingpong = 0;
      out.push_back(t);
    }
    if (tn == 256) {
      GemmConfig t = c;  // STREAM_K with EPI_TMA's stages: the pick from 10 waves on
      t.stages = v2_epi_stages_for(tn);
      t.stream_k = 1;
      out.push_back(t);
      GemmConfig w = c;  // ping-pong 64 x 256: one m64n256 wgmma per k16 step
      w.tile_m = 64;
      w.stages = 5;
      w.pingpong = 1;
      out.push_back(w);
    }
  }
  // 176 wide (a K-major B): 5 stages, and 4 with EPI_TMA's copy.
  GemmConfig w;
  w.version = 2;
  w.tile_n = 176;
  for (int st : {v2_stages_for(176), v2_epi_stages_for(176)}) {
    w.stages = st;
    out.push_back(w);
  }
  w.stages = v2_epi_stages_for(176);  // the pick's STREAM_K rule on a 176-wide pick
  w.stream_k = 1;
  out.push_back(w);
  w.stream_k = 0;
  // 320 wide (an n256 and an n64 wgmma per K step): 3 stages, for autotuners
  // (the heuristic does not take it: run S8-3 measured it below 128 x 256).
  w.tile_n = 320;
  w.stages = v2_stages_for(320);
  out.push_back(w);
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
      // A broadcast axis (stride 0) is part of the layout class: its load
      // form drops that coordinate.
      const std::string t = std::to_string(code_of(o.view.dtype));
      // A unit stride along the coordinate the form keeps is part of the
      // class too (its "_unit" form adds that coordinate as an offset).
      const std::string row = o.view.sc == 1 ? "_unit<" : "<", col = o.view.sr == 1 ? "_unit<" : "<";
      if (o.by_value) operand = "static_cast<float>(p.scalar[" + i + "])";
      else if (o.view.sr == 0) operand = "opgraph_gemm::epi_load_row" + row + t + ">(p.epi[" + i + "], b0, b1, n)";
      else if (o.view.sc == 0) operand = "opgraph_gemm::epi_load_col" + col + t + ">(p.epi[" + i + "], b0, b1, m)";
      else operand = "opgraph_gemm::epi_load" + row + t + ">(p.epi[" + i + "], b0, b1, m, n)";
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
             std::to_string(c.raster) + (c.cluster_m > 1 ? "c" + std::to_string(c.cluster_m) : "") +
             (c.pingpong ? "pp" : "") + chain;
  r.source = "gemm/kernels/gemm_v" + std::to_string(c.version) + ".cu";
  r.entry = "gemm_v" + std::to_string(c.version);
  if (c.version == 2) {
    const int epi_boxes = v2_epi_boxes(k, c);
    r.defines = {{"OPGRAPH_GEMM_IN", std::to_string(code_of(p.in))},
                 {"OPGRAPH_GEMM_OUT", std::to_string(code_of(p.out))},
                 {"OPGRAPH_GEMM_A_KMAJOR", k.a_kmajor ? "1" : "0"},
                 {"OPGRAPH_GEMM_B_KMAJOR", k.b_kmajor ? "1" : "0"},
                 {"OPGRAPH_GEMM_TILE_N", std::to_string(c.tile_n)},
                 {"OPGRAPH_GEMM_STAGES", std::to_string(c.stages)},
                 {"OPGRAPH_GEMM_RASTER", std::to_string(c.raster)},
                 {"OPGRAPH_GEMM_CLUSTER_M", std::to_string(c.cluster_m)},
                 {"OPGRAPH_GEMM_PINGPONG", std::to_string(c.pingpong)},
                 {"OPGRAPH_GEMM_TILE_M", std::to_string(c.tile_m)},
                 {"OPGRAPH_GEMM_EPI_TMA", std::to_string(epi_boxes)},
                 {"OPGRAPH_GEMM_EPILOGUE_BODY", epilogue_body(k)}};
    if (epi_boxes > 0) r.kernel += "_et";
    if (epi_boxes > 0 && epi_boxes < (c.tile_n + 63) / 64) r.kernel += std::to_string(epi_boxes);
    return r;
  }
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

int v2_epi_boxes(const GemmProblem& kp, const GemmConfig& c) {
  if (!(c.version == 2 && c.pingpong == 0 && c.tile_m == 128 && c.tile_n >= 64 && kp.out != DataType::FLOAT &&
        kp.c.sc == 1))
    return 0;
  // The tile's 64-column boxes (176 wide: three, the last overlapping), or as
  // many as fit beside the ring (written and stored in passes).
  const int tile_boxes = (c.tile_n + 63) / 64;
  int boxes = tile_boxes;
  while (boxes > 0 && v2_smem(c.tile_m, c.tile_n, c.stages, 0, boxes) > kMaxSmem) --boxes;
  return boxes;
}

bool v2_epi_tma(const GemmProblem& kp, const GemmConfig& c) { return v2_epi_boxes(kp, c) > 0; }

unsigned smem_bytes(const GemmProblem& p, const GemmConfig& c) {
  if (c.version == 2)
    return v2_smem(c.tile_m, c.tile_n, c.stages, c.pingpong, v2_epi_boxes(kernel_view(p, c), c));
  const GemmProblem k = kernel_view(p, c);
  constexpr int bk = 32, pad = 8;
  const int a = k.a_kmajor ? c.tile_m * (bk + pad) : bk * (c.tile_m + pad);
  const int b = k.b_kmajor ? c.tile_n * (bk + pad) : bk * (c.tile_n + pad);
  return static_cast<unsigned>(c.stages * (a + b) * 2);
}

namespace {
// Workspace slots of the split-K scratch (CTA tiles: a pair's two tiles each
// have their own): uniform, one per split of every split tile; stream-K, one
// per (tile, cluster) piece, at most split tiles + resident clusters
// (gemm_sched.cuh: slot t + c).
std::int64_t v2_split_slots(const GemmConfig& c, const V2Schedule& s) {
  const std::int64_t split_tiles = s.tiles - s.split_from;
  return (s.stream ? split_tiles + s.resident : split_tiles * s.splits) * c.cluster_m;
}
}  // namespace

std::int64_t v2_splits(const GemmProblem& kp, const GemmConfig& c) {
  const std::int64_t kblocks = (kp.k + 63) / 64;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(c.split_k, kblocks));
}

std::int64_t v2_kernel_splits(const V2Schedule& s) { return s.stream ? 1 : s.splits; }
std::int64_t v2_schedule_flags(const V2Schedule& s) { return s.stream ? opgraph_gemm::kFlagStreamK : 0; }

GemmV2Params launch_params(const GemmProblem& kp, const V2Schedule& s) {
  GemmV2Params g{};
  auto op = [](const View& v) { return GemmOperand{0, v.s0, v.s1, v.sr, v.sc}; };
  GemmParams& p = g.problem;
  p.a = op(kp.a);
  p.b = op(kp.b);
  p.c = op(kp.c);
  for (std::size_t i = 0; i < kp.operands.size() && i < static_cast<std::size_t>(kMaxEpilogueOperands); ++i) {
    if (kp.operands[i].by_value) p.scalar[i] = kp.operands[i].value;
    else p.epi[i] = op(kp.operands[i].view);
  }
  p.m = kp.m;
  p.n = kp.n;
  p.k = kp.k;
  p.batch0 = kp.batch0;
  p.batch1 = kp.batch1;
  g.splits = v2_kernel_splits(s);
  g.split_from = s.split_from;
  g.flags = v2_schedule_flags(s);
  return g;
}

opgraph_gemm_sched::Sched v2_sched_args(const V2Schedule& s, std::int64_t kblocks) {
  return {s.tiles, kblocks, v2_kernel_splits(s), s.split_from, s.resident, s.stream};
}

V2Schedule v2_schedule(const GemmProblem& kp, const GemmConfig& c, int sm_count, int max_clusters) {
  V2Schedule s;
  const std::int64_t rows = static_cast<std::int64_t>(c.tile_m) * c.cluster_m, kblocks = (kp.k + 63) / 64;
  s.tiles = ((kp.m + rows - 1) / rows) * ((kp.n + c.tile_n - 1) / c.tile_n) * kp.batch0 * kp.batch1;
  s.resident = std::max(max_clusters > 0 ? max_clusters : std::max(sm_count, 1) / c.cluster_m, 1);
  s.splits = v2_splits(kp, c);
  s.split_from = s.splits > 1 ? 0 : s.tiles;
  if (c.stream_k && s.splits == 1) {
    // Stream-K past the last whole wave: the r tiles of the partial wave (and
    // one whole wave more where r alone gives a cluster under 8 K blocks)
    // shared out evenly along K; none where that would be under 4 K blocks a
    // cluster, or where the tiles fill whole waves.
    const std::int64_t r = s.tiles % s.resident;
    std::int64_t shared = r;
    if (shared * kblocks < 8 * s.resident && s.tiles - r >= s.resident) shared += s.resident;
    if (s.tiles > s.resident && r > 0 && shared * kblocks >= 4 * s.resident) {
      s.stream = true;
      s.split_from = s.tiles - shared;
      // splits: the most pieces any shared tile has; units: every piece.
      const opgraph_gemm_sched::Sched a = v2_sched_args(s, kblocks);
      std::int64_t most = 1, units = 0;
      for (std::int64_t cl = 0; cl < s.resident; ++cl) {
        opgraph_gemm_sched::Piece w;
        for (std::int64_t it = 0; opgraph_gemm_sched::piece_at(a, cl, it, w); ++it, ++units)
          most = std::max<std::int64_t>(most, w.nsplit);
      }
      s.splits = most;
      s.units = units;
      return s;
    }
  }
  s.units = s.split_from + (s.tiles - s.split_from) * s.splits;
  return s;
}

std::int64_t v2_partial_bytes(const GemmConfig& c, const V2Schedule& s) {
  return s.splits > 1 ? v2_split_slots(c, s) * std::max(c.tile_m, 128) * c.tile_n * 4 : 0;
}

std::int64_t v2_counter_bytes(const GemmConfig& c, const V2Schedule& s) {
  return s.splits > 1 ? (s.tiles - s.split_from) * c.cluster_m * 2 * 4 : 0;
}

void v2_grid(const GemmConfig& c, const V2Schedule& s, unsigned grid[3], unsigned block[3]) {
  grid[0] = static_cast<unsigned>(std::clamp<std::int64_t>(s.units, 1, s.resident) * c.cluster_m);
  grid[1] = grid[2] = 1;
  block[0] = 384;
  block[1] = block[2] = 1;
}

void grid_of(const GemmProblem& kp, const GemmConfig& c, unsigned grid[3], unsigned block[3], int sm_count,
             int max_clusters) {
  if (c.version == 2) return v2_grid(c, v2_schedule(kp, c, sm_count, max_clusters), grid, block);
  const std::int64_t tiles = ((kp.m + c.tile_m - 1) / c.tile_m) * ((kp.n + c.tile_n - 1) / c.tile_n);
  grid[0] = static_cast<unsigned>(std::max<std::int64_t>(tiles, 1));
  grid[1] = static_cast<unsigned>(kp.batch0 * kp.batch1);
  grid[2] = 1;
  block[0] = 128;
  block[1] = block[2] = 1;
}

}  // namespace opgraph::gemm
