#include "net/stream/spdy_session.h"

#include <boost/asio/post.hpp>

namespace shepherd::stream {

SpdyClientSession::SpdyClientSession(std::shared_ptr<http::ByteStream> conn) : conn_(std::move(conn)) {
  buf_.resize(64 * 1024);
}

void SpdyClientSession::start(Callbacks callbacks) {
  cb_ = std::move(callbacks);
  boost::asio::post(conn_->executor(), [self = shared_from_this()] { self->readMore(); });
}

uint32_t SpdyClientSession::openStream(const SpdyHeaders& headers) {
  std::lock_guard<std::mutex> g(mu_);
  uint32_t id = next_id_;
  next_id_ += 2;
  conn_->write(spdySynStream(id, deflater_.compress(encodeSpdyHeaderBlock(headers))));
  return id;
}

void SpdyClientSession::send(uint32_t stream, std::string data, bool fin, std::function<void(bool)> done) {
  constexpr size_t kPiece = 32 * 1024;
  std::lock_guard<std::mutex> g(mu_);
  if (ended_) {
    if (done) done(false);
    return;
  }
  size_t pos = 0;
  do {
    size_t n = std::min(kPiece, data.size() - pos);
    bool last = pos + n >= data.size();
    conn_->write(spdyData(stream, std::string_view(data).substr(pos, n), last && fin ? kSpdyFlagFin : 0),
                 last ? std::move(done) : nullptr);
    pos += n;
  } while (pos < data.size());
}

void SpdyClientSession::reset(uint32_t stream, uint32_t status) {
  std::lock_guard<std::mutex> g(mu_);
  if (!ended_) conn_->write(spdyRstStream(stream, status));
}

void SpdyClientSession::setReading(bool on) {
  {
    std::lock_guard<std::mutex> g(mu_);
    reading_ = on;
    if (!on || read_pending_ || ended_) return;
  }
  boost::asio::post(conn_->executor(), [self = shared_from_this()] { self->readMore(); });
}

void SpdyClientSession::close() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (ended_) return;
    conn_->write(spdyGoAway(0, 0));
  }
  auto self = shared_from_this();
  conn_->shutdownWrite();
  // The peer answers by closing; if it does not, the read loop ends on close below.
  boost::asio::post(conn_->executor(), [self] { self->end("closed"); });
}

void SpdyClientSession::readMore() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!reading_ || read_pending_ || ended_) return;
    read_pending_ = true;
  }
  conn_->read(buf_.data(), buf_.size(), [self = shared_from_this()](bool ok, size_t n) {
    {
      std::lock_guard<std::mutex> g(self->mu_);
      self->read_pending_ = false;
    }
    if (!ok) return self->end("connection closed");
    self->decoder_.feed(self->buf_.data(), n);
    SpdyFrame f;
    for (;;) {
      auto r = self->decoder_.next(f);
      if (r == SpdyFrameDecoder::Result::NeedMore) break;
      if (r == SpdyFrameDecoder::Result::Error) return self->end("SPDY: " + self->decoder_.error());
      self->handle(f);
      {
        std::lock_guard<std::mutex> g(self->mu_);
        if (self->ended_) return;
      }
    }
    self->readMore();
  });
}

void SpdyClientSession::handle(SpdyFrame& f) {
  if (!f.control) {
    if (!f.payload.empty() && cb_.on_data) cb_.on_data(f.stream_id, std::move(f.payload));
    if ((f.flags & kSpdyFlagFin) && cb_.on_remote_end) cb_.on_remote_end(f.stream_id);
    return;
  }
  const std::string& p = f.payload;
  switch (f.type) {
    case SpdyType::SynReply:
    case SpdyType::Headers:
    case SpdyType::SynStream: {
      size_t blockAt = f.type == SpdyType::SynStream ? 10 : 4;
      if (p.size() < blockAt) return end("SPDY: short frame");
      uint32_t id = readU32(p, 0) & 0x7fffffff;
      // Every block goes through the one inflater, whatever it says, to keep it in step.
      if (p.size() > blockAt && !inflater_.decompress(std::string_view(p).substr(blockAt)))
        return end("SPDY: corrupt header block");
      if (f.type == SpdyType::SynStream) {  // the server opening streams: not in these protocols
        std::lock_guard<std::mutex> g(mu_);
        conn_->write(spdyRstStream(id, kSpdyRstRefused));
        return;
      }
      if (f.type == SpdyType::SynReply && cb_.on_reply) cb_.on_reply(id);
      if ((f.flags & kSpdyFlagFin) && cb_.on_remote_end) cb_.on_remote_end(id);
      return;
    }
    case SpdyType::RstStream:
      if (p.size() >= 4 && cb_.on_remote_end) cb_.on_remote_end(readU32(p, 0) & 0x7fffffff);
      return;
    case SpdyType::Ping:
      if (p.size() == 4) {
        std::lock_guard<std::mutex> g(mu_);
        if (!ended_) conn_->write(spdyPing(readU32(p, 0)));  // an echo; we send none of our own
      }
      return;
    case SpdyType::GoAway:
      return end("the peer sent GOAWAY");
    default:  // SETTINGS, WINDOW_UPDATE: no windows are kept
      return;
  }
}

void SpdyClientSession::end(const std::string& why) {
  Callbacks cb;  // released here: they usually hold the session's owner (no cycle left)
  {
    std::lock_guard<std::mutex> g(mu_);
    if (ended_) return;
    ended_ = true;
    cb = std::move(cb_);
    cb_ = Callbacks();
  }
  conn_->close();
  if (cb.on_end) cb.on_end(why);
}

}  // namespace shepherd::stream
