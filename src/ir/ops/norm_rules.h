// ir/ops/norm_rules.h — shape rules shared by the norm op group's records.
//
// The group's records live in norm.cpp (the table and builders); their infer()
// hooks live in norm_layer.cpp (layer/rms/instance/ada-layer norms and rope) and
// norm_batch.cpp (genstats, bn_finalize, the batchnorm family). This header is
// the contract between those files.
#pragma once

#include <string_view>

#include "ir/infer_context.h"
#include "ir/ops/output_layout.h"

namespace opgraph::ops::norm {

// Which axes a norm normalizes over (see include/opgraph/builders/norm.h).
enum class NormKind { LAYER, RMS, ADA_LAYER, INSTANCE, BATCH };

// Checks X (floating, rank in the kind's range) and SCALE against it, and returns the
// stats dims (X's dims with every normalized axis collapsed to 1). `x_port` names the
// activation port (X). Errors: GRAPH_NOT_SUPPORTED naming SCALE/X and the rule.
Status scale_and_stats(InferContext& c, NormKind kind, Dims* stats);

// The port holds one floating element (EPSILON, MOMENTUM). Unbound optional ports pass.
Status check_scalar(InferContext& c, ops::PortRef port);
// EPSILON (when bound): check_scalar, and a pass-by-value epsilon is >= 0 (rule
// epsilon_range: negative, NaN and -inf are refused). A device-tensor epsilon's value
// is not known at validate() and is not checked.
Status check_epsilon(InferContext& c);
// The port (bound) is floating and has exactly `dims` (stats inputs, running stats).
Status check_dims(InferContext& c, ops::PortRef port, const Dims& dims, std::string_view what);
// A per-channel tensor of X: [1, C, 1, ...] of X's rank. Returns it in `dims`.
Dims channel_dims(const Dims& x);


// Conditional-output predicates.
bool is_training(const Node& n);
bool has_prev_running_stats(const Node& n);
bool has_dbias(const Node& n);

// infer() hooks.
Status infer_layernorm(InferContext& c);
Status infer_layernorm_backward(InferContext& c);
Status infer_adalayernorm(InferContext& c);
Status infer_adalayernorm_backward(InferContext& c);
Status infer_instancenorm(InferContext& c);
Status infer_instancenorm_backward(InferContext& c);
Status infer_rmsnorm(InferContext& c);
Status infer_rmsnorm_backward(InferContext& c);
Status infer_rope(InferContext& c);
Status infer_rope_backward(InferContext& c);
Status infer_genstats(InferContext& c);
Status infer_bn_finalize(InferContext& c);
Status infer_batchnorm(InferContext& c);
Status infer_batchnorm_inference(InferContext& c);
Status infer_batchnorm_backward(InferContext& c);
Status infer_dbn_weight(InferContext& c);

}  // namespace opgraph::ops::norm
