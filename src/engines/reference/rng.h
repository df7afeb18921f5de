// engines/reference/rng.h — the reference engine's random numbers: Philox-4x32-10
// (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11),
// a counter-based generator, written from the published round function. The rng op
// and SDPA dropout both draw from it, so a mask is reproducible from (seed, offset).
//
// Stream of (seed, offset): the 32-bit word w(k), k = 0, 1, 2, ..., is lane k % 4 of
//   philox4x32_10(counter = {lo32(k / 4), hi32(k / 4), lo32(offset), hi32(offset)},
//                 key     = {lo32(seed), hi32(seed)}).
// Element i of a tensor is its row-major flat LOGICAL index (strides do not matter).
//   uniform(i)   = (w(i) + 0.5) * 2^-32, in the open interval (0, 1);
//   normal(i)    = sqrt(-2 ln u1) * cos(2 pi u2), u1 = (w(2i) + 0.5) 2^-32, u2 likewise of w(2i + 1)
//                  (Box-Muller, standard normal);
//   bernoulli(i) = 1 if uniform(i) < p else 0.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace opgraph::reference {

// Ten Philox-4x32 rounds; the key is bumped by the Weyl constants between rounds.
inline std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> ctr, std::array<std::uint32_t, 2> key) {
  constexpr std::uint64_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    const std::uint64_t p0 = kM0 * ctr[0], p1 = kM1 * ctr[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
  }
  return ctr;
}

// Word k of the stream (seed, offset).
inline std::uint32_t philox_word(std::uint64_t seed, std::uint64_t offset, std::uint64_t k) {
  const std::uint64_t block = k / 4;
  auto lo = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  auto hi = [](std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); };
  return philox4x32_10({lo(block), hi(block), lo(offset), hi(offset)}, {lo(seed), hi(seed)})[k % 4];
}

inline double rng_unit(std::uint32_t w) { return (static_cast<double>(w) + 0.5) * 0x1p-32; }

// Element i of the stream as uniform (0, 1), standard normal, or Bernoulli(p).
inline double rng_uniform(std::uint64_t seed, std::uint64_t offset, std::uint64_t i) {
  return rng_unit(philox_word(seed, offset, i));
}
inline double rng_normal(std::uint64_t seed, std::uint64_t offset, std::uint64_t i) {
  const double u1 = rng_unit(philox_word(seed, offset, 2 * i)), u2 = rng_unit(philox_word(seed, offset, 2 * i + 1));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}
inline double rng_bernoulli(std::uint64_t seed, std::uint64_t offset, std::uint64_t i, double p) {
  return rng_uniform(seed, offset, i) < p ? 1.0 : 0.0;
}

}  // namespace opgraph::reference
