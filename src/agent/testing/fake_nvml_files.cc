// The files of the fake NVML (fake_nvml.h), written by tests.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "agent/testing/fake_nvml.h"

namespace paceline::agent::testing {
namespace {

std::string Underscores(const std::string& name) { return absl::StrReplaceAll(name, {{" ", "_"}}); }

absl::Status Write(const std::string& path, const std::string& text, int flags) {
  int fd = ::open(path.c_str(), flags | O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return absl::InternalError(absl::StrCat("write ", path, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace

std::string FakeNvmlPath() { return PACELINE_FAKE_NVML; }

absl::Status WriteFakeNvmlDevices(const std::string& path, const std::vector<FakeGpu>& gpus) {
  std::string text;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const FakeGpu& g = gpus[i];
    absl::StrAppend(&text, "gpu ", Underscores(g.name), " ", g.memory_mib, " ", g.uuid, " ",
                    g.minor, g.events ? "" : " noevents", "\n");
    for (const FakeMig& m : g.migs) {
      absl::StrAppend(&text, "mig ", i, " ", m.slot, " ", m.gpu_instance, " ", Underscores(m.name),
                      " ", m.memory_mib, " ", m.uuid, "\n");
    }
  }
  return Write(path, text, O_TRUNC);
}

absl::Status InjectFakeNvmlEvent(const std::string& events_path, absl::string_view line) {
  return Write(events_path, absl::StrCat(line, "\n"), O_APPEND);
}

void UseFakeNvml(const std::string& devices_path, const std::string& events_path) {
  ::setenv("PACELINE_FAKE_NVML_DEVICES", devices_path.c_str(), 1);
  ::setenv("PACELINE_FAKE_NVML_EVENTS", events_path.c_str(), 1);
}

}  // namespace paceline::agent::testing
