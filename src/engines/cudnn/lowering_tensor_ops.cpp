// engines/cudnn/lowering_tensor_ops.cpp — the tensor ops that have a cuDNN
// backend operation: reshape (OPERATION_RESHAPE, both modes), concatenate
// (OPERATION_CONCAT, >= 9.7), rng (OPERATION_RNG + RNG), resample
// (OPERATION_RESAMPLE_FWD + RESAMPLE), block_scale_quantize / _dequantize
// (>= 9.7; NEG_SCALE >= 9.14), paged_cache_load (>= 9.5) and
// moe_grouped_matmul (>= 9.15). Axes are moved into the plan's padded rank;
// geometry lists default as the IR's do. What cuDNN's attributes cannot say
// (a quantize axis other than the innermost, a transposed quantize) declines
// naming the op, node and the reason.
#include <algorithm>

#include "engines/cudnn/lowering_internal.h"

namespace opgraph::engines::cudnn::detail {
namespace {

// The operation record; every descriptor it references was added before it
// (the plan's references point backwards).
int add_op(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  int op = l.add(type, Lowerer::node_label(n), std::string(n.op()));
  l.plan().operations.push_back(op);
  return op;
}

// Tables below are indexed by enum value: the record's domain order.
static_assert(static_cast<int>(ops::ResamplingMode::AVGPOOL_EXCLUDE_PADDING) == 0 &&
              static_cast<int>(ops::ResamplingMode::AVGPOOL_INCLUDE_PADDING) == 1 &&
              static_cast<int>(ops::ResamplingMode::BILINEAR) == 2 && static_cast<int>(ops::ResamplingMode::NEAREST) == 3 &&
              static_cast<int>(ops::ResamplingMode::MAXPOOL) == 4);
static_assert(static_cast<int>(ops::PaddingMode::EDGE_VAL_PAD) == 0 && static_cast<int>(ops::PaddingMode::NEG_INF_PAD) == 1 &&
              static_cast<int>(ops::PaddingMode::ZERO_PAD) == 2);
static_assert(static_cast<int>(ops::MoeGroupedMatmulMode::NONE) == 0 &&
              static_cast<int>(ops::MoeGroupedMatmulMode::GATHER) == 1 &&
              static_cast<int>(ops::MoeGroupedMatmulMode::SCATTER) == 2);

Status lower_reshape(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  int op = add_op(l, n, type);
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, n, ops::in::X));
  return l.bind_out(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, n, ops::out::Y);
}

// transpose (X -> Y). cuDNN has no transpose operation; cudnn-frontend's composites
// (SDPA) describe a transposed operand instead: K^T is K's own descriptor with its
// last two dims and strides swapped, and P^T / dS^T / K (back) are RESHAPE
// operations whose virtual output has the input's strides permuted (a view: the
// same memory read in the other axis order). The same two forms here:
//  * folded: X is read by this transpose alone and is a graph input (no node
//    writes it) or a paged_cache_load's output, and Y is virtual with X's type
//    (or FLOAT over a HALF / BFLOAT16 X, an exact widening):
//    X's record is described in Y's axis order (dims and strides permuted together,
//    the same memory) and Y lowers to it; no operation;
//  * otherwise, Y virtual: RESHAPE X -> Y, Y described with X's strides permuted
//    (Y's own type: a transpose that also casts, as cudnn-frontend's P^T);
//  * a non-virtual Y declines: its buffer is packed in Y's order, which a view of
//    X is not.
// Lowered by default since 2026-12-02: on the H200 with cuDNN 9.19 the flexible-SDPA
// composites, which hold these transposes, ran and passed cudnn-frontend's tests
// (test_flexible_sdpa.py: 2 of 3, test_flexible_sdpa_bprop.py). A transpose beside a
// lone matmul (test_cudnn_gpu's transpose_kt_matmul_half, transpose_view_matmul_half)
// lowers too, but cuDNN's heuristics (9.14 and 9.19, modes A and FALLBACK) offer no
// engine config for that graph: it declines there, named, and runs elsewhere.
Status lower_transpose(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  const TensorPtr x = n.input(ops::Transpose::In::X), y = n.output(ops::Transpose::Out::Y);
  if (!y->get_is_virtual())
    return Lowerer::decline(n, "a transpose writing the non-virtual tensor '" + y->get_name() +
                                   "' is not lowered: cuDNN has no transpose, and a RESHAPE gives a view of X, not Y's "
                                   "packed buffer (keep Y virtual, or transpose in the consumer's operand)");
  const std::vector<std::int64_t> perm = ops::attr::permutation(n).value_or(std::vector<std::int64_t>{});
  auto rx = l.tensor(x);
  if (rx.is_bad()) return rx.status();
  const std::vector<std::int64_t> xd = l.record_dims(rx.value()), xs = l.record_strides(rx.value());
  const std::size_t pad = xd.size() - perm.size();  // leading unit axes of the plan's rank
  std::vector<std::int64_t> yd(xd.begin(), xd.begin() + static_cast<std::ptrdiff_t>(pad)), ys(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(pad));
  for (std::int64_t a : perm) {
    yd.push_back(xd[pad + static_cast<std::size_t>(a)]);
    ys.push_back(xs[pad + static_cast<std::size_t>(a)]);
  }
  std::size_t readers = 0;
  const Node* writer = nullptr;
  for (const auto& node : l.graph().nodes()) {
    for (const auto& port : node->inputs())
      for (const auto& t : port) readers += t == x;
    for (const auto& port : node->outputs())
      for (const auto& t : port)
        if (t == x) writer = node.get();
  }
  const bool foldable_source = writer == nullptr ? !x->get_is_virtual() && !x->get_is_pass_by_value()
                                                 : op_index(writer->spec()) == ops::PagedCacheLoad::kIndex;
  // Y's type is X's, or FLOAT over a HALF / BFLOAT16 X (a widening every value survives; the consumer
  // reads X's type instead, as cudnn-frontend's K^T is K's own descriptor).
  const DataType xt = x->get_data_type(), yt = y->get_data_type();
  const bool same_values = yt == xt || (yt == DataType::FLOAT && (xt == DataType::HALF || xt == DataType::BFLOAT16));
  if (readers == 1 && foldable_source && same_values) {
    l.retarget(rx.value(), yd, ys);
    l.alias(y, rx.value());
    return Status::ok();
  }
  auto ry = l.tensor(y);
  if (ry.is_bad()) return ry.status();
  l.retarget(ry.value(), yd, ys);
  int op = add_op(l, n, type);
  l.set_refs(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, {rx.value()});
  l.set_refs(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, {ry.value()});
  return Status::ok();
}

Status lower_concatenate(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  l.require_version(n, 90700);
  int op = add_op(l, n, type);
  std::vector<int> ins;
  for (const auto& t : n.inputs_of(ops::in::X)) {
    auto r = l.tensor(t);
    if (r.is_bad()) return r.status();
    ins.push_back(r.value());
  }
  auto out = n.output(ops::out::Y);
  l.set_int(op, CUDNN_ATTR_OPERATION_CONCAT_AXIS, CUDNN_TYPE_INT64, l.plan_axis(ops::Concatenate::axis(n).value_or(0), out->rank()));
  l.set_refs(op, CUDNN_ATTR_OPERATION_CONCAT_INPUT_DESCS, std::move(ins));
  if (n.attr_is_set("in_place_index"))
    l.set_int(op, CUDNN_ATTR_OPERATION_CONCAT_INPLACE_INDEX, CUDNN_TYPE_INT64, ops::attr::in_place_index(n).value_or(0));
  return l.bind_out(op, CUDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC, n, ops::out::Y);
}

Status lower_rng(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  using R = ops::Rng;
  const std::optional<ops::Distribution> dist = R::distribution(n);
  if (!dist) return Lowerer::decline(n, "rng without a distribution");
  int desc = l.add(CUDNN_BACKEND_RNG_DESCRIPTOR, Lowerer::node_label(n) + " rng descriptor", "rng");
  // The distribution's own parameters (set, else the record's defaults).
  switch (*dist) {
    case ops::Distribution::BERNOULLI: {
      const std::optional<double> p = R::bernoulli_probability(n);
      if (!p) return Lowerer::decline(n, "BERNOULLI needs attribute 'bernoulli_probability'");
      l.set_int(desc, CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, CUDNN_RNG_DISTRIBUTION_BERNOULLI);
      l.set_real(desc, CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, CUDNN_TYPE_DOUBLE, *p);
      break;
    }
    case ops::Distribution::UNIFORM:
      l.set_int(desc, CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, CUDNN_RNG_DISTRIBUTION_UNIFORM);
      l.set_real(desc, CUDNN_ATTR_RNG_UNIFORM_DIST_MINIMUM, CUDNN_TYPE_DOUBLE, R::uniform_dist_minimum(n));
      l.set_real(desc, CUDNN_ATTR_RNG_UNIFORM_DIST_MAXIMUM, CUDNN_TYPE_DOUBLE, R::uniform_dist_maximum(n));
      break;
    case ops::Distribution::NORMAL:
      l.set_int(desc, CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, CUDNN_RNG_DISTRIBUTION_NORMAL);
      l.set_real(desc, CUDNN_ATTR_RNG_NORMAL_DIST_MEAN, CUDNN_TYPE_DOUBLE, R::normal_dist_mean(n));
      l.set_real(desc, CUDNN_ATTR_RNG_NORMAL_DIST_STANDARD_DEVIATION, CUDNN_TYPE_DOUBLE,
                 R::normal_dist_standard_deviation(n));
      break;
  }
  int op = add_op(l, n, type);
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_RNG_YDESC, n, ops::out::Y));
  l.set_refs(op, CUDNN_ATTR_OPERATION_RNG_DESC, {desc});
  if (n.input(ops::in::Seed)) OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_RNG_SEED, n, ops::in::Seed));
  else if (n.attr_is_set("seed")) l.set_int(op, CUDNN_ATTR_OPERATION_RNG_SEED, CUDNN_TYPE_INT64, ops::attr::seed(n).value_or(0));
  return l.bind_in(op, CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC, n, ops::in::Offset);
}

Status lower_resample(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  auto x = n.input(ops::in::X);
  std::size_t spatial = x->rank() > 2 ? static_cast<std::size_t>(x->rank() - 2) : 0;
  if (spatial == 0) return Lowerer::decline(n, "resample needs at least one spatial axis");
  using Rs = ops::Resample;
  const std::optional<ops::ResamplingMode> mode = Rs::resampling_mode(n);
  if (!mode) return Lowerer::decline(n, "resample without a resampling mode");
  // Indexed by the domains' record order.
  static constexpr cudnnResampleMode_t kModes[] = {CUDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING,
                                                   CUDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING, CUDNN_RESAMPLE_BILINEAR,
                                                   CUDNN_RESAMPLE_NEAREST, CUDNN_RESAMPLE_MAXPOOL};
  // The IR's default padding mode (reference engine): NEG_INF for max pooling, ZERO otherwise.
  const ops::PaddingMode pad = Rs::padding_mode(n).value_or(
      *mode == ops::ResamplingMode::MAXPOOL ? ops::PaddingMode::NEG_INF_PAD : ops::PaddingMode::ZERO_PAD);
  static constexpr cudnnPaddingMode_t kPads[] = {CUDNN_EDGE_VAL_PAD, CUDNN_NEG_INF_PAD, CUDNN_ZERO_PAD};
  const auto m = static_cast<std::size_t>(*mode), p = static_cast<std::size_t>(pad);
  auto list = [&](const std::optional<std::vector<std::int64_t>>& v, std::int64_t dflt) {
    return v ? *v : std::vector<std::int64_t>(spatial, dflt);
  };
  int desc = l.add(CUDNN_BACKEND_RESAMPLE_DESCRIPTOR, Lowerer::node_label(n) + " resample descriptor", "resample");
  l.set_int(desc, CUDNN_ATTR_RESAMPLE_MODE, CUDNN_TYPE_RESAMPLE_MODE, kModes[m]);
  l.set_int(desc, CUDNN_ATTR_RESAMPLE_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  l.set_int(desc, CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(spatial));
  l.set_int(desc, CUDNN_ATTR_RESAMPLE_PADDING_MODE, CUDNN_TYPE_PADDING_MODE, kPads[p]);
  l.set_int(desc, CUDNN_ATTR_RESAMPLE_NAN_PROPAGATION, CUDNN_TYPE_NAN_PROPOGATION, CUDNN_PROPAGATE_NAN);
  l.set_ints(desc, CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, CUDNN_TYPE_INT64, list(Rs::window(n), 1));
  l.set_ints(desc, CUDNN_ATTR_RESAMPLE_STRIDES, CUDNN_TYPE_INT64, list(Rs::stride(n), 1));
  l.set_ints(desc, CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, CUDNN_TYPE_INT64, list(Rs::pre_padding(n), 0));
  l.set_ints(desc, CUDNN_ATTR_RESAMPLE_POST_PADDINGS, CUDNN_TYPE_INT64, list(Rs::post_padding(n), 0));
  int op = add_op(l, n, type);
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, n, ops::in::X));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, n, ops::out::Y));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC, n, ops::out::Index));
  l.set_refs(op, CUDNN_ATTR_OPERATION_RESAMPLE_FWD_DESC, {desc});
  return Status::ok();
}

Status lower_quantize(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  l.require_version(n, 90700);
  auto x = n.input(ops::in::X);
  const std::int64_t asked = ops::BlockScaleQuantize::axis(n);
  const std::int64_t axis = asked < 0 ? asked + x->rank() : asked;
  if (axis != x->rank() - 1)
    return Lowerer::decline(n, "cuDNN's BLOCK_SCALE_QUANTIZE blocks the innermost axis; axis " +
                                   std::to_string(asked) + " is not it");
  if (ops::attr::transpose(n))
    return Lowerer::decline(n, "cuDNN's BLOCK_SCALE_QUANTIZE has no transpose attribute");
  // cuDNN 9.19 (device-less finalize): a 3-D X needs its scale F8_128x4-reordered, and the
  // reordering is refused for any other rank.
  bool swizzled = n.output(ops::out::scale)->get_reordering_type() == TensorReordering::F8_128x4;
  if ((l.plan().rank == 3) != swizzled)
    return Lowerer::decline(n, std::string("cuDNN's BLOCK_SCALE_QUANTIZE takes an F8_128x4-reordered scale exactly "
                                           "when X is 3-D; here X lowers to rank ") +
                                   std::to_string(l.plan().rank) + " and the scale is " +
                                   (swizzled ? "" : "not ") + "reordered");
  int op = add_op(l, n, type);
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC, n, ops::in::X));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC, n, ops::out::Y));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC, n, ops::out::scale));
  l.set_int(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  l.set_int(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE, CUDNN_TYPE_INT32,
            ops::BlockScaleQuantize::block_size(n).value_or(0));
  return Status::ok();
}

Status lower_dequantize(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  l.require_version(n, 90700);
  int op = add_op(l, n, type);
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC, n, ops::in::X));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_SCALE_DESC, n, ops::in::scale));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_YDESC, n, ops::out::Y));
  l.set_int(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  l.set_ints(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE, CUDNN_TYPE_INT32,
             ops::BlockScaleDequantize::block_size(n).value_or(std::vector<std::int64_t>{}));
  if (ops::attr::is_negative_scale(n)) {
    l.require_version(n, 91400);
    l.set_int(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_NEG_SCALE, CUDNN_TYPE_BOOLEAN, 1);
  }
  return Status::ok();
}

Status lower_paged_cache_load(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  l.require_version(n, 90500);
  int op = add_op(l, n, type);
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, n, ops::in::container));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, n, ops::in::seqLen));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, n, ops::in::pageTable));
  return l.bind_out(op, CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, n, ops::out::yOut);
}

Status lower_moe(Lowerer& l, const Node& n, cudnnBackendDescriptorType_t type) {
  l.require_version(n, 91500);
  static constexpr cudnnMoeGroupedMatmulMode_t kModes[] = {
      CUDNN_MOE_GROUPED_MATMUL_MODE_NONE, CUDNN_MOE_GROUPED_MATMUL_MODE_GATHER, CUDNN_MOE_GROUPED_MATMUL_MODE_SCATTER};
  const auto m = static_cast<std::size_t>(ops::MoeGroupedMatmul::mode(n));  // the record's order: NONE, GATHER, SCATTER
  int op = add_op(l, n, type);
  l.set_int(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE, CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE, kModes[m]);
  l.set_int(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC, CUDNN_TYPE_DATA_TYPE, l.compute_type(n));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC, n, ops::in::Token));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_WEIGHT_DESC, n, ops::in::Weight));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC, n, ops::in::FirstTokenOffset));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_INDEX_DESC, n, ops::in::TokenIndex));
  OPGRAPH_CHECK(l.bind_in(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_KS_DESC, n, ops::in::TokenKs));
  OPGRAPH_CHECK(l.bind_out(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC, n, ops::out::Output));
  if (m != 0) l.set_int(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K, CUDNN_TYPE_INT32, ops::attr::top_k(n));
  return Status::ok();
}

// One lowering function per op record: the op's function with its operation type.
template <Status (*F)(Lowerer&, const Node&, cudnnBackendDescriptorType_t), cudnnBackendDescriptorType_t T>
Status with_type(Lowerer& l, const Node& n) {
  return F(l, n, T);
}

const LoweringRecord kLowerings[] = {
    {ops::Reshape::kIndex, with_type<lower_reshape, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR>, {}},
    {ops::Transpose::kIndex, with_type<lower_transpose, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR>, {}},
    {ops::Concatenate::kIndex, with_type<lower_concatenate, CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR>, {}},
    {ops::Rng::kIndex, with_type<lower_rng, CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR>, {}},
    {ops::Resample::kIndex, with_type<lower_resample, CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR>, {}},
    {ops::BlockScaleQuantize::kIndex,
     with_type<lower_quantize, CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR>, {}},
    {ops::BlockScaleDequantize::kIndex,
     with_type<lower_dequantize, CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR>, {}},
    {ops::PagedCacheLoad::kIndex,
     with_type<lower_paged_cache_load, CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR>, {}},
    {ops::MoeGroupedMatmul::kIndex, with_type<lower_moe, CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR>, {}},
};

}  // namespace

std::span<const LoweringRecord> tensor_op_lowerings() { return kLowerings; }

}  // namespace opgraph::engines::cudnn::detail
