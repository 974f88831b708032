#pragma once
// TlsGate: when the HTTPS server starts each connection's TLS handshake. A TLS session costs
// about 90 KB from its first byte, so a client that stops in the middle of its handshake holds
// that until the read deadline. The gate keeps that bounded:
//   - a connection is only a socket and a timer until its client sends something;
//   - at most max_tls_handshakes handshakes are in flight at once, max_tls_handshakes_per_address
//     from one client address; the others wait for a slot (their deadline still runs);
//   - a connection still waiting at read_timeout after the accept is closed (`drop`).
// `start(socket, peer)` makes the connection's session, which calls Done(peer) when its
// handshake ends, whatever the outcome.
//
// Thread-safety: on the server's one I/O thread only.

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include <boost/asio.hpp>

#include "http/http_server.h"

namespace paceline::http {

class TlsGate {
 public:
  using Socket = boost::asio::ip::tcp::socket;
  using StartFn = std::function<void(Socket, const std::string& peer)>;
  using DropFn = std::function<void(const std::string& peer)>;

  TlsGate(const HttpLimits& limits, StartFn start, DropFn drop)
      : limits_(limits), start_(std::move(start)), drop_(std::move(drop)) {}

  // An admitted connection from `peer`.
  void Await(Socket socket, std::string peer);
  // The handshake of a connection started by this gate has ended.
  void Done(const std::string& peer);

 private:
  struct Pending;
  void StartOrWait(std::shared_ptr<Pending> p);

  const HttpLimits limits_;
  const StartFn start_;
  const DropFn drop_;
  int in_flight_ = 0;
  std::unordered_map<std::string, int> per_address_;
  std::deque<std::shared_ptr<Pending>> waiting_;
};

}  // namespace paceline::http
