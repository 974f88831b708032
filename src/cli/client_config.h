#pragma once
// Where a client command finds the master and its token, first match wins:
//   address:  --addr, $PACELINE_ADDR, `addr:` in ~/.paceline/config,
//             the "grpc" entry of ./data/master.json (written by a local `paceline up`),
//             127.0.0.1:5390.
//             Each of the first three may list several masters separated by commas
//             ("m1:5390,m2:5390"): the CLI tries them in turn (cli/rpc.h). An empty entry is an
//             error.
//   token:    --token, $PACELINE_TOKEN, `token:` in ~/.paceline/config, ./data/token.
//   CA:       --ca, $PACELINE_CA, `ca:` in ~/.paceline/config, ./data/tls/ca.pem: the CA the
//             master's certificate is verified against (TLS). None found: plain text (a master
//             started with --insecure-loopback).
// ~/.paceline/config is YAML with the optional keys `addr`, `token` and `ca`; other keys are an
// error (they are typos).
//
// Thread-safety: pure functions over the environment and files.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/context.h"

namespace paceline::cli {

struct ResolvedClient {
  std::vector<std::string> addrs;  // the masters, in the order given; never empty
  std::string addr;                // addrs[0]
  std::string token;
  std::string ca_pem;       // the CA's PEM text; empty: plain text
  std::string ca_source;    // where it came from, for error messages
  std::string addr_source;  // where the address came from, for error messages
};

absl::StatusOr<ResolvedClient> ResolveClient(const ClientFlags& flags);

}  // namespace paceline::cli
