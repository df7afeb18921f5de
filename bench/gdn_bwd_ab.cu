// bench/gdn_bwd_ab.cu — two builds of the gdn backward (kernels/gdn_bwd_states.cu and
// kernels/gdn_bwd_grads.cu, each compiled to a cubin per side: A the engine's, B a variant under
// trial) on the same inputs, in one process: their gradients against each other, then every
// kernel's time, the two sides interleaved round by round. bench/gdn_bwd_ab.sh builds the cubins
// (through NVRTC with the engine's options) and this program, and runs it on the GPU machine:
//   bash bench/gdn_bwd_ab.sh "-DVARIANT_DEFINE=1" [rounds]
//
// Inputs (drawn on the device from a counter hash, fresh per cell): q, k, v, dO bf16 N(0, 1) (dO
// times 0.1), fp32 log-space gates logsigmoid(N(0, 1)), beta sigmoid(N(0, 1)), fp32 initial state
// and d_final_state 0.1 N(0, 1); use_qk_l2norm, scale d^-1/2, d = 128; the launch argument filled
// as engines/linear_attention/gdn_bwd.cpp's launch_for fills it. Each side runs from poisoned
// outputs and a poisoned workspace (0xff bytes: NaN); a gradient element A leaves unwritten or not
// finite fails the cell, and so does an RMS ratio of B against A (||B - A|| / ||A||) above 4e-3 for
// dQ, dK, dV, d_initial_state or above 1e-2 for dG, dBeta (the engine's tests hold A to fla's 8e-3 and
// 2e-2 against the float64 reference; B against A here catches a broken variant, not rounding).
// Timing: CUDA events around each kernel of one backward, A and B alternated each round (order
// swapped every round); the median per kernel and of the sum.
// Each kernel's block size is its entry's __launch_bounds__ (from the cubin); its dynamic shared
// memory is given per side (gdn_bwd_params.cuh's formulas of that side's sources, which
// bench/gdn_bwd_ab.sh prints: "prep,fwd_scan,rev_scan,grads" bytes), and whether its grads kernel
// takes a q / k head's group of output heads (kBwdFlagQkDirect in that side's header: then the
// launch sets the flag and grads_group, and gdn_bwd_finish leaves dQ and dK alone).
// Fused mode (four more arguments, bench/gdn_bwd_ab.sh under OPGRAPH_AB_FUSED=1): each side's gdn_fused.cu cubin
// (-DGDN_FUSED_WS=1 with that side's defines) and its "fwd_fused,rev_fused" dynamic shared memory; the backward then
// runs as the engine's PIPELINE_ARCH 3 runs it — gdn_bwd_fwd_fused (the forward's argument, filled as gdn_bwd.cpp's
// fused_recompute_params fills it), gdn_bwd_rev_fused, gdn_bwd_grads, gdn_bwd_finish — in the prep's and the scans'
// slots of the table (fwd_scan's slot empty), so the fused forms' trials (GDN_BWD_FWD_STAGE, GDN_BWD_REV_LOADER) are
// A/B runs too.
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_bench.h"
#include "linear_attention/kernels/gdn_bwd_params.cuh"
#include "linear_attention/kernels/gdn_params.cuh"


namespace {

namespace gdn = opgraph_gdn;
using cuda_bench::median;
using cuda_bench::rms_ratio;

constexpr int D = 128;
constexpr int kK = 5;  // prep, fwd_scan, rev_scan, grads, finish
const char* const kNames[kK] = {"gdn_bwd_prep", "gdn_bwd_fwd_scan", "gdn_bwd_rev_scan", "gdn_bwd_grads",
                                "gdn_bwd_finish"};
const char* kShort[kK] = {"prep", "fwd_scan", "rev_scan", "grads", "finish"};
bool g_fused = false;  // fused mode: slots 0 and 2 are gdn_bwd_fwd_fused and gdn_bwd_rev_fused, slot 1 empty

struct Kernel {
  CUfunction fn = nullptr;
  int threads = 0;
  unsigned smem = 0;
};
struct Side {
  CUmodule states = nullptr, grads = nullptr, fused = nullptr;
  Kernel k[kK];
  Kernel st1;  // fused mode, a build with -DGDN_BWD_ONEPASS=1: gdn_bwd_fwd_st_fused (the one-pass design's pass 1)
  Kernel p2;   // and its gdn_bwd_onepass (pass 2, in the grads cubin)
  unsigned p2_red = 0;  // its GDN_BWD_ONEPASS_RED: dq / dk added into a zeroed [T][HQ][D] staging (zeroed in slot 1)
  unsigned p2_tma = 0;  // its TMA loads: a second argument, the maps (OnePassMaps)
  bool grouped = false;  // gdn_bwd_grads takes a q / k head's group of output heads (kBwdFlagQkDirect)
};

Side load(const char* states_path, const char* grads_path, const char* smem_csv, const char* tag,
          const char* fused_path = nullptr, const char* fsmem_csv = nullptr) {
  Side s;
  CD(cuModuleLoad(&s.states, states_path));
  CD(cuModuleLoad(&s.grads, grads_path));
  unsigned fsmem[2] = {0, 0};
  if (fused_path) {
    CD(cuModuleLoad(&s.fused, fused_path));
    if (std::sscanf(fsmem_csv, "%u,%u", &fsmem[0], &fsmem[1]) != 2) {
      std::fprintf(stderr, "'fwd_fused,rev_fused' expected, got '%s'\n", fsmem_csv);
      std::exit(2);
    }
  }
  if (s.fused && cuModuleGetFunction(&s.st1.fn, s.fused, "gdn_bwd_fwd_st_fused") == CUDA_SUCCESS) {
    s.st1.smem = fsmem[0];  // gdn_bwd_fwd_fused's (its staging panels under GDN_BWD_FWD_STAGE)
    CD(cuFuncGetAttribute(&s.st1.threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, s.st1.fn));
    CD(cuFuncSetAttribute(s.st1.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(s.st1.smem)));
    std::printf("# %s %-17s %4d threads, %6u bytes of dynamic shared memory\n", tag, "gdn_bwd_fwd_st_fused",
                s.st1.threads, s.st1.smem);
  } else {
    s.st1.fn = nullptr;
  }
  if (cuModuleGetFunction(&s.p2.fn, s.grads, "gdn_bwd_onepass") == CUDA_SUCCESS) {
    CUdeviceptr at = 0;
    size_t bytes = 0;
    CD(cuModuleGetGlobal(&at, &bytes, s.grads, "gdn_bwd_onepass_smem_bytes"));
    CD(cuMemcpyDtoH(&s.p2.smem, at, sizeof s.p2.smem));
    CD(cuFuncGetAttribute(&s.p2.threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, s.p2.fn));
    CD(cuFuncSetAttribute(s.p2.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(s.p2.smem)));
    int regs = 0;
    CD(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, s.p2.fn));
    if (cuModuleGetGlobal(&at, &bytes, s.grads, "gdn_bwd_onepass_red") == CUDA_SUCCESS)
      CD(cuMemcpyDtoH(&s.p2_red, at, sizeof s.p2_red));
    if (cuModuleGetGlobal(&at, &bytes, s.grads, "gdn_bwd_onepass_tma") == CUDA_SUCCESS)
      CD(cuMemcpyDtoH(&s.p2_tma, at, sizeof s.p2_tma));
    std::printf("# %s %-17s %4d threads, %6u bytes of dynamic shared memory, %3d registers%s\n", tag,
                "gdn_bwd_onepass", s.p2.threads, s.p2.smem, regs,
                (std::string(s.p2_red ? ", dq / dk by L2 reductions" : "") + (s.p2_tma ? ", TMA loads" : "")).c_str());
  } else {
    s.p2.fn = nullptr;
  }
  unsigned smem[kK] = {0, 0, 0, 0, 0}, grouped = 0;
  if (std::sscanf(smem_csv, "%u,%u,%u,%u,%u", &smem[0], &smem[1], &smem[2], &smem[3], &grouped) != 5) {
    std::fprintf(stderr, "'prep,fwd_scan,rev_scan,grads,grouped' expected, got '%s'\n", smem_csv);
    std::exit(2);
  }
  s.grouped = grouped != 0;
  for (int i = 0; i < kK; ++i) {
    CUmodule m = i < 3 ? s.states : s.grads;
    Kernel& k = s.k[i];
    const char* name = kNames[i];
    if (fused_path && i < 3) {
      if (i == 1) continue;  // the fused forward recompute replaces the prep and the forward scan
      m = s.fused;
      name = i == 0 ? "gdn_bwd_fwd_fused" : "gdn_bwd_rev_fused";
      smem[i] = fsmem[i / 2];
    }
    CD(cuModuleGetFunction(&k.fn, m, name));
    CD(cuFuncGetAttribute(&k.threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k.fn));
    k.smem = smem[i];
    if (k.smem > 48 * 1024)
      CD(cuFuncSetAttribute(k.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(k.smem)));
    int regs = 0;
    CD(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k.fn));
    std::printf("# %s %-17s %4d threads, %6u bytes of dynamic shared memory, %3d registers\n", tag, name, k.threads,
                k.smem, regs);
  }
  return s;
}

// A counter hash to N(0, 1) (Box-Muller on two 24-bit uniforms).
__device__ __forceinline__ unsigned mix(unsigned long long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<unsigned>(x);
}
__device__ __forceinline__ float normal_at(unsigned long long seed, unsigned long long i) {
  const float u1 = (static_cast<float>(mix(seed * 0x9e3779b97f4a7c15ULL + 2 * i) >> 8) + 1.f) * (1.f / 16777217.f);
  const float u2 = static_cast<float>(mix(seed * 0x9e3779b97f4a7c15ULL + 2 * i + 1) >> 8) * (1.f / 16777216.f);
  return sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
}
enum Fill { kBf16 = 0, kBf16Small = 1, kLogGate = 2, kBeta = 3, kState = 4 };
__global__ void fill(void* out, unsigned long long n, unsigned long long seed, int kind) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x) {
    const float r = normal_at(seed, i);
    if (kind <= kBf16Small) {
      const float x = kind == kBf16 ? r : 0.1f * r;
      reinterpret_cast<unsigned short*>(out)[i] = static_cast<unsigned short>(__float_as_uint(x) >> 16) +
                                                  static_cast<unsigned short>((__float_as_uint(x) >> 15) & 1u);
    } else {
      reinterpret_cast<float*>(out)[i] =
          kind == kLogGate ? -log1pf(expf(-r)) : kind == kBeta ? 1.f / (1.f + expf(-r)) : 0.1f * r;
    }
  }
}
// OPGRAPH_AB_NO_L2=1: q and k rows (128 elements) scaled to unit norm in place, one warp a row (bf16 in, bf16 out).
__global__ void unit_rows(unsigned short* x, unsigned long long rows) {
  const unsigned long long r = blockIdx.x * 8ull + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (r >= rows) return;
  unsigned short* row = x + r * 128 + 4 * lane;
  float v[4], ss = 0.f;
  for (int e = 0; e < 4; ++e) v[e] = __uint_as_float(static_cast<unsigned>(row[e]) << 16), ss += v[e] * v[e];
  for (int o = 16; o; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  const float f = rsqrtf(ss + 1e-6f);
  for (int e = 0; e < 4; ++e) {
    const float y = v[e] * f;
    row[e] = static_cast<unsigned short>((__float_as_uint(y) >> 16) + ((__float_as_uint(y) >> 15) & 1u));
  }
}
void* dev_fill(unsigned long long n, int kind, unsigned long long seed) {
  void* p = nullptr;
  const size_t bytes = std::max<unsigned long long>(n, 1) * (kind <= kBf16Small ? 2 : 4);
  CK(cudaMalloc(&p, bytes));
  if (n) fill<<<1024, 256>>>(p, n, seed, kind);
  CK(cudaGetLastError());
  return p;
}

std::vector<float> to_host(const void* d, size_t n, bool bf16) {
  std::vector<float> out(n);
  if (bf16) {
    std::vector<unsigned short> raw(n);
    CK(cudaMemcpy(raw.data(), d, n * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) out[i] = cuda_bench::from_bf16(raw[i]);
  } else {
    CK(cudaMemcpy(out.data(), d, n * 4, cudaMemcpyDeviceToHost));
  }
  return out;
}

struct Cell {
  const char* name;
  int hq, hv;  // q and k heads, value heads (HO = max)
  std::vector<int> lens;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7 || (argc > 8 && argc != 12)) {
    std::fprintf(stderr, "usage: %s A_states.cubin A_grads.cubin A_SMEM B_states.cubin B_grads.cubin B_SMEM [rounds "
                 "[A_fused.cubin B_fused.cubin A_FSMEM B_FSMEM]]\n"
                 "  (SMEM: prep,fwd_scan,rev_scan,grads dynamic shared memory bytes,grouped;\n"
                 "   FSMEM: fwd_fused,rev_fused)\n",
                 argv[0]);
    return 2;
  }
  const int rounds = argc > 7 ? std::atoi(argv[7]) : 10;
  g_fused = argc == 12;
  const char* onepass_env = std::getenv("OPGRAPH_AB_ONEPASS");
  if (g_fused) kShort[0] = "fwd_fused", kShort[1] = "-", kShort[2] = "rev_fused";
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CK(cudaFree(nullptr));
  const Side sides[2] = {
      load(argv[1], argv[2], argv[3], "A", g_fused ? argv[8] : nullptr, g_fused ? argv[10] : nullptr),
      load(argv[4], argv[5], argv[6], "B", g_fused ? argv[9] : nullptr, g_fused ? argv[11] : nullptr)};
  // OPGRAPH_AB_ONEPASS=1 (fused mode, B built with -DGDN_BWD_ONEPASS=1): B runs the one-pass design —
  // gdn_bwd_fwd_st_fused in the fwd_fused slot, gdn_bwd_onepass in the rev_fused slot, nothing in the grads slot,
  // then gdn_bwd_finish (dq, dk staged: kBwdFlagQkDirect off) — against A's PIPELINE_ARCH 3.
  const bool onepass = g_fused && onepass_env && std::string(onepass_env) == "1" && sides[1].st1.fn && sides[1].p2.fn;
  if (onepass_env && std::string(onepass_env) == "1" && !onepass) {
    std::fprintf(stderr, "OPGRAPH_AB_ONEPASS=1: B needs fused mode and -DGDN_BWD_ONEPASS=1\n");
    return 2;
  }
  if (onepass) std::printf("# B: the one-pass design (fwd_fused slot: gdn_bwd_fwd_st_fused; rev_fused slot: "
                           "gdn_bwd_onepass; grads slot empty)\n");
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t ev[kK + 1];
  for (auto& e : ev) CK(cudaEventCreate(&e));
  // The issue's five cells, then two small varlen batches with empty and short sequences: one
  // with v heads grouped over q heads (dV staged and summed by gdn_bwd_finish).
  const Cell cells[] = {{"16/64 4 x 8192", 16, 64, {8192, 8192, 8192, 8192}},
                        {"16/64 1 x 32768", 16, 64, {32768}},
                        {"16/32 4 x 8192", 16, 32, {8192, 8192, 8192, 8192}},
                        {"16/32 1 x 32768", 16, 32, {32768}},
                        {"2/8 1 x 32768", 2, 8, {32768}},
                        {"2/4 varlen (1, 63, 0, 64, 65, 1000, 4097, 0)", 2, 4, {1, 63, 0, 64, 65, 1000, 4097, 0}},
                        {"4/2 varlen (0, 1, 63, 64, 65, 1000, 4097, 0)", 4, 2, {0, 1, 63, 64, 65, 1000, 4097, 0}}};
  int fails = 0;
  std::vector<std::string> table;
  unsigned long long seed = 20261203;
  // OPGRAPH_AB_CELLS=n: the first n cells only (a profiler run).
  const int n_cells = std::getenv("OPGRAPH_AB_CELLS") ? std::atoi(std::getenv("OPGRAPH_AB_CELLS")) : 1000;
  int cell_no = 0;
  // OPGRAPH_AB_NO_L2=1 (a measuring aid): q and k drawn as unit rows and use_qk_l2norm off on both sides, so each
  // kernel's time without the in-kernel normalisation (what a separate normalisation kernel would leave) shows.
  const bool no_l2 = std::getenv("OPGRAPH_AB_NO_L2") && std::atoi(std::getenv("OPGRAPH_AB_NO_L2")) != 0;
  const unsigned l2_flag = no_l2 ? 0u : static_cast<unsigned>(gdn::kFlagL2Norm);
  for (const Cell& c : cells) {
    if (cell_no++ >= n_cells) break;
    const int N = static_cast<int>(c.lens.size()), HQ = c.hq, HV = c.hv, HO = std::max(HQ, HV);
    std::vector<int> cu(N + 1, 0);
    for (int i = 0; i < N; ++i) cu[i + 1] = cu[i] + c.lens[i];
    const long long T = cu[N];
    const unsigned long long nq = T * HQ * D, nv = T * HV * D, no = T * HO * D, ng = T * HO,
                             ns = static_cast<unsigned long long>(N) * HO * D * D;
    void* q = dev_fill(nq, kBf16, ++seed);
    void* k = dev_fill(nq, kBf16, ++seed);
    if (no_l2) {  // OPGRAPH_AB_NO_L2=1: unit rows, use_qk_l2norm off on both sides (a what-if: no normalisation)
      unit_rows<<<static_cast<unsigned>((nq / 128 + 7) / 8), 256>>>(static_cast<unsigned short*>(q), nq / 128);
      unit_rows<<<static_cast<unsigned>((nq / 128 + 7) / 8), 256>>>(static_cast<unsigned short*>(k), nq / 128);
    }
    void* v = dev_fill(nv, kBf16, ++seed);
    void* d_o = dev_fill(no, kBf16Small, ++seed);
    void* g = dev_fill(ng, kLogGate, ++seed);
    void* beta = dev_fill(ng, kBeta, ++seed);
    void* init = dev_fill(ns, kState, ++seed);
    void* dfin = dev_fill(ns, kState, ++seed);
    int* dcu = cuda_bench::dev_copy(cu);
    const gdn::GdnBwdWs w = gdn::gdn_bwd_ws(D, T, N, HO, true, HV != HO);  // both sides' layouts: dq, dk staged
    void* ws = nullptr;
    CK(cudaMalloc(&ws, w.total));
    // Outputs, one set a side.
    const unsigned long long n_out[6] = {nq, nq, nv, ng, ng, ns};
    const bool out_bf16[6] = {true, true, true, false, false, false};
    const char* out_name[6] = {"dQ", "dK", "dV", "dG", "dBeta", "dInit"};
    void* outs[2][6];
    for (auto& side : outs)
      for (int i = 0; i < 6; ++i) CK(cudaMalloc(&side[i], std::max<unsigned long long>(n_out[i], 1) * (out_bf16[i] ? 2 : 4)));
    CK(cudaDeviceSynchronize());

    gdn::GdnBwdParams base{};
    auto u = [](const void* x) { return reinterpret_cast<unsigned long long>(x); };
    base.q = u(q), base.k = u(k), base.v = u(v), base.g = u(g), base.beta = u(beta), base.cu_seqlens = u(dcu);
    base.initial_state = u(init), base.d_o = u(d_o), base.d_final_state = u(dfin), base.ws = u(ws);
    base.t = T, base.n_seq = N, base.hq = HQ, base.hk = HQ, base.hv = HV, base.ho = HO;
    base.n_slots = gdn::gdn_bwd_slots(T, N);
    base.q_ts = HQ * D, base.q_hs = D, base.k_ts = HQ * D, base.k_hs = D, base.v_ts = HV * D, base.v_hs = D;
    base.g_type = base.beta_type = base.init_type = base.dfin_type = gdn::kTypeF32;
    base.do_type = gdn::kTypeBf16;
    base.dq_type = base.dk_type = base.dv_type = gdn::kTypeBf16;
    base.dg_type = base.dbeta_type = base.dinit_type = gdn::kTypeF32;
    base.a_log_type = base.dt_bias_type = base.dalog_type = base.ddt_type = gdn::kTypeF32;
    base.flags = l2_flag | gdn::kFlagHasInit | gdn::kBwdFlagHasDFinal | gdn::kBwdFlagWriteDInit;
    base.scale = 1.0 / std::sqrt(static_cast<double>(D));
    base.ws_blocks = w.blocks, base.ws_egc = w.egc, base.ws_st = w.st, base.ws_dst = w.dst, base.ws_vn = w.vn;
    base.ws_dvn = w.dvn, base.ws_dq = w.dq, base.ws_dk = w.dk, base.ws_dv = w.dv, base.ws_ga = w.ga, base.ws_gd = w.gd;
    base.ws_sds = w.sds;
    gdn::GdnBwdParams par[2] = {base, base};
    long long group[2] = {1, 1};
    for (int s = 0; s < 2; ++s) {
      // What the engine's launch_for sets for a side whose grads kernel takes head groups (HQ = HK).
      if (sides[s].grouped && !(onepass && s == 1)) {  // hk = hq in every cell here
        par[s].flags |= gdn::kBwdFlagQkDirect;
        group[s] = HO / HQ;
      }
      par[s].grads_group = group[s];
      par[s].dq = u(outs[s][0]), par[s].dk = u(outs[s][1]), par[s].dv = u(outs[s][2]);
      par[s].dg = u(outs[s][3]), par[s].dbeta = u(outs[s][4]), par[s].d_initial_state = u(outs[s][5]);
    }
    // The fused forward recompute's argument (gdn_bwd.cpp's fused_recompute_params and execute): both sides'.
    gdn::GdnParams fw{};
    fw.q = base.q, fw.k = base.k, fw.v = base.v, fw.g = base.g, fw.beta = base.beta, fw.cu_seqlens = base.cu_seqlens;
    fw.initial_state = base.initial_state;
    fw.t = T, fw.n_seq = N, fw.hq = HQ, fw.hk = HQ, fw.hv = HV, fw.ho = HO;
    fw.state_rows = N, fw.state_row_stride = static_cast<long long>(HO) * D * D;
    fw.g_type = fw.beta_type = fw.state_type = gdn::kTypeF32;
    fw.o_type = gdn::kTypeBf16;
    fw.a_log_type = fw.dt_bias_type = gdn::kTypeF32;
    fw.flags = l2_flag | gdn::kFlagHasInit;
    fw.scale = base.scale;
    fw.q_ts = base.q_ts, fw.q_hs = base.q_hs, fw.k_ts = base.k_ts, fw.k_hs = base.k_hs, fw.v_ts = base.v_ts;
    fw.v_hs = base.v_hs;
    fw.n_spans = 1;
    fw.bwd_ws = base.ws, fw.bwd_blocks = w.blocks, fw.bwd_egc = w.egc, fw.bwd_st = w.st, fw.bwd_vn = w.vn;
    // gdn_bwd_onepass's TMA maps (kernels/gdn_bwd_onepass.cuh, OnePassMaps): bf16,
    // 128-byte swizzle, 4-D innermost first, box 64 elements wide.
    struct OnePassMaps {  // CUtensorMap is 64-byte aligned itself
      CUtensorMap q, k, v, d_o, st, t, g, beta, dq, dk, dv;  // dq, dk, dv: read under GDN_BWD_ONEPASS_TMARED / TMADV
    } maps{};
    if (sides[1].p2_tma) {
      auto enc = [](CUtensorMap* m, const void* base, unsigned long long d0, unsigned long long d1,
                    unsigned long long d2, unsigned long long s1, unsigned long long s2, unsigned box1,
                    unsigned box2) {
        cuuint64_t dims[4] = {d0, d1, d2, 1};
        cuuint64_t str[3] = {s1 * 2, s2 * 2, s2 * 2 * d2};
        cuuint32_t box[4] = {64, box1, box2, 1}, es[4] = {1, 1, 1, 1};
        CD(cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void*>(base), dims, str, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
      };
      const unsigned long long sh = static_cast<unsigned long long>(base.n_slots) * HO;
      unsigned char* wb = static_cast<unsigned char*>(ws);
      enc(&maps.q, q, D, HQ, T, D, HQ * D, 1, 64);
      enc(&maps.k, k, D, HQ, T, D, HQ * D, 1, 64);
      enc(&maps.v, v, D, HV, T, D, HV * D, 1, 64);
      enc(&maps.d_o, d_o, D, HO, T, D, HO * D, 1, 64);
      enc(&maps.dv, outs[1][2], D, HV, T, D, HV * D, 1, 64);  // B's dv output (bf16)
      // S^T: (D, sh D rows) as (D, sh D, 1); T: (64, C, sh) over the one-pass layout's T region (PH 7 stores it
      // there: C x C a (chunk slot, head) from the block region's start).
      enc(&maps.st, wb + w.st, D, sh * D, 1, D, sh * D * D, D, 1);
      enc(&maps.t, wb + w.blocks, 64, 64, sh, 64, 64 * 64, 64, 1);
      // fp32 dq / dk sums [T][HQ][D]: (D, HQ, T), box (32, 1, 64), 128-byte swizzle.
      for (int which = 0; which < 2; ++which) {
        cuuint64_t dims[4] = {D, static_cast<cuuint64_t>(HQ), static_cast<cuuint64_t>(T), 1};
        cuuint64_t str[3] = {D * 4, static_cast<cuuint64_t>(HQ) * D * 4, static_cast<cuuint64_t>(HQ) * D * 4 * T};
        cuuint32_t box[4] = {32, 1, 64, 1}, es[4] = {1, 1, 1, 1};
        CD(cuTensorMapEncodeTiled(which ? &maps.dk : &maps.dq, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                  wb + (which ? w.dk : w.dq), dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
      }
      // fp32 g and beta [T][HO]: (HO, T), box (4, 64), no swizzle.
      par[1].flags |= gdn::kBwdFlagGatesTma;  // fp32 gates, HO a multiple of 4 in every cell
      for (int which = 0; which < 2; ++which) {
        cuuint64_t dims[4] = {static_cast<cuuint64_t>(HO), static_cast<cuuint64_t>(T), 1, 1};
        cuuint64_t str[3] = {static_cast<cuuint64_t>(HO) * 4, static_cast<cuuint64_t>(HO) * T * 4,
                             static_cast<cuuint64_t>(HO) * T * 4};
        cuuint32_t box[4] = {4, 64, 1, 1}, es[4] = {1, 1, 1, 1};
        CD(cuTensorMapEncodeTiled(which ? &maps.beta : &maps.g, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, which ? beta : g,
                                  dims, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
      }
    }
    auto launch = [&](int s, int i) {
      if (onepass && s == 1 && i < 4) {
        if (i == 1 && sides[1].p2_red) {  // GDN_BWD_ONEPASS_RED: the [T][HQ][D] / [T][HK][D] sums start at zero
          unsigned char* wb = static_cast<unsigned char*>(ws);
          CK(cudaMemsetAsync(wb + w.dq, 0, static_cast<size_t>(T) * HQ * D * 4, stream));
          CK(cudaMemsetAsync(wb + w.dk, 0, static_cast<size_t>(T) * HQ * D * 4, stream));
        }
        if (i == 1 || i == 3) return;
        const Kernel& kp = i == 0 ? sides[1].st1 : sides[1].p2;
        void* pargs[] = {i == 0 ? static_cast<void*>(&fw) : static_cast<void*>(&par[1]), &maps};
        CD(cuLaunchKernel(kp.fn, 1, HO, N, kp.threads, 1, 1, kp.smem, stream, pargs, nullptr));
        return;
      }
      const Kernel& kn = sides[s].k[i];
      if (!kn.fn) return;
      unsigned gx, gy = 1, gz = 1;
      if (g_fused && (i == 0 || i == 2)) {  // one CTA a (head, sequence)
        void* fargs[] = {i == 0 ? static_cast<void*>(&fw) : static_cast<void*>(&par[s])};
        CD(cuLaunchKernel(kn.fn, 1, HO, N, kn.threads, 1, 1, kn.smem, stream, fargs, nullptr));
        return;
      }
      if (i == 0 || i == 3) gx = static_cast<unsigned>(base.n_slots), gy = static_cast<unsigned>(i == 3 ? HO / group[s] : HO);
      else if (i < 3) gx = D / 64, gy = HO, gz = N;
      else gx = static_cast<unsigned>((T + kn.threads / 32 - 1) / (kn.threads / 32));
      if (gx == 0) return;
      void* args[] = {&par[s]};
      CD(cuLaunchKernel(kn.fn, gx, gy, gz, kn.threads, 1, 1, kn.smem, stream, args, nullptr));
    };
    // 1. gradients, each side from poisoned outputs and workspace
    std::vector<float> got[2][6];
    for (int s = 0; s < 2; ++s) {
      CK(cudaMemsetAsync(ws, 0xff, w.total, stream));
      for (int i = 0; i < 6; ++i)
        CK(cudaMemsetAsync(outs[s][i], 0xff, std::max<unsigned long long>(n_out[i], 1) * (out_bf16[i] ? 2 : 4), stream));
      for (int i = 0; i < kK; ++i) launch(s, i);
      CK(cudaStreamSynchronize(stream));
      for (int i = 0; i < 6; ++i) got[s][i] = to_host(outs[s][i], n_out[i], out_bf16[i]);
    }
    bool ok = true, same = true;
    const char* tight_env = std::getenv("OPGRAPH_AB_TIGHT");
    const bool tight = tight_env && std::string(tight_env) == "1";
    std::string cmp;
    for (int i = 0; i < 6; ++i) {
      const double self = rms_ratio(got[0][i], got[0][i]);
      const double r = rms_ratio(got[0][i], got[1][i]);
      // OPGRAPH_AB_TIGHT=1: 1e-5 for every output (a B that changes only a summation order, not a rounding).
      const double lim = tight ? 1e-5 : (i == 3 || i == 4) ? 1e-2 : 4e-3;
      const bool good = std::isfinite(self) && std::isfinite(r) && r <= lim;
      ok = ok && good;
      same = same && got[0][i].size() == got[1][i].size() &&
             std::memcmp(got[0][i].data(), got[1][i].data(), got[0][i].size() * 4) == 0;
      char b[64];
      std::snprintf(b, sizeof b, " %s %.1e%s", out_name[i], r, good ? "" : "!");
      cmp += b;
    }
    fails += !ok;
    // 1b. B's pass 1 of the one-pass design (-DGDN_BWD_ONEPASS=1): its S^T region and T tiles against the ones A's
    // gdn_bwd_fwd_fused writes, bit for bit, each from poisoned regions; then its time against A's gdn_bwd_fwd_fused,
    // interleaved.
    std::string pass1;
    if (g_fused && sides[1].st1.fn) {
      const size_t n_sh = static_cast<size_t>(base.n_slots) * HO, st_bytes = n_sh * D * D * 2;
      const size_t t_elems = 64 * 64, blk = gdn::gdn_bwd_block_elems(D), t_off = blk - t_elems;  // T ends a block
      unsigned char* st_at = static_cast<unsigned char*>(ws) + w.st;
      unsigned short* blocks = reinterpret_cast<unsigned short*>(static_cast<unsigned char*>(ws) + w.blocks);
      // S^T, then every chunk slot's T tile: A's the block's last C x C (gdn_bwd_params.cuh's layout), B's (PH 7) the
      // one-pass layout's T region, C x C a slot from the block region's start (gdn_bwd_ws_onepass).
      std::vector<unsigned short> want(st_bytes / 2 + n_sh * t_elems), have(want.size());
      auto t_at = [&](bool compact) { return compact ? blocks : blocks + t_off; };
      auto t_pitch = [&](bool compact) { return (compact ? t_elems : blk) * 2; };
      auto read_back = [&](std::vector<unsigned short>& to, bool compact) {
        CK(cudaMemcpy(to.data(), st_at, st_bytes, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy2D(to.data() + st_bytes / 2, t_elems * 2, t_at(compact), t_pitch(compact), t_elems * 2, n_sh,
                        cudaMemcpyDeviceToHost));
      };
      // want: A's gdn_bwd_fwd_fused (PH 4) from poisoned regions (the workspace holds B's run, which under
      // OPGRAPH_AB_ONEPASS was PH 7's own).
      CK(cudaMemsetAsync(st_at, 0xff, st_bytes, stream));
      CK(cudaMemset2DAsync(t_at(false), t_pitch(false), 0xff, t_elems * 2, n_sh, stream));
      launch(0, 0);
      CK(cudaStreamSynchronize(stream));
      read_back(want, false);
      CK(cudaMemsetAsync(st_at, 0xff, st_bytes, stream));
      CK(cudaMemset2DAsync(t_at(true), t_pitch(true), 0xff, t_elems * 2, n_sh, stream));
      const Kernel& kn = sides[1].st1;
      auto launch_st1 = [&] {
        void* fargs[] = {&fw};
        CD(cuLaunchKernel(kn.fn, 1, HO, N, kn.threads, 1, 1, kn.smem, stream, fargs, nullptr));
      };
      launch_st1();
      CK(cudaStreamSynchronize(stream));
      read_back(have, true);
      size_t differ = 0;
      for (size_t i = 0; i < want.size(); ++i) differ += want[i] != have[i];
      if (differ) {
        // Where: S^T or T tiles, how many (slot, head) tiles, the poisoned words on either side (0xffff: one side
        // left it unwritten), and the first few differing elements as (slot, head, kind, element, want, have).
        const size_t st_el = st_bytes / 2;
        size_t tiles[2] = {0, 0}, unwritten[2] = {0, 0}, shown = 0;
        for (size_t t = 0; t < n_sh; ++t)
          for (int kind = 0; kind < 2; ++kind) {
            const size_t n_el = kind ? t_elems : static_cast<size_t>(D) * D;
            const size_t at = kind ? st_el + t * t_elems : t * D * D;
            bool any = false;
            for (size_t e = 0; e < n_el; ++e) {
              if (want[at + e] == have[at + e]) continue;
              any = true;
              unwritten[0] += want[at + e] == 0xffff;
              unwritten[1] += have[at + e] == 0xffff;
              if (shown++ < 6)
                std::printf("  pass 1 differs: slot %zu head %zu %s element %zu: want %04x have %04x\n", t / HO, t % HO,
                            kind ? "T" : "S^T", e, want[at + e], have[at + e]);
            }
            tiles[kind] += any;
          }
        std::printf("  pass 1: %zu S^T and %zu T tiles of %zu differ; 0xffff words: %zu wanted, %zu had\n", tiles[0],
                    tiles[1], n_sh, unwritten[0], unwritten[1]);
      }
      std::vector<double> ta, tb;
      for (int r = 0; r < rounds; ++r)
        for (int j = 0; j < 2; ++j) {
          const bool b_side = ((r & 1) ? 1 - j : j) == 1;
          CK(cudaEventRecord(ev[0], stream));
          if (b_side) launch_st1();
          else launch(0, 0);
          CK(cudaEventRecord(ev[1], stream));
          CK(cudaEventSynchronize(ev[1]));
          float ms = 0.f;
          CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
          (b_side ? tb : ta).push_back(ms);
        }
      char b[256];
      std::snprintf(b, sizeof b,
                    "  pass 1: B gdn_bwd_fwd_st_fused %.3f ms, A gdn_bwd_fwd_fused %.3f ms (%.3fx); S^T and T %s",
                    median(tb), median(ta), median(tb) / median(ta),
                    differ ? (std::to_string(differ) + " of " + std::to_string(want.size()) + " elements differ FAIL")
                                 .c_str()
                           : "bitwise");
      pass1 = b;
      fails += differ != 0;
    }
    // 2. time, interleaved
    std::vector<double> t[2][kK + 1];
    for (int s = 0; s < 2; ++s)
      for (int i = 0; i < kK; ++i) launch(s, i);  // warm
    for (int r = 0; r < rounds; ++r)
      for (int j = 0; j < 2; ++j) {
        const int s = (r & 1) ? 1 - j : j;
        CK(cudaEventRecord(ev[0], stream));
        for (int i = 0; i < kK; ++i) {
          launch(s, i);
          CK(cudaEventRecord(ev[i + 1], stream));
        }
        CK(cudaEventSynchronize(ev[kK]));
        float sum = 0.f;
        for (int i = 0; i < kK; ++i) {
          float ms = 0.f;
          CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
          t[s][i].push_back(ms);
          sum += ms;
        }
        t[s][kK].push_back(sum);
      }
    char line[512];
    std::snprintf(line, sizeof line, "%-46s total A %7.3f B %7.3f ms B/A %5.3f |", c.name, median(t[0][kK]),
                  median(t[1][kK]), median(t[1][kK]) / median(t[0][kK]));
    std::string row = line;
    for (int i = 0; i < kK; ++i) {
      std::snprintf(line, sizeof line, " %s %.3f/%.3f", kShort[i], median(t[0][i]), median(t[1][i]));
      row += line;
    }
    row += " | B vs A:" + cmp + (same ? " (bitwise)" : "") + (ok ? " ok" : " FAIL");
    std::printf("%s\n", row.c_str());
    table.push_back(row);
    if (!pass1.empty()) {
      std::printf("%s\n", pass1.c_str());
      table.push_back(pass1);
    }
    // A grads build with GDN_BWD_CLOCK (kernels/gdn_bwd_grads_tiles.cuh; GDN_BWD_WIDE_CLOCK in the wide form): each
    // warpgroup's phases (the wide form's roles Q, K, W, X), cycles a head, in one CTA of the last launch (the phase
    // names are the forms' headers').
    // gdn_bwd_onepass's clocks (GDN_BWD_CLOCK with GDN_BWD_ONEPASS): 16 phases a warpgroup, named in its source.
    for (int s = 0; s < 2; ++s) {
      CUdeviceptr ck_ptr = 0;
      size_t ck_bytes = 0;
      if (cuModuleGetGlobal(&ck_ptr, &ck_bytes, sides[s].grads, "gdn_bwd_onepass_clock") != CUDA_SUCCESS) continue;
      long long ck[64] = {};
      CD(cuMemcpyDtoH(ck, ck_ptr, std::min(sizeof ck, ck_bytes)));
      for (int r = 0; r < 4; ++r) {
        std::string l = std::string("  ") + static_cast<char>('A' + s) + " onepass clocks a chunk, warpgroup " +
                        std::to_string(r) + ":";
        long long sum = 0;
        for (int i = 0; i < 16; ++i) l += " " + std::to_string(ck[16 * r + i]), sum += ck[16 * r + i];
        l += " (sum " + std::to_string(sum) + ")";
        std::printf("%s\n", l.c_str());
        table.push_back(l);
      }
    }
    for (int s = 0; s < 2; ++s) {
      CUdeviceptr ck_ptr = 0;
      size_t ck_bytes = 0;
      if (cuModuleGetGlobal(&ck_ptr, &ck_bytes, sides[s].grads, "gdn_bwd_clock") != CUDA_SUCCESS) continue;
      long long ck[40] = {};
      CD(cuMemcpyDtoH(ck, ck_ptr, std::min(sizeof ck, ck_bytes)));
      const char* role[4] = {"0 (Q)", "1 (K)", "2 (W)", "3 (X)"};
      for (int r = 0; r < 4; ++r) {
        std::string l = std::string("  ") + static_cast<char>('A' + s) + " clocks a head, warpgroup " + role[r] + ":";
        for (int i = 0; i < 10; ++i) l += " " + std::to_string(ck[10 * r + i]);
        std::printf("%s\n", l.c_str());
        table.push_back(l);
      }
    }
    for (void* x : {q, k, v, d_o, g, beta, init, dfin, static_cast<void*>(dcu), ws}) CK(cudaFree(x));
    for (auto& side : outs)
      for (void* x : side) CK(cudaFree(x));
  }
  std::printf("\n== gdn_bwd A (%s, %s) vs B (%s, %s); CUDA events around each kernel, median of %d rounds (A and B "
              "alternated); per kernel A/B ms; gradients: RMS ratio of B against A\n",
              argv[1], argv[2], argv[4], argv[5], rounds);
  for (const auto& l : table) std::printf("%s\n", l.c_str());
  return fails ? 1 : 0;
}
