// ir/ops/tensor_ops_block_scale.cpp — block-scaled (microscaling) quantize and dequantize.
//
// Formats (Y / X element type, block size, scale type):
//   MXFP8  FP8_E4M3 or FP8_E5M2, 32, FP8_E8M0     (OCP MX)
//   MXFP4  FP4_E2M1,             32, FP8_E8M0     (OCP MX)
//   NVFP4  FP4_E2M1,             16, FP8_E4M3
// block_scale_quantize (X → Y, scale). block_size (required), axis (default -1: the last),
//   transpose (default false). X is floating; Y's data type must be set by the user to one
//   of the element types and, with block_size, picks the format (another pairing is
//   refused); scale's type follows the format (a user-set one must agree). X's extent on
//   `axis` must be a multiple of block_size. Y has X's dims; with transpose (rank >= 2) Y
//   is written column-major in its last two axes (strides of the swapped packed layout).
//   scale has X's dims with axis's extent divided by block_size; when the user marks
//   scale F8_128x4 (reordering_type), axis must be one of the last two and scale's dims
//   are padded for the 128x4 swizzle: the blocked axis to a multiple of 4, the other of
//   the last two to a multiple of 128; its strides make the blocked axis contiguous
//   ({.., cols, 1} for the last axis, {.., 1, cols} for the second to last; user-set
//   strides must agree). The byte layout is ir/scale_layout.h's. Scale values: see
//   the reference kernel's comment.
// block_scale_dequantize (X, scale → Y). block_size (required): one entry (blocks along
//   the last axis) or one per axis of X (1 = not blocked; 2-D blocks allowed); every
//   blocked extent divides X's. is_negative_scale (default false): the scale applied is
//   -scale (lets an unsigned E8M0/E4M3 scale carry a sign). X is FP8_E4M3, FP8_E5M2 or
//   FP4_E2M1; scale is FP8_E8M0 (blocks of 32 along one axis), FP8_E4M3 (FP4_E2M1 data in
//   blocks of 16 along one axis) or FLOAT/HALF/BFLOAT16 (any blocks). scale's dims are X's
//   divided by the blocks, or the 128x4-padded dims above when it is F8_128x4 (then its
//   blocked axis must be its contiguous one, rule f8_128x4_layout). Y has X's
//   dims; FLOAT unless typed or filled by the graph context. (cuDNN lowers dequantize only
//   fused into a consumer, with Y virtual; that is a lowering rule, not an IR one.)
#include "ir/ops/groups.h"
#include "ir/ops/output_layout.h"
#include "ir/ops/tensor_ops_common.h"
#include "ir/scale_layout.h"

namespace opgraph::ops {
namespace {

struct Format {
  DataType element;
  std::int64_t block;
  DataType scale;
  const char* name;
};
constexpr Format kFormats[] = {
    {DataType::FP8_E4M3, 32, DataType::FP8_E8M0, "MXFP8"},
    {DataType::FP8_E5M2, 32, DataType::FP8_E8M0, "MXFP8"},
    {DataType::FP4_E2M1, 32, DataType::FP8_E8M0, "MXFP4"},
    {DataType::FP4_E2M1, 16, DataType::FP8_E4M3, "NVFP4"},
};

std::string tname(DataType t) { return std::string(to_string(t)); }
std::int64_t round_up(std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; }

// Scale dims for blocks `blocks` (one per axis) over `x`; 128x4-padded when `swizzled`.
Status scale_dims(const InferContext& c, std::string_view port, const Dims& x, const Dims& blocks, bool swizzled,
                  Dims* out) {
  Dims s = x;
  std::int64_t blocked = -1, count = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    s[i] = x[i] / blocks[i];
    if (blocks[i] > 1) { blocked = static_cast<std::int64_t>(i); ++count; }
  }
  if (swizzled) {
    std::int64_t r = static_cast<std::int64_t>(x.size());
    if (r < 2 || count != 1 || blocked < r - 2)
      return c.fail(port, "F8_128x4 scales need one blocked axis among the last two of a rank >= 2 tensor");
    std::int64_t other = blocked == r - 1 ? r - 2 : r - 1;
    s[blocked] = round_up(s[blocked], 4);
    s[other] = round_up(s[other], 128);
  }
  *out = s;
  return Status::ok();
}

Status infer_quantize(InferContext& c) {
  OPGRAPH_CHECK(c.require_dtype_in(ops::in::X, {DataType::FLOAT, DataType::DOUBLE, DataType::HALF, DataType::BFLOAT16}));
  const Node& n = c.node();
  const Dims& x = c.dims(ops::in::X);
  std::int64_t rank = static_cast<std::int64_t>(x.size()), axis = 0,
               block = ops::BlockScaleQuantize::block_size(n).value_or(0);
  OPGRAPH_CHECK(normalize_axis(c, "axis", ops::BlockScaleQuantize::axis(n), rank, &axis));
  if (block < 1) return c.fail_attr("block_size", "must be >= 1, got " + std::to_string(block));
  TensorPtr y = c.out(ops::out::Y), scale = c.out(ops::out::scale);
  if (!y->data_type_set_by_user())
    return c.fail_code(ErrorCode::ATTRIBUTE_NOT_SET, ops::out::Y,
                       "set Y's data type (FP8_E4M3, FP8_E5M2 or FP4_E2M1): it chooses the quantized format");
  const Format* f = nullptr;
  for (const auto& k : kFormats)
    if (k.element == y->get_data_type() && k.block == block) f = &k;
  if (!f)
    return c.fail(ops::out::Y, tname(y->get_data_type()) + " in blocks of " + std::to_string(block) +
                           " is no supported format (MXFP8: FP8_E4M3/FP8_E5M2 x 32, MXFP4: FP4_E2M1 x 32, "
                           "NVFP4: FP4_E2M1 x 16)");
  if (scale->data_type_set_by_user() && scale->get_data_type() != f->scale)
    return c.fail(ops::in::scale, std::string(f->name) + " scales are " + tname(f->scale) + ", the output is declared " +
                               tname(scale->get_data_type()));
  if (x[axis] % block != 0)
    return c.fail(ops::in::X, "extent " + std::to_string(x[axis]) + " of axis " + std::to_string(axis) +
                           " is not a multiple of block_size " + std::to_string(block));
  OPGRAPH_CHECK(c.set_output(ops::out::Y, x));
  if (ops::attr::transpose(n)) {
    if (rank < 2) return c.fail_attr("transpose", "needs X of rank >= 2, got " + InferContext::dims_str(x));
    Dims swapped = x;
    std::swap(swapped[rank - 1], swapped[rank - 2]);
    Dims st = Tensor::packed_strides(swapped);
    std::swap(st[rank - 1], st[rank - 2]);
    OPGRAPH_CHECK(set_output_stride(c, "Y", st));
  }
  Dims blocks(x.size(), 1), s;
  blocks[axis] = block;
  const bool swizzled = scale->get_reordering_type() == TensorReordering::F8_128x4;
  OPGRAPH_CHECK(scale_dims(c, "scale", x, blocks, swizzled, &s));
  OPGRAPH_CHECK(c.set_output(ops::out::scale, s, f->scale));
  if (!swizzled) return Status::ok();
  if (axis == rank - 2) {  // the blocked axis contiguous: packed strides of the swapped last two axes
    Dims swapped = s;
    std::swap(swapped[rank - 1], swapped[rank - 2]);
    Dims st = Tensor::packed_strides(swapped);
    std::swap(st[rank - 1], st[rank - 2]);
    OPGRAPH_CHECK(set_output_stride(c, "scale", st));
  }
  return check_swizzle_128x4(c, ops::out::scale, static_cast<std::size_t>(axis), true);
}

Status infer_dequantize(InferContext& c) {
  OPGRAPH_CHECK(c.require_dtype_in(ops::in::X, {DataType::FP8_E4M3, DataType::FP8_E5M2, DataType::FP4_E2M1}));
  OPGRAPH_CHECK(c.require_dtype_in(ops::in::scale, {DataType::FP8_E8M0, DataType::FP8_E4M3, DataType::FLOAT, DataType::HALF,
                                             DataType::BFLOAT16}));
  const Dims& x = c.dims(ops::in::X);
  Dims bs = ops::BlockScaleDequantize::block_size(c.node()).value_or(Dims{});
  if (bs.size() != 1 && bs.size() != x.size())
    return c.fail_attr("block_size", "needs one entry (the last axis) or one per axis of X " + InferContext::dims_str(x) +
                                         ", got " + InferContext::dims_str(bs));
  Dims blocks(x.size(), 1);
  if (bs.size() == 1) blocks.back() = bs[0];
  else blocks = bs;
  std::int64_t blocked_axes = 0, block = 1;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (blocks[i] < 1) return c.fail_attr("block_size", "entries must be >= 1, got " + InferContext::dims_str(bs));
    if (x[i] % blocks[i] != 0)
      return c.fail(ops::in::X, "extent " + std::to_string(x[i]) + " of axis " + std::to_string(i) +
                             " is not a multiple of its block " + std::to_string(blocks[i]));
    if (blocks[i] > 1) { ++blocked_axes; block = blocks[i]; }
  }
  DataType st = c.dtype(ops::in::scale);
  if (st == DataType::FP8_E8M0 && (blocked_axes != 1 || block != 32))
    return c.fail(ops::in::scale, "FP8_E8M0 (MX) scales cover blocks of 32 along one axis, block_size is " +
                               InferContext::dims_str(bs));
  if (st == DataType::FP8_E4M3 && (blocked_axes != 1 || block != 16 || c.dtype(ops::in::X) != DataType::FP4_E2M1))
    return c.fail(ops::in::scale, "FP8_E4M3 (NVFP4) scales cover FP4_E2M1 data in blocks of 16 along one axis; X is " +
                               tname(c.dtype(ops::in::X)) + ", block_size " + InferContext::dims_str(bs));
  Dims want;
  const bool swizzled = c.in(ops::in::scale)->get_reordering_type() == TensorReordering::F8_128x4;
  OPGRAPH_CHECK(scale_dims(c, "scale", x, blocks, swizzled, &want));
  if (c.dims(ops::in::scale) != want)
    return c.fail(ops::in::scale, "dims must be " + InferContext::dims_str(want) + " (X " + InferContext::dims_str(x) +
                               " in blocks " + InferContext::dims_str(blocks) + "), got " +
                               InferContext::dims_str(c.dims(ops::in::scale)));
  if (swizzled) {
    std::size_t blocked = 0;
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i] > 1) blocked = i;
    OPGRAPH_CHECK(check_swizzle_128x4(c, ops::in::scale, blocked));
  }
  // Y follows X's layout class; cudnn-frontend's dequantize node
  // (node/block_scale_dequantize.h) gives Y X's strides.
  return set_output_like(c, "Y", x, "X", float_unless_context(c, "Y"));
}

const OpSpec kSpecs[] = {
    {.name = "block_scale_quantize",
     .inputs = {{"X"}},
     .outputs = {{"Y"}, {"scale"}},
     .attrs = {{"block_size", AttrType::INT, std::nullopt, true},
               {"axis", AttrType::INT, AttrValue{std::int64_t{-1}}},
               {"transpose", AttrType::BOOL, AttrValue{false}}},
     .infer = infer_quantize,
     .summary = "quantize to MXFP8 / MXFP4 / NVFP4 with one scale per block"},
    {.name = "block_scale_dequantize",
     .inputs = {{"X"}, {"scale"}},
     .outputs = {{"Y"}},
     .attrs = {{"block_size", AttrType::INT_LIST, std::nullopt, true},
               {"is_negative_scale", AttrType::BOOL, AttrValue{false}}},
     .infer = infer_dequantize,
     .summary = "multiply block-scaled data by its per-block scales"},
};

}  // namespace

std::span<const OpSpec> tensor_op_block_scale_specs() { return kSpecs; }

}  // namespace opgraph::ops
