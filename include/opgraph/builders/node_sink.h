// opgraph/builders/node_sink.h — what every builder group calls to add a node.
//
// The op builders are grouped into mixins (one header and one source per group),
// all deriving from NodeSink; OpGraph implements add_node. A builder is a
// one-liner: it names the op, binds tensors to cudnn-frontend's port names, and
// returns the outputs the spec declares.
#pragma once

#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

#include "opgraph/attributes.h"
#include "opgraph/tensor.h"

namespace opgraph {

// One input binding: a port name and the tensor(s) bound to it. A null tensor
// leaves an optional port unbound.
struct PortArg {
  std::string_view port;
  std::vector<TensorPtr> tensors;
  PortArg(std::string_view p, TensorPtr t) : port(p) { if (t) tensors.push_back(std::move(t)); }
  PortArg(std::string_view p, std::vector<TensorPtr> ts) : port(p), tensors(std::move(ts)) {}
};

class NodeSink {
 public:
  virtual ~NodeSink() = default;

 protected:
  // Adds a node of `op` and returns its outputs in the spec's order, nullptr for
  // a conditional output the node does not produce. Outputs are virtual until
  // the caller marks them with set_output(true). Throws FrozenError when frozen;
  // everything else (unknown attribute, missing port, bad shape) is reported by
  // validate(), as cudnn-frontend does.
  virtual std::vector<TensorPtr> add_node(std::string_view op, std::vector<PortArg> inputs,
                                          const Attributes& attrs) = 0;
  // Convenience for single-output ops.
  TensorPtr add_node1(std::string_view op, std::vector<PortArg> inputs, const Attributes& attrs) {
    auto outs = add_node(op, std::move(inputs), attrs);
    return outs.empty() ? nullptr : outs.front();
  }
};

}  // namespace opgraph
