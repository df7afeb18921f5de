// ir/ops/tensor_ops.cpp — the tensor-ops group's core records and shared rules.
//
// reduction (X → Y). mode ∈ ReductionMode_t (required); is_deterministic (BOOL).
//   Y's dims are set by the user (cuDNN cannot guess which axes fold): same rank as X,
//   each axis equal to X's or 1; X's axes whose Y dim is 1 are reduced. X is not BOOLEAN.
//   Modes: ADD Σx, MUL Πx, MIN, MAX, AMAX max|x|, AVG Σx/n, NORM1 Σ|x|, NORM2 sqrt(Σx²),
//   MUL_NO_ZEROS Π of the non-zero x (1 when all are zero).
// rng (Seed, Offset → Y). distribution ∈ {BERNOULLI, UNIFORM, NORMAL} (required); dim
//   (required, positive), stride (optional, same rank); the seed comes from EXACTLY one of
//   the Seed tensor or the `seed` attribute; Offset is optional (0 when unbound); Seed and
//   Offset hold one INT32/INT64 element. BERNOULLI needs bernoulli_probability ∈ [0, 1];
//   UNIFORM draws from [uniform_dist_minimum, uniform_dist_maximum) (min < max), NORMAL
//   from N(normal_dist_mean, normal_dist_standard_deviation²) (sd > 0). A distribution's
//   parameters are refused on another distribution. Y is FLOAT unless typed.
// reshape (X → Y). reshape_mode VIEW_ONLY (default) or LOGICAL. Y's dims are `dim` or,
//   if unset, Y's user-set dims (one of the two is required; both must agree); `stride`
//   (optional) sets Y's strides. Element counts must match. Elements keep their row-major
//   logical order. VIEW_ONLY reinterprets memory without moving data, so X and Y must both
//   be packed row-major; LOGICAL copies and takes any strides.
// transpose (X → Y). permutation (required): a permutation of [0, rank); Y.dim[k] =
//   X.dim[permutation[k]], Y[i_0..] = X[j] with j[permutation[k]] = i_k; Y packed.
// slice (X → Y). slices (required): flat pairs {start, end} per axis of X, 0 <= start <
//   end <= dim; strides (optional, >= 1, one per axis). Y.dim = ceil((end - start) / stride).
// concatenate (X[] → Y). axis (required, [-rank, rank)); in_place_index (optional, in
//   [0, n): that input already lives in Y's buffer — a memory hint, same values). Inputs
//   share rank, data type and every extent but `axis`'s; Y's extent there is their sum.
#include <algorithm>
#include <numeric>

#include "ir/ops/groups.h"
#include "ir/ops/output_layout.h"
#include "ir/ops/tensor_ops_common.h"

namespace opgraph::ops {

Status normalize_axis(const InferContext& c, std::string_view attr, std::int64_t axis, std::int64_t rank,
                      std::int64_t* out) {
  if (axis < -rank || axis >= rank)
    return c.fail_attr(attr, "must be in [" + std::to_string(-rank) + ", " + std::to_string(rank) + ") for rank " +
                                 std::to_string(rank) + ", got " + std::to_string(axis));
  *out = axis < 0 ? axis + rank : axis;
  return Status::ok();
}

Status check_int_list(const InferContext& c, std::string_view attr, std::size_t count, std::int64_t min_value) {
  if (!c.node().attr_is_set(attr)) return Status::ok();
  auto v = c.node().get_int_list(attr);
  if (v.size() != count)
    return c.fail_attr(attr, "needs " + std::to_string(count) + " entries, got " + std::to_string(v.size()) + " " +
                                 InferContext::dims_str(v));
  for (auto x : v)
    if (x < min_value)
      return c.fail_attr(attr, "entries must be >= " + std::to_string(min_value) + ", got " + InferContext::dims_str(v));
  return Status::ok();
}

Status require_index_scalar(const InferContext& c, std::string_view port) {
  OPGRAPH_CHECK(c.require_integer_index(port));
  return c.require_numel(port, 1, "one integer");
}

Status missing_attr(const InferContext& c, std::string_view attr, const std::string& rule) {
  return {ErrorCode::ATTRIBUTE_NOT_SET, c.fail_attr(attr, rule).message()};
}

DataType float_unless_context(const InferContext& c, std::string_view out_port) {
  TensorPtr o = c.out(out_port);
  if (!o) return DataType::NOT_SET;
  DataType ctx = o->get_is_virtual() ? c.graph_context().intermediate_data_type : c.graph_context().io_data_type;
  return ctx == DataType::NOT_SET ? DataType::FLOAT : DataType::NOT_SET;
}

Status set_output_stride(InferContext& c, std::string_view out_port, const Dims& stride) {
  TensorPtr o = c.out(out_port);
  if (!o) return Status::ok();
  if (o->stride_set_by_user()) {
    if (o->get_stride() != stride)
      return c.fail(out_port, "user-set strides " + InferContext::dims_str(o->get_stride()) +
                                  " disagree with the op's strides " + InferContext::dims_str(stride));
    return Status::ok();
  }
  Tensor::Internal::infer_stride(*o, stride);
  return Status::ok();
}

namespace {

Status infer_reduction(InferContext& c) {
  OPGRAPH_CHECK(c.require(ops::in::X));
  if (c.dtype(ops::in::X) == DataType::BOOLEAN) return c.fail(ops::in::X, "reductions take numbers, got BOOLEAN");
  Dims y;
  OPGRAPH_CHECK(c.require_user_output_dims(ops::out::Y, &y));
  const Dims& x = c.dims(ops::in::X);
  if (y.size() != x.size())
    return c.fail(ops::out::Y, "rank must equal X's: X is " + InferContext::dims_str(x) + ", Y is " + InferContext::dims_str(y));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (y[i] != x[i] && y[i] != 1)
      return c.fail(ops::out::Y, "axis " + std::to_string(i) + " must be X's extent " + std::to_string(x[i]) +
                             " (kept) or 1 (reduced), got " + std::to_string(y[i]) + " (Y " + InferContext::dims_str(y) +
                             ", X " + InferContext::dims_str(x) + ")");
  // Y follows X's layout class (ops/output_layout.h). cudnn-frontend's ReductionNode
  // (node/reduction.h) defaults Y to channels-last whatever X is; opgraph agrees for a
  // channels-last X and keeps a packed NCHW X's output packed NCHW.
  follow_layout(c, "Y", c.in(ops::in::X).get());
  return Status::ok();
}

Status infer_rng(InferContext& c) {
  const Node& n = c.node();
  bool seed_attr = n.attr_is_set("seed");
  if (seed_attr && c.has(ops::in::Seed))
    return c.fail(ops::in::Seed, "the seed is given twice: bind the Seed tensor or set the `seed` attribute, not both");
  if (!seed_attr && !c.has(ops::in::Seed))
    return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, ops::in::Seed, "no seed: bind the Seed tensor or set the `seed` attribute");
  if (c.has(ops::in::Seed)) OPGRAPH_CHECK(require_index_scalar(c, "Seed"));
  if (c.has(ops::in::Offset)) OPGRAPH_CHECK(require_index_scalar(c, "Offset"));
  using D = ops::Distribution;
  const std::optional<D> d = ops::Rng::distribution(n);
  if (!d) return missing_attr(c, "distribution", "rng needs a distribution");
  const std::string dist(ops::to_string(*d));
  struct Param { const char* attr; D dist; };
  for (Param p : {Param{"bernoulli_probability", D::BERNOULLI}, Param{"uniform_dist_minimum", D::UNIFORM},
                  Param{"uniform_dist_maximum", D::UNIFORM}, Param{"normal_dist_mean", D::NORMAL},
                  Param{"normal_dist_standard_deviation", D::NORMAL}})
    if (n.attr_is_set(p.attr) && *d != p.dist)
      return c.fail_attr(p.attr, "applies only to distribution " + std::string(ops::to_string(p.dist)) + ", not " + dist);
  if (*d == D::BERNOULLI) {
    if (!n.attr_is_set("bernoulli_probability"))
      return missing_attr(c, "bernoulli_probability", "BERNOULLI needs the probability of a 1");
    double p = ops::attr::bernoulli_probability(n).value_or(0.0);
    if (!(p >= 0.0 && p <= 1.0)) return c.fail_attr("bernoulli_probability", "must be in [0, 1], got " + std::to_string(p));
  } else if (*d == D::UNIFORM) {
    double lo = ops::attr::uniform_dist_minimum(n), hi = ops::attr::uniform_dist_maximum(n);
    if (!(lo < hi))
      return c.fail_attr("uniform_dist_maximum", "must exceed uniform_dist_minimum (" + std::to_string(lo) + "), got " +
                                                     std::to_string(hi));
  } else if (!(ops::attr::normal_dist_standard_deviation(n) > 0.0)) {
    return c.fail_attr("normal_dist_standard_deviation",
                       "must be > 0, got " + std::to_string(ops::attr::normal_dist_standard_deviation(n)));
  }
  Dims dim = ops::Rng::dim(n).value_or(Dims{});
  if (dim.empty()) return c.fail_attr("dim", "needs at least one extent");
  OPGRAPH_CHECK(check_int_list(c, "dim", dim.size(), 1));
  OPGRAPH_CHECK(check_int_list(c, "stride", dim.size(), 1));
  OPGRAPH_CHECK(c.set_output(ops::out::Y, dim, float_unless_context(c, "Y")));
  if (auto stride = ops::Rng::stride(n)) OPGRAPH_CHECK(set_output_stride(c, "Y", *stride));
  return Status::ok();
}

bool is_packed(const Tensor& t) { return t.get_stride() == Tensor::packed_strides(t.get_dim()); }

Status infer_reshape(InferContext& c) {
  OPGRAPH_CHECK(c.require(ops::in::X));
  const Node& n = c.node();
  TensorPtr y = c.out(ops::out::Y);
  Dims dim;
  if (n.attr_is_set("dim")) {
    dim = ops::Reshape::dim(n).value_or(Dims{});
    if (dim.empty()) return c.fail_attr("dim", "needs at least one extent");
    OPGRAPH_CHECK(check_int_list(c, "dim", dim.size(), 0));
    OPGRAPH_CHECK(c.set_output(ops::out::Y, dim));
  } else if (y->dim_set_by_user() && !y->get_dim().empty()) {
    dim = y->get_dim();
  } else {
    return c.fail_code(ErrorCode::SHAPE_DEDUCTION_FAILED, ops::out::Y, "reshape needs the `dim` attribute or Y's dims");
  }
  std::int64_t numel = std::accumulate(dim.begin(), dim.end(), std::int64_t{1}, std::multiplies<>());
  if (numel != c.in(ops::in::X)->element_count())
    return c.fail(ops::out::Y, "holds " + std::to_string(numel) + " elements " + InferContext::dims_str(dim) + " but X holds " +
                           std::to_string(c.in(ops::in::X)->element_count()) + " " + InferContext::dims_str(c.dims(ops::in::X)));
  OPGRAPH_CHECK(check_int_list(c, "stride", dim.size(), 0));
  if (auto stride = ops::Reshape::stride(n)) OPGRAPH_CHECK(set_output_stride(c, "Y", *stride));
  else if (!y->stride_set_by_user()) Tensor::Internal::infer_stride(*y, Tensor::packed_strides(dim));
  if (ops::attr::reshape_mode(n) == ops::ReshapeMode::VIEW_ONLY) {
    if (!is_packed(*c.in(ops::in::X)))
      return c.fail(ops::in::X, "VIEW_ONLY reinterprets memory, so X must be packed row-major; its strides are " +
                             InferContext::dims_str(c.in(ops::in::X)->get_stride()) + " (use reshape_mode LOGICAL)");
    if (!is_packed(*y))
      return c.fail(ops::out::Y, "VIEW_ONLY reinterprets memory, so Y must be packed row-major; its strides are " +
                             InferContext::dims_str(y->get_stride()) + " (use reshape_mode LOGICAL)");
  }
  return Status::ok();
}

Status infer_transpose(InferContext& c) {
  OPGRAPH_CHECK(c.require(ops::in::X));
  const Dims& x = c.dims(ops::in::X);
  Dims perm = ops::attr::permutation(c.node()).value_or(std::vector<std::int64_t>{});
  if (perm.size() != x.size())
    return c.fail_attr("permutation", "needs one entry per axis of X " + InferContext::dims_str(x) + ", got " +
                                          InferContext::dims_str(perm));
  std::vector<bool> seen(x.size(), false);
  Dims y(x.size());
  for (std::size_t k = 0; k < perm.size(); ++k) {
    auto p = perm[k];
    if (p < 0 || p >= static_cast<std::int64_t>(x.size()) || seen[p])
      return c.fail_attr("permutation", "must be a permutation of [0, " + std::to_string(x.size()) + "), got " +
                                            InferContext::dims_str(perm));
    seen[p] = true;
    y[k] = x[p];
  }
  return c.set_output(ops::out::Y, y);
}

Status infer_slice(InferContext& c) {
  OPGRAPH_CHECK(c.require(ops::in::X));
  const Dims& x = c.dims(ops::in::X);
  Dims s = ops::attr::slices(c.node()).value_or(std::vector<std::int64_t>{});
  if (s.size() != 2 * x.size())
    return c.fail_attr("slices", "needs one {start, end} pair per axis of X " + InferContext::dims_str(x) + " (" +
                                     std::to_string(2 * x.size()) + " entries), got " + std::to_string(s.size()));
  OPGRAPH_CHECK(check_int_list(c, "strides", x.size(), 1));
  Dims strides = c.node().attr_is_set("strides") ? ops::attr::strides(c.node()).value_or(std::vector<std::int64_t>{}) : Dims(x.size(), 1);
  Dims y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    auto start = s[2 * i], end = s[2 * i + 1];
    if (start < 0 || start >= end || end > x[i])
      return c.fail_attr("slices", "axis " + std::to_string(i) + ": needs 0 <= start < end <= " + std::to_string(x[i]) +
                                       ", got {" + std::to_string(start) + ", " + std::to_string(end) + "}");
    y[i] = (end - start + strides[i] - 1) / strides[i];
  }
  return c.set_output(ops::out::Y, y);
}

Status infer_concatenate(InferContext& c) {
  const auto& xs = c.ins(ops::in::X);
  if (xs.empty()) return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, ops::in::X, "needs at least one input");
  const Dims& first = xs[0]->get_dim();
  std::int64_t rank = static_cast<std::int64_t>(first.size()), axis = 0;
  OPGRAPH_CHECK(normalize_axis(c, "axis", ops::Concatenate::axis(c.node()).value_or(0), rank, &axis));
  Dims y = first;
  y[axis] = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const Dims& d = xs[k]->get_dim();
    std::string who = "input " + std::to_string(k) + " (tensor '" + xs[k]->get_name() + "') ";
    if (d.size() != first.size())
      return c.fail(ops::in::X, who + "has rank " + std::to_string(d.size()) + ", input 0 has " + std::to_string(rank));
    if (xs[k]->get_data_type() != xs[0]->get_data_type())
      return c.fail(ops::in::X, who + "is " + std::string(to_string(xs[k]->get_data_type())) + ", input 0 is " +
                             std::string(to_string(xs[0]->get_data_type())));
    for (std::int64_t i = 0; i < rank; ++i)
      if (i != axis && d[i] != first[i])
        return c.fail(ops::in::X, who + InferContext::dims_str(d) + " differs from input 0's " + InferContext::dims_str(first) +
                               " on axis " + std::to_string(i) + ", which is not the concatenation axis " +
                               std::to_string(axis));
    y[axis] += d[axis];
  }
  if (c.node().attr_is_set("in_place_index")) {
    auto k = ops::attr::in_place_index(c.node()).value_or(0);
    if (k < 0 || k >= static_cast<std::int64_t>(xs.size()))
      return c.fail_attr("in_place_index", "must name one of the " + std::to_string(xs.size()) + " inputs, got " +
                                               std::to_string(k));
  }
  // Y follows input 0's layout class, as cudnn-frontend's ConcatenateNode
  // (node/concatenate.h) orders Y's strides by inputs[0]'s.
  OPGRAPH_CHECK(c.set_output(ops::out::Y, y, xs[0]->get_data_type()));
  follow_layout(c, "Y", xs[0].get());
  return Status::ok();
}

const std::vector<std::string_view> kReductionModes = {"ADD", "MUL", "MIN", "MAX", "AMAX", "AVG", "NORM1", "NORM2", "MUL_NO_ZEROS"};

const OpSpec kSpecs[] = {
    {.name = "reduction",
     .inputs = {{"X"}},
     .outputs = {{"Y"}},
     .attrs = {{"mode", AttrType::ENUM, std::nullopt, true, kReductionModes},
               {"is_deterministic", AttrType::BOOL, AttrValue{false}}},
     .infer = infer_reduction,
     .summary = "reduce X over the axes where the user-set Y dim is 1"},
    {.name = "rng",
     .inputs = {{"Seed", true}, {"Offset", true}},
     .outputs = {{"Y"}},
     .attrs = {{"distribution", AttrType::ENUM, std::nullopt, true, {"BERNOULLI", "UNIFORM", "NORMAL"}},
               {"dim", AttrType::INT_LIST, std::nullopt, true},
               {"stride", AttrType::INT_LIST},
               {"seed", AttrType::INT},
               {"bernoulli_probability", AttrType::FLOAT},
               {"uniform_dist_minimum", AttrType::FLOAT, AttrValue{0.0}},
               {"uniform_dist_maximum", AttrType::FLOAT, AttrValue{1.0}},
               {"normal_dist_mean", AttrType::FLOAT, AttrValue{0.0}},
               {"normal_dist_standard_deviation", AttrType::FLOAT, AttrValue{1.0}}},
     .infer = infer_rng,
     .summary = "counter-based random numbers (Philox-4x32-10) from seed and offset"},
    {.name = "reshape",
     .inputs = {{"X"}},
     .outputs = {{"Y"}},
     .attrs = {{"reshape_mode", AttrType::ENUM, AttrValue{std::string("VIEW_ONLY")}, false, {"VIEW_ONLY", "LOGICAL"}},
               {"dim", AttrType::INT_LIST},
               {"stride", AttrType::INT_LIST}},
     .infer = infer_reshape,
     .summary = "the same elements under new dims (a view, or a logical copy)"},
    {.name = "transpose",
     .inputs = {{"X"}},
     .outputs = {{"Y"}},
     .attrs = {{"permutation", AttrType::INT_LIST, std::nullopt, true}},
     .infer = infer_transpose,
     .summary = "permute X's axes"},
    {.name = "slice",
     .inputs = {{"X"}},
     .outputs = {{"Y"}},
     .attrs = {{"slices", AttrType::INT_LIST, std::nullopt, true}, {"strides", AttrType::INT_LIST}},
     .infer = infer_slice,
     .summary = "X[start:end:stride] on every axis"},
    {.name = "concatenate",
     .inputs = {{"X", false, true}},
     .outputs = {{"Y"}},
     .attrs = {{"axis", AttrType::INT, std::nullopt, true}, {"in_place_index", AttrType::INT}},
     .infer = infer_concatenate,
     .summary = "join tensors along an axis"},
};

}  // namespace

std::span<const OpSpec> tensor_op_core_specs() { return kSpecs; }

std::span<const OpSpec> tensor_op_specs() {
  static const std::vector<OpSpec> kAll = [] {
    std::vector<OpSpec> v;
    for (auto part : {tensor_op_core_specs(), tensor_op_window_specs(), tensor_op_block_scale_specs()})
      v.insert(v.end(), part.begin(), part.end());
    return v;
  }();
  return kAll;
}

}  // namespace opgraph::ops
