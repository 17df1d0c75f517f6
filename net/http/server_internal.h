// The HTTP server's shared internals (server.cc, session.cc, stream_state.cc): the
// server's state, a connection's base class and a stream's queue. Not for other users.
#pragma once

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "net/http/server.h"

namespace shepherd::http {

namespace net = boost::asio;
using tcp = net::ip::tcp;

class SessionBase;

// How much one read of a connection asks for.
constexpr size_t kReadSize = 64 * 1024;

// The answer to a request the server refuses itself (body too large, headers too long, a
// handler that threw or never answered), unless ServerOptions::error_response renders one.
Response plainError(int code, const std::string& reason, const std::string& message);

struct Server::Impl {
  ServerOptions opts;
  Handler handler;
  Response errorResponse(int code, const std::string& reason, const std::string& message) const {
    return opts.error_response ? opts.error_response(code, reason, message)
                               : plainError(code, reason, message);
  }
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  std::unique_ptr<net::thread_pool> workers;
  std::vector<std::thread> io_threads;
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};
  std::atomic<int> readonly_in_flight{0};  // counted against max_requests_inflight
  std::atomic<int> mutating_in_flight{0};  // counted against max_mutating_requests_inflight
  std::atomic<int> connections{0};
  std::atomic<uint64_t> served{0};
  Mutex sessions_mu;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions GUARDED_BY(sessions_mu);
  std::optional<net::ssl::context> ssl;  // set when serving HTTPS
  // Connections handed over by upgrade(): stop() closes them while the io threads still
  // run, so their sessions unwind (and free everything they hold) before the io_context goes.
  Mutex upgraded_mu;
  std::vector<std::weak_ptr<ByteStream>> upgraded GUARDED_BY(upgraded_mu);

  void trackUpgraded(const std::shared_ptr<ByteStream>& s) {
    MutexLock g(upgraded_mu);
    upgraded.erase(std::remove_if(upgraded.begin(), upgraded.end(), [](auto& w) { return w.expired(); }),
                   upgraded.end());
    upgraded.push_back(s);
  }

  Impl(ServerOptions o, Handler h) : opts(std::move(o)), handler(std::move(h)) {}
  void accept();
  void startTlsWhenReadable(tcp::socket socket);
};

// A stream's queue lives outside the session so producers on other threads only take
// this small lock; the session drains it on its strand.
class StreamState final : public StreamWriter {
 public:
  StreamState(std::weak_ptr<SessionBase> s, size_t limit) : session_(std::move(s)), limit_(limit) {}
  bool write(Chunk chunk) override;
  void finish() override;
  bool closed() const override { return closed_.load(); }
  void onClose(std::function<void()> fn) override;

  // Strand side.
  bool take(std::vector<Chunk>& out, bool& finish);
  void markClosed();

 private:
  void schedule() REQUIRES(mu_);
  std::weak_ptr<SessionBase> session_;
  const size_t limit_;
  mutable Mutex mu_;
  std::vector<Chunk> pending_ GUARDED_BY(mu_);
  size_t pending_bytes_ GUARDED_BY(mu_) = 0;
  bool finish_requested_ GUARDED_BY(mu_) = false;
  bool flush_scheduled_ GUARDED_BY(mu_) = false;
  std::atomic<bool> closed_{false};
  std::function<void()> on_close_ GUARDED_BY(mu_);
  bool close_notified_ GUARDED_BY(mu_) = false;
};

// What StreamState needs of a connection, whatever its transport.
class SessionBase : public std::enable_shared_from_this<SessionBase> {
 public:
  virtual ~SessionBase() = default;
  virtual net::any_io_executor executor() = 0;
  virtual void shutdownNow() = 0;  // on the strand
  virtual void flush() = 0;        // on the strand
};

}  // namespace shepherd::http
