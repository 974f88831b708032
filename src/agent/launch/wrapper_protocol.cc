#include "agent/launch/wrapper_protocol.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

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
    }
  }
  return s;
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
