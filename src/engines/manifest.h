// engines/manifest.h — the shipped manifest table (rows in manifest.cpp).
#pragma once

#include "plan/manifest.h"

namespace opgraph::engines {

// THE table of families and engine slots this build ships. Adding an engine is
// one slot here plus its folder; adding a family is one row with a new block.
const plan::Manifest& default_manifest();

}  // namespace opgraph::engines
