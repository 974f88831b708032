#include "archive/archive_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace paceline::archive {
namespace {

constexpr absl::string_view kIndexSuffix = ".idx";

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(errno, absl::StrCat(what, " ", path));
}

}  // namespace

std::string DataPath(const std::string& dir, const std::string& day) {
  return absl::StrCat(dir, "/", day, ".jsonl.gz");
}

std::string IndexPath(const std::string& dir, const std::string& day) {
  return absl::StrCat(dir, "/", day, kIndexSuffix);
}

std::string IndexLine(const IndexEntry& e) {
  return absl::StrCat(e.job.value(), " ", e.offset, " ", e.length, " ",
                      absl::ToUnixMillis(e.finished_at), " ", e.pool, "\n");
}

std::vector<IndexEntry> ParseIndex(absl::string_view text) {
  std::vector<IndexEntry> out;
  size_t done = 0;
  while (done < text.size()) {
    const size_t nl = text.find('\n', done);
    if (nl == absl::string_view::npos) break;
    std::vector<absl::string_view> f =
        absl::StrSplit(text.substr(done, nl - done), absl::MaxSplits(' ', 4));
    IndexEntry e;
    uint64_t job = 0;
    int64_t ms = 0;
    if (f.size() != 5 || !absl::SimpleAtoi(f[0], &job) || !absl::SimpleAtoi(f[1], &e.offset) ||
        !absl::SimpleAtoi(f[2], &e.length) || !absl::SimpleAtoi(f[3], &ms) || e.offset < 0 ||
        e.length <= 0 || f[4].empty()) {
      break;
    }
    e.job = JobId(job);
    e.finished_at = absl::FromUnixMillis(ms);
    e.pool = std::string(f[4]);
    done = nl + 1;
    e.line_end = done;
    out.push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ArchiveDays(const std::string& dir) {
  std::vector<std::string> days;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return days;
  if (ec) return absl::UnavailableError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    if (name.size() == 10 + kIndexSuffix.size() && absl::EndsWith(name, kIndexSuffix)) {
      days.push_back(name.substr(0, 10));
    }
  }
  std::sort(days.begin(), days.end());
  return days;
}

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no file ", path));
    return Errno("cannot open", path);
  }
  std::string out;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("cannot read", path);
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

absl::StatusOr<std::string> ReadRange(const std::string& path, int64_t offset, int64_t length) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Errno("cannot open", path);
  std::string out(static_cast<size_t>(length), '\0');
  int64_t got = 0;
  while (got < length) {
    ssize_t n = ::pread(fd.get(), out.data() + got, static_cast<size_t>(length - got),
                        static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("cannot read", path);
    if (n == 0) {
      return absl::DataLossError(
          absl::StrCat(path, " ends before byte ", offset + length, " that its index names"));
    }
    got += n;
  }
  return out;
}

absl::Status AppendDurably(const std::string& path, int64_t expected_size, absl::string_view data) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0640));
  if (fd.get() < 0) return Errno("cannot open", path);
  absl::Status s;
  int64_t done = 0;
  while (s.ok() && done < static_cast<int64_t>(data.size())) {
    ssize_t n = ::pwrite(fd.get(), data.data() + done, data.size() - static_cast<size_t>(done),
                         static_cast<off_t>(expected_size + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) s = Errno("cannot write", path);
    if (n > 0) done += n;
  }
  if (s.ok() && ::fsync(fd.get()) != 0) s = Errno("cannot sync", path);
  if (!s.ok()) {
    (void)::ftruncate(fd.get(), static_cast<off_t>(expected_size));
    (void)::fsync(fd.get());
  }
  return s;
}

absl::Status Truncate(const std::string& path, int64_t size) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0) return errno == ENOENT ? absl::OkStatus() : Errno("cannot open", path);
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0 || ::fsync(fd.get()) != 0) {
    return Errno("cannot truncate", path);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    return Errno("cannot stat", path);
  }
  return static_cast<int64_t>(st.st_size);
}

}  // namespace paceline::archive
