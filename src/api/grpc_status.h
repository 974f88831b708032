#pragma once
// Conversions between absl::Status and grpc::Status. The canonical codes are the same numbers
// in both (INVALID_ARGUMENT, NOT_FOUND, ABORTED, UNAVAILABLE, ...), so the mapping is 1:1.
//
// Thread-safety: pure functions.

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace paceline::api {

inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace paceline::api
