// engines/reference/convert.cpp — element encode/decode for every DataType (rules in convert.h).
//
// The small floating formats share one generic encoder: scale the magnitude so
// that one unit is the quantum of its binade (subnormal binades share the
// quantum of the smallest normal one), round that to an integer with RNE
// (std::nearbyint under the default rounding mode; the scaled value is exact in
// double), then re-encode the rounded value. Overflow policy is per format.
#include "engines/reference/convert.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace opgraph::reference {
namespace {

enum class Specials : std::uint8_t {
  IEEE,      // all-ones exponent: inf (mantissa 0) or NaN
  FN,        // e4m3fn: only all-ones exponent and mantissa is NaN; no inf
  SATURATE,  // e2m1: no inf/NaN; overflow, inf and NaN saturate
};

struct MiniFloat {
  int ebits;
  int mbits;
  int bias;
  Specials specials;

  int emin() const { return 1 - bias; }
  std::uint64_t exp_mask() const { return ((std::uint64_t{1} << ebits) - 1) << mbits; }
  std::uint64_t mant_mask() const { return (std::uint64_t{1} << mbits) - 1; }
  std::uint64_t sign_bit() const { return std::uint64_t{1} << (ebits + mbits); }
  std::uint64_t max_bits() const {
    std::uint64_t all_e = (std::uint64_t{1} << ebits) - 1;
    switch (specials) {
      case Specials::IEEE: return ((all_e - 1) << mbits) | mant_mask();
      case Specials::FN: return (all_e << mbits) | (mant_mask() - 1);
      case Specials::SATURATE: return (all_e << mbits) | mant_mask();
    }
    return 0;
  }
};

constexpr MiniFloat kHalf{5, 10, 15, Specials::IEEE};
constexpr MiniFloat kBf16{8, 7, 127, Specials::IEEE};
constexpr MiniFloat kE4M3{4, 3, 7, Specials::FN};
constexpr MiniFloat kE5M2{5, 2, 15, Specials::IEEE};
constexpr MiniFloat kE2M1{2, 1, 1, Specials::SATURATE};

double decode_mini(const MiniFloat& f, std::uint64_t bits) {
  bool neg = (bits & f.sign_bit()) != 0;
  std::uint64_t e = (bits & f.exp_mask()) >> f.mbits;
  std::uint64_t m = bits & f.mant_mask();
  std::uint64_t all_e = (std::uint64_t{1} << f.ebits) - 1;
  double mag;
  if (f.specials == Specials::IEEE && e == all_e) {
    mag = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (f.specials == Specials::FN && e == all_e && m == f.mant_mask()) {
    mag = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    mag = std::ldexp(static_cast<double>(m), f.emin() - f.mbits);
  } else {
    mag = std::ldexp(static_cast<double>(m | (std::uint64_t{1} << f.mbits)), static_cast<int>(e) - f.bias - f.mbits);
  }
  return neg ? -mag : mag;
}

std::uint64_t encode_mini(const MiniFloat& f, double v) {
  std::uint64_t sign = std::signbit(v) ? f.sign_bit() : 0;
  std::uint64_t nan_bits = 0;
  switch (f.specials) {
    case Specials::IEEE: nan_bits = sign | f.exp_mask() | (std::uint64_t{1} << (f.mbits - 1)); break;
    case Specials::FN: nan_bits = sign | f.exp_mask() | f.mant_mask(); break;
    case Specials::SATURATE: nan_bits = f.max_bits(); break;  // NaN -> +max
  }
  if (std::isnan(v)) return nan_bits;
  double max_v = decode_mini(f, f.max_bits());
  auto overflow = [&]() -> std::uint64_t {
    switch (f.specials) {
      case Specials::IEEE: return sign | f.exp_mask();
      case Specials::FN: return nan_bits;
      case Specials::SATURATE: return sign | f.max_bits();
    }
    return 0;
  };
  double a = std::fabs(v);
  if (std::isinf(a)) return overflow();
  if (a == 0.0) return sign;
  int e = 0;
  (void)std::frexp(a, &e);
  e -= 1;  // a in [2^e, 2^(e+1))
  if (e < f.emin()) e = f.emin();
  double r = std::nearbyint(std::ldexp(a, f.mbits - e));  // units of the binade's quantum
  double val = std::ldexp(r, e - f.mbits);
  if (val > max_v) return overflow();
  if (val == 0.0) return sign;
  if (val < std::ldexp(1.0, f.emin())) {
    auto m = static_cast<std::uint64_t>(std::ldexp(val, f.mbits - f.emin()));
    return sign | m;
  }
  int e2 = 0;
  (void)std::frexp(val, &e2);
  e2 -= 1;
  auto full = static_cast<std::uint64_t>(std::ldexp(val, f.mbits - e2));  // in [2^M, 2^(M+1))
  return sign | (static_cast<std::uint64_t>(e2 + f.bias) << f.mbits) | (full & f.mant_mask());
}

std::uint64_t encode_e8m0(double v) {
  if (std::isnan(v) || v < 0.0 || std::isinf(v)) return 0xFF;
  if (v == 0.0) return 0x00;
  int x = 0;
  double fr = std::frexp(v, &x);  // v = fr * 2^x, fr in [0.5, 1)
  int k = fr == 0.5 ? x - 1 : x;  // ceil(log2 v)
  int biased = k + 127;
  if (biased < 0) return 0x00;
  if (biased > 254) return 0xFF;
  return static_cast<std::uint64_t>(biased);
}

double decode_e8m0(std::uint64_t bits) {
  bits &= 0xFF;
  if (bits == 0xFF) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(bits) - 127);
}

template <class I>
std::uint64_t encode_int(double v) {
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v);
  I out;
  // The bounds as doubles: max() of int64 is not representable, 2^63 is.
  const double lo = static_cast<double>(std::numeric_limits<I>::min());
  const double hi_excl = -lo;  // 2^(bits-1): the first value above max()
  if constexpr (std::numeric_limits<I>::is_signed) {
    if (r <= lo) out = std::numeric_limits<I>::min();
    else if (r >= hi_excl) out = std::numeric_limits<I>::max();
    else out = static_cast<I>(r);
  } else {
    if (r <= 0.0) out = 0;
    else if (r >= static_cast<double>(std::numeric_limits<I>::max())) out = std::numeric_limits<I>::max();
    else out = static_cast<I>(r);
  }
  using U = std::make_unsigned_t<I>;
  return static_cast<std::uint64_t>(static_cast<U>(out));
}

template <class I>
double decode_int(std::uint64_t bits) {
  using U = std::make_unsigned_t<I>;
  return static_cast<double>(static_cast<I>(static_cast<U>(bits)));
}

}  // namespace

std::uint64_t encode_bits(DataType t, double v) noexcept {
  switch (t) {
    case DataType::NOT_SET:
    case DataType::DOUBLE: return std::bit_cast<std::uint64_t>(v);
    case DataType::FLOAT: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    case DataType::HALF: return encode_mini(kHalf, v);
    case DataType::BFLOAT16: return encode_mini(kBf16, v);
    case DataType::FP8_E4M3: return encode_mini(kE4M3, v);
    case DataType::FP8_E5M2: return encode_mini(kE5M2, v);
    case DataType::FP4_E2M1: return encode_mini(kE2M1, v);
    case DataType::FP8_E8M0: return encode_e8m0(v);
    case DataType::INT8: return encode_int<std::int8_t>(v);
    case DataType::UINT8: return encode_int<std::uint8_t>(v);
    case DataType::INT32: return encode_int<std::int32_t>(v);
    case DataType::INT64: return encode_int<std::int64_t>(v);
    case DataType::BOOLEAN: return v != 0.0 ? 1 : 0;  // NaN != 0
  }
  return 0;
}

double decode_bits(DataType t, std::uint64_t bits) noexcept {
  switch (t) {
    case DataType::NOT_SET:
    case DataType::DOUBLE: return std::bit_cast<double>(bits);
    case DataType::FLOAT: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case DataType::HALF: return decode_mini(kHalf, bits & 0xFFFF);
    case DataType::BFLOAT16: return decode_mini(kBf16, bits & 0xFFFF);
    case DataType::FP8_E4M3: return decode_mini(kE4M3, bits & 0xFF);
    case DataType::FP8_E5M2: return decode_mini(kE5M2, bits & 0xFF);
    case DataType::FP4_E2M1: return decode_mini(kE2M1, bits & 0xF);
    case DataType::FP8_E8M0: return decode_e8m0(bits);
    case DataType::INT8: return decode_int<std::int8_t>(bits);
    case DataType::UINT8: return decode_int<std::uint8_t>(bits);
    case DataType::INT32: return decode_int<std::int32_t>(bits);
    case DataType::INT64: return decode_int<std::int64_t>(bits);
    case DataType::BOOLEAN: return (bits & 0xFF) != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

double load_element(const void* data, std::int64_t i, DataType t) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  if (t == DataType::FP4_E2M1) {
    unsigned char b = p[i >> 1];
    return decode_bits(t, (i & 1) ? (b >> 4) : (b & 0xF));
  }
  const int bytes = bits_of(t == DataType::NOT_SET ? DataType::DOUBLE : t) / 8;
  std::uint64_t bits = 0;
  std::memcpy(&bits, p + i * bytes, static_cast<std::size_t>(bytes));  // little-endian host
  return decode_bits(t, bits);
}

void store_element(void* data, std::int64_t i, DataType t, double v) noexcept {
  auto* p = static_cast<unsigned char*>(data);
  std::uint64_t bits = encode_bits(t, v);
  if (t == DataType::FP4_E2M1) {
    unsigned char& b = p[i >> 1];
    auto nib = static_cast<unsigned char>(bits & 0xF);
    b = (i & 1) ? static_cast<unsigned char>((b & 0x0F) | (nib << 4)) : static_cast<unsigned char>((b & 0xF0) | nib);
    return;
  }
  const int bytes = bits_of(t == DataType::NOT_SET ? DataType::DOUBLE : t) / 8;
  std::memcpy(p + i * bytes, &bits, static_cast<std::size_t>(bytes));
}

double round_to(DataType t, double v) noexcept {
  if (t == DataType::NOT_SET || t == DataType::DOUBLE) return v;
  return decode_bits(t, encode_bits(t, v));
}

double max_finite(DataType t) noexcept {
  switch (t) {
    case DataType::NOT_SET:
    case DataType::DOUBLE: return std::numeric_limits<double>::max();
    case DataType::FLOAT: return std::numeric_limits<float>::max();
    case DataType::HALF: return 65504.0;
    case DataType::BFLOAT16: return decode_mini(kBf16, kBf16.max_bits());
    case DataType::FP8_E4M3: return 448.0;
    case DataType::FP8_E5M2: return 57344.0;
    case DataType::FP4_E2M1: return 6.0;
    case DataType::FP8_E8M0: return std::ldexp(1.0, 127);
    case DataType::INT8: return 127.0;
    case DataType::UINT8: return 255.0;
    case DataType::INT32: return 2147483647.0;
    case DataType::INT64: return 9223372036854775807.0;
    case DataType::BOOLEAN: return 1.0;
  }
  return 0.0;
}

std::int64_t bytes_for_elements(DataType t, std::int64_t elements) noexcept {
  if (t == DataType::FP4_E2M1) return (elements + 1) / 2;
  return elements * (bits_of(t == DataType::NOT_SET ? DataType::DOUBLE : t) / 8);
}

}  // namespace opgraph::reference
