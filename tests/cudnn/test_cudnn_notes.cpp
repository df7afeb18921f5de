// tests/cudnn/test_cudnn_notes.cpp — our NumericalNote / BehaviorNote values
// are cuDNN's (cudnn_graph.h), so heuristics.cpp's read_notes maps by value.
#include <gtest/gtest.h>

#include <cudnn_graph.h>

#include "opgraph/plan_notes.h"

namespace opgraph {
namespace {

static_assert(static_cast<int>(NumericalNote::TENSOR_CORE) == CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
static_assert(static_cast<int>(NumericalNote::DOWN_CONVERT_INPUTS) == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS);
static_assert(static_cast<int>(NumericalNote::REDUCED_PRECISION_REDUCTION) == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION);
static_assert(static_cast<int>(NumericalNote::FFT) == CUDNN_NUMERICAL_NOTE_FFT);
static_assert(static_cast<int>(NumericalNote::NONDETERMINISTIC) == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC);
static_assert(static_cast<int>(NumericalNote::WINOGRAD) == CUDNN_NUMERICAL_NOTE_WINOGRAD);
static_assert(static_cast<int>(NumericalNote::WINOGRAD_TILE_4x4) == CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4);
static_assert(static_cast<int>(NumericalNote::WINOGRAD_TILE_6x6) == CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6);
static_assert(static_cast<int>(NumericalNote::WINOGRAD_TILE_13x13) == CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13);
static_assert(static_cast<int>(NumericalNote::STRICT_NAN_PROP) == CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP);
static_assert(static_cast<int>(BehaviorNote::RUNTIME_COMPILATION) == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION);
static_assert(static_cast<int>(BehaviorNote::REQUIRES_FILTER_INT8x32_REORDER) == CUDNN_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8x32_REORDER);
static_assert(static_cast<int>(BehaviorNote::REQUIRES_BIAS_INT8x32_REORDER) == CUDNN_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8x32_REORDER);
static_assert(static_cast<int>(BehaviorNote::SUPPORTS_CUDA_GRAPH_NATIVE_API) == CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API);
static_assert(static_cast<int>(BehaviorNote::CUBLASLT_DEPENDENCY) == CUDNN_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY);

TEST(CudnnNotes, EveryBackendNoteMapsAndNamesMatchCudnnsWithoutThePrefix) {
  EXPECT_EQ(kNumericalNoteCount, CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
  EXPECT_EQ(kBehaviorNoteCount, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT);
  for (int v = 0; v < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++v) EXPECT_TRUE(numerical_note_from_backend(v).has_value()) << v;
  for (int v = 0; v < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; ++v) EXPECT_TRUE(behavior_note_from_backend(v).has_value()) << v;
  EXPECT_EQ(to_string(*numerical_note_from_backend(CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP)), "STRICT_NAN_PROP");
  EXPECT_EQ(to_string(*behavior_note_from_backend(CUDNN_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY)), "CUBLASLT_DEPENDENCY");
}

}  // namespace
}  // namespace opgraph
