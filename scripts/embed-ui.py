#!/usr/bin/env python3
"""Writes a C++ source that embeds the built web UI (src/ui/ui_assets.h).

Usage: embed-ui.py DIST_DIR OUT.cc
Every file under DIST_DIR becomes an Asset with its content type, an ETag (a SHA-256 prefix of
its content), the content itself and a gzip copy (mtime 0, so builds are reproducible). A name
with a content hash (NAME-HASH.EXT, as ui/build.mjs writes them) is marked immutable.
"""
import gzip
import hashlib
import os
import re
import sys

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".map": "application/json",
}


def literal(data: bytes) -> str:
    # A string literal in chunks of octal escapes: compact and safe for any byte.
    out = []
    for i in range(0, len(data), 64):
        out.append('"' + "".join(f"\\{b:03o}" for b in data[i:i + 64]) + '"')
    return "\n    ".join(out) if out else '""'


def main() -> None:
    dist, out = sys.argv[1], sys.argv[2]
    assets = []
    for root, _, files in os.walk(dist):
        for name in sorted(files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, dist).replace(os.sep, "/")
            ext = os.path.splitext(name)[1]
            if ext not in TYPES:
                sys.exit(f"embed-ui: {rel}: no content type for '{ext}' files")
            data = open(full, "rb").read()
            assets.append((rel, TYPES[ext], data))
    if not any(a[0] == "index.html" for a in assets):
        sys.exit(f"embed-ui: {dist} has no index.html")
    lines = ['#include <span>', '', '#include "ui/ui_assets.h"', '',
             'namespace paceline::ui {', 'namespace {', '']
    entries = []
    for i, (rel, ctype, data) in enumerate(sorted(assets)):
        packed = gzip.compress(data, compresslevel=9, mtime=0)
        etag = '"\\"' + hashlib.sha256(data).hexdigest()[:20] + '\\""'  # C++: "\"...\""
        immutable = bool(re.search(r"-[A-Z0-9]{8}\.[a-z]+$", rel))
        lines.append(f"constexpr char kBody{i}[] =\n    {literal(data)};")
        lines.append(f"constexpr char kGzip{i}[] =\n    {literal(packed)};")
        entries.append(
            f'    {{"{rel}", "{ctype}", {etag}, {{kBody{i}, {len(data)}}}, '
            f'{{kGzip{i}, {len(packed)}}}, {"true" if immutable else "false"}}},')
    lines += ['', 'constexpr Asset kAssets[] = {'] + entries + ['};', '', '}  // namespace', '',
              'std::span<const Asset> EmbeddedAssets() { return kAssets; }', '',
              '}  // namespace paceline::ui', '']
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
