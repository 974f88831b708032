// The cgroup v2 device fence (device_bpf.h).

#include "agent/isolation/device_bpf.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"

namespace paceline::agent {
namespace {

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst;
  i.src_reg = src;
  i.off = off;
  i.imm = imm;
  return i;
}

// The program: r2 = the device type (the access_type's low 16 bits), r3 = major, r4 = minor
// (struct bpf_cgroup_dev_ctx); per rule, three "jump to the next rule unless equal" and a
// "return 0"; finally "return 1".
std::vector<bpf_insn> Program(const std::vector<DeviceRule>& deny) {
  std::vector<bpf_insn> p = {
      Insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, 0, 0),
      Insn(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xFFFF),
      Insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, 4, 0),
      Insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_4, BPF_REG_1, 8, 0),
  };
  for (const DeviceRule& r : deny) {
    const int32_t type = r.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
    p.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 4, type));
    p.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_3, 0, 3, static_cast<int32_t>(r.major)));
    p.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 2, static_cast<int32_t>(r.minor)));
    p.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0));
    p.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  }
  p.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1));
  p.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  return p;
}

int Bpf(int cmd, bpf_attr& attr) {
  return static_cast<int>(::syscall(__NR_bpf, cmd, &attr, sizeof(attr)));
}

}  // namespace

absl::Status AttachDeviceDenyProgram(const std::string& cgroup_dir,
                                     const std::vector<DeviceRule>& deny) {
  const std::vector<bpf_insn> program = Program(deny);
  static const char kLicense[] = "Apache-2.0";
  char log[4096] = {};
  bpf_attr load{};
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insns = reinterpret_cast<uint64_t>(program.data());
  load.insn_cnt = static_cast<uint32_t>(program.size());
  load.license = reinterpret_cast<uint64_t>(kLicense);
  load.log_buf = reinterpret_cast<uint64_t>(log);
  load.log_size = sizeof(log);
  load.log_level = 1;
  UniqueFd prog(Bpf(BPF_PROG_LOAD, load));
  if (!prog.valid()) {
    return absl::Status(
        absl::ErrnoToStatusCode(errno),
        absl::StrCat("loading the device program for ", cgroup_dir, ": ", std::strerror(errno),
                     log[0] ? absl::StrCat(" (", log, ")") : ""));
  }
  UniqueFd dir(::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return ErrnoStatus(errno, absl::StrCat("open ", cgroup_dir));
  bpf_attr attach{};
  attach.target_fd = static_cast<uint32_t>(dir.get());
  attach.attach_bpf_fd = static_cast<uint32_t>(prog.get());
  attach.attach_type = BPF_CGROUP_DEVICE;
  if (Bpf(BPF_PROG_ATTACH, attach) != 0) {
    return ErrnoStatus(errno, absl::StrCat("attaching the device program to ", cgroup_dir));
  }
  return absl::OkStatus();
}

}  // namespace paceline::agent
