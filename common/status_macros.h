// RETURN_IF_ERROR and ASSIGN_OR_RETURN for absl::Status / absl::StatusOr.
// Debian's Abseil does not ship status_macros.h, so these are ours.
// Header-only; thread-safe as far as the expressions they wrap are.
#ifndef INSPECTOR_COMMON_STATUS_MACROS_H_
#define INSPECTOR_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) and returns it from the enclosing
// function if it is not OK.
#define RETURN_IF_ERROR(expr)                                   \
  do {                                                          \
    ::absl::Status inspector_status_ = (expr);                  \
    if (!inspector_status_.ok()) return inspector_status_;      \
  } while (0)

#define INSPECTOR_CONCAT_INNER_(a, b) a##b
#define INSPECTOR_CONCAT_(a, b) INSPECTOR_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status,
// otherwise moves the value into `lhs` (which may be a declaration).
#define ASSIGN_OR_RETURN(lhs, rexpr)                                      \
  INSPECTOR_ASSIGN_OR_RETURN_IMPL_(                                       \
      INSPECTOR_CONCAT_(inspector_statusor_, __LINE__), lhs, rexpr)

#define INSPECTOR_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                     \
  if (!statusor.ok()) return std::move(statusor).status();     \
  lhs = std::move(statusor).value()

#endif  // INSPECTOR_COMMON_STATUS_MACROS_H_
