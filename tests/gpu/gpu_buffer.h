// gpu_buffer.h — a smoke-kernel run for the GPU tests and the cold/warm
// benchmark, through the runtime's driver table only (device buffers:
// runtime/device_buffer.h, shared with the CLI and the GEMM benchmark).
#pragma once

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engines/smoke/smoke_kernels.h"
#include "runtime/device_buffer.h"
#include "runtime/device.h"

namespace opgraph::gpu_testing {

// Runs one smoke specialisation on n fresh random elements in [-8, 8):
// output poisoned first (all bits set: NaN in f32 and f64), launched on
// `stream`, copied back, compared with a float64 host computation rounded to
// the element type. Returns the number of mismatching or unwritten elements
// (0 = correct) or a bad Status for a failed CUDA call.
inline Result<std::size_t> run_smoke_and_check(runtime::KernelRuntime& rt, const runtime::LoadedKernel& kernel,
                                               const smoke::AffineParams& p, std::int64_t n, CUstream stream,
                                               std::mt19937& rng) {
  const auto& api = rt.api();
  const bool f64 = p.type == smoke::SmokeType::F64;
  const std::size_t elem = f64 ? 8 : 4, bytes = elem * static_cast<std::size_t>(n);
  std::uniform_real_distribution<double> dist(-8.0, 8.0);
  std::vector<double> xd(static_cast<std::size_t>(n));
  std::vector<float> xf(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < xd.size(); ++i) {
    xf[i] = static_cast<float>(dist(rng));
    xd[i] = f64 ? dist(rng) : xf[i];
  }
  DeviceBuffer x(api, bytes), y(api, bytes);
  OPGRAPH_CHECK(x.status());
  OPGRAPH_CHECK(y.status());
  const void* host_x = f64 ? static_cast<const void*>(xd.data()) : static_cast<const void*>(xf.data());
  OPGRAPH_CHECK(runtime::cuda_check(api, api.memcpy_htod(x.ptr(), host_x, bytes), "cuMemcpyHtoD x"));
  OPGRAPH_CHECK(runtime::cuda_check(api, api.memset_d32(y.ptr(), 0xFFFFFFFFu, bytes / 4), "cuMemsetD32 poison"));
  // The copy and the memset ran on the legacy stream, which a non-blocking
  // `stream` does not wait for: finish them before the launch.
  OPGRAPH_CHECK(runtime::cuda_check(api, api.ctx_synchronize(), "cuCtxSynchronize"));
  CUdeviceptr xp = x.ptr(), yp = y.ptr();
  long long count = n;
  void* args[] = {&xp, &yp, &count};
  runtime::LaunchDims dims;
  const std::int64_t blocks = std::min<std::int64_t>((n + 255) / 256, std::int64_t{rt.device().sm_count} * 8);
  dims.grid[0] = static_cast<unsigned>(std::max<std::int64_t>(blocks, 1));
  dims.block[0] = 256;
  OPGRAPH_CHECK(rt.launch(kernel, dims, stream, args));
  OPGRAPH_CHECK(runtime::cuda_check(api, api.stream_synchronize(stream), "cuStreamSynchronize"));
  std::vector<unsigned char> out(bytes);
  OPGRAPH_CHECK(runtime::cuda_check(api, api.memcpy_dtoh(out.data(), y.ptr(), bytes), "cuMemcpyDtoH y"));
  std::size_t bad = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    double got, ref, tol;
    if (f64) {
      std::memcpy(&got, out.data() + 8 * i, 8);
      ref = p.a * xd[i] + p.b;
      tol = 4e-16 * (std::fabs(p.a * xd[i]) + std::fabs(p.b));
    } else {
      float g;
      std::memcpy(&g, out.data() + 4 * i, 4);
      got = g;
      ref = static_cast<double>(static_cast<float>(p.a)) * xf[i] + static_cast<float>(p.b);
      tol = 2.4e-7 * (std::fabs(p.a * xf[i]) + std::fabs(p.b));  // two float roundings at most
    }
    if (!(std::fabs(got - ref) <= tol)) ++bad;  // NaN (unwritten) fails too
  }
  return bad;
}

}  // namespace opgraph::gpu_testing
