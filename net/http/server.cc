#include "net/http/server.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/log.h"
#include "net/http/byte_stream.h"
#include "net/http/server_internal.h"
#include "net/http/session.h"
#include "net/http/tls_context.h"
#include "net/http/transport.h"

namespace shepherd::http {

Response plainError(int code, const std::string&, const std::string& message) {
  return Response{code, {{"Content-Type", "text/plain; charset=utf-8"}}, message + "\n"};
}

// A TLS stream costs tens of KiB (record buffers in Asio and OpenSSL), so a connection
// gets one only once the client sends something; one that stays silent for the header
// timeout is closed. Thousands of idle connections then cost little more than their sockets.
void Server::Impl::startTlsWhenReadable(tcp::socket socket) {
  auto sock = std::make_shared<tcp::socket>(std::move(socket));
  auto timer = std::make_shared<net::steady_timer>(sock->get_executor(),
                                                   std::chrono::seconds(opts.header_timeout_seconds));
  timer->async_wait([sock](beast::error_code ec) {
    if (ec) return;  // cancelled: the client spoke
    beast::error_code ignored;
    sock->close(ignored);
  });
  sock->async_wait(tcp::socket::wait_read, [this, sock, timer](beast::error_code ec) {
    timer->cancel();
    if (ec || stopping.load() || !sock->is_open()) return;
    std::make_shared<Session>(*this, tlsTransport(beast::tcp_stream(std::move(*sock)), *ssl))->start();
  });
}

void Server::Impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == net::error::operation_aborted || stopping.load()) return;
      LOG_WARN("http: accept failed: " << ec.message());
      if (ec == net::error::no_descriptors || ec == net::error::no_buffer_space) {
        // Out of file descriptors: back off briefly instead of spinning.
        auto t = std::make_shared<net::steady_timer>(ioc, std::chrono::milliseconds(100));
        t->async_wait([this, t](beast::error_code) { accept(); });
        return;
      }
    } else {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      if (ssl)
        startTlsWhenReadable(std::move(socket));
      else
        std::make_shared<Session>(*this, plainTransport(beast::tcp_stream(std::move(socket))))->start();
    }
    if (!stopping.load()) accept();
  });
}

Server::Server(ServerOptions opts, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(opts), std::move(handler))) {}

Server::~Server() {
  stop(0);
}

Result<int> Server::start() {
  beast::error_code ec;
  auto addr = net::ip::make_address(impl_->opts.address, ec);
  if (ec) return ApiError::badRequest("invalid bind address " + impl_->opts.address);
  tcp::endpoint ep(addr, static_cast<unsigned short>(impl_->opts.port));
  auto& acc = impl_->acceptor;
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return ApiError::internal("cannot listen on " + impl_->opts.address + ":" +
                              std::to_string(impl_->opts.port) + ": " + ec.message());
  port_ = acc.local_endpoint().port();
  if (impl_->opts.tls) {
    if (auto err = makeSslContext(*impl_->opts.tls, impl_->ssl); !err.empty()) {
      acc.close(ec);
      return ApiError::internal(err);
    }
  }
  impl_->workers =
      std::make_unique<net::thread_pool>(static_cast<size_t>(std::max(1, impl_->opts.worker_threads)));
  impl_->work.emplace(net::make_work_guard(impl_->ioc));
  impl_->accept();
  for (int i = 0; i < std::max(1, impl_->opts.io_threads); ++i)
    impl_->io_threads.emplace_back([this] { impl_->ioc.run(); });
  return port_;
}

void Server::stop(int grace_seconds) {
  if (!impl_ || impl_->io_threads.empty()) return;
  impl_->stopping = true;
  net::post(impl_->ioc, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
  auto shutdownSessions = [this] {
    std::vector<std::shared_ptr<SessionBase>> live;
    {
      MutexLock g(impl_->sessions_mu);
      for (auto& [p, w] : impl_->sessions)
        if (auto s = w.lock()) live.push_back(s);
    }
    for (auto& s : live) net::post(s->executor(), [s] { s->shutdownNow(); });
  };
  shutdownSessions();
  // In-flight handlers (e.g. writes waiting for their commit) finish and answer.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(grace_seconds);
  while (impl_->in_flight.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // Let the answers be written, then close what remains.
  auto flushDeadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_seconds > 0 ? 500 : 0);
  while (impl_->connections.load() > 0 && std::chrono::steady_clock::now() < flushDeadline) {
    shutdownSessions();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Upgraded connections (exec, attach, port-forward sessions) end now; their owners get
  // a moment to unwind on the io threads.
  {
    std::vector<std::shared_ptr<ByteStream>> live;
    {
      MutexLock g(impl_->upgraded_mu);
      for (auto& w : impl_->upgraded)
        if (auto s = w.lock()) live.push_back(s);
    }
    for (auto& s : live) s->close();
    std::vector<std::weak_ptr<ByteStream>> watch(live.begin(), live.end());
    live.clear();
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < until &&
           std::any_of(watch.begin(), watch.end(), [](auto& w) { return !w.expired(); }))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  impl_->work.reset();
  impl_->ioc.stop();
  for (auto& t : impl_->io_threads) t.join();
  impl_->io_threads.clear();
  if (impl_->workers) impl_->workers->join();
}

uint64_t Server::requestsServed() const {
  return impl_->served.load();
}
int Server::activeConnections() const {
  return impl_->connections.load();
}

}  // namespace shepherd::http
