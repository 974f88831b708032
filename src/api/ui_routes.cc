#include "api/ui_routes.h"

#include <string>

#include "absl/strings/match.h"
#include "ui/ui_assets.h"

namespace paceline::api {
namespace {

void Serve(const ui::Asset& asset, const http::HttpRequest& req, http::HttpResponse& res) {
  res.set_header("ETag", std::string(asset.etag));
  res.set_header("Cache-Control",
                 asset.immutable ? "public, max-age=31536000, immutable" : "no-cache");
  res.set_header("Vary", "Accept-Encoding");
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; object-src 'none'; "
                 "base-uri 'none'; frame-ancestors 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  if (req.header("If-None-Match") == asset.etag) {
    res.status = 304;
    return;
  }
  const std::string ctype(asset.content_type);
  if (absl::StrContains(req.header("Accept-Encoding"), "gzip")) {
    res.set_header("Content-Encoding", "gzip");
    res.set_static_content(absl::string_view(asset.gzip.data(), asset.gzip.size()), ctype);
  } else {
    res.set_static_content(absl::string_view(asset.body.data(), asset.body.size()), ctype);
  }
}

}  // namespace

void AddUiRoutes(http::HttpServer& server) {
  http::HttpRouter& s = server.Routes();
  s.Get("/", [](const http::HttpRequest&, http::HttpResponse& res) { res.set_redirect("/ui/"); });
  s.Get("/ui",
        [](const http::HttpRequest&, http::HttpResponse& res) { res.set_redirect("/ui/", 301); });
  s.Get("/ui/*", [](const http::HttpRequest& req, http::HttpResponse& res) {
    const std::string path = req.matches[1];
    if (const ui::Asset* asset = ui::FindAsset(path); asset != nullptr) {
      return Serve(*asset, req, res);
    }
    const std::string last = path.substr(path.rfind('/') + 1);
    if (absl::StrContains(last, '.')) {
      res.status = 404;
      res.set_content("no such file in the web UI: " + path + "\n", "text/plain");
      return;
    }
    Serve(ui::IndexPage(), req, res);
  });
}

}  // namespace paceline::api
