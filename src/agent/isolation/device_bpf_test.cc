// AttachDeviceDenyProgram (device_bpf.h) on the real kernel: a process in a cgroup v2 cgroup
// with the program attached is refused the devices it names (EPERM) and opens the others.
// Needs root and a cgroup2 mount (the host's, or the "unified" one of a hybrid v1 host).
#include "agent/isolation/device_bpf.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace paceline::agent {
namespace {

// The cgroup2 mount point, "" when there is none.
std::string Cgroup2Mount() {
  std::ifstream mounts("/proc/mounts");
  for (std::string line; std::getline(mounts, line);) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() > 2 && f[2] == "cgroup2") return f[1];
  }
  return "";
}

// In a child that joins `cgroup`: 0 when /dev/zero is refused with EPERM and /dev/null opens.
int ProbeIn(const std::string& cgroup) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::ofstream(cgroup + "/cgroup.procs") << ::getpid() << std::flush;
    const int zero = ::open("/dev/zero", O_RDONLY);
    const bool refused = zero < 0 && errno == EPERM;
    const int null = ::open("/dev/null", O_RDONLY);
    ::_exit(refused && null >= 0 ? 0 : (refused ? 2 : 1));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DeviceBpf, ACgroupsProgramRefusesTheNamedDevicesAndAllowsTheRest) {
  const std::string mount = Cgroup2Mount();
  if (::geteuid() != 0 || mount.empty()) GTEST_SKIP() << "needs root and a cgroup2 mount";
  const std::string cgroup = absl::StrCat(mount, "/paceline-device-bpf-test-", ::getpid());
  if (::mkdir(cgroup.c_str(), 0755) != 0) {
    GTEST_SKIP() << "cannot make a cgroup in " << mount << ": " << std::strerror(errno);
  }
  // /dev/zero is 1:5; the block rule 1:3 must not touch /dev/null (a character device 1:3).
  absl::Status s = AttachDeviceDenyProgram(cgroup, {DeviceRule{'b', 1, 3}, DeviceRule{'c', 1, 5}});
  if (absl::IsPermissionDenied(s) || absl::IsUnimplemented(s)) {
    ::rmdir(cgroup.c_str());
    GTEST_SKIP() << "the kernel refuses device programs here: " << s;
  }
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ProbeIn(cgroup), 0) << "1: /dev/zero opened; 2: /dev/null refused";
  // Attached again with no rule: it replaces the first, and /dev/zero opens.
  ASSERT_TRUE(AttachDeviceDenyProgram(cgroup, {}).ok());
  EXPECT_EQ(ProbeIn(cgroup), 1);
  EXPECT_EQ(::rmdir(cgroup.c_str()), 0);
}

}  // namespace
}  // namespace paceline::agent
