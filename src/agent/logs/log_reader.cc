#include "agent/logs/log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/file_util.h"

namespace paceline::agent {
namespace {

struct Layout {
  int64_t base = 0;
  int64_t current_size = 0;
  int64_t rotated_size = 0;
  int64_t begin() const { return base - rotated_size; }
  int64_t end() const { return base + current_size; }
};

int64_t ReadBase(const std::string& file) {
  absl::StatusOr<std::string> text = ReadFile(file);
  int64_t v = 0;
  if (text.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &v)) return v;
  return 0;
}

// The files live in the task's sandbox, which its user controls, and the agent reads them as
// root: only a plain file with a single link counts (a symlink or hard link a task planted to
// read someone else's file is treated as absent).
bool PlainFile(const struct stat& st) { return S_ISREG(st.st_mode) && st.st_nlink == 1; }

int64_t SizeOf(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && PlainFile(st) ? static_cast<int64_t>(st.st_size) : -1;
}

// Appends [from, from + len) of `path` to `out`; returns bytes read.
int64_t ReadRange(const std::string& path, int64_t from, int64_t len, std::string* out) {
  if (len <= 0) return 0;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return 0;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !PlainFile(st)) return 0;
  size_t old = out->size();
  out->resize(old + static_cast<size_t>(len));
  int64_t got = 0;
  while (got < len) {
    ssize_t n = ::pread(fd.get(), out->data() + old + got, static_cast<size_t>(len - got),
                        static_cast<off_t>(from + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += n;
  }
  out->resize(old + static_cast<size_t>(got));
  return got;
}

}  // namespace

absl::StatusOr<LogChunk> ReadLogFrom(const LogFiles& f, int64_t offset, int64_t max_bytes) {
  if (offset < 0 || max_bytes < 0) {
    return absl::InvalidArgumentError("log offset and max_bytes must not be negative");
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    Layout l;
    l.base = ReadBase(f.base_file);
    l.current_size = SizeOf(f.current);
    if (l.current_size < 0) {
      if (attempt == 0 && SizeOf(f.rotated) < 0) {
        return absl::NotFoundError(absl::StrCat("no log file ", f.current));
      }
      continue;  // between a rotation's rename and the new file
    }
    l.rotated_size = std::max<int64_t>(SizeOf(f.rotated), 0);
    if (l.rotated_size > l.base) l.rotated_size = l.base;  // a stale .1 from an old layout
    LogChunk c;
    int64_t start = std::max(offset, l.begin());
    c.skipped = start - offset;
    start = std::min(start, l.end());
    c.offset = start;
    int64_t want = std::min(max_bytes, l.end() - start);
    if (start < l.base) {
      int64_t n = std::min(want, l.base - start);
      int64_t got = ReadRange(f.rotated, start - l.begin() + (SizeOf(f.rotated) - l.rotated_size),
                              n, &c.data);
      if (got == n) {
        ReadRange(f.current, 0, want - n, &c.data);
      }
    } else {
      ReadRange(f.current, start - l.base, want, &c.data);
    }
    if (ReadBase(f.base_file) != l.base) continue;  // rotated meanwhile: read again
    c.next_offset = c.offset + static_cast<int64_t>(c.data.size());
    return c;
  }
  return absl::UnavailableError("the log rotates too fast to be read; retry");
}

absl::StatusOr<LogChunk> ReadLogTail(const LogFiles& f, int64_t lines, int64_t max_bytes) {
  if (lines < 0) return absl::InvalidArgumentError("tail lines must not be negative");
  int64_t end = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    int64_t base = ReadBase(f.base_file);
    int64_t size = SizeOf(f.current);
    if (size >= 0) {
      end = base + size;
      break;
    }
  }
  absl::StatusOr<LogChunk> c = ReadLogFrom(f, std::max<int64_t>(0, end - max_bytes), max_bytes);
  if (!c.ok()) return c;
  c->skipped = 0;
  const std::string& d = c->data;
  size_t pos = d.size();
  if (pos > 0 && d[pos - 1] == '\n') --pos;  // the last line's own terminator
  int64_t found = 0;
  size_t start = 0;
  while (pos > 0) {
    size_t nl = d.rfind('\n', pos - 1);
    if (nl == std::string::npos) break;
    if (++found == lines) {
      start = nl + 1;
      break;
    }
    pos = nl;
  }
  if (lines == 0) start = d.size();
  c->data.erase(0, start);
  c->offset += static_cast<int64_t>(start);
  return c;
}

}  // namespace paceline::agent
