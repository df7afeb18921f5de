// engines/linear_attention/gdn_overrides.h — what the two shape-override readers share (overridden_problem for gdn,
// gdn_bwd_overridden_problem for gdn_bwd): an operand of a normalised variant pack as an override reads it.
#pragma once

#include <cstdint>

#include "exec/declared_layout.h"
#include "opgraph/variant_pack.h"

namespace opgraph::linear_attention {

// Tensor `uid`'s buffer in the pack and its declared slot; both null where the graph binds no such tensor.
struct OverrideOperand {
  const OperandBuffer* buf = nullptr;
  const DeclaredSlot* slot = nullptr;
  // The call's extent of dim i: the override's, or the declared one.
  std::int64_t extent(int i) const { return buf->overridden ? buf->dims[i] : slot->dims[i]; }
};
OverrideOperand override_operand(const VariantPack& pack, const DeclaredLayout& layout, std::int64_t uid);

}  // namespace opgraph::linear_attention
