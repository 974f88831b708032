#pragma once
// JsonGateway: the JSON/HTTP view of the public gRPC API (for the web UI, curl and scripts).
// Every unary method of the client services (ClusterService, PoolService, JobService,
// TaskService, HostService, AccessService) is reachable as
//
//   POST /api/v1/<Service>/<Method>          body: the request in the proto3 JSON mapping
//   GET  /api/v1/<Service>/<Method>?f=v&...  only for reads (Get*, List*, Query*): each query
//                                            parameter is a request field; repeat it for a
//                                            repeated field; `labels=k=v` for a map entry
//   GET  /api/v1/JobService/Watch?job_id=N   the event stream, one JSON object per line
//   GET  /api/v1/JobService/WatchEndpoints?job_id=N   a service's endpoints, a line per change
//
// e.g. `curl -H "Authorization: Bearer $TOKEN" http://HOST:PORT/api/v1/JobService/GetJob?job_id=1`.
// The call goes through the real gRPC server over an in-process channel, so authentication
// (the Authorization header is passed on), validation and errors are exactly the gRPC API's.
// Answers are JSON with field names as in the .proto files and defaults included; errors are
// {"code": "NOT_FOUND", "message": "..."} with the matching HTTP status. A unary answer's stamp
// (common/answer_stamp.h) comes as the headers X-Paceline-Served-By, X-Paceline-Revision and
// X-Paceline-Staleness-Ms; a request's X-Paceline-Min-Revision header asks for at least that
// revision (read-your-writes on a standby).
//
// Thread-safety: handlers run on the HTTP server's threads; the channel is thread-safe.

#include <map>
#include <memory>
#include <string>

#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "http/http_server.h"

namespace paceline::api {

inline constexpr char kMinRevisionHeader[] = "X-Paceline-Min-Revision";

void AddJsonApiRoutes(http::HttpServer& server, std::shared_ptr<grpc::Channel> channel);

// --- pieces, exposed for tests ---

// The method `service`/`method` of the public client API, or NOT_FOUND naming what exists.
absl::StatusOr<const google::protobuf::MethodDescriptor*> FindApiMethod(const std::string& service,
                                                                        const std::string& method);
// Whether GET may call it (a read).
bool IsReadMethod(const google::protobuf::MethodDescriptor& method);
// Builds the JSON request for `type` from query parameters (a multimap: repeated keys).
// INVALID_ARGUMENT names an unknown parameter and the fields that exist.
absl::StatusOr<std::string> QueryToJson(const google::protobuf::Descriptor& type,
                                        const std::multimap<std::string, std::string>& params);
// The HTTP status for a gRPC code (as grpc-gateway maps them).
int HttpStatusOf(grpc::StatusCode code);
// {"code": "...", "message": "..."}.
std::string ErrorJson(const grpc::Status& status);

}  // namespace paceline::api
