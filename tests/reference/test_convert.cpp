// Element conversions of every DataType: exhaustive bit round trips, RNE ties on
// every adjacent pair of representable values, overflow/underflow rules, integer
// rounding and saturation, FP4 nibble geometry.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "engines/reference/convert.h"

using namespace opgraph;
using reference::decode_bits;
using reference::encode_bits;
using reference::round_to;

namespace {

constexpr DataType kSmallFloats[] = {DataType::HALF, DataType::BFLOAT16, DataType::FP8_E4M3, DataType::FP8_E5M2,
                                     DataType::FP4_E2M1, DataType::FP8_E8M0};

std::uint64_t pattern_count(DataType t) { return std::uint64_t{1} << bits_of(t); }

}  // namespace

TEST(Convert, EveryBitPatternRoundTrips) {
  for (DataType t : kSmallFloats) {
    std::uint64_t nans = 0;
    for (std::uint64_t p = 0; p < pattern_count(t); ++p) {
      double v = decode_bits(t, p);
      std::uint64_t back = encode_bits(t, v);
      if (std::isnan(v)) {
        ++nans;
        EXPECT_TRUE(std::isnan(decode_bits(t, back))) << to_string(t) << " pattern " << p;
      } else {
        ASSERT_EQ(back, p) << to_string(t) << " value " << v;
      }
    }
    // NaN counts of each format (facts of the formats, not of the code).
    std::uint64_t expected_nans = t == DataType::HALF ? 2 * 1023 : t == DataType::BFLOAT16 ? 2 * 127
                                  : t == DataType::FP8_E4M3 ? 2 : t == DataType::FP8_E5M2 ? 6
                                  : t == DataType::FP8_E8M0 ? 1 : 0;
    EXPECT_EQ(nans, expected_nans) << to_string(t);
  }
}

TEST(Convert, KnownEncodings) {
  EXPECT_EQ(encode_bits(DataType::HALF, 1.0), 0x3C00u);
  EXPECT_EQ(encode_bits(DataType::HALF, -2.0), 0xC000u);
  EXPECT_EQ(encode_bits(DataType::HALF, 65504.0), 0x7BFFu);
  EXPECT_EQ(encode_bits(DataType::HALF, std::ldexp(1.0, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(encode_bits(DataType::HALF, std::ldexp(1.0, -14)), 0x0400u);  // smallest normal
  EXPECT_EQ(encode_bits(DataType::HALF, -0.0), 0x8000u);
  EXPECT_EQ(encode_bits(DataType::BFLOAT16, 1.0), 0x3F80u);
  EXPECT_EQ(encode_bits(DataType::BFLOAT16, -3.0), 0xC040u);
  EXPECT_EQ(encode_bits(DataType::FP8_E4M3, 448.0), 0x7Eu);
  EXPECT_EQ(encode_bits(DataType::FP8_E4M3, 1.0), 0x38u);
  EXPECT_EQ(encode_bits(DataType::FP8_E4M3, std::ldexp(1.0, -9)), 0x01u);
  EXPECT_EQ(encode_bits(DataType::FP8_E5M2, 1.0), 0x3Cu);
  EXPECT_EQ(encode_bits(DataType::FP8_E5M2, 57344.0), 0x7Bu);
  EXPECT_EQ(encode_bits(DataType::FP8_E8M0, 1.0), 127u);
  EXPECT_EQ(encode_bits(DataType::FP4_E2M1, 6.0), 0x7u);
  EXPECT_EQ(encode_bits(DataType::FP4_E2M1, -0.5), 0x9u);
  const double fp4[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (std::uint64_t p = 0; p < 8; ++p) {
    EXPECT_EQ(decode_bits(DataType::FP4_E2M1, p), fp4[p]);
    EXPECT_EQ(decode_bits(DataType::FP4_E2M1, p | 8), -fp4[p]);
  }
}

// Between every two adjacent finite values a < b of one sign: the midpoint goes to
// the one with an even pattern, anything off the midpoint to the nearer one.
TEST(Convert, RoundToNearestEvenOnEveryTie) {
  for (DataType t : {DataType::HALF, DataType::BFLOAT16, DataType::FP8_E4M3, DataType::FP8_E5M2,
                     DataType::FP4_E2M1}) {
    const std::uint64_t sign = pattern_count(t) / 2;
    for (std::uint64_t p = 0; p + 1 < sign; ++p) {
      for (std::uint64_t s : {std::uint64_t{0}, sign}) {
        double a = decode_bits(t, p | s), b = decode_bits(t, (p + 1) | s);
        if (!std::isfinite(a) || !std::isfinite(b)) continue;
        double mid = (a + b) / 2;  // exact in double
        std::uint64_t even = (p & 1) ? (p + 1) : p;
        ASSERT_EQ(encode_bits(t, mid), even | s) << to_string(t) << " tie " << mid;
        double toward_a = std::nextafter(mid, a), toward_b = std::nextafter(mid, b);
        ASSERT_EQ(encode_bits(t, toward_a), p | s) << to_string(t) << " below tie " << toward_a;
        ASSERT_EQ(encode_bits(t, toward_b), (p + 1) | s) << to_string(t) << " above tie " << toward_b;
      }
    }
  }
}

TEST(Convert, FloatRoundsLikeTheHardware) {
  EXPECT_EQ(round_to(DataType::FLOAT, 1.0 + std::ldexp(1.0, -24)), 1.0);  // tie, even is 1.0
  EXPECT_EQ(round_to(DataType::FLOAT, 1.0 + 3 * std::ldexp(1.0, -24)), 1.0 + std::ldexp(1.0, -22));
  EXPECT_TRUE(std::isinf(round_to(DataType::FLOAT, 1e39)));
  EXPECT_EQ(round_to(DataType::DOUBLE, 0.1), 0.1);
}

#if defined(__FLT16_MAX__)
// The compiler's double -> _Float16 conversion is an independent RNE oracle.
TEST(Convert, HalfAgreesWithCompilerFloat16) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    int e = static_cast<int>(rng() % 50) - 30;
    double v = std::ldexp(static_cast<double>(rng() >> 11) * 0x1.0p-53, e) * ((rng() & 1) ? -1 : 1);
    auto expect = std::bit_cast<std::uint16_t>(static_cast<_Float16>(v));
    ASSERT_EQ(encode_bits(DataType::HALF, v), expect) << v;
  }
}
#endif

TEST(Convert, OverflowAndUnderflow) {
  const double inf = std::numeric_limits<double>::infinity();
  // IEEE-like: the tie above max goes to inf, below it to max.
  EXPECT_EQ(round_to(DataType::HALF, 65519.99), 65504.0);
  EXPECT_EQ(round_to(DataType::HALF, 65520.0), inf);
  EXPECT_EQ(round_to(DataType::HALF, -1e9), -inf);
  EXPECT_EQ(round_to(DataType::FP8_E5M2, 61439.0), 57344.0);
  EXPECT_EQ(round_to(DataType::FP8_E5M2, 61440.0), inf);
  EXPECT_EQ(round_to(DataType::BFLOAT16, 1e39), inf);
  // e4m3fn: no inf; non-saturating (out of range -> NaN).
  EXPECT_EQ(round_to(DataType::FP8_E4M3, 464.0), 448.0);
  EXPECT_TRUE(std::isnan(round_to(DataType::FP8_E4M3, 464.5)));
  EXPECT_TRUE(std::isnan(round_to(DataType::FP8_E4M3, -1e6)));
  EXPECT_TRUE(std::isnan(round_to(DataType::FP8_E4M3, inf)));
  // e2m1: saturating.
  EXPECT_EQ(round_to(DataType::FP4_E2M1, 7.0), 6.0);
  EXPECT_EQ(round_to(DataType::FP4_E2M1, -100.0), -6.0);
  EXPECT_EQ(round_to(DataType::FP4_E2M1, -inf), -6.0);
  EXPECT_EQ(round_to(DataType::FP4_E2M1, std::nan("")), 6.0);
  EXPECT_EQ(round_to(DataType::FP4_E2M1, 0.2), 0.0);
  // Underflow keeps the sign of zero.
  EXPECT_EQ(encode_bits(DataType::HALF, -std::ldexp(1.0, -26)), 0x8000u);
  EXPECT_EQ(encode_bits(DataType::FP8_E4M3, std::ldexp(1.0, -11)), 0x00u);
  EXPECT_EQ(round_to(DataType::BFLOAT16, std::ldexp(1.0, -133)), std::ldexp(1.0, -133));  // bf16 min subnormal
  // NaN keeps NaN.
  for (DataType t : {DataType::FLOAT, DataType::HALF, DataType::BFLOAT16, DataType::FP8_E4M3, DataType::FP8_E5M2,
                     DataType::FP8_E8M0})
    EXPECT_TRUE(std::isnan(round_to(t, std::nan("")))) << to_string(t);
}

TEST(Convert, E8M0RoundsUpToPowersOfTwo) {
  EXPECT_EQ(round_to(DataType::FP8_E8M0, 1.0), 1.0);
  EXPECT_EQ(round_to(DataType::FP8_E8M0, 3.0), 4.0);
  EXPECT_EQ(round_to(DataType::FP8_E8M0, 0.75), 1.0);
  EXPECT_EQ(round_to(DataType::FP8_E8M0, 1.0000001), 2.0);
  EXPECT_EQ(round_to(DataType::FP8_E8M0, std::ldexp(1.0, -127)), std::ldexp(1.0, -127));
  EXPECT_EQ(encode_bits(DataType::FP8_E8M0, std::ldexp(1.0, -140)), 0x00u);
  EXPECT_EQ(encode_bits(DataType::FP8_E8M0, 0.0), 0x00u);
  EXPECT_EQ(encode_bits(DataType::FP8_E8M0, std::ldexp(1.0, 127)), 254u);
  EXPECT_EQ(encode_bits(DataType::FP8_E8M0, std::ldexp(1.5, 127)), 0xFFu);
  EXPECT_EQ(encode_bits(DataType::FP8_E8M0, -1.0), 0xFFu);
}

TEST(Convert, IntegersRoundHalfEvenAndSaturate) {
  EXPECT_EQ(round_to(DataType::INT8, 2.5), 2.0);
  EXPECT_EQ(round_to(DataType::INT8, 3.5), 4.0);
  EXPECT_EQ(round_to(DataType::INT8, -2.5), -2.0);
  EXPECT_EQ(round_to(DataType::INT8, -2.6), -3.0);
  EXPECT_EQ(round_to(DataType::INT8, 200.0), 127.0);
  EXPECT_EQ(round_to(DataType::INT8, -200.0), -128.0);
  EXPECT_EQ(encode_bits(DataType::INT8, -1.0), 0xFFu);
  EXPECT_EQ(round_to(DataType::UINT8, -3.0), 0.0);
  EXPECT_EQ(round_to(DataType::UINT8, 254.5), 254.0);
  EXPECT_EQ(round_to(DataType::UINT8, 300.0), 255.0);
  EXPECT_EQ(round_to(DataType::INT32, 3e9), 2147483647.0);
  EXPECT_EQ(round_to(DataType::INT32, -3e9), -2147483648.0);
  EXPECT_EQ(round_to(DataType::INT64, 1e30), 9223372036854775807.0);
  EXPECT_EQ(encode_bits(DataType::INT64, 1e30), 0x7FFFFFFFFFFFFFFFull);
  EXPECT_EQ(encode_bits(DataType::INT64, -1e30), 0x8000000000000000ull);
  EXPECT_EQ(round_to(DataType::INT64, -12345.5), -12346.0);
  for (DataType t : {DataType::INT8, DataType::UINT8, DataType::INT32, DataType::INT64})
    EXPECT_EQ(round_to(t, std::nan("")), 0.0) << to_string(t);
  EXPECT_EQ(round_to(DataType::BOOLEAN, 0.25), 1.0);
  EXPECT_EQ(round_to(DataType::BOOLEAN, -3.0), 1.0);
  EXPECT_EQ(round_to(DataType::BOOLEAN, 0.0), 0.0);
  EXPECT_EQ(round_to(DataType::BOOLEAN, std::nan("")), 1.0);
}

TEST(Convert, BufferGeometryPerType) {
  unsigned char buf[16];
  std::memset(buf, 0xAB, sizeof buf);
  // FP4: element 2k in the low nibble of byte k, 2k+1 in the high nibble; neighbours untouched.
  reference::store_element(buf, 2, DataType::FP4_E2M1, 1.5);   // 0x3
  reference::store_element(buf, 3, DataType::FP4_E2M1, -6.0);  // 0xF
  EXPECT_EQ(buf[1], 0xF3);
  EXPECT_EQ(buf[0], 0xAB);
  EXPECT_EQ(buf[2], 0xAB);
  reference::store_element(buf, 3, DataType::FP4_E2M1, 0.5);  // 0x1, low nibble kept
  EXPECT_EQ(buf[1], 0x13);
  EXPECT_EQ(reference::load_element(buf, 2, DataType::FP4_E2M1), 1.5);
  EXPECT_EQ(reference::load_element(buf, 3, DataType::FP4_E2M1), 0.5);
  // HALF: element i at bytes 2i, 2i+1 (little endian).
  reference::store_element(buf, 3, DataType::HALF, 1.0);
  EXPECT_EQ(buf[6], 0x00);
  EXPECT_EQ(buf[7], 0x3C);
  EXPECT_EQ(buf[8], 0xAB);
  reference::store_element(buf, 1, DataType::FLOAT, -2.0f);
  float f;
  std::memcpy(&f, buf + 4, 4);
  EXPECT_EQ(f, -2.0f);
  reference::store_element(buf, 1, DataType::INT64, -5.0);
  std::int64_t i64;
  std::memcpy(&i64, buf + 8, 8);
  EXPECT_EQ(i64, -5);
  EXPECT_EQ(reference::bytes_for_elements(DataType::FP4_E2M1, 5), 3);
  EXPECT_EQ(reference::bytes_for_elements(DataType::BFLOAT16, 5), 10);
}
