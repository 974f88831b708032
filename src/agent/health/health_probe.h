#pragma once
// HealthProbe: one kind of health check, run asynchronously on the runtime's event loop (no
// thread, no blocking call): the runtime watches fd() for events() and calls OnReady().
//
//   TCP      non-blocking connect to 127.0.0.1:<port>; healthy when it connects.
//   HTTP     connect, send "GET <path> HTTP/1.0"; healthy on a 2xx or 3xx status line.
//   command  /bin/sh -c <command> through the wrapper in exec mode: as the task user, in the
//            task's cgroup, sandbox and environment; healthy on exit code 0. Output discarded.
// Timeouts are the caller's: it calls Abort() when the probe ran too long (a failure).
//
// Thread-safety: runtime thread only.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "agent/launch/wrapper_launcher.h"

namespace paceline::agent {

class HealthProbe {
 public:
  virtual ~HealthProbe() = default;
  // Begins one check; returns the result at once when already known (e.g. refused).
  virtual std::optional<bool> Start() = 0;
  virtual int fd() const = 0;
  virtual uint32_t events() const = 0;
  // fd() is ready: returns the result when the check finished.
  virtual std::optional<bool> OnReady(uint32_t events) = 0;
  // Gives up a running check (timeout) and frees its resources.
  virtual void Abort() = 0;
};

std::unique_ptr<HealthProbe> MakeTcpProbe(uint16_t port);
std::unique_ptr<HealthProbe> MakeHttpProbe(uint16_t port, std::string path);
// `args` describes the command run through the wrapper (exec_mode is forced on).
std::unique_ptr<HealthProbe> MakeCommandProbe(WrapperArgs args);

}  // namespace paceline::agent
