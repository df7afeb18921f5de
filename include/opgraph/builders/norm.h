// opgraph/builders/norm.h — builders of the norm op group (records in src/ir/ops/norm.cpp).
#pragma once

#include "opgraph/builders/node_sink.h"

namespace opgraph {

class NormBuilders : public virtual NodeSink {
 public:
};

}  // namespace opgraph
