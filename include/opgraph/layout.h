// opgraph/layout.h — checked arithmetic over a declared tensor layout: spans,
// byte counts and the storage-slot spelling of fp4, as the execute path counts
// them.
//
// These are the library's own answers (implemented in src/exec/declared_layout.cpp,
// which the variant pack's normalisation and every engine's operand table use),
// public so that a caller sizing a buffer (the CLI, the Python binding's fast path)
// sizes it exactly as execute checks it, never by its own copy of the rules.
//
// Units: dims and strides in ELEMENTS of the tensor's dtype, or in storage SLOTS
// after to_storage_geometry (fp4 packs two elements per 8-bit slot along the
// unit-stride axis; every other type: one element per slot). Byte counts in
// BYTES. Every extent, stride and byte count is checked: a geometry whose
// element count, span or byte count does not fit in int64 (or that has a
// negative extent) has no answer (nullopt / false), never a wrapped one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "opgraph/data_type.h"

namespace opgraph {

// Width of one storage slot in bits: 8 for fp4 (two elements), else the element's
// (bits_of; 0 for NOT_SET).
inline int slot_bits(DataType t) noexcept { return t == DataType::FP4_E2M1 ? 8 : bits_of(t); }

// Element geometry → slot geometry for `t`, in place (identity unless fp4). The
// reason when fp4 geometry has no slot spelling (an odd unit-stride extent, no
// unit-stride axis), else nullopt.
std::optional<std::string> to_storage_geometry(DataType t, int rank, std::int64_t* dims, std::int64_t* strides);

// Packed row-major strides for `dims` (elements). False when an extent is
// negative or the product of the extents overflows int64; the strides of the
// axes above the failing one are then INT64_MAX (a span that overflows).
bool packed_strides(int rank, const std::int64_t* dims, std::int64_t* strides);
// Whether the strides describe one gap-free run of prod(dims) elements (any axis
// order). False for a negative extent or an overflowing product.
bool is_dense(int rank, const std::int64_t* dims, const std::int64_t* strides);
// prod(dims), or nullopt (a negative extent, or the product overflows int64).
std::optional<std::int64_t> element_count(int rank, const std::int64_t* dims);
// Elements the geometry spans (1 + max |offset|; 0 when an extent is 0), or
// nullopt: a negative extent, or the span overflows int64.
std::optional<std::int64_t> span_elements(int rank, const std::int64_t* dims, const std::int64_t* strides);
// `elements` slots (or elements) of `slot_bits` bits in bytes, rounded up, or
// nullopt on overflow. Element geometry: slot_bytes(n, bits_of(t)); slot
// geometry: slot_bytes(n, slot_bits(t)).
std::optional<std::int64_t> slot_bytes(std::int64_t elements, int slot_bits);

}  // namespace opgraph
