#include "http/http_message.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace paceline::http {
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

void HttpResponse::set_static_content(absl::string_view content, std::string type) {
  body.clear();
  static_body = content;
  content_type = std::move(type);
}

void HttpResponse::set_redirect(std::string location, int code) {
  status = code;
  set_header("Location", std::move(location));
}

namespace {

std::vector<std::string> Segments(absl::string_view path) {
  return absl::StrSplit(path, '/');  // "/a/b" -> "", "a", "b"
}

}  // namespace

void HttpRouter::Get(const std::string& pattern, HttpHandler handler) {
  routes_.push_back({"GET " + pattern, "GET", Segments(pattern), std::move(handler)});
}

void HttpRouter::Post(const std::string& pattern, HttpHandler handler) {
  routes_.push_back({"POST " + pattern, "POST", Segments(pattern), std::move(handler)});
}

bool HttpRouter::Match(const Route& r, const std::string& path, std::vector<std::string>& matches) {
  matches.assign(1, path);
  absl::string_view rest(path);
  for (size_t i = 0; i < r.segments.size(); ++i) {
    const std::string& seg = r.segments[i];
    if (i > 0) {
      if (rest.empty() || rest.front() != '/') return false;
      rest.remove_prefix(1);
    }
    if (seg == "*" && i + 1 == r.segments.size()) {
      matches.emplace_back(rest);
      return true;
    }
    size_t end = std::min(rest.find('/'), rest.size());
    absl::string_view part = rest.substr(0, end);
    if (!seg.empty() && seg.front() == ':') {
      if (part.empty()) return false;
      matches.emplace_back(part);
    } else if (part != seg) {
      return false;
    }
    rest.remove_prefix(end);
  }
  return rest.empty();
}

void HttpRouter::Dispatch(HttpRequest& req, HttpResponse& res) const {
  // HEAD is answered as GET; the server sends the headers only.
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  bool other_method = false;
  std::vector<std::string> matches;
  for (const Route& r : routes_) {
    if (!Match(r, req.path, matches)) continue;
    if (r.method != method) {
      other_method = true;
      continue;
    }
    req.matches = std::move(matches);
    if (guard_ && !guard_(req, r.name, res)) return;
    r.handler(req, res);
    return;
  }
  res.status = other_method ? 405 : 404;
  res.set_content(other_method ? "method not allowed\n" : "not found\n", "text/plain");
}

std::vector<std::string> HttpRouter::RouteNames() const {
  std::vector<std::string> out;
  for (const Route& r : routes_) out.push_back(r.name);
  return out;
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

void SetTarget(absl::string_view target, HttpRequest& req) {
  size_t q = target.find('?');
  req.path = PercentDecode(target.substr(0, q), false);
  req.params.clear();
  if (q != absl::string_view::npos) req.params = ParseQuery(target.substr(q + 1));
}

bool AllowClientName(const HttpRequest& req, const std::vector<std::string>& allowed,
                     absl::string_view option, HttpResponse& res) {
  if (std::find(allowed.begin(), allowed.end(), req.client_name) != allowed.end()) return true;
  res.status = 403;
  res.set_content(
      absl::StrCat("the client certificate's name '", req.client_name, "' is not one of ", option,
                   ": ", absl::StrJoin(allowed, ", "), "\n"),
      "text/plain");
  return false;
}

}  // namespace paceline::http
