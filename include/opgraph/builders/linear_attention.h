// opgraph/builders/linear_attention.h — builders of the linear_attention op group (records in src/ir/ops/linear_attention.cpp).
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class LinearAttentionBuilders : public virtual NodeSink {
 public:
};

}  // namespace opgraph
