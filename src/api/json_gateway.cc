#include "api/json_gateway.h"

#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "common/answer_stamp.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::api {
namespace {

namespace pb = google::protobuf;

constexpr const char* kPackage = "paceline.v1.";
constexpr const char* kServices[] = {"ClusterService", "PoolService", "JobService",
                                     "TaskService",    "HostService", "AccessService",
                                     "SecretService"};
// HTTP threads watches may hold at once (a web UI tab holds one): the rest of the server's
// threads stay free for the API, the UI's files and /metrics.
constexpr int kMaxHttpWatches = http::kHttpThreads - 16;

pb::util::JsonPrintOptions PrintOptions() {
  pb::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  return o;
}

void Answer(http::HttpResponse& res, const grpc::Status& status, const std::string& json) {
  res.status = HttpStatusOf(status.error_code());
  res.set_content(status.ok() ? json : ErrorJson(status), "application/json");
}

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

// What the gRPC call carries of the HTTP request: the token, the client's address (believed on
// the in-process channel only, access_interceptor.h) and its request id.
void PassOn(const http::HttpRequest& req, grpc::ClientContext& ctx) {
  if (std::string a = req.header("Authorization"); !a.empty()) ctx.AddMetadata("authorization", a);
  if (!req.peer.empty()) ctx.AddMetadata("x-forwarded-for", req.peer);
  if (std::string id = req.header("X-Request-Id"); !id.empty()) ctx.AddMetadata("x-request-id", id);
  if (std::string rev = req.header(kMinRevisionHeader); !rev.empty()) {
    ctx.AddMetadata(kMinRevisionKey, rev);
  }
}

// The answer's stamp (common/answer_stamp.h) as X-Paceline-* headers.
void StampHeaders(const grpc::ClientContext& ctx, http::HttpResponse& res) {
  static constexpr std::pair<const char*, const char*> kHeaders[] = {
      {kServedByKey, "X-Paceline-Served-By"},
      {kRevisionKey, "X-Paceline-Revision"},
      {kStalenessKey, "X-Paceline-Staleness-Ms"}};
  const auto& trailers = ctx.GetServerTrailingMetadata();
  for (const auto& [key, header] : kHeaders) {
    if (auto it = trailers.find(key); it != trailers.end()) {
      res.set_header(header, std::string(it->second.data(), it->second.size()));
    }
  }
}

// Calls `method` with the request in JSON through the in-process channel.
grpc::Status CallUnary(grpc::GenericStub& stub, const pb::MethodDescriptor& method,
                       const std::string& request_json, const http::HttpRequest& http,
                       http::HttpResponse& res, std::string* response_json) {
  pb::DynamicMessageFactory factory;
  std::unique_ptr<pb::Message> request(factory.GetPrototype(method.input_type())->New());
  pb::util::JsonParseOptions parse;
  pb::util::Status parsed = pb::util::JsonStringToMessage(
      request_json.empty() ? "{}" : request_json, request.get(), parse);
  if (!parsed.ok()) {
    return Invalid(absl::StrCat("request body is not a ", method.input_type()->full_name(),
                                " in JSON: ", std::string(parsed.message())));
  }
  std::string bytes = request->SerializeAsString();
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request_buf(&slice, 1);
  grpc::ByteBuffer response_buf;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  PassOn(http, ctx);
  absl::Notification done;
  grpc::Status status;
  stub.UnaryCall(&ctx, absl::StrCat("/", method.service()->full_name(), "/", method.name()),
                 grpc::StubOptions(), &request_buf, &response_buf, [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  StampHeaders(ctx, res);
  if (!status.ok()) return status;
  std::vector<grpc::Slice> slices;
  if (!response_buf.Dump(&slices).ok()) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "unreadable response");
  }
  std::string response_bytes;
  for (const grpc::Slice& s : slices) {
    response_bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  std::unique_ptr<pb::Message> response(factory.GetPrototype(method.output_type())->New());
  if (!response->ParseFromString(response_bytes)) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "unparsable response");
  }
  (void)pb::util::MessageToJsonString(*response, response_json, PrintOptions());
  return grpc::Status::OK;
}

// GET /api/v1/JobService/Watch and WatchEndpoints: streams the messages as lines of JSON until
// the stream ends or the client leaves. `open` starts the gRPC stream.
template <typename Req, typename Event>
void ServeStream(
    const pb::MethodDescriptor& method, const http::HttpRequest& req, http::HttpResponse& res,
    const std::shared_ptr<std::atomic<int>>& watches,
    std::function<std::unique_ptr<grpc::ClientReader<Event>>(grpc::ClientContext*, const Req&)>
        open) {
  absl::StatusOr<std::string> json = QueryToJson(*method.input_type(), req.params);
  if (!json.ok()) return Answer(res, Invalid(std::string(json.status().message())), "");
  Req request;
  if (!pb::util::JsonStringToMessage(*json, &request).ok()) {
    return Answer(res, Invalid("job_id: expected a job id"), "");
  }
  if (watches->fetch_add(1) >= kMaxHttpWatches) {
    watches->fetch_sub(1);
    return Answer(res,
                  grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                               absl::StrCat("at most ", kMaxHttpWatches,
                                            " watches over HTTP at once; use the gRPC API")),
                  "");
  }
  // Holds the watch's slot until the last owner lets go: the stream's body, or, when the
  // client left before the stream began, the response that never ran it.
  struct Stream {
    explicit Stream(std::shared_ptr<std::atomic<int>> w) : watches(std::move(w)) {}
    ~Stream() {
      ctx.TryCancel();
      if (reader != nullptr && !finished) (void)reader->Finish();
      watches->fetch_sub(1);
    }
    std::shared_ptr<std::atomic<int>> watches;
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReader<Event>> reader;
    bool finished = false;
  };
  auto stream = std::make_shared<Stream>(watches);
  PassOn(req, stream->ctx);
  stream->reader = open(&stream->ctx, request);
  // The first message (Watch's `started`, the first list of endpoints, or the refusal) decides
  // the HTTP status.
  Event first;
  if (!stream->reader->Read(&first)) {
    stream->finished = true;
    return Answer(res, stream->reader->Finish(), "");
  }
  auto pending = std::make_shared<Event>(std::move(first));
  res.content_type = "application/x-ndjson";
  // Runs on an HTTP worker until the stream ends or the client leaves (which cancels it).
  res.stream = [stream, pending](http::HttpStreamSink& sink) {
    sink.OnClose([stream] { stream->ctx.TryCancel(); });
    auto line_of = [](const Event& e) {
      std::string line;
      (void)pb::util::MessageToJsonString(e, &line, PrintOptions());
      return line + "\n";
    };
    bool open = sink.Write(line_of(*pending));
    Event e;
    while (open && stream->reader->Read(&e)) open = sink.Write(line_of(e));
    if (!open) stream->ctx.TryCancel();
    grpc::Status end = stream->reader->Finish();
    stream->finished = true;
    // The master ended the stream: say why when it was not a clean end.
    if (open && !end.ok()) sink.Write(ErrorJson(end) + "\n");
  };
}

void ServeWatch(const pb::MethodDescriptor& method, const http::HttpRequest& req,
                http::HttpResponse& res, const std::shared_ptr<grpc::Channel>& channel,
                const std::shared_ptr<std::atomic<int>>& watches) {
  std::shared_ptr<v1::JobService::Stub> stub = v1::JobService::NewStub(channel);
  if (method.name() == "WatchEndpoints") {
    return ServeStream<v1::WatchEndpointsRequest, v1::JobEndpoints>(
        method, req, res, watches,
        [stub](grpc::ClientContext* ctx, const v1::WatchEndpointsRequest& r) {
          return stub->WatchEndpoints(ctx, r);
        });
  }
  return ServeStream<v1::WatchRequest, v1::WatchEvent>(
      method, req, res, watches,
      [stub](grpc::ClientContext* ctx, const v1::WatchRequest& r) { return stub->Watch(ctx, r); });
}

}  // namespace

absl::StatusOr<const pb::MethodDescriptor*> FindApiMethod(const std::string& service,
                                                          const std::string& method) {
  bool known = false;
  for (const char* s : kServices) known = known || service == s;
  const pb::ServiceDescriptor* sd =
      known ? pb::DescriptorPool::generated_pool()->FindServiceByName(kPackage + service) : nullptr;
  if (sd == nullptr) {
    return absl::NotFoundError(absl::StrCat("no service '", service, "'; expected one of ",
                                            absl::StrJoin(kServices, ", ")));
  }
  const pb::MethodDescriptor* md = sd->FindMethodByName(method);
  if (md == nullptr || md->client_streaming()) {
    std::vector<std::string> names;
    for (int i = 0; i < sd->method_count(); ++i) names.push_back(sd->method(i)->name());
    return absl::NotFoundError(absl::StrCat("no method '", method, "' in ", service,
                                            "; expected one of ", absl::StrJoin(names, ", ")));
  }
  return md;
}

bool IsReadMethod(const pb::MethodDescriptor& method) {
  const std::string& n = method.name();
  return absl::StartsWith(n, "Get") || absl::StartsWith(n, "List") ||
         absl::StartsWith(n, "Query") || absl::StartsWith(n, "Watch");
}

absl::StatusOr<std::string> QueryToJson(const pb::Descriptor& type,
                                        const std::multimap<std::string, std::string>& params) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : params) {
    const pb::FieldDescriptor* f = type.FindFieldByName(key);
    if (f == nullptr || (f->message_type() != nullptr && !f->is_map())) {
      std::vector<std::string> names;
      for (int i = 0; i < type.field_count(); ++i) {
        const pb::FieldDescriptor* fi = type.field(i);
        if (fi->message_type() == nullptr || fi->is_map()) names.push_back(fi->name());
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "query parameter '", key, "': not a field of ", type.name(), "; expected one of: ",
          absl::StrJoin(names, ", "), " (send other requests as JSON with POST)"));
    }
    if (f->is_map()) {
      size_t eq = value.find('=');
      if (eq == std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter '", key, "': '", value, "' is not KEY=VALUE"));
      }
      out[key][value.substr(0, eq)] = value.substr(eq + 1);
      continue;
    }
    nlohmann::json v = value;  // numbers may be quoted in the proto3 JSON mapping
    if (f->type() == pb::FieldDescriptor::TYPE_BOOL) {
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter '", key, "': '", value, "' is not true or false"));
      }
      v = value == "true";
    }
    if (f->is_repeated()) {
      out[key].push_back(v);
    } else {
      out[key] = v;
    }
  }
  return out.dump();
}

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
      return 400;
    case grpc::StatusCode::FAILED_PRECONDITION:
      return 400;
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
      return 409;
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

std::string ErrorJson(const grpc::Status& status) {
  return nlohmann::json{
      {"code", absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()))},
      {"message", status.error_message()}}
      .dump();
}

void AddJsonApiRoutes(http::HttpServer& server, std::shared_ptr<grpc::Channel> channel) {
  auto stub = std::make_shared<grpc::GenericStub>(channel);
  auto watches = std::make_shared<std::atomic<int>>(0);
  auto handle = [stub, channel, watches](const http::HttpRequest& req, http::HttpResponse& res) {
    absl::StatusOr<const pb::MethodDescriptor*> method =
        FindApiMethod(req.matches[1], req.matches[2]);
    if (!method.ok()) {
      return Answer(
          res, grpc::Status(grpc::StatusCode::NOT_FOUND, std::string(method.status().message())),
          "");
    }
    // HEAD is a GET without the body: never a change, never a stream.
    bool get = req.method == "GET" || req.method == "HEAD";
    if (get && !IsReadMethod(**method)) {
      res.status = 405;
      res.set_header("Allow", "POST");
      res.set_content(
          ErrorJson(Invalid(absl::StrCat((*method)->name(), " changes the cluster: use POST"))),
          "application/json");
      return;
    }
    if ((*method)->server_streaming()) {
      if (!get) {
        return Answer(res, Invalid(absl::StrCat((*method)->name(), " is a stream: use GET")), "");
      }
      if (req.method == "HEAD") {
        res.content_type = "application/x-ndjson";
        return;
      }
      return ServeWatch(**method, req, res, channel, watches);
    }
    std::string body = req.body;
    if (get) {
      absl::StatusOr<std::string> json = QueryToJson(*(*method)->input_type(), req.params);
      if (!json.ok()) return Answer(res, Invalid(std::string(json.status().message())), "");
      body = *json;
    }
    std::string out;
    grpc::Status s = CallUnary(*stub, **method, body, req, res, &out);
    Answer(res, s, out);
  };
  const char* pattern = "/api/v1/:service/:method";
  server.Routes().Get(pattern, handle);
  server.Routes().Post(pattern, handle);
}

}  // namespace paceline::api
