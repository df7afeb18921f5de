// smoke/kernels/smoke.cu — the runtime layer's smoke kernel family.
//
// y[i] = A * x[i] + B with A and B baked in when the kernel is specialised
// (the runtime prepends `#define OPGRAPH_SMOKE_A ...` / `OPGRAPH_SMOKE_B`),
// and the element count n a run-time argument: one kernel per layout class.
// The element type is the template argument (entry "smoke_affine<float>" or
// "smoke_affine<double>"). It exists to test and time the NVRTC path, the
// compiled-kernel cache and the launch path; no engine computes with it.
#include "opgraph/kernel_common.cuh"

#ifndef OPGRAPH_SMOKE_A
#error "smoke.cu: OPGRAPH_SMOKE_A is set by the specialisation (the constant a of y = a*x + b)"
#endif
#ifndef OPGRAPH_SMOKE_B
#error "smoke.cu: OPGRAPH_SMOKE_B is set by the specialisation (the constant b of y = a*x + b)"
#endif

namespace {

constexpr double kSmokeA = OPGRAPH_SMOKE_A;
constexpr double kSmokeB = OPGRAPH_SMOKE_B;

}  // namespace

// x, y: n elements of T in device memory (y may not alias x). Grid-stride, so
// any 1-D grid covers any n.
template <typename T>
__global__ void smoke_affine(const T* __restrict__ x, T* __restrict__ y, opgraph_kernels::i64 n) {
  const T a = static_cast<T>(kSmokeA);
  const T b = static_cast<T>(kSmokeB);
  for (opgraph_kernels::i64 i = opgraph_kernels::global_thread_index(); i < n;
       i += opgraph_kernels::grid_thread_count()) {
    y[i] = a * x[i] + b;
  }
}

template __global__ void smoke_affine<float>(const float*, float*, opgraph_kernels::i64);
template __global__ void smoke_affine<double>(const double*, double*, opgraph_kernels::i64);
