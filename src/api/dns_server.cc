#include "api/dns_server.h"

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dns/answer_cache.h"
#include "dns/message.h"

namespace paceline::api {
namespace asio = boost::asio;
using asio::ip::tcp;
using asio::ip::udp;

struct DnsServer::Impl {
  class TcpConnection;

  Impl(std::string address, uint16_t port, DnsLimits limits)
      : address(std::move(address)), port(port), limits(limits), rate(limits.rate) {}

  std::shared_ptr<const dns::Zone> Zone() const { return zone.load(std::memory_order_acquire); }

  // A query's verdict, on the I/O thread.
  dns::RateLimit::Verdict Check(const asio::ip::address& from) {
    if (limits.rate.rate <= 0) return dns::RateLimit::Verdict::kAnswer;  // no limit: no lookup
    dns::RateLimit::Verdict v = rate.Check(from.to_string(), absl::Now());
    if (v != dns::RateLimit::Verdict::kAnswer) ++rate_limited;
    return v;
  }

  void ReceiveUdp();
  void Accept();
  void Closed(const std::shared_ptr<TcpConnection>& c);

  std::string address;
  uint16_t port;
  DnsLimits limits;
  asio::io_context io;
  std::optional<udp::socket> udp_socket;
  std::optional<tcp::acceptor> acceptor;
  std::thread thread;
  std::atomic<std::shared_ptr<const dns::Zone>> zone;
  dns::RateLimit rate;     // the I/O thread's
  dns::AnswerCache cache;  // the I/O thread's: the encoded answers of the newest zone

  std::array<uint8_t, 65536> datagram{};
  udp::endpoint datagram_from;

  std::set<std::shared_ptr<TcpConnection>> connections;  // the I/O thread's
  std::map<asio::ip::address, int> per_address;

  std::atomic<uint64_t> udp_queries{0}, tcp_queries{0}, rate_limited{0}, tcp_refused{0};
};

// One TCP client: length-prefixed queries answered in order until it goes quiet.
class DnsServer::Impl::TcpConnection : public std::enable_shared_from_this<TcpConnection> {
 public:
  TcpConnection(Impl& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), idle_(server.io) {}

  asio::ip::address peer() const { return peer_; }
  void Start() {
    boost::system::error_code ec;
    peer_ = socket_.remote_endpoint(ec).address();
    ReadLength();
  }
  void Close() {
    boost::system::error_code ec;
    idle_.cancel();
    socket_.close(ec);
  }

 private:
  void Arm() {
    idle_.expires_after(
        std::chrono::nanoseconds(absl::ToInt64Nanoseconds(server_.limits.tcp_idle)));
    idle_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->End();
    });
  }
  void End() {
    Close();
    server_.Closed(shared_from_this());
  }
  void ReadLength() {
    Arm();
    asio::async_read(socket_, asio::buffer(length_),
                     [self = shared_from_this()](boost::system::error_code ec, size_t) {
                       const size_t n = size_t{self->length_[0]} << 8 | self->length_[1];
                       if (ec || n == 0) return self->End();
                       self->message_.resize(n);
                       self->ReadMessage();
                     });
  }
  void ReadMessage() {
    asio::async_read(socket_, asio::buffer(message_),
                     [self = shared_from_this()](boost::system::error_code ec, size_t) {
                       if (ec) return self->End();
                       self->Answer();
                     });
  }
  void Answer() {
    ++server_.tcp_queries;
    if (server_.Check(peer_) != dns::RateLimit::Verdict::kAnswer) return End();
    std::optional<std::vector<uint8_t>> reply =
        server_.cache.Respond(server_.Zone(), message_, dns::Transport::kTcp);
    if (!reply.has_value()) return ReadLength();
    reply_.clear();
    reply_.push_back(static_cast<uint8_t>(reply->size() >> 8));
    reply_.push_back(static_cast<uint8_t>(reply->size() & 0xff));
    reply_.insert(reply_.end(), reply->begin(), reply->end());
    Arm();  // the client must take its answer within the idle time too
    asio::async_write(socket_, asio::buffer(reply_),
                      [self = shared_from_this()](boost::system::error_code ec, size_t) {
                        if (ec) return self->End();
                        self->ReadLength();
                      });
  }

  Impl& server_;
  tcp::socket socket_;
  asio::steady_timer idle_;
  asio::ip::address peer_;
  std::array<uint8_t, 2> length_{};
  std::vector<uint8_t> message_;
  std::vector<uint8_t> reply_;
};

void DnsServer::Impl::ReceiveUdp() {
  udp_socket->async_receive_from(
      asio::buffer(datagram), datagram_from, [this](boost::system::error_code ec, size_t n) {
        if (ec == asio::error::operation_aborted || !udp_socket->is_open()) return;
        if (!ec) {
          ++udp_queries;
          const auto request = absl::MakeConstSpan(datagram.data(), n);
          std::optional<std::vector<uint8_t>> reply;
          switch (Check(datagram_from.address())) {
            case dns::RateLimit::Verdict::kAnswer:
              reply = cache.Respond(Zone(), request, dns::Transport::kUdp);
              break;
            case dns::RateLimit::Verdict::kTruncate:
              reply = dns::TruncatedReply(request);
              break;
            case dns::RateLimit::Verdict::kDrop:
              break;
          }
          if (reply.has_value()) {
            boost::system::error_code send_ec;  // a full socket buffer drops it, as UDP does
            udp_socket->send_to(asio::buffer(*reply), datagram_from, 0, send_ec);
          }
        }
        ReceiveUdp();
      });
}

void DnsServer::Impl::Accept() {
  acceptor->async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (!ec) {
      boost::system::error_code peer_ec;
      const asio::ip::address peer = socket.remote_endpoint(peer_ec).address();
      if (peer_ec || static_cast<int>(connections.size()) >= limits.max_tcp_connections ||
          per_address[peer] >= limits.max_tcp_per_address) {
        ++tcp_refused;
        socket.close(peer_ec);
        if (per_address[peer] == 0) per_address.erase(peer);
      } else {
        ++per_address[peer];
        auto c = std::make_shared<TcpConnection>(*this, std::move(socket));
        connections.insert(c);
        c->Start();
      }
    }
    Accept();
  });
}

void DnsServer::Impl::Closed(const std::shared_ptr<TcpConnection>& c) {
  if (connections.erase(c) == 0) return;
  if (--per_address[c->peer()] <= 0) per_address.erase(c->peer());
}

DnsServer::DnsServer(std::string address, uint16_t port, DnsLimits limits)
    : impl_(std::make_unique<Impl>(std::move(address), port, limits)) {}

DnsServer::~DnsServer() { Stop(); }

absl::Status DnsServer::Start(dns::ZoneOptions options) {
  Impl& s = *impl_;
  s.zone.store(std::make_shared<const dns::Zone>(std::move(options)));
  boost::system::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(s.address, ec);
  if (ec)
    return absl::InvalidArgumentError(
        absl::StrCat("dns address: '", s.address, "': ", ec.message()));
  s.acceptor.emplace(s.io);
  tcp::endpoint tcp_at(ip, s.port);
  s.acceptor->open(tcp_at.protocol(), ec);
  if (!ec) s.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(tcp_at, ec);
  if (!ec) s.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return absl::UnavailableError(
        absl::StrCat("dns: TCP ", s.address, ":", s.port, ": ", ec.message()));
  const uint16_t bound = s.acceptor->local_endpoint().port();
  s.udp_socket.emplace(s.io);
  udp::endpoint udp_at(ip, bound);
  s.udp_socket->open(udp_at.protocol(), ec);
  if (!ec) s.udp_socket->bind(udp_at, ec);
  if (ec)
    return absl::UnavailableError(
        absl::StrCat("dns: UDP ", s.address, ":", bound, ": ", ec.message()));
  s.port = bound;
  s.ReceiveUdp();
  s.Accept();
  s.thread = std::thread([&s] { s.io.run(); });
  return absl::OkStatus();
}

void DnsServer::Stop() {
  Impl& s = *impl_;
  if (!s.thread.joinable()) return;
  asio::post(s.io, [&s] {
    boost::system::error_code ec;
    if (s.acceptor) s.acceptor->close(ec);
    if (s.udp_socket) s.udp_socket->close(ec);
    for (const auto& c : s.connections) c->Close();
    s.connections.clear();
  });
  s.thread.join();  // run() returns once the closes' handlers have run and nothing is armed
}

uint16_t DnsServer::port() const { return impl_->port; }

void DnsServer::Publish(std::shared_ptr<const dns::Zone> zone) {
  impl_->zone.store(std::move(zone), std::memory_order_release);
}

DnsStats DnsServer::stats() const {
  const Impl& s = *impl_;
  return DnsStats{.udp_queries = s.udp_queries.load(),
                  .tcp_queries = s.tcp_queries.load(),
                  .rate_limited = s.rate_limited.load(),
                  .tcp_refused = s.tcp_refused.load()};
}

}  // namespace paceline::api
