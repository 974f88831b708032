#pragma once
// Network address helpers shared by the daemons and the CLI.
//
// ParseHostPort("127.0.0.1:5390") -> {"127.0.0.1", 5390}; "[::1]:80" -> {"::1", 80}.
// Port 0 means "any free port" where a server accepts it.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string ToString() const;  // brackets IPv6 hosts
};

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text);

// 127.0.0.0/8, ::1 and "localhost".
bool IsLoopback(absl::string_view host);

}  // namespace paceline
