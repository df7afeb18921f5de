// exec/execution_context.cpp — resolving handle → stream once per execute.
#include "opgraph/execution_context.h"

namespace opgraph {

Result<ExecutionContext> ExecutionContext::make(const Handle* handle, Workspace workspace) {
  if (workspace.bytes < 0)
    return Status(ErrorCode::INVALID_VALUE, "workspace size must be >= 0 bytes, got " + std::to_string(workspace.bytes));
  if (workspace.bytes > 0 && workspace.data == nullptr)
    return Status(ErrorCode::INVALID_VALUE,
                  "workspace of " + std::to_string(workspace.bytes) + " bytes has a null pointer");
  ExecutionContext ctx;
  ctx.handle = handle;
  ctx.workspace = workspace;
  if (handle) {
    Result<void*> s = handle->stream();
    if (s.is_bad())
      return Status(ErrorCode::HANDLE_ERROR,
                    "the supplied handle's stream cannot be read (no fallback to another stream): " +
                        s.status().message());
    ctx.stream = s.value();
    ctx.device = handle->device();
  }
  return ctx;
}

}  // namespace opgraph
