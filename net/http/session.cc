#include "net/http/session.h"

#include <chrono>

#include "common/log.h"
#include "net/http/asio_byte_stream.h"
#include "net/http/beast_request.h"
#include "net/http/response_head.h"
#include "net/http/tls_context.h"

namespace shepherd::http {

namespace {

// A chunk's non-empty pieces as write buffers; the chunk must outlive the write.
void appendBuffers(const Chunk& c, std::vector<net::const_buffer>& bufs) {
  for (std::string_view piece : c.pieces())
    if (!piece.empty()) bufs.emplace_back(net::buffer(piece.data(), piece.size()));
}

}  // namespace

Session::Session(Server::Impl& srv, std::unique_ptr<Transport> transport)
    : t_(std::move(transport)), srv_(srv), executor_(t_->executor()) {
  beast::error_code ec;
  auto ep = lowest().socket().remote_endpoint(ec);
  if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
}

Session::~Session() {
  srv_.connections.fetch_sub(1);
  MutexLock g(srv_.sessions_mu);
  srv_.sessions.erase(this);
}

void Session::start() {
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

void Session::shutdownNow() {
  if (stream_state_) {
    stream_state_->finish();
  } else if (!handling_ && !writing_) {
    close();
  }
}

void Session::sendResponse(Response r, bool head) {
  net::post(executor_,
            [self = self(), r = std::move(r), head]() mutable { self->writeResponse(std::move(r), head); });
}

std::shared_ptr<StreamWriter> Session::beginStream(int status, Headers headers) {
  auto st = std::make_shared<StreamState>(weak_from_this(), srv_.opts.max_stream_backlog_bytes);
  net::post(executor_, [self = self(), st, status, headers = std::move(headers)]() mutable {
    self->startStreaming(st, status, std::move(headers));
  });
  return st;
}

void Session::beginUpgrade(Response r, std::function<void(std::shared_ptr<ByteStream>)> fn) {
  net::post(executor_, [self = self(), r = std::move(r), fn = std::move(fn)]() mutable {
    self->writeUpgrade(std::move(r), std::move(fn));
  });
}

void Session::flush() {
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
    bufs.emplace_back(net::buffer(sizes_[i]));
    appendBuffers(inflight_[i], bufs);
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

void Session::handshake() {
  lowest().expires_after(std::chrono::seconds(srv_.opts.header_timeout_seconds));
  t_->handshake(true, [self = self()](beast::error_code ec) {
    if (ec) return self->close();
    self->client_certificate_ = peerCertificate(self->t_->nativeTls());
    self->readRequest(true);
  });
}

void Session::readRequest(bool first) {
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

void Session::parse(Phase phase) {
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

void Session::readMore(Phase phase) {
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

void Session::onHeader(beast::error_code ec) {
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
                 "the request body is larger than the limit of " + std::to_string(srv_.opts.max_body_bytes) +
                     " bytes");
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

void Session::writeAll(std::vector<net::const_buffer> bufs, Transport::DoneHandler fn) {
  t_->write(std::move(bufs), std::move(fn));
}

void Session::onRequest(beast::error_code ec) {
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

void Session::writeResponse(Response r, bool head) {
  handling_ = false;
  bool keep = keep_alive_ && !srv_.stopping.load();
  // Head and body, kept alive by the write's handler.
  struct Outgoing {
    std::string head;
    Response response;
  };
  auto out = std::make_shared<Outgoing>();
  out->head = responseHead(r.status, r.headers, keep, false, r.bodySize());
  std::vector<net::const_buffer> bufs{net::buffer(out->head)};
  if (!head) {
    out->response = std::move(r);
    const Response& o = out->response;
    bufs.reserve(2 + 2 * o.more_body.size());
    if (!o.body.empty()) bufs.emplace_back(net::buffer(o.body));
    for (const Chunk& c : o.more_body) appendBuffers(c, bufs);
  }
  srv_.served.fetch_add(1);
  writing_ = true;
  lowest().expires_after(std::chrono::seconds(60));
  writeAll(std::move(bufs), [self = self(), out, keep](beast::error_code ec) { self->afterWrite(ec, keep); });
}

void Session::writeUpgrade(Response r, std::function<void(std::shared_ptr<ByteStream>)> fn) {
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

void Session::afterWrite(beast::error_code ec, bool keep) {
  writing_ = false;
  if (ec || !keep) {
    close();
    return;
  }
  readRequest(false);
}

void Session::startStreaming(std::shared_ptr<StreamState> st, int status, Headers headers) {
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

void Session::watchDisconnect() {
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

void Session::endStream(bool graceful) {
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

void Session::failAndClose(int code, const std::string& reason, const std::string& message) {
  keep_alive_ = false;
  writeResponse(srv_.errorResponse(code, reason, message), false);
}

void Session::close() {
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

}  // namespace shepherd::http
