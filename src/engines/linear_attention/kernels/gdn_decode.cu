// linear_attention/kernels/gdn_decode.cu — the Gated DeltaNet token recurrence
// for short sequences and the state-pool copy; gdn_common.cuh for the shared parts.
//
// gdn_decode, gdn_decode_small: the token recurrence (research note §1.2) for short
//   sequences (decode and speculative verify): one CTA of 4 warps per (32-row V-slice,
//   head, sequence), each warp keeping 8 state rows in registers, or of 2 warps per
//   8-row slice (4 rows a warp; few pairs); the state is read and written once.
// gdn_state_copy: copies the state pool from initial_state to a distinct
//   final_state buffer ahead of the launch, so rows no sequence addresses keep
//   their value (state_indices with distinct buffers).
#include "gemm/kernels/gemm_sm90.cuh"
#include "linear_attention/kernels/gdn_common.cuh"

using namespace opgraph_gdn;

// ---- decode: the token recurrence, state rows in registers ----
// decode_body<R, W>: a CTA of W warps covers R * W value rows of one (head, sequence);
// each warp keeps R state rows in registers (lane l holds elements [EL l, EL l + EL)).
// The entries below instantiate the shapes the engine launches; every shape computes
// each row with the same operations in the same order, so their outputs are bitwise equal.
// (The shapes' constants: gdn_params.cuh, shared with the engine.)

// kEarly 1: the first token's q, k, v, gate and beta are loaded before the state (their
// latency overlaps the state's), not after it (0). kEarly 2: besides, token `seq` is loaded
// before cu_seqlens is read: with one token a sequence (the decode's common layout) it is the
// sequence's first, so the token loads no longer wait for cu_seqlens; a sequence that starts
// elsewhere loads its first token again once cu_seqlens is known; and safe_gate's a_log and
// dt_bias are read with it, not inside the token loop (after cu_seqlens).
// The head indices are 32-bit divisions (heads < 65536): a 64-bit one is a ~100-instruction
// sequence, six of which came before the first load.
// kBulk: the CTA's kRowsPerWarp x kWarps state rows (contiguous: fp32 at d = 128 with the rows
// 16-byte aligned; else the loads and stores below) arrive in shared memory by one bulk copy (the
// TMA's cp.async.bulk) that thread 0 issues as soon as state_indices is read, and leave by one bulk
// store once the CTA's rows are updated there; each lane reads and writes its own 16 bytes of a row.
// The arithmetic is the same, so the outputs are bitwise equal to the other shapes'.
__device__ __forceinline__ void bulk_load_rows(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void bulk_store_rows(void* dst, u32 src, u32 bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");  // the rows read before the CTA ends
}
// kEarly 3 (the engine's since 2026-12-06; bench/gdn_decode_sweep.sh's E 4): kEarly 2, with the
// loads the state's chain waits on — state_indices[seq], then cu_seqlens[seq] and [seq + 1] — issued first, before
// the head divisions and the token's loads: under kEarly 2 the machine code issues them ~300 instructions in (six
// 32-bit divisions, the gate parameters' and the token's type-branched loads), and at B = 1 the state's two
// dependent round trips (its row index, then its rows) are the kernel's critical path. Bitwise the same outputs
// (the same loads, earlier). H100, 15 interleaved rounds: B = 1 0.948-0.972x kEarly 2's time, B >= 64 0.997-1.000x
// (bench/results/2026-12-06-gdn-decode-early3-h100.txt).
template <int kRowsPerWarp, int kWarps, int kEarly, bool kBulk = false>
__device__ __forceinline__ void decode_body(const GdnParams& p) {
  constexpr int kDecodeRowsT = kRowsPerWarp * kWarps;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned hu = blockIdx.y, ho = static_cast<unsigned>(p.ho);
  const i64 h = hu, seq = blockIdx.z;
  i64 srow3 = 0, bos3 = 0, eos3 = 0;  // kEarly 3's first loads
  if constexpr (kEarly == 3) {
    srow3 = state_row(p, seq);
    bos3 = cu_at(p, seq, 0);
    eos3 = cu_at(p, seq + 1, bos3);
  }
  constexpr int kE = kEarly == 3 ? 2 : kEarly;  // the token's order: 3 as 2
  const i64 vbase = static_cast<i64>(blockIdx.x) * kDecodeRowsT + warp * kRowsPerWarp;
  const i64 hq = hu / (ho / static_cast<unsigned>(p.hq)), hk = hu / (ho / static_cast<unsigned>(p.hk)),
            hv = hu / (ho / static_cast<unsigned>(p.hv));
  const float scale = static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;

  const u16* qg = reinterpret_cast<const u16*>(p.q);
  const u16* kg = reinterpret_cast<const u16*>(p.k);
  const u16* vg = reinterpret_cast<const u16*>(p.v);
  // One token's raw inputs (the lane's q and k elements, gate and beta, the value of row
  // `lane` of the warp's rows).
  float xq[EL], xk[EL], gx = 0.f, bx = 0.f, vmine = 0.f;
  auto load_token = [&](i64 tok) {
    load_row_share(qg + tok * p.q_ts + hq * p.q_hs + lane * EL, xq);
    load_row_share(kg + tok * p.k_ts + hk * p.k_hs + lane * EL, xk);
    const i64 off = tok * p.ho + h;
    gx = load_any(p.g, off, p.g_type);
    bx = load_any(p.beta, off, p.beta_type);
    vmine = lane < kRowsPerWarp ? io_to_f32(vg[tok * p.v_ts + hv * p.v_hs + vbase + lane]) : 0.f;
  };
  i64 loaded = -1;  // the token whose inputs xq, xk, gx, bx, vmine hold
  float alog = 0.f, dt = 0.f;  // safe_gate's parameters of head h
  const bool safe = (p.flags & kFlagSafeGate) != 0;
  if (kE == 2 && safe) safe_gate_params(p, h, alog, dt);
  if (kE == 2 && seq < p.t) {
    load_token(seq);
    loaded = seq;
  }
  const i64 bos = kEarly == 3 ? bos3 : cu_at(p, seq, 0), eos = kEarly == 3 ? eos3 : cu_at(p, seq + 1, bos);
  const i64 srow = kEarly == 3 ? srow3 : state_row(p, seq);
  const bool load = (p.flags & kFlagHasInit) && srow >= 0;
  // kBulk: the CTA's rows (the first at cbase) in `stage`, landing on `mbar`.
  __shared__ __align__(128) float stage[kBulk ? kDecodeRowsT * D : 1];
  __shared__ __align__(8) unsigned long long mbar;
  const i64 cbase = srow * p.state_row_stride + (h * D + static_cast<i64>(blockIdx.x) * kDecodeRowsT) * D;
  constexpr u32 kBulkBytes = kDecodeRowsT * D * 4;
  auto bulk_at = [&](u64 base) {
    return kBulk && EL == 4 && p.state_type == kTypeF32 && (p.state_row_stride & 3) == 0 &&
           ((base + static_cast<u64>(cbase) * 4u) & 15u) == 0;
  };
  const bool bulk_in = load && bulk_at(p.initial_state);
  const u32 stage_at = static_cast<u32>(__cvta_generic_to_shared(stage));
  if (kBulk && threadIdx.x == 0) {
    const u32 bar = static_cast<u32>(__cvta_generic_to_shared(&mbar));
    opgraph_gemm::bar_init(bar, 1);
    opgraph_gemm::bar_init_fence();
    if (bulk_in) {
      opgraph_gemm::bar_expect_tx(bar, kBulkBytes);
      bulk_load_rows(stage_at, reinterpret_cast<const float*>(p.initial_state) + cbase, kBulkBytes, bar);
    }
  }
  if (kE >= 1 && bos < eos && loaded != bos) load_token(bos);

  const i64 sbase = srow * p.state_row_stride + (h * D + vbase) * D + lane * EL;
  float st[kRowsPerWarp][EL];
  // fp32 state at d = 128 with every lane's 4 elements 16-byte aligned: one 128-bit
  // access per row (the row stride is a multiple of 4 elements, so the first row decides).
  auto f4_at = [&](u64 base) {
    return EL == 4 && p.state_type == kTypeF32 && (p.state_row_stride & 3) == 0 &&
           ((base + static_cast<u64>(sbase) * 4u) & 15u) == 0;
  };
  if (kBulk) __syncthreads();  // the mbarrier's init
  if (bulk_in) {
    opgraph_gemm::bar_wait(static_cast<u32>(__cvta_generic_to_shared(&mbar)), 0);
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const float4 x = *reinterpret_cast<const float4*>(stage + (warp * kRowsPerWarp + i) * D + lane * EL);
      st[i][0] = x.x, st[i][1 % EL] = x.y, st[i][2 % EL] = x.z, st[i][3 % EL] = x.w;
    }
  } else if (load && f4_at(p.initial_state)) {
    const float* src = reinterpret_cast<const float*>(p.initial_state) + sbase;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      float x[4];
      load_f4_stream(src + static_cast<i64>(i) * D, x[0], x[1], x[2], x[3]);
#pragma unroll
      for (int e = 0; e < EL; ++e) st[i][e] = x[e & 3];
    }
  } else {
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i)
#pragma unroll
      for (int e = 0; e < EL; e += 2) {
        float a = 0.f, b = 0.f;
        if (load) load_any2(p.initial_state, sbase + static_cast<i64>(i) * D + e, p.state_type, a, b);
        st[i][e] = a;
        st[i][e + 1] = b;
      }
  }

  for (i64 tok = bos; tok < eos; ++tok) {
    if (kE == 0 || tok != bos) load_token(tok);
    if (l2) l2norm_rows(xq, xk);
    float gl, beta;
    if (kE != 2 && safe && tok == bos) safe_gate_params(p, h, alog, dt);
    gate_beta_with(p, gx, bx, alog, dt, gl, beta);
    const float a = expf(gl);
    float kv[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      float x = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) x += st[i][e] * xk[e];
      kv[i] = x;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) kv[i] += __shfl_xor_sync(0xffffffffu, kv[i], o);
    float ov[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const float vi = __shfl_sync(0xffffffffu, vmine, i);
      const float u = beta * (vi - a * kv[i]);
      float x = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) {
        st[i][e] = a * st[i][e] + xk[e] * u;
        x += st[i][e] * xq[e];
      }
      ov[i] = x;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) ov[i] += __shfl_xor_sync(0xffffffffu, ov[i], o);
    float mine = 0.f;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i)
      if (lane == i) mine = ov[i];
    if (lane < kRowsPerWarp) store_any(p.o, (tok * p.ho + h) * D + vbase + lane, p.o_type, scale * mine);
  }

  if ((p.flags & kFlagWriteFinal) && srow >= 0) {
    if (bulk_at(p.final_state)) {
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i)
        *reinterpret_cast<float4*>(stage + (warp * kRowsPerWarp + i) * D + lane * EL) =
            make_float4(st[i][0], st[i][1 % EL], st[i][2 % EL], st[i][3 % EL]);
      opgraph_gemm::fence_async_shared();  // the rows' generic stores before the bulk store reads them
      __syncthreads();
      if (threadIdx.x == 0) bulk_store_rows(reinterpret_cast<float*>(p.final_state) + cbase, stage_at, kBulkBytes);
    } else if (f4_at(p.final_state)) {
      float* dst = reinterpret_cast<float*>(p.final_state) + sbase;
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i)
        store_f4_stream(dst + static_cast<i64>(i) * D, st[i][0], st[i][1 % EL], st[i][2 % EL], st[i][3 % EL]);
    } else {
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i)
#pragma unroll
        for (int e = 0; e < EL; e += 2)
          store_any2(p.final_state, sbase + static_cast<i64>(i) * D + e, p.state_type, st[i][e], st[i][e + 1]);
    }
  }
}

// The two shapes the engine launches (la_engine.h, decode_small): the state's row index and cu_seqlens first, then
// the token inputs (kEarly 3; bench/gdn_decode_sweep.sh times 0, 1, 2 and 3 as early 0, 1, 2, 4, and the bulk form
// as early 3). The bulk form is not the engine's: faster in the sweep's nvcc build, it
// was 1.14-1.16x slower as the engine's gdn_decode in the peers' run (docs/linear_attention.md).
extern "C" __global__ void __launch_bounds__(kDecodeThreads) gdn_decode(const GdnParams p) {
  decode_body<kDecodeRows / (kDecodeThreads / 32), kDecodeThreads / 32, 3>(p);
}
// 4 rows a CTA of 1 warp (kDecodeSmallRows, kDecodeSmallThreads): up to 8192 (sequence, head) pairs.
extern "C" __global__ void __launch_bounds__(kDecodeSmallThreads) gdn_decode_small(const GdnParams p) {
  decode_body<kDecodeSmallRows / (kDecodeSmallThreads / 32), kDecodeSmallThreads / 32, 3>(p);
}

#ifdef GDN_DECODE_VARIANTS
// The shapes bench/gdn_decode_sweep.cu times against gdn_decode (rows per warp, warps, early; bulk
// copies of the state rows when E is 3: early 2 with kBulk; E 4: early 3, the state chain's loads first).
#define GDN_DECODE_VARIANT(R, W, E)                                                                    \
  extern "C" __global__ void __launch_bounds__(32 * W) gdn_decode_r##R##_w##W##_e##E(const GdnParams p) { \
    decode_body<R, W, (E) == 3 ? 2 : (E) == 4 ? 3 : (E), (E) == 3>(p);                           \
  }
GDN_DECODE_VARIANTS
#undef GDN_DECODE_VARIANT
#endif

// ---- the pool copy: words [0, words) of initial_state to final_state ----
extern "C" __global__ void gdn_state_copy(const GdnParams p, long long words) {
  const u32* src = reinterpret_cast<const u32*>(p.initial_state);
  u32* dst = reinterpret_cast<u32*>(p.final_state);
  for (i64 i = opgraph_kernels::global_thread_index(); i < words; i += opgraph_kernels::grid_thread_count())
    dst[i] = src[i];
}
