#pragma once
// HttpServer: the master's HTTP side (health, metrics, JSON API, web UI), built to stay up when
// clients misbehave.
//
// One I/O thread serves every connection with non-blocking sockets (Boost.Beast over Asio), so
// a connection that sends its request slowly, or never, or reads its answer slowly, costs a
// socket and a small buffer, never a thread. Handlers run on a fixed pool of worker threads
// (they may block: a JSON call waits for the scheduler); a stream (HttpResponse::stream) holds
// one worker while it lasts.
//
// Limits (HttpLimits; each refusal is an HTTP answer, then the connection closes):
//   - a request's header above max_header_bytes: 431; a body above max_body_bytes: 413;
//   - a request not received whole within read_timeout (also the keep-alive idle time): the
//     connection is closed;
//   - an answer (or a stream's chunk) not taken by the client within write_timeout: closed;
//   - more than max_connections, or max_connections_per_address from one client address: 503
//     at once;
//   - more than max_queued requests waiting for a worker: 503 (with Retry-After).
//
// TLS (HttpTls): every connection is TLS (1.2 or newer) with the given certificate (and, with a
// client CA, a client certificate checked against it). A
// connection gets its TLS state (~90 KB) only once its client has sent something; at most
// max_tls_handshakes handshakes are in flight at once (max_tls_handshakes_per_address from one
// address), the others wait for a slot; the handshake must end within read_timeout of the
// accept; a connection over the connection caps is closed without one.
//
// Start() binds (port 0 picks a free port), starts the threads and returns; Stop() stops
// accepting, closes every connection (streams see their sink close), and joins. Routes are
// added through Routes() before Start().
//
// Thread-safety: Start/Stop from one thread; handlers run on the worker threads.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/net.h"
#include "http/http_message.h"

namespace paceline::http {

struct HttpLimits {
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 1024 * 1024;
  absl::Duration read_timeout = absl::Seconds(10);
  absl::Duration write_timeout = absl::Seconds(20);
  int max_connections = 8192;
  int max_connections_per_address = 256;
  int max_tls_handshakes = 256;             // TLS handshakes in flight at once
  int max_tls_handshakes_per_address = 16;  // ... from one client address
  int workers = 48;
  int max_queued = 512;
};

// The certificate (chain, PEM) and private key an HTTPS server presents.
struct HttpTls {
  std::string cert_file;
  std::string key_file;
  // Set: mutual TLS. Every client presents a certificate signed by this CA (PEM file), or its
  // handshake fails; the certificate's common name is each request's client_name.
  std::string client_ca_file;
};

// The worker threads (json_gateway.cc keeps some of them free of streams).
inline constexpr int kHttpThreads = HttpLimits{}.workers;

class HttpServer {
 public:
  explicit HttpServer(HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  HttpRouter& Routes() { return router_; }
  // Binds `listen` and serves in the background (TLS when `tls` is set); returns the bound
  // address.
  absl::StatusOr<HostPort> Start(const HostPort& listen,
                                 const std::optional<HttpTls>& tls = std::nullopt);
  void Stop();

  class Impl;

 private:
  HttpRouter router_;
  HttpLimits limits_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace paceline::http
