#include "image/registry_protocol.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace paceline::image {
namespace {

using nlohmann::json;

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(c) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

void SkipSpace(absl::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}

std::string ReadToken(absl::string_view& s) {
  size_t n = 0;
  while (n < s.size() && IsTokenChar(s[n])) ++n;
  std::string out(s.substr(0, n));
  s.remove_prefix(n);
  return out;
}

// A quoted-string (the opening quote already seen); backslash escapes the next character.
std::string ReadQuoted(absl::string_view& s) {
  std::string out;
  while (!s.empty()) {
    char c = s.front();
    s.remove_prefix(1);
    if (c == '"') break;
    if (c == '\\' && !s.empty()) {
      c = s.front();
      s.remove_prefix(1);
    }
    out.push_back(c);
  }
  return out;
}

std::string Printable(absl::string_view s, size_t limit) {
  std::string out;
  for (char c : s.substr(0, limit)) out.push_back(absl::ascii_isprint(c) ? c : ' ');
  if (s.size() > limit) out += "...";
  return std::string(absl::StripAsciiWhitespace(out));
}

}  // namespace

std::optional<AuthChallenge> ParseAuthChallenge(absl::string_view header) {
  absl::string_view s = header;
  SkipSpace(s);
  AuthChallenge c;
  c.scheme = absl::AsciiStrToLower(ReadToken(s));
  if (c.scheme.empty()) return std::nullopt;
  // auth-params: name=token or name="quoted", separated by commas, up to the next challenge.
  while (true) {
    SkipSpace(s);
    while (!s.empty() && s.front() == ',') {
      s.remove_prefix(1);
      SkipSpace(s);
    }
    std::string name = absl::AsciiStrToLower(ReadToken(s));
    SkipSpace(s);
    // A token not followed by '=' starts the next challenge.
    if (name.empty() || s.empty() || s.front() != '=') break;
    s.remove_prefix(1);
    SkipSpace(s);
    std::string value;
    if (!s.empty() && s.front() == '"') {
      s.remove_prefix(1);
      value = ReadQuoted(s);
    } else {
      value = ReadToken(s);
    }
    c.params.emplace(std::move(name), std::move(value));
  }
  return c;
}

std::string DescribeErrorBody(absl::string_view body) {
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("errors") && j["errors"].is_array()) {
    std::vector<std::string> parts;
    for (const json& e : j["errors"]) {
      if (!e.is_object()) continue;
      std::string code =
          e.contains("code") && e["code"].is_string() ? e["code"].get<std::string>() : "UNKNOWN";
      std::string message =
          e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
      parts.push_back(message.empty() ? code : absl::StrCat(code, ": ", Printable(message, 200)));
    }
    if (!parts.empty()) return absl::StrJoin(parts, "; ");
  }
  return Printable(body, 200);
}

absl::StatusOr<std::string> ParseTokenResponse(absl::string_view body) {
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    for (const char* key : {"token", "access_token"}) {
      if (j.contains(key) && j[key].is_string() && !j[key].get<std::string>().empty()) {
        return j[key].get<std::string>();
      }
    }
  }
  return absl::PermissionDeniedError(
      absl::StrCat("the token endpoint answered without a token: ", Printable(body, 200)));
}

absl::StatusCode CodeForHttpStatus(long http_status) {
  if (http_status == 401 || http_status == 403) return absl::StatusCode::kPermissionDenied;
  if (http_status == 404) return absl::StatusCode::kNotFound;
  if (http_status == 408 || http_status == 429 || http_status >= 500) {
    return absl::StatusCode::kUnavailable;
  }
  if (http_status == 400) return absl::StatusCode::kInvalidArgument;
  return absl::StatusCode::kFailedPrecondition;
}

std::string MediaTypeOf(absl::string_view content_type) {
  absl::string_view s = content_type.substr(0, content_type.find(';'));
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(s));
}

}  // namespace paceline::image
