// ir/graph_hash.h — the graph key and the layout class as a streaming hash of a
// graph's content, walked from its tensors, nodes and attributes (no JSON is
// built). The walk covers exactly what OpGraph::serialize writes, with the same
// normalisations (a FLOAT attribute given as an integer is its double, every NaN
// is one NaN, an empty list is one empty list), so two graphs with one canonical
// JSON give one hash and, but for a hash collision, two with different JSON give
// different hashes.
//
// The hash: two 64-bit lanes, each a chain of a bijective 64-bit mixer (murmur3's
// and Stafford's finalisers, different seeds) over 64-bit words; strings and lists
// are framed by their lengths. Not cryptographic: it is for the process's own graphs.
#pragma once

#include <cstdint>

#include "opgraph/op_graph.h"

namespace opgraph::graph_hash {

struct Hash128 {
  std::uint64_t lo = 0, hi = 0;
  bool operator==(const Hash128&) const = default;
  std::uint64_t fold() const noexcept { return lo ^ (hi * 0x9e3779b97f4a7c15ull); }
};

enum class Mode {
  GRAPH,         // every field as serialize() writes it (OpGraph::key)
  LAYOUT_CLASS,  // each tensor's extents and strides as the layout class writes them
};

// Assigns uids first when the graph is not frozen (as serialize() does).
Result<Hash128> content_hash(OpGraph& g, Mode mode);

// Stafford's variant 13 of splitmix64's finaliser: a bijective 64-bit mixer (one
// of the hash's two lanes; also what derives a key from another, plan_choices.cpp).
constexpr std::uint64_t stafford(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace opgraph::graph_hash
