#include "agent/launch/port_allocator.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"

namespace paceline::agent {

PortAllocator::PortAllocator(uint16_t min, uint16_t max, bool probe_bind)
    : min_(min), probe_bind_(probe_bind), used_(static_cast<size_t>(max) - min + 1, false) {}

bool TcpPortBindable(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return true;  // cannot tell: do not block allocation
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  return ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

absl::StatusOr<uint16_t> PortAllocator::Allocate() {
  size_t n = used_.size();
  for (size_t tried = 0; tried < n; ++tried) {
    size_t i = next_;
    next_ = (next_ + 1) % n;
    if (used_[i]) continue;
    uint16_t port = static_cast<uint16_t>(min_ + i);
    if (probe_bind_ && !TcpPortBindable(port)) continue;
    used_[i] = true;
    ++used_count_;
    return port;
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("no free port in [", min_, ", ", min_ + n - 1, "] (", used_count_,
                   " used by tasks, the rest by other programs); widen the agent's port range"));
}

absl::Status PortAllocator::Reserve(uint16_t port) {
  if (port < min_ || static_cast<size_t>(port - min_) >= used_.size()) {
    return absl::OutOfRangeError(absl::StrCat("port ", port, " is outside the agent's range [",
                                              min_, ", ", min_ + used_.size() - 1, "]"));
  }
  size_t i = port - min_;
  if (used_[i]) {
    return absl::AlreadyExistsError(absl::StrCat("port ", port, " is used by another task"));
  }
  used_[i] = true;
  ++used_count_;
  return absl::OkStatus();
}

void PortAllocator::Release(uint16_t port) {
  if (port < min_ || static_cast<size_t>(port - min_) >= used_.size()) return;
  size_t i = port - min_;
  if (used_[i]) {
    used_[i] = false;
    --used_count_;
  }
}

bool PortAllocator::IsUsed(uint16_t port) const {
  return port >= min_ && static_cast<size_t>(port - min_) < used_.size() && used_[port - min_];
}

absl::Status PortsHook::Prepare(RunContext& ctx) {
  for (const std::string& name : ctx.request.spec.ports) {
    auto assigned = ctx.request.ports.find(name);
    absl::Status s;
    uint16_t port = 0;
    if (assigned != ctx.request.ports.end()) {
      port = assigned->second;
      s = ports_.Reserve(port);
    } else {
      absl::StatusOr<uint16_t> p = ports_.Allocate();
      s = p.status();
      if (p.ok()) port = *p;
    }
    if (!s.ok()) {
      Cleanup(ctx, CleanupKind::kRollback);
      return absl::Status(s.code(), absl::StrCat("port '", name, "': ", s.message()));
    }
    ctx.ports[name] = port;
    ctx.env[absl::StrCat("PACELINE_PORT_", PortEnvSuffix(name))] = absl::StrCat(port);
  }
  return absl::OkStatus();
}

absl::Status PortsHook::Recover(RunContext& ctx) {
  for (const auto& [name, port] : ctx.ports) {
    absl::Status s = ports_.Reserve(port);
    if (!s.ok() && !absl::IsOutOfRange(s)) return s;  // a narrowed range keeps old tasks
  }
  return absl::OkStatus();
}

void PortsHook::Cleanup(RunContext& ctx, CleanupKind) {
  for (const auto& [name, port] : ctx.ports) ports_.Release(port);
  ctx.ports.clear();
}

}  // namespace paceline::agent
