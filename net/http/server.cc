#include "net/http/server.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include "common/log.h"
#include "common/mutex.h"
#include "net/http/asio_byte_stream.h"
#include "net/http/beast_request.h"
#include "net/http/transport.h"

namespace shepherd::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// The answer to a request the server refuses itself (body too large, headers too long, a
// handler that threw or never answered), unless ServerOptions::error_response renders one.
Response plainError(int code, const std::string&, const std::string& message) {
  return Response{code, {{"Content-Type", "text/plain; charset=utf-8"}}, message + "\n"};
}

char hexDigit(int v) {
  return "0123456789abcdef"[v & 15];
}

std::string chunkHeader(size_t n) {
  std::string s;
  if (n == 0) s = "0";
  while (n) {
    s.insert(s.begin(), hexDigit(static_cast<int>(n & 15)));
    n >>= 4;
  }
  return s + "\r\n";
}

// The head of a response, serialized by hand: only the stream's plain read and write
// operations are instantiated per transport (Beast's composed HTTP operations over TLS
// took minutes to compile). `length` is the Content-Length to send, unless chunked or 101.
std::string responseHead(int status, const Headers& headers, bool keep_alive, bool chunked,
                         std::optional<size_t> length) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  out += std::string_view(bhttp::obsolete_reason(bhttp::int_to_status(static_cast<unsigned>(status))));
  out += "\r\n";
  for (const auto& [k, v] : headers) {
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  if (chunked) out += "Transfer-Encoding: chunked\r\n";
  if (length) out += "Content-Length: " + std::to_string(*length) + "\r\n";
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  return out;
}

}  // namespace

class SessionBase;

// How much one read of a connection asks for.
constexpr size_t kReadSize = 64 * 1024;

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

// The subject of a TLS peer's certificate, and whether it verified against the client CA.
std::shared_ptr<const Request::ClientCertificate> peerCertificate(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return nullptr;
  auto out = std::make_shared<Request::ClientCertificate>();
  long result = SSL_get_verify_result(ssl);
  out->verified = result == X509_V_OK;
  if (!out->verified) out->error = X509_verify_cert_error_string(result);
  X509_NAME* subject = X509_get_subject_name(cert);
  auto entry = [&](int nid, std::vector<std::string>& into) {
    for (int i = X509_NAME_get_index_by_NID(subject, nid, -1); i >= 0;
         i = X509_NAME_get_index_by_NID(subject, nid, i)) {
      ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
      unsigned char* utf8 = nullptr;
      int n = ASN1_STRING_to_UTF8(&utf8, data);
      if (n >= 0) into.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
      OPENSSL_free(utf8);
    }
  };
  std::vector<std::string> cn;
  entry(NID_commonName, cn);
  if (!cn.empty()) out->common_name = cn.front();
  entry(NID_organizationName, out->organizations);
  X509_free(cert);
  return out;
}

// One connection, plain or TLS (its Transport).
class Session final : public SessionBase {
 public:
  Session(Server::Impl& srv, std::unique_ptr<Transport> transport)
      : t_(std::move(transport)), srv_(srv), executor_(t_->executor()) {
    beast::error_code ec;
    auto ep = lowest().socket().remote_endpoint(ec);
    if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  ~Session() {
    srv_.connections.fetch_sub(1);
    MutexLock g(srv_.sessions_mu);
    srv_.sessions.erase(this);
  }

  void start() {
    srv_.connections.fetch_add(1);
    {
      MutexLock g(srv_.sessions_mu);
      srv_.sessions[this] = weak_from_this();
    }
    net::dispatch(executor_, [self = self()] {
      if (self->t_->tls())
        self->handshake();
      else
        self->readRequest(true);
    });
  }

  // Called on the strand by Server::stop.
  void shutdownNow() override {
    if (stream_state_) {
      stream_state_->finish();
    } else if (!handling_ && !writing_) {
      close();
    }
  }

  // Kept from the start: an upgrade moves the transport out, and Server::stop may still ask.
  net::any_io_executor executor() override { return executor_; }

  void sendResponse(Response r, bool head) {
    net::post(executor_,
              [self = self(), r = std::move(r), head]() mutable { self->writeResponse(std::move(r), head); });
  }

  std::shared_ptr<StreamWriter> beginStream(int status, Headers headers) {
    auto st = std::make_shared<StreamState>(weak_from_this(), srv_.opts.max_stream_backlog_bytes);
    net::post(executor_, [self = self(), st, status, headers = std::move(headers)]() mutable {
      self->startStreaming(st, status, std::move(headers));
    });
    return st;
  }

  void beginUpgrade(Response r, std::function<void(std::shared_ptr<ByteStream>)> fn) {
    net::post(executor_, [self = self(), r = std::move(r), fn = std::move(fn)]() mutable {
      self->writeUpgrade(std::move(r), std::move(fn));
    });
  }

  // Strand side of StreamState::schedule.
  void flush() override {
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
    lowest().expires_after(std::chrono::seconds(60));
    writeAll(std::move(bufs), [self = self()](beast::error_code ec) {
      self->stream_writing_ = false;
      self->inflight_.clear();
      self->lowest().expires_never();
      if (ec) {
        self->endStream(false);
        return;
      }
      self->flush();
    });
  }

 private:
  std::shared_ptr<Session> self() { return std::static_pointer_cast<Session>(shared_from_this()); }
  beast::tcp_stream& lowest() { return t_->tcp(); }

  // TLS only: the handshake must finish within the header timeout.
  void handshake() {
    lowest().expires_after(std::chrono::seconds(srv_.opts.header_timeout_seconds));
    t_->handshake(true, [self = self()](beast::error_code ec) {
      if (ec) return self->close();
      self->client_certificate_ = peerCertificate(self->t_->nativeTls());
      self->readRequest(true);
    });
  }

  void readRequest(bool first) {
    if (srv_.stopping.load()) {
      close();
      return;
    }
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(srv_.opts.max_header_bytes));
    parser_->body_limit(srv_.opts.max_body_bytes);
    lowest().expires_after(
        std::chrono::seconds(first ? srv_.opts.header_timeout_seconds : srv_.opts.idle_timeout_seconds));
    parse(Phase::Header);
  }

  // Feeds what has been read to the parser until it has the header (Phase::Header) or the
  // whole request (Phase::Body), reading more as needed; then onHeader or onRequest.
  enum class Phase { Header, Body };
  void parse(Phase phase) {
    beast::error_code ec;
    for (;;) {
      if (phase == Phase::Header ? parser_->is_header_done() : parser_->is_done()) break;
      if (buffer_.size() == 0) return readMore(phase);
      buffer_.consume(parser_->put(buffer_.data(), ec));
      if (ec == bhttp::error::need_more) return readMore(phase);
      if (ec) break;
    }
    if (phase == Phase::Header)
      onHeader(ec);
    else
      onRequest(ec);
  }

  void readMore(Phase phase) {
    readSome(buffer_.prepare(kReadSize), [self = self(), phase](beast::error_code ec, size_t n) {
      self->buffer_.commit(n);
      if (ec == net::error::eof) {
        // The client closed: nothing read is the end of the connection; a message that
        // has no length ends here; anything else is cut short.
        if (!self->parser_->got_some()) {
          ec = bhttp::error::end_of_stream;
        } else {
          ec = {};
          self->parser_->put_eof(ec);
          if (!ec) return self->parse(phase);
        }
      }
      if (ec) return phase == Phase::Header ? self->onHeader(ec) : self->onRequest(ec);
      self->parse(phase);
    });
  }

  void onHeader(beast::error_code ec) {
    if (ec) {
      if (ec == bhttp::error::header_limit) {
        failAndClose(431, "RequestHeaderFieldsTooLarge", "request headers are too large");
        return;
      }
      if (ec == bhttp::error::body_limit) {  // Content-Length already over the limit
        failAndClose(413, "RequestEntityTooLarge",
                     "the request body is larger than the limit of " +
                         std::to_string(srv_.opts.max_body_bytes) + " bytes");
        return;
      }
      if (ec != bhttp::error::end_of_stream && ec != net::error::operation_aborted &&
          ec != beast::error::timeout && ec != net::error::connection_reset && ec != net::error::eof)
        failAndClose(400, "BadRequest", "malformed HTTP request: " + ec.message());
      else
        close();
      return;
    }
    auto& req = parser_->get();
    if (auto len = parser_->content_length(); len && *len > srv_.opts.max_body_bytes) {
      failAndClose(413, "RequestEntityTooLarge",
                   "the request body is larger than the limit of " +
                       std::to_string(srv_.opts.max_body_bytes) + " bytes");
      return;
    }
    lowest().expires_after(std::chrono::seconds(srv_.opts.header_timeout_seconds));
    auto expect = req[bhttp::field::expect];
    if (!expect.empty() && beast::iequals(expect, "100-continue")) {
      auto cont = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
      writeAll({net::buffer(*cont)}, [self = self(), cont](beast::error_code ec) {
        if (ec) return self->close();
        self->parse(Phase::Body);
      });
      return;
    }
    parse(Phase::Body);
  }

  void readSome(net::mutable_buffer into, Transport::ReadHandler fn) { t_->readSome(into, std::move(fn)); }
  void writeAll(std::vector<net::const_buffer> bufs, Transport::DoneHandler fn) {
    t_->write(std::move(bufs), std::move(fn));
  }

  void onRequest(beast::error_code ec) {
    if (ec) {
      if (ec == bhttp::error::body_limit) {
        failAndClose(413, "RequestEntityTooLarge",
                     "the request body is larger than the limit of " +
                         std::to_string(srv_.opts.max_body_bytes) + " bytes");
      } else if (ec == beast::error::timeout || ec == net::error::eof || ec == bhttp::error::end_of_stream ||
                 ec == net::error::connection_reset) {
        close();
      } else {
        failAndClose(400, "BadRequest", "malformed HTTP request: " + ec.message());
      }
      return;
    }
    lowest().expires_never();
    bhttp::request<bhttp::string_body> msg = parser_->release();
    keep_alive_ = msg.keep_alive();
    head_ = msg.method() == bhttp::verb::head;
    auto req = std::make_shared<Request>();
    fillRequest(*req, std::move(msg));
    req->remote = remote_;
    req->tls = t_->tls();
    req->client_certificate = client_certificate_;
    handling_ = true;
    bool runInline = srv_.opts.run_inline && srv_.opts.run_inline(*req);
    // Max in flight: reserve a slot or answer 429 without queueing the request.
    std::atomic<int>* slot = nullptr;
    if (!srv_.opts.long_running || !srv_.opts.long_running(*req)) {
      bool readonly = req->method == "GET" || req->method == "HEAD" || req->method == "OPTIONS";
      int limit = readonly ? srv_.opts.max_requests_inflight : srv_.opts.max_mutating_requests_inflight;
      if (limit > 0) {
        slot = readonly ? &srv_.readonly_in_flight : &srv_.mutating_in_flight;
        if (slot->fetch_add(1) >= limit) {
          slot->fetch_sub(1);
          // Upstream answers with plain text, not a Status.
          writeResponse(Response{429,
                                 {{"Content-Type", "text/plain; charset=utf-8"},
                                  {"X-Content-Type-Options", "nosniff"},
                                  {"Retry-After", "1"}},
                                 "Too many requests, please try again later.\n"},
                        head_);
          return;
        }
      }
    }
    srv_.in_flight.fetch_add(1);
    auto responder = std::make_shared<ResponderImpl>(self(), head_);
    auto handle = [this, self = self(), req, responder, slot]() mutable {
      try {
        srv_.handler(*req, responder);
      } catch (const std::exception& e) {
        LOG_ERROR("http: handler threw for " << req->method << " " << req->target << ": " << e.what());
        responder->send(srv_.errorResponse(500, "InternalError", std::string("internal error: ") + e.what()));
      } catch (...) {
        responder->send(srv_.errorResponse(500, "InternalError", "internal error"));
      }
      responder.reset();  // a handler that never answered gets a 500 from the destructor
      if (slot) slot->fetch_sub(1);
      srv_.in_flight.fetch_sub(1);
    };
    if (runInline)
      handle();
    else
      net::post(*srv_.workers, std::move(handle));
  }

  class ResponderImpl final : public Responder {
   public:
    ResponderImpl(std::shared_ptr<Session> s, bool head) : session_(std::move(s)), head_(head) {}
    ~ResponderImpl() override {
      if (!done_.exchange(true))
        session_->writeLater(
            session_->server().errorResponse(500, "InternalError", "the handler did not answer"), head_);
    }
    void send(Response r) override {
      if (done_.exchange(true)) return;
      session_->sendResponse(std::move(r), head_);
    }
    std::shared_ptr<StreamWriter> startStream(int status, Headers headers) override {
      if (done_.exchange(true)) return nullptr;
      return session_->beginStream(status, std::move(headers));
    }
    void upgrade(Response r, std::function<void(std::shared_ptr<ByteStream>)> fn) override {
      if (done_.exchange(true)) return;
      session_->beginUpgrade(std::move(r), std::move(fn));
    }

   private:
    std::shared_ptr<Session> session_;
    bool head_;
    std::atomic<bool> done_{false};
  };

  void writeLater(Response r, bool head) { sendResponse(std::move(r), head); }
  const Server::Impl& server() const { return srv_; }

  void writeResponse(Response r, bool head) {
    handling_ = false;
    bool keep = keep_alive_ && !srv_.stopping.load();
    // Head and body, kept alive by the write's handler.
    auto out = std::make_shared<std::pair<std::string, std::string>>();
    out->first = responseHead(r.status, r.headers, keep, false, r.body.size());
    if (!head) out->second = std::move(r.body);
    srv_.served.fetch_add(1);
    writing_ = true;
    lowest().expires_after(std::chrono::seconds(60));
    writeAll({net::buffer(out->first), net::buffer(out->second)},
             [self = self(), out, keep](beast::error_code ec) { self->afterWrite(ec, keep); });
  }

  // The 101 answer, then the connection leaves this session: its stream (and any bytes the
  // client sent after the request) moves into a ByteStream owned by the new protocol.
  void writeUpgrade(Response r, std::function<void(std::shared_ptr<ByteStream>)> fn) {
    handling_ = false;
    if (closed_) return fn(nullptr);
    auto head = std::make_shared<std::string>(responseHead(
        r.status, r.headers, true, false, r.status == 101 ? std::nullopt : std::optional<size_t>(size_t{0})));
    srv_.served.fetch_add(1);
    writing_ = true;
    lowest().expires_after(std::chrono::seconds(60));
    writeAll({net::buffer(*head)}, [self = self(), head, fn = std::move(fn)](beast::error_code ec) {
      self->writing_ = false;
      self->lowest().expires_never();
      if (ec || self->closed_) {
        self->close();
        return fn(nullptr);
      }
      std::string leftover = beast::buffers_to_string(self->buffer_.data());
      self->buffer_.consume(self->buffer_.size());
      self->closed_ = true;  // the session no longer owns the connection
      auto upgraded = std::make_shared<AsioByteStream>(std::move(self->t_), std::move(leftover));
      self->srv_.trackUpgraded(upgraded);
      fn(std::move(upgraded));
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
    auto head = std::make_shared<std::string>(responseHead(status, headers, keep_alive_, true, std::nullopt));
    srv_.served.fetch_add(1);
    lowest().expires_after(std::chrono::seconds(60));
    writeAll({net::buffer(*head)}, [self = self(), head](beast::error_code ec) {
      self->lowest().expires_never();
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
    auto onRead = [self = self(), buf](beast::error_code ec, size_t) {
      if (!self->stream_state_) return;
      if (ec) {
        self->endStream(false);
        return;
      }
      self->watchDisconnect();
    };
    // Plain: straight from the socket, outside the stream's write timer. TLS: through the
    // TLS layer (one read may run beside one write).
    t_->readSomeUntimed(net::buffer(*buf), std::move(onRead));
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
    lowest().expires_after(std::chrono::seconds(10));
    writeAll({net::buffer(*last)}, [self = self(), last](beast::error_code) { self->close(); });
  }

  void failAndClose(int code, const std::string& reason, const std::string& message) {
    keep_alive_ = false;
    writeResponse(srv_.errorResponse(code, reason, message), false);
  }

  void close() {
    if (closed_ || !t_) return;
    closed_ = true;
    if (stream_state_) {
      auto st = std::move(stream_state_);
      st->markClosed();
    }
    beast::error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }

  std::unique_ptr<Transport> t_;  // null once an upgrade took the connection
  Server::Impl& srv_;
  net::any_io_executor executor_;  // the connection's strand
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::string remote_;
  std::shared_ptr<const Request::ClientCertificate> client_certificate_;
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
  MutexLock g(mu_);
  if (closed_.load() || finish_requested_) return false;
  size_t n = chunk.size();
  if (pending_bytes_ + n > limit_) {
    // Too far behind: drop this reader rather than buffer without bound.
    closed_ = true;
    pending_.clear();
    pending_bytes_ = 0;
    if (auto s = session_.lock()) net::post(s->executor(), [s] { s->shutdownNow(); });
    return false;
  }
  pending_bytes_ += n;
  pending_.push_back(std::move(chunk));
  schedule();
  return true;
}

void StreamState::finish() {
  MutexLock g(mu_);
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
  MutexLock g(mu_);
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
    MutexLock g(mu_);
    if (close_notified_)
      call_now = true;
    else
      on_close_ = std::move(fn);
  }
  if (call_now && fn) fn();
}

void StreamState::markClosed() {
  std::function<void()> fn;
  {
    MutexLock g(mu_);
    closed_ = true;
    pending_.clear();
    pending_bytes_ = 0;
    if (close_notified_) return;
    close_notified_ = true;
    fn = std::move(on_close_);
  }
  if (fn) fn();
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

// TLS 1.2 and later; client certificates requested (not required) and checked against
// the client CA after the handshake (see TlsOptions).
std::string makeSslContext(const TlsOptions& tls, std::optional<net::ssl::context>& out) {
  out.emplace(net::ssl::context::tls_server);
  auto& ctx = *out;
  beast::error_code ec;
  ctx.set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                      net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                      net::ssl::context::no_tlsv1_1,
                  ec);
  ctx.use_certificate_chain_file(tls.cert_file, ec);
  if (ec) return "cannot load the serving certificate " + tls.cert_file + ": " + ec.message();
  ctx.use_private_key_file(tls.key_file, net::ssl::context::pem, ec);
  if (ec) return "cannot load the serving key " + tls.key_file + ": " + ec.message();
  if (!tls.client_ca_file.empty()) {
    ctx.load_verify_file(tls.client_ca_file, ec);
    if (ec) return "cannot load the client CA " + tls.client_ca_file + ": " + ec.message();
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str());
    if (!names) return "no certificate in the client CA file " + tls.client_ca_file;
    SSL_CTX_set_client_CA_list(ctx.native_handle(), names);
    ctx.set_verify_mode(net::ssl::verify_peer, ec);
    ctx.set_verify_callback([](bool, net::ssl::verify_context&) { return true; }, ec);
    static const unsigned char kSessionContext[] = "shepherd";
    SSL_CTX_set_session_id_context(ctx.native_handle(), kSessionContext, sizeof kSessionContext - 1);
  }
  return "";
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
