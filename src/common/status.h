#pragma once
// Status helpers: the one error model of Paceline is absl::Status / absl::StatusOr<T>.
//
// RETURN_IF_ERROR(expr)        returns the status of `expr` when it is not OK.
// ASSIGN_OR_RETURN(lhs, expr)  evaluates a StatusOr expression; returns its status on error,
//                              otherwise assigns (moves) its value into `lhs`.
// WithContext(status, prefix)  the same code with "prefix: message".
//
// Canonical codes map one-to-one onto gRPC codes (see api/ for the conversion).

#include <utility>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace paceline {

inline absl::Status WithContext(const absl::Status& s, absl::string_view prefix) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(prefix, ": ", s.message()));
}

}  // namespace paceline

#define PACELINE_STATUS_CONCAT_INNER(a, b) a##b
#define PACELINE_STATUS_CONCAT(a, b) PACELINE_STATUS_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                            \
  do {                                                   \
    ::absl::Status _paceline_status = (expr);            \
    if (!_paceline_status.ok()) return _paceline_status; \
  } while (0)

#define PACELINE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(*tmp)

#define ASSIGN_OR_RETURN(lhs, expr) \
  PACELINE_ASSIGN_OR_RETURN_IMPL(PACELINE_STATUS_CONCAT(_paceline_statusor_, __LINE__), lhs, expr)
