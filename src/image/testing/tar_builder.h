#pragma once
// TarBuilder (tests only): writes tar archives entry by entry with libarchive, gzip-compressed
// or not, including entries no well-behaved tool would write ("../x", "/abs", symlinks out of
// the root, hard links to missing files), so that layer unpacking can be tested against them.
//
//   TarBuilder t;
//   t.Dir("bin", 0755).File("bin/hello", "#!/bin/sh\necho hi\n", 0755).Symlink("sh", "bin/x");
//   std::string gz = t.Finish(/*gzip=*/true);
//
// Entries are written in the order they are added, as given (no cleaning of paths), in the pax
// format (plain ustar headers where they suffice), each with the modification time kMtime.
// Thread-safety: one builder per thread.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace paceline::image::testing {

class TarBuilder {
 public:
  static constexpr int64_t kMtime = 1600000000;  // 2020-09-13T12:26:40Z, of every entry

  TarBuilder();
  ~TarBuilder();
  TarBuilder(const TarBuilder&) = delete;
  TarBuilder& operator=(const TarBuilder&) = delete;

  TarBuilder& Dir(absl::string_view path, int mode = 0755, int uid = 0, int gid = 0);
  TarBuilder& File(absl::string_view path, absl::string_view content, int mode = 0644, int uid = 0,
                   int gid = 0);
  TarBuilder& Symlink(absl::string_view target, absl::string_view path);
  TarBuilder& Hardlink(absl::string_view target, absl::string_view path);
  TarBuilder& Fifo(absl::string_view path, int mode = 0644);
  // A character (`type` 'c') or block ('b') device.
  TarBuilder& Device(absl::string_view path, char type, int major, int minor, int mode = 0600);
  // ".wh.NAME" beside NAME, and ".wh..wh..opq" in DIR.
  TarBuilder& Whiteout(absl::string_view path);
  TarBuilder& OpaqueDir(absl::string_view dir);
  // The archive (the builder is spent): a tar stream, gzip-compressed when `gzip`.
  std::string Finish(bool gzip);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace paceline::image::testing
