// opgraph/builders/pointwise.h — builders of the pointwise op group (records in src/ir/ops/pointwise.cpp).
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class PointwiseBuilders : public virtual NodeSink {
 public:
};

}  // namespace opgraph
