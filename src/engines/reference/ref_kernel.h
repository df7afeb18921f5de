// engines/reference/ref_kernel.h — the contract between the reference executor
// and the per-op reference kernels.
//
// The reference engine is the oracle every other engine is judged against, so it
// is plain and obviously correct: every kernel reads its inputs as dense
// row-major float64 Arrays and writes dense row-major float64 Arrays. The
// executor (executor.cpp) does everything else: it reads caller buffers through
// their declared dims/strides/dtype, rounds every node output to its declared
// dtype (round-to-nearest-even, see convert.h), and writes the graph outputs to
// the caller's buffers only after every node succeeded (a failed call leaves the
// caller's buffers untouched).
//
// Adding an op's reference: write `Status my_op(KernelContext&)` in the group's
// file and list it in that file's `*_kernels()` table under its op record
// ({ops::MyOp::kIndex, my_op}); kernels.cpp indexes the tables by record, and
// tests/reference/test_coverage.cpp walks the registry: every op has one.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "opgraph/node.h"
#include "opgraph/ops.h"
#include "opgraph/status.h"

namespace opgraph::reference {

using Dims = std::vector<std::int64_t>;

// Product of `dims`, or nullopt when an extent is negative or the product
// overflows int64. Declared geometry reaches allocations only through this.
std::optional<std::int64_t> checked_numel(std::span<const std::int64_t> dims) noexcept;

// An integer-valued element read from a caller's buffer (an offset, a length, an
// index, a seed), as int64: nullopt when it is NaN, infinite or outside
// (-2^62, 2^62), so a kernel refuses it instead of a conversion that is undefined
// (|x| >= 2^63) or a sum of two that overflows. Truncates toward zero.
std::optional<std::int64_t> to_index(double x) noexcept;

// A dense row-major float64 array. Construction throws std::length_error when the
// dims have a negative extent or more elements than fit (the executor returns it
// as an error naming the node).
struct Array {
  Dims dims;
  std::vector<double> v;

  Array() = default;
  explicit Array(Dims d, double fill = 0.0);
  std::int64_t numel() const noexcept { return static_cast<std::int64_t>(v.size()); }
  std::int64_t rank() const noexcept { return static_cast<std::int64_t>(dims.size()); }
  double& operator[](std::int64_t i) { return v[static_cast<std::size_t>(i)]; }
  double operator[](std::int64_t i) const { return v[static_cast<std::size_t>(i)]; }
  // Row-major offset of a full index (size == rank).
  std::int64_t offset(std::span<const std::int64_t> idx) const;
  double& at(std::initializer_list<std::int64_t> idx) { return v[offset({idx.begin(), idx.size()})]; }
  double at(std::initializer_list<std::int64_t> idx) const { return v[offset({idx.begin(), idx.size()})]; }
  // Value at `idx` of an output of rank >= this array's, numpy broadcasting (right-aligned, 1 stretches).
  double broadcast_at(std::span<const std::int64_t> out_idx) const;
};

// Calls f(idx) for every index of `dims` in row-major order.
template <class F>
void for_each_index(const Dims& dims, F&& f) {
  std::vector<std::int64_t> idx(dims.size(), 0);
  for (auto d : dims)
    if (d == 0) return;
  while (true) {
    f(std::span<const std::int64_t>(idx));
    std::size_t k = dims.size();
    while (k > 0) {
      --k;
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
      if (k == 0) return;
    }
    if (dims.empty()) return;
  }
}

class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const Node& node() const = 0;
  // Ports: a port enum of opgraph/ops.h (ops::Matmul::In::A), a shared name
  // (ops::in::X) or a string; see Node::input.
  // Inputs: the bound tensor's values (pass-by-value scalars arrive as a [1]-shaped Array).
  virtual bool has(ops::PortRef port) const = 0;
  virtual const Array& in(ops::PortRef port) const = 0;                 // precondition: has(port)
  virtual std::vector<const Array*> ins(ops::PortRef port) const = 0;   // a list port, in bind order
  virtual const Tensor& in_tensor(ops::PortRef port) const = 0;         // the declaration
  // Values of the ragged offset tensor attached to an input/output's declaration (nullptr if none).
  virtual const Array* ragged_offset(ops::PortRef port) const = 0;
  // Outputs: pre-sized to the declared dims and zero-filled. wants() is false for
  // a conditional output the node does not produce; out() must not be called then.
  virtual bool wants(ops::PortRef port) const = 0;
  virtual Array& out(ops::PortRef port) = 0;
  virtual const Tensor& out_tensor(ops::PortRef port) const = 0;
  // An error naming this node and the rule (GRAPH_EXECUTION_FAILED unless given).
  virtual Status fail(const std::string& rule, ErrorCode code = ErrorCode::GRAPH_EXECUTION_FAILED) const = 0;
};

using KernelFn = Status (*)(KernelContext&);
struct KernelRecord {
  std::size_t op;  // the op record: ops::<Op>::kIndex (its position in all_op_specs())
  KernelFn fn;
};

// Group tables (one file each, under src/engines/reference/).
std::span<const KernelRecord> pointwise_kernels();
std::span<const KernelRecord> matmul_kernels();
std::span<const KernelRecord> tensor_op_kernels();
std::span<const KernelRecord> norm_kernels();
std::span<const KernelRecord> conv_kernels();
std::span<const KernelRecord> sdpa_kernels();
std::span<const KernelRecord> linear_attention_kernels();

// The kernel of an op record (nullptr if it has none). Two kernels for one record
// throw std::logic_error on first use.
KernelFn find_kernel(const OpSpec& op);
// By name, for callers holding an op name (nullptr for an unknown op).
KernelFn find_kernel(std::string_view op);

}  // namespace opgraph::reference
