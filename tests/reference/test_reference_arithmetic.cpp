// tests/reference/test_reference_arithmetic.cpp — the reference engine's checked
// arithmetic (a declared shape is caller input, never trusted): declared geometry
// reaches an allocation only through checked_numel, caller integers become indices only
// through to_index / as_index.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "engines/reference/ref_kernel.h"
#include "engines/reference/tensor_ops_common.h"

namespace opgraph::reference {
namespace {

TEST(ReferenceArithmetic, CheckedNumelRefusesOverflowAndNegativeExtents) {
  EXPECT_EQ(checked_numel(Dims{}).value(), 1);
  EXPECT_EQ(checked_numel(Dims{2, 3, 0}).value(), 0);
  EXPECT_EQ(checked_numel(Dims{1 << 20, 1 << 20, 1 << 20}).value(), std::int64_t{1} << 60);
  EXPECT_FALSE(checked_numel(Dims{1 << 22, 1 << 21, 1 << 21}));  // 2^64 wraps to 0 unchecked
  EXPECT_FALSE(checked_numel(Dims{-1, 4}));
  EXPECT_FALSE(checked_numel(Dims{4, -1}));
}

TEST(ReferenceArithmetic, ArrayOfAnUnrepresentableSizeThrowsLengthError) {
  EXPECT_THROW(Array(Dims{1 << 22, 1 << 21, 1 << 21}), std::length_error);  // would wrap to 0 elements
  EXPECT_THROW(Array(Dims{-2, 3}), std::length_error);
  EXPECT_THROW(Array(Dims{std::int64_t{1} << 60, 2}), std::length_error);  // 2^61 doubles: past vector::max_size()
  EXPECT_EQ(Array(Dims{2, 3}).numel(), 6);
}

TEST(ReferenceArithmetic, ToIndexRefusesWhatIsNoInt64) {
  EXPECT_EQ(to_index(7.0).value(), 7);
  EXPECT_EQ(to_index(-3.9).value(), -3);  // truncates toward zero
  EXPECT_FALSE(to_index(std::nan("")));
  EXPECT_FALSE(to_index(INFINITY));
  EXPECT_FALSE(to_index(9223372036854775807.0));  // INT64_MAX read as a double: 2^63, undefined to convert
  EXPECT_FALSE(to_index(-9223372036854775808.0));
  EXPECT_FALSE(to_index(4611686018427387904.0));   // 2^62: sums of two would overflow
}

TEST(ReferenceArithmetic, AsIndexSaturatesSoDifferencesStayInInt64) {
  const std::int64_t lim = std::int64_t{1} << 61;
  EXPECT_EQ(as_index(5.0), 5);
  EXPECT_EQ(as_index(9223372036854775807.0), lim);
  EXPECT_EQ(as_index(-9223372036854775808.0), -lim);
  EXPECT_EQ(as_index(std::nan("")), 0);
  EXPECT_EQ(as_index(1e300) - as_index(-1e300), 2 * lim);  // a band shift of two extremes
}

}  // namespace
}  // namespace opgraph::reference
