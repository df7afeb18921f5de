// engines/smoke/smoke_kernels.h — the specialisations of the smoke kernel
// family (kernels/smoke.cu: y = a*x + b, a and b baked in).
//
// The family exists to exercise the runtime layer: NVRTC specialisation, the
// compiled-kernel cache, module load and launch. `opgraph cache warm --all`
// compiles declared_specialisations(); the runtime tests and the cold/warm
// benchmark use them.
#pragma once

#include <vector>

#include "runtime/nvrtc_compiler.h"

namespace opgraph::smoke {

enum class SmokeType { F32, F64 };

struct AffineParams {
  double a = 1.0;
  double b = 0.0;
  SmokeType type = SmokeType::F32;
};

// The request for one specialisation. a and b are written with round-trip
// precision, so the kernel's constants equal the doubles given (then rounded
// to the element type).
runtime::KernelRequest affine_request(const AffineParams& params);

// The ten specialisations the tree declares (the benchmark's "10 kernels").
std::vector<AffineParams> declared_params();
std::vector<runtime::KernelRequest> declared_specialisations();

}  // namespace opgraph::smoke
