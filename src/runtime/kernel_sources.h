// runtime/kernel_sources.h — the kernel sources embedded in the library.
//
// At build time cmake/embed_kernels.cmake copies every file under
// src/engines/<family>/kernels/ (*.cu, *.cuh) and the shared kernel headers
// under src/runtime/kernels/include/ into a generated .cpp, so a built library
// compiles its kernels without its source tree. Names are paths relative to
// src/engines/ ("smoke/kernels/smoke.cu") or to src/runtime/kernels/include/
// ("opgraph/kernel_common.cuh"); a kernel #includes another embedded file by
// that name. The digest (SHA-256 over every name and file digest, sorted by
// name) is part of the compiled-kernel cache identity: editing any kernel or
// shared header moves every cache entry to a new environment directory.
#pragma once

#include <span>
#include <string_view>

namespace opgraph::runtime {

struct EmbeddedSource {
  std::string_view name;  // see the file comment
  std::string_view text;  // the file's bytes, unchanged
};

// Every embedded file, sorted by name. Generated.
std::span<const EmbeddedSource> embedded_sources();
// Hex SHA-256 of all embedded sources and headers. Generated.
std::string_view embedded_sources_digest();
// The embedded file named `name`, or nullptr.
const EmbeddedSource* find_embedded_source(std::string_view name);

}  // namespace opgraph::runtime
