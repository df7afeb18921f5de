// opgraph/builders/conv.h — builders of the conv op group (records in src/ir/ops/conv.cpp).
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class ConvBuilders : public virtual NodeSink {
 public:
};

}  // namespace opgraph
