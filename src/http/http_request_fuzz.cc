// Fuzzes the HTTP request path of the master: the bytes of a request through Beast's parser
// with the server's limits, then its target through our decoding (SetTarget) and the router
// (with the master's kinds of routes). Checks that nothing crashes, that a decoded path or
// parameter is never longer than what it came from, and that the limits hold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>

#include "http/http_message.h"
#include "http/http_server.h"

namespace {

namespace bhttp = boost::beast::http;
using paceline::http::HttpRequest;
using paceline::http::HttpResponse;
using paceline::http::HttpRouter;

const HttpRouter& Router() {
  static const HttpRouter* router = [] {
    auto* r = new HttpRouter();
    auto ok = [](const HttpRequest&, HttpResponse& res) { res.set_content("ok", "text/plain"); };
    r->Get("/healthz", ok);
    r->Get("/ui/*", ok);
    r->Get("/api/v1/:service/:method", ok);
    r->Post("/api/v1/:service/:method", ok);
    return r;
  }();
  return *router;
}

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const paceline::http::HttpLimits limits;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
  parser.body_limit(limits.max_body_bytes);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  std::string target;
  if (!ec && parser.is_header_done()) {
    target = std::string(parser.get().target());
    Check(parser.get().body().size() <= limits.max_body_bytes);
  } else {
    target.assign(reinterpret_cast<const char*>(data), size);  // as if it were a target
  }
  HttpRequest req;
  req.method = size % 2 == 0 ? "GET" : "POST";
  paceline::api::SetTarget(target, req);
  Check(req.path.size() <= target.size());
  for (const auto& [k, v] : req.params) Check(k.size() + v.size() <= target.size());
  HttpResponse res;
  Router().Dispatch(req, res);
  Check(res.status == 200 || res.status == 404 || res.status == 405);
  return 0;
}
