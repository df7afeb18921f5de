// ir/ops/matmul_common.h — the matmul override rule the IR and the cuDNN lowering share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace opgraph::ops {

// Whether a matmul M/N/K override of dims `override_dims` is in cuDNN's broadcast form over a
// C whose batch axes are `batch`: C's rank (batch + 2), unit M and N axes, each batch axis 1 or
// C's (cudnn-frontend's SDPA hands seq_len [b, 1, 1, 1] to its [b, h] matmuls). The IR admits
// this form or one element per batch entry (src/ir/ops/matmul.cpp); the cuDNN lowering serves
// only this form, after padding the override with leading unit axes to C's rank.
inline bool override_broadcasts(const std::vector<std::int64_t>& override_dims,
                                const std::vector<std::int64_t>& batch) {
  if (override_dims.size() != batch.size() + 2) return false;
  if (override_dims[batch.size()] != 1 || override_dims[batch.size() + 1] != 1) return false;
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (override_dims[i] != 1 && override_dims[i] != batch[i]) return false;
  return true;
}

}  // namespace opgraph::ops
