#include "api/access_interceptor.h"

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace paceline::api {
namespace {

namespace gx = grpc::experimental;

std::string Metadata(const std::multimap<grpc::string_ref, grpc::string_ref>& md,
                     absl::string_view key) {
  auto it = md.find(grpc::string_ref(key.data(), key.size()));
  return it == md.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

std::string NewRequestId() {
  thread_local absl::BitGen gen;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
}

class AccessInterceptor final : public gx::Interceptor {
 public:
  AccessInterceptor(gx::ServerRpcInfo* info, AccessControl* access)
      : info_(info), access_(access) {}
  ~AccessInterceptor() override {
    if (begun_) access_->EndCall(info_->server_context(), grpc::Status::CANCELLED);
  }

  void Intercept(gx::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            gx::InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      Begin(*methods->GetRecvInitialMetadata());
    }
    if (begun_ &&
        methods->QueryInterceptionHookPoint(gx::InterceptionHookPoints::PRE_SEND_MESSAGE) &&
        !access_->MayAnswer(info_->server_context())) {
      // The handler answers without having checked the caller: send nothing of it.
      if (grpc::ByteBuffer* message = methods->GetSerializedSendMessage(); message != nullptr) {
        message->Clear();
      }
    }
    if (begun_ &&
        methods->QueryInterceptionHookPoint(gx::InterceptionHookPoints::PRE_SEND_STATUS)) {
      begun_ = false;
      if (std::multimap<std::string, std::string>* trailing = methods->GetSendTrailingMetadata();
          trailing != nullptr) {
        for (auto& [key, value] : access_->AnswerMetadata(info_->server_context())) {
          trailing->emplace(std::move(key), std::move(value));
        }
      }
      std::optional<grpc::Status> instead =
          access_->EndCall(info_->server_context(), methods->GetSendStatus());
      if (instead.has_value()) methods->ModifySendStatus(*instead);
    }
    methods->Proceed();
  }

 private:
  void Begin(const std::multimap<grpc::string_ref, grpc::string_ref>& md) {
    grpc::ServerContextBase* ctx = info_->server_context();
    std::string peer = ctx->peer();
    std::string forwarded = Metadata(md, "x-forwarded-for");
    // A call over the network names its peer "ipv4:...", "ipv6:..." or "unix:..."; the JSON
    // gateway's in-process channel does not (gRPC names it "unknown" or "inproc").
    const bool in_process = !absl::StartsWith(peer, "ipv4:") && !absl::StartsWith(peer, "ipv6:") &&
                            !absl::StartsWith(peer, "unix:");
    std::string source = in_process && !forwarded.empty() ? forwarded : peer;
    if (absl::StartsWith(source, "ipv4:")) source.erase(0, 5);
    std::string request_id = Metadata(md, "x-request-id");
    if (!IsSaneRequestId(request_id)) request_id = NewRequestId();
    ctx->AddTrailingMetadata("paceline-request-id", request_id);
    access_->BeginCall(ctx, info_->method(), Metadata(md, "authorization"), std::move(source),
                       std::move(request_id), Metadata(md, kMinRevisionKey));
    begun_ = true;
  }

  gx::ServerRpcInfo* const info_;
  AccessControl* const access_;
  bool begun_ = false;
};

class Factory final : public gx::ServerInterceptorFactoryInterface {
 public:
  explicit Factory(AccessControl* access) : access_(access) {}
  gx::Interceptor* CreateServerInterceptor(gx::ServerRpcInfo* info) override {
    return new AccessInterceptor(info, access_);
  }

 private:
  AccessControl* const access_;
};

}  // namespace

std::unique_ptr<gx::ServerInterceptorFactoryInterface> NewAccessInterceptorFactory(
    AccessControl* access) {
  return std::make_unique<Factory>(access);
}

bool IsSaneRequestId(absl::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace paceline::api
