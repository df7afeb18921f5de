// engines/reference/convert.h — one element of every DataType to and from float64.
//
// The reference engine computes in float64; these functions are the only place
// where values meet the bit layouts of caller buffers. Every floating store
// rounds to nearest, ties to even (RNE), with correct subnormals.
//
// Buffer geometry: `i` is an ELEMENT index (the dot product of an index with the
// tensor's strides, in elements). Every type but FP4_E2M1 lives at byte offset
// i * bits/8. FP4_E2M1 packs two elements per byte: element i is in byte i / 2,
// the low nibble for even i and the high nibble for odd i (strides count nibbles,
// so the unit-stride axis is the packed one).
//
// Per-type rules of a store (encode):
//   FLOAT, HALF, BFLOAT16, FP8_E5M2: IEEE-like; finite values beyond the largest
//     finite value round to ±inf by RNE (a value at or above max + ulp/2 is inf);
//     NaN stays NaN (canonical quiet NaN with the input's sign).
//   DOUBLE: exact.
//   FP8_E4M3 (OCP e4m3fn: bias 7, max 448, no inf, S.1111.111 is NaN): NON-saturating,
//     as torch's `.to(float8_e4m3fn)`: a value whose RNE rounding exceeds 448 becomes
//     NaN (|v| > 464; 464 itself is a tie and rounds to 448), and so does ±inf.
//     Kernels that need saturation (quantize recipes use satfinite) clamp to
//     max_finite() first.
//   FP8_E8M0 (unsigned scale 2^(e-127), e in 0..254, 0xFF is NaN): a value that is
//     not a power of two rounds UP to the next power of two (round toward +inf, as
//     CUDA's cvt.rp.ue8m0 used by MX scale recipes). Zero and positive values below
//     2^-127 give 2^-127 (0x00); values above 2^127, inf, negatives and NaN give NaN.
//   FP4_E2M1 (values ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, bias 1, no inf/NaN): RNE and
//     saturating: |v| > 6 and ±inf store ±6; NaN stores +6 (0x7), as cvt.satfinite.
//   INT8, UINT8, INT32, INT64: round half to even, saturate to the type's range,
//     NaN stores 0. (INT64 loads are exact only up to 2^53.)
//   BOOLEAN: one byte; any nonzero value (NaN included) stores 1, zero stores 0.
#pragma once

#include <cstdint>

#include "opgraph/data_type.h"

namespace opgraph::reference {

// The bit pattern (in the low bits_of(t) bits) that a store of `v` writes.
std::uint64_t encode_bits(DataType t, double v) noexcept;
// The value of a bit pattern (only the low bits_of(t) bits are read).
double decode_bits(DataType t, std::uint64_t bits) noexcept;

// Element `i` of a host buffer holding type `t` (see the geometry above).
double load_element(const void* data, std::int64_t i, DataType t) noexcept;
// Writes element `i`; FP4 writes only its own nibble.
void store_element(void* data, std::int64_t i, DataType t, double v) noexcept;

// The value a store followed by a load gives: decode_bits(t, encode_bits(t, v)).
// NOT_SET returns v unchanged.
double round_to(DataType t, double v) noexcept;

// The largest finite value of a floating type (INT types: their maximum).
double max_finite(DataType t) noexcept;

// Bytes a buffer needs to hold element indices [0, elements) of type `t`.
std::int64_t bytes_for_elements(DataType t, std::int64_t elements) noexcept;

}  // namespace opgraph::reference
