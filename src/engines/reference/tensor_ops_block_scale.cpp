// engines/reference/tensor_ops_block_scale.cpp — reference block-scaled quantize and
// dequantize (formats and shapes atop src/ir/ops/tensor_ops_block_scale.cpp).
//
// Quantize, per block of `block_size` elements along `axis` with amax = max |x|:
//   * the scale is the SMALLEST value of the scale type that is >= amax / max_elem
//     (max_elem: 448 for FP8_E4M3, 57344 for FP8_E5M2, 6 for FP4_E2M1), i.e. amax /
//     max_elem rounded UP: for FP8_E8M0 the next power of two 2^ceil(log2(amax / max_elem))
//     (exponent clamped to [-127, 127]); for FP8_E4M3 (NVFP4) the next E4M3 value, or 448
//     when amax / 6 exceeds it. Rounding up means no element saturates, so every
//     element's quantization error is at most half a step (ulp) of the element type at
//     |x| / scale, times the scale. An all-zero block gets scale 1.
//   * Y = x / scale clamped to ±max_elem (only reachable when the E4M3 scale saturated);
//     the executor rounds it to Y's type to nearest even.
//   * scale entries that only pad the F8_128x4 layout hold the all-zero bit pattern
//     (0 for E4M3, 2^-127 for E8M0). This kernel works on logical indices; the
//     executor stores an F8_128x4 scale in the 128x4 tiles of ir/scale_layout.h (and
//     reads a dequantize's F8_128x4 scale back from them), as cuDNN and cuBLASLt do.
// Dequantize: Y[i] = X[i] * scale[i / block] (per axis), negated with is_negative_scale.
#include <algorithm>
#include <cmath>

#include "engines/reference/convert.h"
#include "engines/reference/tensor_ops_common.h"

namespace opgraph::reference {
namespace {

double round_up_to(DataType t, double s) {
  if (t == DataType::FP8_E8M0) {
    int e = static_cast<int>(std::ceil(std::log2(s)));
    while (std::ldexp(1.0, e) < s) ++e;
    while (std::ldexp(1.0, e - 1) >= s) --e;
    return std::ldexp(1.0, std::clamp(e, -127, 127));
  }
  const double top = max_finite(t);
  if (s >= top) return top;
  double r = round_to(t, s);
  if (r < s) r = decode_bits(t, encode_bits(t, r) + 1);  // next value up (positive patterns are ordered)
  return r;
}

Status block_scale_quantize(KernelContext& c) {
  const Node& n = c.node();
  const Array& x = c.in(ops::in::X);
  Array& y = c.out(ops::out::Y);
  Array& s = c.out(ops::out::scale);
  const DataType elem = c.out_tensor(ops::out::Y).get_data_type(), st = c.out_tensor(ops::out::scale).get_data_type();
  const std::int64_t block = ops::BlockScaleQuantize::block_size(n).value_or(0);
  std::int64_t axis = ops::BlockScaleQuantize::axis(n);
  if (axis < 0) axis += x.rank();
  const auto ax = static_cast<std::size_t>(axis);
  const double max_elem = max_finite(elem);
  std::fill(s.v.begin(), s.v.end(), decode_bits(st, 0));
  Dims logical = x.dims;
  logical[ax] /= block;
  std::vector<std::int64_t> xi(x.dims.size());
  for_each_index(logical, [&](std::span<const std::int64_t> idx) {
    std::copy(idx.begin(), idx.end(), xi.begin());
    double amax = 0.0;
    for (std::int64_t k = 0; k < block; ++k) {
      xi[ax] = idx[ax] * block + k;
      amax = std::fmax(amax, std::fabs(x[x.offset(xi)]));
    }
    const double scale = amax > 0.0 ? round_up_to(st, amax / max_elem) : 1.0;
    for (std::int64_t k = 0; k < block; ++k) {
      xi[ax] = idx[ax] * block + k;
      const std::int64_t o = x.offset(xi);
      y[o] = std::clamp(x[o] / scale, -max_elem, max_elem);
    }
    s[s.offset(idx)] = scale;
  });
  return Status::ok();
}

Status block_scale_dequantize(KernelContext& c) {
  const Array& x = c.in(ops::in::X);
  const Array& s = c.in(ops::in::scale);
  Array& y = c.out(ops::out::Y);
  const Dims bs = ops::BlockScaleDequantize::block_size(c.node()).value_or(Dims{});
  Dims blocks(x.dims.size(), 1);
  if (bs.size() == 1) blocks.back() = bs[0];
  else blocks = bs;
  const double sign = ops::attr::is_negative_scale(c.node()) ? -1.0 : 1.0;
  std::vector<std::int64_t> si(x.dims.size());
  std::int64_t flat = 0;
  for_each_index(x.dims, [&](std::span<const std::int64_t> idx) {
    for (std::size_t k = 0; k < si.size(); ++k) si[k] = idx[k] / blocks[k];
    y[flat] = x[flat] * s[s.offset(si)] * sign;
    ++flat;
  });
  return Status::ok();
}

const KernelRecord kKernels[] = {{ops::BlockScaleQuantize::kIndex, block_scale_quantize},
                                 {ops::BlockScaleDequantize::kIndex, block_scale_dequantize}};

}  // namespace

std::span<const KernelRecord> tensor_op_block_scale_kernels() { return kKernels; }

}  // namespace opgraph::reference
