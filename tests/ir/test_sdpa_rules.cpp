// The sdpa forward's semantic rules: one invalid graph per rule, each refused at
// validate() with the expected code and a message naming op, node, port/tensor
// (or attribute) and the rule. The base graph is valid (test_sdpa.cpp) and each
// case changes one thing.
#include "sdpa_ir_util.h"

using namespace sdpa_test;

namespace {

struct FwdBad {
  const char* rule;
  ErrorCode code;
  const char* where;
  std::function<void(Fwd&)> tweak;
  std::function<void(Fwd&)> after = nullptr;  // runs after the node is added (outputs exist)
};

constexpr ErrorCode kNS = ErrorCode::GRAPH_NOT_SUPPORTED;
constexpr ErrorCode kUnset = ErrorCode::ATTRIBUTE_NOT_SET;

void paged(Fwd& f) {
  f.padding();
  f.k = f.g.tensor({6, 2, 4, 16}, DataType::HALF, "k_cache");
  f.v = f.g.tensor({6, 1, 4, 8}, DataType::HALF, "v_cache");
  f.in.page_table_k = f.g.tensor({2, 1, 3, 1}, DataType::INT32, "pt_k");
  f.in.page_table_v = f.g.tensor({2, 1, 3, 1}, DataType::INT32, "pt_v");
  f.a.set("paged_attention_max_seq_len_kv", 12);
}

const std::vector<FwdBad>& forward_cases() {
  static const std::vector<FwdBad> k = {
      {"layout_rank4", kNS, "port Q (tensor 'q3')", [](Fwd& f) { f.q = f.g.tensor({2, 8, 16}, DataType::HALF, "q3"); }},
      {"layout_last_stride", kNS, "port K (tensor 'k_t')",
       [](Fwd& f) { f.k = f.g.tensor({2, 2, 12, 16}, DataType::HALF, "k_t", {384, 192, 1, 12}); }},
      {"same_io_dtype", kNS, "port V (tensor 'v32')",
       [](Fwd& f) { f.v = f.g.tensor({2, 1, 12, 8}, DataType::FLOAT, "v32"); }},
      {"d_qk_match", kNS, "port K (tensor 'k8')", [](Fwd& f) { f.k = f.g.tensor({2, 2, 12, 8}, DataType::HALF, "k8"); }},
      {"batch_match", kNS, "port K (tensor 'k_b3')",
       [](Fwd& f) { f.k = f.g.tensor({3, 2, 12, 16}, DataType::HALF, "k_b3"); }},
      {"kv_seq_match", kNS, "port V (tensor 'v_s10')",
       [](Fwd& f) { f.v = f.g.tensor({2, 1, 10, 8}, DataType::HALF, "v_s10"); }},
      {"gqa_head_ratio", kNS, "port K (tensor 'k_h3')",
       [](Fwd& f) { f.k = f.g.tensor({2, 3, 12, 16}, DataType::HALF, "k_h3"); }},
      {"attn_scale_once", kNS, "port Attn_scale (tensor 'scale')",
       [](Fwd& f) {
         f.in.attn_scale = f.g.tensor({1}, DataType::FLOAT, "scale");
         f.a.set("attn_scale", 0.5);
       }},
      {"attn_scale_scalar", kNS, "port Attn_scale (tensor 'scale2')",
       [](Fwd& f) { f.in.attn_scale = f.g.tensor({2}, DataType::FLOAT, "scale2"); }},
      {"bias_broadcast", kNS, "port Bias (tensor 'bias')",
       [](Fwd& f) { f.in.bias = f.g.tensor({1, 4, 8, 11}, DataType::HALF, "bias"); }},
      {"bias_broadcast", kNS, "port Bias (tensor 'bias3d')",
       [](Fwd& f) { f.in.bias = f.g.tensor({4, 8, 12}, DataType::HALF, "bias3d"); }},
      {"padding_needs_seq_len", kUnset, "port SEQ_LEN_KV",
       [](Fwd& f) {
         f.a.set("use_padding_mask", true);
         f.in.seq_len_q = f.seq_lens("sq");
       }},
      {"seq_len_without_padding_mask", kNS, "port SEQ_LEN_Q (tensor 'sq')",
       [](Fwd& f) { f.in.seq_len_q = f.seq_lens("sq"); }},
      {"seq_len_shape", kNS, "port SEQ_LEN_KV (tensor 'skv3')",
       [](Fwd& f) {
         f.padding();
         f.in.seq_len_kv = f.g.tensor({3, 1, 1, 1}, DataType::INT32, "skv3");
       }},
      {"ragged_needs_padding_mask", kNS, "port Q (tensor 'q')",
       [](Fwd& f) { f.q->set_ragged_offset(f.g.tensor({3, 1, 1, 1}, DataType::INT32, "rq")); }},
      {"ragged_offset_shape", kNS, "port K (tensor 'k')",
       [](Fwd& f) {
         f.padding();
         f.k->set_ragged_offset(f.g.tensor({2, 1, 1, 1}, DataType::INT32, "rk"));
       }},
      {"ragged_needs_padding_mask", kNS, "port O (tensor 'attn::O')", [](Fwd&) {},
       [](Fwd& f) { f.out.O->set_ragged_offset(f.g.tensor({3, 1, 1, 1}, DataType::INT32, "ro")); }},
      {"layout_last_stride", kNS, "port O (tensor 'attn::O')", [](Fwd&) {},
       [](Fwd& f) { f.out.O->set_stride({256, 64, 1, 8}); }},
      {"causal_exclusive", kNS, "attribute 'use_causal_mask_bottom_right'",
       [](Fwd& f) { f.a.set("use_causal_mask", true).set("use_causal_mask_bottom_right", true); }},
      {"causal_alignment_conflict", kNS, "attribute 'diagonal_alignment'",
       [](Fwd& f) { f.a.set("use_causal_mask", true).set("diagonal_alignment", "BOTTOM_RIGHT"); }},
      {"causal_right_bound_conflict", kNS, "attribute 'diagonal_band_right_bound'",
       [](Fwd& f) { f.a.set("use_causal_mask", true).set("diagonal_band_right_bound", 2); }},
      {"band_bounds", kNS, "attribute 'diagonal_band_right_bound'",
       [](Fwd& f) { f.a.set("diagonal_band_right_bound", -1); }},
      {"band_bounds", kNS, "attribute 'sliding_window_length'", [](Fwd& f) { f.a.set("sliding_window_length", 0); }},
      {"sliding_window_conflict", kNS, "attribute 'sliding_window_length'",
       [](Fwd& f) { f.a.set("sliding_window_length", 3).set("diagonal_band_left_bound", 5); }},
      {"bottom_right_sq_le_skv", kNS, "port Q (tensor 'q_long')",
       [](Fwd& f) {
         f.q = f.g.tensor({2, 4, 16, 16}, DataType::HALF, "q_long");
         f.a.set("use_causal_mask_bottom_right", true);
       }},
      {"dropout_range", kNS, "attribute 'dropout_probability'", [](Fwd& f) { f.a.set("dropout_probability", 1.0); }},
      {"dropout_needs_seed_offset", kUnset, "port Seed",
       [](Fwd& f) { f.a.set("dropout_probability", 0.2); }},
      {"seed_without_dropout", kNS, "port Seed (tensor 'seed')",
       [](Fwd& f) { f.in.seed = f.g.tensor({1}, DataType::INT64, "seed"); }},
      {"rng_scalar", kNS, "port Offset (tensor 'offset_f')",
       [](Fwd& f) {
         f.a.set("dropout_probability", 0.2);
         f.in.seed = f.g.tensor({1}, DataType::INT64, "seed");
         f.in.offset = f.g.tensor({1}, DataType::FLOAT, "offset_f");
       }},
      {"dropout_mask_pair", kNS, "port Dropout_mask (tensor 'mask')",
       [](Fwd& f) { f.in.dropout_mask = f.g.tensor({2, 4, 8, 12}, DataType::HALF, "mask"); }},
      {"dropout_exclusive", kNS, "port Dropout_mask (tensor 'mask')",
       [](Fwd& f) {
         f.in.dropout_mask = f.g.tensor({2, 4, 8, 12}, DataType::HALF, "mask");
         f.in.dropout_scale = scalar(f.g, "dscale");
         f.a.set("dropout_probability", 0.0);
       }},
      {"dropout_mask_shape", kNS, "port Dropout_mask (tensor 'mask')",
       [](Fwd& f) {
         f.in.dropout_mask = f.g.tensor({2, 4, 8, 5}, DataType::HALF, "mask");
         f.in.dropout_scale = scalar(f.g, "dscale");
       }},
      {"rng_dump_needs_dropout", kNS, "attribute 'rng_dump'", [](Fwd& f) { f.a.set("rng_dump", true); }},
      {"sink_token_shape", kNS, "port SINK_TOKEN (tensor 'sink')",
       [](Fwd& f) { f.in.sink_token = f.g.tensor({1, 2, 1, 1}, DataType::FLOAT, "sink"); }},
      {"block_mask_unified_only", kNS, "port Block_mask (tensor 'blocks')",
       [](Fwd& f) {
         f.in.block_mask = f.g.tensor({2, 4, 1, 1}, DataType::UINT8, "blocks");
         f.a.set("implementation", "COMPOSITE");
       }},
      {"block_mask_shape", kNS, "port Block_mask (tensor 'blocks')",
       [](Fwd& f) { f.in.block_mask = f.g.tensor({2, 4, 2, 1}, DataType::UINT8, "blocks"); }},
      {"unified_dropout_stats", kNS, "attribute 'implementation'",
       [](Fwd& f) {
         f.a.set("implementation", "UNIFIED").set("generate_stats", true).set("dropout_probability", 0.1);
         f.in.seed = f.g.tensor({1}, DataType::INT64, "seed");
         f.in.offset = f.g.tensor({1}, DataType::INT64, "offset");
       }},
      {"paged_tables_pair", kUnset, "port Page_table_V",
       [](Fwd& f) {
         paged(f);
         f.in.page_table_v = nullptr;
       }},
      {"paged_max_seq_len_kv", kUnset, "port Page_table_K (tensor 'pt_k')",
       [](Fwd& f) {
         paged(f);
         f.a = Attributes().set_name("attn").set("use_padding_mask", true);
       }},
      {"paged_block_size", kNS, "port V (tensor 'v_cache8')",
       [](Fwd& f) {
         paged(f);
         f.v = f.g.tensor({6, 1, 8, 8}, DataType::HALF, "v_cache8");
       }},
      {"paged_table_shape", kNS, "port Page_table_K (tensor 'pt_short')",
       [](Fwd& f) {
         paged(f);
         f.in.page_table_k = f.g.tensor({2, 1, 2, 1}, DataType::INT32, "pt_short");
       }},
      {"paged_attr_without_tables", kNS, "attribute 'paged_attention_max_seq_len_kv'",
       [](Fwd& f) { f.a.set("paged_attention_max_seq_len_kv", 12); }},
      {"paged_needs_padding_mask", kNS, "port Page_table_K (tensor 'pt_k')",
       [](Fwd& f) {
         paged(f);
         f.a = Attributes().set_name("attn").set("paged_attention_max_seq_len_kv", 12);
         f.in.seq_len_q = f.in.seq_len_kv = nullptr;
       }},
      {"ragged_paged_cache", kNS, "port K (tensor 'k_cache')",
       [](Fwd& f) {
         paged(f);
         f.k->set_ragged_offset(f.g.tensor({3, 1, 1, 1}, DataType::INT32, "rk"));
       }},
  };
  return k;
}

}  // namespace

TEST(SdpaIrRules, ForwardEachRuleRefusedAndNamed) {
  for (const FwdBad& c : forward_cases()) {
    SCOPED_TRACE(c.rule);
    Fwd f;
    c.tweak(f);
    f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
    if (c.after) c.after(f);
    expect_refused(f.g.validate(), c.code, "sdpa", "attn", c.where, c.rule);
  }
}

TEST(SdpaIrRules, ForwardBaseGraphIsValid) {
  // Guards the table above: without a tweak the base graph validates.
  Fwd f;
  f.out = f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  EXPECT_TRUE(f.g.validate().is_good());
}

TEST(SdpaIrRules, UnknownAttributeAndBadEnumRefused) {
  Fwd f;
  f.a.set("use_causal", true);
  f.g.sdpa(f.q, f.k, f.v, f.a, f.in);
  Status s = f.g.validate();
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(s.message().find("unknown attribute 'use_causal'"), std::string::npos) << s.message();
  Fwd f2;
  f2.a.set("diagonal_alignment", "MIDDLE");
  f2.g.sdpa(f2.q, f2.k, f2.v, f2.a, f2.in);
  s = f2.g.validate();
  EXPECT_NE(s.message().find("'MIDDLE' is not one of"), std::string::npos) << s.message();
}
