#pragma once
// HttpServer: the master's HTTP side (health, metrics, JSON API, web UI), on its own threads.
//
// Start() binds (port 0 picks a free port), starts serving on a background thread and returns;
// Stop() stops accepting, finishes in-flight requests and joins. Routes are added by the caller
// through Routes() before Start() (see http_routes.h).
//
// Thread-safety: Start/Stop from one thread; handlers run on the server's worker threads.

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/net.h"

namespace httplib {
class Server;
}

namespace paceline::api {

// The HTTP server's worker threads (json_gateway.cc keeps some free of watches).
inline constexpr int kHttpThreads = 48;

class HttpServer {
 public:
  HttpServer();
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  httplib::Server& Routes() { return *server_; }
  // Binds `listen` and serves in the background; returns the bound address.
  absl::StatusOr<HostPort> Start(const HostPort& listen);
  void Stop();

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace paceline::api
