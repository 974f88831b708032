#include "image/layer_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "image/digest.h"
#include "image/layer_stream.h"
#include "image/rootfs_path.h"

namespace paceline::image {
namespace {

using internal::DirInRoot;
using internal::Fd;
using internal::IoError;
using internal::LayerStream;
using internal::OpenDirInRoot;
using internal::RemoveTree;
using internal::SplitEntryPath;

constexpr absl::string_view kWhiteoutPrefix = ".wh.";
constexpr absl::string_view kOpaqueMarker = ".wh..wh..opq";
constexpr size_t kReadBuffer = 1 << 16;

// libarchive reads the tar stream through this.
struct TarSource {
  LayerStream* stream;
  std::vector<char> buf = std::vector<char>(kReadBuffer);
};

la_ssize_t ReadTar(archive* a, void* data, const void** out) {
  auto* source = static_cast<TarSource*>(data);
  absl::StatusOr<size_t> n = source->stream->Read(source->buf.data(), source->buf.size());
  if (!n.ok()) {
    archive_set_error(a, EIO, "%s", std::string(n.status().message()).c_str());
    return -1;
  }
  *out = source->buf.data();
  return static_cast<la_ssize_t>(*n);
}

// Applies the entries of one layer, in order. What this layer wrote is remembered as (parent
// directory's device and inode, name), including the directories entries were written through,
// so that its whiteouts and opaque markers hide only what the layers below put there.
class Unpacker {
 public:
  Unpacker(archive* a, int root_fd, const LayerStream& stream, UnpackStats* stats)
      : a_(a), root_fd_(root_fd), stream_(stream), stats_(stats) {}

  absl::Status Apply(archive_entry* e);
  // Sets the modes and times of the directories, now that nothing more is written in them.
  absl::Status Finish();

  // The status of a libarchive call that failed: the stream's error, or DATA_LOSS.
  absl::Status ReadError() const {
    if (!stream_.error().ok()) return stream_.error();
    const char* what = archive_error_string(a_);
    return absl::DataLossError(absl::StrCat("corrupt or truncated tar stream (",
                                            stream_.compression(), "): ", what ? what : "?"));
  }

 private:
  struct Meta {
    uid_t uid = 0;
    gid_t gid = 0;
    mode_t perm = 0;
    struct timespec times[2];  // atime, mtime
  };
  struct DeferredDir {
    std::string path;  // real, below the root
    dev_t dev;
    ino_t ino;
    Meta meta;
  };
  using Key = std::tuple<dev_t, ino_t, std::string>;

  absl::Status ApplyIn(archive_entry* e, const std::vector<std::string>& parts);
  absl::Status Whiteout(const std::vector<std::string>& parts);
  absl::Status Opaque(DirInRoot dir);
  absl::Status WriteFile(int fd, archive_entry* e, const std::string& at);
  absl::Status Hardlink(archive_entry* e, const DirInRoot& dir, const std::string& base);
  absl::Status SetMeta(int fd, const Meta& m, const std::string& at) const;
  absl::StatusOr<Meta> MetaOf(archive_entry* e) const;
  void Touch(const DirInRoot& dir, const std::string& base);
  bool Touched(const struct stat& dir, const std::string& name) const {
    return touched_.contains(Key(dir.st_dev, dir.st_ino, name));
  }

  archive* a_;
  int root_fd_;
  const LayerStream& stream_;
  UnpackStats* stats_;
  const bool root_ = ::geteuid() == 0;
  absl::flat_hash_set<Key> touched_;
  std::vector<DeferredDir> dirs_;
};

absl::Status Unpacker::Apply(archive_entry* e) {
  ++stats_->entries;
  const char* raw = archive_entry_pathname(e);
  if (raw == nullptr) raw = archive_entry_pathname_utf8(e);
  if (raw == nullptr) return absl::InvalidArgumentError("an entry without a name");
  const std::string name = absl::StrCat("entry \"", absl::CHexEscape(raw), "\"");
  absl::StatusOr<std::vector<std::string>> parts = SplitEntryPath(raw);
  if (!parts.ok()) return WithContext(parts.status(), name);
  return WithContext(ApplyIn(e, *parts), name);
}

absl::Status Unpacker::ApplyIn(archive_entry* e, const std::vector<std::string>& parts) {
  const mode_t type = archive_entry_filetype(e);
  const bool hardlink =
      archive_entry_hardlink(e) != nullptr || archive_entry_hardlink_utf8(e) != nullptr;
  if (parts.empty()) {  // "./": the root itself
    if (hardlink || type != AE_IFDIR) {
      return absl::InvalidArgumentError("only a directory can be the root");
    }
    ASSIGN_OR_RETURN(Meta meta, MetaOf(e));
    struct stat st;
    if (::fstat(root_fd_, &st) != 0) return IoError(errno, "stat the rootfs");
    if (root_ && ::fchown(root_fd_, meta.uid, meta.gid) != 0) return IoError(errno, "chown /");
    dirs_.push_back({"", st.st_dev, st.st_ino, meta});
    return absl::OkStatus();
  }
  if (absl::StartsWith(parts.back(), kWhiteoutPrefix)) return Whiteout(parts);
  if (!hardlink && (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFSOCK)) {
    return absl::OkStatus();  // devices come from the runtime
  }
  if (!hardlink && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK && type != AE_IFIFO) {
    return absl::InvalidArgumentError(absl::StrCat("unknown file type ", type));
  }

  ASSIGN_OR_RETURN(DirInRoot dir, OpenDirInRoot(root_fd_, std::span(parts).first(parts.size() - 1),
                                                {.create = true}));
  const std::string& base = parts.back();
  const std::string at = internal::JoinPath(dir.Path(), base);
  Touch(dir, base);

  struct stat old;
  bool exists = ::fstatat(dir.fd.get(), base.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0;
  if (!exists && errno != ENOENT) return IoError(errno, absl::StrCat("stat ", at));
  if (hardlink) {
    return Hardlink(e, dir, base);
  }
  ASSIGN_OR_RETURN(Meta meta, MetaOf(e));
  if (exists && !(type == AE_IFDIR && S_ISDIR(old.st_mode))) {
    RETURN_IF_ERROR(RemoveTree(dir.fd.get(), base));  // an entry replaces what is there
    exists = false;
  }
  switch (type) {
    case AE_IFDIR: {
      if (!exists && ::mkdirat(dir.fd.get(), base.c_str(), 0700) != 0) {
        return IoError(errno, absl::StrCat("mkdir ", at));
      }
      Fd fd(::openat(dir.fd.get(), base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      struct stat st;
      if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
        return IoError(errno, absl::StrCat("open ", at));
      }
      if (root_ && ::fchown(fd.get(), meta.uid, meta.gid) != 0) {
        return IoError(errno, absl::StrCat("chown ", at));
      }
      dirs_.push_back({at, st.st_dev, st.st_ino, meta});  // mode and times at the end
      return absl::OkStatus();
    }
    case AE_IFREG: {
      Fd fd(::openat(dir.fd.get(), base.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!fd.valid()) return IoError(errno, absl::StrCat("create ", at));
      RETURN_IF_ERROR(WriteFile(fd.get(), e, at));
      return SetMeta(fd.get(), meta, at);
    }
    case AE_IFIFO: {
      if (::mknodat(dir.fd.get(), base.c_str(), S_IFIFO | 0600, 0) != 0) {
        return IoError(errno, absl::StrCat("mkfifo ", at));
      }
      // Open for reading without blocking (no writer needed) to set the rest through the fd.
      Fd fd(::openat(dir.fd.get(), base.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
      if (!fd.valid()) return IoError(errno, absl::StrCat("open ", at));
      return SetMeta(fd.get(), meta, at);
    }
    default: {  // AE_IFLNK: written as it is, never followed
      const char* target = archive_entry_symlink(e);
      if (target == nullptr) target = archive_entry_symlink_utf8(e);
      if (target == nullptr || *target == '\0') {
        return absl::InvalidArgumentError("a symlink without a target");
      }
      if (::symlinkat(target, dir.fd.get(), base.c_str()) != 0) {
        return IoError(errno, absl::StrCat("symlink ", at));
      }
      if (root_ &&
          ::fchownat(dir.fd.get(), base.c_str(), meta.uid, meta.gid, AT_SYMLINK_NOFOLLOW) != 0) {
        return IoError(errno, absl::StrCat("chown ", at));
      }
      if (::utimensat(dir.fd.get(), base.c_str(), meta.times, AT_SYMLINK_NOFOLLOW) != 0) {
        return IoError(errno, absl::StrCat("set times of ", at));
      }
      return absl::OkStatus();
    }
  }
}

absl::Status Unpacker::Hardlink(archive_entry* e, const DirInRoot& dir, const std::string& base) {
  const char* raw = archive_entry_hardlink(e);
  if (raw == nullptr) raw = archive_entry_hardlink_utf8(e);
  const std::string what = absl::StrCat("hard link target \"", absl::CHexEscape(raw), "\"");
  absl::StatusOr<std::vector<std::string>> parts = SplitEntryPath(raw);
  if (!parts.ok()) return WithContext(parts.status(), what);
  if (parts->empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": the root"));
  absl::StatusOr<DirInRoot> tdir =
      OpenDirInRoot(root_fd_, std::span(*parts).first(parts->size() - 1), {});
  if (absl::IsNotFound(tdir.status())) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not in the rootfs"));
  }
  if (!tdir.ok()) return WithContext(tdir.status(), what);
  const std::string& tbase = parts->back();
  struct stat target;
  if (::fstatat(tdir->fd.get(), tbase.c_str(), &target, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT)
      return absl::InvalidArgumentError(absl::StrCat(what, " is not in the rootfs"));
    return IoError(errno, absl::StrCat("stat ", what));
  }
  if (S_ISDIR(target.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is a directory"));
  }
  struct stat old;
  if (::fstatat(dir.fd.get(), base.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0) {
    if (old.st_dev == target.st_dev && old.st_ino == target.st_ino) return absl::OkStatus();
    RETURN_IF_ERROR(RemoveTree(dir.fd.get(), base));
  }
  // Flags 0: a symlink target is linked itself, not followed.
  if (::linkat(tdir->fd.get(), tbase.c_str(), dir.fd.get(), base.c_str(), 0) != 0) {
    if (errno == ENOENT) return absl::InvalidArgumentError(absl::StrCat(what, " is gone"));
    return IoError(errno, absl::StrCat("link ", internal::JoinPath(dir.Path(), base)));
  }
  return absl::OkStatus();
}

absl::Status Unpacker::WriteFile(int fd, archive_entry* e, const std::string& at) {
  int64_t end = 0;
  while (true) {
    const void* buf = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    const int r = archive_read_data_block(a_, &buf, &size, &offset);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) return ReadError();
    const char* p = static_cast<const char*>(buf);
    size_t left = size;
    while (left > 0) {  // at `offset`: sparse files leave holes
      ssize_t n = ::pwrite(fd, p, left, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return IoError(errno, absl::StrCat("write ", at));
      p += n;
      left -= static_cast<size_t>(n);
      offset += n;
      stats_->bytes += n;
    }
    end = std::max<int64_t>(end, offset);
  }
  const int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : end;
  if (size > end && ::ftruncate(fd, size) != 0) {
    return IoError(errno, absl::StrCat("truncate ", at));
  }
  return absl::OkStatus();
}

absl::StatusOr<Unpacker::Meta> Unpacker::MetaOf(archive_entry* e) const {
  Meta m;
  const int64_t uid = archive_entry_uid(e);
  const int64_t gid = archive_entry_gid(e);
  constexpr int64_t kMaxId = 0xfffffffe;  // (uid_t)-1 means "unchanged" to chown
  if (uid < 0 || uid > kMaxId || gid < 0 || gid > kMaxId) {
    return absl::InvalidArgumentError(absl::StrCat("owner ", uid, ":", gid, " out of range"));
  }
  m.uid = static_cast<uid_t>(uid);
  m.gid = static_cast<gid_t>(gid);
  m.perm = archive_entry_perm(e) & 07777;
  if (archive_entry_mtime_is_set(e)) {
    m.times[1] = {archive_entry_mtime(e), archive_entry_mtime_nsec(e)};
  } else {
    m.times[1] = {0, UTIME_OMIT};
  }
  if (archive_entry_atime_is_set(e)) {
    m.times[0] = {archive_entry_atime(e), archive_entry_atime_nsec(e)};
  } else {
    m.times[0] = m.times[1];
  }
  for (struct timespec& t : m.times) {
    if (t.tv_nsec != UTIME_OMIT && (t.tv_nsec < 0 || t.tv_nsec > 999999999)) t.tv_nsec = 0;
  }
  return m;
}

absl::Status Unpacker::SetMeta(int fd, const Meta& m, const std::string& at) const {
  // The owner first: chown clears the setuid and setgid bits.
  if (root_ && ::fchown(fd, m.uid, m.gid) != 0) return IoError(errno, absl::StrCat("chown ", at));
  if (::fchmod(fd, m.perm) != 0) return IoError(errno, absl::StrCat("chmod ", at));
  if (::futimens(fd, m.times) != 0) return IoError(errno, absl::StrCat("set times of ", at));
  return absl::OkStatus();
}

void Unpacker::Touch(const DirInRoot& dir, const std::string& base) {
  for (const internal::DirStep& s : dir.steps)
    touched_.insert(Key(s.parent_dev, s.parent_ino, s.name));
  struct stat st;
  if (::fstat(dir.fd.get(), &st) == 0) touched_.insert(Key(st.st_dev, st.st_ino, base));
}

absl::Status Unpacker::Whiteout(const std::vector<std::string>& parts) {
  ++stats_->whiteouts;
  const std::string& base = parts.back();
  absl::StatusOr<DirInRoot> dir =
      OpenDirInRoot(root_fd_, std::span(parts).first(parts.size() - 1), {});
  if (absl::IsNotFound(dir.status())) return absl::OkStatus();  // nothing below to hide
  RETURN_IF_ERROR(dir.status());
  if (base == kOpaqueMarker) return Opaque(*std::move(dir));
  if (absl::StartsWith(base, ".wh..wh.")) return absl::OkStatus();  // aufs' own, not OCI
  const std::string hidden = base.substr(kWhiteoutPrefix.size());
  if (hidden.empty() || hidden == "." || hidden == "..") {
    return absl::InvalidArgumentError("a whiteout of no file");
  }
  struct stat st;
  if (::fstat(dir->fd.get(), &st) != 0) return IoError(errno, "stat " + dir->Path());
  if (Touched(st, hidden)) return absl::OkStatus();  // this layer's own: not hidden by it
  return RemoveTree(dir->fd.get(), hidden);
}

absl::Status Unpacker::Opaque(DirInRoot dir) {
  // Depth first over the directories this layer wrote in, one open at a time.
  std::vector<std::vector<std::string>> todo;
  while (true) {
    struct stat st;
    if (::fstat(dir.fd.get(), &st) != 0) return IoError(errno, "stat " + dir.Path());
    std::vector<std::pair<std::string, bool>> children;  // name, is a directory
    {
      Fd listing(::openat(dir.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      DIR* d = listing.valid() ? ::fdopendir(listing.get()) : nullptr;
      if (d == nullptr) return IoError(errno, "opendir " + dir.Path());
      listing.Release();
      while (struct dirent* de = ::readdir(d)) {
        const std::string n = de->d_name;
        if (n == "." || n == "..") continue;
        struct stat cst;
        const bool is_dir = ::fstatat(dir.fd.get(), n.c_str(), &cst, AT_SYMLINK_NOFOLLOW) == 0 &&
                            S_ISDIR(cst.st_mode);
        children.emplace_back(n, is_dir);
      }
      ::closedir(d);
    }
    std::vector<std::string> here;
    for (const internal::DirStep& s : dir.steps) here.push_back(s.name);
    for (const auto& [n, is_dir] : children) {
      if (!Touched(st, n)) {
        RETURN_IF_ERROR(RemoveTree(dir.fd.get(), n));
      } else if (is_dir) {
        todo.push_back(here);
        todo.back().push_back(n);
      }
    }
    if (todo.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(dir, OpenDirInRoot(root_fd_, todo.back(), {.symlinks = false}));
    todo.pop_back();
  }
}

absl::Status Unpacker::Finish() {
  for (const DeferredDir& d : dirs_) {
    ASSIGN_OR_RETURN(std::vector<std::string> parts, SplitEntryPath(d.path));
    absl::StatusOr<DirInRoot> dir = OpenDirInRoot(root_fd_, parts, {.symlinks = false});
    if (!dir.ok()) continue;  // replaced by a later entry, or removed
    struct stat st;
    if (::fstat(dir->fd.get(), &st) != 0) return IoError(errno, "stat " + d.path);
    if (st.st_dev != d.dev || st.st_ino != d.ino) continue;
    if (::fchmod(dir->fd.get(), d.meta.perm) != 0) return IoError(errno, "chmod " + d.path);
    if (::futimens(dir->fd.get(), d.meta.times) != 0) {
      return IoError(errno, "set times of " + d.path);
    }
  }
  return absl::OkStatus();
}

absl::Status Apply(const std::string& layer_path, int root_fd, const std::string& diff_id,
                   UnpackStats* stats) {
  ASSIGN_OR_RETURN(std::unique_ptr<LayerStream> stream, LayerStream::Open(layer_path));
  std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
  if (a == nullptr) return absl::ResourceExhaustedError("archive_read_new");
  TarSource source{stream.get()};
  Unpacker unpacker(a.get(), root_fd, *stream, stats);
  if (archive_read_support_format_tar(a.get()) != ARCHIVE_OK) {
    return absl::InternalError(archive_error_string(a.get()));
  }
  if (archive_read_open(a.get(), &source, nullptr, ReadTar, nullptr) != ARCHIVE_OK) {
    return unpacker.ReadError();
  }
  while (true) {
    archive_entry* e = nullptr;
    const int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) return unpacker.ReadError();
    RETURN_IF_ERROR(unpacker.Apply(e));
  }
  RETURN_IF_ERROR(unpacker.Finish());
  // To the end of the stream: the digest covers all of it, gzip's trailer is checked.
  RETURN_IF_ERROR(stream->Drain());
  if (!diff_id.empty()) {
    const std::string digest = stream->Digest();
    if (digest != diff_id) {
      return absl::DataLossError(
          absl::StrCat("the uncompressed layer is ", digest, ", not its diff_id ", diff_id));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyLayer(const std::string& layer_path, const std::string& rootfs,
                        const std::string& diff_id, UnpackStats* stats) {
  UnpackStats local;
  if (stats == nullptr) stats = &local;
  *stats = UnpackStats();
  if (!diff_id.empty() && DigestHex(diff_id).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("diff_id \"", absl::CHexEscape(diff_id), "\" is not a sha256 digest"));
  }
  Fd root(::open(rootfs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return IoError(errno, absl::StrCat("open rootfs ", rootfs));
  return WithContext(Apply(layer_path, root.get(), diff_id, stats),
                     absl::StrCat("layer ", layer_path));
}

}  // namespace paceline::image
