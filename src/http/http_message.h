#pragma once
// What an HTTP route sees and answers (http_server.h serves them): a request already read
// whole and within the limits, and a response that is either a body or a stream.
//
// A route's pattern is a path whose segments are literal, `:name` (any one non-empty segment)
// or, last, `*` (the rest of the path, possibly empty, slashes included): "/healthz",
// "/api/v1/:service/:method", "/ui/*". HttpRequest::matches holds the whole path, then what
// each `:name` and `*` matched. The first route that matches the method and the path answers;
// none: 404; the path known for another method: 405. (No regular expressions: matching is
// linear in the path, whatever a client sends.)
//
// A streaming response (HttpResponse::stream) runs on a handler thread for as long as it
// writes: HttpStreamSink::Write sends one chunk and returns false once the client is gone (or
// too slow to take it), and OnClose registers what to do when that happens — e.g. cancel the
// call the stream waits on.
//
// Thread-safety: a request and its response belong to one handler thread; a sink's OnClose
// callback may run on the server's I/O thread.

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace paceline::http {

struct HttpRequest {
  std::string method;                              // GET, POST, ...
  std::string path;                                // decoded, without the query
  std::multimap<std::string, std::string> params;  // the query, decoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string peer;                  // the client's address
  std::string client_name;           // mutual TLS: its certificate's common name; else ""
  std::vector<std::string> matches;  // the whole path, then the route's capture groups

  // The first header of that name (case-insensitive), or "".
  std::string header(absl::string_view name) const;
  bool has_header(absl::string_view name) const;
};

class HttpStreamSink {
 public:
  virtual ~HttpStreamSink() = default;
  // Sends `chunk`; false when the client is gone or did not take it in time.
  virtual bool Write(absl::string_view chunk) = 0;
  // `f` runs once when the connection closes (at once if it is closed already).
  virtual void OnClose(std::function<void()> f) = 0;
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Instead of `body`: bytes that live as long as the process (the embedded web UI), sent
  // without a copy — a slow client of a large file holds no memory of its own.
  absl::string_view static_body;
  std::string content_type = "text/plain";
  // Set: a chunked stream of `content_type` instead of `body`.
  std::function<void(HttpStreamSink&)> stream;

  void set_header(std::string name, std::string value);
  void set_content(std::string content, std::string type);
  void set_static_content(absl::string_view content, std::string type);
  void set_redirect(std::string location, int code = 302);
};

// Mutual TLS: true when the common name of the request's client certificate is one of
// `allowed`; otherwise `res` is a 403 naming the certificate's name and `option`, the setting
// that lists the allowed names.
bool AllowClientName(const HttpRequest& req, const std::vector<std::string>& allowed,
                     absl::string_view option, HttpResponse& res);

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;
// Runs before a route's handler with the route's name, "GET /metrics" (its method and pattern);
// false: the request is refused and `res` holds the refusal.
using HttpGuard = std::function<bool(const HttpRequest&, absl::string_view route, HttpResponse&)>;

class HttpRouter {
 public:
  void Get(const std::string& pattern, HttpHandler handler);
  void Post(const std::string& pattern, HttpHandler handler);
  // Every request that matches a route passes `guard` first (access control).
  void SetGuard(HttpGuard guard) { guard_ = std::move(guard); }
  // Answers `req` (filling req.matches for the handler).
  void Dispatch(HttpRequest& req, HttpResponse& res) const;
  // The names of the routes ("GET /metrics"), in the order they were added.
  std::vector<std::string> RouteNames() const;

 private:
  struct Route {
    std::string name;  // "GET /metrics"
    std::string method;
    std::vector<std::string> segments;  // of the pattern, split on '/'
    HttpHandler handler;
  };
  static bool Match(const Route& r, const std::string& path, std::vector<std::string>& matches);
  std::vector<Route> routes_;
  HttpGuard guard_;
};

// "a%20b+c" -> "a b c" (`plus_is_space` for queries); malformed escapes are kept as they are.
std::string PercentDecode(absl::string_view s, bool plus_is_space);
// "a=1&b=x%20y&a=2" -> {a: 1, a: 2, b: "x y"}.
std::multimap<std::string, std::string> ParseQuery(absl::string_view query);
// Sets req.path and req.params from a request target ("/a%20b?x=1").
void SetTarget(absl::string_view target, HttpRequest& req);

}  // namespace paceline::http
