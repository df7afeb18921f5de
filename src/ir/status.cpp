// ir/status.cpp — names of error codes.
#include "opgraph/status.h"

namespace opgraph {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::OK: return "OK";
    case ErrorCode::ATTRIBUTE_NOT_SET: return "ATTRIBUTE_NOT_SET";
    case ErrorCode::SHAPE_DEDUCTION_FAILED: return "SHAPE_DEDUCTION_FAILED";
    case ErrorCode::INVALID_TENSOR_NAME: return "INVALID_TENSOR_NAME";
    case ErrorCode::INVALID_VARIANT_PACK: return "INVALID_VARIANT_PACK";
    case ErrorCode::GRAPH_NOT_SUPPORTED: return "GRAPH_NOT_SUPPORTED";
    case ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED: return "GRAPH_EXECUTION_PLAN_CREATION_FAILED";
    case ErrorCode::GRAPH_EXECUTION_FAILED: return "GRAPH_EXECUTION_FAILED";
    case ErrorCode::HEURISTIC_QUERY_FAILED: return "HEURISTIC_QUERY_FAILED";
    case ErrorCode::UNSUPPORTED_GRAPH_FORMAT: return "UNSUPPORTED_GRAPH_FORMAT";
    case ErrorCode::CUDA_API_FAILED: return "CUDA_API_FAILED";
    case ErrorCode::CUDNN_BACKEND_API_FAILED: return "CUDNN_BACKEND_API_FAILED";
    case ErrorCode::INVALID_CUDA_DEVICE: return "INVALID_CUDA_DEVICE";
    case ErrorCode::HANDLE_ERROR: return "HANDLE_ERROR";
    case ErrorCode::INVALID_VALUE: return "INVALID_VALUE";
    case ErrorCode::NVRTC_COMPILATION_FAILED: return "NVRTC_COMPILATION_FAILED";
    case ErrorCode::GRAPH_FROZEN: return "GRAPH_FROZEN";
    case ErrorCode::IO_ERROR: return "IO_ERROR";
    case ErrorCode::INTERNAL_ERROR: return "INTERNAL_ERROR";
  }
  return "UNKNOWN";
}

std::string Status::to_string() const {
  std::string s(opgraph::to_string(code_));
  if (!message_.empty()) s += ": " + message_;
  return s;
}

}  // namespace opgraph
