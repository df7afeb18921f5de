// opgraph/builders/sdpa.h — builders of the sdpa op group (records in src/ir/ops/sdpa.cpp).
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class SdpaBuilders : public virtual NodeSink {
 public:
};

}  // namespace opgraph
