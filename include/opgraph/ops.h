// opgraph/ops.h — GENERATED from the op registry (src/ir/ops/*) by
// src/ir/codegen/gen_ops_header.cpp. Do not edit: change the op's record, then
//   cmake --build build --target gen_ops_header && build/src/gen_ops_header --write include/opgraph/ops.h
// The test ops_header_generated fails when this file is not what the generator writes.
//
// Per op (registry order): a struct with kIndex (its position in all_op_specs()),
// kName, the port enums In / Out (record positions; Node::input / output /
// inputs_of take them), the enum attribute domains it uses and one accessor per
// attribute: the value as set, else the record's default (std::optional when
// the record has no default). Then the shared forms: ops::in / ops::out port
// names and ops::attr accessors. Support code: opgraph/op_typed.h.
//
// The declarations are in parts, included here: ops/enums.h (the enum
// attribute domains), one part per op group (ops/<group>.h, registry order)
// and ops/shared.h (the shared port names and attribute accessors).
#pragma once

#include "opgraph/ops/enums.h"
#include "opgraph/ops/pointwise.h"
#include "opgraph/ops/matmul.h"
#include "opgraph/ops/tensor_ops.h"
#include "opgraph/ops/norm.h"
#include "opgraph/ops/conv.h"
#include "opgraph/ops/sdpa.h"
#include "opgraph/ops/linear_attention.h"
#include "opgraph/ops/shared.h"
