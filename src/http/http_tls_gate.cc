#include "http/http_tls_gate.h"

namespace paceline::http {

struct TlsGate::Pending {
  Pending(Socket s, std::string p)
      : socket(std::move(s)), peer(std::move(p)), timer(socket.get_executor()) {}
  Socket socket;
  std::string peer;
  boost::asio::steady_timer timer;  // read_timeout from the accept: then it is closed
  bool done = false;                // closed, or handed to a session
};

void TlsGate::Await(Socket socket, std::string peer) {
  auto p = std::make_shared<Pending>(std::move(socket), std::move(peer));
  auto close = [this](Pending& q) {
    q.done = true;
    boost::system::error_code ignored;
    q.socket.close(ignored);
    drop_(q.peer);
  };
  p->timer.expires_after(absl::ToChronoNanoseconds(limits_.read_timeout));
  p->timer.async_wait([p, close](boost::system::error_code ec) {
    if (!ec && !p->done) close(*p);  // cancelled: handed to a session
  });
  p->socket.async_wait(Socket::wait_read, [this, p, close](boost::system::error_code ec) {
    if (p->done) return;
    if (ec) {
      p->timer.cancel();
      return close(*p);
    }
    StartOrWait(p);
  });
}

void TlsGate::StartOrWait(std::shared_ptr<Pending> p) {
  int& mine = per_address_[p->peer];
  if (in_flight_ >= limits_.max_tls_handshakes || mine >= limits_.max_tls_handshakes_per_address) {
    waiting_.push_back(std::move(p));
    return;
  }
  ++in_flight_;
  ++mine;
  p->done = true;
  p->timer.cancel();
  start_(std::move(p->socket), p->peer);
}

void TlsGate::Done(const std::string& peer) {
  --in_flight_;
  if (--per_address_[peer] <= 0) per_address_.erase(peer);
  // The first waiting connection that may start now (closed ones are dropped on the way).
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if ((*it)->done) {
      it = waiting_.erase(it);
      continue;
    }
    auto found = per_address_.find((*it)->peer);
    if (found == per_address_.end() || found->second < limits_.max_tls_handshakes_per_address) {
      std::shared_ptr<Pending> next = std::move(*it);
      waiting_.erase(it);
      StartOrWait(std::move(next));
      return;
    }
    ++it;
  }
}

}  // namespace paceline::http
