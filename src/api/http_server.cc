#include "api/http_server.h"

#include <httplib.h>

#include "absl/strings/str_cat.h"

namespace paceline::api {

HttpServer::HttpServer() : server_(std::make_unique<httplib::Server>()) {
  // Watches over HTTP hold a thread each (json_gateway.h), and one a browser left holds it
  // until the stream's next write fails (an idle stream writes every 15 s).
  server_->new_task_queue = [] { return new httplib::ThreadPool(kHttpThreads); };
}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<HostPort> HttpServer::Start(const HostPort& listen) {
  HostPort bound = listen;
  if (listen.port == 0) {
    int port = server_->bind_to_any_port(listen.host);
    if (port <= 0) {
      return absl::UnavailableError(absl::StrCat("cannot bind HTTP on ", listen.host));
    }
    bound.port = static_cast<uint16_t>(port);
  } else if (!server_->bind_to_port(listen.host, listen.port)) {
    return absl::UnavailableError(
        absl::StrCat("cannot bind HTTP on ", listen.ToString(), " (address in use?)"));
  }
  // The socket is bound and listening already: connections queue until the thread accepts.
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return bound;
}

void HttpServer::Stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace paceline::api
