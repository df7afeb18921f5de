// opgraph/status.h — errors are values at the C++ boundary.
//
// Every fallible call returns a [[nodiscard]] Status (or Result<T>) carrying an
// ErrorCode and one sentence that names what the caller got wrong: the op, the
// port, the tensor, the expected and actual values, and the rule.
//
// The one exception is mutation of a frozen graph (a programming error, like
// writing through a const pointer): fluent setters cannot return a Status
// without breaking chaining, so they throw FrozenError. See docs/architecture.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace opgraph {

// Codes mirror cudnn-frontend's error_code_t where the meaning matches, so the
// Python binding maps them to the exceptions users already catch.
enum class ErrorCode : std::uint8_t {
  OK = 0,
  ATTRIBUTE_NOT_SET,          // a required attribute or input port is unset
  SHAPE_DEDUCTION_FAILED,     // shapes cannot be inferred from what was declared
  INVALID_TENSOR_NAME,
  INVALID_VARIANT_PACK,       // a caller buffer is missing, too small or misdescribed
  GRAPH_NOT_SUPPORTED,        // invalid graph at validate(), or an engine's decline
  GRAPH_EXECUTION_PLAN_CREATION_FAILED,
  GRAPH_EXECUTION_FAILED,
  HEURISTIC_QUERY_FAILED,
  UNSUPPORTED_GRAPH_FORMAT,   // malformed or unknown serialized graph
  CUDA_API_FAILED,
  CUDNN_BACKEND_API_FAILED,
  INVALID_CUDA_DEVICE,
  HANDLE_ERROR,
  INVALID_VALUE,              // a caller argument is out of its domain
  NVRTC_COMPILATION_FAILED,
  GRAPH_FROZEN,               // mutation after planning froze the graph
  IO_ERROR,                   // file system
  INTERNAL_ERROR,             // a bug in opgraph
};

std::string_view to_string(ErrorCode code) noexcept;

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }

  bool is_good() const noexcept { return code_ == ErrorCode::OK; }
  bool is_bad() const noexcept { return code_ != ErrorCode::OK; }
  explicit operator bool() const noexcept { return is_good(); }
  ErrorCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  // "GRAPH_NOT_SUPPORTED: <message>"
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::OK;
  std::string message_;
};

inline Status make_error(ErrorCode code, std::string message) { return {code, std::move(message)}; }

// A value or the Status that explains why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                       // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {                 // NOLINT: implicit by design
    if (std::get<Status>(v_).is_good()) v_ = Status(ErrorCode::INTERNAL_ERROR, "Result built from an OK status");
  }
  bool is_good() const noexcept { return std::holds_alternative<T>(v_); }
  bool is_bad() const noexcept { return !is_good(); }
  explicit operator bool() const noexcept { return is_good(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  Status status() const { return is_good() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

// Thrown only by mutators of a frozen graph, tensor or node.
class FrozenError : public std::logic_error {
 public:
  explicit FrozenError(const std::string& what) : std::logic_error(what) {}
  ErrorCode code() const noexcept { return ErrorCode::GRAPH_FROZEN; }
};

}  // namespace opgraph

// Propagate a bad Status (or the status of a bad Result) to the caller.
#define OPGRAPH_CHECK(expr)                      \
  do {                                           \
    ::opgraph::Status opgraph_status_ = (expr);  \
    if (opgraph_status_.is_bad()) return opgraph_status_; \
  } while (0)

#define OPGRAPH_RETURN_IF(cond, code, msg)              \
  do {                                                  \
    if (cond) return ::opgraph::Status((code), (msg));  \
  } while (0)
