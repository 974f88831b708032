#include "image/testing/tar_builder.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"

namespace paceline::image::testing {
namespace {

struct Entry {
  std::string path;
  unsigned type = AE_IFREG;
  int mode = 0644;
  int uid = 0;
  int gid = 0;
  std::string content;
  std::string symlink;   // symlink target
  std::string hardlink;  // hard link target
  dev_t rdev = 0;
};

[[noreturn]] void Die(archive* a, const char* what) {
  std::fprintf(stderr, "TarBuilder: %s: %s\n", what, a ? archive_error_string(a) : "");
  std::abort();
}

la_ssize_t Append(archive*, void* out, const void* buf, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

void Write(archive* a, const Entry& e) {
  archive_entry* ae = archive_entry_new();
  archive_entry_set_pathname(ae, e.path.c_str());
  archive_entry_set_filetype(ae, e.type);
  archive_entry_set_perm(ae, e.mode & 07777);
  archive_entry_set_uid(ae, e.uid);
  archive_entry_set_gid(ae, e.gid);
  archive_entry_set_mtime(ae, TarBuilder::kMtime, 0);
  if (!e.symlink.empty()) archive_entry_set_symlink(ae, e.symlink.c_str());
  if (!e.hardlink.empty()) archive_entry_set_hardlink(ae, e.hardlink.c_str());
  if (e.type == AE_IFCHR || e.type == AE_IFBLK) archive_entry_set_rdev(ae, e.rdev);
  archive_entry_set_size(ae, static_cast<la_int64_t>(e.content.size()));
  if (archive_write_header(a, ae) < ARCHIVE_WARN) Die(a, "write header");
  if (!e.content.empty() && archive_write_data(a, e.content.data(), e.content.size()) !=
                                static_cast<la_ssize_t>(e.content.size())) {
    Die(a, "write data");
  }
  archive_entry_free(ae);
}

}  // namespace

struct TarBuilder::Impl {
  std::vector<Entry> entries;
  bool spent = false;
};

TarBuilder::TarBuilder() : impl_(new Impl) {}
TarBuilder::~TarBuilder() { delete impl_; }

TarBuilder& TarBuilder::Dir(absl::string_view path, int mode, int uid, int gid) {
  impl_->entries.push_back(
      {.path = std::string(path), .type = AE_IFDIR, .mode = mode, .uid = uid, .gid = gid});
  return *this;
}

TarBuilder& TarBuilder::File(absl::string_view path, absl::string_view content, int mode, int uid,
                             int gid) {
  impl_->entries.push_back({.path = std::string(path),
                            .type = AE_IFREG,
                            .mode = mode,
                            .uid = uid,
                            .gid = gid,
                            .content = std::string(content)});
  return *this;
}

TarBuilder& TarBuilder::Symlink(absl::string_view target, absl::string_view path) {
  impl_->entries.push_back(
      {.path = std::string(path), .type = AE_IFLNK, .mode = 0777, .symlink = std::string(target)});
  return *this;
}

TarBuilder& TarBuilder::Hardlink(absl::string_view target, absl::string_view path) {
  impl_->entries.push_back(
      {.path = std::string(path), .type = AE_IFREG, .mode = 0644, .hardlink = std::string(target)});
  return *this;
}

TarBuilder& TarBuilder::Fifo(absl::string_view path, int mode) {
  impl_->entries.push_back({.path = std::string(path), .type = AE_IFIFO, .mode = mode});
  return *this;
}

TarBuilder& TarBuilder::Device(absl::string_view path, char type, int major, int minor, int mode) {
  impl_->entries.push_back({.path = std::string(path),
                            .type = static_cast<unsigned>(type == 'b' ? AE_IFBLK : AE_IFCHR),
                            .mode = mode,
                            .rdev = makedev(major, minor)});
  return *this;
}

TarBuilder& TarBuilder::Whiteout(absl::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string name =
      slash == absl::string_view::npos
          ? absl::StrCat(".wh.", path)
          : absl::StrCat(path.substr(0, slash + 1), ".wh.", path.substr(slash + 1));
  return File(name, "", 0644);
}

TarBuilder& TarBuilder::OpaqueDir(absl::string_view dir) {
  if (dir.empty()) return File(".wh..wh..opq", "", 0644);
  return File(absl::StrCat(dir, dir.back() == '/' ? "" : "/", ".wh..wh..opq"), "", 0644);
}

std::string TarBuilder::Finish(bool gzip) {
  if (impl_->spent) Die(nullptr, "Finish called twice");
  impl_->spent = true;
  std::string out;
  archive* a = archive_write_new();
  if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK) Die(a, "pax format");
  if (gzip && archive_write_add_filter_gzip(a) != ARCHIVE_OK) Die(a, "gzip filter");
  // No padding of the output to a whole block: the tar stream is the same with and without gzip.
  if (archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK) Die(a, "block size");
  if (archive_write_open(a, &out, nullptr, Append, nullptr) != ARCHIVE_OK) Die(a, "open");
  for (const Entry& e : impl_->entries) Write(a, e);
  if (archive_write_close(a) != ARCHIVE_OK) Die(a, "close");
  archive_write_free(a);
  return out;
}

}  // namespace paceline::image::testing
