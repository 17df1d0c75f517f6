#include "handlers/http/server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "common/log.h"

namespace shepherd::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

std::string statusJson(int code, const std::string& reason, const std::string& message) {
  std::string esc;
  for (char c : message) {
    if (c == '"' || c == '\\') esc += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    esc += c;
  }
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" + esc +
         R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

char hexDigit(int v) { return "0123456789abcdef"[v & 15]; }

std::string chunkHeader(size_t n) {
  std::string s;
  if (n == 0) s = "0";
  while (n) {
    s.insert(s.begin(), hexDigit(static_cast<int>(n & 15)));
    n >>= 4;
  }
  return s + "\r\n";
}

}  // namespace

class Session;

struct Server::Impl {
  ServerOptions opts;
  Handler handler;
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  std::unique_ptr<net::thread_pool> workers;
  std::vector<std::thread> io_threads;
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};
  std::atomic<int> connections{0};
  std::atomic<uint64_t> served{0};
  std::mutex sessions_mu;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;

  Impl(ServerOptions o, Handler h) : opts(std::move(o)), handler(std::move(h)) {}
  void accept();
};

// A stream's queue lives outside the session so producers on other threads only take
// this small lock; the session drains it on its strand.
class StreamState final : public StreamWriter {
 public:
  StreamState(std::weak_ptr<Session> s, size_t limit) : session_(std::move(s)), limit_(limit) {}
  bool write(Chunk chunk) override;
  void finish() override;
  bool closed() const override { return closed_.load(); }
  void onClose(std::function<void()> fn) override;

  // Strand side.
  bool take(std::vector<Chunk>& out, bool& finish);
  void markClosed();

 private:
  void schedule();
  std::weak_ptr<Session> session_;
  const size_t limit_;
  mutable std::mutex mu_;
  std::vector<Chunk> pending_;
  size_t pending_bytes_ = 0;
  bool finish_requested_ = false;
  bool flush_scheduled_ = false;
  std::atomic<bool> closed_{false};
  std::function<void()> on_close_;
  bool close_notified_ = false;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, Server::Impl& srv) : stream_(std::move(socket)), srv_(srv) {
    beast::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  ~Session() {
    srv_.connections.fetch_sub(1);
    std::lock_guard<std::mutex> g(srv_.sessions_mu);
    srv_.sessions.erase(this);
  }

  void start() {
    srv_.connections.fetch_add(1);
    {
      std::lock_guard<std::mutex> g(srv_.sessions_mu);
      srv_.sessions[this] = weak_from_this();
    }
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->readRequest(true); });
  }

  // Called on the strand by Server::stop.
  void shutdownNow() {
    if (stream_state_) {
      stream_state_->finish();
    } else if (!handling_ && !writing_) {
      close();
    }
  }

  net::any_io_executor executor() { return stream_.get_executor(); }

  void sendResponse(Response r, bool head) {
    net::post(stream_.get_executor(), [self = shared_from_this(), r = std::move(r), head]() mutable {
      self->writeResponse(std::move(r), head);
    });
  }

  std::shared_ptr<StreamWriter> beginStream(int status, Headers headers) {
    auto st = std::make_shared<StreamState>(weak_from_this(), srv_.opts.max_stream_backlog_bytes);
    net::post(stream_.get_executor(), [self = shared_from_this(), st, status, headers = std::move(headers)]() mutable {
      self->startStreaming(st, status, std::move(headers));
    });
    return st;
  }

  // Strand side of StreamState::schedule.
  void flush() {
    if (!stream_state_ || stream_writing_ || !header_sent_) return;
    std::vector<Chunk> batch;
    bool finish = false;
    if (!stream_state_->take(batch, finish)) return;
    if (batch.empty() && finish) {
      endStream(true);
      return;
    }
    if (batch.empty()) return;
    inflight_ = std::move(batch);
    sizes_.clear();
    sizes_.reserve(inflight_.size());
    std::vector<net::const_buffer> bufs;
    bufs.reserve(inflight_.size() * 5);
    for (auto& c : inflight_) sizes_.push_back(chunkHeader(c.size()));
    for (size_t i = 0; i < inflight_.size(); ++i) {
      auto& c = inflight_[i];
      bufs.emplace_back(net::buffer(sizes_[i]));
      if (!c.head.empty()) bufs.emplace_back(net::buffer(c.head.data(), c.head.size()));
      if (!c.body.empty()) bufs.emplace_back(net::buffer(c.body.data(), c.body.size()));
      if (!c.data.empty()) bufs.emplace_back(net::buffer(c.data));
      if (!c.tail.empty()) bufs.emplace_back(net::buffer(c.tail.data(), c.tail.size()));
      bufs.emplace_back(net::buffer("\r\n", 2));
    }
    stream_writing_ = true;
    stream_.expires_after(std::chrono::seconds(60));
    net::async_write(stream_, bufs, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->stream_writing_ = false;
      self->inflight_.clear();
      self->stream_.expires_never();
      if (ec) {
        self->endStream(false);
        return;
      }
      self->flush();
    });
  }

 private:
  void readRequest(bool first) {
    if (srv_.stopping.load()) {
      close();
      return;
    }
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(srv_.opts.max_header_bytes));
    parser_->body_limit(srv_.opts.max_body_bytes);
    stream_.expires_after(std::chrono::seconds(first ? srv_.opts.header_timeout_seconds
                                                     : srv_.opts.idle_timeout_seconds));
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) { self->onHeader(ec); });
  }

  void onHeader(beast::error_code ec) {
    if (ec) {
      if (ec == bhttp::error::header_limit) {
        failAndClose(431, "RequestHeaderFieldsTooLarge", "request headers are too large");
        return;
      }
      if (ec == bhttp::error::body_limit) {  // Content-Length already over the limit
        failAndClose(413, "RequestEntityTooLarge",
                     "the request body is larger than the limit of " + std::to_string(srv_.opts.max_body_bytes) + " bytes");
        return;
      }
      if (ec != bhttp::error::end_of_stream && ec != net::error::operation_aborted && ec != beast::error::timeout &&
          ec != net::error::connection_reset && ec != net::error::eof)
        failAndClose(400, "BadRequest", "malformed HTTP request: " + ec.message());
      else
        close();
      return;
    }
    auto& req = parser_->get();
    if (auto len = parser_->content_length(); len && *len > srv_.opts.max_body_bytes) {
      failAndClose(413, "RequestEntityTooLarge",
                   "the request body is larger than the limit of " + std::to_string(srv_.opts.max_body_bytes) + " bytes");
      return;
    }
    stream_.expires_after(std::chrono::seconds(srv_.opts.header_timeout_seconds));
    auto expect = req[bhttp::field::expect];
    if (!expect.empty() && beast::iequals(expect, "100-continue")) {
      auto cont = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
      net::async_write(stream_, net::buffer(*cont), [self = shared_from_this(), cont](beast::error_code ec, size_t) {
        if (ec) return self->close();
        self->readBody();
      });
      return;
    }
    readBody();
  }

  void readBody() {
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) { self->onRequest(ec); });
  }

  void onRequest(beast::error_code ec) {
    if (ec) {
      if (ec == bhttp::error::body_limit) {
        failAndClose(413, "RequestEntityTooLarge",
                     "the request body is larger than the limit of " + std::to_string(srv_.opts.max_body_bytes) + " bytes");
      } else if (ec == beast::error::timeout || ec == net::error::eof || ec == bhttp::error::end_of_stream ||
                 ec == net::error::connection_reset) {
        close();
      } else {
        failAndClose(400, "BadRequest", "malformed HTTP request: " + ec.message());
      }
      return;
    }
    stream_.expires_never();
    bhttp::request<bhttp::string_body> msg = parser_->release();
    keep_alive_ = msg.keep_alive();
    head_ = msg.method() == bhttp::verb::head;
    auto req = std::make_shared<Request>();
    req->method = std::string(msg.method_string());
    req->target = std::string(msg.target());
    req->remote = remote_;
    std::string_view target = msg.target();
    auto q = target.find('?');
    req->path = percentDecode(target.substr(0, q), false);
    if (q != std::string_view::npos) {
      std::string_view qs = target.substr(q + 1);
      size_t start = 0;
      while (start <= qs.size()) {
        size_t amp = qs.find('&', start);
        if (amp == std::string_view::npos) amp = qs.size();
        std::string_view part = qs.substr(start, amp - start);
        if (!part.empty()) {
          auto eq = part.find('=');
          if (eq == std::string_view::npos)
            req->query.emplace_back(percentDecode(part, true), "");
          else
            req->query.emplace_back(percentDecode(part.substr(0, eq), true), percentDecode(part.substr(eq + 1), true));
        }
        start = amp + 1;
      }
    }
    for (auto& f : msg) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      req->headers.emplace_back(std::move(name), std::string(f.value()));
    }
    req->body = std::move(msg.body());
    handling_ = true;
    srv_.in_flight.fetch_add(1);
    auto responder = std::make_shared<ResponderImpl>(shared_from_this(), head_);
    net::post(*srv_.workers, [this, self = shared_from_this(), req, responder]() mutable {
      try {
        srv_.handler(*req, responder);
      } catch (const std::exception& e) {
        LOG_ERROR("http: handler threw for " << req->method << " " << req->target << ": " << e.what());
        responder->send(Response{500, {{"Content-Type", "application/json"}},
                                 statusJson(500, "InternalError", std::string("internal error: ") + e.what())});
      } catch (...) {
        responder->send(Response{500, {{"Content-Type", "application/json"}},
                                 statusJson(500, "InternalError", "internal error")});
      }
      responder.reset();  // a handler that never answered gets a 500 from the destructor
      srv_.in_flight.fetch_sub(1);
    });
  }

  class ResponderImpl final : public Responder {
   public:
    ResponderImpl(std::shared_ptr<Session> s, bool head) : session_(std::move(s)), head_(head) {}
    ~ResponderImpl() override {
      if (!done_.exchange(true))
        session_->writeLater(Response{500, {{"Content-Type", "application/json"}},
                                      statusJson(500, "InternalError", "the handler did not answer")},
                             head_);
    }
    void send(Response r) override {
      if (done_.exchange(true)) return;
      session_->sendResponse(std::move(r), head_);
    }
    std::shared_ptr<StreamWriter> startStream(int status, Headers headers) override {
      if (done_.exchange(true)) return nullptr;
      return session_->beginStream(status, std::move(headers));
    }

   private:
    std::shared_ptr<Session> session_;
    bool head_;
    std::atomic<bool> done_{false};
  };

  void writeLater(Response r, bool head) { sendResponse(std::move(r), head); }

  void writeResponse(Response r, bool head) {
    handling_ = false;
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>();
    res->version(11);
    res->result(static_cast<unsigned>(r.status));
    for (auto& [k, v] : r.headers) res->insert(k, v);
    res->keep_alive(keep_alive_ && !srv_.stopping.load());
    size_t len = r.body.size();
    if (!head) res->body() = std::move(r.body);
    res->content_length(len);
    srv_.served.fetch_add(1);
    writing_ = true;
    stream_.expires_after(std::chrono::seconds(60));
    if (head) {
      auto sr = std::make_shared<bhttp::response_serializer<bhttp::string_body>>(*res);
      bhttp::async_write_header(stream_, *sr, [self = shared_from_this(), res, sr](beast::error_code ec, size_t) {
        self->afterWrite(ec, res->keep_alive());
      });
      return;
    }
    bhttp::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
      self->afterWrite(ec, res->keep_alive());
    });
  }

  void afterWrite(beast::error_code ec, bool keep) {
    writing_ = false;
    if (ec || !keep) {
      close();
      return;
    }
    readRequest(false);
  }

  void startStreaming(std::shared_ptr<StreamState> st, int status, Headers headers) {
    handling_ = false;
    stream_state_ = st;
    auto res = std::make_shared<bhttp::response<bhttp::empty_body>>();
    res->version(11);
    res->result(static_cast<unsigned>(status));
    for (auto& [k, v] : headers) res->insert(k, v);
    res->chunked(true);
    res->keep_alive(keep_alive_);
    auto sr = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*res);
    srv_.served.fetch_add(1);
    stream_.expires_after(std::chrono::seconds(60));
    bhttp::async_write_header(stream_, *sr, [self = shared_from_this(), res, sr](beast::error_code ec, size_t) {
      self->stream_.expires_never();
      if (ec) {
        self->endStream(false);
        return;
      }
      self->header_sent_ = true;
      self->watchDisconnect();
      self->flush();
    });
  }

  // While streaming, a read that completes means the client closed (or misbehaves).
  void watchDisconnect() {
    auto buf = std::make_shared<std::array<char, 512>>();
    stream_.socket().async_read_some(net::buffer(*buf), [self = shared_from_this(), buf](beast::error_code ec, size_t) {
      if (!self->stream_state_) return;
      if (ec) {
        self->endStream(false);
        return;
      }
      self->watchDisconnect();
    });
  }

  // A finished stream ends its connection: the terminating chunk (when the end is
  // orderly), then close. Watch clients reconnect; nothing else is pipelined on them.
  void endStream(bool graceful) {
    if (!stream_state_) return;
    auto st = std::move(stream_state_);
    stream_state_.reset();
    header_sent_ = false;
    st->markClosed();
    if (!graceful) {
      close();
      return;
    }
    auto last = std::make_shared<std::string>("0\r\n\r\n");
    stream_.expires_after(std::chrono::seconds(10));
    net::async_write(stream_, net::buffer(*last),
                     [self = shared_from_this(), last](beast::error_code, size_t) { self->close(); });
  }

  void failAndClose(int code, const std::string& reason, const std::string& message) {
    keep_alive_ = false;
    Response r{code, {{"Content-Type", "application/json"}}, statusJson(code, reason, message)};
    writeResponse(std::move(r), false);
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    if (stream_state_) {
      auto st = std::move(stream_state_);
      st->markClosed();
    }
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  beast::tcp_stream stream_;
  Server::Impl& srv_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::string remote_;
  bool keep_alive_ = true;
  bool head_ = false;
  bool handling_ = false;
  bool closed_ = false;
  bool writing_ = false;
  std::shared_ptr<StreamState> stream_state_;
  bool header_sent_ = false;
  bool stream_writing_ = false;
  std::vector<Chunk> inflight_;
  std::vector<std::string> sizes_;
};

bool StreamState::write(Chunk chunk) {
  std::lock_guard<std::mutex> g(mu_);
  if (closed_.load() || finish_requested_) return false;
  size_t n = chunk.size();
  if (pending_bytes_ + n > limit_) {
    // Too far behind: drop this reader rather than buffer without bound.
    closed_ = true;
    pending_.clear();
    pending_bytes_ = 0;
    if (auto s = session_.lock())
      net::post(s->executor(), [s] { s->shutdownNow(); });
    return false;
  }
  pending_bytes_ += n;
  pending_.push_back(std::move(chunk));
  schedule();
  return true;
}

void StreamState::finish() {
  std::lock_guard<std::mutex> g(mu_);
  if (finish_requested_) return;
  finish_requested_ = true;
  schedule();
}

void StreamState::schedule() {
  if (flush_scheduled_) return;
  auto s = session_.lock();
  if (!s) return;
  flush_scheduled_ = true;
  net::post(s->executor(), [s] { s->flush(); });
}

bool StreamState::take(std::vector<Chunk>& out, bool& finish) {
  std::lock_guard<std::mutex> g(mu_);
  flush_scheduled_ = false;
  if (closed_.load() && !finish_requested_) return false;
  out.swap(pending_);
  pending_bytes_ = 0;
  finish = finish_requested_;
  return true;
}

void StreamState::onClose(std::function<void()> fn) {
  bool call_now = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (close_notified_) call_now = true;
    else on_close_ = std::move(fn);
  }
  if (call_now && fn) fn();
}

void StreamState::markClosed() {
  std::function<void()> fn;
  {
    std::lock_guard<std::mutex> g(mu_);
    closed_ = true;
    pending_.clear();
    pending_bytes_ = 0;
    if (close_notified_) return;
    close_notified_ = true;
    fn = std::move(on_close_);
  }
  if (fn) fn();
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
      std::make_shared<Session>(std::move(socket), *this)->start();
    }
    if (!stopping.load()) accept();
  });
}

Server::Server(ServerOptions opts, Handler handler) : impl_(std::make_unique<Impl>(std::move(opts), std::move(handler))) {}

Server::~Server() { stop(0); }

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
  if (ec) return ApiError::internal("cannot listen on " + impl_->opts.address + ":" + std::to_string(impl_->opts.port) + ": " + ec.message());
  port_ = acc.local_endpoint().port();
  impl_->workers = std::make_unique<net::thread_pool>(static_cast<size_t>(std::max(1, impl_->opts.worker_threads)));
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
    std::vector<std::shared_ptr<Session>> live;
    {
      std::lock_guard<std::mutex> g(impl_->sessions_mu);
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
  auto flushDeadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_seconds > 0 ? 500 : 0);
  while (impl_->connections.load() > 0 && std::chrono::steady_clock::now() < flushDeadline) {
    shutdownSessions();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  impl_->work.reset();
  impl_->ioc.stop();
  for (auto& t : impl_->io_threads) t.join();
  impl_->io_threads.clear();
  if (impl_->workers) impl_->workers->join();
}

uint64_t Server::requestsServed() const { return impl_->served.load(); }
int Server::activeConnections() const { return impl_->connections.load(); }

}  // namespace shepherd::http
