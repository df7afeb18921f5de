// ir/ops/conv.cpp — the conv op group: conv_fprop, conv_dgrad, conv_wgrad records and
// builders. Contract (layout, attributes, groups, output arithmetic): builders/conv.h.
//
// fprop infers Y; output strides (unless set by the user) are dense in the layout order
// of X (Y, DW) or DY (DX), so a channels-last input gives channels-last outputs and a
// packed NCHW input packed NCHW ones (ops/output_layout.h). cudnn-frontend defaults Y,
// DX and DW to channels-last whatever the input (node/conv_fprop.h, conv_dgrad.h,
// conv_wgrad.h: generate_NHWC_stride_order); opgraph agrees for a channels-last input,
// the layout cuDNN runs natively, and keeps a packed NCHW graph packed NCHW rather
// than hand an NCHW caller's buffer a layout it did not declare. dgrad and wgrad cannot
// infer their output (the forward input extent is ambiguous under stride; the filter
// extent is not in DY): the user sets DX / DW dims and validate() checks them against
// the forward arithmetic.
#include <algorithm>
#include <string>

#include "ir/infer_context.h"
#include "ir/ops/groups.h"
#include "ir/ops/output_layout.h"
#include "opgraph/builders/conv.h"

namespace opgraph::ops {
namespace {

// Bound on padding / stride / dilation entries: keeps the extent arithmetic far from overflow.
constexpr std::int64_t kMaxGeometry = std::int64_t{1} << 24;
// Bound on an output's element count (validate() refuses larger tensors too).
constexpr std::int64_t kMaxElements = std::int64_t{1} << 48;

std::string to_str(__int128 v) {
  return v > kMaxElements ? std::string("> 2^48") : std::to_string(static_cast<std::int64_t>(v));
}

struct ConvGeometry {
  Dims pre, post, stride, dilation;  // one entry per spatial axis
};

// Reads an INT_LIST attribute of `n` entries (unset: `dflt` everywhere).
Status read_list(InferContext& c, std::string_view name, std::size_t n, std::int64_t dflt, std::int64_t min,
                 Dims* out) {
  if (!c.node().attr_is_set(name)) {
    *out = Dims(n, dflt);
    return Status::ok();
  }
  *out = c.node().get_int_list(name);
  if (out->size() != n)
    return c.fail_attr(name, "needs one entry per spatial axis (" + std::to_string(n) + "), got " +
                                 InferContext::dims_str(*out));
  for (auto v : *out)
    if (v < min || v > kMaxGeometry)
      return c.fail_attr(name, "entries must be in [" + std::to_string(min) + ", " + std::to_string(kMaxGeometry) +
                                   "], got " + InferContext::dims_str(*out));
  return Status::ok();
}

Status read_geometry(InferContext& c, std::size_t spatial, ConvGeometry* g) {
  Dims pad;
  OPGRAPH_CHECK(read_list(c, "padding", spatial, 0, 0, &pad));
  OPGRAPH_CHECK(read_list(c, "pre_padding", spatial, 0, 0, &g->pre));
  OPGRAPH_CHECK(read_list(c, "post_padding", spatial, 0, 0, &g->post));
  if (!c.node().attr_is_set("pre_padding")) g->pre = pad;
  if (!c.node().attr_is_set("post_padding")) g->post = pad;
  OPGRAPH_CHECK(read_list(c, "stride", spatial, 1, 1, &g->stride));
  return read_list(c, "dilation", spatial, 1, 1, &g->dilation);
}

// Spatial output extents of the forward conv of `x` by filter `w`; fails naming `x_port`.
Status forward_extents(InferContext& c, std::string_view x_port, const Dims& x, const Dims& w, const ConvGeometry& g,
                       Dims* out) {
  out->clear();
  for (std::size_t i = 2; i < x.size(); ++i) {
    std::size_t s = i - 2;
    // 128-bit: extents of a validated tensor fit int64 (and one with a zero extent may hold
    // huge others); geometry entries are <= 2^24, so nothing here can overflow.
    const __int128 span = static_cast<__int128>(g.dilation[s]) * (w[i] - 1) + 1;
    const __int128 padded = static_cast<__int128>(x[i]) + g.pre[s] + g.post[s];
    if (padded < span)
      return c.fail(x_port, "spatial axis " + std::to_string(s) + ": padded extent " + to_str(padded) +
                                " is smaller than the dilated filter extent " + to_str(span) + " (input " +
                                InferContext::dims_str(x) + ", filter " + InferContext::dims_str(w) + ")");
    const __int128 extent = (padded - span) / g.stride[s] + 1;
    if (extent > kMaxElements)
      return c.fail(x_port, "spatial axis " + std::to_string(s) + ": output extent exceeds 2^48");
    out->push_back(static_cast<std::int64_t>(extent));
  }
  return Status::ok();
}

// The shared rules of all three ops: ranks, the filter/activation channel relation
// (groups = x[1] / w[1]) and the geometry attributes. `x_port` / `w_port` name where
// the activation and filter come from (an input or the user-set output).
Status check_conv(InferContext& c, std::string_view x_port, const Dims& x, std::string_view w_port, const Dims& w,
                  ConvGeometry* g) {
  if (x.size() < 3 || x.size() > 5)
    return c.fail(x_port, "must be [N, C, spatial...] with 1 to 3 spatial axes, got " + InferContext::dims_str(x));
  if (w.size() != x.size())
    return c.fail(w_port, "filter rank must equal the activation rank " + std::to_string(x.size()) + ", got " +
                              InferContext::dims_str(w));
  if (x[1] < 1 || w[0] < 1)
    return c.fail(x[1] < 1 ? x_port : w_port, "channel extents must be >= 1 (activation " + InferContext::dims_str(x) +
                                                  ", filter " + InferContext::dims_str(w) + ")");
  for (std::size_t i = 2; i < w.size(); ++i)
    if (w[i] < 1)
      return c.fail(w_port, "filter spatial extents must be >= 1, got " + InferContext::dims_str(w));
  if (w[1] < 1 || x[1] % w[1] != 0)
    return c.fail(w_port, "activation channels C = " + std::to_string(x[1]) +
                              " must be a multiple of the filter's per-group channels " + std::to_string(w[1]) +
                              " (groups = C / filter C)");
  std::int64_t groups = x[1] / w[1];
  if (w[0] % groups != 0)
    return c.fail(w_port, "output channels K = " + std::to_string(w[0]) + " must be a multiple of groups = " +
                              std::to_string(groups));
  return read_geometry(c, x.size() - 2, g);
}

// conv_fprop's operand types: both floating point, or both INT8 (integer convolution,
// cuDNN's int8 configs: exact sums, INT32 accumulation; the output type is the graph's).
Status fprop_types(InferContext& c) {
  OPGRAPH_CHECK(c.require(ops::in::X));
  OPGRAPH_CHECK(c.require(ops::in::W));
  const DataType x = c.dtype(ops::in::X), w = c.dtype(ops::in::W);
  if (x == DataType::INT8 || w == DataType::INT8) {
    if (x == w) return Status::ok();
    return c.fail(x == DataType::INT8 ? ops::in::W : ops::in::X,
                  "rule conv_operand_types: X and W are both floating point or both INT8 (integer convolution); "
                  "got X " + std::string(to_string(x)) + " and W " + std::string(to_string(w)));
  }
  OPGRAPH_CHECK(c.require_floating(ops::in::X));
  return c.require_floating(ops::in::W);
}

Status infer_fprop(InferContext& c) {
  OPGRAPH_CHECK(fprop_types(c));
  const Dims& x = c.dims(ops::in::X);
  const Dims& w = c.dims(ops::in::W);
  ConvGeometry g;
  OPGRAPH_CHECK(check_conv(c, "X", x, "W", w, &g));
  Dims sp;
  OPGRAPH_CHECK(forward_extents(c, "X", x, w, g, &sp));
  Dims y{x[0], w[0]};
  y.insert(y.end(), sp.begin(), sp.end());
  __int128 numel = 1;
  for (auto d : y) numel = std::min<__int128>(numel * d, __int128{kMaxElements} + 1);
  if (numel > kMaxElements)
    return c.fail(ops::out::Y, "the inferred output " + InferContext::dims_str(y) + " holds more than 2^48 elements");
  return set_output_like(c, "Y", y, "X");
}

// DY must be the forward output of (x, w) for the geometry.
Status check_dy(InferContext& c, const Dims& x, const Dims& w, const ConvGeometry& g, std::string_view x_port) {
  const Dims& dy = c.dims(ops::in::DY);
  Dims sp;
  OPGRAPH_CHECK(forward_extents(c, x_port, x, w, g, &sp));
  Dims want{x[0], w[0]};
  want.insert(want.end(), sp.begin(), sp.end());
  if (dy != want)
    return c.fail(ops::in::DY, "must be the forward output " + InferContext::dims_str(want) + " of " + std::string(x_port) +
                            " " + InferContext::dims_str(x) + " and filter " + InferContext::dims_str(w) +
                            " under this padding/stride/dilation, got " + InferContext::dims_str(dy));
  return Status::ok();
}

Status infer_dgrad(InferContext& c) {
  OPGRAPH_CHECK(c.require_floating(ops::in::DY));
  OPGRAPH_CHECK(c.require_floating(ops::in::W));
  Dims dx;
  OPGRAPH_CHECK(c.require_user_output_dims(ops::out::DX, &dx));
  const Dims& w = c.dims(ops::in::W);
  ConvGeometry g;
  OPGRAPH_CHECK(check_conv(c, "DX", dx, "W", w, &g));
  OPGRAPH_CHECK(check_dy(c, dx, w, g, "DX"));
  return set_output_like(c, "DX", dx, "DY");
}

Status infer_wgrad(InferContext& c) {
  OPGRAPH_CHECK(c.require_floating(ops::in::DY));
  OPGRAPH_CHECK(c.require_floating(ops::in::X));
  Dims dw;
  OPGRAPH_CHECK(c.require_user_output_dims(ops::out::DW, &dw));
  const Dims& x = c.dims(ops::in::X);
  ConvGeometry g;
  OPGRAPH_CHECK(check_conv(c, "X", x, "DW", dw, &g));
  OPGRAPH_CHECK(check_dy(c, x, dw, g, "X"));
  return set_output_like(c, "DW", dw, "X");
}

std::vector<AttrSpec> conv_attrs() {
  return {{"padding", AttrType::INT_LIST},
          {"pre_padding", AttrType::INT_LIST},
          {"post_padding", AttrType::INT_LIST},
          {"stride", AttrType::INT_LIST},
          {"dilation", AttrType::INT_LIST},
          {"convolution_mode", AttrType::ENUM, AttrValue{std::string("CROSS_CORRELATION")}, false,
           {"CONVOLUTION", "CROSS_CORRELATION"}}};
}

const OpSpec kSpecs[] = {
    {.name = "conv_fprop",
     .inputs = {{"X"}, {"W"}},
     .outputs = {{"Y"}},
     .attrs = conv_attrs(),
     .infer = infer_fprop,
     .summary = "forward convolution, NCHW logical order, 1-3 spatial axes, groups from channel counts"},
    {.name = "conv_dgrad",
     .inputs = {{"DY"}, {"W"}},
     .outputs = {{"DX"}},
     .attrs = conv_attrs(),
     .infer = infer_dgrad,
     .summary = "data gradient of conv_fprop (DX dims set by the user)"},
    {.name = "conv_wgrad",
     .inputs = {{"DY"}, {"X"}},
     .outputs = {{"DW"}},
     .attrs = conv_attrs(),
     .infer = infer_wgrad,
     .summary = "filter gradient of conv_fprop (DW dims set by the user)"},
};

}  // namespace

std::span<const OpSpec> conv_specs() { return kSpecs; }

}  // namespace opgraph::ops

namespace opgraph {

TensorPtr ConvBuilders::conv_fprop(TensorPtr x, TensorPtr w, const Attributes& attrs) {
  return add_node1("conv_fprop", {{"X", x}, {"W", w}}, attrs);
}
TensorPtr ConvBuilders::conv_dgrad(TensorPtr dy, TensorPtr w, const Attributes& attrs) {
  return add_node1("conv_dgrad", {{"DY", dy}, {"W", w}}, attrs);
}
TensorPtr ConvBuilders::conv_wgrad(TensorPtr dy, TensorPtr x, const Attributes& attrs) {
  return add_node1("conv_wgrad", {{"DY", dy}, {"X", x}}, attrs);
}

}  // namespace opgraph
