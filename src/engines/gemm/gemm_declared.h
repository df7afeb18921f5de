// engines/gemm/gemm_declared.h — the gemm specialisations the tree declares
// (the CI compile set) and the synthetic problems they are built from.
#pragma once

#include <vector>

#include "engines/gemm/gemm_kernel.h"

namespace opgraph::gemm {

// A 1000^3 problem of the given class with `chain` as its epilogue (ADD reads
// a bf16 [N] bias, MUL a by-value scalar). Uids: A 1, B 2, C 3, operands 10+.
GemmProblem sample_problem(DataType in, DataType out, bool a_kmajor, bool b_kmajor, int vec,
                           std::vector<EpiKind> chain);
std::vector<runtime::KernelRequest> declared_specialisations();

}  // namespace opgraph::gemm
