// tests/reference/harness.h — the differential test harness (in the style of ggml's
// test-backend-ops): a case is a graph builder, an input generator and a tolerance;
// the harness runs it on the reference and on every engine that accepts it and
// compares each engine against the reference.
//
// Values everywhere are float64 Arrays keyed by TENSOR NAME, so the builder must
// give every graph input and output a unique name. Input values are generated
// already rounded to the tensor's dtype, so what an engine reads equals what the
// harness holds. See tests/reference/README.md for adding a case.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/reference/convert.h"
#include "engines/reference/executor.h"
#include "engines/reference/ref_kernel.h"
#include "opgraph/op_graph.h"

namespace opgraph::harness {

using reference::Array;
using reference::Dims;
using Values = std::map<std::string, Array, std::less<>>;  // by tensor name

// Inclusive range of generated values (integral types draw integers in it).
struct InputRange {
  double lo = -1.0;
  double hi = 1.0;
};

// |actual - expected| <= atol + rtol * |expected| (NaN matches NaN, inf the same inf).
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};
// A default for an output stored as `t`: a few ulps of the type (exact for integers).
Tolerance default_tolerance(DataType t);

struct Case {
  std::string name;
  std::function<void(OpGraph&)> build;          // tensors (uniquely named), nodes, outputs marked
  std::uint64_t seed = 1;
  InputRange range;                             // every generated input ...
  std::map<std::string, InputRange> ranges;     // ... unless overridden by input name
  Values fixed;                                 // explicit values (index tensors, offsets, lengths)
  std::map<std::string, Tolerance> tolerances;  // per output name; else default_tolerance(dtype)
};

// An engine the harness can run cases on. The planning layer plugs real engines in here.
struct Engine {
  std::string name;
  std::function<bool(const OpGraph&)> accepts;
  std::function<Status(const OpGraph&, const std::map<std::int64_t, reference::HostBuffer>&)> execute;
};
Engine reference_engine();

// Tensors that need a caller buffer: graph inputs (not pass-by-value) with their
// ragged offset tensors, and non-virtual outputs; each once, in node order.
std::vector<TensorPtr> graph_inputs(const OpGraph& g);
std::vector<TensorPtr> graph_outputs(const OpGraph& g);

// Builds the case's graph into `g` and validates it.
Status build(const Case& c, OpGraph& g);
// Seeded random values for every graph input: uniform in its range, rounded to its
// dtype, never all zero (if the whole range rounds to zero in the type, element 0
// gets the nearest nonzero value beyond it); `fixed` entries are taken as given
// (rounded to the dtype).
Values make_inputs(const Case& c, const OpGraph& g);
// Seeded uniform values in [lo, hi] of the given dims (float64, never all zero).
Array random_array(const Dims& dims, std::uint64_t seed, double lo = -1.0, double hi = 1.0);

// Allocates one host buffer per graph input (values stored through dims, strides
// and dtype; gaps poisoned) and per output (poisoned with 0xFF bytes: NaN for
// every floating type but FP4_E2M1, -1 for integers), runs the engine, and reads
// every output back. A missing input value is INVALID_VALUE naming it.
Result<Values> run_on(const Engine& e, const OpGraph& g, const Values& inputs);
Result<Values> run_reference(const OpGraph& g, const Values& inputs);

// "" when every output of `expected` is in `actual` and matches within its
// tolerance; otherwise one message naming the case, output, index, both values
// and the tolerance (the first mismatch, plus the count of mismatches).
std::string compare(std::string_view case_name, const OpGraph& g, const Values& expected, const Values& actual,
                    const std::map<std::string, Tolerance>& tolerances = {});

// Runs the case on the reference and on each engine of `engines` that accepts it,
// comparing each against the reference (gtest failures). Returns the reference
// outputs merged with the inputs (for closed-form checks); empty on a failure.
Values check_case(const Case& c, std::span<const Engine> engines = {});

// "[i, j, k]" of the row-major flat index `flat` of `dims`.
std::string index_str(const Dims& dims, std::int64_t flat);

// Central finite differences in float64: dL/d(input `wrt`) with
// L = sum over the outputs named in `weights` of sum(W ⊙ output). Build the graph
// in DOUBLE so the perturbation `h` survives the input's rounding.
Result<Array> fd_gradient(const OpGraph& g, const Values& inputs, std::string_view wrt, const Values& weights,
                          double h = 1e-6);
// The loss L itself for given outputs and weights.
double weighted_sum(const Values& outputs, const Values& weights);

}  // namespace opgraph::harness
