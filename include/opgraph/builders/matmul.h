// opgraph/builders/matmul.h — matmul and the MoE grouped matmuls (records in src/ir/ops/matmul.cpp).
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class MatmulBuilders : public virtual NodeSink {
 public:
  // C[..., M, N] = A[..., M, K] @ B[..., K, N], batch axes broadcast.
  // Optional per-batch overrides (M_override, N_override, K_override): int32/int64, one element per batch
  // entry ([B,1,1]) or cuDNN's broadcast form (C's rank, unit M/N axes, batch axes 1 or C's: [b,1,1,1]).
  // Attributes: padding (FLOAT, value for rows/cols beyond an override).
  TensorPtr matmul(TensorPtr a, TensorPtr b, const Attributes& attrs = {}, TensorPtr m_override = nullptr,
                   TensorPtr n_override = nullptr, TensorPtr k_override = nullptr);
  // Output[...] from Token, Weight[E, K, N], FirstTokenOffset, TokenIndex, TokenKs. Attributes: mode, top_k.
  TensorPtr moe_grouped_matmul(TensorPtr token, TensorPtr weight, TensorPtr first_token_offset,
                               TensorPtr token_index = nullptr, TensorPtr token_ks = nullptr,
                               const Attributes& attrs = {});
  // DWeight[E, K, N] from DOutput, Token, FirstTokenOffset.
  TensorPtr moe_grouped_matmul_bwd(TensorPtr doutput, TensorPtr token, TensorPtr first_token_offset,
                                   const Attributes& attrs = {});
};

}  // namespace opgraph
