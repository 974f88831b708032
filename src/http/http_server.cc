#include "http/http_server.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "http/http_tls_gate.h"
#include "http/http_worker_pool.h"

namespace paceline::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

std::chrono::steady_clock::duration Steady(absl::Duration d) {
  return absl::ToChronoNanoseconds(d);
}

// A connection, plain or TLS (Session<Stream> below); what the server keeps of it.
class SessionBase : public std::enable_shared_from_this<SessionBase> {
 public:
  virtual ~SessionBase() = default;
  // On the I/O thread only: closes now and runs the OnClose callbacks.
  virtual void CloseNow() = 0;
};

}  // namespace

class HttpServer::Impl {
 public:
  Impl(const HttpRouter& router, const HttpLimits& limits)
      : router_(router), limits_(limits), pool_(limits.workers, limits.max_queued) {}

  absl::StatusOr<HostPort> Start(const HostPort& listen, const std::optional<HttpTls>& tls);
  void Stop();

  const HttpRouter& router() const { return router_; }
  const HttpLimits& limits() const { return limits_; }
  WorkerPool& pool() { return pool_; }
  TlsGate& gate() { return *gate_; }
  void Forget(SessionBase* s, const std::string& peer);

 private:
  void Accept();
  template <class S>
  void Open(std::shared_ptr<S> session);
  // TLS: a connection gets its TLS state once the client has sent something; until then (at
  // most read_timeout) it costs a socket and a timer.
  bool Admit(const std::string& peer);
  void Release(const std::string& peer);  // undoes Admit
  // Answers 503 and closes, without a session.
  void Refuse(tcp::socket socket);

  const HttpRouter& router_;
  const HttpLimits limits_;
  // Declared before the I/O context: sessions its queued handlers still hold are destroyed
  // with it, and forget themselves here.
  std::mutex mu_;
  int connections_ = 0;
  std::unordered_map<std::string, int> per_address_;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions_;
  std::optional<net::ssl::context> tls_;  // set: every connection is TLS
  std::optional<TlsGate> gate_;           // with tls_: when each connection's handshake starts
  bool stopped_ = false;
  WorkerPool pool_;
  net::io_context ioc_{1};
  // Keeps the I/O thread running while handlers may still post to it (until Stop has joined
  // the workers), even when no socket operation is pending.
  net::executor_work_guard<net::io_context::executor_type> work_ = net::make_work_guard(ioc_);
  tcp::acceptor acceptor_{ioc_};
  net::steady_timer retry_{ioc_};
  std::thread io_thread_;
};

namespace {

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The common name of the certificate the client presented and the handshake verified; "" when
// none.
std::string CommonNameOfPeer(SSL* ssl) {
  X509* cert = SSL_get_peer_certificate(ssl);
  if (cert == nullptr) return "";
  char name[256] = {0};
  const int n =
      X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, name, sizeof name);
  X509_free(cert);
  return n > 0 ? std::string(name, static_cast<size_t>(n)) : "";
}

// One connection over `Stream`: beast::tcp_stream (plain) or TlsStream.
template <class S>
class Session final : public SessionBase {
  using Stream = S;

 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  template <class... Args>
  Session(tcp::socket socket, HttpServer::Impl* server, std::string peer, Args&... tls)
      : stream_(std::move(socket), tls...), server_(server), peer_(std::move(peer)) {}
  ~Session() override { server_->Forget(this, peer_); }

  void Start() {
    net::dispatch(stream_.get_executor(), [self = Self()] {
      if constexpr (kTls) {
        // The handshake has the read deadline of a request: a client that never finishes it
        // costs a socket for that long, like one that never sends its request.
        self->Lowest().expires_after(Steady(self->limits().read_timeout));
        self->stream_.async_handshake(net::ssl::stream_base::server, [self](beast::error_code ec) {
          self->Lowest().expires_never();
          self->server_->gate().Done(self->peer_);
          if (ec) return self->CloseNow();
          self->client_name_ = CommonNameOfPeer(self->stream_.native_handle());
          self->Read();
        });
      } else {
        self->Read();
      }
    });
  }

  // From any thread: closes the connection (streams see their sink close).
  void Close() {
    net::post(stream_.get_executor(), [self = Self()] { self->CloseNow(); });
  }

  // Streams, from their worker thread.
  bool WriteRaw(std::string data);
  void AddOnClose(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!closed_) {
        on_close_.push_back(std::move(f));
        return;
      }
    }
    f();
  }

 private:
  const HttpLimits& limits() const { return server_->limits(); }
  std::shared_ptr<Session> Self() { return std::static_pointer_cast<Session>(shared_from_this()); }
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void Read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(limits().max_header_bytes));
    parser_->body_limit(limits().max_body_bytes);
    Lowest().expires_after(Steady(limits().read_timeout));
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = Self()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    Lowest().expires_never();
    if (ec == bhttp::error::header_limit) {
      return Answer(431, "request header fields too large: at most " +
                             std::to_string(limits().max_header_bytes) + " bytes\n");
    }
    if (ec == bhttp::error::body_limit) {
      return Answer(413, "request body too large: at most " +
                             std::to_string(limits().max_body_bytes) + " bytes\n");
    }
    if (ec) return CloseNow();  // the client left, timed out or sent garbage
    auto req = std::make_shared<bhttp::request<bhttp::string_body>>(parser_->release());
    bool queued =
        server_->pool().TrySubmit([self = Self(), req] { self->Handle(std::move(*req)); });
    if (!queued) Answer(503, "the server is busy; try again\n");
  }

  // An error answer from the I/O thread; the connection closes after it.
  void Answer(unsigned status, std::string text) {
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(bhttp::status::ok, 11);
    res->result(status);
    res->set(bhttp::field::content_type, "text/plain");
    if (status == 503) res->set(bhttp::field::retry_after, "1");
    res->keep_alive(false);
    res->body() = std::move(text);
    res->prepare_payload();
    Reply(res);
  }

  template <class Body>
  void Reply(std::shared_ptr<bhttp::response<Body>> res) {
    Lowest().expires_after(Steady(limits().write_timeout));
    bhttp::async_write(stream_, *res, [self = Self(), res](beast::error_code ec, size_t) {
      self->Lowest().expires_never();
      if (ec) return self->CloseNow();
      if (!res->keep_alive()) return self->Linger();
      self->Read();
    });
  }

  // On a worker thread.
  void Handle(bhttp::request<bhttp::string_body> breq) {
    HttpRequest req;
    req.method = std::string(breq.method_string());
    SetTarget(absl::string_view(breq.target().data(), breq.target().size()), req);
    for (const auto& f : breq) {
      req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    }
    req.body = std::move(breq.body());
    req.peer = peer_;
    req.client_name = client_name_;
    HttpResponse res;
    try {
      server_->router().Dispatch(req, res);
    } catch (const std::exception& e) {
      res = HttpResponse();
      res.status = 500;
      res.set_content(absl::StrCat("internal error: ", e.what(), "\n"), "text/plain");
    }
    const bool head = breq.method() == bhttp::verb::head;
    if (res.stream) return StreamAnswer(res, head);
    if (!res.static_body.empty() || head) {
      // A view of bytes that outlive the connection; for HEAD, of none (with the length).
      using View = bhttp::span_body<const char>;
      auto out = std::make_shared<bhttp::response<View>>(bhttp::status::ok, breq.version());
      Fill(*out, res, breq.keep_alive());
      const absl::string_view bytes = res.static_body.empty() ? res.body : res.static_body;
      if (!head) out->body() = View::value_type(bytes.data(), bytes.size());
      if (res.status != 304 && res.status != 204) out->content_length(bytes.size());
      net::post(stream_.get_executor(), [self = Self(), out] { self->Reply(out); });
      return;
    }
    auto out =
        std::make_shared<bhttp::response<bhttp::string_body>>(bhttp::status::ok, breq.version());
    Fill(*out, res, breq.keep_alive());
    out->body() = std::move(res.body);
    out->prepare_payload();
    net::post(stream_.get_executor(), [self = Self(), out] { self->Reply(out); });
  }

  template <class Body>
  static void Fill(bhttp::response<Body>& out, const HttpResponse& res, bool keep_alive) {
    out.result(static_cast<unsigned>(res.status));
    out.set(bhttp::field::server, "paceline");
    if (res.status != 304) out.set(bhttp::field::content_type, res.content_type);
    for (const auto& [k, v] : res.headers) out.set(k, v);
    out.keep_alive(keep_alive);
  }

  // A chunked stream; the connection closes after it.
  void StreamAnswer(HttpResponse& res, bool head) {
    const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(res.status));
    std::string header =
        absl::StrCat("HTTP/1.1 ", res.status, " ", absl::string_view(reason.data(), reason.size()),
                     "\r\nServer: paceline\r\n", "Content-Type: ", res.content_type,
                     "\r\nTransfer-Encoding: chunked\r\nCache-Control: no-cache"
                     "\r\nConnection: close\r\n");
    for (const auto& [k, v] : res.headers) absl::StrAppend(&header, k, ": ", v, "\r\n");
    header += "\r\n";
    if (!WriteRaw(std::move(header)) || head) return Close();
    // The client sends nothing more: a read that ends means it left.
    net::post(stream_.get_executor(), [self = Self()] { self->WatchForEof(); });
    class Sink : public HttpStreamSink {
     public:
      explicit Sink(std::shared_ptr<Session> s) : s_(std::move(s)) {}
      bool Write(absl::string_view chunk) override {
        if (chunk.empty()) return !s_->closed();
        return s_->WriteRaw(absl::StrCat(absl::Hex(chunk.size()), "\r\n", chunk, "\r\n"));
      }
      void OnClose(std::function<void()> f) override { s_->AddOnClose(std::move(f)); }

     private:
      std::shared_ptr<Session> s_;
    } sink(Self());
    try {
      res.stream(sink);
    } catch (const std::exception&) {
      return Close();  // cut short: no final chunk, so the client sees the stream break
    }
    WriteRaw("0\r\n\r\n");
    Close();
  }

  void WatchForEof() {
    auto buf = std::make_shared<std::array<char, 512>>();
    stream_.async_read_some(net::buffer(*buf), [self = Self(), buf](beast::error_code ec, size_t) {
      if (ec) return self->CloseNow();
      self->WatchForEof();
    });
  }

  // After a last answer: stop sending, drain what the client still sends for a second (so that
  // the answer is not lost to a reset), then close.
  void Linger() {
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    Lowest().expires_after(std::chrono::seconds(1));
    auto buf = std::make_shared<std::array<char, 4096>>();
    stream_.async_read_some(net::buffer(*buf), [self = Self(), buf](beast::error_code e, size_t) {
      if (e) return self->CloseNow();
      self->Linger();
    });
  }

 public:
  // On the I/O thread only (there is one): closes now and runs the OnClose callbacks.
  void CloseNow() override {
    std::vector<std::function<void()>> callbacks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return;
      closed_ = true;
      callbacks.swap(on_close_);
    }
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    Lowest().close();
    for (auto& f : callbacks) {
      try {
        f();
      } catch (const std::exception&) {
      }
    }
  }

  bool closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

 private:
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  HttpServer::Impl* const server_;
  const std::string peer_;
  std::string client_name_;  // set by the handshake (mutual TLS)
  std::mutex mu_;
  bool closed_ = false;
  std::vector<std::function<void()>> on_close_;
};

template <class S>
bool Session<S>::WriteRaw(std::string data) {
  auto done = std::make_shared<std::promise<bool>>();
  std::future<bool> written = done->get_future();
  auto buf = std::make_shared<std::string>(std::move(data));
  net::post(stream_.get_executor(), [self = Self(), buf, done] {
    if (self->closed()) return done->set_value(false);
    self->Lowest().expires_after(Steady(self->limits().write_timeout));
    net::async_write(self->stream_, net::buffer(*buf),
                     [self, buf, done](beast::error_code ec, size_t) {
                       self->Lowest().expires_never();
                       if (ec) self->CloseNow();
                       done->set_value(!ec);
                     });
  });
  return written.get();
}

}  // namespace

absl::StatusOr<HostPort> HttpServer::Impl::Start(const HostPort& listen,
                                                 const std::optional<HttpTls>& tls) {
  beast::error_code ec;
  if (tls) {
    tls_.emplace(net::ssl::context::tls_server);
    tls_->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                      net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                      net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
    // An idle connection keeps no read or write buffer of OpenSSL's.
    SSL_CTX_set_mode(tls_->native_handle(), SSL_MODE_RELEASE_BUFFERS);
    gate_.emplace(
        limits_,
        [this](tcp::socket socket, const std::string& peer) {
          Open(std::make_shared<Session<TlsStream>>(std::move(socket), this, peer, *tls_));
        },
        [this](const std::string& peer) { Release(peer); });
    tls_->use_certificate_chain_file(tls->cert_file, ec);
    if (!ec) tls_->use_private_key_file(tls->key_file, net::ssl::context::pem, ec);
    if (ec) {
      return absl::InvalidArgumentError(absl::StrCat("HTTP TLS: cannot load ", tls->cert_file,
                                                     " and ", tls->key_file, ": ", ec.message()));
    }
    if (!tls->client_ca_file.empty()) {
      tls_->load_verify_file(tls->client_ca_file, ec);
      if (ec) {
        return absl::InvalidArgumentError(absl::StrCat("HTTP TLS: cannot load the client CA ",
                                                       tls->client_ca_file, ": ", ec.message()));
      }
      tls_->set_verify_mode(net::ssl::verify_peer | net::ssl::verify_fail_if_no_peer_cert);
      // Sessions resumed with a verified client need a context of their own.
      static constexpr unsigned char kContext[] = "paceline-http";
      SSL_CTX_set_session_id_context(tls_->native_handle(), kContext, sizeof kContext - 1);
    }
  }
  net::ip::address address = net::ip::make_address(listen.host, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("HTTP: not an address: ", listen.host));
  tcp::endpoint endpoint(address, listen.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot bind HTTP on ", listen.ToString(), ": ", ec.message()));
  }
  HostPort bound = listen;
  bound.port = acceptor_.local_endpoint().port();
  Accept();
  io_thread_ = std::thread([this] { ioc_.run(); });
  return bound;
}

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket s) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of file descriptors, most likely: try again shortly rather than spin.
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([this](beast::error_code e) {
        if (!e) Accept();
      });
      return;
    }
    beast::error_code peer_ec;
    std::string peer = s.remote_endpoint(peer_ec).address().to_string();
    if (peer_ec) {
      Accept();
      return;
    }
    if (!Admit(peer)) {
      Refuse(std::move(s));
    } else if (tls_) {
      gate_->Await(std::move(s), peer);
    } else {
      Open(std::make_shared<Session<beast::tcp_stream>>(std::move(s), this, peer));
    }
    Accept();
  });
}

template <class S>
void HttpServer::Impl::Open(std::shared_ptr<S> session) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;  // Stop has its list already
    sessions_[session.get()] = session;
  }
  session->Start();
}

bool HttpServer::Impl::Admit(const std::string& peer) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_ || connections_ >= limits_.max_connections ||
      per_address_[peer] >= limits_.max_connections_per_address) {
    return false;
  }
  ++connections_;
  ++per_address_[peer];
  return true;
}

void HttpServer::Impl::Forget(SessionBase* s, const std::string& peer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(s);
  }
  Release(peer);
}

void HttpServer::Impl::Release(const std::string& peer) {
  std::lock_guard<std::mutex> lock(mu_);
  --connections_;
  if (--per_address_[peer] <= 0) per_address_.erase(peer);
}

void HttpServer::Impl::Refuse(tcp::socket socket) {
  struct Refusal {
    explicit Refusal(tcp::socket s) : stream(std::move(s)) {}
    beast::tcp_stream stream;
    std::string text =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nRetry-After: 1\r\n"
        "Connection: close\r\nContent-Length: 38\r\n\r\ntoo many connections; try again "
        "later\n";
  };
  if (tls_) {  // no handshake for a refused connection: closed at once
    beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
    return;
  }
  auto r = std::make_shared<Refusal>(std::move(socket));
  r->stream.expires_after(std::chrono::seconds(1));
  net::async_write(r->stream, net::buffer(r->text), [r](beast::error_code, size_t) {
    beast::error_code ec;
    r->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    r->stream.close();
  });
}

void HttpServer::Impl::Stop() {
  std::vector<std::shared_ptr<SessionBase>> open;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    if (!io_thread_.joinable()) return;  // never started
    for (auto& [ptr, weak] : sessions_) {
      if (auto s = weak.lock()) open.push_back(std::move(s));
    }
  }
  // Closed on the I/O thread, and waited for: nothing is accepted or kept open afterwards, and
  // every stream's OnClose has run before the workers are joined.
  std::promise<void> closed;
  net::post(ioc_, [this, &open, &closed] {
    beast::error_code ec;
    acceptor_.close(ec);
    retry_.cancel();
    for (auto& s : open) s->CloseNow();
    closed.set_value();
  });
  closed.get_future().wait();
  open.clear();
  pool_.Stop();  // streams end once their sink is closed; other handlers finish
  work_.reset();
  ioc_.stop();
  if (io_thread_.joinable()) io_thread_.join();
}

HttpServer::HttpServer(HttpLimits limits) : limits_(limits) {}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<HostPort> HttpServer::Start(const HostPort& listen,
                                           const std::optional<HttpTls>& tls) {
  impl_ = std::make_unique<Impl>(router_, limits_);
  return impl_->Start(listen, tls);
}

void HttpServer::Stop() {
  if (impl_ != nullptr) impl_->Stop();
}

}  // namespace paceline::http
