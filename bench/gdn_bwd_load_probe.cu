// bench/gdn_bwd_load_probe.cu — how fast one CTA a multiprocessor pulls gdn_bwd_grads' per-head tiles into shared
// memory, by load path, with nothing else to do: 136 KB a head (Vn, dVn [64][128], S^T, dS^T [128][128], T [64][64]
// bf16 contiguous; v and dO as 64 rows of 256 bytes 16 KB apart, as at 64 heads), G = 4 heads a CTA, 512 threads,
// 228 KB of shared memory (one CTA a multiprocessor, as the kernel), each head's bytes distinct (2.2 GB in all: DRAM,
// not L2). Paths: 0 cp.async 16-byte pieces by every thread (the kernel's), 1 cp.async.bulk copies on an mbarrier
// (one thread: a bulk copy a contiguous tile, one a 256-byte row), 2 as 0 with the rows' pieces issued first.
// Prints GB/s a path (CUDA events, median of the rounds) and per multiprocessor.
//   nvcc -std=c++17 -O2 -arch=sm_90a bench/gdn_bwd_load_probe.cu -o /tmp/probe && /tmp/probe [rounds]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

namespace {
constexpr int kThreads = 512, kG = 4, kRows = 64, kRowBytes = 256;
__constant__ unsigned kTile[5] = {16384, 16384, 32768, 32768, 8192};  // Vn, dVn, S^T, dS^T, T
constexpr unsigned kContig = 16384 + 16384 + 32768 + 32768 + 8192;  // 106496
constexpr unsigned kHeadBytes = kContig + 2 * kRows * kRowBytes;   // + v, dO rows: 139264
constexpr long long kRowStride = 16384;                             // bytes between a token's rows (64 heads x 256)
constexpr unsigned kSmem = 228416;

__device__ __forceinline__ unsigned su32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void cp16(unsigned d, const void* s) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
}

// Head h's contiguous tiles at contig + h * kContig; its rows at rows + (h / 64) * 64 * kRowStride + (h % 64) * 256
// (token r's row r * kRowStride on): v and dO share the rows' region at two offsets.
__global__ void __launch_bounds__(kThreads, 1) probe(const unsigned char* contig, const unsigned char* rows, int mode) {
  extern __shared__ __align__(1024) unsigned char sm[];
  __shared__ __align__(8) unsigned long long bar;
  const int tid = threadIdx.x;
  const unsigned base = su32(sm), b = su32(&bar);
  if (mode == 1 && tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  for (int g = 0; g < kG; ++g) {
    const long long h = static_cast<long long>(blockIdx.x) * kG + g;
    const unsigned char* c = contig + h * kContig;
    const unsigned char* r0 = rows + (h / 64) * 2 * kRows * kRowStride + (h % 64) * kRowBytes;
    if (mode == 1) {
      if (tid == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(kHeadBytes) : "memory");
        unsigned off = 0;
        for (int i = 0; i < 5; ++i) {
          asm volatile(
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                  base + off),
              "l"(c + off), "r"(kTile[i]), "r"(b)
              : "memory");
          off += kTile[i];
        }
      }
      __syncthreads();  // the expect_tx before any row copy completes
      if (tid < 2 * kRows) {
        const int t = tid % kRows, which = tid / kRows;
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                base + kContig + (which * kRows + t) * kRowBytes),
            "l"(r0 + (which * kRows + t) * kRowStride), "r"(kRowBytes), "r"(b)
            : "memory");
      }
      asm volatile(
          "{\n.reg .pred p;\nW:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}\n" ::"r"(b),
          "r"(g & 1)
          : "memory");
    } else {
      auto rows_part = [&]() {
        for (int i = tid; i < 2 * kRows * (kRowBytes / 16); i += kThreads) {
          const int row = i / (kRowBytes / 16), piece = i % (kRowBytes / 16);
          cp16(base + kContig + row * kRowBytes + piece * 16, r0 + row * kRowStride + piece * 16);
        }
      };
      if (mode == 2) rows_part();
      for (unsigned i = tid; i < kContig / 16; i += kThreads) cp16(base + i * 16, c + i * 16);
      if (mode == 0) rows_part();
      asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
    }
    __syncthreads();
  }
}
}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int ctas = 4096, heads = ctas * kG;
  unsigned char *contig = nullptr, *rows = nullptr;
  CK(cudaMalloc(&contig, static_cast<size_t>(heads) * kContig));
  CK(cudaMalloc(&rows, static_cast<size_t>(heads / 64 + 1) * 2 * kRows * kRowStride));
  CK(cudaMemset(contig, 1, static_cast<size_t>(heads) * kContig));
  CK(cudaMemset(rows, 2, static_cast<size_t>(heads / 64 + 1) * 2 * kRows * kRowStride));
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem - 1024));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const char* names[3] = {"cp.async 16 B, tiles then rows (the kernel's)", "cp.async.bulk on an mbarrier",
                          "cp.async 16 B, rows first"};
  std::vector<float> t[3];
  for (int m = 0; m < 3; ++m) probe<<<ctas, kThreads, kSmem - 1024>>>(contig, rows, m);  // warm
  CK(cudaDeviceSynchronize());
  for (int r = 0; r < rounds; ++r)
    for (int m = 0; m < 3; ++m) {
      CK(cudaEventRecord(e0));
      probe<<<ctas, kThreads, kSmem - 1024>>>(contig, rows, m);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms = 0.f;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t[m].push_back(ms);
    }
  const double bytes = static_cast<double>(heads) * kHeadBytes;
  std::printf("# %d CTAs x %d heads x %u bytes (%.2f GB), %d multiprocessors, median of %d rounds\n", ctas, kG,
              kHeadBytes, bytes / 1e9, sms, rounds);
  for (int m = 0; m < 3; ++m) {
    std::sort(t[m].begin(), t[m].end());
    const double ms = t[m][t[m].size() / 2];
    std::printf("path %d %-48s %8.3f ms %7.1f GB/s  %6.2f GB/s a multiprocessor\n", m, names[m], ms,
                bytes / ms / 1e6, bytes / ms / 1e6 / sms);
  }
  CK(cudaFree(contig));
  CK(cudaFree(rows));
  return 0;
}
