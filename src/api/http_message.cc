#include "api/http_message.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace paceline::api {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string HttpRequest::header(absl::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (absl::EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

bool HttpRequest::has_header(absl::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (absl::EqualsIgnoreCase(k, name)) return true;
  }
  return false;
}

void HttpResponse::set_header(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
}

void HttpResponse::set_content(std::string content, std::string type) {
  body = std::move(content);
  content_type = std::move(type);
}

void HttpResponse::set_redirect(std::string location, int code) {
  status = code;
  set_header("Location", std::move(location));
}

void HttpRouter::Get(const std::string& pattern, HttpHandler handler) {
  routes_.push_back({"GET", std::regex(pattern), std::move(handler)});
}

void HttpRouter::Post(const std::string& pattern, HttpHandler handler) {
  routes_.push_back({"POST", std::regex(pattern), std::move(handler)});
}

void HttpRouter::Dispatch(HttpRequest& req, HttpResponse& res) const {
  // HEAD is answered as GET; the server sends the headers only.
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  bool other_method = false;
  for (const Route& r : routes_) {
    std::smatch m;
    if (!std::regex_match(req.path, m, r.pattern)) continue;
    if (r.method != method) {
      other_method = true;
      continue;
    }
    req.matches.clear();
    for (size_t i = 0; i < m.size(); ++i) req.matches.push_back(m[i].str());
    r.handler(req, res);
    return;
  }
  res.status = other_method ? 405 : 404;
  res.set_content(other_method ? "method not allowed\n" : "not found\n", "text/plain");
}

std::string PercentDecode(absl::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+' && plus_is_space) {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::multimap<std::string, std::string> ParseQuery(absl::string_view query) {
  std::multimap<std::string, std::string> out;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    size_t eq = pair.find('=');
    absl::string_view key = pair.substr(0, eq);
    absl::string_view value = eq == absl::string_view::npos ? "" : pair.substr(eq + 1);
    out.emplace(PercentDecode(key, true), PercentDecode(value, true));
  }
  return out;
}

}  // namespace paceline::api
