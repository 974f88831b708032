#include "image/registry_client.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "image/digest.h"
#include "image/registry_protocol.h"
#include "image/rootfs_path.h"
#include "nlohmann/json.hpp"

namespace paceline::image {
namespace {

using internal::IoError;

constexpr size_t kMaxRegistryManifestBytes = 4 << 20;  // as containerd
constexpr size_t kMaxErrorBody = 64 << 10;
constexpr size_t kMaxTokenBytes = 1 << 20;
constexpr long kStallBytesPerSecond = 1024;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Where the body of a successful (2xx) answer goes. Reset() is called before every attempt
// (an attempt answered 401 is retried with credentials).
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual absl::Status Reset() = 0;
  virtual absl::Status Write(absl::string_view data) = 0;
};

class StringSink : public BodySink {
 public:
  StringSink(size_t limit, std::string what) : limit_(limit), what_(std::move(what)) {}
  absl::Status Reset() override {
    body_.clear();
    return absl::OkStatus();
  }
  absl::Status Write(absl::string_view data) override {
    if (body_.size() + data.size() > limit_) {
      return absl::FailedPreconditionError(
          absl::StrCat(what_, " is larger than ", limit_ >> 10, " KiB"));
    }
    body_.append(data.data(), data.size());
    return absl::OkStatus();
  }
  std::string Take() { return std::move(body_); }

 private:
  size_t limit_;
  std::string what_;
  std::string body_;
};

// A blob on its way to `path`.partial: hashed and counted as it is written; Commit verifies it
// and renames it; anything else removes it.
class FileSink : public BodySink {
 public:
  FileSink(std::string path, const Descriptor& blob)
      : path_(std::move(path)), partial_(path_ + ".partial"), blob_(blob) {}
  ~FileSink() override { Abandon(); }

  absl::Status Reset() override {
    CloseFd();
    fd_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", partial_));
    hash_ = std::make_unique<Sha256>();
    written_ = 0;
    return absl::OkStatus();
  }

  absl::Status Write(absl::string_view data) override {
    if (written_ + static_cast<int64_t>(data.size()) > blob_.size) {
      return absl::DataLossError(absl::StrCat(
          "blob ", blob_.digest, ": the registry sent more than ", blob_.size, " bytes"));
    }
    hash_->Update(data);
    written_ += static_cast<int64_t>(data.size());
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return IoError(errno, absl::StrCat("write ", partial_));
      data.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  absl::Status Commit() {
    if (written_ != blob_.size) {
      return absl::DataLossError(absl::StrCat("blob ", blob_.digest, ": the registry sent ",
                                              written_, " bytes, expected ", blob_.size));
    }
    std::string digest = hash_->Finish();
    if (digest != blob_.digest) {
      return absl::DataLossError(
          absl::StrCat("blob ", blob_.digest, ": the content has digest ", digest));
    }
    if (::fsync(fd_) != 0) return IoError(errno, absl::StrCat("write ", partial_));
    int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return IoError(errno, absl::StrCat("write ", partial_));
    if (::rename(partial_.c_str(), path_.c_str()) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("rename ", partial_, " to ", path_));
    }
    committed_ = true;
    // The rename is durable once the directory is.
    std::string dir = std::filesystem::path(path_).parent_path().string();
    int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
    return absl::OkStatus();
  }

  void Abandon() {
    CloseFd();
    if (!committed_) ::unlink(partial_.c_str());
  }

 private:
  void CloseFd() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }

  std::string path_;
  std::string partial_;
  Descriptor blob_;
  int fd_ = -1;
  std::unique_ptr<Sha256> hash_;
  int64_t written_ = 0;
  bool committed_ = false;
};

// One HTTP answer (the last one, after redirects).
struct Response {
  long status = 0;
  std::string content_type;
  std::string docker_digest;  // Docker-Content-Digest
  std::string www_authenticate;
  std::string error_body;  // the body of a non-2xx answer, truncated
  bool ok() const { return status >= 200 && status < 300; }
};

struct Transfer {
  CURL* curl = nullptr;
  BodySink* sink = nullptr;
  Response* response = nullptr;
  absl::Status sink_status;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  absl::string_view line(data, size * count);
  if (absl::StartsWith(line, "HTTP/")) {  // a new answer (after a redirect or a 100)
    *t->response = Response();
    return line.size();
  }
  size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return line.size();
  std::string name = absl::AsciiStrToLower(line.substr(0, colon));
  std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  if (name == "content-type") t->response->content_type = value;
  if (name == "docker-content-digest") t->response->docker_digest = value;
  if (name == "www-authenticate" && t->response->www_authenticate.empty()) {
    t->response->www_authenticate = value;
  }
  return line.size();
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  absl::string_view chunk(data, size * count);
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) {
    absl::Status s = t->sink->Write(chunk);
    if (!s.ok()) {
      t->sink_status = std::move(s);
      return 0;  // aborts the transfer with CURLE_WRITE_ERROR
    }
  } else {
    std::string& b = t->response->error_body;
    absl::string_view kept = chunk.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, b.size()));
    b.append(kept.data(), kept.size());
  }
  return chunk.size();
}

absl::Status CurlError(CURLcode rc, const char* errbuf, const std::string& url,
                       const RegistryOptions& o) {
  std::string detail = errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(rc);
  std::string where = absl::StrCat("GET ", url, ": ");
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      return absl::DeadlineExceededError(
          absl::StrCat(where, detail, " (connect timeout ", absl::FormatDuration(o.connect_timeout),
                       ", stall timeout ", absl::FormatDuration(o.stall_timeout), ")"));
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
      return absl::UnavailableError(
          absl::StrCat(where, "TLS: ", detail,
                       o.ca_file.empty() ? " (verified against the system's CAs)"
                                         : absl::StrCat(" (verified against ", o.ca_file, ")")));
    case CURLE_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(absl::StrCat(where, detail));
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return absl::InvalidArgumentError(absl::StrCat(where, detail));
    default:
      return absl::UnavailableError(absl::StrCat(where, detail));
  }
}

std::string RegistryHost(const std::string& registry) {
  return registry == "docker.io" ? "registry-1.docker.io" : registry;
}

constexpr char kAcceptManifests[] =
    "Accept: application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json";

}  // namespace

struct RegistryClient::Impl {
  RegistryOptions options;
  CURL* curl = nullptr;
  // "registry/repository" -> the Authorization header value that the registry accepted last.
  std::map<std::string, std::string> authorization;

  std::string BaseUrl(const spec::ImageRef& ref) const {
    return absl::StrCat(options.scheme, "://", RegistryHost(ref.registry), "/v2/", ref.repository);
  }

  std::string BasicCredentials() const {
    return absl::StrCat("Basic ",
                        absl::Base64Escape(absl::StrCat(options.username, ":", options.password)));
  }

  // One GET, redirects followed; a 2xx body goes to `sink`.
  absl::StatusOr<Response> Perform(const std::string& url, const std::vector<std::string>& headers,
                                   BodySink* sink) {
    Response response;
    Transfer t{curl, sink, &response, absl::OkStatus()};
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist* list = nullptr;
    for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
    const char* protocols = options.scheme == "http" ? "http,https" : "https";
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, protocols);
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    // Authorization goes to the registry only, never to the host a blob is redirected to.
    curl_easy_setopt(curl, CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(
                         std::max<int64_t>(1, absl::ToInt64Milliseconds(options.connect_timeout))));
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, kStallBytesPerSecond);
    curl_easy_setopt(
        curl, CURLOPT_LOW_SPEED_TIME,
        static_cast<long>(std::max<int64_t>(
            1, absl::ToInt64Seconds(options.stall_timeout + absl::Milliseconds(999)))));
    if (!options.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options.ca_file.c_str());
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "paceline");
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
    curl_slist_free_all(list);
    if (!t.sink_status.ok()) return t.sink_status;
    if (rc != CURLE_OK) return CurlError(rc, errbuf, url, options);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    return response;
  }

  absl::Status HttpError(const Response& r, const std::string& url, bool sent_credentials) const {
    std::string message = absl::StrCat("GET ", url, ": HTTP ", r.status);
    std::string body = DescribeErrorBody(r.error_body);
    if (!body.empty()) absl::StrAppend(&message, ": ", body);
    if (r.status == 401) {
      absl::StrAppend(&message, sent_credentials
                                    ? absl::StrCat(" (the credentials of user \"", options.username,
                                                   "\" were refused)")
                                    : std::string(" (no credentials are configured)"));
    }
    return absl::Status(CodeForHttpStatus(r.status), message);
  }

  // Answers a 401's challenge: a bearer token from its realm, or basic credentials.
  absl::Status Authenticate(const Response& r, const spec::ImageRef& ref, const std::string& url,
                            const std::string& key) {
    std::optional<AuthChallenge> c = ParseAuthChallenge(r.www_authenticate);
    bool have_credentials = !options.username.empty();
    if (c && c->scheme == "basic") {
      if (!have_credentials) return HttpError(r, url, false);
      authorization[key] = BasicCredentials();
      return absl::OkStatus();
    }
    if (!c || c->scheme != "bearer" || c->params["realm"].empty()) {
      return absl::PermissionDeniedError(
          absl::StrCat("GET ", url, ": HTTP 401 with a challenge this client cannot answer: \"",
                       r.www_authenticate, "\""));
    }
    const std::string& realm = c->params["realm"];
    if (!absl::StartsWith(realm, "https://") &&
        !(options.scheme == "http" && absl::StartsWith(realm, "http://"))) {
      return absl::PermissionDeniedError(
          absl::StrCat("GET ", url, ": the token realm \"", realm, "\" is not https"));
    }
    std::string scope = c->params["scope"];
    if (scope.empty()) scope = absl::StrCat("repository:", ref.repository, ":pull");
    std::string token_url = realm;
    absl::StrAppend(&token_url, absl::StrContains(realm, '?') ? "&" : "?");
    for (auto [name, value] :
         {std::pair<const char*, std::string>{"service", c->params["service"]}, {"scope", scope}}) {
      if (value.empty()) continue;
      char* escaped = curl_easy_escape(curl, value.c_str(), static_cast<int>(value.size()));
      absl::StrAppend(&token_url, name, "=", escaped ? escaped : "", "&");
      curl_free(escaped);
    }
    token_url.pop_back();
    std::vector<std::string> headers;
    if (have_credentials) headers.push_back("Authorization: " + BasicCredentials());
    StringSink body(kMaxTokenBytes, "the token endpoint's answer");
    RETURN_IF_ERROR(body.Reset());
    ASSIGN_OR_RETURN(Response tr, Perform(token_url, headers, &body));
    if (!tr.ok()) {
      absl::Status s = HttpError(tr, token_url, have_credentials);
      return WithContext(s, "token");
    }
    ASSIGN_OR_RETURN(std::string token, ParseTokenResponse(body.Take()));
    authorization[key] = "Bearer " + token;
    return absl::OkStatus();
  }

  // GET with the registry's authentication: a 401 is answered once and the request retried.
  absl::StatusOr<Response> Get(const spec::ImageRef& ref, const std::string& url,
                               std::vector<std::string> headers, BodySink* sink) {
    const std::string key = absl::StrCat(ref.registry, "/", ref.repository);
    for (int attempt = 0;; ++attempt) {
      RETURN_IF_ERROR(sink->Reset());
      std::vector<std::string> h = headers;
      auto it = authorization.find(key);
      bool authorized = it != authorization.end();
      if (authorized) h.push_back("Authorization: " + it->second);
      ASSIGN_OR_RETURN(Response r, Perform(url, h, sink));
      if (r.ok()) return r;
      if (r.status != 401 || attempt > 0) {
        return HttpError(r, url, authorized && !options.username.empty());
      }
      RETURN_IF_ERROR(Authenticate(r, ref, url, key));
    }
  }

  absl::StatusOr<FetchedManifest> FetchManifest(const spec::ImageRef& ref) {
    if (ref.registry.empty() || ref.repository.empty() || ref.ManifestReference().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("image reference \"", ref.ToString(), "\" is incomplete"));
    }
    std::string url = absl::StrCat(BaseUrl(ref), "/manifests/", ref.ManifestReference());
    StringSink sink(kMaxRegistryManifestBytes, absl::StrCat("the manifest of ", ref.ToString()));
    ASSIGN_OR_RETURN(Response r, Get(ref, url, {kAcceptManifests}, &sink));
    FetchedManifest m;
    m.body = sink.Take();
    m.digest = Sha256Digest(m.body);
    if (!ref.digest.empty() && m.digest != ref.digest) {
      return absl::DataLossError(absl::StrCat(
          "manifest ", ref.ToString(), ": the registry sent content with digest ", m.digest));
    }
    if (spec::IsSha256Digest(r.docker_digest) && r.docker_digest != m.digest) {
      return absl::DataLossError(absl::StrCat("manifest ", ref.ToString(), ": the registry says ",
                                              r.docker_digest, " but sent content with digest ",
                                              m.digest));
    }
    m.media_type = MediaTypeOf(r.content_type);
    if (!IsManifestMediaType(m.media_type) && !IsIndexMediaType(m.media_type)) {
      // Some registries answer application/json: the document names its own type.
      auto j = nlohmann::json::parse(m.body, nullptr, /*allow_exceptions=*/false);
      if (j.is_object() && j.contains("mediaType") && j["mediaType"].is_string()) {
        m.media_type = j["mediaType"].get<std::string>();
      }
    }
    return m;
  }
};

RegistryClient::RegistryClient(RegistryOptions options) : impl_(std::make_unique<Impl>()) {
  GlobalInit();
  impl_->options = std::move(options);
  impl_->curl = curl_easy_init();
}

RegistryClient::~RegistryClient() {
  if (impl_->curl != nullptr) curl_easy_cleanup(impl_->curl);
}

absl::StatusOr<FetchedManifest> RegistryClient::FetchManifest(const spec::ImageRef& ref) {
  if (impl_->curl == nullptr) return absl::ResourceExhaustedError("curl_easy_init failed");
  return impl_->FetchManifest(ref);
}

absl::StatusOr<FetchedManifest> RegistryClient::ResolveManifest(const spec::ImageRef& ref) {
  ASSIGN_OR_RETURN(FetchedManifest top, FetchManifest(ref));
  if (IsManifestMediaType(top.media_type)) return top;
  if (!IsIndexMediaType(top.media_type)) {
    return absl::FailedPreconditionError(
        absl::StrCat(ref.ToString(), ": unsupported manifest media type \"", top.media_type,
                     "\" (expected an OCI or Docker schema 2 manifest or index)"));
  }
  ASSIGN_OR_RETURN(Index index, ParseIndex(top.body));
  absl::StatusOr<Descriptor> chosen = SelectPlatform(index);
  if (!chosen.ok()) return WithContext(chosen.status(), ref.ToString());
  spec::ImageRef pinned = ref;
  pinned.digest = chosen->digest;
  ASSIGN_OR_RETURN(FetchedManifest m, FetchManifest(pinned));
  if (static_cast<int64_t>(m.body.size()) != chosen->size) {
    return absl::DataLossError(absl::StrCat("manifest ", pinned.ToString(), ": ", m.body.size(),
                                            " bytes, the index says ", chosen->size));
  }
  if (!IsManifestMediaType(m.media_type)) {
    return absl::FailedPreconditionError(absl::StrCat(pinned.ToString(),
                                                      ": the index entry for this platform is a \"",
                                                      m.media_type, "\", not an image manifest"));
  }
  return m;
}

absl::Status RegistryClient::FetchBlob(const spec::ImageRef& ref, const Descriptor& blob,
                                       const std::string& path) {
  if (impl_->curl == nullptr) return absl::ResourceExhaustedError("curl_easy_init failed");
  if (!spec::IsSha256Digest(blob.digest) || blob.size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("blob descriptor \"", blob.digest, "\" size ",
                                                   blob.size, ": expected sha256:<64 hex>, >= 0"));
  }
  std::string url = absl::StrCat(impl_->BaseUrl(ref), "/blobs/", blob.digest);
  FileSink sink(path, blob);
  absl::StatusOr<Response> r = impl_->Get(ref, url, {}, &sink);
  absl::Status s = r.ok() ? sink.Commit() : r.status();
  if (!s.ok()) {
    sink.Abandon();
    return WithContext(s, ref.ToString());
  }
  return absl::OkStatus();
}

}  // namespace paceline::image
