#include "agent/launch/wrapper_protocol.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace paceline::agent::wrapper {

std::string FormatStatusLine(const ExitStatus& s) {
  switch (s.kind) {
    case ExitStatus::Kind::kRunning:
      return "started " + std::to_string(s.task_pid) + " " + std::to_string(s.task_start) + "\n";
    case ExitStatus::Kind::kExited:
      return "exit_code " + std::to_string(s.value) + "\n";
    case ExitStatus::Kind::kSignaled:
      return "exit_signal " + std::to_string(s.value) + "\n";
    case ExitStatus::Kind::kLaunchError: {
      std::string msg = s.error;
      for (char& c : msg) {
        if (c == '\n') c = ' ';
      }
      return "launch_error " + msg + "\n";
    }
    default:
      return "";
  }
}

ExitStatus ParseStatus(const std::string& text) {
  ExitStatus s;
  size_t pos = 0;
  for (;;) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) break;  // an incomplete last line does not count
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    std::string key = line.substr(0, sp);
    std::string rest = line.substr(sp + 1);
    if (key == "started") {
      char* after = nullptr;
      s.task_pid = static_cast<int>(std::strtol(rest.c_str(), &after, 10));
      s.task_start = std::strtoull(after, nullptr, 10);
      if (s.kind == ExitStatus::Kind::kUnknown) s.kind = ExitStatus::Kind::kRunning;
    } else if (key == "exit_code") {
      s.kind = ExitStatus::Kind::kExited;
      s.value = std::atoi(rest.c_str());
    } else if (key == "exit_signal") {
      s.kind = ExitStatus::Kind::kSignaled;
      s.value = std::atoi(rest.c_str());
    } else if (key == "launch_error") {
      s.kind = ExitStatus::Kind::kLaunchError;
      s.error = rest;
    } else if (key == "last_run") {
      s.last_run = true;
    }
  }
  return s;
}

namespace {

void PutStrings(const std::vector<std::string>& v, std::string* out) {
  *out += std::to_string(v.size());
  out->push_back('\0');
  for (const std::string& s : v) {
    *out += s;
    out->push_back('\0');
  }
}

// Takes "<n>\0s1\0...sn\0" from data[*pos, len); false when malformed.
bool TakeStrings(const char* data, size_t len, size_t* pos, std::vector<std::string>* out) {
  auto take = [&](std::string* s) {
    const void* nul = std::memchr(data + *pos, '\0', len - *pos);
    if (nul == nullptr) return false;
    size_t end = static_cast<size_t>(static_cast<const char*>(nul) - data);
    s->assign(data + *pos, end - *pos);
    *pos = end + 1;
    return true;
  };
  std::string count;
  if (*pos >= len || !take(&count) || count.empty() || count.size() > 7 ||
      (count.size() > 1 && count[0] == '0')) {
    return false;  // a count in decimal, as EncodeRequest writes it
  }
  size_t n = 0;
  for (char c : count) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  if (n > len) return false;  // each string takes at least its terminator
  out->resize(n);
  for (std::string& s : *out) {
    if (*pos >= len || !take(&s)) return false;
  }
  return true;
}

}  // namespace

std::string EncodeRequest(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env) {
  std::string out;
  PutStrings(argv, &out);
  PutStrings(env, &out);
  return out;
}

std::vector<char*> ExecArray(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

bool DecodeRequest(const char* data, size_t len, std::vector<std::string>* argv,
                   std::vector<std::string>* env) {
  size_t pos = 0;
  return TakeStrings(data, len, &pos, argv) && TakeStrings(data, len, &pos, env) && pos == len;
}

void InitWrapperSpawn(posix_spawnattr_t* attr, posix_spawn_file_actions_t* fa) {
  posix_spawnattr_init(attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(attr, &none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setflags(attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_init(fa);
  posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(fa, 1, 2);
}

bool MarkStarted(const std::string& sandbox) {
  struct stat st;
  if (::stat(sandbox.c_str(), &st) != 0) return false;
  return ::chmod(sandbox.c_str(), (st.st_mode & 07777) | kStartedMark) == 0;
}

bool HasStarted(const std::string& sandbox) {
  struct stat st;
  if (::stat(sandbox.c_str(), &st) != 0) return false;
  // Sandboxes of runs started before the mark existed have a stdout file instead.
  return (st.st_mode & kStartedMark) != 0 || ::access((sandbox + "/stdout").c_str(), F_OK) == 0;
}

}  // namespace paceline::agent::wrapper
