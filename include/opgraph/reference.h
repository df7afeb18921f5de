// opgraph/reference.h — the CPU reference engine (float64) on host buffers, and
// the element conversions it reads and writes with.
//
// The reference is the oracle every engine is checked against. A tool or test
// that compares a plan's outputs runs the same graph through run_reference on its
// own copy of the inputs, then reads both sets of outputs element by element with
// load_element (what the reference itself reads with). Implemented in
// src/api/reference.cpp over the reference engine (src/engines/reference).
//
// Buffer geometry: an element INDEX is the dot product of an index with the
// tensor's strides, in elements. Every type but FP4_E2M1 lives at byte offset
// index * bits/8; FP4_E2M1 packs two elements per byte: element i is in byte
// i / 2, the low nibble for even i and the high nibble for odd i.
// Stores round to nearest, ties to even (fp8 e4m3 is non-saturating, as torch's
// .to(float8_e4m3fn); fp4 saturates; e8m0 rounds up to a power of two; integers
// round half to even and saturate; a boolean stores 1 for any nonzero value).
#pragma once

#include <cstdint>
#include <map>

#include "opgraph/data_type.h"
#include "opgraph/op_graph.h"
#include "opgraph/status.h"

namespace opgraph {

// Executes every node of validated `graph` on the CPU reference. `buffers` maps
// uid -> host buffer for every graph input that is not passed by value and every
// non-virtual output, laid out as declared (dims, strides, dtype). Errors, before
// any kernel runs: INVALID_VALUE (not validated), GRAPH_NOT_SUPPORTED naming an
// op without a reference kernel, INVALID_VARIANT_PACK naming a tensor whose
// buffer is missing or null. Outputs are written only when every node succeeded.
Status run_reference(const OpGraph& graph, const std::map<std::int64_t, void*>& buffers);

// Element `index` of a host buffer holding type `t`, as float64.
double read_element(const void* data, std::int64_t index, DataType t) noexcept;
// Writes element `index` of type `t` from float64 (rounded as above); an fp4
// store writes only its own nibble.
void write_element(void* data, std::int64_t index, DataType t, double value) noexcept;

}  // namespace opgraph
