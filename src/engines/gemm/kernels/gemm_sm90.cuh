// gemm/kernels/gemm_sm90.cuh — the Hopper (sm_90a) instructions gemm_v2 is
// built from, one thin wrapper each: mbarriers, TMA loads and stores, thread
// block cluster addressing, wgmma's fences and shared-memory descriptors, and
// named barriers. Each wrapper is one PTX instruction (or a poll loop of
// one) with the memory clobber the instruction needs; none knows the tile
// shapes. Addresses are 32-bit shared-window addresses (smem_u32) unless a
// parameter says otherwise.
#pragma once

#include "gemm/kernels/gemm_common.cuh"

namespace opgraph_gemm {

__device__ __forceinline__ u32 smem_u32(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

// --- mbarriers ---------------------------------------------------------------

__device__ __forceinline__ void bar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits for the phase of `parity` to complete. A wait that never ends (a
// protocol bug) traps after ~2^26 polls (seconds) instead of hanging the GPU.
__device__ __forceinline__ void bar_wait(u32 bar, u32 parity) {
  u32 done = 0, polls = 0;
  do {
    if (++polls == (1u << 26)) __trap();
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
// After the barriers' init, before any other thread or the async proxy uses them.
__device__ __forceinline__ void bar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// --- clusters ----------------------------------------------------------------

// This CTA's rank in its cluster, the peer CTA's address of a shared
// variable, and an arrival there. The arrival keeps the default release.cta
// semantics: gemm_v2 releases a stage after wgmma.wait_group saw its reads
// complete, so no wider fence is needed (a .release.cluster arrive, or an
// .acquire.cluster wait, costs a GPU-wide MEMBAR per call: measured 1.6-2.4x
// slower, bench/results/2026-11-30-gemm-v2-cluster-h200.txt).
__device__ __forceinline__ u32 cta_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ u32 peer_addr(u32 local, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}
__device__ __forceinline__ void bar_arrive_remote(u32 cluster_addr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}
// Every thread of every CTA of the cluster.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// --- TMA -----------------------------------------------------------------------

__device__ __forceinline__ void tma_prefetch(const TmaMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(map)) : "memory");
}
// 4-D tile load (coordinates innermost first) completing on `bar`.
__device__ __forceinline__ void tma_load(u32 dst, const TmaMap* map, int c0, int c1, int c2, int c3, u32 bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
// The same load multicast to the CTAs of `mask`: each receives the box at
// `dst` in its own shared memory and a complete_tx on its own `bar` offset.
__device__ __forceinline__ void tma_load_mc(u32 dst, const TmaMap* map, int c0, int c1, int c2, int c3, u32 bar,
                                            unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3, %4, %5}], [%6], %7;\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "h"(mask)
      : "memory");
}
// 4-D tile store from shared memory at `src`, in this thread's bulk group.
__device__ __forceinline__ void tma_store(const TmaMap* map, int c0, int c1, int c2, int c3, u32 src) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(
                   reinterpret_cast<u64>(map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// This thread's committed stores have read their shared memory (it may be rewritten).
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// This thread's committed stores are complete.
__device__ __forceinline__ void tma_store_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Generic-proxy writes to shared memory made visible to the async proxy (TMA).
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// --- wgmma -----------------------------------------------------------------------

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Pins the order of N accumulators against the asynchronous wgmma.
template <int N>
__device__ __forceinline__ void fence_acc(float* acc) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// Shared-memory matrix descriptor, 128B swizzle; byte offsets.
__host__ __device__ constexpr u64 desc(u32 addr, u32 lbo, u32 sbo) {
  return static_cast<u64>((addr & 0x3FFFFu) >> 4) | (static_cast<u64>(lbo >> 4) << 16) |
         (static_cast<u64>(sbo >> 4) << 32) | (1ull << 62);
}
// A descriptor from its low word; the high word (stride byte offset 1024,
// 128B swizzle) is common to every tile gemm_v2 reads.
__device__ __forceinline__ u64 desc_of(u32 lo) {
  constexpr u32 kHi = static_cast<u32>(desc(0, 0, 1024) >> 32);
  u64 d;
  asm("mov.b64 %0, {%1, %2};" : "=l"(d) : "r"(lo), "r"(kHi));
  return d;
}

// --- named barriers ------------------------------------------------------------

// Barrier `id` among `Threads` threads (a multiple of 32): wait for all of
// them, or only arrive.
template <int Threads>
__device__ __forceinline__ void named_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(Threads) : "memory");
}
template <int Threads>
__device__ __forceinline__ void named_arrive(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(Threads) : "memory");
}

}  // namespace opgraph_gemm
