#include "net/stream/websocket.h"

#include <openssl/sha.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "common/base64.h"

namespace shepherd::stream {

std::string websocketAcceptValue(const std::string& key) {
  std::string in = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(in.data()), in.size(), digest);
  return base64Encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::vector<std::string> offeredSubprotocols(const http::Request& req) {
  std::vector<std::string> out;
  for (auto& [k, v] : req.headers) {
    if (k != "sec-websocket-protocol") continue;
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t comma = v.find(',', pos);
      if (comma == std::string::npos) comma = v.size();
      std::string p = v.substr(pos, comma - pos);
      p.erase(0, p.find_first_not_of(' '));
      p.erase(p.find_last_not_of(' ') + 1);
      if (!p.empty()) out.push_back(p);
      pos = comma + 1;
    }
  }
  return out;
}

http::Response websocketAccept(const std::string& key, const std::string& protocol) {
  http::Response r;
  r.status = 101;
  r.headers = {{"Upgrade", "websocket"},
               {"Connection", "Upgrade"},
               {"Sec-WebSocket-Accept", websocketAcceptValue(key)},
               {"Sec-WebSocket-Protocol", protocol}};
  return r;
}

std::string encodeWsFrame(WsOpcode op, std::string_view payload, bool fin, uint32_t mask) {
  std::string out;
  out.reserve(payload.size() + 14);
  out.push_back(static_cast<char>((fin ? 0x80 : 0) | static_cast<uint8_t>(op)));
  uint8_t maskBit = mask ? 0x80 : 0;
  size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(maskBit | n));
  } else if (n <= 0xffff) {
    out.push_back(static_cast<char>(maskBit | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xff));
  } else {
    out.push_back(static_cast<char>(maskBit | 127));
    for (int i = 7; i >= 0; --i)
      out.push_back(static_cast<char>((static_cast<uint64_t>(n) >> (8 * i)) & 0xff));
  }
  if (!mask) {
    out.append(payload);
    return out;
  }
  char key[4] = {static_cast<char>(mask >> 24), static_cast<char>(mask >> 16), static_cast<char>(mask >> 8),
                 static_cast<char>(mask)};
  out.append(key, 4);
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(payload[i] ^ key[i % 4]));
  return out;
}

WsFrameDecoder::Result WsFrameDecoder::next(WsFrame& out) {
  if (!error_.empty()) return Result::Error;
  if (buf_.size() < 2) return Result::NeedMore;
  auto b = [&](size_t i) { return static_cast<uint8_t>(buf_[i]); };
  uint8_t b0 = b(0), b1 = b(1);
  if (b0 & 0x70) {
    error_ = "reserved bits set";
    return Result::Error;
  }
  uint8_t op = b0 & 0x0f;
  bool control = op >= 8;
  if ((op > 2 && op < 8) || op > 10) {
    error_ = "unknown opcode " + std::to_string(op);
    return Result::Error;
  }
  bool masked = b1 & 0x80;
  if (require_mask_ && !masked) {
    error_ = "client frames must be masked";
    return Result::Error;
  }
  uint64_t len = b1 & 0x7f;
  size_t pos = 2;
  if (len == 126) {
    if (buf_.size() < 4) return Result::NeedMore;
    len = (static_cast<uint64_t>(b(2)) << 8) | b(3);
    pos = 4;
  } else if (len == 127) {
    if (buf_.size() < 10) return Result::NeedMore;
    len = 0;
    for (int i = 0; i < 8; ++i) len = (len << 8) | b(2 + i);
    pos = 10;
  }
  if (control && (len > 125 || !(b0 & 0x80))) {
    error_ = "invalid control frame";
    return Result::Error;
  }
  if (len > max_) {
    error_ = "frame of " + std::to_string(len) + " bytes is over the limit";
    return Result::Error;
  }
  size_t maskAt = pos;
  if (masked) pos += 4;
  if (buf_.size() < pos + len) return Result::NeedMore;
  out.fin = b0 & 0x80;
  out.opcode = static_cast<WsOpcode>(op);
  out.payload.assign(buf_, pos, len);
  if (masked)
    for (size_t i = 0; i < len; ++i)
      out.payload[i] = static_cast<char>(out.payload[i] ^ buf_[maskAt + (i % 4)]);
  buf_.erase(0, pos + len);
  return Result::Frame;
}

WebSocketConnection::WebSocketConnection(std::shared_ptr<http::ByteStream> stream, size_t max_message)
    : stream_(std::move(stream)), decoder_(max_message, true), max_message_(max_message) {
  buf_.resize(64 * 1024);
}

void WebSocketConnection::start(OnMessage on_message, std::function<void()> on_end) {
  on_message_ = std::move(on_message);
  on_end_ = std::move(on_end);
  readMore();
}

void WebSocketConnection::setReading(bool on) {
  {
    std::lock_guard<std::mutex> g(mu_);
    reading_ = on || close_sent_;  // after our close, reading goes on to see the client's
    if (!reading_ || read_pending_ || ended_) return;
  }
  boost::asio::post(stream_->executor(), [self = shared_from_this()] { self->readMore(); });
}

void WebSocketConnection::readMore() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!reading_ || read_pending_ || ended_) return;
    read_pending_ = true;
  }
  stream_->read(buf_.data(), buf_.size(), [self = shared_from_this()](bool ok, size_t n) {
    {
      std::lock_guard<std::mutex> g(self->mu_);
      self->read_pending_ = false;
    }
    if (!ok) return self->end();
    self->decoder_.feed(self->buf_.data(), n);
    WsFrame f;
    for (;;) {
      auto r = self->decoder_.next(f);
      if (r == WsFrameDecoder::Result::NeedMore) break;
      if (r == WsFrameDecoder::Result::Error) {
        self->sendClose(1002, self->decoder_.error());
        return;
      }
      switch (f.opcode) {
        case WsOpcode::Ping:
          self->stream_->write(encodeWsFrame(WsOpcode::Pong, f.payload));
          break;
        case WsOpcode::Pong:
          break;
        case WsOpcode::Close:
          if (self->closeSent()) return self->close();
          self->sendClose(1000, "");
          return;
        default: {
          bool continuation = f.opcode == WsOpcode::Continuation;
          if (continuation != self->fragmented_) {
            self->sendClose(1002, "unexpected continuation frame");
            return;
          }
          if (!continuation) self->partial_binary_ = f.opcode == WsOpcode::Binary;
          if (self->partial_.size() + f.payload.size() > self->max_message_) {
            self->sendClose(1009, "message too big");
            return;
          }
          self->partial_ += f.payload;
          self->fragmented_ = !f.fin;
          if (f.fin) {
            std::string msg = std::move(self->partial_);
            self->partial_.clear();
            if (self->on_message_ && !self->closeSent())
              self->on_message_(self->partial_binary_, std::move(msg));
          }
        }
      }
    }
    self->readMore();
  });
}

bool WebSocketConnection::closeSent() {
  std::lock_guard<std::mutex> g(mu_);
  return close_sent_;
}

void WebSocketConnection::sendBinary(std::string data, std::function<void(bool)> done) {
  stream_->write(encodeWsFrame(WsOpcode::Binary, data), std::move(done));
}

void WebSocketConnection::sendText(std::string data) {
  stream_->write(encodeWsFrame(WsOpcode::Text, data));
}

void WebSocketConnection::sendClose(uint16_t code, const std::string& reason) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (close_sent_ || ended_) return;
    close_sent_ = true;
    reading_ = true;  // from now on only to see the client's close
  }
  std::string payload;
  payload.push_back(static_cast<char>(code >> 8));
  payload.push_back(static_cast<char>(code & 0xff));
  payload += reason.substr(0, 120);
  auto self = shared_from_this();
  // The connection closes when the client answers (or leaves), at the latest after 10 s:
  // closing while the client still sends (its pings) would reset the connection and
  // could cut off output it has not read yet.
  stream_->write(encodeWsFrame(WsOpcode::Close, payload), [self](bool ok) {
    if (!ok) return self->close();
    auto timer =
        std::make_shared<boost::asio::steady_timer>(self->stream_->executor(), std::chrono::seconds(10));
    timer->async_wait([self, timer](const boost::system::error_code&) { self->close(); });
    self->readMore();
  });
}

void WebSocketConnection::close() {
  stream_->close();
  end();
}

void WebSocketConnection::end() {
  std::function<void()> fn;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (ended_) return;
    ended_ = true;
    fn = std::move(on_end_);
  }
  stream_->close();
  // The message callback usually holds its owner, which holds this connection: drop it
  // (on the strand, where it is called) so the pair is freed.
  boost::asio::post(stream_->executor(), [self = shared_from_this()] { self->on_message_ = nullptr; });
  if (fn) fn();
}

}  // namespace shepherd::stream
