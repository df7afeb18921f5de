// plan/engine_ids.h — the one flat engine id space, and decoding any id.
//
//   [0, 10000)        the cuDNN backend's engine ids (discovered per graph)
//   [10000, 20000)    reserved; 10000 is the backend's delegating entry
//   [20000, ...)      ours: family block b, slot s  ->  20000 + 100*b + s
//
// A family's block number is fixed in the manifest row and never reused, so a
// recorded (engine_id, knobs) replays the same slot across releases. Decoding
// is arithmetic: it needs nothing registered first.
#pragma once

#include <cstdint>
#include <string>

namespace opgraph::plan {

inline constexpr std::int64_t kBackendIdEnd = 10000;
inline constexpr std::int64_t kReservedIdEnd = 20000;
inline constexpr std::int64_t kFamilyBlockWidth = 100;
// The backend's delegating entry: the backend picks among candidates it never
// exposes as plans. It carries no mode.
inline constexpr std::int64_t kBackendHeuristicEngineId = kBackendIdEnd;

enum class IdBand : std::uint8_t { BACKEND, RESERVED, OURS, INVALID };

struct DecodedId {
  IdBand band = IdBand::INVALID;
  int block = -1;  // family block (OURS only)
  int slot = -1;   // slot within the block (OURS only)
};

constexpr DecodedId decode_engine_id(std::int64_t id) noexcept {
  if (id < 0) return {};
  if (id < kBackendIdEnd) return {IdBand::BACKEND, -1, -1};
  if (id < kReservedIdEnd) return {IdBand::RESERVED, -1, -1};
  std::int64_t off = id - kReservedIdEnd;
  return {IdBand::OURS, static_cast<int>(off / kFamilyBlockWidth), static_cast<int>(off % kFamilyBlockWidth)};
}

// Precondition: block >= 0, 0 <= slot < kFamilyBlockWidth.
constexpr std::int64_t encode_engine_id(int block, int slot) noexcept {
  return kReservedIdEnd + kFamilyBlockWidth * block + slot;
}

std::string to_string(IdBand band);

}  // namespace opgraph::plan
