#pragma once
// Master endpoints: <data_dir>/master.json, which a running master writes with its bound
// addresses and pid (it may listen on port 0), and which the CLI and tests read to find a
// local master and its token.
//
// Thread-safety: pure functions over files; the write is atomic (temp file + rename), so a
// reader never sees half of it.

#include <string>

#include "absl/status/statusor.h"

namespace paceline {

struct MasterEndpoints {
  std::string grpc;  // host:port
  std::string http;  // host:port
  int pid = 0;
  std::string token_file;        // where the bootstrap admin token is
  std::string agent_token_file;  // where the agents' bootstrap token is
  std::string ca_file;           // the CA of the master's TLS certificate; "": plain text
  std::string dns;               // host:port of its DNS server for services; "": none
  std::string metrics;           // host:port of its --metrics-listen; "": none
};

std::string EndpointsPath(const std::string& data_dir);
absl::Status WriteEndpointsFile(const std::string& data_dir, const MasterEndpoints& e);
// NOT_FOUND when there is no file (no master running there); DATA_LOSS when it is malformed.
absl::StatusOr<MasterEndpoints> ReadEndpointsFile(const std::string& data_dir);

}  // namespace paceline
