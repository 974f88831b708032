#include "agent/wrapper_protocol.h"

#include <cstdlib>

namespace paceline::agent::wrapper {

std::string FormatStatus(const ExitStatus& s) {
  std::string out;
  if (s.task_pid > 0) {
    out += "task_pid=" + std::to_string(s.task_pid) + "\n";
    out += "task_start=" + std::to_string(s.task_start) + "\n";
  }
  switch (s.kind) {
    case ExitStatus::Kind::kExited:
      out += "exit_code=" + std::to_string(s.value) + "\n";
      break;
    case ExitStatus::Kind::kSignaled:
      out += "exit_signal=" + std::to_string(s.value) + "\n";
      break;
    case ExitStatus::Kind::kLaunchError: {
      std::string msg = s.error;
      for (char& c : msg) {
        if (c == '\n') c = ' ';
      }
      out += "launch_error=" + msg + "\n";
      break;
    }
    default:
      break;
  }
  return out;
}

ExitStatus ParseStatus(const std::string& text) {
  ExitStatus s;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    if (key == "task_pid") {
      s.task_pid = std::atoi(value.c_str());
      if (s.kind == ExitStatus::Kind::kUnknown) s.kind = ExitStatus::Kind::kRunning;
    } else if (key == "task_start") {
      s.task_start = std::strtoull(value.c_str(), nullptr, 10);
    } else if (key == "exit_code") {
      s.kind = ExitStatus::Kind::kExited;
      s.value = std::atoi(value.c_str());
    } else if (key == "exit_signal") {
      s.kind = ExitStatus::Kind::kSignaled;
      s.value = std::atoi(value.c_str());
    } else if (key == "launch_error") {
      s.kind = ExitStatus::Kind::kLaunchError;
      s.error = value;
    }
  }
  return s;
}

}  // namespace paceline::agent::wrapper
