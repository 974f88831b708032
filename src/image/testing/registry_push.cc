#include "image/testing/registry_push.h"

#include <curl/curl.h>

#include <mutex>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paceline::image::testing {
namespace {

struct Answer {
  long status = 0;
  std::string location;
  std::string body;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  absl::string_view line(data, size * count);
  auto* a = static_cast<Answer*>(user);
  if (absl::StartsWithIgnoreCase(line, "location:")) {
    a->location = std::string(absl::StripAsciiWhitespace(line.substr(9)));
  }
  return line.size();
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  static_cast<Answer*>(user)->body.append(data, size * count);
  return size * count;
}

// One request; `body` is sent when `method` is PUT.
absl::StatusOr<Answer> Request(const PushTarget& to, const std::string& method,
                               const std::string& url, const std::vector<std::string>& headers,
                               absl::string_view body) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  Answer answer;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* list = nullptr;
  for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "PUT" || method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  if (!to.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, to.ca_file.c_str());
  if (!to.username.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, to.username.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, to.password.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_easy_cleanup(curl);
  curl_slist_free_all(list);
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat(method, " ", url, ": ", errbuf[0] ? errbuf : curl_easy_strerror(rc)));
  }
  return answer;
}

absl::Status Expect(const absl::StatusOr<Answer>& a, long status, const std::string& what) {
  if (!a.ok()) return a.status();
  if (a->status != status) {
    return absl::InternalError(
        absl::StrCat(what, ": HTTP ", a->status, " (expected ", status, "): ", a->body));
  }
  return absl::OkStatus();
}

std::string Base(const PushTarget& to) {
  return absl::StrCat(to.scheme, "://", to.registry, "/v2/", to.repository);
}

}  // namespace

absl::Status PushBlob(const PushTarget& to, const Blob& blob) {
  const std::string what = absl::StrCat("push blob ", blob.digest, " to ", to.repository);
  absl::StatusOr<Answer> start = Request(to, "POST", Base(to) + "/blobs/uploads/", {}, "");
  if (absl::Status s = Expect(start, 202, what); !s.ok()) return s;
  std::string url = start->location;
  if (url.empty()) return absl::InternalError(absl::StrCat(what, ": no Location in the answer"));
  if (absl::StartsWith(url, "/")) url = absl::StrCat(to.scheme, "://", to.registry, url);
  absl::StrAppend(&url, absl::StrContains(url, '?') ? "&" : "?", "digest=", blob.digest);
  return Expect(Request(to, "PUT", url, {"Content-Type: application/octet-stream"}, blob.data), 201,
                what);
}

absl::Status PushManifest(const PushTarget& to, const Blob& manifest, absl::string_view reference) {
  return Expect(Request(to, "PUT", absl::StrCat(Base(to), "/manifests/", reference),
                        {"Content-Type: " + manifest.media_type}, manifest.data),
                201, absl::StrCat("push manifest ", to.repository, ":", reference));
}

absl::Status PushImage(const PushTarget& to, const Image& image, absl::string_view tag) {
  for (const Blob* b : image.blobs()) {
    if (absl::Status s = PushBlob(to, *b); !s.ok()) return s;
  }
  return PushManifest(to, image.manifest, tag);
}

}  // namespace paceline::image::testing
