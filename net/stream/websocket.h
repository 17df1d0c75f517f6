// WebSocket (RFC 6455), server side, over an upgraded connection: the handshake answer
// and a message-level connection. Written here rather than taken from Beast because the
// connection arrives already upgraded by our HTTP server as a ByteStream (plain or TLS),
// beside a SPDY session on another ByteStream; see docs/adr/0012-streaming.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "net/http/byte_stream.h"
#include "net/http/message.h"

namespace shepherd::stream {

// Subprotocols kubectl offers.
inline constexpr std::string_view kRemoteCommandV5 = "v5.channel.k8s.io";
inline constexpr std::string_view kPortForwardTunnelProtocol = "SPDY/3.1+portforward.k8s.io";

// The subprotocols a WebSocket handshake offers (Sec-WebSocket-Protocol), in its order.
std::vector<std::string> offeredSubprotocols(const http::Request& req);

// The 101 answer to a WebSocket handshake with Sec-WebSocket-Key `key`, choosing `protocol`.
http::Response websocketAccept(const std::string& key, const std::string& protocol);
// base64(SHA-1(key + RFC 6455's GUID)).
std::string websocketAcceptValue(const std::string& key);

// Frame codec, separate for unit tests. Opcodes as RFC 6455.
enum class WsOpcode : uint8_t { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 };

struct WsFrame {
  bool fin = true;
  WsOpcode opcode = WsOpcode::Binary;
  std::string payload;  // unmasked
};

// A server frame (never masked); `mask` != 0 makes a masked (client) frame, for tests.
std::string encodeWsFrame(WsOpcode op, std::string_view payload, bool fin = true, uint32_t mask = 0);

// Incremental decoder: feed bytes, take complete frames. Errors (reserved bits, frames
// over the limit, control frames that are fragmented or longer than 125 bytes) stop it.
class WsFrameDecoder {
 public:
  explicit WsFrameDecoder(size_t max_payload, bool require_mask)
      : max_(max_payload), require_mask_(require_mask) {}
  void feed(const char* data, size_t n) { buf_.append(data, n); }
  enum class Result { Frame, NeedMore, Error };
  Result next(WsFrame& out);
  const std::string& error() const { return error_; }

 private:
  size_t max_;
  bool require_mask_;
  std::string buf_;
  std::string error_;
};

// One WebSocket connection, server side. Messages (fragments joined) go to on_message;
// pings are answered; a close frame is answered and ends the connection.
// Thread-safety: send/close from any thread; callbacks run on the connection's strand.
class WebSocketConnection : public std::enable_shared_from_this<WebSocketConnection> {
 public:
  using OnMessage = std::function<void(bool binary, std::string data)>;
  WebSocketConnection(std::shared_ptr<http::ByteStream> stream, size_t max_message = 16 << 20);
  // Starts reading; on_end runs once when the connection is over (either side).
  void start(OnMessage on_message, std::function<void()> on_end);
  // Pauses or resumes reading (backpressure from a slow destination).
  void setReading(bool on);
  void sendBinary(std::string data, std::function<void(bool)> done = nullptr);
  void sendText(std::string data);
  // Sends a close frame (code, reason) after queued messages, then closes.
  void sendClose(uint16_t code, const std::string& reason);
  void close();
  size_t pendingWriteBytes() const { return stream_->pendingWriteBytes(); }
  std::shared_ptr<http::ByteStream> stream() const { return stream_; }

 private:
  void readMore();
  void end();
  bool closeSent();

  std::shared_ptr<http::ByteStream> stream_;
  WsFrameDecoder decoder_;
  size_t max_message_;
  OnMessage on_message_;
  std::function<void()> on_end_;
  std::vector<char> buf_;
  std::string partial_;  // fragments so far
  bool partial_binary_ = true;
  bool fragmented_ = false;
  std::mutex mu_;
  bool reading_ = true, read_pending_ = false, ended_ = false, close_sent_ = false;
};

}  // namespace shepherd::stream
