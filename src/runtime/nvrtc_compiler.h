// runtime/nvrtc_compiler.h — specialise an embedded kernel source and compile
// it with NVRTC to a cubin for one target architecture.
//
// Specialisation prepends one `#define NAME VALUE` line per KernelDefine to the
// embedded source; batch, heads and lengths stay run-time arguments (one
// kernel per layout class). The compile is hermetic: NVRTC sees only the
// embedded files, offered as headers by their embedded names, and no toolkit
// include path. Options: --gpu-architecture=<arch> (sm_90a makes wgmma and
// TMA available), -std=c++17, -default-device. The result is a cubin (never
// PTX), so loading it costs no JIT.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "opgraph/status.h"

namespace opgraph::runtime {

struct KernelDefine {
  std::string name;   // a C identifier
  std::string value;  // the replacement text, e.g. "2.5" or "128"
};

// One specialisation of one kernel: everything that determines its cubin
// except the architecture and the environment (NVRTC version, sources digest).
struct KernelRequest {
  std::string family;  // engine family, [A-Za-z0-9_]+, e.g. "smoke"
  std::string kernel;  // readable specialisation name, [A-Za-z0-9_]+, e.g. "affine_f32_a2p5_b1"
  std::string source;  // embedded source name, e.g. "smoke/kernels/smoke.cu"
  std::string entry;   // NVRTC name expression of the __global__ function, e.g. "smoke_affine<float>"
  std::vector<KernelDefine> defines;

  // The full cache key: canonical JSON of every field, the arch and the
  // compile options. Two requests share a cubin iff their keys are equal.
  std::string key(std::string_view arch) const;
  // The program NVRTC compiles, without the entry: the source and the defines. Requests of one build differ only in
  // their name expression, so an extern "C" entry of the build is in any of its compiles' cubins.
  std::string build_key() const;
};

struct CompiledKernel {
  std::string arch;          // e.g. "sm_90a"
  std::string lowered_name;  // the mangled symbol cuModuleGetFunction takes
  std::string cubin;         // the ELF bytes
  std::string log;           // NVRTC's log (warnings); empty for a cache hit
};

// The options passed to nvrtcCompileProgram for `arch` (with -lineinfo under
// OPGRAPH_NVRTC_LINEINFO=1). Every KernelRequest::key holds them.
std::vector<std::string> nvrtc_options(std::string_view arch);

// The source NVRTC compiles: the defines, then the embedded file. INVALID_VALUE
// when the source is not embedded or a name is not an identifier.
Result<std::string> specialised_source(const KernelRequest& request);

// Compiles `request` for `arch`. GRAPH_NOT_SUPPORTED when libnvrtc cannot be
// loaded (the reason names what was tried); NVRTC_COMPILATION_FAILED with the
// full compile log (and the specialised source's first lines) on a failed
// compile; INVALID_VALUE for a malformed request. OPGRAPH_LOG_LEVEL >= 2
// prints the specialised source and the compile log to stderr.
Result<CompiledKernel> compile_kernel(const KernelRequest& request, std::string_view arch);

// Checks that `bytes` is a complete CUDA ELF (magic, 64-bit little-endian,
// EM_CUDA, the section and program header tables and every section inside the
// file) that names `lowered_name` in it.
// INVALID_VALUE saying which check failed. Used to validate a cubin read back
// from disk when no device is present to cuModuleLoadData it.
Status validate_cubin(std::string_view bytes, std::string_view lowered_name);

// Whether `s` is non-empty and only [A-Za-z0-9_].
bool is_plain_name(std::string_view s) noexcept;

}  // namespace opgraph::runtime
