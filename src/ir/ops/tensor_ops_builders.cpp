// ir/ops/tensor_ops_builders.cpp — the tensor-ops group's builders: one line each,
// naming the op and binding cudnn-frontend's ports (records in tensor_ops*.cpp).
#include "opgraph/builders/tensor_ops.h"

namespace opgraph {
namespace {
std::array<TensorPtr, 2> two(std::vector<TensorPtr> v) {
  v.resize(2);
  return {v[0], v[1]};
}
}  // namespace

TensorPtr TensorOpBuilders::reduction(TensorPtr x, const Attributes& attrs) {
  return add_node1("reduction", {{"X", std::move(x)}}, attrs);
}
TensorPtr TensorOpBuilders::rng(TensorPtr seed, TensorPtr offset, const Attributes& attrs) {
  return add_node1("rng", {{"Seed", std::move(seed)}, {"Offset", std::move(offset)}}, attrs);
}
std::array<TensorPtr, 2> TensorOpBuilders::resample(TensorPtr x, const Attributes& attrs) {
  return two(add_node("resample", {{"X", std::move(x)}}, attrs));
}
TensorPtr TensorOpBuilders::reshape(TensorPtr x, const Attributes& attrs) {
  return add_node1("reshape", {{"X", std::move(x)}}, attrs);
}
TensorPtr TensorOpBuilders::transpose(TensorPtr x, const Attributes& attrs) {
  return add_node1("transpose", {{"X", std::move(x)}}, attrs);
}
TensorPtr TensorOpBuilders::slice(TensorPtr x, const Attributes& attrs) {
  return add_node1("slice", {{"X", std::move(x)}}, attrs);
}
TensorPtr TensorOpBuilders::concatenate(std::vector<TensorPtr> xs, const Attributes& attrs) {
  return add_node1("concatenate", {{"X", std::move(xs)}}, attrs);
}
TensorPtr TensorOpBuilders::diagonal_band_mask(TensorPtr x, TensorPtr fill, TensorPtr seq_len_q, TensorPtr seq_len_kv,
                                               TensorPtr left_bound, TensorPtr shift_right_bound,
                                               const Attributes& attrs) {
  return add_node1("diagonal_band_mask",
                   {{"X", std::move(x)}, {"B", std::move(fill)}, {"SEQ_LEN_Q", std::move(seq_len_q)},
                    {"SEQ_LEN_KV", std::move(seq_len_kv)}, {"LeftBound", std::move(left_bound)},
                    {"ShiftRightBound", std::move(shift_right_bound)}},
                   attrs);
}
std::array<TensorPtr, 2> TensorOpBuilders::block_scale_quantize(TensorPtr x, const Attributes& attrs) {
  return two(add_node("block_scale_quantize", {{"X", std::move(x)}}, attrs));
}
TensorPtr TensorOpBuilders::block_scale_dequantize(TensorPtr x, TensorPtr scale, const Attributes& attrs) {
  return add_node1("block_scale_dequantize", {{"X", std::move(x)}, {"scale", std::move(scale)}}, attrs);
}
TensorPtr TensorOpBuilders::paged_cache_load(TensorPtr container, TensorPtr seq_len, TensorPtr page_table,
                                             const Attributes& attrs) {
  return add_node1("paged_cache_load",
                   {{"container", std::move(container)}, {"seqLen", std::move(seq_len)},
                    {"pageTable", std::move(page_table)}},
                   attrs);
}

}  // namespace opgraph
