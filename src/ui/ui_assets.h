#pragma once
// The web UI's files (ui/ in the repository), built by esbuild and embedded in the binary when
// it is built (src/ui/CMakeLists.txt runs ui/build.mjs, then scripts/embed-ui.py), so that a
// master serves its UI with nothing installed beside it and nothing fetched from a network.
//
// Each asset is kept as it is and gzip-compressed; its ETag is a hash of its content. Names
// with a content hash (app-HASH.js) may be cached for good; index.html must be revalidated.
//
// Thread-safety: immutable data.

#include <string_view>

namespace paceline::ui {

struct Asset {
  std::string_view path;          // "index.html", "app-3FZK2.js"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view etag;          // "\"sha256-prefix\""
  std::string_view body;
  std::string_view gzip;  // the body, gzip-compressed
  bool immutable;         // its name holds its hash
};

// The asset at `path` (relative to /ui/, no leading slash); nullptr when there is none.
const Asset* FindAsset(std::string_view path);
// index.html: the page every UI route (/ui/jobs/7, ...) loads.
const Asset& IndexPage();

}  // namespace paceline::ui
