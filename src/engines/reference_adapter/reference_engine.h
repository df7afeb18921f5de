// engines/reference_adapter/reference_engine.h — the CPU reference offered to the planner.
//
// The reference executor (src/engines/reference/) is the oracle; this adapter is
// the Engine that puts it in the plan list. It accepts every graph whose ops all
// have a reference kernel, needs no device and has no knobs, and executes HOST
// buffers (float64 accumulation). It is offered for every graph through the
// manifest's universal row: ranked after the backend in A/B, first in FALLBACK
// when the target has no GPU — it is what runs there.
#pragma once

#include <memory>

#include "opgraph/engine.h"

namespace opgraph::engines {

std::unique_ptr<Engine> make_reference_engine(EngineIdentity identity);

}  // namespace opgraph::engines
