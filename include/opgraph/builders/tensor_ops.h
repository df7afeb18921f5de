// opgraph/builders/tensor_ops.h — builders of the tensor_ops op group (records in src/ir/ops/tensor_ops.cpp).
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class TensorOpBuilders : public virtual NodeSink {
 public:
};

}  // namespace opgraph
