#pragma once
// The gRPC side of AccessControl (access_control.h): an interceptor on every call of the
// master's gRPC server. When a call's metadata arrives it tells AccessControl the method, the
// bearer token, the client's address and the call's request id (the client's `x-request-id`
// when it is a sane one, otherwise a new one; answered in the `paceline-request-id` trailer);
// when the status is sent, it lets AccessControl audit the call or replace the status.
//
// A call that comes through the JSON gateway's in-process channel carries the HTTP client's
// address in `x-forwarded-for`, which is believed only on that channel.
//
// Thread-safety: the factory is thread-safe; an interceptor belongs to one call.

#include <memory>

#include <grpcpp/support/server_interceptor.h>

#include "api/access_control.h"

namespace paceline::api {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewAccessInterceptorFactory(
    AccessControl* access);

// Whether `id` may be used as a request id: 1 to 64 of [A-Za-z0-9._-].
bool IsSaneRequestId(absl::string_view id);

}  // namespace paceline::api
