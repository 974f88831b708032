#pragma once
// DnsServer: a DNS server for the cluster's services, on UDP and TCP at one address and port,
// answering from the newest Zone published to it (dns/zone.h: what is answered; dns/message.h:
// how). It never recurses and never blocks on the master: Publish swaps in a new immutable
// zone, which the next query reads. A question asked again of the same zone is answered from
// the bytes of its first answer with the query's id (dns/answer_cache.h).
//
// One I/O thread (Asio) serves both transports:
//   - UDP: each datagram is checked against the source's rate (dns/rate_limit.h), answered,
//     truncated to the client's size, or (rate limited) dropped or slipped as an empty TC;
//   - TCP (RFC 7766): messages with a two-byte length, several per connection, answered in
//     order; a connection idle for `tcp_idle`, or one that sends a message of length 0, is
//     closed; at most max_tcp_connections at once and max_tcp_per_address from one address
//     (further connections are closed at once). TCP queries count against the same rate.
//
// Start() binds (port 0 picks a free port; the same one for both), starts the thread and
// returns; Stop() closes everything and joins.
//
// Thread-safety: Start/Stop from one thread; Publish and stats from any.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "dns/rate_limit.h"
#include "dns/zone.h"

namespace paceline::api {

struct DnsLimits {
  dns::RateLimitOptions rate;
  int max_tcp_connections = 256;
  int max_tcp_per_address = 16;
  absl::Duration tcp_idle = absl::Seconds(10);
};

struct DnsStats {
  uint64_t udp_queries = 0;
  uint64_t tcp_queries = 0;
  uint64_t rate_limited = 0;  // dropped or slipped
  uint64_t tcp_refused = 0;   // connections over the caps
};

class DnsServer {
 public:
  DnsServer(std::string address, uint16_t port, DnsLimits limits);
  ~DnsServer();
  DnsServer(const DnsServer&) = delete;
  DnsServer& operator=(const DnsServer&) = delete;

  // Binds UDP and TCP on address:port and starts serving (an empty zone until Publish).
  absl::Status Start(dns::ZoneOptions options);
  void Stop();
  uint16_t port() const;

  // The zone queries are answered from from now on.
  void Publish(std::shared_ptr<const dns::Zone> zone);
  DnsStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace paceline::api
