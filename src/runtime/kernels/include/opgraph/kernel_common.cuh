// opgraph/kernel_common.cuh — the shared preamble of every NVRTC kernel.
//
// Kernels are compiled by NVRTC with no host headers and no toolkit include
// path (the compile is hermetic: only embedded files are visible, so the
// embedded-sources digest pins everything a cubin was compiled from). This
// header gives them fixed-width integer types and small index helpers.
#pragma once

namespace opgraph_kernels {

using i32 = int;
using u32 = unsigned int;
using i64 = long long;
using u64 = unsigned long long;

static_assert(sizeof(i64) == 8, "opgraph kernels assume a 64-bit long long");

// The global index of this thread in a 1-D launch, as 64 bits so element
// counts above 2^31 index correctly.
__device__ __forceinline__ i64 global_thread_index() {
  return static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// The number of threads of a 1-D grid: the stride of a grid-stride loop.
__device__ __forceinline__ i64 grid_thread_count() {
  return static_cast<i64>(gridDim.x) * blockDim.x;
}

}  // namespace opgraph_kernels
