// ir/ops/matmul.cpp — matmul and the MoE grouped matmuls.
//
// matmul: C[..., M, N] = A[..., M, K] @ B[..., K, N]. Batch axes broadcast
//   (numpy rules on the leading axes). M/N/K overrides are INT32/INT64 tensors
//   giving each batch entry its extent, in one of two forms: one element per batch
//   entry (entry = the row-major flat index over C's batch axes), or cuDNN's
//   broadcast form, C's rank with unit M and N axes and each batch axis 1 or C's
//   (cudnn-frontend's SDPA hands seq_len [b, 1, 1, 1] to its [b, h] matmuls). Rows
//   m >= M_override and columns n >= N_override of C hold `padding`; the sum runs
//   over k < K_override.
// moe_grouped_matmul: tokens grouped by expert. Token [1, T, K], Weight [E, K, N],
//   FirstTokenOffset [E] (INT32/INT64, start row of each expert's group, groups
//   contiguous, the last ends at T).
//   mode NONE:    Output[1, T, N], row t uses the weight of the group holding t.
//   mode GATHER:  TokenIndex [T_out] rows; Output row i = Token[TokenIndex[i]] @ W_e(i).
//   mode SCATTER: Output[1, T_out / top_k, N]; row TokenIndex[i] += TokenKs[i] * (Token[i] @ W_e(i)).
// moe_grouped_matmul_bwd: DWeight[E, K, N] = sum over group e of Token^T @ DOutput.
#include "ir/infer_context.h"
#include "ir/ops/groups.h"
#include "ir/ops/matmul_common.h"
#include "opgraph/builders/matmul.h"

namespace opgraph::ops {
namespace {

Status infer_matmul(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank_between(ops::in::A, 2, 8));
  OPGRAPH_CHECK(c.require_rank_between(ops::in::B, 2, 8));
  const Dims& a = c.dims(ops::in::A);
  const Dims& b = c.dims(ops::in::B);
  std::int64_t m = a[a.size() - 2], k = a.back(), kb = b[b.size() - 2], n = b.back();
  if (k != kb)
    return c.fail(ops::in::B, "inner extent K must match: A is " + InferContext::dims_str(a) + " (K = " + std::to_string(k) +
                           "), B is " + InferContext::dims_str(b) + " (K = " + std::to_string(kb) + ")");
  Dims ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  auto batch = InferContext::broadcast(ab, bb);
  if (!batch)
    return c.fail(ops::in::B, "batch axes " + InferContext::dims_str(bb) + " do not broadcast with A's " +
                           InferContext::dims_str(ab));
  std::int64_t batch_count = 1;
  for (auto x : *batch) batch_count *= x;
  for (const char* p : {"M_override", "N_override", "K_override"}) {
    if (!c.has(p)) continue;
    OPGRAPH_CHECK(c.require_integer_index(p));
    if (c.in(p)->element_count() == batch_count || override_broadcasts(c.dims(p), *batch)) continue;
    return c.fail(p, "must hold one extent per batch entry (" + std::to_string(batch_count) +
                         " elements) or be cuDNN's broadcast form: C's rank " + std::to_string(batch->size() + 2) +
                         ", unit M and N axes, each batch axis 1 or C's " + InferContext::dims_str(*batch) +
                         " (e.g. [b, 1, 1, 1] for a [b, h] batch); got dims " + InferContext::dims_str(c.dims(p)));
  }
  Dims out = *batch;
  out.push_back(m);
  out.push_back(n);
  return c.set_output(ops::out::C, out);
}

Status infer_moe(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank(ops::in::Token, 3));
  OPGRAPH_CHECK(c.require_rank(ops::in::Weight, 3));
  OPGRAPH_CHECK(c.require_integer_index(ops::in::FirstTokenOffset));
  const Dims& tok = c.dims(ops::in::Token);
  const Dims& w = c.dims(ops::in::Weight);
  if (tok[0] != 1) return c.fail(ops::in::Token, "must be [1, T, K], got " + InferContext::dims_str(tok));
  if (w[1] != tok[2])
    return c.fail(ops::in::Weight, "K must match Token's: Weight is " + InferContext::dims_str(w) + ", Token " +
                                InferContext::dims_str(tok));
  OPGRAPH_CHECK(c.require_numel(ops::in::FirstTokenOffset, w[0], "one start row per expert"));
  using MM = ops::MoeGroupedMatmulMode;
  const MM mode = ops::MoeGroupedMatmul::mode(c.node());
  std::int64_t top_k = ops::attr::top_k(c.node());
  if (top_k < 1) return c.fail_attr("top_k", "must be >= 1, got " + std::to_string(top_k));
  std::int64_t rows = tok[1];
  if (mode != MM::NONE) {
    OPGRAPH_CHECK(c.require(ops::in::TokenIndex));
    OPGRAPH_CHECK(c.require_integer_index(ops::in::TokenIndex));
    std::int64_t idx = c.in(ops::in::TokenIndex)->element_count();
    if (mode == MM::GATHER) rows = idx;
    else {
      if (idx != tok[1]) return c.fail(ops::in::TokenIndex, "SCATTER needs one destination row per token row");
      if (idx % top_k) return c.fail(ops::in::TokenIndex, "SCATTER needs a row count divisible by top_k");
      OPGRAPH_CHECK(c.require(ops::in::TokenKs));
      OPGRAPH_CHECK(c.require_floating(ops::in::TokenKs));
      OPGRAPH_CHECK(c.require_numel(ops::in::TokenKs, idx, "one routing weight per token row"));
      rows = idx / top_k;
    }
  }
  return c.set_output(ops::out::Output, {1, rows, w[2]});
}

Status infer_moe_bwd(InferContext& c) {
  OPGRAPH_CHECK(c.require_rank(ops::in::DOutput, 3));
  OPGRAPH_CHECK(c.require_rank(ops::in::Token, 3));
  OPGRAPH_CHECK(c.require_integer_index(ops::in::FirstTokenOffset));
  const Dims& dy = c.dims(ops::in::DOutput);
  const Dims& tok = c.dims(ops::in::Token);
  if (dy[0] != 1 || tok[0] != 1 || dy[1] != tok[1])
    return c.fail(ops::in::DOutput, "DOutput [1, T, N] and Token [1, T, K] must share T, got " + InferContext::dims_str(dy) +
                                 " and " + InferContext::dims_str(tok));
  std::int64_t experts = c.in(ops::in::FirstTokenOffset)->element_count();
  return c.set_output(ops::out::DWeight, {experts, tok[2], dy[2]});
}

const OpSpec kSpecs[] = {
    {.name = "matmul",
     .inputs = {{"A"}, {"B"}, {"M_override", true}, {"N_override", true}, {"K_override", true}},
     .outputs = {{"C"}},
     .attrs = {{"padding", AttrType::FLOAT, AttrValue{0.0}}},
     .infer = infer_matmul,
     .summary = "C = A @ B with batch broadcast and optional per-batch M/N/K overrides"},
    {.name = "moe_grouped_matmul",
     .inputs = {{"Token"}, {"Weight"}, {"FirstTokenOffset"}, {"TokenIndex", true}, {"TokenKs", true}},
     .outputs = {{"Output"}},
     .attrs = {{"mode", AttrType::ENUM, AttrValue{std::string("NONE")}, false, {"NONE", "GATHER", "SCATTER"}},
               {"top_k", AttrType::INT, AttrValue{std::int64_t{1}}}},
     .infer = infer_moe,
     .summary = "per-expert matmul over token groups (MoE), with gather/scatter modes"},
    {.name = "moe_grouped_matmul_bwd",
     .inputs = {{"DOutput"}, {"Token"}, {"FirstTokenOffset"}},
     .outputs = {{"DWeight"}},
     .infer = infer_moe_bwd,
     .summary = "weight gradient of moe_grouped_matmul (mode NONE)"},
};

}  // namespace

std::span<const OpSpec> matmul_specs() { return kSpecs; }

}  // namespace opgraph::ops

namespace opgraph {

TensorPtr MatmulBuilders::matmul(TensorPtr a, TensorPtr b, const Attributes& attrs, TensorPtr m_override,
                                 TensorPtr n_override, TensorPtr k_override) {
  return add_node1("matmul",
                   {{"A", a}, {"B", b}, {"M_override", m_override}, {"N_override", n_override}, {"K_override", k_override}},
                   attrs);
}

TensorPtr MatmulBuilders::moe_grouped_matmul(TensorPtr token, TensorPtr weight, TensorPtr first_token_offset,
                                             TensorPtr token_index, TensorPtr token_ks, const Attributes& attrs) {
  return add_node1("moe_grouped_matmul",
                   {{"Token", token}, {"Weight", weight}, {"FirstTokenOffset", first_token_offset},
                    {"TokenIndex", token_index}, {"TokenKs", token_ks}},
                   attrs);
}

TensorPtr MatmulBuilders::moe_grouped_matmul_bwd(TensorPtr doutput, TensorPtr token, TensorPtr first_token_offset,
                                                 const Attributes& attrs) {
  return add_node1("moe_grouped_matmul_bwd",
                   {{"DOutput", doutput}, {"Token", token}, {"FirstTokenOffset", first_token_offset}}, attrs);
}

}  // namespace opgraph
