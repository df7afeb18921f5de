// engines/reference/executor.cpp — runs a validated graph on host buffers (contract in executor.h).
//
// Steps: (1) refuse what cannot run before touching anything (prepare(): an
// unvalidated graph, an op without a kernel; run(): a missing buffer); (2) read every graph input (and every
// ragged offset tensor) into a float64 Array through its dims/strides/dtype,
// pass-by-value tensors from their ScalarValue (an F8_128x4 tensor's elements
// through the 128x4 tile layout of ir/scale_layout.h, so kernels see the logical
// scales; see executor.h); (3) call each node's kernel in
// node order (validate() ordered producers first), rounding each output to its
// declared dtype, virtual or not; (4) only then write the non-virtual outputs.
// Declared geometry is checked arithmetic before it becomes an allocation or an
// offset: prepare() refuses a tensor whose element count or strided span does not
// fit int64 (each element offset is then at most span - 1), and an allocation that
// fails (std::bad_alloc, or Array's std::length_error) is an error, never a throw
// out of run().
#include "engines/reference/executor.h"

#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "engines/reference/convert.h"
#include "ir/scale_layout.h"

namespace opgraph::reference {
namespace {

using Values = std::unordered_map<const Tensor*, Array>;

std::string tensor_where(const Tensor& t) {
  return "tensor '" + t.get_name() + "' (uid " + std::to_string(t.get_uid()) + ")";
}
std::string node_where(const Node& n) { return "op '" + std::string(n.op()) + "' (node '" + n.name() + "')"; }

std::vector<std::int64_t> strides_of(const Tensor& t) {
  return t.get_stride().size() == t.get_dim().size() ? t.get_stride() : Tensor::packed_strides(t.get_dim());
}

// Why the reference cannot hold `t` or read and write it through its declaration
// ("" when it can): its element count must fit int64 (the Array holding it), and
// for a tensor with a buffer (not virtual, not pass-by-value) its strided span,
// 1 + sum((dim - 1) * stride), too, with non-negative strides, so that every
// element offset computed from an index (ElementOffsets) is in [0, span).
std::string geometry_problem(const Tensor& t) {
  const auto& d = t.get_dim();
  if (!checked_numel(d)) return "its element count overflows int64 (or an extent is negative)";
  if (t.get_is_virtual() || t.get_is_pass_by_value()) return "";
  if (t.get_stride().size() != d.size() && !t.get_stride().empty())
    return "it declares " + std::to_string(t.get_stride().size()) + " strides for " + std::to_string(d.size()) + " dims";
  const auto st = strides_of(t);
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d[i] == 0) return "";  // empty: nothing is read or written
  std::int64_t last = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    std::int64_t step = 0;
    if (st[i] < 0) return "stride " + std::to_string(i) + " is negative (" + std::to_string(st[i]) + ")";
    if (__builtin_mul_overflow(d[i] - 1, st[i], &step) || __builtin_add_overflow(last, step, &last) ||
        last == INT64_MAX)
      return "its strided span (1 + sum((dim - 1) * stride)) overflows int64";
  }
  return "";
}

// Where each logical index of a tensor lives in its buffer (elements): through the
// strides, or for an F8_128x4 tensor through the 128x4 tiles of its last two axes.
class ElementOffsets {
 public:
  explicit ElementOffsets(const Tensor& t) : stride_(strides_of(t)) {
    if (t.get_reordering_type() == TensorReordering::F8_128x4) {
      std::string why;
      swizzle_ = swizzle_128x4_of(t.get_dim(), stride_, &why);
      if (!swizzle_) throw std::logic_error(tensor_where(t) + ": " + why);  // prepare() refused it already
    }
  }
  std::int64_t operator()(std::span<const std::int64_t> idx) const {
    if (swizzle_) return swizzle_128x4_element(*swizzle_, stride_, idx.data());
    std::int64_t off = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * stride_[k];
    return off;
  }

 private:
  std::vector<std::int64_t> stride_;
  std::optional<Swizzle128x4> swizzle_;
};

Array read_tensor(const Tensor& t, const void* data) {
  if (const auto& pbv = t.get_pass_by_value()) return Array(Dims{1}, round_to(pbv->data_type, pbv->as_double()));
  Array a(t.get_dim());
  const ElementOffsets at(t);
  std::int64_t i = 0;
  for_each_index(a.dims, [&](std::span<const std::int64_t> idx) {
    a[i++] = load_element(data, at(idx), t.get_data_type());
  });
  return a;
}

void write_tensor(const Tensor& t, const Array& a, void* data) {
  const ElementOffsets at(t);
  std::int64_t i = 0;
  for_each_index(a.dims, [&](std::span<const std::int64_t> idx) {
    store_element(data, at(idx), t.get_data_type(), a[i++]);
  });
}

class Context final : public KernelContext {
 public:
  Context(const Node& n, const Values& values) : node_(n), values_(values) {
    outs_.resize(n.outputs().size());
    for (std::size_t i = 0; i < n.outputs().size(); ++i)
      if (!n.outputs()[i].empty() && n.outputs()[i].front()) outs_[i] = Array(n.outputs()[i].front()->get_dim());
  }

  const Node& node() const override { return node_; }
  bool has(ops::PortRef port) const override { return node_.input(port) != nullptr; }
  const Array& in(ops::PortRef port) const override { return value_of(bound_input(port)); }
  std::vector<const Array*> ins(ops::PortRef port) const override {
    std::vector<const Array*> r;
    for (const auto& t : node_.inputs_of(port)) r.push_back(&value_of(*t));
    return r;
  }
  const Tensor& in_tensor(ops::PortRef port) const override { return bound_input(port); }
  const Array* ragged_offset(ops::PortRef port) const override {
    // A name (string or shared) may be either side's; a port enum says which.
    const bool typed = port.kind == ops::PortRef::Kind::TYPED;
    TensorPtr t = !typed || port.input ? node_.input(typed ? port : ops::PortRef(port.name)) : nullptr;
    if (!t && (!typed || !port.input)) t = node_.output(typed ? port : ops::PortRef(port.name));
    if (!t || !t->get_ragged_offset()) return nullptr;
    return &value_of(*t->get_ragged_offset());
  }
  bool wants(ops::PortRef port) const override { return node_.output(port) != nullptr; }
  Array& out(ops::PortRef port) override { return outs_[static_cast<std::size_t>(bound_output_index(port))]; }
  const Tensor& out_tensor(ops::PortRef port) const override {
    return *node_.outputs()[static_cast<std::size_t>(bound_output_index(port))].front();
  }
  Status fail(const std::string& rule, ErrorCode code) const override {
    return {code, node_where(node_) + ": " + rule};
  }

  std::vector<Array>& outputs() { return outs_; }

 private:
  const Tensor& bound_input(ops::PortRef port) const {
    TensorPtr t = node_.input(port);
    if (!t) throw std::logic_error("kernel read input port " + std::string(port.name) + ", which is not bound");
    return *t;
  }
  int bound_output_index(ops::PortRef port) const {
    ops::detail::check_port(node_, port, false);
    int i = port.kind == ops::PortRef::Kind::TYPED ? static_cast<int>(port.position) : node_.spec().output_index(port.name);
    if (i < 0 || node_.outputs()[static_cast<std::size_t>(i)].empty())
      throw std::logic_error("kernel used output port " + std::string(port.name) + ", which the node does not produce");
    return i;
  }
  const Array& value_of(const Tensor& t) const {
    auto it = values_.find(&t);
    if (it == values_.end()) throw std::logic_error("no value for " + tensor_where(t));
    return it->second;
  }

  const Node& node_;
  const Values& values_;
  std::vector<Array> outs_;
};

// run() past its buffer checks: reads, kernels, writes. May throw (an allocation).
Status run_checked(const OpGraph& g, const Prepared& p, std::span<void* const> input_data,
                   std::span<void* const> output_data) {
  const auto& inputs = p.inputs;
  const auto& outputs = p.outputs;
  const auto& kernels = p.kernels;
  // (2) Read inputs.
  Values values;
  for (std::size_t i = 0; i < inputs.size(); ++i) values.emplace(inputs[i], read_tensor(*inputs[i], input_data[i]));

  // (3) Run the nodes in order.
  for (std::size_t k = 0; k < g.nodes().size(); ++k) {
    const Node& n = *g.nodes()[k];
    Context ctx(n, values);
    Status s;
    try {
      s = kernels[k](ctx);
    } catch (const std::bad_alloc&) {
      return {ErrorCode::GRAPH_EXECUTION_FAILED, node_where(n) + ": a host allocation of the reference kernel failed"};
    } catch (const std::exception& e) {
      return {ErrorCode::INTERNAL_ERROR, node_where(n) + ": reference kernel threw: " + e.what()};
    }
    if (s.is_bad()) return s;
    for (std::size_t i = 0; i < n.outputs().size(); ++i) {
      if (n.outputs()[i].empty() || !n.outputs()[i].front()) continue;
      const Tensor& t = *n.outputs()[i].front();
      Array& a = ctx.outputs()[i];
      if (a.dims != t.get_dim() || a.numel() != t.element_count())
        return {ErrorCode::INTERNAL_ERROR,
                node_where(n) + ": reference kernel resized output " + tensor_where(t) + " away from its declared dims"};
      for (double& x : a.v) x = round_to(t.get_data_type(), x);
      values[&t] = std::move(a);
    }
  }

  // (4) Every node succeeded: write the outputs.
  for (std::size_t i = 0; i < outputs.size(); ++i) write_tensor(*outputs[i], values.at(outputs[i]), output_data[i]);
  return Status::ok();
}

}  // namespace

Status execute(const OpGraph& g, const std::map<std::int64_t, HostBuffer>& buffers) {
  return execute(g, buffers, ExecuteOptions{});
}

Result<Prepared> prepare(const OpGraph& g, const ExecuteOptions& opts) {
  if (!g.is_validated())
    return Status(ErrorCode::INVALID_VALUE, "reference::execute: graph '" + g.context().name + "' must be validated first");

  // (1) Kernels, graph inputs and outputs; refuse before running anything.
  Prepared p;
  std::unordered_set<const Tensor*> produced;
  for (const auto& n : g.nodes()) {
    KernelFn fn = opts.find_kernel ? opts.find_kernel(n->op()) : find_kernel(n->spec());
    if (!fn)
      return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                    node_where(*n) + ": the reference engine has no kernel for op '" + std::string(n->op()) + "'");
    p.kernels.push_back(fn);
    for (const auto& port : n->outputs())
      for (const auto& t : port)
        if (t) produced.insert(t.get());
  }
  for (const auto& t : g.tensors()) {
    std::string why = geometry_problem(*t);
    if (!why.empty()) return Status(ErrorCode::INVALID_VALUE, "reference::execute: " + tensor_where(*t) + ": " + why);
    if (t->get_reordering_type() == TensorReordering::F8_128x4 && !swizzle_128x4_of(t->get_dim(), strides_of(*t), &why))
      return Status(ErrorCode::GRAPH_NOT_SUPPORTED, "reference::execute: " + tensor_where(*t) + ": " + why);
  }
  std::unordered_set<const Tensor*> seen;
  auto add_input = [&](const Tensor* t) {
    if (t && !produced.count(t) && seen.insert(t).second) p.inputs.push_back(t);
  };
  for (const auto& n : g.nodes()) {
    for (const auto& port : n->inputs())
      for (const auto& t : port) {
        add_input(t.get());
        if (t) add_input(t->get_ragged_offset().get());
      }
    for (const auto& port : n->outputs())
      for (const auto& t : port) {
        if (!t) continue;
        add_input(t->get_ragged_offset().get());
        if (!t->get_is_virtual()) p.outputs.push_back(t.get());
      }
  }
  return p;
}

Status execute(const OpGraph& g, const std::map<std::int64_t, HostBuffer>& buffers, const ExecuteOptions& opts) {
  auto p = prepare(g, opts);
  if (p.is_bad()) return p.status();
  auto data_of = [&](const std::vector<const Tensor*>& ts) {
    std::vector<void*> d;
    for (const Tensor* t : ts) {
      auto it = buffers.find(t->get_uid());
      d.push_back(it == buffers.end() ? nullptr : it->second.data);
    }
    return d;
  };
  return run(g, p.value(), data_of(p.value().inputs), data_of(p.value().outputs));
}

Status run(const OpGraph& g, const Prepared& p, std::span<void* const> input_data,
           std::span<void* const> output_data) {
  const auto& inputs = p.inputs;
  const auto& outputs = p.outputs;
  const auto& kernels = p.kernels;
  if (input_data.size() != inputs.size() || output_data.size() != outputs.size() || kernels.size() != g.nodes().size())
    return {ErrorCode::INTERNAL_ERROR, "reference::run: buffers or kernels do not match the prepared graph"};
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i]->get_is_pass_by_value() && !input_data[i])
      return {ErrorCode::INVALID_VARIANT_PACK,
              "reference::execute: no host buffer for graph input " + tensor_where(*inputs[i])};
  for (std::size_t i = 0; i < outputs.size(); ++i)
    if (!output_data[i])
      return {ErrorCode::INVALID_VARIANT_PACK,
              "reference::execute: no host buffer for graph output " + tensor_where(*outputs[i])};

  try {
    return run_checked(g, p, input_data, output_data);
  } catch (const std::bad_alloc&) {
    return {ErrorCode::GRAPH_EXECUTION_FAILED, "reference::execute: graph '" + g.context().name +
                                                   "': a host allocation for its values failed (out of memory)"};
  } catch (const std::exception& e) {
    return {ErrorCode::INTERNAL_ERROR, "reference::execute: graph '" + g.context().name + "': " + e.what()};
  }
}

}  // namespace opgraph::reference
