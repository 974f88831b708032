#pragma once
// The web UI's routes on the master's HTTP side (the UI itself: ui/, embedded by src/ui/):
//
//   GET /            -> 302 /ui/
//   GET /ui          -> 301 /ui/
//   GET /ui/NAME     the embedded asset NAME (app-HASH.js, app-HASH.css, ...), gzip-encoded
//                    when the client accepts it; 304 when If-None-Match has its ETag. Hashed
//                    names are cached for a year, the rest revalidated (Cache-Control).
//   GET /ui/ANYTHING index.html for every other path without a file extension (/ui/jobs/7):
//                    the page's router draws the view, so URLs can be shared and reloaded.
//                    A missing file (a path with an extension) is 404.
//
// Every answer carries a Content-Security-Policy that allows only the master's own origin:
// the UI loads nothing from elsewhere. The UI reads and changes the cluster through the JSON
// gateway (json_gateway.h) with the user's token; these routes need none (they hold no data).
//
// Thread-safety: handlers read immutable data.

#include "http/http_server.h"

namespace paceline::api {

void AddUiRoutes(http::HttpServer& server);

}  // namespace paceline::api
