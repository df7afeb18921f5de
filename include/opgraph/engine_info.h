// opgraph/engine_info.h — what this build offers and this machine can load: the
// manifest's engine families and engines (with each engine's availability for a
// planning target), and the GPU libraries the runtime's loader finds.
//
// For `opgraph info`, and for a caller that needs to know what kind of engine a
// plan's id names (the reference, a device engine) without parsing plan names.
// Implemented in src/api/engine_info.cpp over the manifest (src/engines/manifest.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opgraph/facts.h"
#include "opgraph/status.h"

namespace opgraph {

enum class EngineAvailability : std::uint8_t {
  AVAILABLE,    // offered for the target
  OPT_IN_OFF,   // an opt-in engine OPGRAPH_ENABLE_ENGINES does not name
  UNAVAILABLE,  // the target is outside its capability row (no device, sm out of range)
  BROKEN,       // its factory failed
};

struct EngineInfo {
  std::int64_t id = -1;        // the manifest-given engine id
  std::string name;            // stable: plan names, filters, OPGRAPH_ENABLE_ENGINES
  std::string family;          // its family's name
  bool universal = false;      // offered for every graph whatever its family (the CPU reference)
  bool needs_device = true;    // false: a host engine (Capabilities::needs_device)
  bool opt_in = false;
  std::string summary;         // one line
  EngineAvailability availability = EngineAvailability::AVAILABLE;
  std::string why;             // why not AVAILABLE ("" when it is)
};

struct FamilyInfo {
  std::string name;
  int block = -1;                    // its id block: ids 20000 + 100*block + slot
  std::vector<std::string> anchors;  // op names that make a graph this family's
  bool universal = false;            // the row offered for every graph (anchors unused)
  std::string summary;
  std::vector<EngineInfo> engines;   // in slot order
};

struct EngineListing {
  std::vector<FamilyInfo> families;  // the universal row first, then the table's order
  bool backend = false;              // a backend provider (the cuDNN family) is built in
};

// Every family and engine of the manifest planning uses, each engine judged for
// `target` (default: the host, no device).
EngineListing list_engines(const PlanTarget& target = {});

// The engine `engine_id` names, judged for `target`. INVALID_VALUE naming what
// the id decodes to when no manifest slot holds it (a backend engine's id).
Result<EngineInfo> engine_info(std::int64_t engine_id, const PlanTarget& target = {});

// One GPU library as the runtime's loader finds it (OPGRAPH_LIBCUDA / _LIBNVRTC /
// _LIBCUDNN first, then the standard places).
struct LibraryInfo {
  std::string name;       // "libcuda", "libnvrtc", "libcudnn"
  bool found = false;
  std::string path;       // what dlopen opened
  std::int64_t version = 0;  // the library's own encoding (driver 13000, NVRTC 13000, cuDNN 91400)
  std::string error;      // why not found: every candidate tried and why it failed
};

// libcuda, libnvrtc, libcudnn, in that order. LOADS each one that is found (the
// process then keeps it): call it only when that is wanted.
std::vector<LibraryInfo> probe_gpu_libraries();

}  // namespace opgraph
